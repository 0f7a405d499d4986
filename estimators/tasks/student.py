r"""Multivariate Student-t tasks: heavy tails and a dependence that correlation misses.

``Z = (X, Y) = W / sqrt(U / nu)`` with ``W ~ N(0, Sigma)`` (``Sigma`` of side
``d = d_x + d_y``, the *scale* matrix) and an independent ``U ~ chi^2_nu``: the
multivariate t distribution with ``nu`` degrees of freedom. ``X`` and ``Y`` share the
random scale ``U``, so they are dependent even when ``Sigma`` is the identity (a large
``|X|`` announces a small ``U``, hence a large ``|Y|``).

Truth. The marginals of a multivariate t are multivariate t with the same ``nu`` and the
diagonal blocks of ``Sigma`` (Kotz and Nadarajah, *Multivariate t Distributions and Their
Applications*, 2004, sec. 1.10). The log density is

.. math:: \log p(z) = \log\Gamma(\tfrac{\nu+d}2) - \log\Gamma(\tfrac\nu2)
          - \tfrac d2\log(\nu\pi) - \tfrac12\log\det\Sigma
          - \tfrac{\nu+d}2 \log\left(1 + \tfrac{z^\top\Sigma^{-1}z}{\nu}\right),

and ``1 + z^T Sigma^-1 z / nu = (U + V) / U`` with ``V = W^T Sigma^-1 W ~ chi^2_d``
independent of ``U``; with ``E log chi^2_k = psi(k/2) + log 2`` and ``U + V ~ chi^2_{nu+d}``,
``E log(1 + Q / nu) = psi((nu+d)/2) - psi(nu/2)``, so the entropy is

.. math:: h_d = \tfrac12\log\det\Sigma + \tfrac d2\log(\nu\pi) + \log\Gamma(\tfrac\nu2)
          - \log\Gamma(\tfrac{\nu+d}2) + \tfrac{\nu+d}2\left[\psi(\tfrac{\nu+d}2)
          - \psi(\tfrac\nu2)\right]

(the formula of Arellano-Valle, Contreras-Reyes and Genton, Scand. J. Stat. 40, 2013,
sec. 3). In ``I = h_{d_x} + h_{d_y} - h_{d}`` the ``log(nu pi)`` terms cancel and the
``log det`` terms give the Gaussian MI of ``Sigma``:

.. math:: I(X; Y) = I_{\text{Gauss}}(\Sigma) + c(\nu, d_x, d_y), \quad
          c = \log\Gamma(\tfrac\nu2) + g(d_x) + g(d_y) - g(d_x + d_y),
          \quad g(k) = -\log\Gamma(\tfrac{\nu+k}2)
          + \tfrac{\nu+k}2\left[\psi(\tfrac{\nu+k}2) - \psi(\tfrac\nu2)\right].

``c > 0`` (the shared scale) and ``c -> 0`` as ``nu -> infinity`` (the normal limit). It is
the formula behind the Student-t tasks of Czyz et al., "Beyond normal", NeurIPS 2023
(``c(1, 1, 1) = 0.2242`` nats, their ``student-identity-1-1-1``). The tests check it
against a Monte Carlo average of ``log p(x, y) - log p(x) - log p(y)`` with the densities
of ``scipy.stats.multivariate_t``.
"""

from __future__ import annotations

from functools import partial

import numpy as np
from scipy.special import digamma, gammaln

from pruneleak.bounds.validation import check_int, check_real
from pruneleak.estimators.mi import gaussian_mutual_information
from pruneleak.estimators.tasks.gaussian import paired_covariance, paired_mutual_information
from pruneleak.estimators.tasks.task import MITask

__all__ = [
    "sample_multivariate_t",
    "student_t_correction",
    "student_t_mutual_information",
    "student_task",
]


def _check_dof(dof, func: str) -> float:
    return check_real("dof", dof, func=func, low=0.0, low_inclusive=False)


