"""Input handling shared by the estimators: torch or numpy in, finite float64 numpy out.

Metrics are not a hot loop, so tensors (on any device) are detached and moved to the CPU
once, at the public boundary.
"""

from __future__ import annotations

import numpy as np

from pruneleak.bounds.validation import MAX_SEED as MAX_SEED  # re-exported
from pruneleak.bounds.validation import check_finite_array
from pruneleak.bounds.validation import check_seed as check_seed  # re-exported


def to_numpy(name: str, value, *, func: str, ndim: int | None = None) -> np.ndarray:
    """Return ``value`` (ndarray, torch tensor, or nested sequence) as a finite float64 ndarray.

    Raises ValueError for data that are not real numbers (strings, complex values, ``None``,
    ragged nesting), NaN / inf entries, an empty array, or a wrong number of dimensions.
    Booleans and integers are converted to float.

    Examples
    --------
    >>> to_numpy("x", [1, 2], func="f")
    array([1., 2.])
    >>> to_numpy("x", [1 + 2j], func="f")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: The 'x' parameter of f must hold real numbers ... Got dtype complex128 instead.
    """
    if hasattr(value, "detach"):  # torch.Tensor, on any device
        value = value.detach().to("cpu")
        # floats go through float64 (numpy has no bfloat16); complex and int keep their dtype
        value = (value.double() if value.is_floating_point() else value).numpy()
    try:
        arr = np.asarray(value)
    except ValueError as err:  # ragged nesting
        raise ValueError(
            f"The '{name}' parameter of {func} must be a rectangular array of real numbers. "
            f"Got a ragged nested sequence instead ({err})."
        ) from err
    if arr.dtype.kind not in "biuf":
        raise ValueError(
            f"The '{name}' parameter of {func} must hold real numbers (bool, int or float). "
            f"Got dtype {arr.dtype} instead."
        )
    arr = check_finite_array(name, arr, func=func, ndim=ndim)
    if arr.size == 0:
        raise ValueError(
            f"The '{name}' parameter of {func} must not be empty. Got shape {arr.shape} instead."
        )
    return arr


def pair_to_numpy(
    first: tuple[str, object], second: tuple[str, object], *, func: str, ndim: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Convert two arrays with :func:`to_numpy` and require that their shapes agree.

    Examples
    --------
    >>> a, b = pair_to_numpy(("a", [1, 2]), ("b", [3, 4]), func="f")
    >>> b
    array([3., 4.])
    """
    (name_a, a), (name_b, b) = first, second
    a = to_numpy(name_a, a, func=func, ndim=ndim)
    b = to_numpy(name_b, b, func=func, ndim=ndim)
    if a.shape != b.shape:
        raise ValueError(
            f"The '{name_a}' and '{name_b}' parameters of {func} must have the same shape. "
            f"Got {a.shape} and {b.shape} instead."
        )
    return a, b


def check_values_in(
    name: str, arr: np.ndarray, low: float, high: float, *, func: str, range_name: str
) -> None:
    """Raise ValueError naming the observed min and max if ``arr`` leaves ``[low, high]``.

    Values outside the declared range are refused, never clipped: a 0-255 image scored on
    the default [0, 1] range would otherwise collapse into one level.

    Examples
    --------
    >>> check_values_in("x", np.array([0.0, 255.0]), 0.0, 1.0, func="f", range_name="r")
    Traceback (most recent call last):
    ...
    ValueError: The 'x' parameter of f must have values in r=[0, 1]. Got values in [0, 255] instead.
    """
    lo, hi = float(arr.min()), float(arr.max())
    if lo < low or hi > high:
        raise ValueError(
            f"The '{name}' parameter of {func} must have values in {range_name}="
            f"[{low:g}, {high:g}]. Got values in [{lo:g}, {hi:g}] instead."
        )
