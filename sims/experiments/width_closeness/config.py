"""The grid, the published Figure 8 table and the configuration of the width-versus-
closeness experiment (Huang et al., arXiv:2003.01876, Section 4.4), with the
parameterisations that map a width to the noise and weight scales (see
:mod:`sims.experiments.width_closeness`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import torch

from pruneleak.bounds.equivalence import remark_e3_parameters, sigma_for_epsilon_dp
from pruneleak.bounds.equivalence.width import FIG8_ERROR, FIG8_WIDTHS
from pruneleak.bounds.validation import check_choice, check_distinct, check_int, check_real
from pruneleak.estimators.device import check_device
from pruneleak.sims.core.runtime import check_seed

PAPER_SPARSITIES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
PAPER_WIDTHS = FIG8_WIDTHS
PAPER_EPS_AP = (0.05, 0.01)
# Section 4.4: "we set the privacy budgets to be eps_dp = 0.5, delta_dp = 0.1".
PAPER_EPS_DP = 0.5
PAPER_DELTA_DP = 0.1

# Figure 8 of arXiv:2003.01876 (the table in the text extract, lines 277-285 of
# papers/huang-pruning-as-dp-noise-arxiv2003.01876.txt): mean error
# (1/sqrt m)||h(x) - g(x)||_2, rows k = 0.1..0.9, columns m = PAPER_WIDTHS.
PAPER_FIG8_ERROR = FIG8_ERROR
# Section 4.4's claims, per k = 0.1..0.9: "for all sparsity levels, m = 20 is sufficient
# to satisfy eps_ap = 0.05"; for eps_ap = 0.01 "increase m accordingly to 500 for sparsity
# levels higher than 0.8, and to 1500 for lower ones".
PAPER_CLAIMED_WIDTH = {
    0.05: (20,) * 9,
    0.01: (1500,) * 8 + (500,),
}

PARAMETERISATIONS = (
    "fixed",
    "remark_e3_folded",
    "remark_e3_gaussian",
    "calibrated",
    "theorem_3_2",
)
SPARSITY_READINGS = ("pruned", "kept")
DTYPES = {"float32": torch.float32, "float64": torch.float64}


def _check_sorted_tuple(name, values, *, func, check):
    values = tuple(check(name, v) for v in values)
    if not values or any(b <= a for a, b in itertools.pairwise(values)):
        raise ValueError(
            f"The '{name}' parameter of {func} must be a non-empty, strictly increasing "
            f"sequence. Got {values!r} instead."
        )
    return values


@dataclass(frozen=True)
class WidthClosenessConfig:
    """Configuration of the width-versus-closeness experiment (see the module docstring).

    Attributes
    ----------
    sparsities : increasing sparsities k in (0, 1) (fraction pruned; see ``sparsity_reading``).
    widths : increasing widths m (layer outputs), integers >= 1.
    input_dim : d, the input dimension (not stated in the paper; default 100).
    trials : independent draws of (A, x, noise) per width.
    parameterisations : names from :data:`PARAMETERISATIONS`, all run on the same draws.
    sigma, sigma_a : Laplace scale and weight standard deviation of ``"fixed"``;
        ``sigma_a`` is also the weight scale of ``"calibrated"``.
    eps_dp, delta_dp : the privacy budget the ``"calibrated"`` and ``"theorem_3_2"`` noise
        is set to (Theorem E.2, nats), Section 4.4's 0.5 and 0.1 by default.
    bias : the constant entry of b (0 in the paper; large |b| switches the ReLU off or on
        for every coordinate, which has a closed-form error).
    eps_ap : distinct closeness levels at which the empirical delta_ap is reported.
    delta_ap : the target failure probability of the empirical and theoretical widths.
    sparsity_reading : ``"pruned"`` (paper: k is the fraction of zeros) or ``"kept"``.
    seed : seed of the random stream (same seed, same numbers on CPU).
    device : ``"auto"``, ``"cpu"``, ``"cuda"``, ...
    dtype : ``"float32"`` or ``"float64"``.
    """

    sparsities: tuple[float, ...] = PAPER_SPARSITIES
    widths: tuple[int, ...] = PAPER_WIDTHS
    input_dim: int = 100
    trials: int = 1000
    parameterisations: tuple[str, ...] = PARAMETERISATIONS
    sigma: float = 1.0
    sigma_a: float = 1.0
    eps_dp: float = PAPER_EPS_DP
    delta_dp: float = PAPER_DELTA_DP
    bias: float = 0.0
    eps_ap: tuple[float, ...] = PAPER_EPS_AP
    delta_ap: float = 0.1
    sparsity_reading: str = "pruned"
    seed: int = 0
    device: str = "auto"
    dtype: str = "float32"

    def __post_init__(self) -> None:
        func = "WidthClosenessConfig"

        def sparsity(name, v):
            return check_real(
                name, v, func=func, low=0, high=1, low_inclusive=False, high_inclusive=False
            )

        def width(name, v):
            return check_int(name, v, func=func, low=1)

        def positive(name, v):
            return check_real(name, v, func=func, low=0, low_inclusive=False)

        def probability(name, v):
            return check_real(
                name, v, func=func, low=0, high=1, low_inclusive=False, high_inclusive=False
            )

        sparsities = _check_sorted_tuple("sparsities", self.sparsities, func=func, check=sparsity)
        object.__setattr__(self, "sparsities", sparsities)
        object.__setattr__(
            self, "widths", _check_sorted_tuple("widths", self.widths, func=func, check=width)
        )
        object.__setattr__(
            self, "input_dim", check_int("input_dim", self.input_dim, func=func, low=1)
        )
        object.__setattr__(self, "trials", check_int("trials", self.trials, func=func, low=1))
        names = tuple(self.parameterisations)
        for name in names:
            check_choice("parameterisations", name, func=func, choices=PARAMETERISATIONS)
        if not names or len(set(names)) != len(names):
            raise ValueError(
                f"The 'parameterisations' parameter of {func} must name at least one "
                f"parameterisation, each once. Got {names!r} instead."
            )
        object.__setattr__(self, "parameterisations", names)
        for name in ("sigma", "sigma_a", "eps_dp"):
            object.__setattr__(self, name, positive(name, getattr(self, name)))
        for name in ("delta_dp", "delta_ap"):
            object.__setattr__(self, name, probability(name, getattr(self, name)))
        object.__setattr__(self, "bias", check_real("bias", self.bias, func=func))
        eps_ap = check_distinct("eps_ap", self.eps_ap, func=func)
        object.__setattr__(self, "eps_ap", tuple(positive("eps_ap", v) for v in eps_ap))
        if not self.eps_ap:
            raise ValueError(f"The 'eps_ap' parameter of {func} must not be empty. Got ().")
        check_choice(
            "sparsity_reading", self.sparsity_reading, func=func, choices=SPARSITY_READINGS
        )
        object.__setattr__(self, "seed", check_seed(self.seed, func=func))
        check_choice("dtype", self.dtype, func=func, choices=tuple(DTYPES))
        check_device(self.device, func=func)

    def prune_fractions(self) -> np.ndarray:
        """Fraction of the entries of A set to zero, per sparsity (``sparsity_reading``)."""
        k = np.asarray(self.sparsities, dtype=float)
        return k if self.sparsity_reading == "pruned" else 1.0 - k

    def prune_counts(self, m: int) -> list[int]:
        """Entries of the m x d matrix pruned at each sparsity: ``round(fraction * m * d)``."""
        n = m * self.input_dim
        return [round(float(p) * n) for p in self.prune_fractions()]

    def noise_parameters(self, parameterisation: str, m: int) -> tuple[float, float]:
        """``(sigma, sigma_a)`` of a parameterisation at width ``m`` (module docstring)."""
        func = "WidthClosenessConfig.noise_parameters"
        check_choice("parameterisation", parameterisation, func=func, choices=PARAMETERISATIONS)
        m = check_int("m", m, func=func, low=1)
        if parameterisation == "fixed":
            return self.sigma, self.sigma_a
        if parameterisation.startswith("remark_e3"):
            theorem = "E.2" if parameterisation == "remark_e3_folded" else "E.1"
            chosen = remark_e3_parameters(m, theorem=theorem)
            return float(chosen["sigma"]), float(chosen["sigma_a"])
        sigma_a = (
            self.sigma_a
            if parameterisation == "calibrated"
            else (self.eps_dp * self.delta_dp / m**2)
        )
        sigma = sigma_for_epsilon_dp(
            self.eps_dp,
            sigma_a=sigma_a,
            m=m,
            d=self.input_dim,
            delta_dp=self.delta_dp,
            theorem="E.2",
        )
        return float(sigma), float(sigma_a)

    def noise_table(self, m: int) -> list[tuple[float, float]]:
        """``(sigma, sigma_a)`` of every parameterisation of the config at width ``m``."""
        return [self.noise_parameters(p, m) for p in self.parameterisations]
