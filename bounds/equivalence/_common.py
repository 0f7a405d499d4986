"""Shared by the modules of ``bounds.equivalence``: the sympy symbols and argument checks."""

from __future__ import annotations

import numpy as np
import sympy as sp

from pruneleak.bounds._vector import int_array, real_array

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


# Widths and dimensions are counts up to 2^53 (exact in float64); the formulas take them
# as floats, so that products such as m * d cannot wrap around in int64.
_MAX_COUNT = 2**53


def _count(name, value, func, high=_MAX_COUNT):
    return int_array(name, value, func=func, low=1, high=high).astype(float)


def _log_ratio(count, delta):
    """log(count / delta), through log count - log delta where the quotient overflows."""
    with np.errstate(over="ignore"):
        ratio = count / delta
    return np.where(np.isfinite(ratio), np.log(ratio), np.log(count) - np.log(delta))
