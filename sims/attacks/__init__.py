"""Gradient inversion attacks on pruned FL updates: GI and PriPrune's SGI.

The public API; callers import from here. The submodules, one idea each:

* :mod:`~sims.attacks.config` -- what an attack is asked to do (:class:`AttackConfig`)
  and what it returns (:class:`AttackResult`);
* :mod:`~sims.attacks.update` -- reading an update: mask, pseudo-gradient, iDLG and LLG labels;
* :mod:`~sims.attacks.priors` and :mod:`~sims.attacks.objectives` -- the image prior
  and the matching objective an inversion minimises;
* :mod:`~sims.attacks.optimizers` -- functional Adam, torch's L-BFGS, batched
  backtracking L-BFGS;
* :mod:`~sims.attacks.problem`, :mod:`~sims.attacks.checks` -- one validated
  inversion problem and the input checks;
* :mod:`~sims.attacks.inversion` -- one or K inversions of a target gradient;
* :mod:`~sims.attacks.attack` -- the attack on an update, SGI and GI as one
  :func:`gradient_inversion` with a ``mask_aware`` switch, and their paper names;
* :mod:`~sims.attacks.identification` -- the candidates a reconstruction names;
* :mod:`~sims.attacks.defense_aware` -- SGI by a server that knows PriPrune's
  client-side defenses (Algorithm 3): its observer and its attack.
"""

from pruneleak.sims.attacks.attack import (
    gi_attack,
    gi_attack_batched,
    gradient_inversion,
    gradient_inversion_batched,
    sgi_attack,
    sgi_attack_batched,
)
from pruneleak.sims.attacks.config import (
    DIGITS_ATTACK_MODEL,
    GRADIENT_POINTS,
    LABEL_MODES,
    LOSSES,
    OPTIMIZERS,
    AttackConfig,
    AttackResult,
)
from pruneleak.sims.attacks.defense_aware import (
    DefenseAwareObserver,
    attack_mask,
    defense_aware_attack,
)
from pruneleak.sims.attacks.identification import identify
from pruneleak.sims.attacks.inversion import invert_gradient, invert_gradient_batched
from pruneleak.sims.attacks.priors import total_variation
from pruneleak.sims.attacks.update import idlg_label, pseudo_gradient, recover_labels, recover_mask

__all__ = [
    "DIGITS_ATTACK_MODEL",
    "GRADIENT_POINTS",
    "LABEL_MODES",
    "LOSSES",
    "OPTIMIZERS",
    "AttackConfig",
    "AttackResult",
    "DefenseAwareObserver",
    "attack_mask",
    "defense_aware_attack",
    "gi_attack",
    "gi_attack_batched",
    "gradient_inversion",
    "gradient_inversion_batched",
    "identify",
    "idlg_label",
    "invert_gradient",
    "invert_gradient_batched",
    "pseudo_gradient",
    "recover_labels",
    "recover_mask",
    "sgi_attack",
    "sgi_attack_batched",
    "total_variation",
]
