r"""Renyi/zCDP privacy accounting, and Fed-LTP's Theorem 1 published beside a corrected accountant.

Units: every epsilon, RDP value and zCDP rho is in nats (natural logarithms), the unit of
differential privacy. ``noise_multiplier`` is the noise scale divided by the sensitivity
(Gaussian: :math:`\sigma/C` with :math:`\ell_2` sensitivity :math:`C`; Laplace: scale
:math:`b` divided by the :math:`\ell_1` sensitivity). Orders :math:`\alpha` must be > 1.
Neighbouring datasets: add/remove one record (Fed-LTP Definition 1, dp-accounting's default).

Mechanisms (vectorised over ``orders``; a scalar order gives a float)
    ``rdp_gaussian(orders, noise_multiplier)``: :math:`\alpha/(2\sigma^2)` (Mironov 2017, Prop. 7).
    ``rdp_laplace(orders, noise_multiplier)``: exact (Mironov 2017, Prop. 6).
    ``rdp_sampled_gaussian(orders, *, q, noise_multiplier)``: Poisson-sampled Gaussian
    (Mironov, Talwar, Zhang 2019, arXiv 1908.10530): binomial expansion for integer orders
    (Sec. 3.2), the two-sided series of Sec. 3.3 for fractional orders, all in log space.
    ``log_a_sampled_gaussian_quad(alpha, *, q, noise_multiplier)``: the defining integral by
    adaptive quadrature (reference, and the fallback when the series converges slowly).
zCDP (Bun and Steinke 2016)
    ``zcdp_from_pure_dp(epsilon)`` (Prop. 1.4, Fed-LTP Lemma 1), ``zcdp_gaussian``,
    ``rdp_from_zcdp(rho, orders)``.
Composition and conversion
    ``compose(*rdp_curves, counts=None)``;
    ``epsilon_from_rdp(orders, rdp, delta, *, conversion="tight")`` and
    ``delta_from_rdp(orders, rdp, epsilon, *, conversion="tight")``:
    ``"classic"`` is Mironov 2017 Prop. 3,
    :math:`\epsilon = \mathrm{rdp} + \log(1/\delta)/(\alpha-1)`;
    ``"tight"`` is Canonne, Kamath, Steinke 2020 (arXiv 2004.00010, Prop. 12) = Balle et al.
    2020 (arXiv 1905.09982, Thm. 21), :math:`\epsilon = \mathrm{rdp} + \log(1-1/\alpha)
    - (\log\delta + \log\alpha)/(\alpha-1)`, with the same KL short-cut and
    :math:`\alpha > 1.01` guard as Google's dp-accounting (which uses "tight").
    ``epsilon_sampled_gaussian(q, noise_multiplier, steps, delta, *, orders, conversion)``.
Fed-LTP (Shi et al., ``papers/fed-ltp-lottery-ticket-zcdp.txt``, Theorem 1, eq. 20-24)
    ``fedltp_rho_s_published``, ``fedltp_rho_v_published``, ``fedltp_epsilon_published``
    (one order, as printed), ``fedltp_epsilon_published_optimal`` (minimised over orders),
    ``fedltp_epsilon_corrected`` (this module's accountant), ``fedltp_epsilon_published_expr``
    (sympy).

Fed-LTP Theorem 1 checked term by term against the definitions it cites:

* eq. 8 (Definition 4) writes :math:`e^{D_\alpha} = \mathbb E[e^{(\alpha-1)Z}]`; by eq. 6,
  :math:`\mathbb E[e^{(\alpha-1)Z}] = e^{(\alpha-1)D_\alpha}`. With the correct identity,
  :math:`\rho`-zCDP means :math:`D_\alpha \le \alpha\rho`.
* eq. 23 uses eq. 8 as printed and gets
  :math:`D_\alpha \le \tfrac12\alpha(\alpha-1)\epsilon_{val}^2`; Lemma 1
  (:math:`\tfrac12\epsilon^2`-zCDP) gives :math:`D_\alpha \le \tfrac12\alpha\epsilon_{val}^2`.
  The published term is too small for :math:`\alpha < 2` and too large for :math:`\alpha > 2`
  (factor :math:`\alpha - 1`). With :math:`\epsilon_{val} = 1/\lambda_{val}` (eq. 17,
  sensitivity 1) the exact Laplace RDP (``rdp_laplace``) is smaller still.
* eq. 21 puts the sampling mixture into
  :math:`\mu_1 = \tilde q N(1,\sigma^2) + (1-\tilde q)N(0,\sigma^2)`
  *and* again into :math:`(1-\tilde q+\tilde q\mu_1/\mu_0)^\alpha`; Mironov et al. 2019 use
  :math:`\mu_1 = N(1,\sigma^2)`. As printed the term is the RDP of sampling rate
  :math:`\tilde q^2`, an under-estimate (``fedltp_rho_s_published`` evaluates it literally).
* eq. 21 composes one sampled-Gaussian step per round, while Algorithm 2 runs
  :math:`\tau` noisy local steps per round (:math:`\tau = 300` in Sec. 6): the corrected
  accountant composes ``steps_per_round`` steps per round.
* eq. 22 is the tight conversion above (correct), but Theorem 1 fixes no order; the
  published epsilon depends on :math:`\alpha`, and the optimum over orders is reported.
* ``t`` is read as the 0-based round index, so both forms compose ``t + 1`` rounds as the
  paper's :math:`(t+1)` factors do.
"""

