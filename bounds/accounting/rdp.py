"""Renyi DP of single mechanisms: Gaussian, Laplace and the Poisson-sampled Gaussian."""

from __future__ import annotations

import logging
import math

import numpy as np
from scipy import integrate, special

from pruneleak.bounds._vector import as_output
from pruneleak.bounds.accounting._common import _MAX_SAMPLED_ORDER, _noise, _orders, _sampled_orders
from pruneleak.bounds.validation import check_real

logger = logging.getLogger(__name__)

# Fractional-order series (Mironov et al. 2019, Sec. 3.3): _SERIES_TERMS terms per side;
# an order whose last term is not below exp(-_SERIES_LOG_TOL) times the total goes to the
# trapezoidal rule. The tail alternates in sign, so its sum is below the last term. A
# converged value below _SERIES_MIN_LOG_A goes there too (see ``_log_a_frac``).
_SERIES_LOG_TOL = 36.0
_SERIES_TERMS = 64
_SERIES_MIN_LOG_A = 1e-2
# The trapezoidal rule evaluates at most this many points per order (memory and time);
# an order that would need more gets the chord bound of ``_log_a_chord``.
_TRAPEZOID_MAX_POINTS = 2**21
# Taylor terms of B(y) = (1+y) log(1+y) - y for |y| < 1/2 in ``_log_bernoulli_gap``.
_GAP_SERIES_TERMS = 50
# The reference quadrature puts a breakpoint every _QUAD_SPACING standard deviations, so
# each Gauss-Kronrod panel resolves the width-1 bumps of the integrand; alpha / sigma is
# at most _QUAD_MAX_RATIO, so at most ~520 panels.
_QUAD_SPACING = 4.0
_QUAD_MAX_RATIO = 2000.0


def _all_inf(orders):
    return as_output(np.full(np.shape(orders), np.inf))


def _expm1_minus_x_ratio(x):
    """(e^x - 1 - x) / x^2 for |x| <= 1/2: its Taylor series 1/2! + x/3! + ... by Horner
    (21 terms; the rest is below 2^-21 / 23! relative)."""
    total = np.ones_like(x)
    for k in range(23, 2, -1):
        total = 1 + x * total / k
    return total / 2


def _expm1_minus_x(x):
    """e^x - 1 - x >= 0 without cancellation: x^2 times its series ratio for |x| < 1/2,
    expm1(x) - x elsewhere."""
    x = np.asarray(x, dtype=float)
    inner = np.clip(x, -0.5, 0.5)
    return np.where(np.abs(x) < 0.5, inner * inner * _expm1_minus_x_ratio(inner), np.expm1(x) - x)


def _log_expm1_minus_x(x):
    """log(e^x - 1 - x), finite where e^x - 1 - x itself underflows or overflows."""
    x = np.asarray(x, dtype=float)
    inner = np.clip(x, -0.5, 0.5)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        series = 2 * np.log(np.abs(inner)) + np.log(_expm1_minus_x_ratio(inner))
        large = x + np.log1p(-(1 + x) * np.exp(-x))
        middle = np.log(np.expm1(x) - x)
    return np.where(np.abs(x) < 0.5, series, np.where(x > 1, large, middle))


def rdp_gaussian(orders, noise_multiplier):
    r"""RDP of the Gaussian mechanism: :math:`\alpha/(2\sigma^2)` nats (Mironov 2017, Prop. 7).

    ``noise_multiplier`` :math:`\sigma \ge 0`; :math:`\sigma = 0` (no noise) gives ``inf``,
    as does a value above the float range (package docstring).

    Examples
    --------
    >>> rdp_gaussian(2.0, 1.0)  # 2 / (2 * 1^2)
    1.0
    >>> rdp_gaussian(2.0, 0.0)  # no noise: no privacy
    inf
    """
    func = "rdp_gaussian"
    orders = _orders(orders, func)
    sigma = _noise("noise_multiplier", noise_multiplier, func)
    if sigma == 0:
        return _all_inf(orders)
    with np.errstate(over="ignore"):
        return as_output(orders / 2 / sigma / sigma)  # sigma**2 would over/underflow first


