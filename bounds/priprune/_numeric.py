"""The numeric forms: validation at the public boundary, then the lambdified expressions."""

from __future__ import annotations

import functools
from types import SimpleNamespace

import numpy as np
import sympy as sp
from scipy import special

from pruneleak.bounds._vector import as_output, int_array, real_array
from pruneleak.bounds.priprune.expressions import SYMBOLS, _bits_expr, _sym_unit, _unit

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
    """Evaluate a formula on the validated arguments ``a`` (from ``_args``), broadcast.

    Integers enter as floats: ``2 * d_star`` in int64 would wrap above 2**62.
    """
    names, func = _kernel(name, corrected, a.unit)
    inputs = [value for key, value in vars(a).items() if key != "unit"]
    shape = np.broadcast_shapes(*(np.shape(v) for v in inputs))
    values = (np.asarray(getattr(a, n), dtype=float) for n in names)
    return np.broadcast_to(func(*values), shape)


# ---------------------------------------------------------------------------------------
# Validation and units
# ---------------------------------------------------------------------------------------

_INT_MAX = int(np.iinfo(np.int64).max)
# Every positive float64 lies in [2**-1074, 1.8e308] = [e**-744.4, e**709.8], so the
# Delta = -(1/2) sum of the d* log-eigenvalues of a float64 covariance has
# |Delta| < 745 d* / 2 nats. Beyond, it is no log-determinant (and 2 Delta / ln 2 may
# overflow); within, every bound stays below about 1e41 in magnitude.
_DELTA_PER_DIM = 745 / 2


def _first(bad, *arrays):
    """The entries of ``arrays`` (broadcast together) at the first True of ``bad``."""
    index = np.unravel_index(int(np.argmax(bad)), bad.shape)
    return [np.broadcast_to(arr, bad.shape)[index].item() for arr in arrays]


def _check_delta(delta, d_star, func):
    limit = _DELTA_PER_DIM * d_star
    bad = np.abs(delta) > limit
    if bad.any():
        value, dim, lim = _first(bad, delta, d_star, limit)
        raise ValueError(
            f"The 'delta' parameter of {func} must be in [-{_DELTA_PER_DIM:g} d_star, "
            f"{_DELTA_PER_DIM:g} d_star] nats "
            f"(Delta = -ln pdet(Sigma) / 2 over d_star float64 eigenvalues, each |ln| < 745), "
            f"here [{-lim:g}, {lim:g}] for d_star={dim}. Got {value!r} instead."
        )


def _check_order(small_name, small, large_name, large, func, *, param, reason):
    bad = small > large
    if bad.any():
        lo, hi = _first(bad, small, large)
        limit = f"at most {large_name}" if param == small_name else f"at least {small_name}"
        raise ValueError(
            f"The '{param}' parameter of {func} must be {limit} ({reason}). "
            f"Got {small_name}={lo} > {large_name}={hi} instead."
        )


def _args(func, unit, **kwargs):
    """Validate the named arguments of ``func`` at its public boundary.

    Each argument is checked element-wise; then the shapes must broadcast, ``|delta|``
    must be a possible log-determinant (``_DELTA_PER_DIM``), ``d_star <= d`` and
    ``kept <= d``.
    """
    out = SimpleNamespace(unit=_unit(unit, func))
    checks = {
        "p": lambda v: real_array("p", v, func=func, low=0, high=1),
        "B": lambda v: real_array("B", v, func=func, low=1),
        "d_star": lambda v: int_array("d_star", v, func=func, low=1, high=_INT_MAX),
        "delta": lambda v: real_array("delta", v, func=func),
        "T": lambda v: int_array("T", v, func=func, low=1, high=_INT_MAX),
        "d": lambda v: int_array("d", v, func=func, low=1, high=_INT_MAX),
        "kept": lambda v: int_array("kept", v, func=func, low=0, high=_INT_MAX),
    }
    for name, value in kwargs.items():
        setattr(out, name, checks[name](value))
    shapes = {name: np.shape(v) for name, v in vars(out).items() if name != "unit"}
    try:
        np.broadcast_shapes(*shapes.values())
    except ValueError:
        listed = ", ".join(f"{name} {shape}" for name, shape in shapes.items())
        raise ValueError(
            f"The arguments of {func} must broadcast to one shape (numpy rules). "
            f"Got shapes {listed} instead."
        ) from None
    if "delta" in kwargs:
        _check_delta(out.delta, out.d_star, func)
    if "d" in kwargs and "d_star" in kwargs:
        reason = "the mask covers all d parameters, d* <= d"
        _check_order("d_star", out.d_star, "d", out.d, func, param="d", reason=reason)
    if "kept" in kwargs:
        reason = "|P-bar union A| counts parameters"
        _check_order("kept", out.kept, "d", out.d, func, param="kept", reason=reason)
    return out


def _bound(name, corrected, func, unit, **kwargs):
    """Validate ``kwargs`` for ``func`` and evaluate formula ``name``: a float or an array."""
    return as_output(_evaluate(name, corrected, _args(func, unit, **kwargs)))


def _sum_rounds(name, corrected, func, unit, **kwargs):
    """Sum formula ``name`` over the last axis (one entry per round, at least one)."""
    values = _evaluate(name, corrected, _args(func, unit, **kwargs))
    if values.ndim == 0 or values.shape[-1] == 0:
        got = "scalars" if values.ndim == 0 else f"shape {values.shape}"
        raise ValueError(
            f"{func} needs per-round sequences (a last axis of at least one round). "
            f"Got {got} instead."
        )
    return as_output(np.sum(values, axis=-1))