from __future__ import annotations

import logging
import math

import numpy as np
import sympy as sp
from scipy import integrate, special

from bounds._vector import as_output, real_array
from bounds.validation import check_choice, check_int, check_real

logger = logging.getLogger(__name__)

# Same grid as dp-accounting's DEFAULT_RDP_ORDERS (rdp_privacy_accountant.py, v0.4),
# so that the two accountants optimise over identical orders.
DEFAULT_ORDERS = tuple(
    [1 + x / 10 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024]
)
# Fractional-order series (Mironov et al. 2019, Sec. 3.3): _SERIES_TERMS terms per side;
# an order whose last term is not below exp(-_SERIES_LOG_TOL) times the total goes to the
# trapezoidal rule. The tail alternates in sign, so its sum is below the last term.
_SERIES_LOG_TOL = 36.0
_SERIES_TERMS = 64
# The tight conversion is numerically unstable as alpha -> 1 (dp-accounting uses 1.01).
_TIGHT_MIN_ORDER = 1.01
_CONVERSIONS = ("tight", "classic")


# ---------------------------------------------------------------------------------------
# Formulas typed once, in sympy, and lambdified
# ---------------------------------------------------------------------------------------

_ALPHA, _DELTA, _LAMBDA = sp.symbols("alpha delta lambda_val", positive=True)
_T = sp.Symbol("t", nonnegative=True, integer=True)
# Tight RDP-to-DP conversion term (Canonne et al. 2020 Prop. 12; Fed-LTP eq. 22):
# epsilon = rdp + this.
_SYM_TIGHT_CONVERSION = (sp.log(1 / _DELTA) - sp.log(_ALPHA)) / (_ALPHA - 1) + sp.log(
    1 - 1 / _ALPHA
)
# Fed-LTP eq. 23-24 as printed: the validation term after t + 1 rounds.
_SYM_RHO_V_PUBLISHED = (_T + 1) * _ALPHA * (_ALPHA - 1) / (2 * _LAMBDA**2)
_tight_conversion = sp.lambdify((_ALPHA, _DELTA), _SYM_TIGHT_CONVERSION, "numpy")
_rho_v_published = sp.lambdify((_T, _ALPHA, _LAMBDA), _SYM_RHO_V_PUBLISHED, "numpy")


def _orders(orders, func):
    return real_array("orders", orders, func=func, low=1, low_inclusive=False)


def _noise(name, value, func):
    return check_real(name, value, func=func, low=0, low_inclusive=False)


def _delta(value, func):
    return check_real(
        "delta", value, func=func, low=0, high=1, low_inclusive=False, high_inclusive=False
    )


# ---------------------------------------------------------------------------------------
# Mechanisms
# ---------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------
# zCDP
# ---------------------------------------------------------------------------------------


