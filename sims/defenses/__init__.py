"""Client-side privacy defenses of pruned FL: PriPrune's fixed defense masks (Largest,
Random, Mix), real or Pseudo-Pruning (:mod:`sims.defenses.masks`,
:mod:`sims.defenses.client`)."""

from sims.defenses.client import Defense, FixedDefense, withheld_fraction
from sims.defenses.masks import STRATEGIES, defense_mask

__all__ = ["STRATEGIES", "Defense", "FixedDefense", "defense_mask", "withheld_fraction"]
