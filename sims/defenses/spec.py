"""The configuration of a client-side defense (:mod:`sims.defenses`) as one frozen value.

Shared by the attack study's jobs (:class:`sims.sweep.job.AttackJob`) and the leakage
study (:class:`sims.experiments.leakage.LeakageConfig`): one place defines the fields, their
defaults and which defense reads which.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar

from pruneleak.bounds.validation import check_choice
from pruneleak.sims.core.fields import documented
from pruneleak.sims.defenses.adaptive import PriPruneDefense
from pruneleak.sims.defenses.client import FixedDefense

#: The defenses a configuration can name.
DEFENSES = ("none", "largest", "random", "mix", "priprune")


@dataclass(frozen=True)
class DefenseSpec:
    """PriPrune's client-side defense after the base scheme (:mod:`sims.defenses`).

    ``name``: ``"none"`` (the base scheme alone), ``"largest"``, ``"random"``, ``"mix"``
    (:class:`sims.defenses.FixedDefense` at defense rate ``rate``; Mix takes
    ``largest_fraction`` of it by gradient; AAAI "Insights from Evaluation", Fig. 4) or
    ``"priprune"`` (:class:`sims.defenses.adaptive.PriPruneDefense`, journal Algorithm 3,
    with eq. (16)'s ``lambda_acc``, ``lambda_pri``, ``lambda_sha``, eq. (18)'s
    ``temperature``, ``alpha_init`` and ``alpha_lr``; None: the client's lr).
    ``pseudo``: Pseudo-Pruning (Insight 2) or real pruning. Defaults: PriPrune's rate 0.3,
    Mix 0.15 + 0.15, and :class:`~sims.defenses.adaptive.PriPruneDefense`'s defaults.

    A field the chosen defense does not read must stay at its default (with ``"none"``:
    every field), so that one computation has one job and one key.
    """

    name: str = documented(
        "none",
        "the client-side defense (PriPrune's Largest, Random, Mix at the defense rate, or "
        "its adaptive Gumbel defense)",
        choices=DEFENSES,
    )
    rate: float = documented(
        0.3, "fraction of the base-kept weights the fixed defenses withhold", low=0, high=1
    )
    pseudo: bool = True
    largest_fraction: float = 0.5
    lambda_acc: float = documented(5.0, "PriPrune's eq. (16) lambda_acc", low=0)
    lambda_pri: float = documented(15.0, "PriPrune's eq. (16) lambda_pri", low=0)
    lambda_sha: float = documented(2e-5, "PriPrune's eq. (16) lambda_sha", low=0)
    temperature: float = 1.0
    alpha_init: float = 0.3
    alpha_lr: float | None = documented(
        None, "PriPrune's step size of alpha", low=0, low_open=True, unset="the client's lr"
    )

    #: The fields each defense reads.
    READS: ClassVar[dict[str, tuple[str, ...]]] = {
        "none": (),
        "largest": ("rate", "pseudo"),
        "random": ("rate", "pseudo"),
        "mix": ("rate", "pseudo", "largest_fraction"),
        "priprune": (
            "pseudo",
            "lambda_acc",
            "lambda_pri",
            "lambda_sha",
            "temperature",
            "alpha_init",
            "alpha_lr",
        ),
    }

    def __post_init__(self) -> None:
        func = "DefenseSpec"
        check_choice("name", self.name, func=func, choices=DEFENSES)
        if not isinstance(self.pseudo, bool):
            raise ValueError(
                f"The 'pseudo' parameter of {func} must be a bool. Got {self.pseudo!r} instead."
            )
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name not in ("name", *self.READS[self.name]) and value != f.default:
                raise ValueError(
                    f"The '{f.name}' parameter of {func} is not read by the defense "
                    f"{self.name!r} (it reads {list(self.READS[self.name])}); leave it at "
                    f"{f.default!r}. Got {value!r} instead."
                )
        self.build(seed=0)  # the defense's own checks of its values

    @property
    def step_scale(self) -> float:
        """The client's weight step over ``lr * grad L_acc``: ``lambda_acc`` for PriPrune
        (Algorithm 3 line 9 steps on eq. (16)'s ``L_local``, whose weight gradient is
        ``lambda_acc grad L_acc``; :mod:`sims.defenses.adaptive`), else 1. The
        defense-aware attacker, which knows the defense's settings, inverts steps of
        ``step_scale * lr``."""
        return self.lambda_acc if self.name == "priprune" else 1.0

    def build(self, *, seed: int):
        """The defense for one FL run (None for ``"none"``); ``seed`` seeds its draws."""
        if self.name == "none":
            return None
        if self.name == "priprune":
            return PriPruneDefense(
                **{name: getattr(self, name) for name in self.READS["priprune"]}, seed=seed
            )
        return FixedDefense(
            self.name,
            self.rate,
            largest_fraction=self.largest_fraction,
            pseudo=self.pseudo,
            seed=seed,
        )
