"""Huang et al.'s sensitivities: Lemma D.1, GS_1 (D.2), GS_2 (D.3), published and corrected."""

from __future__ import annotations

import math  # noqa: F401 (the doctests use it)

import numpy as np
import sympy as sp

from pruneleak.bounds._vector import as_output
from pruneleak.bounds.equivalence._common import (
    _D,
    _DELTA_DP,
    _M,
    _SIGMA_A,
    _count,
    _log_ratio,
    _positive,
    _probability,
)
from pruneleak.bounds.validation import check_broadcast, check_choice, check_finite_result

# Lemma D.1 / D.2: sigma_A m + 4 sigma_A sqrt(m) log^1.5(md/delta).
LEMMA_D1_CONSTANT = 4


def _sym_lemma_d1(m, d, sigma_a, delta):
    """Lemma D.1 / D.2: sigma_A m + 4 sigma_A sqrt(m) log^1.5(md/delta)."""
    return sigma_a * m + LEMMA_D1_CONSTANT * sigma_a * sp.sqrt(m) * sp.log(
        m * d / delta
    ) ** sp.Rational(3, 2)


# Evaluated with log(md/delta) expanded to log m + log d - log delta: the quotient itself
# can overflow for a tiny delta while its logarithm is small.
_lemma_d1 = sp.lambdify(
    (_M, _D, _SIGMA_A, _DELTA_DP),
    sp.expand_log(_sym_lemma_d1(_M, _D, _SIGMA_A, _DELTA_DP), force=True),
)


def _sensitivity_args(func, m, d, sigma_a, delta):
    """Validate (m, d, sigma_a, delta) of D.1-D.3: counts as floats, delta in (0, 1)."""
    args = {
        "m": _count("m", m, func),
        "d": _count("d", d, func),
        "sigma_a": _positive("sigma_a", sigma_a, func),
        "delta": _probability("delta", delta, func),
    }
    check_broadcast(func, **args)
    return args


def _finite(func, formula, args):
    """Evaluate ``formula(**args)`` and refuse a result beyond the float range."""
    with np.errstate(over="ignore", invalid="ignore"):
        value = formula(*args.values())
    return as_output(check_finite_result(value, func=func, **args))


def lemma_d1_threshold(m, d, sigma_a, delta):
    r"""Lemma D.1: the threshold for :math:`\sum_i (z_{ij} - \mathbb E z_{ij})`, :math:`z = |y|`.

    .. math:: \sigma_A m + 4\sigma_A\sqrt m\log^{1.5}(md/\delta)  \quad(\text{w.p.} \ge 1-\delta)

    Examples
    --------
    >>> round(lemma_d1_threshold(1, 1, 1.0, math.exp(-1)), 12)  # 1 + 4 * 1 * 1^1.5
    5.0
    """
    func = "lemma_d1_threshold"
    return _finite(func, _lemma_d1, _sensitivity_args(func, m, d, sigma_a, delta))


def gs1_bound(m, d, sigma_a, delta):
    r"""Lemma D.2: the bound on :math:`\mathrm{GS}_1(f)` holding with probability >= 1 - delta.

    .. math:: \mathrm{GS}_1(f) \le \sigma_A m + 4\sigma_A\sqrt m\log^{1.5}(md/\delta)

    Neighbouring inputs differ in one coordinate by at most 1, so
    :math:`\mathrm{GS}_1(f) \le \max_k \|A_{*,k}\|_1`. As published. Deviation: the proof
    applies Lemma D.1, which bounds :math:`\|A_{*,k}\|_1 - \mathbb E\|A_{*,k}\|_1`, to
    :math:`\|A_{*,k}\|_1` itself (the mean :math:`m\sigma_A\sqrt{2/\pi}` is dropped). The
    statement still holds in practice because D.1's :math:`\sigma_A m` over-covers the
    mean; see ``gs1_bound_corrected``.

    Examples
    --------
    >>> gs1_bound(50, 10, 0.1, 0.01) == lemma_d1_threshold(50, 10, 0.1, 0.01)
    True
    """
    return _finite("gs1_bound", _lemma_d1, _sensitivity_args("gs1_bound", m, d, sigma_a, delta))


