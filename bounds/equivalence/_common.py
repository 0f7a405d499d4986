"""Shared by the modules of ``bounds.equivalence``: the sympy symbols and argument checks."""

from __future__ import annotations

import sympy as sp

from bounds._vector import real_array

# Formulas typed once, in sympy, and lambdified (numeric functions and
# ``epsilon_dp_theorem_expr`` share them).
_SIGMA, _SIGMA_A, _M, _D, _DELTA_DP, _GS1 = sp.symbols(
    "sigma sigma_A m d delta_dp GS_1", positive=True
)


def _delta_small(name, value, func):
    """Lemmas of Appendix B require a failure probability in (0, 1/10)."""
    return real_array(
        name, value, func=func, low=0, high=0.1, low_inclusive=False, high_inclusive=False
    )


def _positive(name, value, func):
    return real_array(name, value, func=func, low=0, low_inclusive=False)


def _probability(name, value, func):
    return real_array(
        name, value, func=func, low=0, high=1, low_inclusive=False, high_inclusive=False
    )
