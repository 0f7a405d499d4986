r"""Closed-form entropies and mutual information of Gaussian vectors: the ground truth.

Every neural or nearest-neighbour MI estimator in this package is checked against these
formulas (Cover and Thomas, *Elements of Information Theory*, 2nd ed., Theorem 8.4.1 and
eq. 8.56). All values are in nats.

.. math::

    h(Z) = \tfrac12 \log\det(2\pi e\,\Sigma), \qquad
    I(X; Y) = \tfrac12 \log\frac{\det\Sigma_{XX}\,\det\Sigma_{YY}}{\det\Sigma}.

Two generators of test problems with a known answer are provided:

- :func:`correlated_gaussian_pair`: ``X, Y`` in ``R^d`` with coordinate-wise correlation
  ``rho``, so that ``I(X; Y) = -(d/2) log(1 - rho^2)`` is any chosen value.
- :class:`GaussianBatchChannel`: a linear-Gaussian stand-in for a client's
  ``(X_B, G)``: ``B`` i.i.d. inputs ``x_m ~ N(0, I)`` and the "gradient"
  ``G = (1/B) sum_m A x_m + sigma * eps``. Its ``I(X_B; G)`` is finite and known, which
  H-MINE's batch structure can be tested on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from pruneleak.bounds.validation import check_int, check_real
from pruneleak.estimators._arrays import check_seed, to_numpy

__all__ = [
    "GaussianBatchChannel",
    "correlated_gaussian_pair",
    "correlation_for_mi",
    "gaussian_channel_bound",
    "gaussian_entropy",
    "gaussian_mutual_information",
]

#: Largest array (entries) that GaussianBatchChannel builds: 2**28 float64 = 2 GiB. Larger
#: requests are refused before allocation instead of failing inside numpy or the kernel.
MAX_ENTRIES = 2**28
#: Largest dim-normalised MI of correlated_gaussian_pair: the noise std exp(-mi/dim) is then
#: 9.4e-14, about 400 float64 ulps of a unit value; beyond it rounding makes Y a
#: deterministic function of X and the samples no longer carry the requested MI.
MAX_MI_PER_DIM = 30.0


def _scaled(name: str, cov: np.ndarray, func: str) -> tuple[np.ndarray, float]:
    """``cov / s`` with ``s = max |cov|`` (so entries are at most 1) and ``s``; symmetric only.

    Scaling first makes the symmetry check relative (an absolute tolerance would accept
    any matrix of tiny entries) and keeps products and eigenvalues from overflowing.
    """
    scale = float(np.abs(cov).max())
    scaled = cov / scale if scale > 0 else cov
    if not np.allclose(scaled, scaled.T, rtol=1e-10, atol=1e-12):
        raise ValueError(
            f"The '{name}' parameter of {func} must be symmetric. Got largest asymmetry "
            f"|cov - cov.T| = {float(np.abs(cov - cov.T).max())!r} instead."
        )
    return scaled, scale


def _logdet_spd(name: str, cov: np.ndarray, func: str) -> float:
    """``log det cov`` for a symmetric positive definite ``cov``, else ValueError.

    Evaluated as ``d log s + log det(cov / s)``, finite for any finite SPD matrix.
    """
    scaled, scale = _scaled(name, cov, func)
    eigmin = float(np.linalg.eigvalsh(scaled).min()) * scale
    sign, logdet = np.linalg.slogdet(scaled)
    if sign <= 0 or eigmin <= 0:
        raise ValueError(
            f"The '{name}' parameter of {func} must be a symmetric positive definite matrix. "
            f"Got smallest eigenvalue {eigmin!r} instead."
        )
    return float(logdet) + cov.shape[0] * math.log(scale)


def _square(name: str, cov, func: str) -> np.ndarray:
    cov = to_numpy(name, cov, func=func, ndim=2)
    if cov.shape[0] != cov.shape[1]:
        raise ValueError(
            f"The '{name}' parameter of {func} must be a square matrix. Got shape {cov.shape}."
        )
    return cov


def _check_entries(what: str, shape: tuple[int, ...], func: str) -> None:
    entries = math.prod(shape)
    if entries > MAX_ENTRIES:
        raise ValueError(
            f"{func} would allocate {what} of shape {shape} ({entries * 8 / 2**30:.3g} GiB of "
            f"float64), more than the limit of {MAX_ENTRIES} entries (2 GiB); use smaller "
            "dimensions."
        )


def gaussian_entropy(cov) -> float:
    r"""Differential entropy of ``N(mu, cov)`` in nats: :math:`\tfrac12\log\det(2\pi e\,\Sigma)`.

    Cover and Thomas (2006), Theorem 8.4.1. Domain: any finite symmetric positive
    definite matrix (else ValueError); the result is finite (log-determinant of the
    rescaled matrix).

    Examples
    --------
    >>> round(gaussian_entropy([[1.0]]), 6)  # 0.5 * log(2 pi e)
    1.418939
    """
    cov = _square("cov", cov, "gaussian_entropy")
    logdet = _logdet_spd("cov", cov, "gaussian_entropy")
    return 0.5 * (cov.shape[0] * math.log(2.0 * math.pi * math.e) + logdet)


def gaussian_mutual_information(cov, dim_x: int) -> float:
    r"""``I(X; Y)`` in nats of jointly Gaussian ``(X, Y)`` with joint covariance ``cov``.

    ``X`` is the first ``dim_x`` coordinates and ``Y`` the rest:

    .. math:: I(X; Y) = \tfrac12\left(\log\det\Sigma_{XX} + \log\det\Sigma_{YY}
              - \log\det\Sigma\right).

    ``cov`` must be a finite symmetric positive definite matrix of side at least 2 and
    ``dim_x`` in ``[1, side - 1]`` (a singular joint covariance, e.g. ``Y`` a deterministic
    linear function of ``X``, has infinite MI and raises ValueError). The result is finite
    and non-negative up to rounding.

    Examples
    --------
    >>> round(gaussian_mutual_information([[1.0, 0.6], [0.6, 1.0]], 1), 6)  # -log(1 - 0.6^2) / 2
    0.223144
    """
    func = "gaussian_mutual_information"
    cov = _square("cov", cov, func)
    if cov.shape[0] < 2:
        raise ValueError(
            f"The 'cov' parameter of {func} must be the joint covariance of X and Y, at least "
            f"2 x 2. Got shape {cov.shape} instead."
        )
    dim_x = check_int("dim_x", dim_x, func=func, low=1, high=cov.shape[0] - 1)
    joint = _logdet_spd("cov", cov, func)
    return 0.5 * (
        _logdet_spd("cov[:dim_x, :dim_x]", cov[:dim_x, :dim_x], func)
        + _logdet_spd("cov[dim_x:, dim_x:]", cov[dim_x:, dim_x:], func)
        - joint
    )


def correlation_for_mi(mi: float, dim: int) -> float:
    """Coordinate-wise correlation ``rho`` giving ``I(X; Y) = mi`` nats for ``X, Y`` in ``R^dim``.

    Inverts ``I = -(dim / 2) log(1 - rho^2)``: ``rho = sqrt(-expm1(-2 mi / dim))``.
    Domain: ``mi >= 0`` finite and ``dim >= 1``; the result lies in ``[0, 1]`` and is the
    nearest float, which is 1.0 once ``mi / dim`` exceeds about 18.4 nats (``1 - rho^2``
    below half a float64 ulp of 1).

    Examples
    --------
    >>> round(correlation_for_mi(-0.5 * math.log(0.75), 1), 12)  # rho^2 = 1/4
    0.5
    """
    func = "correlation_for_mi"
    mi = check_real("mi", mi, func=func, low=0.0)
    dim = check_int("dim", dim, func=func, low=1)
    return math.sqrt(-math.expm1(-2.0 * mi / dim))


def correlated_gaussian_pair(
    n_samples: int, dim: int, mi: float, *, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """``n_samples`` draws of ``X, Y`` in ``R^dim`` with ``I(X; Y) = mi`` nats exactly.

    ``X ~ N(0, I)`` and ``Y = rho X + sqrt(1 - rho^2) eps`` coordinate-wise, with ``rho``
    from :func:`correlation_for_mi` and the noise std ``sqrt(1 - rho^2) = exp(-mi / dim)``
    computed directly (not from a rounded ``rho``). Domain: ``n_samples >= 1``,
    ``dim >= 1``, ``0 <= mi <= 30 dim`` (:data:`MAX_MI_PER_DIM`: beyond it float64 rounding
    makes ``Y`` a deterministic function of ``X``), ``seed`` in [0, 2**63 - 1].

    Returns
    -------
    (x, y) : two float64 ndarrays of shape (n_samples, dim).

    Examples
    --------
    >>> x, y = correlated_gaussian_pair(5, 3, 0.1)
    >>> x.shape, y.shape
    ((5, 3), (5, 3))
    """
    func = "correlated_gaussian_pair"
    n_samples = check_int("n_samples", n_samples, func=func, low=1)
    dim = check_int("dim", dim, func=func, low=1)
    mi = check_real("mi", mi, func=func, low=0.0, high=MAX_MI_PER_DIM * dim)
    rng = np.random.default_rng(check_seed(seed, func=func))
    _check_entries("samples", (n_samples, dim), func)
    rho = correlation_for_mi(mi, dim)
    x = rng.standard_normal((n_samples, dim))
    y = rho * x + math.exp(-mi / dim) * rng.standard_normal((n_samples, dim))
    return x, y


@dataclass(frozen=True)
class GaussianBatchChannel:
    r"""Linear-Gaussian model of a batch and its gradient, with known ``I(X_B; G)``.

    ``B`` inputs ``x_m ~ N(0, I_{dim_x})`` i.i.d. and
    ``G = (1/B) sum_m A x_m + noise_std * eps`` with ``eps ~ N(0, I_{dim_g})`` and a fixed
    ``A`` (``dim_g x dim_x``, i.i.d. ``N(0, 1/dim_x)`` entries drawn from ``seed``). As for a
    gradient averaged over a batch, each sample's share of the signal shrinks as ``1/B``:

    .. math:: I(X_B; G) = \tfrac12 \log\det\left(I + \frac{A A^\top}{B\,\sigma^2}\right).

    Attributes
    ----------
    batch_size, dim_x, dim_g : int
        At least 1; the arrays built (``A``, the joint covariance, samples) are limited to
        :data:`MAX_ENTRIES` entries and larger requests raise ValueError.
    noise_std : float
        ``sigma`` in ``(0, 1e150]`` (the joint covariance holds ``sigma^2``, which must be
        a finite float); ``sigma -> 0`` is the deterministic-gradient limit with infinite
        MI. :meth:`mutual_information` is finite on the whole domain (log space).
    seed : int
        Seed of the mixing matrix ``A``, in [0, 2**63 - 1].

    Examples
    --------
    >>> channel = GaussianBatchChannel(batch_size=2, dim_x=3, dim_g=2, noise_std=0.5)
    >>> joint = channel.joint_covariance()  # (x_1, x_2, G): 2 * 3 + 2 coordinates
    >>> joint.shape
    (8, 8)
    >>> math.isclose(channel.mutual_information(), gaussian_mutual_information(joint, 6))
    True
    >>> x_batch, g = channel.sample(5)
    >>> x_batch.shape, g.shape
    ((5, 2, 3), (5, 2))
    """

    batch_size: int
    dim_x: int
    dim_g: int
    noise_std: float
    seed: int = 0
    mixing: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        func = "GaussianBatchChannel"
        check_int("batch_size", self.batch_size, func=func, low=1)
        check_int("dim_x", self.dim_x, func=func, low=1)
        check_int("dim_g", self.dim_g, func=func, low=1)
        check_real("noise_std", self.noise_std, func=func, low=0.0, low_inclusive=False, high=1e150)
        rng = np.random.default_rng(check_seed(self.seed, func=func))
        _check_entries("the mixing matrix", (self.dim_g, self.dim_x), func)
        mixing = rng.standard_normal((self.dim_g, self.dim_x)) / math.sqrt(self.dim_x)
        object.__setattr__(self, "mixing", mixing)

    def joint_covariance(self) -> np.ndarray:
        """Covariance of the flattened ``(x_1, ..., x_B, G)``, shape ``(B dim_x + dim_g,) * 2``."""
        b, dx = self.batch_size, self.dim_x
        side = b * dx + self.dim_g
        _check_entries(
            "the joint covariance", (side, side), "GaussianBatchChannel.joint_covariance"
        )
        cross = np.tile(self.mixing / b, (1, b))  # Cov(G, X_B) = [A/B, ..., A/B]
        cov_g = self.mixing @ self.mixing.T / b + self.noise_std**2 * np.eye(self.dim_g)
        return np.block([[np.eye(b * dx), cross.T], [cross, cov_g]])

    def mutual_information(self) -> float:
        """``I(X_B; G)`` in nats (closed form of the class docstring).

        With ``s_i`` the singular values of ``A``, ``log det(I + A A^T / (B sigma^2)) =
        sum_i log(1 + s_i^2 / (B sigma^2))``, each term evaluated as
        ``logaddexp(0, 2 log s_i - log B - 2 log sigma)`` so that a tiny ``sigma`` gives a
        large finite value instead of ``1 / 0``.
        """
        singular = np.linalg.svd(self.mixing, compute_uv=False)
        singular = singular[singular > 0]
        log_ratio = (
            2.0 * np.log(singular) - math.log(self.batch_size) - 2.0 * math.log(self.noise_std)
        )
        return 0.5 * float(np.sum(np.logaddexp(0.0, log_ratio)))

    def sample(self, n_samples: int, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Draw ``n_samples`` pairs: ``x_batch`` of shape (n, B, dim_x) and ``g`` of (n, dim_g)."""
        func = "GaussianBatchChannel.sample"
        n_samples = check_int("n_samples", n_samples, func=func, low=1)
        rng = np.random.default_rng(check_seed(seed, func=func))
        _check_entries("samples", (n_samples, self.batch_size, self.dim_x), func)
        x = rng.standard_normal((n_samples, self.batch_size, self.dim_x))
        g = x.mean(axis=1) @ self.mixing.T + self.noise_std * rng.standard_normal(
            (n_samples, self.dim_g)
        )
        return x, g


