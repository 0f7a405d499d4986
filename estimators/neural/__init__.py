"""Neural estimators of mutual information: MINE, NWJ, InfoNCE, SMILE and H-MINE.

One idea per module:

- :mod:`~estimators.neural.critics`: the concat critic (with a cheap all-pairs score
  matrix) and H-MINE's hierarchical critic;
- :mod:`~estimators.neural.objectives`: the bounds (DV, NWJ, InfoNCE, SMILE) and MINE's
  bias-corrected surrogate, as functions of critic scores;
- :mod:`~estimators.neural.evaluation`: a critic's bound on a held-out fold with an
  influence-function standard error;
- :mod:`~estimators.neural.training`: :class:`TrainingConfig` and the training loop
  (validation, early stopping, learning-rate schedule);
- :mod:`~estimators.neural.interval`: the cross-fitted interval;
- :mod:`~estimators.neural.estimators`: the estimator classes of the registry
  (:mod:`estimators.registry`).
"""

from pruneleak.estimators.neural.critics import ConcatCritic, HierarchicalCritic
from pruneleak.estimators.neural.estimators import (
    HMINE,
    HMINE_PRESETS,
    MINE,
    NWJ,
    SMILE,
    CriticPreset,
    InfoNCE,
)
from pruneleak.estimators.neural.training import TrainingConfig

__all__ = [
    "HMINE",
    "HMINE_PRESETS",
    "MINE",
    "NWJ",
    "SMILE",
    "ConcatCritic",
    "CriticPreset",
    "HierarchicalCritic",
    "InfoNCE",
    "TrainingConfig",
]
