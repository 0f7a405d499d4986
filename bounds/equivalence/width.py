"""Huang et al.'s Part 2: the width m for (eps_ap, delta_ap)-closeness, published and corrected."""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize

from pruneleak.bounds._vector import as_output, real_array
from pruneleak.bounds.equivalence._common import _count, _log_ratio, _positive
from pruneleak.bounds.equivalence.moments import LAPLACE_FOURTH_MOMENT, _log_half_moment
from pruneleak.bounds.validation import (
    check_broadcast,
    check_choice,
    check_finite_array,
    check_finite_result,
    check_real,
)

# Proof of E.2, Part 2: the 48 = 2 * 24 (24 = LAPLACE_FOURTH_MOMENT, E[z_i^2] = 24 b_i^4).
PART2_CONSTANT = 48.0
PART2_B1_CONSTANT = 10.0

_PRUNINGS = ("magnitude", "folded")
#: Figure 8 of Huang et al. (arXiv:2003.01876, Sec. 4.4; the table in the text extract):
#: the mean error (1/sqrt m) ||h(x) - g(x)||_2 for sparsity k = 0.1 ... 0.9 (rows) and
#: the widths FIG8_WIDTHS (columns), as published.
FIG8_WIDTHS = (10, 20, 50, 100, 200, 500, 1000, 1500)
FIG8_ERROR = np.array(
    [
        [0.0692, 0.0289, 0.0270, 0.0225, 0.0166, 0.0126, 0.0108, 0.0092],
        [0.0688, 0.0277, 0.0268, 0.0219, 0.0170, 0.0128, 0.0109, 0.0095],
        [0.0740, 0.0266, 0.0275, 0.0218, 0.0172, 0.0128, 0.0107, 0.0088],
        [0.0641, 0.0245, 0.0256, 0.0213, 0.0156, 0.0116, 0.0105, 0.0095],
        [0.0628, 0.0204, 0.0284, 0.0191, 0.0149, 0.0114, 0.0105, 0.0085],
        [0.0623, 0.0224, 0.0309, 0.0214, 0.0146, 0.0120, 0.0103, 0.0079],
        [0.0564, 0.0204, 0.0307, 0.0207, 0.0151, 0.0111, 0.0094, 0.0074],
        [0.0450, 0.0303, 0.0301, 0.0198, 0.0133, 0.0096, 0.0074, 0.0065],
        [0.0305, 0.0249, 0.0210, 0.0140, 0.0119, 0.0079, 0.0056, 0.0053],
    ]
)
# required_width can exceed 2^53 (it rounds the root up there): widths up to the float range.
_MAX_WIDTH = int(np.finfo(float).max)


def _log_part2_constant(eps_ap, delta_ap, a, sigma, sigma_a):
    """log K of Part 2's condition m >= K log^4(m / delta_ap), summed in logs (K itself
    overflows for a small eps_ap or a large a / sigma_a)."""
    log_r = math.log(a) - math.log(sigma_a)
    log_b1 = math.log(PART2_B1_CONSTANT) + log_r + np.logaddexp(0.0, log_r / 2)  # 10 r (sqrt r + 1)
    log_s, log_sa = math.log(sigma), math.log(sigma_a)
    return float(
        -4 * math.log(eps_ap)
        + math.log(-math.log(delta_ap))
        + math.log(PART2_CONSTANT)
        + 4 * log_b1
        + np.logaddexp(
            4 * (log_s + log_sa), log_s + 2 * log_sa
        )  # sigma^4 sigma_A^4 + sigma sigma_A^2
    )


def _part2_rhs(log_k, m, delta_ap):
    """K log^4(m / delta_ap): the right-hand side of Part 2's width condition."""
    with np.errstate(over="ignore"):
        return np.exp(log_k + 4 * np.log(_log_ratio(m, delta_ap)))


def _check_part2(func, eps_ap, delta_ap, a, sigma, sigma_a):
    """The validated arguments of Part 2, by name."""
    positive = {"low": 0, "low_inclusive": False}
    return {
        "eps_ap": check_real("eps_ap", eps_ap, func=func, **positive),
        "delta_ap": check_real(
            "delta_ap", delta_ap, func=func, high=1, high_inclusive=False, **positive
        ),
        "a": check_real("a", a, func=func, **positive),
        "sigma": check_real("sigma", sigma, func=func, **positive),
        "sigma_a": check_real("sigma_a", sigma_a, func=func, **positive),
    }


