"""Huang et al.'s Appendices A-C: probability tools, concentration thresholds, Claim C.4."""

from __future__ import annotations

import math  # noqa: F401 (the doctests use it)

import numpy as np
from scipy import special

from pruneleak.bounds._vector import as_output, real_array
from pruneleak.bounds.equivalence._common import _count, _delta_small, _log_ratio, _positive
from pruneleak.bounds.validation import check_broadcast, check_finite_result

# Lemma A.5: Pr[|X| <= t] <= (4/5) t / sigma (folklore; exact sup is sqrt(2/pi) = 0.7979).
LEMMA_A5_CONSTANT = 4 / 5
# Lemma B.1: threshold 10 ||x||_2 a (sqrt(a/sigma) + 1) log(1/delta), delta in (0, 1/10).
LEMMA_B1_CONSTANT = 10.0
# Lemma B.2: threshold 1000 m ||x||_2^2 (sigma^2 + a^2) log^3(m/delta).
LEMMA_B2_CONSTANT = 1000.0
# Lemma B.3: 2 sigma_1 ||e||_2 sqrt(log(d/delta)) + 1 * sigma_1 ||e||_inf log^1.5(d/delta).
LEMMA_B3_CONSTANTS = (2.0, 1.0)
# Lemma B.4: 10^4 sigma_1 sigma_2 sqrt(d) log^2(d/delta).
LEMMA_B4_CONSTANT = 1e4
# Lemma B.5 part 1, with r = a / sigma_A and L = log(m/delta):
# C = r^2/6 - (2 r^3/9)^(1/2) sqrt(L) - (2 r/3) L.
LEMMA_B5_MEAN_CONSTANT = 1 / 6
LEMMA_B5_SQRT_CONSTANT = 2 / 9
LEMMA_B5_LINEAR_CONSTANT = 2 / 3
# Lemma B.5 part 2: floor 0.02 a^2 / sigma_A once a / sigma_A >= 20 log(m/delta).
LEMMA_B5_PART2_FLOOR = 0.02
LEMMA_B5_PART2_RATIO = 20.0


# ---------------------------------------------------------------------------------------
# Appendix A: probability tools
# ---------------------------------------------------------------------------------------


def lemma_a4_gaussian_tail(t, sigma):
    r"""Lemma A.4: :math:`\Pr[X \ge t] \le \exp(-t^2/2\sigma^2)`, :math:`X\sim N(0,\sigma^2)`.

    Examples
    --------
    >>> lemma_a4_gaussian_tail(2.0, 1.0) == math.exp(-2)
    True
    """
    func = "lemma_a4_gaussian_tail"
    t = real_array("t", t, func=func, low=0)
    sigma = _positive("sigma", sigma, func)
    check_broadcast(func, t=t, sigma=sigma)
    with np.errstate(over="ignore"):  # t / sigma = inf: the bound is exp(-inf) = 0
        return as_output(np.exp(-0.5 * (t / sigma) ** 2))


def lemma_a5_small_ball(t, sigma):
    r"""Lemma A.5: :math:`\Pr[|X| \le t] \le \tfrac45\,t/\sigma`.

    True: the density is at most :math:`1/(\sqrt{2\pi}\sigma)`, and :math:`2/\sqrt{2\pi} < 4/5`.

    Examples
    --------
    >>> lemma_a5_small_ball(0.5, 2.0)  # (4/5) (1/4)
    0.2
    """
    func = "lemma_a5_small_ball"
    t = real_array("t", t, func=func, low=0)
    sigma = _positive("sigma", sigma, func)
    check_broadcast(func, t=t, sigma=sigma)
    with np.errstate(over="ignore"):
        value = LEMMA_A5_CONSTANT * (t / sigma)
    return as_output(check_finite_result(value, func=func, t=t, sigma=sigma))


