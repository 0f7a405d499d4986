"""Exact moments Huang et al.'s proofs rely on: truncated Gaussian and Laplace (references)."""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from bounds._vector import as_output
from bounds.equivalence._common import _positive
from bounds.validation import check_int

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
    vanishes for odd orders.

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
    s = (k + 1) / 2
    half = sigma**k * 2 ** (k / 2) * special.gamma(s) * special.gammainc(s, (a / sigma) ** 2 / 2)
    half = half / (2 * math.sqrt(math.pi))
    if one_sided:
        return as_output(half)
    return as_output(2 * half if k % 2 == 0 else np.zeros_like(half))


def laplace_fourth_moment(scale):
    r""":math:`\mathbb{E}[X^4] = 24 b^4` for :math:`X \sim \mathrm{Lap}(0, b)` (E.2, Part 2).

    Examples
    --------
    >>> laplace_fourth_moment(1.0)
    24.0
    """
    b = _positive("scale", scale, "laplace_fourth_moment")
    return as_output(LAPLACE_FOURTH_MOMENT * b**4)