def gaussian_channel_bound(signal_cov, noise_std: float) -> float:
    r"""Upper bound in nats on ``I(X; S + sigma eps)`` for any signal ``S = f(X)``.

    With ``eps ~ N(0, I)`` independent of ``X``, ``I(X; S + sigma eps) = h(S + sigma eps)
    - h(sigma eps)``, and the Gaussian of the same covariance maximises the first term
    (Cover and Thomas 2006, Theorem 8.6.5), so

    .. math:: I(X; S + \sigma\varepsilon) \le \tfrac12 \log\det\left(I +
              \operatorname{Cov}(S) / \sigma^2\right),

    with equality when ``S`` is Gaussian. ``signal_cov`` must be a finite symmetric
    positive semi-definite matrix (a sample covariance is fine; the bound is then an
    estimate; eigenvalues down to ``-1e-10`` times the largest count as rounding and
    contribute 0) and ``noise_std`` a finite float > 0. The result is finite and
    non-negative: each term ``log1p(lambda / sigma^2)`` is evaluated as
    ``logaddexp(0, log lambda - 2 log sigma)`` on the rescaled matrix, so neither a tiny
    ``sigma`` nor huge entries overflow.

    Examples
    --------
    >>> math.isclose(gaussian_channel_bound([[3.0]], 1.0), math.log(2))  # log(1 + 3) / 2
    True
    """
    func = "gaussian_channel_bound"
    cov = _square("signal_cov", signal_cov, func)
    noise_std = check_real("noise_std", noise_std, func=func, low=0.0, low_inclusive=False)
    scaled, scale = _scaled("signal_cov", cov, func)
    if scale == 0.0:  # no signal
        return 0.0
    eigenvalues = np.linalg.eigvalsh(scaled)
    if eigenvalues.min() < -1e-10 * eigenvalues.max():
        raise ValueError(
            f"The 'signal_cov' parameter of {func} must be positive semi-definite. "
            f"Got smallest eigenvalue {float(eigenvalues.min()) * scale!r} instead."
        )
    positive = eigenvalues[eigenvalues > 0]
    log_ratio = np.log(positive) + math.log(scale) - 2.0 * math.log(noise_std)
    return 0.5 * float(np.sum(np.logaddexp(0.0, log_ratio)))
