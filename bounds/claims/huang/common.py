"""Helpers shared by the appendices of Huang et al.: samplers, sweeps and sympy symbols."""

from __future__ import annotations

import numpy as np
import sympy as sp

from pruneleak.bounds import equivalence as eq
from pruneleak.bounds.claims.checks import (
    GridCheck,
    Param,
    fmt,
)

_MC_SAMPLES = 2000
_R = "a/sigma"
_RA = "a/sigma_A"


def _unit_vector(d: int) -> np.ndarray:
    """x_j proportional to 1/j, ||x||_2 = 1 (unequal entries, so ||x||_inf > 1/sqrt(d))."""
    x = 1.0 / np.arange(1, d + 1)
    return x / np.linalg.norm(x)


def _truncated(rng, shape, a, sigma=1.0, *, one_sided=False):
    """y 1{|y| <= a} (magnitude pruning) or y 1{0 <= y <= a} (folded), y ~ N(0, sigma^2)."""
    y = rng.normal(0.0, sigma, size=shape)
    keep = (y >= 0) & (y <= a) if one_sided else np.abs(y) <= a
    return np.where(keep, y, 0.0)


def _r_param(low=1e-3, high=100.0, points=81, label=_R):
    return Param("r", low, high, scale="log", points=points, label=label)


def _moment_check(order, relation, claimed, claimed_label, *, one_sided, factor=1.0, domain=False):
    """factor * E[u^order] (exact, sigma = 1) against ``claimed(r)``, r = a/sigma swept.

    ``atol=0``: the moments are computed to full relative precision (incomplete gamma),
    so even the tiny values at small a/sigma are compared relatively.
    """
    label = _RA if one_sided else _R
    name = "A_bar_ij" if one_sided else "u"
    return GridCheck(
        true=lambda r: factor * eq.truncated_gaussian_moment(order, r, 1.0, one_sided=one_sided),
        claimed=claimed,
        params=(_r_param(label=label),),
        relation=relation,
        true_label=f"{fmt(factor) + ' ' if factor != 1 else ''}E[{name}^{order}] (exact)",
        claimed_label=claimed_label,
        domain_param="r" if domain else None,
        atol=0.0,
    )


_a, _sig = sp.symbols("a sigma", positive=True)
_xs = sp.Symbol("x", real=True)
