"""PriPrune's bounds as sympy expressions in bits: the one source of every formula."""

from __future__ import annotations

import math
from types import SimpleNamespace

import sympy as sp

from pruneleak.bounds.validation import check_bool, check_choice

UNITS = ("bits", "nats")
LN2 = math.log(2)

SYMBOLS = SimpleNamespace(
    p=sp.Symbol("p", nonnegative=True),
    B=sp.Symbol("B", positive=True),
    d_star=sp.Symbol("d^*", positive=True, integer=True),
    Delta=sp.Symbol("Delta", real=True),
    T=sp.Symbol("T", positive=True, integer=True),
    d=sp.Symbol("d", positive=True, integer=True),
    kept=sp.Symbol("k", nonnegative=True, integer=True),
    t=sp.Symbol("t", positive=True, integer=True),
)
"""Sympy symbols: ``Delta`` is in nats, ``kept`` is :math:`|\\bar P\\cup A|` (PruneFL)."""


# ---------------------------------------------------------------------------------------
# The formulas: one sympy expression each, in bits
# ---------------------------------------------------------------------------------------


class entr(sp.Function):  # lower case: named after scipy.special.entr, its numeric form
    r""":math:`-x\ln x` in nats, continuous at 0 (:math:`\mathrm{entr}(0) = 0`).

    A sympy function so that the binary entropy is one expression that differentiates and
    simplifies symbolically and lambdifies to ``scipy.special.entr`` (exact at p = 0 and 1,
    where :math:`x\ln x` would give NaN in floating point). ``rewrite(sp.log)`` gives
    :math:`-x\log x`.

    Examples
    --------
    >>> entr(0), entr(1), sp.diff(entr(SYMBOLS.p), SYMBOLS.p)
    (0, 0, -log(p) - 1)
    """

    @classmethod
    def eval(cls, x):
        if x.is_zero:
            return sp.S.Zero
        if x.is_Number:
            return -x * sp.log(x)
        return None

    def fdiff(self, argindex=1):
        return -sp.log(self.args[0]) - 1

    def _eval_rewrite_as_log(self, x, **kwargs):
        return -x * sp.log(x)


def _sym_binary_entropy(p):
    """:math:`H_b(p)` in bits."""
    return (entr(p) + entr(1 - p)) / sp.log(2)


def _sym_terms(p, B, d_star, Delta, d, corrected):
    """The mask term, parts A-D and the single-round bound, in bits: the one source.

    Every numeric function of this package is ``sp.lambdify`` of one of these (``_kernel``).
    """
    delta_bits = Delta / sp.log(2)
    log2_2pie = sp.log(2 * sp.pi * sp.E, 2)
    if corrected:
        mask = d * _sym_binary_entropy(p)
        part_d = d_star / 2 * (log2_2pie + sp.log(B, 2))
        part_c = part_d - delta_bits
        part_b = part_c - d_star * sp.log(B, 2)
    else:
        mask = 1 - (p - 1) / (2 * sp.log(2))
        part_d = d_star / 2 * log2_2pie
        part_c = delta_bits + part_d
        part_b = sp.log(1 / B, 2) + part_c
    part_a = part_b + mask
    return {
        "mask": mask,
        "A": part_a,
        "B": part_b,
        "C": part_c,
        "D": part_d,
        "single": part_a + part_b,
    }


def _bits_expr(name, corrected):
    """Sympy expression ``name`` (a key of ``_sym_terms``, "multi", "prunefl" or "hb") in bits.

    PruneFL (eq. 23) is Theorem 1 with the kept fraction :math:`|\\bar P\\cup A|/d` in place
    of :math:`1-p` (published: :math:`1 + k/(2d\\ln2)`; corrected: :math:`dH_b(k/d)`, as
    :math:`H_b` is symmetric); Corollary 1 is ``T`` times the single-round bound.
    """
    s = SYMBOLS
    if name == "hb":
        return _sym_binary_entropy(s.p)
    terms = _sym_terms(s.p, s.B, s.d_star, s.Delta, s.d, corrected)
    if name == "multi":
        return s.T * terms["single"]
    if name == "prunefl":
        return terms["single"].subs(s.p, 1 - s.kept / s.d)
    return terms[name]