def part2_width_rhs(m, *, eps_ap, delta_ap, a, sigma, sigma_a):
    r"""Right-hand side of Part 2's width condition (proof of Theorem E.2), as published.

    .. math:: m \ge \epsilon^{-4}\log(1/\delta)
              \Big(48\big(10\tfrac{a}{\sigma_A}(\sqrt{a/\sigma_A}+1)\log(m/\delta)\big)^4\Big)
              (\sigma^4\sigma_A^4 + \sigma\sigma_A^2)

    with :math:`\epsilon = \epsilon_{ap}`, :math:`\delta = \delta_{ap}`. ``m`` may be an array
    of integer widths up to the float range; a value beyond it raises ValueError.

    Examples
    --------
    >>> kw = {"eps_ap": 1.0, "delta_ap": math.exp(-1), "a": 1.0, "sigma": 1.0, "sigma_a": 1.0}
    >>> round(part2_width_rhs(1, **kw))  # 48 (10 * 1 * 2)^4 (1 + 1) * log^4(e)
    15360000
    """
    func = "part2_width_rhs"
    args = _check_part2(func, eps_ap, delta_ap, a, sigma, sigma_a)
    m = _count("m", m, func, high=_MAX_WIDTH)
    value = _part2_rhs(_log_part2_constant(**args), m, args["delta_ap"])
    return as_output(check_finite_result(value, func=func, m=m, **args))


def required_width(eps_ap, delta_ap, *, a, sigma, sigma_a):
    r"""Smallest width from which Part 2's condition holds for every larger width (as published).

    The condition :math:`m \ge K\log^4(m/\delta)` (``part2_width_rhs``) is implicit in
    :math:`m`. With :math:`u = \log m`, :math:`h(u) = e^{u/4} - K^{1/4}(u + \log(1/\delta))` is
    convex, so the condition holds on :math:`m \le m_1` and on :math:`m \ge m_2`; the
    returned value is :math:`m_2` (1 if the condition holds for all :math:`m\ge1`), found by
    Brent's method on the increasing branch and then checked on the integers. Note that
    the condition bounds only the fluctuation of :math:`\tfrac1m\|e-\bar Ax\|^2`, not its
    mean (package docstring, item 6): see ``required_width_corrected``.

    Returns
    -------
    int

    Examples
    --------
    >>> kw = {"a": 0.1, "sigma": 1.0, "sigma_a": 1.0}
    >>> m = required_width(0.5, 0.1, **kw)
    >>> m >= part2_width_rhs(m, eps_ap=0.5, delta_ap=0.1, **kw)
    True
    >>> m - 1 >= part2_width_rhs(m - 1, eps_ap=0.5, delta_ap=0.1, **kw)
    False
    """
    func = "required_width"
    args = _check_part2(func, eps_ap, delta_ap, a, sigma, sigma_a)
    log_k = _log_part2_constant(**args)
    log_inv_delta = -math.log(args["delta_ap"])

    def holds(m: int) -> bool:
        return m >= _part2_rhs(log_k, m, args["delta_ap"])

    def h(u: float) -> float:
        """log of e^{u/4} / (K^{1/4} (u + log 1/delta)): the condition's sign, in logs."""
        return u / 4 - log_k / 4 - math.log(u + log_inv_delta)

    u_min = max(4 - log_inv_delta, 0.0)  # h is convex with its minimum at u + log(1/delta) = 4
    if h(u_min) >= 0:
        return 1
    upper = u_min + 1.0
    for _ in range(200):  # h grows like u/4: a few doublings always suffice
        if h(upper) > 0:
            break
        upper = 2 * upper + 1
    u_root = optimize.brentq(h, u_min, upper, xtol=1e-12)
    with np.errstate(over="ignore"):
        root = float(check_finite_result(np.exp(u_root), func=func, **args))
    if root >= 2**52:  # unit steps are below float resolution: round the root up
        return math.ceil(root * (1 + 1e-12))
    m = max(1, math.floor(root))
    for _ in range(64):  # the float root is within a few units of the integer answer
        if holds(m):
            break
        m += 1
    for _ in range(64):
        if not (m > 1 and holds(m - 1) and (m - 1) > math.exp(u_min)):
            break
        m -= 1
    return m