def zcdp_from_pure_dp(epsilon):
    r""":math:`\epsilon`-DP implies :math:`\tfrac12\epsilon^2`-zCDP.

    Bun and Steinke 2016, Prop. 1.4; Fed-LTP Lemma 1.

    Examples
    --------
    >>> zcdp_from_pure_dp(2.0)
    2.0
    """
    eps = real_array("epsilon", epsilon, func="zcdp_from_pure_dp", low=0)
    return as_output(eps**2 / 2)


def zcdp_gaussian(noise_multiplier):
    r"""The Gaussian mechanism is :math:`1/(2\sigma^2)`-zCDP (Bun and Steinke 2016, Prop. 1.6).

    Examples
    --------
    >>> zcdp_gaussian(1.0)
    0.5
    """
    sigma = real_array(
        "noise_multiplier", noise_multiplier, func="zcdp_gaussian", low=0, low_inclusive=False
    )
    return as_output(1 / (2 * sigma**2))


def rdp_from_zcdp(rho, orders):
    r""":math:`\rho`-zCDP means :math:`D_\alpha \le \alpha\rho`.

    Bun and Steinke 2016, Def. 1.1.

    Examples
    --------
    >>> rdp_from_zcdp(0.5, 4.0)
    2.0
    """
    func = "rdp_from_zcdp"
    rho = real_array("rho", rho, func=func, low=0)
    return as_output(rho * _orders(orders, func))


# ---------------------------------------------------------------------------------------
# Composition and conversion
# ---------------------------------------------------------------------------------------


def compose(*rdp_curves, counts=None):
    r"""Adaptive composition: RDP curves on the same orders add (Mironov 2017, Prop. 1).

    ``counts[i]`` repetitions of curve ``i`` (default 1 each).

    Examples
    --------
    >>> compose([1.0, 2.0], [0.5, 0.5], counts=[2, 1])
    array([2.5, 4.5])
    """
    func = "compose"
    if not rdp_curves:
        raise ValueError("compose needs at least one RDP curve. Got none instead.")
    if counts is None:
        counts = [1] * len(rdp_curves)
    if len(counts) != len(rdp_curves):
        raise ValueError(
            f"The 'counts' parameter of compose must have one entry per curve "
            f"({len(rdp_curves)}). Got {len(counts)} instead."
        )
    total = 0.0
    for curve, count in zip(rdp_curves, counts, strict=True):
        n = check_int("counts", count, func=func, low=0)
        arr = np.asarray(curve, dtype=float)
        if np.isnan(arr).any() or (arr < 0).any():
            raise ValueError(
                f"The 'rdp_curves' parameter of {func} must hold values in [0, inf]. "
                f"Got {arr!r} instead."
            )
        total = total + n * arr
    return as_output(total)


def _rdp_pair(orders, rdp, func):
    orders = np.atleast_1d(_orders(orders, func)).astype(float)
    rdp = np.atleast_1d(np.asarray(rdp, dtype=float))
    if rdp.shape != orders.shape:
        raise ValueError(
            f"The 'rdp' parameter of {func} must have the shape of 'orders' {orders.shape}. "
            f"Got {rdp.shape} instead."
        )
    if np.isnan(rdp).any():
        raise ValueError(f"The 'rdp' parameter of {func} must not contain NaN.")
    return orders, rdp


def epsilon_from_rdp(orders, rdp, delta, *, conversion="tight"):
    r"""Best :math:`(\epsilon, \delta)`-DP from an RDP curve; returns ``(epsilon, order)`` in nats.

    ``conversion="classic"``:
    :math:`\epsilon = \min_\alpha \mathrm{rdp}(\alpha) + \log(1/\delta)/(\alpha-1)`
    (Mironov 2017, Prop. 3). ``conversion="tight"``: Canonne, Kamath, Steinke 2020
    (Prop. 12) / Balle et al. 2020 (Thm. 21),
    :math:`\epsilon = \min_\alpha \mathrm{rdp} + \log(1-1/\alpha)
    - (\log\delta+\log\alpha)/(\alpha-1)`,
    for :math:`\alpha > 1.01`, and 0 when :math:`1 - e^{-\mathrm{rdp}} < \delta^2` (the KL
    bound :math:`\delta \le \sqrt{1-e^{-\mathrm{KL}}}`), exactly as dp-accounting's
    ``compute_epsilon``. The result is clipped at 0.

    Examples
    --------
    >>> eps, order = epsilon_from_rdp([2.0], [1.0], math.exp(-1), conversion="classic")
    >>> round(eps, 12), order  # 1 + log(e) / (2 - 1)
    (2.0, 2.0)
    """
    func = "epsilon_from_rdp"
    orders, rdp = _rdp_pair(orders, rdp, func)
    delta = _delta(delta, func)
    check_choice("conversion", conversion, func=func, choices=_CONVERSIONS)
    if conversion == "classic":
        eps = rdp + math.log(1 / delta) / (orders - 1)
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            eps = rdp + _tight_conversion(orders, delta)
        eps = np.where(orders > _TIGHT_MIN_ORDER, eps, np.inf)
        eps = np.where(delta**2 + np.expm1(-rdp) > 0, 0.0, eps)
    idx = int(np.argmin(eps))
    return max(0.0, float(eps[idx])), float(orders[idx])


