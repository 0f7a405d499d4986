"""Huang et al.'s Part 1: epsilon_dp of Theorems E.1/E.2 (stated, proof, Table 1), privacy loss."""

from __future__ import annotations

import math  # noqa: F401 (the doctests use it)

import numpy as np
import sympy as sp

from pruneleak.bounds._vector import as_output
from pruneleak.bounds.equivalence._common import (
    _D,
    _DELTA_DP,
    _GS1,
    _M,
    _MAX_COUNT,
    _SIGMA,
    _SIGMA_A,
    _count,
    _log_ratio,
    _positive,
    _probability,
)
from pruneleak.bounds.equivalence.sensitivity import _lemma_d1, _sym_lemma_d1
from pruneleak.bounds.validation import (
    check_broadcast,
    check_choice,
    check_finite_array,
    check_finite_result,
    check_int,
)

# Proof of E.2, Part 1, last two lines: 1/6 (a/sigma_A)^2 - 1/5 (a/sigma_A)^1.5 log(m/delta_dp).
PART1_MEAN_CONSTANT = 1 / 6
PART1_DEVIATION_CONSTANT = 1 / 5
# Theorems E.1 / E.2: epsilon_dp = 2 GS_1(f) (...) / (sigma sigma_A).
THEOREM_E_FACTOR = 2

_THEOREMS = ("E.1", "E.2")


def _sym_theorem(theorem, gs1):
    """Theorems E.1/E.2 as stated: 2 GS_1(f) (m/delta_dp or log(m/delta_dp)) / (sigma sigma_A)."""
    factor = sp.log(_M / _DELTA_DP) if theorem == "E.2" else _M / _DELTA_DP
    return THEOREM_E_FACTOR * gs1 * factor / (_SIGMA * _SIGMA_A)


# Evaluated as exp of the expanded log of the formula: a product such as
# delta_dp * sigma * sigma_A can underflow (or GS_1 m overflow) where the epsilon does not.
_log_theorem = {
    theorem: sp.lambdify(
        (_SIGMA, _SIGMA_A, _M, _DELTA_DP, _GS1),
        sp.expand_log(sp.log(_sym_theorem(theorem, _GS1)), force=True),
    )
    for theorem in _THEOREMS
}


def _theorem_log_epsilon(theorem, sigma, sigma_a, m, d, delta_dp, gs1, func):
    """log of Theorems E.1/E.2 as stated, and the broadcast shape of the arguments.

    With the default GS_1 = sigma_A * (D.2 at sigma_A = 1), sigma_A cancels and is not
    multiplied in at all (it could overflow where the epsilon does not).
    """
    sigma, sigma_a = _positive("sigma", sigma, func), _positive("sigma_a", sigma_a, func)
    m, d = _count("m", m, func), _count("d", d, func)
    delta_dp = _probability("delta_dp", delta_dp, func)
    if gs1 is not None:
        gs1 = _positive("gs1", gs1, func)
    shape = check_broadcast(
        func, sigma=sigma, sigma_a=sigma_a, m=m, d=d, delta_dp=delta_dp, gs1=gs1
    )
    if gs1 is None:
        log_eps = _log_theorem[theorem](sigma, 1.0, m, delta_dp, _lemma_d1(m, d, 1.0, delta_dp))
    else:
        log_eps = _log_theorem[theorem](sigma, sigma_a, m, delta_dp, gs1)
    return np.broadcast_to(log_eps, shape)


def _theorem_epsilon(theorem, sigma, sigma_a, m, d, delta_dp, gs1, func):
    """Theorems E.1/E.2 as stated: 2 GS_1(f) (m/delta or log(m/delta)) / (sigma sigma_A)."""
    log_eps = _theorem_log_epsilon(theorem, sigma, sigma_a, m, d, delta_dp, gs1, func)
    with np.errstate(over="ignore"):  # beyond the float range: inf (package docstring)
        return as_output(np.exp(log_eps))


def epsilon_dp_theorem_e1(sigma, sigma_a, m, d, delta_dp, *, gs1=None):
    r"""Theorem E.1 (magnitude pruning, any x) as stated, in nats.

    .. math:: \epsilon_{dp} = 2\,\mathrm{GS}_1(f)\,(m/\delta_{dp})/(\sigma\sigma_A)

    Parameters
    ----------
    sigma : Laplace scale of :math:`\mathrm{Lap}(1,\sigma)` (> 0, dimensionless).
    sigma_a : standard deviation of the weights (> 0).
    m, d : width and input dimension (integers >= 1).
    delta_dp : in (0, 1).
    gs1 : :math:`\mathrm{GS}_1(f)`; default ``gs1_bound(m, d, sigma_a, delta_dp)`` (Lemma D.2
        with its failure probability set to ``delta_dp``).

    Examples
    --------
    >>> epsilon_dp_theorem_e1(2.0, 1.0, 1, 1, 0.5, gs1=1.0)  # 2 * 1 * (1 / 0.5) / 2
    2.0
    """
    return _theorem_epsilon("E.1", sigma, sigma_a, m, d, delta_dp, gs1, "epsilon_dp_theorem_e1")


