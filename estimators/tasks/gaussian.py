r"""Multivariate normal tasks: ``(X, Y)`` jointly Gaussian with a covariance of known MI.

For a joint covariance :math:`\Sigma` with blocks :math:`\Sigma_{XX}, \Sigma_{YY}` (Cover
and Thomas 2006, eq. 8.56; :func:`estimators.mi.gaussian_mutual_information`),

.. math:: I(X; Y) = \tfrac12 \log\frac{\det\Sigma_{XX}\,\det\Sigma_{YY}}{\det\Sigma}.

Three structures, after the normal tasks of Czyz et al., "Beyond normal", NeurIPS 2023
(arXiv:2306.11078), each with its determinant in closed form (no numerical linear algebra
in the truth):

- *equicorrelated* ("dense"): unit variances and the same correlation ``a`` between any two
  of the ``dim_x + dim_y`` coordinates. A ``k x k`` block ``(1 - a) I + a 1 1^T`` has
  eigenvalues ``1 - a`` (``k - 1`` times) and ``1 + (k - 1) a``, so

  .. math:: I = \tfrac12\left[-\log(1 - a) + \log(1 + (d_x - 1) a) + \log(1 + (d_y - 1) a)
            - \log(1 + (d_x + d_y - 1) a)\right];

- *paired* ("sparse", "2-pair"): independent standard coordinates except
  ``corr(x_i, y_i) = rho`` for the first ``n_pairs`` indices:
  :math:`I = -\tfrac{n_{pairs}}2 \log(1 - \rho^2)` (independent pairs add);
- *1v1*: the paired structure with one coordinate on each side.

Every coordinate has unit variance, so the transformed tasks
(:mod:`estimators.tasks.transformed`) can map these marginals through the normal CDF.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from pruneleak.bounds.validation import check_int, check_real
from pruneleak.estimators.tasks.task import MITask, check_correlation

__all__ = [
    "dense_normal_task",
    "equicorrelated_covariance",
    "equicorrelated_mutual_information",
    "normal_1v1_task",
    "paired_covariance",
    "paired_mutual_information",
    "sample_multinormal",
    "sparse_normal_task",
]


def _equicorrelation(dim_x, dim_y, correlation, func: str) -> tuple[int, int, float]:
    dim_x = check_int("dim_x", dim_x, func=func, low=1)
    dim_y = check_int("dim_y", dim_y, func=func, low=1)
    # positive definite iff -1 / (D - 1) < a < 1 (the two eigenvalues above are > 0)
    low = -1.0 / (dim_x + dim_y - 1)
    correlation = check_real(
        "correlation",
        correlation,
        func=func,
        low=low,
        high=1.0,
        low_inclusive=False,
        high_inclusive=False,
    )
    return dim_x, dim_y, correlation


def equicorrelated_covariance(dim_x: int, dim_y: int, correlation: float) -> np.ndarray:
    """Joint covariance ``(1 - a) I + a 1 1^T`` of side ``dim_x + dim_y`` (``a = correlation``).

    ``correlation`` must lie in ``(-1 / (dim_x + dim_y - 1), 1)`` (positive definite).

    Examples
    --------
    >>> equicorrelated_covariance(1, 1, 0.5)
    array([[1. , 0.5],
           [0.5, 1. ]])
    """
    dim_x, dim_y, a = _equicorrelation(dim_x, dim_y, correlation, "equicorrelated_covariance")
    side = dim_x + dim_y
    return (1.0 - a) * np.eye(side) + a * np.ones((side, side))


def equicorrelated_mutual_information(dim_x: int, dim_y: int, correlation: float) -> float:
    """``I(X; Y)`` in nats for :func:`equicorrelated_covariance` (module docstring formula).

    Examples
    --------
    >>> round(equicorrelated_mutual_information(1, 1, 0.6), 6)  # -log(1 - 0.36) / 2
    0.223144
    """
    dim_x, dim_y, a = _equicorrelation(
        dim_x, dim_y, correlation, "equicorrelated_mutual_information"
    )
    return 0.5 * (
        -math.log1p(-a)
        + math.log1p((dim_x - 1) * a)
        + math.log1p((dim_y - 1) * a)
        - math.log1p((dim_x + dim_y - 1) * a)
    )


def _pairs(dim_x, dim_y, n_pairs, correlation, func: str) -> tuple[int, int, int, float]:
    dim_x = check_int("dim_x", dim_x, func=func, low=1)
    dim_y = check_int("dim_y", dim_y, func=func, low=1)
    n_pairs = check_int("n_pairs", n_pairs, func=func, low=0, high=min(dim_x, dim_y))
    correlation = check_correlation(correlation, func=func)
    return dim_x, dim_y, n_pairs, correlation


def paired_covariance(dim_x: int, dim_y: int, n_pairs: int, correlation: float) -> np.ndarray:
    """Identity joint covariance with ``corr(x_i, y_i) = correlation`` for ``i < n_pairs``.

    Examples
    --------
    >>> paired_covariance(2, 1, 1, 0.5)
    array([[1. , 0. , 0.5],
           [0. , 1. , 0. ],
           [0.5, 0. , 1. ]])
    """
    dim_x, dim_y, n_pairs, rho = _pairs(dim_x, dim_y, n_pairs, correlation, "paired_covariance")
    cov = np.eye(dim_x + dim_y)
    index = np.arange(n_pairs)
    cov[index, dim_x + index] = cov[dim_x + index, index] = rho
    return cov


def paired_mutual_information(n_pairs: int, correlation: float) -> float:
    """``-(n_pairs / 2) log(1 - rho^2)`` nats: the MI of :func:`paired_covariance`.

    Examples
    --------
    >>> round(paired_mutual_information(1, 0.75), 6)
    0.413339
    """
    func = "paired_mutual_information"
    n_pairs = check_int("n_pairs", n_pairs, func=func, low=0)
    rho = check_correlation(correlation, func=func)
    return -0.5 * n_pairs * math.log1p(-(rho**2))


def sample_multinormal(
    n_samples: int, seed: int, *, cholesky: np.ndarray, dim_x: int
) -> tuple[np.ndarray, np.ndarray]:
    """``n_samples`` draws of ``N(0, L L^T)`` split into ``x`` (first ``dim_x``) and ``y``."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n_samples, cholesky.shape[0])) @ cholesky.T
    return z[:, :dim_x], z[:, dim_x:]