def gs1_bound_corrected(m, d, sigma_a, delta):
    r"""Corrected Lemma D.2, with probability at least :math:`1-\delta`.

    .. math:: \max_k\|A_{*,k}\|_1 \le \sigma_A(m\sqrt{2/\pi} + \sqrt{2m\log(d/\delta)})

    :math:`\|g\|_1` is :math:`\sqrt m`-Lipschitz in :math:`\ell_2`, so Gaussian concentration
    (Tsirelson-Ibragimov-Sudakov) gives a sub-Gaussian upper tail of variance proxy
    :math:`m\sigma_A^2` around the mean :math:`m\sigma_A\sqrt{2/\pi}`; a union bound covers the
    :math:`d` columns.

    Examples
    --------
    >>> value = gs1_bound_corrected(1, 1, 1.0, math.exp(-1))
    >>> round(value - (math.sqrt(2 / math.pi) + math.sqrt(2)), 12)
    0.0
    """
    func = "gs1_bound_corrected"

    def formula(m, d, sigma_a, delta):
        return sigma_a * (m * np.sqrt(2 / np.pi) + np.sqrt(2 * m * _log_ratio(d, delta)))

    return _finite(func, formula, _sensitivity_args(func, m, d, sigma_a, delta))


def gs2_bound(m, d, sigma_a, delta, *, form="statement"):
    r"""Lemma D.3: the :math:`\ell_2` sensitivity bound, as published.

    ``form="statement"``: :math:`2(\sqrt{md} + \sqrt{\log(1/\delta)})` (no :math:`\sigma_A`;
    the argument ``sigma_a`` is validated and ignored). ``form="proof"``: the proof's last
    line :math:`\sigma_A(\sqrt{md} + \sqrt{2\log(1/\delta)})`. Deviations: a column
    :math:`A_{*,k}` has :math:`m` entries (Lemma A.6 with :math:`k=m`, not :math:`md`), the
    statement loses :math:`\sigma_A`, and the sup over :math:`k` needs a union bound over
    :math:`d` columns. See ``gs2_bound_corrected``.

    Examples
    --------
    >>> round(gs2_bound(1, 4, 1.0, math.exp(-1)), 12)  # 2 (sqrt(4) + sqrt(1))
    6.0
    >>> round(gs2_bound(1, 4, 1.0, math.exp(-1), form="proof") - (2 + math.sqrt(2)), 12)
    0.0
    """
    func = "gs2_bound"
    args = _sensitivity_args(func, m, d, sigma_a, delta)
    check_choice("form", form, func=func, choices=("statement", "proof"))

    def formula(m, d, sigma_a, delta):
        root_md = np.sqrt(m) * np.sqrt(d)
        if form == "statement":  # no sigma_A, but the shape still broadcasts with it
            value = 2 * (root_md + np.sqrt(-np.log(delta)))
            return np.broadcast_to(value, np.broadcast_shapes(value.shape, sigma_a.shape))
        return sigma_a * (root_md + np.sqrt(-2 * np.log(delta)))

    return _finite(func, formula, args)


def gs2_bound_corrected(m, d, sigma_a, delta):
    r"""Corrected Lemma D.3, with probability at least :math:`1-\delta`.

    .. math:: \max_k\|A_{*,k}\|_2 \le \sigma_A(\sqrt m + \sqrt{2\log(d/\delta)})

    :math:`\|g\|_2` is 1-Lipschitz with :math:`\mathbb E\|g\|_2 \le \sqrt m\,\sigma_A`; union
    bound over the :math:`d` columns.

    Examples
    --------
    >>> round(gs2_bound_corrected(4, 1, 1.0, math.exp(-2)), 12)  # sqrt(4) + sqrt(2 * 2)
    4.0
    """
    func = "gs2_bound_corrected"

    def formula(m, d, sigma_a, delta):
        return sigma_a * (np.sqrt(m) + np.sqrt(2 * _log_ratio(d, delta)))

    return _finite(func, formula, _sensitivity_args(func, m, d, sigma_a, delta))
