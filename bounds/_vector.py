"""Element-wise validation for the vectorised bound functions of ``bounds``.

The public functions of ``bounds`` take a scalar or an array for each numeric argument
and broadcast them (numpy rules). These helpers validate every element with the shared
message shape of :mod:`bounds.validation` (the first offending element is reported) and
return a Python ``float`` for scalar results.
"""

from __future__ import annotations

import numpy as np

from pruneleak.bounds.validation import as_real_array, check_int, check_real

_INT64_MAX = int(np.iinfo(np.int64).max)


def _ndim(value) -> int | None:
    """``np.ndim(value)``, or None for ragged nesting (numpy cannot build the array)."""
    try:
        return np.ndim(value)
    except (TypeError, ValueError):
        return None


def _item(value):
    """Unwrap a 0-d ndarray so that the scalar validators see a numpy scalar."""
    return value[()] if isinstance(value, np.ndarray) else value


def real_array(
    name: str,
    value,
    *,
    func: str,
    low: float | None = None,
    high: float | None = None,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
) -> np.ndarray:
    """Return ``value`` as a float array whose every element lies in the interval.

    Examples
    --------
    >>> real_array("p", [0.1, 0.2], func="f", low=0, high=1)
    array([0.1, 0.2])
    """
    bounds_kw = {
        "func": func,
        "low": low,
        "high": high,
        "low_inclusive": low_inclusive,
        "high_inclusive": high_inclusive,
    }
    if _ndim(value) == 0:
        return np.asarray(check_real(name, _item(value), **bounds_kw))
    arr = as_real_array(name, value, func=func)  # refuses ragged nesting, naming ``name``
    bad = ~np.isfinite(arr)
    if low is not None:
        bad |= arr < low if low_inclusive else arr <= low
    if high is not None:
        bad |= arr > high if high_inclusive else arr >= high
    if bad.any():
        check_real(name, float(arr[bad].flat[0]), **bounds_kw)
    return arr


def int_array(
    name: str, value, *, func: str, low: int | None = None, high: int | None = None
) -> np.ndarray:
    """Return ``value`` as an int64 array of integers in ``[low, high]``.

    Examples
    --------
    >>> int_array("d", [1, 2], func="f", low=1)
    array([1, 2])
    """
    ndim = _ndim(value)
    if ndim == 0:
        return np.asarray(check_int(name, _item(value), func=func, low=low, high=high))
    arr = None if ndim is None else np.asarray(value)
    if arr is None or arr.dtype.kind not in "iu":
        got = f"an array of dtype {arr.dtype}" if arr is not None else repr(value)
        raise ValueError(
            f"The '{name}' parameter of {func} must be an integer or an array of integers. "
            f"Got {got} instead."
        )
    bad = np.zeros(arr.shape, dtype=bool)
    if low is not None:
        bad |= arr < low
    if high is not None:
        bad |= arr > high
    if bad.any():
        check_int(name, int(arr[bad].flat[0]), func=func, low=low, high=high)
    # uint64 entries beyond int64 would wrap to negative numbers in ``astype(np.int64)``.
    wraps = arr > _INT64_MAX
    if wraps.any():
        check_int(name, int(arr[wraps].flat[0]), func=func, low=low, high=_INT64_MAX)
    return arr.astype(np.int64)


def as_output(value):
    """Python float for a 0-d result, float ndarray otherwise.

    Examples
    --------
    >>> as_output(np.asarray(2.0)), as_output([1, 2])
    (2.0, array([1., 2.]))
    """
    arr = np.asarray(value, dtype=float)
    return float(arr) if arr.ndim == 0 else arr
