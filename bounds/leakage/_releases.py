"""Shared by the modules of ``bounds.leakage``: the release matrix, validated and centred."""

from __future__ import annotations

import numpy as np

from bounds.validation import check_finite_array


def release_matrix(releases, func: str) -> np.ndarray:
    """``releases`` as a finite float (M, k) array with M >= 1 rows, one per candidate.

    Examples
    --------
    >>> release_matrix([[1, 2], [3, 4]], "f").shape
    (2, 2)
    """
    arr = check_finite_array("releases", releases, func=func, ndim=2)
    if arr.shape[0] < 1:
        raise ValueError(
            f"The 'releases' parameter of {func} must have at least one row (candidate). "
            f"Got shape {arr.shape} instead."
        )
    return arr


def centred(releases: np.ndarray) -> np.ndarray:
    """Rows minus their mean: the posterior and the covariance are translation invariant,
    and centring keeps the inner products small (less cancellation in ``<y, r_j>``).

    Examples
    --------
    >>> centred(np.array([[1.0, 5.0], [3.0, 5.0]]))
    array([[-1.,  0.],
           [ 1.,  0.]])
    """
    return releases - releases.mean(axis=0)


def distinct_rows(releases: np.ndarray) -> np.ndarray:
    """Multiplicity of each distinct row (exact equality), in the order of ``np.unique``.

    Examples
    --------
    >>> distinct_rows(np.array([[0.0], [1.0], [0.0]]))
    array([2, 1])
    """
    if releases.shape[1] == 0:
        return np.array([releases.shape[0]])
    return np.unique(releases, axis=0, return_counts=True)[1]
