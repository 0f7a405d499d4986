"""Zero-concentrated DP (Bun and Steinke 2016): from pure DP and the Gaussian, and to RDP."""

from __future__ import annotations

from bounds._vector import as_output, real_array
from bounds.accounting._common import _orders


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