def delta_from_rdp(orders, rdp, epsilon, *, conversion="tight"):
    r"""Best delta for a target epsilon (nats) from an RDP curve; returns ``(delta, order)``.

    Inverse of ``epsilon_from_rdp``: ``"classic"``
    :math:`\delta = \min_\alpha e^{(\alpha-1)(\mathrm{rdp}-\epsilon)}`; ``"tight"``
    :math:`\log\delta = \min_\alpha (\alpha-1)(\mathrm{rdp}-\epsilon+\log(1-1/\alpha)) - \log\alpha`
    (:math:`\alpha > 1.01`) together with :math:`\delta \le \sqrt{1-e^{-\mathrm{rdp}}}`
    (as dp-accounting's ``compute_delta``). Clipped at 1.

    Examples
    --------
    >>> delta, order = delta_from_rdp([2.0], [1.0], 2.0, conversion="classic")
    >>> round(delta - math.exp(-1), 12), order  # exp((2 - 1)(1 - 2))
    (0.0, 2.0)
    """
    func = "delta_from_rdp"
    orders, rdp = _rdp_pair(orders, rdp, func)
    eps = check_real("epsilon", epsilon, func=func, low=0)
    check_choice("conversion", conversion, func=func, choices=_CONVERSIONS)
    with np.errstate(divide="ignore", invalid="ignore"):
        if conversion == "classic":
            log_delta = (orders - 1) * (rdp - eps)
        else:
            kl = np.where(rdp > 0, 0.5 * np.log1p(-np.exp(-rdp)), -np.inf)
            bound = (orders - 1) * (rdp - eps + np.log1p(-1 / orders)) - np.log(orders)
            log_delta = np.where(orders > _TIGHT_MIN_ORDER, np.minimum(kl, bound), kl)
    idx = int(np.argmin(log_delta))
    return min(1.0, math.exp(float(log_delta[idx]))), float(orders[idx])


def epsilon_sampled_gaussian(
    q, noise_multiplier, steps, delta, *, orders=DEFAULT_ORDERS, conversion="tight"
):
    """DP-SGD accountant: ``steps`` Poisson-sampled Gaussian steps; ``(epsilon, order)`` in nats.

    Examples
    --------
    >>> eps, _ = epsilon_sampled_gaussian(1.0, 1.0, 1, 1e-5, orders=(2.0,), conversion="classic")
    >>> round(eps - (1 + math.log(1e5)), 9)  # one Gaussian step: 2/2 + log(1/delta)
    0.0
    """
    func = "epsilon_sampled_gaussian"
    steps = check_int("steps", steps, func=func, low=0)
    curve = np.asarray(rdp_sampled_gaussian(orders, q=q, noise_multiplier=noise_multiplier))
    return epsilon_from_rdp(orders, steps * np.atleast_1d(curve), delta, conversion=conversion)


# ---------------------------------------------------------------------------------------
# Fed-LTP Theorem 1
# ---------------------------------------------------------------------------------------