def epsilon_dp_theorem_e2(sigma, sigma_a, m, d, delta_dp, *, gs1=None):
    r"""Theorem E.2 (folded pruning, :math:`x\ge0`) as stated, in nats.

    .. math:: \epsilon_{dp} = 2\,\mathrm{GS}_1(f)\log(m/\delta_{dp})/(\sigma\sigma_A)

    As stated in the theorem (arguments as in ``epsilon_dp_theorem_e1``). The proof does
    not establish it (package docstring, items 5 and 7); the proof's own last line is
    ``epsilon_dp_proof_e2``.

    Examples
    --------
    >>> round(epsilon_dp_theorem_e2(2.0, 1.0, 1, 1, math.exp(-1), gs1=1.0), 12)  # 2 * 1 * 1 / 2
    1.0
    """
    return _theorem_epsilon("E.2", sigma, sigma_a, m, d, delta_dp, gs1, "epsilon_dp_theorem_e2")


def epsilon_dp_table1(sigma, sigma_a, m, d, delta_dp, *, theorem, gs1=None):
    r"""Table 1's summary of E.1/E.2: the theorems' epsilon without the factor 2 (a deviation).

    Examples
    --------
    >>> round(epsilon_dp_table1(2.0, 1.0, 1, 1, math.exp(-1), theorem="E.2", gs1=1.0), 12)
    0.5
    """
    check_choice("theorem", theorem, func="epsilon_dp_table1", choices=_THEOREMS)
    stated = epsilon_dp_theorem_e1 if theorem == "E.1" else epsilon_dp_theorem_e2
    return as_output(np.asarray(stated(sigma, sigma_a, m, d, delta_dp, gs1=gs1)) / THEOREM_E_FACTOR)


def epsilon_dp_proof_e2(sigma, sigma_a, a, m, d, delta_dp):
    r"""Last line of Part 1 of the proof of Theorem E.2 (nats).

    .. math:: \epsilon = \frac{2\,(m + 4\sqrt m\log^{1.5}(md/\delta_{dp}))}
              {\sigma\,\big(\tfrac16 (a/\sigma_A)^2
              - \tfrac15 (a/\sigma_A)^{1.5}\log(m/\delta_{dp})\big)}

    (Lemma D.2's :math:`\delta` set to :math:`\delta_{dp}`; ``sigma_a`` enters only through
    :math:`a/\sigma_A` because the proof cancels :math:`\sigma_A` against D.2.) Returns
    ``inf`` where the denominator is not positive (the lower bound on
    :math:`\min_i(\bar Ax)_i` is vacuous). Deviations: see the package docstring, item 5.

    Examples
    --------
    >>> epsilon_dp_proof_e2(1.0, 1.0, 1.0, 10, 10, 0.1)  # 1/6 - log(100)/5 < 0: vacuous
    inf
    """
    func = "epsilon_dp_proof_e2"
    sigma, sigma_a = _positive("sigma", sigma, func), _positive("sigma_a", sigma_a, func)
    a = _positive("a", a, func)
    m, d = _count("m", m, func), _count("d", d, func)
    delta_dp = _probability("delta_dp", delta_dp, func)
    check_broadcast(func, sigma=sigma, sigma_a=sigma_a, a=a, m=m, d=d, delta_dp=delta_dp)
    numerator = THEOREM_E_FACTOR * _lemma_d1(m, d, 1.0, delta_dp)  # D.2 divided by sigma_A
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        log_r = np.log(a) - np.log(sigma_a)
        # floor = r^1.5 (r^0.5 / 6 - log(m/delta) / 5): the sign from the bracket, and the
        # quotient in logs (r^1.5 or numerator / sigma alone can leave the float range)
        bracket = PART1_MEAN_CONSTANT * np.exp(log_r / 2) - PART1_DEVIATION_CONSTANT * _log_ratio(
            m, delta_dp
        )
        log_eps = np.log(numerator) - np.log(sigma) - 1.5 * log_r - np.log(bracket)
        eps = np.where(bracket > 0, np.exp(log_eps), np.inf)
    return as_output(eps)


