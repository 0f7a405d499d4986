"""Torch simulations of pruned federated learning: data, models, pruning, FL rounds, attacks."""
