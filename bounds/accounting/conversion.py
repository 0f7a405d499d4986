"""Composition of RDP curves and their conversion to (epsilon, delta), and the DP-SGD accountant."""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from pruneleak.bounds._vector import as_output
from pruneleak.bounds.accounting._common import (
    _ALPHA,
    _DELTA,
    _MAX_COUNT,
    _delta,
    _noise,
    _order_list,
    _rdp_curve,
    _sampled_orders,
)
from pruneleak.bounds.accounting.rdp import rdp_sampled_gaussian
from pruneleak.bounds.validation import check_choice, check_int, check_real

# Same grid as dp-accounting's DEFAULT_RDP_ORDERS (rdp_privacy_accountant.py, v0.4),
# so that the two accountants optimise over identical orders.
DEFAULT_ORDERS = tuple(
    [1 + x / 10 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024]
)
# The tight conversion is numerically unstable as alpha -> 1 (dp-accounting uses 1.01).
_TIGHT_MIN_ORDER = 1.01
_CONVERSIONS = ("tight", "classic")
# Tight RDP-to-DP conversion term (Canonne et al. 2020 Prop. 12; Fed-LTP eq. 22):
# epsilon = rdp + this.
_SYM_TIGHT_CONVERSION = (sp.log(1 / _DELTA) - sp.log(_ALPHA)) / (_ALPHA - 1) + sp.log(
    1 - 1 / _ALPHA
)
# Evaluated with log(1/delta) expanded to -log(delta): 1/delta overflows for a subnormal delta.
_tight_conversion = sp.lambdify(
    (_ALPHA, _DELTA), sp.expand_log(_SYM_TIGHT_CONVERSION, force=True), "numpy"
)


def compose(*rdp_curves, counts=None):
    r"""Adaptive composition: RDP curves on the same orders add (Mironov 2017, Prop. 1).

    ``counts[i]`` repetitions of curve ``i`` (default 1 each), integers in
    :math:`[0, 2^{53}]`. Curves hold RDP values in :math:`[0, \infty]` (``inf``: no privacy)
    and share one shape; a curve repeated 0 times contributes 0, even an ``inf`` one.

    Examples
    --------
    >>> compose([1.0, 2.0], [0.5, 0.5], counts=[2, 1])
    array([2.5, 4.5])
    """
    func = "compose"
    if not rdp_curves:
        raise ValueError("compose needs at least one RDP curve. Got none instead.")
    curves = [_rdp_curve("rdp_curves", curve, func) for curve in rdp_curves]
    shapes = {curve.shape for curve in curves}
    if len(shapes) > 1:
        raise ValueError(
            f"The 'rdp_curves' parameter of {func} must hold curves of one shape (one value "
            f"per order). Got shapes {sorted(shapes)} instead."
        )
    if counts is None:
        counts = [1] * len(curves)
    if np.ndim(counts) != 1 or len(counts) != len(curves):
        raise ValueError(
            f"The 'counts' parameter of {func} must be a sequence of one integer per curve "
            f"({len(curves)}). Got {counts!r} instead."
        )
    total = np.zeros(curves[0].shape)
    for curve, count in zip(curves, counts, strict=True):
        n = check_int("counts", count, func=func, low=0, high=_MAX_COUNT)
        if n:
            with np.errstate(over="ignore"):
                total = total + n * curve
    return as_output(total)


