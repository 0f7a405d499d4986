"""The numeric forms: validation at the public boundary, then the lambdified expressions."""

from __future__ import annotations

import functools
from types import SimpleNamespace

import numpy as np
import sympy as sp
from scipy import special

from bounds._vector import as_output, int_array, real_array
from bounds.priprune.expressions import SYMBOLS, _bits_expr, _sym_unit, _unit

# Validated argument name (see ``_args``) -> the symbol it binds.
_ARGUMENTS = {
    "p": SYMBOLS.p,
    "B": SYMBOLS.B,
    "d_star": SYMBOLS.d_star,
    "delta": SYMBOLS.Delta,
    "d": SYMBOLS.d,
    "kept": SYMBOLS.kept,
    "T": SYMBOLS.T,
}
_NUMERIC_MODULES = [{"entr": special.entr}, "numpy"]


@functools.cache
def _kernel(name, corrected, unit):
    """``sp.lambdify`` of ``_bits_expr(name, corrected)`` in ``unit``, built once per key."""
    expr = _sym_unit(_bits_expr(name, corrected), unit, "_kernel")
    names = tuple(n for n, sym in _ARGUMENTS.items() if sym in expr.free_symbols)
    return names, sp.lambdify([_ARGUMENTS[n] for n in names], expr, _NUMERIC_MODULES)


def _evaluate(name, corrected, a):
    """Evaluate a formula on the validated arguments ``a`` (from ``_args``), broadcast."""
    names, func = _kernel(name, corrected, a.unit)
    inputs = [value for key, value in vars(a).items() if key != "unit"]
    shape = np.broadcast_shapes(*(np.shape(v) for v in inputs))
    return np.broadcast_to(func(*(getattr(a, n) for n in names)), shape)


# ---------------------------------------------------------------------------------------
# Validation and units
# ---------------------------------------------------------------------------------------


def _d(d, d_star, func):
    d = int_array("d", d, func=func, low=1)
    if np.any(d < d_star):
        raise ValueError(
            f"The 'd' parameter of {func} must be at least d_star (the mask covers all "
            f"d parameters, d* <= d). Got d={np.min(d)} < d_star={np.max(d_star)} instead."
        )
    return d


def _args(func, unit, **kwargs):
    """Validate the named arguments of ``func`` at its public boundary."""
    out = SimpleNamespace(unit=_unit(unit, func))
    checks = {
        "p": lambda v: real_array("p", v, func=func, low=0, high=1),
        "B": lambda v: real_array("B", v, func=func, low=1),
        "d_star": lambda v: int_array("d_star", v, func=func, low=1),
        "delta": lambda v: real_array("delta", v, func=func),
        "T": lambda v: int_array("T", v, func=func, low=1),
    }
    for name, value in kwargs.items():
        if name in checks:
            setattr(out, name, checks[name](value))
    if "d" in kwargs:
        out.d = _d(kwargs["d"], out.d_star if "d_star" in kwargs else 1, func)
    if "kept" in kwargs:
        out.kept = int_array("kept", kwargs["kept"], func=func, low=0)
        d = out.d if "d" in kwargs else 1
        if np.any(out.kept > d):
            raise ValueError(
                f"The 'kept' parameter of {func} must be at most d. "
                f"Got {np.max(out.kept)} > {np.min(d)} instead."
            )
    return out


def _bound(name, corrected, func, unit, **kwargs):
    """Validate ``kwargs`` for ``func`` and evaluate formula ``name``: a float or an array."""
    return as_output(_evaluate(name, corrected, _args(func, unit, **kwargs)))


def _sum_rounds(name, corrected, func, unit, **kwargs):
    """Sum formula ``name`` over the last axis (one entry per round)."""
    values = _evaluate(name, corrected, _args(func, unit, **kwargs))
    if values.ndim == 0:
        raise ValueError(
            f"{func} needs per-round sequences (one entry per round). Got scalars instead."
        )
    return as_output(np.sum(values, axis=-1))
