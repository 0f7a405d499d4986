"""Renyi DP of single mechanisms: Gaussian, Laplace and the Poisson-sampled Gaussian."""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate, special

from bounds._vector import as_output
from bounds.accounting._common import _noise, _orders
from bounds.validation import check_real

# Fractional-order series (Mironov et al. 2019, Sec. 3.3): _SERIES_TERMS terms per side;
# an order whose last term is not below exp(-_SERIES_LOG_TOL) times the total goes to the
# trapezoidal rule. The tail alternates in sign, so its sum is below the last term.
_SERIES_LOG_TOL = 36.0
_SERIES_TERMS = 64


def rdp_gaussian(orders, noise_multiplier):
    r"""RDP of the Gaussian mechanism: :math:`\alpha/(2\sigma^2)` nats (Mironov 2017, Prop. 7).

    Examples
    --------
    >>> rdp_gaussian(2.0, 1.0)  # 2 / (2 * 1^2)
    1.0
    """
    func = "rdp_gaussian"
    orders = _orders(orders, func)
    sigma = _noise("noise_multiplier", noise_multiplier, func)
    return as_output(orders / (2 * sigma**2))


def rdp_laplace(orders, noise_multiplier):
    r"""Exact RDP of the Laplace mechanism with scale :math:`b` = ``noise_multiplier`` (nats).

    Mironov 2017 (arXiv 1702.07476), Prop. 6, for sensitivity 1:

    .. math:: D_\alpha = \frac{1}{\alpha-1}\log\Big(\frac{\alpha}{2\alpha-1}e^{(\alpha-1)/b}
              + \frac{\alpha-1}{2\alpha-1}e^{-\alpha/b}\Big),

    evaluated with ``logaddexp``. It tends to :math:`1/b` (the pure-DP epsilon) as
    :math:`\alpha\to\infty` and is at most :math:`\alpha/(2b^2)` (zCDP, Lemma 1 of Fed-LTP).

    Examples
    --------
    >>> round(rdp_laplace(1e6, 1.0), 4)  # tends to the pure-DP epsilon 1/b
    1.0
    >>> rdp_laplace(2.0, 1.0) <= 2.0 / 2  # below the zCDP line alpha / (2 b^2)
    True
    """
    func = "rdp_laplace"
    a = _orders(orders, func)
    b = _noise("noise_multiplier", noise_multiplier, func)
    log_mix = np.logaddexp(
        np.log(a / (2 * a - 1)) + (a - 1) / b, np.log((a - 1) / (2 * a - 1)) - a / b
    )
    return as_output(log_mix / (a - 1))


def _log_a_int(alphas: np.ndarray, q: float, sigma: float) -> np.ndarray:
    """Binomial expansion of A_alpha for integer alphas (Mironov et al. 2019, Sec. 3.2)."""
    a_int = alphas.astype(np.int64)[:, None]
    k_int = np.arange(int(alphas.max()) + 1)[None, :]
    log_fact = special.gammaln(np.arange(int(alphas.max()) + 1, dtype=float) + 1)  # log n!
    inside = k_int <= a_int
    log_binom = log_fact[a_int] - log_fact[k_int] - log_fact[np.where(inside, a_int - k_int, 0)]
    k, a = k_int.astype(float), a_int.astype(float)
    log_terms = (
        log_binom + k * math.log(q) + (a - k) * math.log1p(-q) + (k * k - k) / (2 * sigma**2)
    )
    return special.logsumexp(np.where(inside, log_terms, -np.inf), axis=1)


def _log_a_frac_series(alphas: np.ndarray, q: float, sigma: float):
    """Two-sided series of Mironov et al. 2019, Sec. 3.3, for fractional alphas.

    Returns ``(log_a, converged)``. Terms carry the sign of the generalised binomial
    coefficient (they alternate once i > alpha), summed with a signed logsumexp; an order
    has converged when its last terms are below exp(-36) times the total (the alternating
    tail is then smaller still).
    """
    log_q, log_1mq = math.log(q), math.log1p(-q)
    z0 = sigma**2 * (log_1mq - log_q) + 0.5
    a = alphas[:, None]
    i = np.arange(_SERIES_TERMS, dtype=float)[None, :]
    j = a - i
    log_binom = special.gammaln(a + 1) - special.gammaln(i + 1) - special.gammaln(j + 1)
    sign = special.gammasgn(j + 1)

    def side(u, v, ndtr_arg):
        """log of the terms C(a, i) q^u (1-q)^v e^{(u^2-u)/(2 sigma^2)} Phi(ndtr_arg)."""
        growth = (u * u - u) / (2 * sigma**2)
        return log_binom + u * log_q + v * log_1mq + growth + special.log_ndtr(ndtr_arg)

    log_s0 = side(i, j, (z0 - i) / sigma)  # the integral over z <= z0
    log_s1 = side(j, i, (j - z0) / sigma)  # the integral over z >= z0
    total = special.logsumexp(
        np.concatenate([log_s0, log_s1], axis=1), b=np.concatenate([sign, sign], axis=1), axis=1
    )
    last = np.maximum(log_s0[:, -1], log_s1[:, -1])
    return total, last < total - _SERIES_LOG_TOL