def _rdp_pair(orders, rdp, func):
    orders = _order_list(orders, func)
    rdp = np.atleast_1d(_rdp_curve("rdp", rdp, func))
    if rdp.shape != orders.shape:
        raise ValueError(
            f"The 'rdp' parameter of {func} must have the shape of 'orders' {orders.shape}. "
            f"Got {rdp.shape} instead."
        )
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

    ``orders``: a non-empty 1-D array of orders > 1; ``rdp``: one value per order in
    :math:`[0, \infty]` (a negative RDP is impossible and refused; dp-accounting would
    return epsilon 0 for it). An ``inf`` RDP (no noise) gives ``inf``, as does an epsilon
    beyond the float range, and so does ``"tight"`` with no order above 1.01 unless the KL
    short-cut applies (both as dp-accounting).

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
        with np.errstate(over="ignore"):
            eps = rdp - math.log(delta) / (orders - 1)
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            eps = rdp + _tight_conversion(orders, delta)
        eps = np.where(orders > _TIGHT_MIN_ORDER, eps, np.inf)
        with np.errstate(divide="ignore"):  # delta^2 > 1 - e^-rdp, in logs (delta^2 underflows)
            kl_bound = 2 * math.log(delta) > np.log(-np.expm1(-rdp))
        eps = np.where(kl_bound, 0.0, eps)
    idx = int(np.argmin(eps))
    return max(0.0, float(eps[idx])), float(orders[idx])


def delta_from_rdp(orders, rdp, epsilon, *, conversion="tight"):
    r"""Best delta for a target epsilon (nats) from an RDP curve; returns ``(delta, order)``.

    Inverse of ``epsilon_from_rdp``: ``"classic"``
    :math:`\delta = \min_\alpha e^{(\alpha-1)(\mathrm{rdp}-\epsilon)}`; ``"tight"``
    :math:`\log\delta = \min_\alpha (\alpha-1)(\mathrm{rdp}-\epsilon+\log(1-1/\alpha)) - \log\alpha`
    (:math:`\alpha > 1.01`) together with :math:`\delta \le \sqrt{1-e^{-\mathrm{rdp}}}`
    (as dp-accounting's ``compute_delta``). Clipped at 1. Arguments as in
    ``epsilon_from_rdp``; ``epsilon`` in :math:`[0, \infty)`.

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
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if conversion == "classic":
            log_delta = (orders - 1) * (rdp - eps)
        else:
            kl = 0.5 * np.log(-np.expm1(-rdp))  # log sqrt(1 - e^-rdp), -inf at rdp = 0
            bound = (orders - 1) * (rdp - eps + np.log1p(-1 / orders)) - np.log(orders)
            log_delta = np.where(orders > _TIGHT_MIN_ORDER, np.minimum(kl, bound), kl)
    idx = int(np.argmin(log_delta))
    return math.exp(min(0.0, float(log_delta[idx]))), float(orders[idx])


def epsilon_sampled_gaussian(
    q, noise_multiplier, steps, delta, *, orders=DEFAULT_ORDERS, conversion="tight"
):
    """DP-SGD accountant: ``steps`` Poisson-sampled Gaussian steps; ``(epsilon, order)`` in nats.

    ``rdp_sampled_gaussian`` composed ``steps`` times (an integer in :math:`[0, 2^{53}]`),
    then ``epsilon_from_rdp``; ``orders`` a non-empty 1-D array in :math:`(1, 2^{20}]`.

    Examples
    --------
    >>> eps, _ = epsilon_sampled_gaussian(1.0, 1.0, 1, 1e-5, orders=(2.0,), conversion="classic")
    >>> round(eps - (1 + math.log(1e5)), 9)  # one Gaussian step: 2/2 + log(1/delta)
    0.0
    """
    func = "epsilon_sampled_gaussian"
    q = check_real("q", q, func=func, low=0, high=1)
    sigma = _noise("noise_multiplier", noise_multiplier, func)
    steps = check_int("steps", steps, func=func, low=0, high=_MAX_COUNT)
    delta = _delta(delta, func)
    check_choice("conversion", conversion, func=func, choices=_CONVERSIONS)
    orders = _sampled_orders(_order_list(orders, func), func)
    curve = rdp_sampled_gaussian(orders, q=q, noise_multiplier=sigma)
    return epsilon_from_rdp(orders, compose(curve, counts=[steps]), delta, conversion=conversion)