def sigma_for_epsilon_dp(epsilon_dp, *, sigma_a, m, d, delta_dp, theorem="E.2", gs1=None):
    r"""The Laplace scale at which Theorem E.1/E.2 (as stated) gives ``epsilon_dp`` (nats).

    Both theorems are :math:`\epsilon_{dp} = K/\sigma`, so :math:`\sigma = K/\epsilon_{dp}`
    (e.g. Section 4.4's :math:`\epsilon_{dp} = 0.5`, :math:`\delta_{dp} = 0.1`).

    Examples
    --------
    >>> sigma = sigma_for_epsilon_dp(0.5, sigma_a=1.0, m=1, d=1, delta_dp=math.exp(-1), gs1=1.0)
    >>> round(sigma, 12), round(epsilon_dp_theorem_e2(sigma, 1.0, 1, 1, math.exp(-1), gs1=1.0), 12)
    (4.0, 0.5)
    """
    func = "sigma_for_epsilon_dp"
    epsilon_dp = _positive("epsilon_dp", epsilon_dp, func)
    check_choice("theorem", theorem, func=func, choices=_THEOREMS)
    log_k = _theorem_log_epsilon(theorem, 1.0, sigma_a, m, d, delta_dp, gs1, func)
    check_broadcast(func, epsilon_dp=epsilon_dp, sigma_a=log_k)
    with np.errstate(over="ignore"):
        sigma = np.exp(log_k - np.log(epsilon_dp))  # K / epsilon_dp, K = epsilon at sigma 1
    inputs = {"epsilon_dp": epsilon_dp, "sigma_a": sigma_a, "m": m, "d": d, "delta_dp": delta_dp}
    return as_output(check_finite_result(sigma, func=func, **inputs))


def remark_e3_parameters(m, *, theorem="E.2"):
    r"""Remark E.3's parameter choices with every :math:`\Theta`-constant set to 1.

    E.2 (folded): :math:`\sigma = m`; E.1: :math:`\sigma = m^2`; both :math:`\sigma_A = 1/\sigma`,
    :math:`a = \sigma_A`. Returns ``{"sigma", "sigma_a", "a"}`` (floats). Note: then
    :math:`\sigma\sigma_A = 1`, so Theorem E.2 gives
    :math:`\epsilon_{dp} = 2\,\mathrm{GS}_1(f)\log(m/\delta_{dp})` with
    :math:`\mathrm{GS}_1 = \Theta(m\sigma_A) = \Theta(1)` (E.2), which grows with :math:`m`
    (package docstring, item 7).

    Examples
    --------
    >>> remark_e3_parameters(10)
    {'sigma': 10.0, 'sigma_a': 0.1, 'a': 0.1}
    """
    m = check_int("m", m, func="remark_e3_parameters", low=1, high=_MAX_COUNT)
    check_choice("theorem", theorem, func="remark_e3_parameters", choices=_THEOREMS)
    sigma = float(m if theorem == "E.2" else m**2)
    return {"sigma": sigma, "sigma_a": 1.0 / sigma, "a": 1.0 / sigma}


def privacy_loss(y, loc1, scale1, loc2, scale2):
    r"""Exact privacy loss :math:`\log p_1(y)/p_2(y)` of two product Laplace laws (nats).

    The mechanism of the proof releases :math:`y_i = f(x)_i + (\bar Ax)_i + \sigma(\bar Ax)_i W_i`,
    :math:`W_i\sim\mathrm{Lap}(0,1)`: location :math:`f(x)+\bar Ax`, scale
    :math:`\sigma|\bar Ax|`, both depending on :math:`x`. Then

    .. math:: \mathcal L(y) = \sum_i \log\frac{b_{2,i}}{b_{1,i}}
              + \frac{|y_i-\mu_{2,i}|}{b_{2,i}} - \frac{|y_i-\mu_{1,i}|}{b_{1,i}},

    which grows without bound in :math:`|y_i|` whenever :math:`b_{1,i} \ne b_{2,i}`: the
    mechanism is not :math:`\epsilon`-DP for any finite :math:`\epsilon` (package docstring,
    item 5). The last axis of the arrays indexes the coordinates :math:`i`.

    Examples
    --------
    >>> privacy_loss([0.3], [0.0], [1.0], [0.0], [1.0])  # the same law: no loss
    0.0
    >>> privacy_loss([0.0], [0.0], [1.0], [0.0], [2.0]) == math.log(2)  # log(b2 / b1) at y = mu
    True
    """
    func = "privacy_loss"
    y = check_finite_array("y", y, func=func)
    loc1, loc2 = (
        check_finite_array("loc1", loc1, func=func),
        check_finite_array("loc2", loc2, func=func),
    )
    scale1, scale2 = _positive("scale1", scale1, func), _positive("scale2", scale2, func)
    inputs = {"y": y, "loc1": loc1, "scale1": scale1, "loc2": loc2, "scale2": scale2}
    if check_broadcast(func, **inputs) == ():
        raise ValueError(
            f"The parameters of {func} must have a last axis indexing the coordinates "
            "(at least 1-dimensional). Got scalars instead."
        )
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        distances = _difference_of_exps(
            _log_scaled_distance(y, loc2, scale2), _log_scaled_distance(y, loc1, scale1)
        )  # |y - loc2| / scale2 - |y - loc1| / scale1
        terms = np.log(scale2) - np.log(scale1) + distances
    return as_output(check_finite_result(np.sum(terms, axis=-1), func=func, **inputs))


