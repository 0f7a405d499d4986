"""Exact moments Huang et al.'s proofs rely on: truncated Gaussian and Laplace (references)."""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from pruneleak.bounds._vector import as_output
from pruneleak.bounds.equivalence._common import _positive
from pruneleak.bounds.validation import check_broadcast, check_finite_result, check_int

# Proof of E.2, Part 2: E[z_i^2] = 24 b_i^4 (fourth moment of Lap(0, b)), the 48 = 2 * 24.
LAPLACE_FOURTH_MOMENT = 24.0


def truncated_gaussian_moment(order, a, sigma, *, one_sided=False):
    r"""Exact truncated moment :math:`\mathbb{E}[y^k\,1\{|y| \le a\}]`, :math:`y\sim N(0,\sigma^2)`.

    With ``one_sided=True`` the indicator is :math:`1\{0 \le y \le a\}`.

    The pruned entries of :math:`\bar A` are :math:`y\,1\{|y|\le a\}` (magnitude pruning,
    Lemmas B.1/B.2) or :math:`y\,1\{0 \le y\le a\}` (folded, Lemma B.5). With
    :math:`r = a/\sigma` the moments are incomplete gamma functions:
    :math:`\int_0^a y^k \varphi_\sigma(y)\,dy = \sigma^k 2^{k/2}\Gamma(\tfrac{k+1}2)
    P(\tfrac{k+1}2, r^2/2)/(2\sqrt\pi)`; the symmetric version doubles even orders and
    vanishes for odd orders. Evaluated in logs; for :math:`r < 1` through
    :math:`\gamma(s, x) = x^s\,M(s, s+1, -x)/s` (DLMF 8.5.1) as
    :math:`\sigma^k r^{k+1} M(\tfrac{k+1}2, \tfrac{k+3}2, -r^2/2)/((k+1)\sqrt{2\pi})`, so that
    neither :math:`\sigma^k` nor a vanishing :math:`P` is formed on its own. A moment
    beyond the float range raises ValueError.

    Parameters
    ----------
    order : int, 0 to 8.
    a : float or array, truncation threshold > 0 (same unit as ``sigma``).
    sigma : float or array, standard deviation > 0.
    one_sided : bool, use :math:`1\{0\le y\le a\}` instead of :math:`1\{|y|\le a\}`.

    Examples
    --------
    >>> round(truncated_gaussian_moment(0, 40.0, 1.0), 12)  # untruncated: total mass
    1.0
    >>> round(truncated_gaussian_moment(2, 80.0, 2.0), 12)  # untruncated: the variance
    4.0
    """
    func = "truncated_gaussian_moment"
    k = check_int("order", order, func=func, low=0, high=8)
    a = _positive("a", a, func)
    sigma = _positive("sigma", sigma, func)
    check_broadcast(func, a=a, sigma=sigma)
    with np.errstate(over="ignore"):
        half = np.exp(_log_half_moment(k, np.log(a), np.log(sigma)))
    if not one_sided:
        half = 2 * half if k % 2 == 0 else np.zeros_like(half)
    return as_output(check_finite_result(half, func=func, order=k, a=a, sigma=sigma))


def _log_half_moment(k, log_a, log_sigma):
    """log of the integral of y^k phi_sigma(y) over [0, a], from log a and log sigma.

    The two branches of ``truncated_gaussian_moment`` (r = a / sigma >= 1: the regularised
    incomplete gamma function; r < 1: the Kummer form); taking logarithms as arguments lets
    callers rescale a and sigma by a power of two without forming either.
    """
    s = (k + 1) / 2
    log_r = log_a - log_sigma
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        large = (
            k / 2 * math.log(2)
            + special.gammaln(s)
            + np.log(special.gammainc(s, np.exp(2 * log_r) / 2))
            - math.log(2 * math.sqrt(math.pi))
        )
        r = np.exp(np.minimum(log_r, 0.0))  # the small-r branch only reads r < 1
        small = (k + 1) * log_r + np.log(
            special.hyp1f1(s, s + 1, -(r**2) / 2) / ((k + 1) * math.sqrt(2 * math.pi))
        )
    return k * log_sigma + np.where(log_r >= 0, large, small)


def laplace_fourth_moment(scale):
    r""":math:`\mathbb{E}[X^4] = 24 b^4` for :math:`X \sim \mathrm{Lap}(0, b)` (E.2, Part 2).

    Examples
    --------
    >>> laplace_fourth_moment(1.0)
    24.0
    """
    func = "laplace_fourth_moment"
    b = _positive("scale", scale, func)
    with np.errstate(over="ignore"):
        value = LAPLACE_FOURTH_MOMENT * b**4
    return as_output(check_finite_result(value, func=func, scale=b))