def lemma_a6_chi2_deviation(k, t, sigma=1.0):
    r"""Lemma A.6 (Laurent-Massart): the two deviation thresholds for :math:`X = \sigma^2\chi^2_k`.

    Returns ``(upper, lower)``:
    :math:`\Pr[X - k\sigma^2 \ge (2\sqrt{kt}+2t)\sigma^2] \le e^{-t}` and
    :math:`\Pr[k\sigma^2 - X \ge 2\sqrt{kt}\,\sigma^2] \le e^{-t}`.

    Examples
    --------
    >>> lemma_a6_chi2_deviation(4, 1.0)  # (2 sqrt(4) + 2, 2 sqrt(4))
    (6.0, 4.0)
    """
    func = "lemma_a6_chi2_deviation"
    k = _positive("k", k, func)
    t = real_array("t", t, func=func, low=0)
    sigma = _positive("sigma", sigma, func)
    check_broadcast(func, k=k, t=t, sigma=sigma)
    with np.errstate(over="ignore"):
        root = 2 * np.sqrt(k) * np.sqrt(t)
        upper, lower = (root + 2 * t) * sigma * sigma, root * sigma * sigma
    check_finite_result(upper, func=func, k=k, t=t, sigma=sigma)
    return as_output(upper), as_output(lower)


# ---------------------------------------------------------------------------------------
# Appendix B: concentration
# ---------------------------------------------------------------------------------------


def lemma_b1_threshold(x_norm2, a, sigma, delta):
    r"""Lemma B.1: the threshold exceeded by :math:`|\langle u, x\rangle|` w.p. <= delta.

    .. math:: 10\|x\|_2\,a(\sqrt{a/\sigma}+1)\log(1/\delta),

    :math:`u_i = y_i 1\{|y_i|\le a\}`, :math:`y_i\sim\mathcal N(0,\sigma^2)`,
    :math:`\delta\in(0,1/10)`.

    Examples
    --------
    >>> round(lemma_b1_threshold(1.0, 1.0, 1.0, math.exp(-3)), 9)  # 10 * 1 * 2 * 3
    60.0
    """
    func = "lemma_b1_threshold"
    x_norm2 = real_array("x_norm2", x_norm2, func=func, low=0)
    a, sigma = _positive("a", a, func), _positive("sigma", sigma, func)
    delta = _delta_small("delta", delta, func)
    inputs = {"x_norm2": x_norm2, "a": a, "sigma": sigma, "delta": delta}
    check_broadcast(func, **inputs)
    with np.errstate(over="ignore", invalid="ignore"):
        value = LEMMA_B1_CONSTANT * x_norm2 * a * (np.sqrt(a) / np.sqrt(sigma) + 1) * -np.log(delta)
    return as_output(check_finite_result(value, func=func, **inputs))


def lemma_b2_threshold(m, x_norm2, a, sigma, delta):
    r"""Lemma B.2: the threshold exceeded by :math:`|\|Ax\|^2 - \mathbb{E}\|Ax\|^2|` w.p. <= delta.

    .. math:: 1000\,m\|x\|_2^2(\sigma^2+a^2)\log^3(m/\delta)

    Examples
    --------
    >>> round(lemma_b2_threshold(1, 1.0, 1.0, 1.0, math.exp(-3)), 6)  # 1000 * 2 * 3^3
    54000.0
    """
    func = "lemma_b2_threshold"
    m = _count("m", m, func)
    x_norm2 = real_array("x_norm2", x_norm2, func=func, low=0)
    a, sigma = _positive("a", a, func), _positive("sigma", sigma, func)
    delta = _delta_small("delta", delta, func)
    inputs = {"m": m, "x_norm2": x_norm2, "a": a, "sigma": sigma, "delta": delta}
    check_broadcast(func, **inputs)
    with np.errstate(over="ignore", invalid="ignore"):
        log_term = _log_ratio(m, delta)
        value = LEMMA_B2_CONSTANT * m * (x_norm2 * np.hypot(sigma, a)) ** 2 * log_term**3
    return as_output(check_finite_result(value, func=func, **inputs))


