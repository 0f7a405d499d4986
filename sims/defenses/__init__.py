"""Client-side privacy defenses of pruned FL: PriPrune's fixed defense masks (Largest,
Random, Mix), real or Pseudo-Pruning (:mod:`sims.defenses.masks`,
:mod:`sims.defenses.client`), and its adaptive Gumbel-Softmax defense
(:mod:`sims.defenses.adaptive`); :class:`DefenseSpec` configures any of them
(:mod:`sims.defenses.spec`)."""

from pruneleak.sims.defenses.adaptive import (
    ALPHA_EPS,
    PriPruneDefense,
    gumbel_noise,
    gumbel_share_mask,
    privacy_weights,
)
from pruneleak.sims.defenses.client import Defense, FixedDefense, withheld_fraction
from pruneleak.sims.defenses.masks import STRATEGIES, defense_mask
from pruneleak.sims.defenses.spec import DEFENSES, DefenseSpec

__all__ = [
    "ALPHA_EPS",
    "DEFENSES",
    "STRATEGIES",
    "Defense",
    "DefenseSpec",
    "FixedDefense",
    "PriPruneDefense",
    "defense_mask",
    "gumbel_noise",
    "gumbel_share_mask",
    "privacy_weights",
    "withheld_fraction",
]
