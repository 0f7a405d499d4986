"""Validation of public arguments, shared by every package of pruneleak.

One message shape everywhere (after scikit-learn's parameter validation):
``The 'p' parameter of single_round_bound must be in [0, 1]. Got 1.3 instead.``
Pure Python + numpy so that ``bounds``, ``estimators`` and ``sims`` can all use it.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from numbers import Integral, Real

import numpy as np

# Longest repr of a refused value shown in a message (a 400-digit integer is cut).
_REPR_CHARS = 60


def _short_repr(value) -> str:
    """``repr(value)``, cut in the middle when longer than ``_REPR_CHARS`` characters."""
    text = repr(value)
    if len(text) <= _REPR_CHARS:
        return text
    half = _REPR_CHARS // 2
    return f"{text[:half]}...{text[-10:]} ({len(text)} characters)"


def _bound_text(value) -> str:
    """An integer, or a float holding one below 2**53, exactly (cut by ``_short_repr`` when
    huge); a string (a bound known only at run time, ``"M"``) as it is; anything else as
    ``f"{value:g}"``."""
    if isinstance(value, str):
        return value
    if isinstance(value, Integral | np.integer):
        return _short_repr(int(value))
    if isinstance(value, float) and value.is_integer() and abs(value) <= 2**53:
        return str(int(value))
    try:
        return f"{value:g}"
    except OverflowError:
        return _short_repr(value)


def interval_text(low, high, low_inclusive: bool = True, high_inclusive: bool = True) -> str:
    """The interval from ``low`` to ``high`` (None: unbounded) as the messages write it.

    >>> interval_text(0, 1, high_inclusive=False)
    '[0, 1)'
    >>> interval_text(2, "M")
    '[2, M]'
    """
    left = "[" if low_inclusive and low is not None else "("
    right = "]" if high_inclusive and high is not None else ")"
    lo = "-inf" if low is None else _bound_text(low)
    hi = "inf" if high is None else _bound_text(high)
    return f"{left}{lo}, {hi}{right}"


#: Largest seed: numpy's and torch's generators take seeds in [0, 2**63 - 1].
MAX_SEED = 2**63 - 1


def check_seed(value, *, func: str, name: str = "seed") -> int:
    """Return ``value`` as an int seed in ``[0, MAX_SEED]``, else raise ValueError (the one
    check of a seed, for every layer).

    Examples
    --------
    >>> check_seed(7, func="f")
    7
    """
    return check_int(name, value, func=func, low=0, high=MAX_SEED)


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
    interval = interval_text(low, high, low_inclusive, high_inclusive)
    if (
        isinstance(value, bool)
        or not isinstance(value, Real | np.number)
        or isinstance(value, np.complexfloating)
    ):
        raise ValueError(
            f"The '{name}' parameter of {func} must be a real number in {interval}. "
            f"Got {_short_repr(value)} instead."
        )
    try:
        value = float(value)
    except OverflowError:  # an int or a Fraction beyond the largest float, 1.8e308
        raise ValueError(
            f"The '{name}' parameter of {func} must be a finite float in {interval}. "
            f"Got {_short_repr(value)} instead (beyond the largest float, 1.8e308)."
        ) from None
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
    interval = interval_text(low, high, True, True)
    if isinstance(value, bool) or not isinstance(value, Integral | np.integer):
        raise ValueError(
            f"The '{name}' parameter of {func} must be an integer in {interval}. "
            f"Got {_short_repr(value)} instead."
        )
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(
            f"The '{name}' parameter of {func} must be in {interval}. "
            f"Got {_short_repr(value)} instead."
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
    # An array is unhashable: ``array in choices`` would compare element-wise.
    if not isinstance(value, Hashable) or value not in choices:
        allowed = ", ".join(repr(c) for c in choices)
        raise ValueError(
            f"The '{name}' parameter of {func} must be one of {allowed}. "
            f"Got {_short_repr(value)} instead."
        )
    return value


def check_finite_array(name: str, value, *, func: str, ndim: int | None = None) -> np.ndarray:
    """Return ``value`` as a float ndarray with no NaN or inf (and ``ndim`` dims if given).

    The conversion is that of :func:`as_real_array` (numbers and booleans only).

    Examples
    --------
    >>> check_finite_array("x", [1, 2], func="f")
    array([1., 2.])
    """
    arr = as_real_array(name, value, func=func)
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


def check_bool(name: str, value, *, func: str) -> bool:
    """Return ``value`` as a Python bool if it is ``True`` or ``False``, else raise ValueError.

    A flag such as ``corrected="yes"`` would otherwise be taken as true.

    Examples
    --------
    >>> check_bool("corrected", np.True_, func="f")
    True
    >>> check_bool("per_image", "no", func="f")
    Traceback (most recent call last):
    ...
    ValueError: The 'per_image' parameter of f must be True or False. Got 'no' instead.
    """
    if not isinstance(value, bool | np.bool_):
        raise ValueError(
            f"The '{name}' parameter of {func} must be True or False. "
            f"Got {_short_repr(value)} instead."
        )
    return bool(value)


def as_real_array(name: str, value, *, func: str) -> np.ndarray:
    """Return ``value`` as a float ndarray, or raise ValueError naming ``name``.

    Accepts numbers, booleans and (nested, rectangular) sequences of them; refuses strings
    (``"1.5"`` is not parsed), complex numbers (``float`` would drop the imaginary part),
    ``None``, ragged nesting and integers beyond the largest float. Finiteness is not
    checked (:func:`check_finite_array` does).

    Examples
    --------
    >>> as_real_array("x", [[1, 2]], func="f")
    array([[1., 2.]])
    >>> as_real_array("z", "1.5", func="f")
    Traceback (most recent call last):
    ...
    ValueError: The 'z' parameter of f must be real numbers. Got an array of dtype <U3 instead.
    """
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):  # ragged nesting: numpy refuses to build the array
        raise ValueError(
            f"The '{name}' parameter of {func} must be a rectangular array of real numbers. "
            f"Got {_short_repr(value)} instead."
        ) from None
    if raw.dtype.kind == "O":
        bad = [
            v
            for v in raw.flat
            if isinstance(v, np.complexfloating) or not isinstance(v, Real | np.number)
        ]
        if bad:
            raise ValueError(
                f"The '{name}' parameter of {func} must be real numbers. "
                f"Got {_short_repr(bad[0])} among them instead."
            )
        try:
            return raw.astype(float, copy=False)
        except OverflowError:
            raise ValueError(
                f"The '{name}' parameter of {func} must be finite floats. Got an entry beyond "
                "the largest float, 1.8e308, instead."
            ) from None
    if raw.dtype.kind not in "biuf":
        raise ValueError(
            f"The '{name}' parameter of {func} must be real numbers. "
            f"Got an array of dtype {raw.dtype} instead."
        )
    return raw.astype(float, copy=False)


def check_distinct(name: str, values, *, func: str) -> tuple:
    """Return ``values`` (a list, tuple or 1-D array) as a tuple if no entry repeats, else
    raise ValueError naming the repeated entry: a grid that lists a value twice would
    compute and record it twice.

    Examples
    --------
    >>> check_distinct("rates", [0.1, 0.5], func="f")
    (0.1, 0.5)
    >>> check_distinct("p", (1, 1), func="f")
    Traceback (most recent call last):
    ...
    ValueError: The 'p' parameter of f must not repeat a value. Got 1 twice in (1, 1) instead.
    """
    if isinstance(values, np.ndarray) and values.ndim == 1:
        values = values.tolist()
    if not isinstance(values, list | tuple):
        raise ValueError(
            f"The '{name}' parameter of {func} must be a list or tuple of values. "
            f"Got {values!r} instead."
        )
    values = tuple(values)
    for i, value in enumerate(values):
        if value in values[:i]:
            count = values.count(value)
            times = "twice" if count == 2 else f"{count} times"
            raise ValueError(
                f"The '{name}' parameter of {func} must not repeat a value. "
                f"Got {value!r} {times} in {values!r} instead."
            )
    return values


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