def lemma_b3_threshold(d, sigma1, e_norm2, e_norm_inf, delta):
    r"""Lemma B.3: the threshold exceeded by :math:`|\langle u,e\rangle|` with probability <= delta.

    .. math:: 2\sigma_1\|e\|_2\sqrt{\log(d/\delta)} + \sigma_1\|e\|_\infty\log^{1.5}(d/\delta)

    Examples
    --------
    >>> round(lemma_b3_threshold(1, 1.0, 1.0, 1.0, math.exp(-4)), 9)  # 2 * 2 + 4^1.5
    12.0
    """
    func = "lemma_b3_threshold"
    d = _count("d", d, func)
    sigma1 = _positive("sigma1", sigma1, func)
    e_norm2 = real_array("e_norm2", e_norm2, func=func, low=0)
    e_norm_inf = real_array("e_norm_inf", e_norm_inf, func=func, low=0)
    delta = _delta_small("delta", delta, func)
    inputs = {"d": d, "sigma1": sigma1, "e_norm2": e_norm2, "e_norm_inf": e_norm_inf}
    check_broadcast(func, delta=delta, **inputs)
    log_term = _log_ratio(d, delta)
    c2, cinf = LEMMA_B3_CONSTANTS
    with np.errstate(over="ignore", invalid="ignore"):
        value = sigma1 * (c2 * e_norm2 * np.sqrt(log_term) + cinf * e_norm_inf * log_term**1.5)
    return as_output(check_finite_result(value, func=func, delta=delta, **inputs))


def lemma_b4_threshold(d, sigma1, sigma2, delta):
    r"""Lemma B.4: the threshold exceeded by :math:`|\langle u,e\rangle|` w.p. <= delta.

    .. math:: 10^4\sigma_1\sigma_2\sqrt d\log^2(d/\delta)

    Examples
    --------
    >>> round(lemma_b4_threshold(4, 1.0, 1.0, 4 * math.exp(-5)), 6)  # 1e4 * 2 * 5^2
    500000.0
    """
    func = "lemma_b4_threshold"
    d = _count("d", d, func)
    sigma1, sigma2 = _positive("sigma1", sigma1, func), _positive("sigma2", sigma2, func)
    delta = _delta_small("delta", delta, func)
    inputs = {"d": d, "sigma1": sigma1, "sigma2": sigma2, "delta": delta}
    check_broadcast(func, **inputs)
    with np.errstate(over="ignore"):
        value = LEMMA_B4_CONSTANT * sigma1 * sigma2 * np.sqrt(d) * _log_ratio(d, delta) ** 2
    return as_output(check_finite_result(value, func=func, **inputs))


def lemma_b5_constant_c(a, sigma_a, m, delta):
    r"""Lemma B.5: :math:`C` in :math:`\Pr[\forall i, (\bar Ax)_i \ge \sigma_A C] > 1-\delta`

    .. math:: C = \frac{a^2}{6\sigma_A^2}
              - \Big(\frac{2a^3}{9\sigma_A^3}\Big)^{1/2}\sqrt{\log(m/\delta)}
              - \frac{2a}{3\sigma_A}\log(m/\delta)

    for :math:`\bar A_{ij} = y_{ij}1\{0\le y_{ij}\le a\}`, :math:`x \ge 0`, :math:`\sum_j x_j = 1`.
    As published. Deviation: the proof's mean bound
    :math:`\mathbb E[\bar A_{ij}] \ge a^2/(6\sigma_A)` holds only for
    :math:`a/\sigma_A \lesssim 0.86` (exact mean:
    ``truncated_gaussian_moment(1, a, sigma_a, one_sided=True)``), so for larger
    :math:`a/\sigma_A` the floor :math:`\sigma_A C` can exceed :math:`\max_i (\bar A x)_i`.

    Examples
    --------
    >>> L = 4.0  # a / sigma_A = 3, log(m / delta) = 4: 9/6 - sqrt(6 L) - 2 L
    >>> round(lemma_b5_constant_c(3.0, 1.0, 1, math.exp(-L)) - (1.5 - math.sqrt(6 * L) - 2 * L), 9)
    0.0
    """
    func = "lemma_b5_constant_c"
    a, sigma_a = _positive("a", a, func), _positive("sigma_a", sigma_a, func)
    m = _count("m", m, func)
    delta = _delta_small("delta", delta, func)
    inputs = {"a": a, "sigma_a": sigma_a, "m": m, "delta": delta}
    check_broadcast(func, **inputs)
    log_term = _log_ratio(m, delta)
    with np.errstate(over="ignore", invalid="ignore"):
        r = a / sigma_a
        value = (
            LEMMA_B5_MEAN_CONSTANT * r**2
            - r * np.sqrt(LEMMA_B5_SQRT_CONSTANT * r) * np.sqrt(log_term)
            - LEMMA_B5_LINEAR_CONSTANT * r * log_term
        )
    return as_output(check_finite_result(value, func=func, **inputs))