def _log_scaled_distance(y, loc, scale):
    """log(|y - loc| / scale), with y - loc halved first where it would overflow."""
    diff = y - loc
    log_diff = np.where(
        np.isfinite(diff), np.log(np.abs(diff)), np.log(np.abs(y / 2 - loc / 2)) + np.log(2)
    )
    return log_diff - np.log(scale)


def _difference_of_exps(log_a, log_b):
    """e^log_a - e^log_b as sign * exp(max + log(1 - e^(min - max))): finite whenever the
    difference is, even where each term alone overflows; 0 where the two are equal."""
    high, low = np.maximum(log_a, log_b), np.minimum(log_a, log_b)
    sign = np.where(log_a >= log_b, 1.0, -1.0)
    value = sign * np.exp(high + np.log(-np.expm1(low - high)))
    return np.where(log_a == log_b, 0.0, value)


def epsilon_dp_fixed_scale(sigma, scale_floor, gs1_location):
    r"""Repaired Part 1: Laplace mechanism with a data-independent scale :math:`\sigma c` (nats).

    If the noise is :math:`\sigma c\,\mathrm{Lap}(0,1)^m` with a fixed :math:`c > 0` (e.g. a
    high-probability floor of :math:`(\bar Ax)_i`) added to the location
    :math:`f(x) + \bar Ax`, Theorem E.6 gives pure DP with
    :math:`\epsilon = \mathrm{GS}_1(f + \bar A\,\cdot)/(\sigma c)` and
    :math:`\mathrm{GS}_1(f + \bar A\,\cdot) \le \mathrm{GS}_1(f) + \max_k\|\bar A_{*,k}\|_1`:
    no factor 2, but the location's extra sensitivity must be counted.

    Examples
    --------
    >>> epsilon_dp_fixed_scale(2.0, 0.5, 3.0)  # 3 / (2 * 0.5)
    3.0
    """
    func = "epsilon_dp_fixed_scale"
    sigma = _positive("sigma", sigma, func)
    scale_floor = _positive("scale_floor", scale_floor, func)
    gs1_location = _positive("gs1_location", gs1_location, func)
    check_broadcast(func, sigma=sigma, scale_floor=scale_floor, gs1_location=gs1_location)
    tiny = np.finfo(float).tiny
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        denominator = sigma * scale_floor
        direct = gs1_location / denominator
        # where the product or the quotient leaves the normal range: in logs
        by_logs = np.exp(np.log(gs1_location) - np.log(sigma) - np.log(scale_floor))
        exact = np.isfinite(direct) & (denominator >= tiny) & (direct >= tiny)
    return as_output(np.where(exact, direct, by_logs))  # beyond the range: inf (docstring)


def epsilon_dp_theorem_expr(*, theorem="E.2"):
    r"""Theorem E.1/E.2 as a sympy expression, with :math:`\mathrm{GS}_1` from Lemma D.2 (nats).

    Symbols: ``sigma``, ``sigma_A``, ``m``, ``d``, ``delta_dp`` (D.2's failure probability
    set to :math:`\delta_{dp}`), as in ``epsilon_dp_theorem_e1`` / ``_e2``.

    Examples
    --------
    >>> sorted(s.name for s in epsilon_dp_theorem_expr(theorem="E.1").free_symbols)
    ['d', 'delta_dp', 'm', 'sigma', 'sigma_A']
    """
    check_choice("theorem", theorem, func="epsilon_dp_theorem_expr", choices=_THEOREMS)
    return _sym_theorem(theorem, _sym_lemma_d1(_M, _D, _SIGMA_A, _DELTA_DP))