def fedltp_rho_s_published(t, *, q, noise_multiplier, alpha):
    r"""Eq. 21 of Fed-LTP as printed (nats).

    .. math:: \rho_s^t = \frac{t+1}{\alpha-1}\log\mathbb E_{z\sim\mu_0}
              \Big[\Big(1-\tilde q+\tilde q\frac{\mu_1(z)}{\mu_0(z)}\Big)^\alpha\Big],
              \quad \mu_1 = \tilde qN(1,\sigma^2)+(1-\tilde q)N(0,\sigma^2).

    Since :math:`1-\tilde q+\tilde q\mu_1/\mu_0 = 1-\tilde q^2+\tilde q^2 N(1,\sigma^2)/\mu_0`,
    this equals :math:`(t+1)` times the sampled-Gaussian RDP at rate :math:`\tilde q^2`.

    Examples
    --------
    >>> fedltp_rho_s_published(0, q=1.0, noise_multiplier=1.0, alpha=2.0)  # q^2 = 1: Gaussian
    1.0
    """
    func = "fedltp_rho_s_published"
    t = check_int("t", t, func=func, low=0)
    q = check_real("q", q, func=func, low=0, high=1)
    return as_output(
        (t + 1) * np.asarray(rdp_sampled_gaussian(alpha, q=q**2, noise_multiplier=noise_multiplier))
    )


def fedltp_rho_v_published(t, *, lambda_val, alpha):
    r"""Eq. 23-24 of Fed-LTP as printed (nats).

    .. math:: \rho_v^t = (t+1)\alpha(\alpha-1)/(2\lambda_{val}^2)


    Deviation: Lemma 1 with :math:`\epsilon_{val} = 1/\lambda_{val}` gives
    :math:`D_\alpha \le \alpha/(2\lambda_{val}^2)` per round; the factor :math:`\alpha-1` comes
    from the misprinted Definition 4 (module docstring).

    Examples
    --------
    >>> fedltp_rho_v_published(0, lambda_val=1.0, alpha=2.0)  # 2 * 1 / 2
    1.0
    """
    func = "fedltp_rho_v_published"
    t = check_int("t", t, func=func, low=0)
    lam = _noise("lambda_val", lambda_val, func)
    a = _orders(alpha, func)
    return as_output(_rho_v_published(t, a, lam))


def fedltp_epsilon_published(t, *, q, noise_multiplier, lambda_val, delta, alpha):
    r"""Fed-LTP Theorem 1, eq. 20, exactly as printed, at the given order(s) (nats).

    .. math:: \epsilon^t = \rho_s^t + \frac{(t+1)\alpha(\alpha-1)}{2\lambda_{val}^2}
              + \frac{\log(1/\delta) - \log\alpha}{\alpha-1} + \log\Big(1-\frac1\alpha\Big)

    Parameters
    ----------
    t : int >= 0, the 0-based round index (``t + 1`` rounds composed).
    q : sampling rate :math:`\tilde q` of the local mini-batch, in [0, 1].
    noise_multiplier : :math:`\sigma` of Algorithm 2 (noise std / clipping norm C).
    lambda_val : Laplace scale of the validation scores (eq. 17, sensitivity 1).
    delta : in (0, 1).
    alpha : order(s) > 1.

    Examples
    --------
    >>> kw = {"q": 1.0, "noise_multiplier": 1.0, "lambda_val": 1.0, "delta": 0.25}
    >>> round(fedltp_epsilon_published(0, alpha=2.0, **kw), 12)  # 1 + 1 + log 4 - log 2 + log(1/2)
    2.0
    """
    func = "fedltp_epsilon_published"
    delta = _delta(delta, func)
    a = _orders(alpha, func)
    rho_s = np.asarray(fedltp_rho_s_published(t, q=q, noise_multiplier=noise_multiplier, alpha=a))
    rho_v = np.asarray(fedltp_rho_v_published(t, lambda_val=lambda_val, alpha=a))
    return as_output(rho_s + rho_v + _tight_conversion(a, delta))