def pruned_row_moments(x, *, a, sigma_a, pruning="magnitude"):
    r"""Exact second and fourth moments of a pruned row product :math:`(\bar Ax)_i`, fixed x.

    :math:`(\bar Ax)_i = \sum_j u_j x_j` with :math:`u_j` i.i.d. pruned weights:
    ``"magnitude"``: :math:`u = y1\{|y|\le a\}` (Theorem E.1, Lemma B.1; sign of
    :math:`\bar A = \tilde A - A` is irrelevant here), ``"folded"``:
    :math:`u = y1\{0\le y\le a\}` (Theorem E.2, Lemma B.5), :math:`y\sim\mathcal N(0,\sigma_A^2)`.
    Cumulants add: :math:`\kappa_n(\sum u_jx_j) = \kappa_n(u)\sum_j x_j^n`.

    Returns
    -------
    (float, float)

    Examples
    --------
    >>> m2, m4 = pruned_row_moments(np.array([1.0]), a=40.0, sigma_a=1.0)  # no pruning left
    >>> round(m2, 9), round(m4, 9)  # E y^2 and E y^4 of N(0, 1)
    (1.0, 3.0)
    """
    func = "pruned_row_moments"
    x = check_finite_array("x", x, func=func, ndim=1)
    a = check_real("a", a, func=func, low=0, low_inclusive=False)
    sigma_a = check_real("sigma_a", sigma_a, func=func, low=0, low_inclusive=False)
    check_choice("pruning", pruning, func=func, choices=_PRUNINGS)
    # Work with u / 2^e_u (2^e_u ~ min(a, sigma_a), the scale of u) and x / 2^e_x (exact
    # power-of-two scalings): every moment and sum below is then of order 1 or below, and
    # the results are scaled back by 2^(2e), 2^(4e) at the end (overflowing only where
    # m2, m4 themselves do).
    e_u = int(np.frexp(min(a, sigma_a))[1])
    e_x = int(np.frexp(np.max(np.abs(x)))[1]) if np.any(x) else 0
    xs = np.ldexp(x, -e_x)
    log_a, log_s = math.log(a) - e_u * math.log(2), math.log(sigma_a) - e_u * math.log(2)
    mu = []
    for k in range(5):
        half = math.exp(_log_half_moment(k, log_a, log_s))
        mu.append(half if pruning == "folded" else (2 * half if k % 2 == 0 else 0.0))
    k1 = mu[1]
    k2 = mu[2] - mu[1] ** 2
    k3 = mu[3] - 3 * mu[2] * mu[1] + 2 * mu[1] ** 3
    k4 = mu[4] - 4 * mu[3] * mu[1] - 3 * mu[2] ** 2 + 12 * mu[2] * mu[1] ** 2 - 6 * mu[1] ** 4
    c1, c2, c3, c4 = (k * np.sum(xs**n) for n, k in enumerate((k1, k2, k3, k4), start=1))
    e = e_u + e_x
    with np.errstate(over="ignore"):
        m2 = np.ldexp(c2 + c1**2, 2 * e)
        m4 = np.ldexp(c4 + 4 * c3 * c1 + 3 * c2**2 + 6 * c2 * c1**2 + c1**4, 4 * e)
    check_finite_result([m2, m4], func=func, x=x, a=a, sigma_a=sigma_a)
    return float(m2), float(m4)


def closeness_mean_square(sigma, row_m2):
    r"""The mean :math:`\mathbb E[\tfrac1m\|e - \bar Ax\|^2] = 2\sigma^2\,\mathbb E[(\bar Ax)_i^2]`.

    This is the term Part 2 drops.

    :math:`e_i - (\bar Ax)_i = \sigma(\bar Ax)_i W_i`, :math:`W_i\sim\mathrm{Lap}(0,1)`,
    :math:`\mathbb E W^2 = 2`. Closeness at level :math:`\epsilon_{ap}` needs this below
    :math:`\epsilon_{ap}^2` whatever the width.

    Examples
    --------
    >>> closeness_mean_square(2.0, 0.25)  # 2 * 2^2 * 0.25
    2.0
    """
    func = "closeness_mean_square"
    sigma = _positive("sigma", sigma, func)
    row_m2 = real_array("row_m2", row_m2, func=func, low=0)
    check_broadcast(func, sigma=sigma, row_m2=row_m2)
    with np.errstate(over="ignore"):
        value = 2 * (sigma * np.sqrt(row_m2)) ** 2
    return as_output(check_finite_result(value, func=func, sigma=sigma, row_m2=row_m2))


