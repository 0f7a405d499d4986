"""Shared test set-up: quiet, deterministic, CPU-sized."""

import os

import matplotlib

matplotlib.use("Agg")
os.environ.setdefault("PRUNELEAK_SCALE", "quick")

import torch

torch.set_num_threads(1)  # tiny models: a second thread only adds synchronisation
torch.use_deterministic_algorithms(True, warn_only=True)
