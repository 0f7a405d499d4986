"""Fed-LTP's Theorem 1 (eq. 20-24): as published, and the corrected accountant beside it."""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from pruneleak.bounds._vector import as_output
from pruneleak.bounds.accounting._common import (
    _ALPHA,
    _LAMBDA,
    _MAX_COUNT,
    _T,
    _delta,
    _noise,
    _order_list,
    _orders,
    _sampled_orders,
)
from pruneleak.bounds.accounting.conversion import (
    _CONVERSIONS,
    _SYM_TIGHT_CONVERSION,
    DEFAULT_ORDERS,
    _tight_conversion,
    epsilon_from_rdp,
)
from pruneleak.bounds.accounting.rdp import rdp_gaussian, rdp_laplace, rdp_sampled_gaussian
from pruneleak.bounds.validation import check_choice, check_int, check_real

#: What the validation of a Fed-LTP round releases: the Laplace score accounted exactly
#: (Mironov 2017, Prop. 6) or through Lemma 1's zCDP, or nothing (Fig. 7's ablation).
VALIDATIONS = ("exact", "zcdp", "none")

# Fed-LTP eq. 23-24 as printed: the validation term after t + 1 rounds.
_SYM_RHO_V_PUBLISHED = (_T + 1) * _ALPHA * (_ALPHA - 1) / (2 * _LAMBDA**2)
# Evaluated as exp of its expanded log: alpha (alpha - 1) or lambda^2 alone can overflow
# or underflow where the quotient does not.
_log_rho_v_published = sp.lambdify(
    (_T, _ALPHA, _LAMBDA), sp.expand_log(sp.log(_SYM_RHO_V_PUBLISHED), force=True), "numpy"
)


def _round_index(t, func):
    """The 0-based round index t, an integer in [0, 2^53 - 1] (t + 1 rounds compose)."""
    return check_int("t", t, func=func, low=0, high=_MAX_COUNT - 1)


def fedltp_rho_s_published(t, *, q, noise_multiplier, alpha):
    r"""Eq. 21 of Fed-LTP as printed (nats).

    .. math:: \rho_s^t = \frac{t+1}{\alpha-1}\log\mathbb E_{z\sim\mu_0}
              \Big[\Big(1-\tilde q+\tilde q\frac{\mu_1(z)}{\mu_0(z)}\Big)^\alpha\Big],
              \quad \mu_1 = \tilde qN(1,\sigma^2)+(1-\tilde q)N(0,\sigma^2).

    Since :math:`1-\tilde q+\tilde q\mu_1/\mu_0 = 1-\tilde q^2+\tilde q^2 N(1,\sigma^2)/\mu_0`,
    this equals :math:`(t+1)` times the sampled-Gaussian RDP at rate :math:`\tilde q^2`.
    Arguments as in ``fedltp_epsilon_published``.

    Examples
    --------
    >>> fedltp_rho_s_published(0, q=1.0, noise_multiplier=1.0, alpha=2.0)  # q^2 = 1: Gaussian
    1.0
    """
    func = "fedltp_rho_s_published"
    t = _round_index(t, func)
    q = check_real("q", q, func=func, low=0, high=1)
    sigma = _noise("noise_multiplier", noise_multiplier, func)
    a = _sampled_orders(alpha, func, name="alpha")
    with np.errstate(over="ignore"):
        return as_output(
            (t + 1) * np.asarray(rdp_sampled_gaussian(a, q=q**2, noise_multiplier=sigma))
        )


def fedltp_rho_v_published(t, *, lambda_val, alpha):
    r"""Eq. 23-24 of Fed-LTP as printed (nats).

    .. math:: \rho_v^t = (t+1)\alpha(\alpha-1)/(2\lambda_{val}^2)


    Deviation: Lemma 1 with :math:`\epsilon_{val} = 1/\lambda_{val}` gives
    :math:`D_\alpha \le \alpha/(2\lambda_{val}^2)` per round; the factor :math:`\alpha-1` comes
    from the misprinted Definition 4 (package docstring). Arguments as in
    ``fedltp_epsilon_published`` (``alpha`` any order > 1 here).

    Examples
    --------
    >>> fedltp_rho_v_published(0, lambda_val=1.0, alpha=2.0)  # 2 * 1 / 2
    1.0
    """
    func = "fedltp_rho_v_published"
    t = _round_index(t, func)
    lam = _noise("lambda_val", lambda_val, func)
    a = _orders(alpha, func, name="alpha")
    with np.errstate(over="ignore", divide="ignore"):  # lambda_val = 0: no noise, inf
        return as_output(np.exp(_log_rho_v_published(t, a, np.float64(lam))))