def _log_a_trapezoid(alphas: np.ndarray, q: float, sigma: float) -> np.ndarray:
    """A_alpha by the trapezoidal rule on a uniform grid, vectorised over alphas.

    The integrand of ``log_a_sampled_gaussian_quad`` is analytic in the strip
    |Im z| < pi sigma^2 (the zeros of 1 - q + q e^{(2z-1)/(2 sigma^2)}) and Gaussian-tailed,
    so the trapezoidal rule with step h converges like exp(-2 pi^2 sigma^2 / h)
    (Trefethen and Weideman 2014, Thm. 5.1); h = min(sigma, sigma^2) / 4 makes that
    below 1e-30, and [-14 sigma, alpha + 14 sigma] holds all but e^-98 of the mass.
    """
    h = min(sigma, sigma**2) / 4
    lo, hi = -14 * sigma, float(alphas.max()) + 14 * sigma
    z = np.arange(lo, hi + h, h)[None, :]
    log_mix = np.logaddexp(math.log1p(-q), math.log(q) + (2 * z - 1) / (2 * sigma**2))
    log_f = -(z**2) / (2 * sigma**2) - math.log(sigma * math.sqrt(2 * math.pi))
    return special.logsumexp(log_f + alphas[:, None] * log_mix, axis=1) + math.log(h)


def log_a_sampled_gaussian_quad(alpha, *, q, noise_multiplier):
    r""":math:`\log A_\alpha` of the sampled Gaussian mechanism by adaptive quadrature (nats).

    .. math:: A_\alpha = \int \mu_0(z)\big(1 - q + q\,e^{(2z-1)/(2\sigma^2)}\big)^\alpha dz,
              \quad \mu_0 = N(0,\sigma^2)

    (Mironov et al. 2019, eq. 3). The log-integrand is shifted by its maximum (found on
    the peak of the Gaussian factor and of the shifted component at :math:`z=\alpha`) and
    integrated with ``scipy.integrate.quad`` over :math:`[-40\sigma, \alpha + 40\sigma]`
    (the mass outside is below :math:`e^{-800}`). Valid for any real order > 1.

    Examples
    --------
    >>> round(log_a_sampled_gaussian_quad(2.0, q=1.0, noise_multiplier=1.0), 9)  # alpha(alpha-1)/2
    1.0
    """
    func = "log_a_sampled_gaussian_quad"
    alpha = check_real("alpha", alpha, func=func, low=1, low_inclusive=False)
    q = check_real("q", q, func=func, low=0, high=1)
    sigma = _noise("noise_multiplier", noise_multiplier, func)
    if q == 0:
        return 0.0
    log_q = math.log(q)
    log_1mq = math.log1p(-q) if q < 1 else -math.inf

    def log_f(z):
        mix = np.logaddexp(log_1mq, log_q + (2 * z - 1) / (2 * sigma**2))
        return -(z**2) / (2 * sigma**2) - math.log(sigma * math.sqrt(2 * math.pi)) + alpha * mix

    lo, hi = -40 * sigma, alpha + 40 * sigma
    grid = np.linspace(lo, hi, 4001)
    shift = float(np.max(log_f(grid)))
    peaks = sorted({0.0, alpha, float(grid[np.argmax(log_f(grid))])})
    value, _ = integrate.quad(
        lambda z: math.exp(float(log_f(z)) - shift),
        lo,
        hi,
        points=peaks,
        limit=500,
        epsabs=0.0,
        epsrel=1e-13,
    )
    return shift + math.log(value)


def rdp_sampled_gaussian(orders, *, q, noise_multiplier):
    r"""RDP of the Poisson-sampled Gaussian mechanism (nats), :math:`\log(A_\alpha)/(\alpha-1)`.

    Mironov, Talwar, Zhang 2019 (arXiv 1908.10530): integer orders by the binomial
    expansion (Sec. 3.2), fractional orders by the two-sided series of Sec. 3.3 around
    :math:`z_0 = \sigma^2\log(1/q-1) + 1/2`. The fractional series keeps the signs of the
    generalised binomial coefficients (they alternate for :math:`i > \alpha`). Its terms
    decay only polynomially (:math:`\sim i^{-\alpha-2}`) once :math:`i > z_0`, so for large
    ``q`` and orders near 1 it may not reach the tolerance in 64 terms; those orders are
    computed by the trapezoidal rule on the defining integral instead (exponentially
    accurate for this analytic integrand, see ``_log_a_trapezoid``). Edge cases: ``q == 0`` gives 0,
    ``q == 1`` gives the Gaussian mechanism.

    Note: dp-accounting (v0.4) sums the absolute values of the fractional-order terms
    (an over-estimate of :math:`A_\alpha`, i.e. conservative) and returns ``inf`` for an
    order whose series has not converged after 1000 terms; see tests/bounds.

    Examples
    --------
    >>> rdp_sampled_gaussian(2.0, q=1.0, noise_multiplier=1.0)  # no sampling: Gaussian
    1.0
    >>> value = rdp_sampled_gaussian(2, q=0.5, noise_multiplier=1.0)  # A_2 = 1 + q^2 (e - 1)
    >>> round(value - math.log1p(0.25 * (math.e - 1)), 12)
    0.0
    """
    func = "rdp_sampled_gaussian"
    orders = _orders(orders, func)
    q = check_real("q", q, func=func, low=0, high=1)
    sigma = _noise("noise_multiplier", noise_multiplier, func)
    flat = orders.reshape(-1)
    if q == 0:
        return as_output(np.zeros_like(orders))
    if q == 1:
        return as_output(orders / (2 * sigma**2))
    log_a = np.empty_like(flat)
    is_int = flat == np.round(flat)
    if is_int.any():
        log_a[is_int] = _log_a_int(flat[is_int], q, sigma)
    if (~is_int).any():
        alphas = flat[~is_int]
        frac, converged = _log_a_frac_series(alphas, q, sigma)
        if not converged.all():
            frac[~converged] = _log_a_trapezoid(alphas[~converged], q, sigma)
        log_a[~is_int] = frac
    return as_output((log_a / (flat - 1)).reshape(orders.shape))