def student_t_correction(dof: float, dim_x: int, dim_y: int) -> float:
    """``c(nu, d_x, d_y)`` in nats: the MI of a multivariate t beyond that of its scale matrix.

    Depends only on the degrees of freedom ``dof > 0`` and the dimensions (module docstring).

    Examples
    --------
    >>> round(student_t_correction(1, 1, 1), 4)  # Czyz et al.'s student-identity-1-1-1
    0.2242
    """
    func = "student_t_correction"
    nu = _check_dof(dof, func)
    dim_x = check_int("dim_x", dim_x, func=func, low=1)
    dim_y = check_int("dim_y", dim_y, func=func, low=1)

    def g(k: int) -> float:
        half = 0.5 * (nu + k)
        return -gammaln(half) + half * (digamma(half) - digamma(0.5 * nu))

    return float(gammaln(0.5 * nu) + g(dim_x) + g(dim_y) - g(dim_x + dim_y))


def student_t_mutual_information(scale, dim_x: int, dof: float) -> float:
    """``I(X; Y)`` in nats of a multivariate t with scale matrix ``scale`` and ``dof`` degrees.

    ``X`` is the first ``dim_x`` coordinates. ``I = I_Gauss(scale) + c(dof, d_x, d_y)``.

    Examples
    --------
    >>> round(student_t_mutual_information(np.eye(2), 1, 1), 4)
    0.2242
    """
    func = "student_t_mutual_information"
    nu = _check_dof(dof, func)
    gauss = gaussian_mutual_information(scale, dim_x)
    side = np.asarray(scale).shape[0]
    return gauss + student_t_correction(nu, dim_x, side - dim_x)


def sample_multivariate_t(
    n_samples: int, seed: int, *, cholesky: np.ndarray, dof: float, dim_x: int
) -> tuple[np.ndarray, np.ndarray]:
    """``W / sqrt(U / dof)``, ``W ~ N(0, L L^T)``, ``U ~ chi^2_dof``, split at ``dim_x``."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((n_samples, cholesky.shape[0])) @ cholesky.T
    u = rng.chisquare(dof, size=n_samples)
    z = w / np.sqrt(u / dof)[:, None]
    return z[:, :dim_x], z[:, dim_x:]


def student_task(dim: int, dof: float, correlation: float = 0.0) -> MITask:
    """``X, Y`` in ``R^dim`` jointly t with ``dof`` degrees; scale ``corr(x_i, y_i) = rho``.

    The scale matrix is the identity with ``correlation`` between ``x_i`` and ``y_i`` for
    every ``i`` (``0``: the "identity" tasks of Czyz et al.). The name is
    ``student-{dim}x{dim}-dof{dof}`` (``student-1v1-dof{dof}`` in one dimension), with
    ``-corr{rho}`` appended when ``rho != 0``.

    Examples
    --------
    >>> task = student_task(2, 2, correlation=0.5)
    >>> task.name, round(task.mutual_information, 4)
    ('student-2x2-dof2-corr0.5', 0.4808)
    """
    func = "student_task"
    dim = check_int("dim", dim, func=func, low=1)
    nu = _check_dof(dof, func)
    scale = paired_covariance(dim, dim, dim, correlation)
    truth = paired_mutual_information(dim, correlation) + student_t_correction(nu, dim, dim)
    shape = "1v1" if dim == 1 else f"{dim}x{dim}"
    name = f"student-{shape}-dof{nu:g}" + (f"-corr{correlation:g}" if correlation else "")
    sampler = partial(sample_multivariate_t, cholesky=np.linalg.cholesky(scale), dof=nu, dim_x=dim)
    return MITask(
        name=name,
        family="student",
        x_shape=(dim,),
        y_shape=(dim,),
        mutual_information=truth,
        truth_stderr=0.0,
        sampler=sampler,
        description=(
            f"multivariate t, {nu:g} degrees of freedom, scale identity with "
            f"corr(x_i, y_i) = {correlation:g}; closed form I_Gauss(scale) + c(nu, d_x, d_y)"
        ),
    )
