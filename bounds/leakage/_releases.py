"""Shared by the modules of ``bounds.leakage``: the release matrix, validated and centred."""

from __future__ import annotations

import math

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


# Centred releases over s beyond 1e150 would overflow the squared norms (float64 max 1.8e308).
_MAX_SCALED = 1e150


def scaled_releases(releases: np.ndarray, noise_std: float, func: str) -> np.ndarray:
    """Centred rows divided by ``noise_std > 0``: the posterior's logits are inner products
    of these. ValueError naming ``noise_std`` when their squared norms would overflow.

    Examples
    --------
    >>> scaled_releases(np.array([[0.0], [2.0]]), 0.5, "f")
    array([[-2.],
           [ 2.]])
    """
    scaled = centred(releases) / noise_std
    if np.abs(scaled).max() > _MAX_SCALED:
        raise ValueError(
            f"The 'noise_std' parameter of {func} is too small for these releases: "
            f"max |r - mean| / s = {np.abs(scaled).max():.3g} > {_MAX_SCALED:g} would overflow "
            f"the squared norms. Got {noise_std!r} instead; pass noise_std=0 for a noiseless "
            "release."
        )
    return scaled


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


def group_entropy_bits(counts: np.ndarray) -> float:
    r"""Entropy (bits) of a uniform secret observed through its group: groups of ``counts``
    equally likely secrets, :math:`N = \sum_g c_g`.

    .. math:: H = \sum_g \frac{c_g}{N}\log_2\frac{N}{c_g}
              = \log_2 N - \frac1N\sum_g c_g\log_2 c_g

    The second form is exactly :math:`\log_2 N` when every group is a single secret
    (no rounding from summing :math:`N` equal terms), so it never exceeds the ceiling.

    Examples
    --------
    >>> group_entropy_bits(np.array([1, 1, 1, 1]))
    2.0
    >>> group_entropy_bits(np.array([2, 1, 1]))
    1.5
    """
    n = int(counts.sum())
    value = math.log2(n) - float(np.sum(counts * np.log2(counts))) / n
    return min(max(value, 0.0), math.log2(n))