def fedltp_epsilon_published(t, *, q, noise_multiplier, lambda_val, delta, alpha):
    r"""Fed-LTP Theorem 1, eq. 20, exactly as printed, at the given order(s) (nats).

    .. math:: \epsilon^t = \rho_s^t + \frac{(t+1)\alpha(\alpha-1)}{2\lambda_{val}^2}
              + \frac{\log(1/\delta) - \log\alpha}{\alpha-1} + \log\Big(1-\frac1\alpha\Big)

    Parameters
    ----------
    t : int in :math:`[0, 2^{53})`, the 0-based round index (``t + 1`` rounds composed).
    q : sampling rate :math:`\tilde q` of the local mini-batch, in [0, 1].
    noise_multiplier : :math:`\sigma \ge 0` of Algorithm 2 (noise std / clipping norm C).
    lambda_val : Laplace scale :math:`\ge 0` of the validation scores (eq. 17, sensitivity 1).
    delta : in (0, 1).
    alpha : order(s) in :math:`(1, 2^{20}]`.

    Notes
    -----
    A zero noise scale (no noise) gives ``inf``, as does a value beyond the float range
    (package docstring).

    Examples
    --------
    >>> kw = {"q": 1.0, "noise_multiplier": 1.0, "lambda_val": 1.0, "delta": 0.25}
    >>> round(fedltp_epsilon_published(0, alpha=2.0, **kw), 12)  # 1 + 1 + log 4 - log 2 + log(1/2)
    2.0
    """
    func = "fedltp_epsilon_published"
    t = _round_index(t, func)
    q = check_real("q", q, func=func, low=0, high=1)
    noise_multiplier = _noise("noise_multiplier", noise_multiplier, func)
    lambda_val = _noise("lambda_val", lambda_val, func)
    delta = _delta(delta, func)
    a = _sampled_orders(alpha, func, name="alpha")
    rho_s = np.asarray(fedltp_rho_s_published(t, q=q, noise_multiplier=noise_multiplier, alpha=a))
    rho_v = np.asarray(fedltp_rho_v_published(t, lambda_val=lambda_val, alpha=a))
    return as_output(rho_s + rho_v + _tight_conversion(a, delta))