def _sym_unit(expr_bits, unit, func):
    unit = _unit(unit, func)
    return expr_bits * sp.log(2) if unit == "nats" else expr_bits


def _unit(unit, func):
    return check_choice("unit", unit, func=func, choices=UNITS)


def _corrected(corrected, func):
    return check_bool("corrected", corrected, func=func)


# ---------------------------------------------------------------------------------------
# Symbolic forms
# ---------------------------------------------------------------------------------------


def part_expr(part, *, unit="bits", corrected=False):
    """Sympy expression of proof part ``"A"``, ``"B"``, ``"C"`` or ``"D"`` in ``SYMBOLS``.

    :math:`\\Delta` in nats, the result in ``unit``; the numeric ``part_*`` functions are
    this expression lambdified.

    Examples
    --------
    >>> part_expr("A") - part_expr("B")
    -(p - 1)/(2*log(2)) + 1
    """
    check_choice("part", part, func="part_expr", choices=("A", "B", "C", "D"))
    return _sym_unit(_bits_expr(part, _corrected(corrected, "part_expr")), unit, "part_expr")


def single_round_bound_expr(*, unit="bits", corrected=False):
    r"""Theorem 1 (published or corrected) as a sympy expression in p, B, d*, Delta (and d).

    :math:`\Delta` is in nats, the result in ``unit`` (per round). Differentiate,
    substitute or ``sp.lambdify`` it (with ``{"entr": scipy.special.entr}`` for the
    corrected form); ``sp.latex`` gives the LaTeX.

    Examples
    --------
    >>> sp.diff(single_round_bound_expr(), SYMBOLS.p)
    -1/(2*log(2))
    """
    func = "single_round_bound_expr"
    return _sym_unit(_bits_expr("single", _corrected(corrected, func)), unit, func)


def multi_round_bound_expr(*, unit="bits", corrected=False):
    """Corollary 1 with constant parameters: ``T`` times the single-round expression (total).

    Examples
    --------
    >>> sp.simplify(multi_round_bound_expr() / single_round_bound_expr())
    T
    """
    func = "multi_round_bound_expr"
    return _sym_unit(_bits_expr("multi", _corrected(corrected, func)), unit, func)


def multi_round_bound_per_round_expr(*, unit="bits", corrected=False):
    r"""Sum over rounds :math:`t = 1..T` of the single-round expression at indexed parameters.

    Indexed bases :math:`p_t, B_t, d^*_t, \Delta_t` (and :math:`d_t` when corrected).

    Examples
    --------
    >>> multi_round_bound_per_round_expr().limits
    ((t, 1, T),)
    """
    t = SYMBOLS.t
    p, B, d_star, Delta, d = (sp.IndexedBase(n) for n in ("p", "B", "d^*", "Delta", "d"))
    func = "multi_round_bound_per_round_expr"
    terms = _sym_terms(p[t], B[t], d_star[t], Delta[t], d[t], _corrected(corrected, func))
    body = _sym_unit(terms["single"], unit, func)
    return sp.Sum(body, (t, 1, SYMBOLS.T))


def prunefl_single_round_bound_expr(*, unit="bits", corrected=False):
    r"""PruneFL bound (eq. 23) in :math:`k = |\bar P\cup A|, d, B, d^*, \Delta`.

    Theorem 1 with :math:`1 - p` replaced by :math:`k/d`.

    Examples
    --------
    >>> s = SYMBOLS
    >>> prunefl = prunefl_single_round_bound_expr()
    >>> sp.simplify(prunefl.subs(s.kept, s.d * (1 - s.p)) - single_round_bound_expr())
    0
    """
    func = "prunefl_single_round_bound_expr"
    return _sym_unit(_bits_expr("prunefl", _corrected(corrected, func)), unit, func)