def rdp_laplace(orders, noise_multiplier):
    r"""Exact RDP of the Laplace mechanism with scale :math:`b` = ``noise_multiplier`` (nats).

    Mironov 2017 (arXiv 1702.07476), Prop. 6, for sensitivity 1:

    .. math:: D_\alpha = \frac{1}{\alpha-1}\log\Big(\frac{\alpha}{2\alpha-1}e^{(\alpha-1)/b}
              + \frac{\alpha-1}{2\alpha-1}e^{-\alpha/b}\Big),

    with the weights written as :math:`1/(2-1/\alpha)` and :math:`(1-1/\alpha)/(2-1/\alpha)`
    (finite for every order). Where :math:`(\alpha-1)/b \le 1` the mixture is summed as
    :math:`\log(1 + M - 1)` with :math:`M - 1 = (\alpha E((\alpha-1)/b) + (\alpha-1)
    E(-\alpha/b))/(2\alpha-1)`, :math:`E(x) = e^x - 1 - x \ge 0` (the first-order terms
    cancel exactly), so a large scale and orders near 1 keep their relative accuracy (the
    limit :math:`\alpha\to1` is the KL divergence :math:`1/b + e^{-1/b} - 1`); elsewhere
    as :math:`1/b + (\log(1 + \frac{\alpha-1}{\alpha}e^{-(2\alpha-1)/b})
    - \log(2-1/\alpha))/(\alpha-1)`, which forms no exponential of a large argument (a
    finite RDP for every order and scale > 0). It tends to :math:`1/b` (the pure-DP epsilon) as
    :math:`\alpha\to\infty` and is at most :math:`\alpha/(2b^2)` (zCDP, Lemma 1 of
    Fed-LTP). :math:`b = 0` (no noise) gives ``inf``.

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
    if b == 0:
        return _all_inf(a)
    two_minus = 2 - 1 / a  # (2 alpha - 1) / alpha
    with np.errstate(over="ignore"):
        up, down = (a - 1) / b, a / b
        small = up <= 1
        excess = _expm1_minus_x(np.where(small, up, 0.0)) + (a - 1) / a * _expm1_minus_x(-down)
        near = np.log1p(excess / two_minus) / (a - 1)
        # up > 1: log M = up - log(2 - 1/alpha) + log1p(second term / first term), and
        # up / (alpha - 1) = 1/b, so no exponential of up is formed.
        ratio = (a - 1) / a * np.exp(-(up + down))
        far = 1 / b + (np.log1p(ratio) - np.log(two_minus)) / (a - 1)
        return as_output(np.where(small, near, far))


def _log_expm1(g):
    """log(e^g - 1) for g >= 0: -inf at 0, and g + log1p(-e^-g) above 1 (no overflow)."""
    with np.errstate(divide="ignore"):
        small = np.log(np.expm1(np.minimum(g, 1.0)))
        return np.where(g > 1, g + np.log1p(-np.exp(-np.maximum(g, 1.0))), small)


def _log_a_int(alpha: int, q: float, sigma: float) -> float:
    r"""log A_alpha for an integer order alpha >= 2 (Mironov et al. 2019, Sec. 3.2).

    The binomial expansion :math:`A = \sum_k \binom{\alpha}{k} q^k (1-q)^{\alpha-k}
    e^{k(k-1)/(2\sigma^2)}` is summed as :math:`A - 1 = \sum_{k\ge2} \binom{\alpha}{k} q^k
    (1-q)^{\alpha-k}(e^{k(k-1)/(2\sigma^2)} - 1)` (the binomial weights sum to 1 and the
    k = 0, 1 exponents are 0). Every term is >= 0, so a large sigma keeps its relative
    accuracy (no 1 + tiny rounding) and a small one can only overflow to inf;
    log A = logaddexp(0, log(A - 1)).
    """
    k = np.arange(2, alpha + 1, dtype=float)
    log_binom = (
        special.gammaln(alpha + 1.0) - special.gammaln(k + 1) - special.gammaln(alpha - k + 1)
    )
    with np.errstate(over="ignore"):
        growth = k * (k - 1) / 2 / sigma / sigma  # sigma**2 could underflow to 0
        log_terms = log_binom + k * math.log(q) + (alpha - k) * math.log1p(-q) + _log_expm1(growth)
    return float(np.logaddexp(0.0, special.logsumexp(log_terms)))


def _log_a_frac_series(alphas: np.ndarray, q: float, sigma: float):
    r"""Two-sided series of Mironov et al. 2019, Sec. 3.3, for fractional alphas.

    Returns ``(log_a, converged)``. Terms carry the sign of the generalised binomial
    coefficient (they alternate once i > alpha), summed with a signed logsumexp; an order
    has converged when its last terms are below exp(-36) times the total (the alternating
    tail is then smaller still).

    Each term holds :math:`e^{(u^2-u)/(2\sigma^2)}\Phi(x)`. Where :math:`x < 0` both factors
    can be astronomically large and small, so the Gaussian part of :math:`\Phi`'s tail is
    cancelled analytically: with :math:`z_0 = \sigma^2 c + 1/2`, :math:`c = \log(1/q - 1)`,
    and :math:`x = \pm(u - z_0)/\sigma`, :math:`(u^2-u)/(2\sigma^2) - x^2/2
    = u c - (z_0/\sigma)^2/2`, and :math:`\log\Phi(x) + x^2/2 = \log(\mathrm{erfcx}(-x/\sqrt2)/2)`.
    :math:`\sigma^2` itself is never formed (it over- or underflows at extreme sigma).
    """
    log_q, log_1mq = math.log(q), math.log1p(-q)
    c = log_1mq - log_q
    z0_s = sigma * c + 0.5 / sigma  # z0 / sigma
    a = alphas[:, None]
    i = np.arange(_SERIES_TERMS, dtype=float)[None, :]
    j = a - i
    log_binom = special.gammaln(a + 1) - special.gammaln(i + 1) - special.gammaln(j + 1)
    sign = special.gammasgn(j + 1)

    def side(u, v, x):
        """log of the terms C(a, i) q^u (1-q)^v e^{(u^2-u)/(2 sigma^2)} Phi(x)."""
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            direct = (u * u - u) / 2 / sigma / sigma + special.log_ndtr(x)
            tail = u * c - z0_s * z0_s / 2 + np.log(special.erfcx(-x / math.sqrt(2)) / 2)
            return log_binom + u * log_q + v * log_1mq + np.where(x >= 0, direct, tail)

    log_s0 = side(i, j, z0_s - i / sigma)  # the integral over z <= z0
    log_s1 = side(j, i, j / sigma - z0_s)  # the integral over z >= z0
    total, total_sign = special.logsumexp(
        np.concatenate([log_s0, log_s1], axis=1),
        b=np.concatenate([sign, sign], axis=1),
        axis=1,
        return_sign=True,
    )
    last = np.maximum(log_s0[:, -1], log_s1[:, -1])
    return total, (total_sign > 0) & (last < total - _SERIES_LOG_TOL)


def _trapezoid_step(sigma: float) -> float:
    """Step of ``_log_a_trapezoid`` in units of sigma (see there)."""
    return min(1.0, sigma) / 4


def _log_bernoulli_gap(alpha: float, log_q: float, w: np.ndarray) -> np.ndarray:
    r"""log g(y), :math:`g(y) = (1+y)^\alpha - 1 - \alpha y \ge 0`, at :math:`y = q(e^w - 1)`.

    With :math:`\ell = \log(1+y)` and :math:`x = (\alpha-1)\ell`,

    .. math:: g = (\alpha - 1)\,B(y) + (1+y)\,E(x),\qquad B(y) = (1+y)\ell - y \ge 0,
              \quad E(x) = e^x - 1 - x \ge 0,

    a sum of two non-negative terms (no cancellation, also for orders near 1), added in
    logs. :math:`\ell` is ``log1p(y)`` for :math:`|y| < 1/2` and
    :math:`\log(1 - q + q e^w)` otherwise; B is its Taylor series
    :math:`\sum_{k\ge2}(-1)^k y^k/(k(k-1))` for :math:`|y| < 1/2` (50 terms), direct up to
    y = 2 and :math:`y((1 + 1/y)\ell - 1)` beyond, with :math:`\log y` from w, so that a
    large w cannot overflow; log E is ``_log_expm1_minus_x``.
    """
    q = math.exp(log_q)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        y = q * np.expm1(np.minimum(w, 700.0))  # only read where |y| <= 2 (w well below 700)
        log_y = log_q + _log_expm1(np.maximum(w, 0.0))  # log y where y > 0
        small = np.abs(y) < 0.5
        ell = np.where(small, np.log1p(y), np.logaddexp(np.log1p(-q), log_q + w))
        inner = np.clip(y, -0.5, 0.5)
        series = np.zeros_like(inner)
        for k in range(_GAP_SERIES_TERMS + 1, 1, -1):  # y^2/2 - y^3/6 + ... by Horner
            series = 1 / (k * (k - 1)) - inner * series
        log_b = np.where(
            small,
            2 * np.log(np.abs(inner)) + np.log(series),
            np.where(
                y <= 2,
                np.log(np.exp(ell) * ell - y),
                log_y + np.log((1 + np.exp(-log_y)) * ell - 1),
            ),
        )
        log_e = _log_expm1_minus_x((alpha - 1) * ell)
        return np.logaddexp(math.log(alpha - 1) + log_b, ell + log_e)


def _log_a_trapezoid(alphas: np.ndarray, q: float, sigma: float) -> np.ndarray:
    r"""log A_alpha by the trapezoidal rule on a uniform grid, one order at a time.

    In :math:`t = z/\sigma`, with :math:`y = q(e^{t/\sigma - 1/(2\sigma^2)} - 1)`,
    :math:`A - 1 = \int\varphi(t)\,[(1+y)^\alpha - 1 - \alpha y]\,dt` (the term
    :math:`\alpha y` integrates to 0 because :math:`\mathbb E_{\mu_0}[\mu_1/\mu_0] = 1`).
    The integrand is non-negative (``_log_bernoulli_gap``), so A - 1 keeps its relative
    accuracy however small it is, and is summed in log space. It is analytic in the strip
    :math:`|\mathrm{Im}\,t| < \pi\sigma` (the zeros of :math:`1 + y` lie at
    :math:`|\mathrm{Im}\,z| = \pi\sigma^2`) and Gaussian-tailed, so the trapezoidal rule
    with step h converges like :math:`\exp(-2\pi^2\sigma/h)` (Trefethen and Weideman
    2014, Thm. 5.1); h = min(1, sigma) / 4 makes that below 1e-30, and
    :math:`[-14, \alpha/\sigma + 14]` holds all but e^-98 of the mass. The caller keeps
    the grid below ``_TRAPEZOID_MAX_POINTS``.
    """
    h = _trapezoid_step(sigma)
    log_norm = math.log(h) - 0.5 * math.log(2 * math.pi)
    out = np.empty(alphas.shape)
    for n, alpha in enumerate(alphas):
        t = np.arange(-14.0, alpha / sigma + 14.0 + h, h)
        w = t / sigma - 0.5 / sigma / sigma
        log_gap = special.logsumexp(-(t**2) / 2 + _log_bernoulli_gap(alpha, math.log(q), w))
        out[n] = np.logaddexp(0.0, log_gap + log_norm)
    return out


def _log_a_chord(alpha: float, q: float, sigma: float) -> float:
    r"""Upper bound on log A_alpha: the chord between the integer orders around alpha.

    :math:`\log A_\alpha = \log\mathbb E_{\mu_0}[e^{\alpha L}]`,
    :math:`L = \log(1-q+q\mu_1/\mu_0)`, is a cumulant generating function, convex in
    :math:`\alpha`, so it lies below its chord between :math:`n = \lfloor\alpha\rfloor`
    and :math:`n + 1` (with :math:`\log A_1 = 0`).
    """
    n = math.floor(alpha)
    low = 0.0 if n == 1 else _log_a_int(n, q, sigma)
    return (n + 1 - alpha) * low + (alpha - n) * _log_a_int(n + 1, q, sigma)


def _log_a_frac(alphas: np.ndarray, q: float, sigma: float) -> np.ndarray:
    """log A for fractional orders: the series, else the trapezoidal rule, else the chord.

    The series sums terms of order 1 to about 1 + log A, so below log A = 1e-2 its
    relative accuracy degrades (absolute error ~1e-17); those orders, and the orders
    whose series has not converged, go to the trapezoidal rule on the non-negative
    integrand of A - 1, when its grid is affordable.
    """
    log_a, converged = _log_a_frac_series(alphas, q, sigma)
    points = (alphas / sigma + 28.0) / _trapezoid_step(sigma)
    affordable = points <= _TRAPEZOID_MAX_POINTS
    by_trapezoid = (~converged | (log_a < _SERIES_MIN_LOG_A)) & affordable
    if by_trapezoid.any():
        log_a[by_trapezoid] = _log_a_trapezoid(alphas[by_trapezoid], q, sigma)
    by_chord = ~converged & ~affordable
    if by_chord.any():
        logger.warning(
            "rdp_sampled_gaussian: orders %s need more than %d trapezoid points at "
            "noise_multiplier=%g; returning the (larger) chord between the integer orders.",
            alphas[by_chord],
            _TRAPEZOID_MAX_POINTS,
            sigma,
        )
        log_a[by_chord] = [_log_a_chord(alpha, q, sigma) for alpha in alphas[by_chord]]
    return log_a


def log_a_sampled_gaussian_quad(alpha, *, q, noise_multiplier):
    r""":math:`\log A_\alpha` of the sampled Gaussian mechanism by adaptive quadrature (nats).

    .. math:: A_\alpha = \int \mu_0(z)\big(1 - q + q\,e^{(2z-1)/(2\sigma^2)}\big)^\alpha dz,
              \quad \mu_0 = N(0,\sigma^2)

    (Mironov et al. 2019, eq. 3). :math:`A_\alpha - 1` is integrated in :math:`t = z/\sigma`
    as in ``_log_a_trapezoid`` (non-negative integrand, so tiny values keep their relative
    accuracy), over :math:`[-40, \alpha/\sigma + 40]` (the mass outside is below
    :math:`e^{-800}`) with ``scipy.integrate.quad``, a breakpoint every 4 units (the
    integrand is a sum of bumps of width 1 centred between 0 and :math:`\alpha/\sigma`)
    and the log-integrand shifted by its largest value on those points; then
    :math:`\log A = \log(1 + (A - 1))`. A reference for the fast paths of
    ``rdp_sampled_gaussian``; its domain: order in :math:`(1, 2^{20}]`, :math:`q\in[0, 1]`,
    ``noise_multiplier`` > 0 with :math:`\alpha/\sigma \le 2000` (at most ~520 panels).

    Examples
    --------
    >>> round(log_a_sampled_gaussian_quad(2.0, q=1.0, noise_multiplier=1.0), 9)  # alpha(alpha-1)/2
    1.0
    """
    func = "log_a_sampled_gaussian_quad"
    alpha = check_real(
        "alpha", alpha, func=func, low=1, high=_MAX_SAMPLED_ORDER, low_inclusive=False
    )
    q = check_real("q", q, func=func, low=0, high=1)
    sigma = check_real("noise_multiplier", noise_multiplier, func=func, low=0, low_inclusive=False)
    if alpha > _QUAD_MAX_RATIO * sigma:
        raise ValueError(
            f"The 'alpha' parameter of {func} must be at most {_QUAD_MAX_RATIO:g} * "
            f"noise_multiplier = {_QUAD_MAX_RATIO * sigma:g} (the quadrature's panel count). "
            f"Got alpha={alpha!r} with noise_multiplier={sigma!r} instead."
        )
    if q == 0:
        return 0.0
    log_q = math.log(q)
    log_norm = -0.5 * math.log(2 * math.pi)

    def log_f(t):
        w = np.asarray(t / sigma - 0.5 / sigma / sigma)
        return -(t**2) / 2 + log_norm + _log_bernoulli_gap(alpha, log_q, w)

    lo, hi = -40.0, alpha / sigma + 40.0
    # z0 / sigma, where the two components of the mixture cross
    cross = sigma * (math.log1p(-q) - log_q) + 0.5 / sigma if q < 1 else lo
    peaks = [0.0, alpha / sigma, cross]
    points = np.union1d(np.arange(lo, hi, _QUAD_SPACING)[1:], np.clip(peaks, lo, hi))
    shift = float(np.max(log_f(np.union1d(points, np.linspace(lo, hi, 4001)))))
    if shift == -math.inf:  # A - 1 underflows to 0 on the whole grid
        return 0.0
    value, _ = integrate.quad(
        lambda t: math.exp(float(log_f(t)) - shift),
        lo,
        hi,
        points=points,
        limit=4 * points.size + 100,
        epsabs=0.0,
        epsrel=1e-13,
    )
    return float(np.logaddexp(0.0, shift + math.log(value)))


def rdp_sampled_gaussian(orders, *, q, noise_multiplier):
    r"""RDP of the Poisson-sampled Gaussian mechanism (nats), :math:`\log(A_\alpha)/(\alpha-1)`.

    Mironov, Talwar, Zhang 2019 (arXiv 1908.10530): integer orders by the binomial
    expansion (Sec. 3.2, summed as :math:`A - 1` with non-negative terms), fractional
    orders by the two-sided series of Sec. 3.3 around
    :math:`z_0 = \sigma^2\log(1/q-1) + 1/2`. The fractional series keeps the signs of the
    generalised binomial coefficients (they alternate for :math:`i > \alpha`). Its terms
    decay only polynomially (:math:`\sim i^{-\alpha-2}`) once :math:`i > z_0`, so for large
    ``q`` and orders near 1 it may not reach the tolerance in 64 terms; those orders, and
    those with :math:`\log A_\alpha < 10^{-2}` (where a sum around 1 loses relative
    accuracy), are computed by the trapezoidal rule on the non-negative integrand of
    :math:`A_\alpha - 1` instead (exponentially accurate for this analytic integrand, see
    ``_log_a_trapezoid``), and where that grid would exceed 2^21 points (a large order
    over a small sigma), by the chord between the neighbouring integer orders, an upper
    bound (logged as a warning).

    Small noise: :math:`A_\alpha` lies between :math:`q^\alpha e^{\alpha(\alpha-1)/(2\sigma^2)}`
    and :math:`1 + e^{\alpha(\alpha-1)/(2\sigma^2)}`, so the RDP lies between
    :math:`\alpha/(2\sigma^2) + \alpha\log q/(\alpha-1)` and
    :math:`\alpha/(2\sigma^2) + \log 2/(\alpha-1)`; where the two round to the same float
    that float is returned (every order whose series would overflow is such an order).

    Domain: orders in :math:`(1, 2^{20}]` (the integer expansion sums :math:`\alpha - 1`
    terms), :math:`q \in [0, 1]`, ``noise_multiplier`` :math:`\ge 0`. Edge cases: ``q == 0``
    gives 0, ``q == 1`` the Gaussian mechanism, ``noise_multiplier == 0`` (with ``q > 0``)
    ``inf``, like dp-accounting; an RDP beyond the float range is ``inf`` (package
    docstring). Every path gives :math:`\log A_\alpha \ge 0`, so the RDP is never negative.

    Note: dp-accounting (0.6.0) sums the absolute values of the fractional-order terms
    (an over-estimate of :math:`A_\alpha`, i.e. conservative) and returns ``inf`` for an
    order whose series has not converged after 1000 terms. The over-estimate of
    :math:`A_\alpha` is small (about 2e-4 relative at q = 0.1, sigma = 1.4, alpha = 1.1) but
    the RDP is :math:`\log(A_\alpha)/(\alpha-1)` with :math:`\log A_\alpha` near 0, so there
    dp-accounting's RDP is 55 % above the exact one; ``inf`` comes back in 6 of the 18 cases
    q in {0.01, 0.1, 0.5}, sigma in {0.8, 1.4}, alpha in {1.1, 1.5, 2.5} (40-digit mpmath
    quadrature, tests/bounds/test_accounting_peer_findings.py).

    Examples
    --------
    >>> rdp_sampled_gaussian(2.0, q=1.0, noise_multiplier=1.0)  # no sampling: Gaussian
    1.0
    >>> value = rdp_sampled_gaussian(2, q=0.5, noise_multiplier=1.0)  # A_2 = 1 + q^2 (e - 1)
    >>> round(value - math.log1p(0.25 * (math.e - 1)), 12)
    0.0
    """
    func = "rdp_sampled_gaussian"
    orders = _sampled_orders(orders, func)
    q = check_real("q", q, func=func, low=0, high=1)
    sigma = _noise("noise_multiplier", noise_multiplier, func)
    if q == 0:
        return as_output(np.zeros_like(orders))
    if sigma == 0:
        return _all_inf(orders)
    if q == 1:
        return rdp_gaussian(orders, sigma)
    flat = orders.reshape(-1)
    with np.errstate(over="ignore"):
        gaussian = flat / 2 / sigma / sigma
        lower = gaussian + flat * math.log(q) / (flat - 1)
        upper = gaussian + math.log(2) / (flat - 1)
    log_a = np.empty_like(flat)
    todo = lower != upper
    is_int = flat == np.round(flat)
    for alpha in np.unique(flat[todo & is_int]):
        log_a[flat == alpha] = _log_a_int(int(alpha), q, sigma)
    frac = todo & ~is_int
    if frac.any():
        log_a[frac] = _log_a_frac(flat[frac], q, sigma)
    with np.errstate(over="ignore"):
        rdp = np.where(todo, log_a / (flat - 1), upper)
    return as_output(rdp.reshape(orders.shape))
