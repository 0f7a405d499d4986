"""Leakage and privacy bounds of the source papers: pure math (sympy, numpy, scipy), no torch."""
