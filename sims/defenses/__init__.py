"""Client-side privacy defenses of pruned FL: PriPrune's fixed defense masks (Largest,
Random, Mix), real or Pseudo-Pruning (:mod:`sims.defenses.masks`,
:mod:`sims.defenses.client`), and its adaptive Gumbel-Softmax defense
(:mod:`sims.defenses.adaptive`)."""

from sims.defenses.adaptive import (
    ALPHA_EPS,
    PriPruneDefense,
    gumbel_noise,
    gumbel_share_mask,
    privacy_weights,
)
from sims.defenses.client import Defense, FixedDefense, withheld_fraction
from sims.defenses.masks import STRATEGIES, defense_mask

__all__ = [
    "ALPHA_EPS",
    "STRATEGIES",
    "Defense",
    "FixedDefense",
    "PriPruneDefense",
    "defense_mask",
    "gumbel_noise",
    "gumbel_share_mask",
    "privacy_weights",
    "withheld_fraction",
]