def fedltp_epsilon_published_optimal(
    t, *, q, noise_multiplier, lambda_val, delta, orders=DEFAULT_ORDERS
):
    """Eq. 20 as printed, minimised over ``orders``; returns ``(epsilon, order)`` in nats.

    Arguments as in ``fedltp_epsilon_published``; ``orders`` a non-empty 1-D array.

    Examples
    --------
    >>> kw = {"q": 1.0, "noise_multiplier": 1.0, "lambda_val": 1.0, "delta": 0.25}
    >>> eps, order = fedltp_epsilon_published_optimal(0, orders=(2.0,), **kw)
    >>> round(eps, 12), order
    (2.0, 2.0)
    """
    func = "fedltp_epsilon_published_optimal"
    a = _sampled_orders(_order_list(orders, func), func)
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
    return float(eps[idx]), float(a[idx])


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
    :math:`\alpha/(2\lambda_{val}^2)`), or none (``validation="none"``: the ablation of
    the paper's Fig. 7, no validation released; ``lambda_val`` is then not used).
    Composition over rounds, then ``epsilon_from_rdp``.
    Summing the training and validation RDP is conservative when the two datasets are
    disjoint (parallel composition would take the maximum). Arguments as in
    ``fedltp_epsilon_published``; ``steps_per_round`` an integer in :math:`[1, 2^{53}]`.

    Examples
    --------
    >>> eps, order = fedltp_epsilon_corrected(
    ...     0, q=0.0, noise_multiplier=1.0, lambda_val=1.0, delta=math.exp(-1),
    ...     orders=(2.0,), validation="zcdp", conversion="classic")
    >>> round(eps, 12), order  # validation only: 2 / 2 + log(e) / (2 - 1)
    (2.0, 2.0)
    """
    func = "fedltp_epsilon_corrected"
    t = _round_index(t, func)
    q = check_real("q", q, func=func, low=0, high=1)
    sigma = _noise("noise_multiplier", noise_multiplier, func)
    lam = _noise("lambda_val", lambda_val, func)
    delta = _delta(delta, func)
    steps = check_int("steps_per_round", steps_per_round, func=func, low=1, high=_MAX_COUNT)
    check_choice("validation", validation, func=func, choices=VALIDATIONS)
    check_choice("conversion", conversion, func=func, choices=_CONVERSIONS)
    a = _sampled_orders(_order_list(orders, func), func)
    train = rdp_sampled_gaussian(a, q=q, noise_multiplier=sigma)
    # "zcdp": Lemma 1, rho = (1/lam)^2 / 2 and D_alpha <= alpha rho: the Gaussian line in lam
    val = {"exact": rdp_laplace, "zcdp": rdp_gaussian, "none": _no_release}[validation](a, lam)
    with np.errstate(over="ignore"):
        total = (t + 1) * (steps * train + val)
    return epsilon_from_rdp(a, total, delta, conversion=conversion)


def _no_release(orders, _scale):
    return np.zeros_like(orders)


def fedltp_epsilon_composition(
    t,
    *,
    q,
    noise_multiplier,
    lambda_val,
    delta,
    steps_per_round=1,
    orders=DEFAULT_ORDERS,
    validation="exact",
):
    r"""Fed-LTP's schedule accounted without zCDP/RDP composition; ``(epsilon, order)`` in nats.

    The paper's Fig. 9 compares Fed-LTP "with or without a zCDP module" and does not say
    what replaces it (``papers/fed-ltp-lottery-ticket-zcdp.txt``, line 425). Read here: the
    same mechanisms, each given an :math:`(\epsilon, \delta)`-DP guarantee on its own and
    composed by the basic composition theorem (Dwork and Roth 2014, Theorem 3.16:
    epsilons and deltas add). Over ``t + 1`` rounds of ``steps_per_round`` Poisson-sampled
    Gaussian steps, :math:`n = (t + 1)\,\mathrm{steps}` steps share the failure
    probability, :math:`\delta_s = \delta / n` each, and each step is
    :math:`\epsilon_s`-DP at :math:`\delta_s` by its own RDP curve and the tight
    conversion (``epsilon_from_rdp`` of ``rdp_sampled_gaussian``, the best order of
    ``orders``); each Laplace validation release (sensitivity 1, scale ``lambda_val``) is
    :math:`1/\lambda_{val}`-DP with :math:`\delta = 0` (``validation="none"``: no release):

    .. math:: \epsilon = n\,\epsilon_s(\delta / n) + (t + 1) / \lambda_{val}.

    Returns the total epsilon and the order that gave :math:`\epsilon_s`. Arguments as in
    ``fedltp_epsilon_corrected`` (``validation`` ``"exact"`` and ``"zcdp"`` both mean the
    Laplace release here).

    Examples
    --------
    >>> eps, _ = fedltp_epsilon_composition(
    ...     1, q=1.0, noise_multiplier=1.0, lambda_val=2.0, delta=0.5 * math.exp(-2),
    ...     validation="none", orders=(3.0,))
    >>> per_step, _ = epsilon_from_rdp([3.0], [1.5], 0.25 * math.exp(-2))
    >>> round(eps - 2 * per_step, 12)  # two rounds of one step each: their epsilons add
    0.0
    """
    func = "fedltp_epsilon_composition"
    t = _round_index(t, func)
    q = check_real("q", q, func=func, low=0, high=1)
    sigma = _noise("noise_multiplier", noise_multiplier, func)
    lam = _noise("lambda_val", lambda_val, func)
    delta = _delta(delta, func)
    steps = check_int("steps_per_round", steps_per_round, func=func, low=1, high=_MAX_COUNT)
    check_choice("validation", validation, func=func, choices=VALIDATIONS)
    a = _sampled_orders(_order_list(orders, func), func)
    n_steps = (t + 1) * steps
    if delta / n_steps == 0.0:  # each step's share of delta is below the smallest float
        raise ValueError(
            f"The 'delta' parameter of {func} must be at least (t + 1) * steps_per_round * "
            f"5e-324 = {n_steps * 5e-324:.3g} (each of the {n_steps} steps gets delta / "
            f"{n_steps}). Got {delta!r} instead."
        )
    step_eps, order = epsilon_from_rdp(
        a, rdp_sampled_gaussian(a, q=q, noise_multiplier=sigma), delta / n_steps
    )
    # a Laplace release at scale 0 is the exact score: no privacy
    release = 0.0 if validation == "none" else math.inf if lam == 0 else (t + 1) / lam
    with np.errstate(over="ignore"):
        return float(n_steps * step_eps + release), order


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