def _task(name: str, cov: np.ndarray, dim_x: int, truth: float, description: str) -> MITask:
    sampler = partial(sample_multinormal, cholesky=np.linalg.cholesky(cov), dim_x=dim_x)
    return MITask(
        name=name,
        family="normal",
        x_shape=(dim_x,),
        y_shape=(cov.shape[0] - dim_x,),
        mutual_information=truth,
        truth_stderr=0.0,
        sampler=sampler,
        description=description,
    )


def normal_1v1_task(correlation: float = 0.75) -> MITask:
    """``X, Y`` standard normal scalars with correlation ``rho``: ``I = -log(1 - rho^2) / 2``.

    Examples
    --------
    >>> round(normal_1v1_task().mutual_information, 4)
    0.4133
    """
    cov = paired_covariance(1, 1, 1, correlation)
    return _task(
        "normal-1v1",
        cov,
        1,
        paired_mutual_information(1, correlation),
        f"bivariate normal, correlation {correlation:g}; closed form -log(1 - rho^2) / 2",
    )


def dense_normal_task(dim: int, correlation: float = 0.5) -> MITask:
    """``X, Y`` in ``R^dim``, all ``2 dim`` coordinates pairwise correlated ``correlation``.

    Examples
    --------
    >>> task = dense_normal_task(5)
    >>> task.name, round(task.mutual_information, 4)
    ('normal-dense-5x5', 0.5928)
    """
    cov = equicorrelated_covariance(dim, dim, correlation)
    return _task(
        f"normal-dense-{dim}x{dim}",
        cov,
        dim,
        equicorrelated_mutual_information(dim, dim, correlation),
        f"normal, every pair of the {2 * dim} coordinates correlated {correlation:g}; "
        "closed form (equicorrelated determinants)",
    )


def sparse_normal_task(dim: int, n_pairs: int = 2, correlation: float = 0.8) -> MITask:
    """``X, Y`` in ``R^dim``, only ``(x_i, y_i)``, ``i < n_pairs``, correlated ``correlation``.

    Examples
    --------
    >>> task = sparse_normal_task(25)
    >>> task.name, round(task.mutual_information, 4)
    ('normal-2pair-25x25', 1.0217)
    """
    cov = paired_covariance(dim, dim, n_pairs, correlation)
    return _task(
        f"normal-{n_pairs}pair-{dim}x{dim}",
        cov,
        dim,
        paired_mutual_information(n_pairs, correlation),
        f"normal, {n_pairs} of {dim} coordinate pairs correlated {correlation:g}, the rest "
        "independent; closed form -(pairs / 2) log(1 - rho^2)",
    )
