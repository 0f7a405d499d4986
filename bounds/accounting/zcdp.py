"""Zero-concentrated DP (Bun and Steinke 2016): from pure DP and the Gaussian, and to RDP."""

from __future__ import annotations

import numpy as np

from pruneleak.bounds._vector import as_output, real_array
from pruneleak.bounds.accounting._common import _orders
from pruneleak.bounds.validation import check_broadcast


def zcdp_from_pure_dp(epsilon):
    r""":math:`\epsilon`-DP implies :math:`\tfrac12\epsilon^2`-zCDP.

    Bun and Steinke 2016, Prop. 1.4; Fed-LTP Lemma 1. ``epsilon`` finite, >= 0; a rho
    beyond the float range is ``inf`` (package docstring).

    Examples
    --------
    >>> zcdp_from_pure_dp(2.0)
    2.0
    """
    eps = real_array("epsilon", epsilon, func="zcdp_from_pure_dp", low=0)
    with np.errstate(over="ignore"):
        return as_output(eps**2 / 2)


def zcdp_gaussian(noise_multiplier):
    r"""The Gaussian mechanism is :math:`1/(2\sigma^2)`-zCDP (Bun and Steinke 2016, Prop. 1.6).

    ``noise_multiplier`` :math:`\sigma \ge 0`; :math:`\sigma = 0` (no noise) gives ``inf``.

    Examples
    --------
    >>> zcdp_gaussian(1.0)
    0.5
    """
    sigma = real_array("noise_multiplier", noise_multiplier, func="zcdp_gaussian", low=0)
    with np.errstate(over="ignore", divide="ignore"):
        return as_output(0.5 / sigma / sigma)  # sigma**2 would over/underflow first


def rdp_from_zcdp(rho, orders):
    r""":math:`\rho`-zCDP means :math:`D_\alpha \le \alpha\rho`.

    Bun and Steinke 2016, Def. 1.1. ``rho`` finite, >= 0; ``orders`` > 1.

    Examples
    --------
    >>> rdp_from_zcdp(0.5, 4.0)
    2.0
    """
    func = "rdp_from_zcdp"
    rho = real_array("rho", rho, func=func, low=0)
    orders = _orders(orders, func)
    check_broadcast(func, rho=rho, orders=orders)
    with np.errstate(over="ignore"):
        return as_output(rho * orders)
