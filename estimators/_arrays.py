"""Input handling shared by the metrics: torch or numpy in, finite float64 numpy out.

Metrics are not a hot loop, so tensors (on any device) are detached and moved to the CPU
once, at the public boundary.
"""

from __future__ import annotations

import numpy as np

from bounds.validation import check_finite_array


def to_numpy(name: str, value, *, func: str, ndim: int | None = None) -> np.ndarray:
    """Return ``value`` (ndarray, torch tensor, or nested sequence) as a finite float64 ndarray.

    Raises ValueError for NaN / inf entries, an empty array, or a wrong number of dimensions.

    Examples
    --------
    >>> to_numpy("x", [1, 2], func="f")
    array([1., 2.])
    """
    if hasattr(value, "detach"):  # torch.Tensor, on any device
        value = value.detach().to("cpu").double().numpy()
    arr = check_finite_array(name, value, func=func, ndim=ndim)
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
