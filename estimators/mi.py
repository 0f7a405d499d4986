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

from bounds.validation import check_int, check_real
from estimators._arrays import to_numpy

__all__ = [
    "GaussianBatchChannel",
    "correlated_gaussian_pair",
    "correlation_for_mi",
    "gaussian_channel_bound",
    "gaussian_entropy",
    "gaussian_mutual_information",
]


def _logdet_spd(name: str, cov: np.ndarray, func: str) -> float:
    sign, logdet = np.linalg.slogdet(cov)
    eigmin = np.linalg.eigvalsh(cov).min() if cov.size else 0.0
    if sign <= 0 or eigmin <= 0 or not np.allclose(cov, cov.T, rtol=1e-10, atol=1e-12):
        raise ValueError(
            f"The '{name}' parameter of {func} must be a symmetric positive definite matrix. "
            f"Got smallest eigenvalue {eigmin!r} instead."
        )
    return float(logdet)


def _square(name: str, cov, func: str) -> np.ndarray:
    cov = to_numpy(name, cov, func=func, ndim=2)
    if cov.shape[0] != cov.shape[1]:
        raise ValueError(
            f"The '{name}' parameter of {func} must be a square matrix. Got shape {cov.shape}."
        )
    return cov


def gaussian_entropy(cov) -> float:
    r"""Differential entropy of ``N(mu, cov)`` in nats: :math:`\tfrac12\log\det(2\pi e\,\Sigma)`.

    Cover and Thomas (2006), Theorem 8.4.1. ``cov`` must be symmetric positive definite.

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

    ``cov`` must be symmetric positive definite (a singular joint covariance, e.g. ``Y`` a
    deterministic linear function of ``X``, has infinite MI and raises ValueError).

    Examples
    --------
    >>> round(gaussian_mutual_information([[1.0, 0.6], [0.6, 1.0]], 1), 6)  # -log(1 - 0.6^2) / 2
    0.223144
    """
    func = "gaussian_mutual_information"
    cov = _square("cov", cov, func)
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
    from :func:`correlation_for_mi`.

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
    rho = correlation_for_mi(mi, dim)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n_samples, dim))
    y = rho * x + math.sqrt(1.0 - rho**2) * rng.standard_normal((n_samples, dim))
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
    noise_std : float
        ``sigma > 0``; ``sigma -> 0`` is the deterministic-gradient limit with infinite MI.
    seed : int
        Seed of the mixing matrix ``A``.

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
        check_real("noise_std", self.noise_std, func=func, low=0.0, low_inclusive=False)
        rng = np.random.default_rng(self.seed)
        mixing = rng.standard_normal((self.dim_g, self.dim_x)) / math.sqrt(self.dim_x)
        object.__setattr__(self, "mixing", mixing)

    def joint_covariance(self) -> np.ndarray:
        """Covariance of the flattened ``(x_1, ..., x_B, G)``, shape ``(B dim_x + dim_g,) * 2``."""
        b, dx = self.batch_size, self.dim_x
        cross = np.tile(self.mixing / b, (1, b))  # Cov(G, X_B) = [A/B, ..., A/B]
        cov_g = self.mixing @ self.mixing.T / b + self.noise_std**2 * np.eye(self.dim_g)
        return np.block([[np.eye(b * dx), cross.T], [cross, cov_g]])

    def mutual_information(self) -> float:
        """``I(X_B; G)`` in nats (closed form of the class docstring)."""
        gram = self.mixing @ self.mixing.T / (self.batch_size * self.noise_std**2)
        return 0.5 * float(np.linalg.slogdet(np.eye(self.dim_g) + gram)[1])

    def sample(self, n_samples: int, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Draw ``n_samples`` pairs: ``x_batch`` of shape (n, B, dim_x) and ``g`` of (n, dim_g)."""
        n_samples = check_int("n_samples", n_samples, func="GaussianBatchChannel.sample", low=1)
        rng = np.random.default_rng(seed)
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

    with equality when ``S`` is Gaussian. ``signal_cov`` must be symmetric positive
    semi-definite (a sample covariance is fine; the bound is then an estimate).

    Examples
    --------
    >>> gaussian_channel_bound([[3.0]], 1.0) == math.log(2)  # log(1 + 3) / 2, a Gaussian S
    True
    """
    func = "gaussian_channel_bound"
    cov = _square("signal_cov", signal_cov, func)
    noise_std = check_real("noise_std", noise_std, func=func, low=0.0, low_inclusive=False)
    if not np.allclose(cov, cov.T, rtol=1e-10, atol=1e-12):
        raise ValueError(f"The 'signal_cov' parameter of {func} must be symmetric.")
    eigenvalues = np.linalg.eigvalsh(cov)
    if eigenvalues.min() < -1e-10 * max(1.0, eigenvalues.max()):
        raise ValueError(
            f"The 'signal_cov' parameter of {func} must be positive semi-definite. "
            f"Got smallest eigenvalue {eigenvalues.min()!r} instead."
        )
    return 0.5 * float(np.sum(np.log1p(np.clip(eigenvalues, 0.0, None) / noise_std**2)))
