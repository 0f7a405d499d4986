r"""Kraskov-Stoegbauer-Grassberger (KSG) k-nearest-neighbour estimator of I(X; Y).

Kraskov, Stoegbauer and Grassberger, "Estimating mutual information", Phys. Rev. E 69,
066138 (2004), estimator 1 (eq. 8), in nats:

.. math::

    \hat I(X; Y) = \psi(k) + \psi(N) - \frac1N \sum_{i=1}^N
                   \left[\psi(n_x(i) + 1) + \psi(n_y(i) + 1)\right],

where ``eps_i`` is the max-norm distance from ``(x_i, y_i)`` to its k-th nearest neighbour
in the joint space and ``n_x(i)`` counts the points ``j != i`` with
``||x_j - x_i||_inf < eps_i`` (strictly), likewise ``n_y(i)``. Neighbour searches use
``scipy.spatial.cKDTree`` with the Chebyshev norm.

The classical baseline of the package: accurate in low dimension, biased towards 0 when
the MI is large relative to ``log N`` or the dimension is high (every neighbour is then far
away); see ``benchmarks/bench_mi.py``.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree
from scipy.special import digamma

from bounds.validation import check_bool, check_int
from estimators._arrays import to_numpy

__all__ = ["ksg_mutual_information", "paired_samples"]


def paired_samples(x, y, *, func: str, min_samples: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Validate paired samples: first axis = sample, the rest is flattened to features.

    Raises ValueError for non-real data, NaN / inf, a scalar (no sample axis), different
    sample counts, fewer than ``min_samples`` samples, or a variable whose samples are all
    identical (constant: its MI with anything is 0 and every estimator here would divide by
    a zero spread).

    Examples
    --------
    >>> x, y = paired_samples([1.0, 2.0, 3.0], [[1.0, 0.0], [2.0, 1.0], [0.0, 3.0]], func="f")
    >>> x.shape, y.shape
    ((3, 1), (3, 2))
    """
    x = to_numpy("x", x, func=func)
    y = to_numpy("y", y, func=func)
    for name, arr in (("x", x), ("y", y)):
        if arr.ndim == 0:
            raise ValueError(
                f"The '{name}' parameter of {func} must be an array of samples (n, ...). "
                f"Got a scalar instead."
            )
    x = x.reshape(len(x), -1) if x.ndim > 1 else x[:, None]
    y = y.reshape(len(y), -1) if y.ndim > 1 else y[:, None]
    if len(x) != len(y):
        raise ValueError(
            f"The 'x' and 'y' parameters of {func} must have the same number of samples "
            f"(first axis). Got {len(x)} and {len(y)} instead."
        )
    if len(x) < min_samples:
        raise ValueError(
            f"The 'x' and 'y' parameters of {func} must hold at least {min_samples} samples "
            f"(first axis). Got {len(x)} instead."
        )
    for name, arr in (("x", x), ("y", y)):
        if np.all(arr == arr[0]):
            raise ValueError(
                f"The '{name}' parameter of {func} is constant (all samples are identical); "
                "its mutual information is 0 and cannot be estimated."
            )
    return x, y


def _by_max_abs(arr: np.ndarray, axis) -> np.ndarray:
    """``arr`` divided by its largest magnitude along ``axis`` (1 where that is 0)."""
    peak = np.abs(arr).max(axis=axis, keepdims=True)
    return arr / np.where(peak > 0, peak, 1.0)


def _standardize(arr: np.ndarray) -> np.ndarray:
    """Every feature divided by its standard deviation (features with none are kept).

    Division by the largest magnitude first keeps the variance from overflowing (one value
    of 1e308 squared is inf, which used to turn the whole feature into zeros). The mean is
    not subtracted: max-norm neighbour counts are invariant to a shift, and subtracting a
    mean dominated by an outlier would erase the differences between the other points.
    """
    arr = _by_max_abs(arr, axis=0)
    std = arr.std(axis=0)
    return arr / np.where(std > 0, std, 1.0)


def ksg_mutual_information(x, y, *, k: int = 3, standardize: bool = True) -> float:
    """KSG estimate (estimator 1 of Kraskov et al. 2004, eq. 8) of ``I(X; Y)`` in nats.

    Parameters
    ----------
    x, y : array-like or torch.Tensor, shape (N, ...)
        Paired samples of finite real values; axes after the first are flattened into
        features. The estimate is computed on rescaled data (see ``standardize``), so
        magnitudes up to the float64 maximum are fine; the domain is data whose rescaled
        joint samples are distinct (see Raises).
    k : int, default 3
        Number of neighbours, in ``[1, N - 1]`` for ``N`` samples. Kraskov et al.
        recommend 2 to 4.
    standardize : bool, default True
        Scale every feature to unit variance first. MI is invariant to this, but the
        max-norm mixes the scales of ``x`` and ``y``, so the finite-sample bias is not.
        With False, ``x`` and ``y`` are only divided by one common factor (their largest
        magnitude), which leaves every neighbour count, so the estimate, unchanged.

    Returns
    -------
    float
        The estimate, finite, clipped at 0 from below (the estimator can dip slightly
        negative for independent variables).

    Raises
    ------
    ValueError
        NaN / inf, different sample counts, ``N < k + 1``, constant ``x`` or ``y``, or
        duplicated joint samples (``eps_i = 0``; add a tiny jitter to discrete data). The
        duplicates are those of the rescaled data: points more than ~1e300 times smaller
        than an outlier of the same variable underflow to one value.

    Examples
    --------
    >>> from estimators.mi import correlated_gaussian_pair
    >>> x, y = correlated_gaussian_pair(2000, 1, 0.5, seed=0)  # I(X; Y) = 0.5 nats
    >>> abs(ksg_mutual_information(x, y) - 0.5) < 0.05
    True
    """
    func = "ksg_mutual_information"
    k = check_int("k", k, func=func, low=1)
    standardize = check_bool("standardize", standardize, func=func)
    x, y = paired_samples(x, y, func=func)
    n = len(x)
    if k > n - 1:
        raise ValueError(
            f"The 'k' parameter of {func} must be in [1, N - 1] = [1, {n - 1}] for N = {n} "
            f"samples (KSG needs at least k + 1 = {k + 1} samples). Got {k} instead."
        )
    if standardize:
        x, y = _standardize(x), _standardize(y)
    else:  # one common factor: the max-norm distances keep their order, nothing overflows
        joint = _by_max_abs(np.hstack([x, y]), axis=None)
        x, y = joint[:, : x.shape[1]], joint[:, x.shape[1] :]
    joint = np.hstack([x, y])
    # k + 1 neighbours because the nearest one is the point itself
    eps = cKDTree(joint).query(joint, k=k + 1, p=np.inf)[0][:, -1]
    if np.any(eps == 0):
        raise ValueError(
            f"The 'x' and 'y' parameters of {func} must be continuous: "
            f"{int(np.sum(eps == 0))} joint samples (x, y) have k={k} or more exact "
            "duplicates after rescaling (discrete data, or points so much smaller than an "
            "outlier that they round together); add a tiny jitter."
        )
    radius = np.nextafter(eps, 0.0)  # strict inequality ||x_j - x_i|| < eps_i
    n_x = cKDTree(x).query_ball_point(x, radius, p=np.inf, return_length=True) - 1
    n_y = cKDTree(y).query_ball_point(y, radius, p=np.inf, return_length=True) - 1
    estimate = digamma(k) + digamma(n) - np.mean(digamma(n_x + 1) + digamma(n_y + 1))
    return max(float(estimate), 0.0)
