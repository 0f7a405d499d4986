"""Validation of public arguments, shared by every package of pruneleak.

One message shape everywhere (after scikit-learn's parameter validation):
``The 'p' parameter of single_round_bound must be in [0, 1]. Got 1.3 instead.``
Pure Python + numpy so that ``bounds``, ``estimators`` and ``sims`` can all use it.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np


def _interval(low, high, low_inclusive, high_inclusive) -> str:
    left = "[" if low_inclusive and low is not None else "("
    right = "]" if high_inclusive and high is not None else ")"
    lo = "-inf" if low is None else f"{low:g}"
    hi = "inf" if high is None else f"{high:g}"
    return f"{left}{lo}, {hi}{right}"


def check_real(
    name: str,
    value,
    *,
    func: str,
    low: float | None = None,
    high: float | None = None,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
) -> float:
    """Return ``value`` as a finite Python float inside the interval, else raise ValueError.

    Examples
    --------
    >>> check_real("p", 0.5, func="f", low=0, high=1)
    0.5
    >>> check_real("p", 1.3, func="f", low=0, high=1)
    Traceback (most recent call last):
    ...
    ValueError: The 'p' parameter of f must be in [0, 1]. Got 1.3 instead.
    """
    interval = _interval(low, high, low_inclusive, high_inclusive)
    if isinstance(value, bool) or not isinstance(value, Real | np.number):
        raise ValueError(
            f"The '{name}' parameter of {func} must be a real number in {interval}. "
            f"Got {value!r} instead."
        )
    value = float(value)
    too_low = low is not None and (value < low or (value == low and not low_inclusive))
    too_high = high is not None and (value > high or (value == high and not high_inclusive))
    if not math.isfinite(value) or too_low or too_high:
        raise ValueError(
            f"The '{name}' parameter of {func} must be in {interval}. Got {value!r} instead."
        )
    return value


def check_int(
    name: str, value, *, func: str, low: int | None = None, high: int | None = None
) -> int:
    """Return ``value`` as a Python int inside ``[low, high]``, else raise ValueError.

    Examples
    --------
    >>> check_int("n", np.int64(3), func="f", low=1)
    3
    """
    interval = _interval(low, high, True, True)
    if isinstance(value, bool) or not isinstance(value, Integral | np.integer):
        raise ValueError(
            f"The '{name}' parameter of {func} must be an integer in {interval}. "
            f"Got {value!r} instead."
        )
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(
            f"The '{name}' parameter of {func} must be in {interval}. Got {value!r} instead."
        )
    return value


def check_open_unit(name: str, value, *, func: str) -> float:
    """Return ``value`` as a float strictly inside (0, 1) (a confidence level, a rate that
    may be neither 0 nor 1), else raise ValueError.

    Examples
    --------
    >>> check_open_unit("confidence", 0.95, func="f")
    0.95
    """
    return check_real(
        name, value, func=func, low=0, high=1, low_inclusive=False, high_inclusive=False
    )


def check_choice(name: str, value, *, func: str, choices) -> str:
    """Return ``value`` if it is one of ``choices``, else raise ValueError listing them.

    Examples
    --------
    >>> check_choice("unit", "bits", func="f", choices=("bits", "nats"))
    'bits'
    """
    if value not in choices:
        allowed = ", ".join(repr(c) for c in choices)
        raise ValueError(
            f"The '{name}' parameter of {func} must be one of {allowed}. Got {value!r} instead."
        )
    return value


def check_finite_array(name: str, value, *, func: str, ndim: int | None = None) -> np.ndarray:
    """Return ``value`` as a float ndarray with no NaN or inf (and ``ndim`` dims if given).

    Examples
    --------
    >>> check_finite_array("x", [1, 2], func="f")
    array([1., 2.])
    """
    arr = np.asarray(value, dtype=float)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(
            f"The '{name}' parameter of {func} must be a {ndim}-dimensional array. "
            f"Got shape {arr.shape} instead."
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(
            f"The '{name}' parameter of {func} must contain only finite values. "
            f"Got {int(np.sum(~np.isfinite(arr)))} NaN or infinite entries instead."
        )
    return arr


def check_broadcast(func: str, **arrays) -> tuple[int, ...]:
    """Return the shape the named arguments broadcast to (numpy rules), else raise ValueError.

    Examples
    --------
    >>> check_broadcast("f", x=np.ones(2), y=1.0)
    (2,)
    >>> check_broadcast("f", x=np.ones(2), y=np.ones(3))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: The parameters 'x', 'y' of f must broadcast to one shape. Got shapes (2,), (3,) ...
    """
    shapes = [np.shape(value) for value in arrays.values()]
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        names = ", ".join(f"'{name}'" for name in arrays)
        got = ", ".join(str(shape) for shape in shapes)
        raise ValueError(
            f"The parameters {names} of {func} must broadcast to one shape. "
            f"Got shapes {got} instead."
        ) from None


def _describe(value) -> str:
    if np.ndim(value) == 0:
        value = value[()] if isinstance(value, np.ndarray) else value
        return f"{value:g}" if isinstance(value, float | np.floating) else str(value)
    arr = np.asarray(value, dtype=float)
    return f"an array of shape {arr.shape} in [{arr.min():g}, {arr.max():g}]"


def check_finite_result(value, *, func: str, **inputs):
    """Return ``value`` if it is finite everywhere, else raise ValueError naming the inputs.

    For results whose exact value exists but lies beyond the float range (about 1.8e308):
    every input is valid on its own, their combination is not representable.

    Examples
    --------
    >>> check_finite_result(2.0, func="f", x=1.0)
    2.0
    >>> check_finite_result(float("inf"), func="f", x=1e308, n=3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: The result of f is beyond the float range (about 1.8e308) for x=1e+308, n=3. ...
    """
    arr = np.asarray(value, dtype=float)
    finite = np.isfinite(arr)
    if not finite.all():
        given = ", ".join(f"{name}={_describe(v)}" for name, v in inputs.items())
        raise ValueError(
            f"The result of {func} is beyond the float range (about 1.8e308) for {given}. "
            f"Got {float(arr[~finite].flat[0])!r} instead."
        )
    return value
