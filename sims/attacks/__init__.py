"""Gradient inversion attacks on pruned FL updates: GI and PriPrune's SGI.

The public API; callers import from here, not from the submodules."""

from sims.attacks.inversion import (
    DIGITS_ATTACK_MODEL,
    GRADIENT_POINTS,
    LABEL_MODES,
    LOSSES,
    OPTIMIZERS,
    AttackConfig,
    AttackResult,
    gi_attack,
    gi_attack_batched,
    idlg_label,
    invert_gradient,
    invert_gradient_batched,
    pseudo_gradient,
    recover_mask,
    sgi_attack,
    sgi_attack_batched,
)
from sims.attacks.priors import total_variation

__all__ = [
    "DIGITS_ATTACK_MODEL",
    "GRADIENT_POINTS",
    "LABEL_MODES",
    "LOSSES",
    "OPTIMIZERS",
    "AttackConfig",
    "AttackResult",
    "gi_attack",
    "gi_attack_batched",
    "idlg_label",
    "invert_gradient",
    "invert_gradient_batched",
    "pseudo_gradient",
    "recover_mask",
    "sgi_attack",
    "sgi_attack_batched",
    "total_variation",
]
