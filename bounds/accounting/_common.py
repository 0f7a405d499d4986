"""Shared by the modules of ``bounds.accounting``: the sympy symbols and argument checks."""

from __future__ import annotations

import sympy as sp

from bounds._vector import real_array
from bounds.validation import check_real

_ALPHA, _DELTA, _LAMBDA = sp.symbols("alpha delta lambda_val", positive=True)
_T = sp.Symbol("t", nonnegative=True, integer=True)


def _orders(orders, func):
    return real_array("orders", orders, func=func, low=1, low_inclusive=False)


def _noise(name, value, func):
    return check_real(name, value, func=func, low=0, low_inclusive=False)


def _delta(value, func):
    return check_real(
        "delta", value, func=func, low=0, high=1, low_inclusive=False, high_inclusive=False
    )