def required_width_corrected(eps_ap, delta_ap, *, sigma, row_m2, row_m4):
    r"""Corrected Part 2: a width sufficient for (eps_ap, delta_ap)-closeness (Definition 3.1).

    Closeness: :math:`\Pr[\tfrac1{\sqrt m}\|e-\bar Ax\|_2 \ge \epsilon_{ap}] \le \delta_{ap}`.

    The :math:`z_i = \sigma^2(\bar Ax)_i^2W_i^2` are i.i.d. over rows (fixed :math:`x`), with
    :math:`\mathbb Ez = 2\sigma^2 m_2` and :math:`\mathbb Ez^2 = 24\sigma^4 m_4`
    (``row_m2``, ``row_m4`` from ``pruned_row_moments``). Chebyshev:
    :math:`\Pr[\bar z \ge \epsilon^2] \le \mathrm{Var}\,z/(m(\epsilon^2-\mathbb Ez)^2)`, so

    .. math:: m \ge \frac{24\sigma^4 m_4 - 4\sigma^4 m_2^2}
              {\delta_{ap}(\epsilon_{ap}^2 - 2\sigma^2 m_2)^2}

    suffices when :math:`2\sigma^2 m_2 < \epsilon_{ap}^2`; otherwise no width achieves the
    closeness and ``math.inf`` is returned (the conservative side).

    Returns
    -------
    int or float (``inf``)

    Examples
    --------
    >>> required_width_corrected(2.0, 0.5, sigma=1.0, row_m2=1.0, row_m4=3.0)  # 68 / (0.5 * 2^2)
    34
    >>> required_width_corrected(0.1, 0.1, sigma=1.0, row_m2=1.0, row_m4=3.0)  # mean above eps^2
    inf
    """
    func = "required_width_corrected"
    eps_ap = check_real("eps_ap", eps_ap, func=func, low=0, low_inclusive=False)
    delta_ap = check_real(
        "delta_ap", delta_ap, func=func, low=0, high=1, low_inclusive=False, high_inclusive=False
    )
    sigma = check_real("sigma", sigma, func=func, low=0, low_inclusive=False)
    row_m2 = check_real("row_m2", row_m2, func=func, low=0)
    row_m4 = check_real("row_m4", row_m4, func=func, low=0)
    with np.errstate(over="ignore"):
        least = float(np.float64(row_m2) ** 2)  # inf beyond the range: no finite row_m4 fits
    if row_m4 < least:
        raise ValueError(
            f"The 'row_m4' parameter of {func} must be at least row_m2**2 = {least:g} (a "
            f"fourth moment is at least the squared second moment). Got {row_m4!r} instead."
        )
    with np.errstate(divide="ignore"):
        log_m2 = float(np.log(row_m2))
    log_mean = math.log(2) + 2 * math.log(sigma) + log_m2  # E z = 2 sigma^2 m2
    if log_mean >= 2 * math.log(eps_ap):
        return math.inf
    if row_m4 == 0:  # then z = 0 and any width is close
        return 1
    with np.errstate(all="ignore"):
        sigma_, m2 = np.float64(sigma), np.float64(row_m2)
        mean = 2 * sigma_ * sigma_ * m2
        gap = eps_ap * eps_ap - mean
        variance = LAPLACE_FOURTH_MOMENT * sigma_**4 * row_m4 - mean * mean
        width = variance / (delta_ap * gap * gap)
    if not (np.isfinite([mean, gap, variance, width]).all() and gap > 0):
        # an intermediate over- or underflowed: the same quotient in logs
        log_gap = 2 * math.log(eps_ap) + math.log(-math.expm1(log_mean - 2 * math.log(eps_ap)))
        log_var = (
            math.log(4)
            + 4 * math.log(sigma)
            + math.log(row_m4)
            + math.log(6 - math.exp(2 * log_m2 - math.log(row_m4)))
        )  # 24 sigma^4 m4 - 4 sigma^4 m2^2
        with np.errstate(over="ignore"):
            width = np.exp(log_var - math.log(delta_ap) - 2 * log_gap)
        inputs = {"eps_ap": eps_ap, "delta_ap": delta_ap, "sigma": sigma}
        check_finite_result(width, func=func, **inputs, row_m2=row_m2, row_m4=row_m4)
    return max(1, math.ceil(width))