def lemma_b5_part2_floor(a, sigma_a, m, delta):
    r"""Lemma B.5 part 2: the floor :math:`0.02\,a^2/\sigma_A` on every :math:`(\bar A x)_i`.

    Stated for :math:`a/\sigma_A \ge 20\log(m/\delta)`; raises ValueError outside that
    regime. As published, and false: the lemma's own
    :math:`x` has :math:`\sum_j x_j = 1` and :math:`0 \le \bar A_{ij} \le a`, so
    :math:`(\bar A x)_i` has mean at most :math:`\sigma_A/\sqrt{2\pi}` whereas the floor is at
    least :math:`0.02 \cdot 46^2\,\sigma_A \approx 42\,\sigma_A` (claims registry: Monte Carlo).

    Examples
    --------
    >>> lemma_b5_part2_floor(100.0, 1.0, 1, 0.09)  # 0.02 * 100^2
    200.0
    """
    func = "lemma_b5_part2_floor"
    a, sigma_a = _positive("a", a, func), _positive("sigma_a", sigma_a, func)
    m = _count("m", m, func)
    delta = _delta_small("delta", delta, func)
    inputs = {"a": a, "sigma_a": sigma_a, "m": m, "delta": delta}
    check_broadcast(func, **inputs)
    with np.errstate(over="ignore"):
        ratio = a / sigma_a
        required = LEMMA_B5_PART2_RATIO * _log_ratio(m, delta)
        if np.any(ratio < required):
            raise ValueError(
                f"The parameters 'a', 'sigma_a' of {func} must satisfy a / sigma_a >= "
                f"20 log(m / delta) (the lemma's regime). Got a / sigma_a = "
                f"{np.min(ratio):g} < {np.max(required):g} instead."
            )
        value = LEMMA_B5_PART2_FLOOR * a * ratio
    return as_output(check_finite_result(value, func=func, **inputs))


# ---------------------------------------------------------------------------------------
# Appendix C and D
# ---------------------------------------------------------------------------------------


def claim_c4_variance_published(a):
    r"""Claim C.4 as published: :math:`1 - \sqrt{2/\pi}\,a e^{-a^2/2}/\mathrm{erf}(a/\sqrt2)`.

    Stated as :math:`\mathrm{Var}[f(x)]` for :math:`f(x) = x1\{|x|\le a\}`,
    :math:`x\sim\mathcal N(0,1)`. Deviation: that is the variance of :math:`x` *conditioned*
    on :math:`|x|\le a`; the variance of :math:`f(x)` is
    ``truncated_gaussian_moment(2, a, 1.0)``
    :math:`= \mathrm{erf}(a/\sqrt2) - \sqrt{2/\pi}\,a e^{-a^2/2}`.

    The printed expression cancels for small ``a`` (it rounds to 0, or below, once
    :math:`a^2/3` is under the float resolution); for :math:`a < 1` it is evaluated as the
    same conditional variance
    :math:`\mathbb E[x^2 1\{|x|\le a\}]/\Pr[|x|\le a]
    = \tfrac{a^2}{3}M(\tfrac32, \tfrac52, -\tfrac{a^2}2)/M(\tfrac12, \tfrac32, -\tfrac{a^2}2)`
    (the incomplete gamma functions of ``truncated_gaussian_moment``, DLMF 8.5.1).

    Examples
    --------
    >>> round(claim_c4_variance_published(40.0), 12)  # no truncation left: Var = 1
    1.0
    """
    a = _positive("a", a, "claim_c4_variance_published")
    with np.errstate(over="ignore", under="ignore"):
        printed = 1 - np.sqrt(2 / np.pi) * a * np.exp(-(a**2) / 2) / special.erf(a / np.sqrt(2))
        x = np.minimum(a, 1.0) ** 2 / 2
        small = x * 2 / 3 * special.hyp1f1(1.5, 2.5, -x) / special.hyp1f1(0.5, 1.5, -x)
    return as_output(np.where(a < 1, small, printed))