def fedltp_epsilon_published_optimal(
    t, *, q, noise_multiplier, lambda_val, delta, orders=DEFAULT_ORDERS
):
    """Eq. 20 as printed, minimised over ``orders``; returns ``(epsilon, order)`` in nats.

    Examples
    --------
    >>> kw = {"q": 1.0, "noise_multiplier": 1.0, "lambda_val": 1.0, "delta": 0.25}
    >>> eps, order = fedltp_epsilon_published_optimal(0, orders=(2.0,), **kw)
    >>> round(eps, 12), order
    (2.0, 2.0)
    """
    a = _orders(orders, "fedltp_epsilon_published_optimal")
    eps = np.atleast_1d(
        fedltp_epsilon_published(
            t,
            q=q,
            noise_multiplier=noise_multiplier,
            lambda_val=lambda_val,
            delta=delta,
            alpha=a,
        )
    )
    idx = int(np.argmin(eps))
    return float(eps[idx]), float(np.atleast_1d(a)[idx])


def fedltp_epsilon_corrected(
    t,
    *,
    q,
    noise_multiplier,
    lambda_val,
    delta,
    steps_per_round=1,
    orders=DEFAULT_ORDERS,
    validation="exact",
    conversion="tight",
):
    r"""Corrected Fed-LTP accountant after ``t + 1`` rounds; returns ``(epsilon, order)`` in nats.

    RDP per round: ``steps_per_round`` Poisson-sampled Gaussian steps at rate ``q``
    (Mironov et al. 2019, with :math:`\mu_1 = N(1,\sigma^2)`) plus one Laplace validation
    release of scale ``lambda_val``, either ``validation="exact"`` (Mironov 2017 Prop. 6)
    or ``validation="zcdp"`` (Lemma 1 with the correct :math:`D_\alpha\le\alpha\rho`:
    :math:`\alpha/(2\lambda_{val}^2)`). Composition over rounds, then ``epsilon_from_rdp``.
    Summing the training and validation RDP is conservative when the two datasets are
    disjoint (parallel composition would take the maximum).

    Examples
    --------
    >>> eps, order = fedltp_epsilon_corrected(
    ...     0, q=0.0, noise_multiplier=1.0, lambda_val=1.0, delta=math.exp(-1),
    ...     orders=(2.0,), validation="zcdp", conversion="classic")
    >>> round(eps, 12), order  # validation only: 2 / 2 + log(e) / (2 - 1)
    (2.0, 2.0)
    """
    func = "fedltp_epsilon_corrected"
    t = check_int("t", t, func=func, low=0)
    steps = check_int("steps_per_round", steps_per_round, func=func, low=1)
    lam = _noise("lambda_val", lambda_val, func)
    check_choice("validation", validation, func=func, choices=("exact", "zcdp"))
    a = np.atleast_1d(_orders(orders, func))
    train = np.atleast_1d(rdp_sampled_gaussian(a, q=q, noise_multiplier=noise_multiplier))
    if validation == "exact":
        val = np.atleast_1d(rdp_laplace(a, lam))
    else:
        rho = zcdp_from_pure_dp(1 / lam)
        val = np.atleast_1d(rdp_from_zcdp(rho, a))
    total = (t + 1) * (steps * train + val)
    return epsilon_from_rdp(a, total, delta, conversion=conversion)


def fedltp_epsilon_published_expr():
    r"""Eq. 20-21 as printed, in sympy; the expectation of eq. 21 is an unevaluated integral.

    Symbols: ``t``, ``alpha``, ``q`` (:math:`\tilde q`), ``sigma``, ``lambda_val``, ``delta``
    and the integration variable ``z``.

    Examples
    --------
    >>> sorted(s.name for s in fedltp_epsilon_published_expr().free_symbols)
    ['alpha', 'delta', 'lambda_val', 'q', 'sigma', 't']
    """
    z = sp.Symbol("z", real=True)
    q, sigma = sp.symbols("q sigma", positive=True)
    t, alpha = _T, _ALPHA

    def normal(mean):
        return sp.exp(-((z - mean) ** 2) / (2 * sigma**2)) / (sigma * sp.sqrt(2 * sp.pi))

    mu0 = normal(0)
    mu1 = q * normal(1) + (1 - q) * mu0
    expectation = sp.Integral(mu0 * (1 - q + q * mu1 / mu0) ** alpha, (z, -sp.oo, sp.oo))
    rho_s = (t + 1) / (alpha - 1) * sp.log(expectation)
    return rho_s + _SYM_RHO_V_PUBLISHED + _SYM_TIGHT_CONVERSION
