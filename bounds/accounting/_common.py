"""Shared by the modules of ``bounds.accounting``: the sympy symbols and argument checks."""

from __future__ import annotations

import numpy as np
import sympy as sp

from pruneleak.bounds._vector import real_array
from pruneleak.bounds.validation import check_real

_ALPHA, _DELTA, _LAMBDA = sp.symbols("alpha delta lambda_val", positive=True)
_T = sp.Symbol("t", nonnegative=True, integer=True)

# Largest order of the sampled Gaussian: the binomial expansion of an integer order alpha
# sums alpha - 1 terms, so the order bounds the work and memory of one evaluation.
_MAX_SAMPLED_ORDER = 2.0**20
# Largest repetition count (steps, rounds): counts multiply float RDP values, and every
# integer up to 2^53 is exact in float64.
_MAX_COUNT = 2**53


def _orders(orders, func, name="orders"):
    return real_array(name, orders, func=func, low=1, low_inclusive=False)


def _sampled_orders(orders, func, name="orders"):
    return real_array(name, orders, func=func, low=1, high=_MAX_SAMPLED_ORDER, low_inclusive=False)


def _order_list(orders, func):
    """A non-empty 1-D array of orders (the curves that conversions minimise over)."""
    arr = _orders(orders, func)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(
            f"The 'orders' parameter of {func} must be a non-empty 1-dimensional array of "
            f"orders > 1. Got shape {arr.shape} instead."
        )
    return arr


def _noise(name, value, func):
    """A noise scale >= 0; 0 (no noise) gives an infinite privacy loss."""
    return check_real(name, value, func=func, low=0)


def _delta(value, func):
    return check_real(
        "delta", value, func=func, low=0, high=1, low_inclusive=False, high_inclusive=False
    )


def _rdp_curve(name, value, func):
    """RDP values in [0, inf] (nats), as a float array."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            f"The '{name}' parameter of {func} must be an array of RDP values in [0, inf]. "
            f"Got {value!r} instead."
        ) from None
    bad = np.isnan(arr) | (arr < 0)
    if bad.any():
        raise ValueError(
            f"The '{name}' parameter of {func} must hold RDP values in [0, inf] (an RDP is "
            f"never negative). Got {arr[bad].flat[0]!r} instead."
        )
    return arr
