"""Experiments that combine sims, estimators and bounds into paper figures."""
