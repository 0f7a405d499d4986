"""Symbolic checks: identities and inequalities in sympy, expansions and limits.

:class:`SymbolicCheck` decides an identity or inequality with the symbols' assumptions
and falls back to a :class:`~bounds.claims.checks.grid.GridCheck` when sympy cannot
decide; :class:`SeriesCheck` compares an expansion to a stated order;
:class:`LimitCheck` compares a limit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import sympy as sp

from pruneleak.bounds.claims.checks.grid import GridCheck
from pruneleak.bounds.claims.checks.results import (
    _SWAPPED,
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    RELATIONS,
    CheckResult,
    Curve,
    Param,
)
from pruneleak.bounds.validation import check_choice


def _short(expr, limit=160) -> str:
    text = str(expr)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _lambdify(expr, params):
    symbols = [sp.Symbol(p.name) for p in params]
    # Rebind each (possibly assumption-carrying) symbol of the expression to a plain one.
    plain = expr.subs({s: sp.Symbol(s.name) for s in expr.free_symbols})
    func = sp.lambdify(symbols, plain, modules=["scipy", "numpy"])

    def evaluate(**kw):
        return func(*(kw[p.name] for p in params))

    return evaluate


@dataclass(frozen=True, eq=False)
class SymbolicCheck:
    r"""Identity (``"=="``) or inequality (``"<="``, ``">="``) between sympy expressions.

    Identity: ``sympy.simplify(true - claimed) == 0`` (or ``.equals(0)``) proves it; a
    difference of magnitude above 1e-40 at the centre of the parameter box (50-digit
    evaluation) refutes it.
    Inequality: the sign of ``simplify(claimed - true)`` under the symbols' assumptions
    (``is_nonnegative``) proves or refutes it. The numeric grid over ``params`` (names =
    symbol names) always runs as well: it supplies the counterexample when sympy refutes,
    decides when sympy cannot (the result says so), and a disagreement with a sympy proof
    gives ``inconclusive``.
    """

    true: sp.Expr
    claimed: sp.Expr
    relation: str
    params: tuple[Param, ...]
    true_label: str
    claimed_label: str
    domain_param: str | None = None
    rtol: float = 1e-9
    atol: float = 1e-12
    kind = "symbolic"

    def __post_init__(self):
        check_choice("relation", self.relation, func="SymbolicCheck", choices=RELATIONS)

    def _sympy_decision(self):
        """(True: proved, False: refuted, None: undecided, simplified expression)."""
        if self.relation == "==":
            diff = sp.simplify(self.true - self.claimed)
            if diff == 0:
                return True, diff
            decided = diff.equals(0)
            if decided is None and self._nonzero_somewhere(diff):
                decided = False
            return decided, diff
        gap = self.claimed - self.true if self.relation == "<=" else self.true - self.claimed
        gap = sp.simplify(gap)
        if gap.is_nonnegative:
            return True, gap
        if gap.is_negative:
            return False, gap
        return None, gap

    def _nonzero_somewhere(self, diff) -> bool:
        """Refute an identity by a 50-digit evaluation at the centre of the parameter box."""
        centre = {}
        for p in self.params:
            mid = math.sqrt(p.low * p.high) if p.scale == "log" else (p.low + p.high) / 2
            centre[sp.Symbol(p.name)] = sp.Float(mid, 50)
        plain = diff.subs({s: sp.Symbol(s.name) for s in diff.free_symbols})
        value = sp.N(plain.subs(centre), 50)
        return bool(value.is_number and value.is_finite and abs(value) > sp.Float(10) ** -40)

    def run(self, *, rng=None, effort: float = 1.0) -> CheckResult:
        decided, expr = self._sympy_decision()
        name = "simplify(true - claimed)" if self.relation == "==" else "the gap"
        numeric = GridCheck(
            true=_lambdify(self.true, self.params),
            claimed=_lambdify(self.claimed, self.params),
            params=self.params,
            relation=self.relation,
            true_label=self.true_label,
            claimed_label=self.claimed_label,
            domain_param=self.domain_param,
            rtol=self.rtol,
            atol=self.atol,
        ).run(rng=rng, effort=effort)
        numbers = {
            "comparison": f"{self.true_label} {self.relation} {self.claimed_label}",
            "sympy": {True: "proved", False: "refuted", None: "undecided"}[decided],
            "sympy_expression": _short(expr),
            "numeric": numeric.to_dict(),
        }
        if "counterexample" in numeric.numbers:
            numbers["counterexample"] = numeric.numbers["counterexample"]
        if "domain" in numeric.numbers:  # the domain the numeric grid found, for reports
            numbers["domain"] = numeric.numbers["domain"]
        if decided is True:
            if numeric.verdict == HOLDS:
                text = "= 0" if self.relation == "==" else ">= 0 under the assumptions"
                return CheckResult(
                    self.kind,
                    HOLDS,
                    f"sympy proves it ({name} {text}); numeric grid agrees",
                    numbers,
                    numeric.curve,
                )
            return CheckResult(
                self.kind,
                INCONCLUSIVE,
                f"sympy proves it but the numeric grid disagrees: {numeric.summary}",
                numbers,
                numeric.curve,
            )
        if decided is False and numeric.verdict == HOLDS:
            return CheckResult(
                self.kind,
                INCONCLUSIVE,
                f"sympy refutes it ({name} = {_short(expr, 60)}) but the "
                f"numeric grid finds no violation",
                numbers,
                numeric.curve,
            )
        prefix = (
            "sympy refutes it"
            if decided is False
            else "sympy cannot decide; numeric fallback on the grid"
        )
        return CheckResult(
            self.kind, numeric.verdict, f"{prefix}: {numeric.summary}", numbers, numeric.curve
        )

    def negated(self) -> SymbolicCheck:
        if self.relation == "==":
            return replace(self, claimed=self.claimed + 1, domain_param=None)
        return replace(self, relation=_SWAPPED[self.relation], domain_param=None)


@dataclass(frozen=True, eq=False)
class SeriesCheck:
    r"""Asymptotic identity ``true = claimed + O((var - point)^order)`` as ``var -> point``.

    Sympy expands ``true - claimed`` to ``order`` (terms of lower order must vanish); the
    leading surviving term is the counterexample. ``param`` gives the range of ``var`` for
    the plotted curve.
    """

    true: sp.Expr
    claimed: sp.Expr
    var: sp.Symbol
    order: int
    param: Param
    true_label: str
    claimed_label: str
    point: float = 0
    kind = "symbolic"

    def run(self, *, rng=None, effort: float = 1.0) -> CheckResult:
        del rng, effort
        diff = sp.series(self.true - self.claimed, self.var, self.point, self.order).removeO()
        diff = sp.simplify(diff)
        expansion = sp.series(self.true, self.var, self.point, self.order)
        numbers = {
            "true_expansion": _short(expansion),
            "claimed": _short(self.claimed),
            "order": self.order,
        }
        curve = GridCheck(
            true=_lambdify(self.true, (self.param,)),
            claimed=_lambdify(self.claimed, (self.param,)),
            params=(self.param,),
            relation="==",
            true_label=self.true_label,
            claimed_label=self.claimed_label,
        )._curve({self.param.name: self.param.low})
        nearest = int(np.argmin(np.abs(curve.x - float(self.point))))
        numbers["nearest_point"] = {
            self.param.name: float(curve.x[nearest]),
            "true": float(curve.true[nearest]),
            "claimed": float(curve.claimed[nearest]),
        }
        if diff == 0:
            return CheckResult(
                self.kind,
                HOLDS,
                f"sympy: true - claimed = O({self.var}^{self.order}) as {self.var} -> {self.point}",
                numbers,
                curve,
            )
        lead = diff.as_leading_term(self.var)
        numbers["leading_difference"] = _short(lead)
        numbers["counterexample"] = {
            "point": {self.param.name: float(self.point)},
            "text": f"true - claimed ~ {_short(lead, 60)} as {self.var} -> {self.point}",
        }
        return CheckResult(
            self.kind,
            FAILS,
            f"sympy: true = {_short(expansion, 80)}; true - claimed has the "
            f"leading term {_short(lead, 60)}, not O({self.var}^{self.order})",
            numbers,
            curve,
        )

    def negated(self) -> SeriesCheck:
        return replace(self, claimed=self.claimed + (self.var - self.point) ** (self.order - 1))


@dataclass(frozen=True, eq=False)
class LimitCheck:
    r"""The limit of ``expr`` as ``var -> point`` (from ``direction``) is as ``expect``-ed.

    ``expect``: ``"finite"``, ``"finite-nonzero"`` or ``"infinite"``. Sympy computes the
    limit; an unevaluated limit gives ``inconclusive``. ``param`` gives the range of
    ``var`` for the plotted curve (approaching the point), with the other symbols set by
    ``curve_subs``.
    """

    expr: sp.Expr
    var: sp.Symbol
    point: object
    expect: str
    param: Param
    true_label: str
    direction: str = "+"
    curve_subs: Mapping = field(default_factory=dict)
    kind = "symbolic"

    def __post_init__(self):
        check_choice(
            "expect",
            self.expect,
            func="LimitCheck",
            choices=("finite", "finite-nonzero", "infinite"),
        )

    def run(self, *, rng=None, effort: float = 1.0) -> CheckResult:
        del rng, effort
        value = sp.limit(self.expr, self.var, self.point, self.direction)
        curve_func = _lambdify(self.expr.subs(self.curve_subs), (self.param,))
        x = self.param.grid(200)
        with np.errstate(all="ignore"):
            y = np.broadcast_to(np.asarray(curve_func(**{self.param.name: x}), float), x.shape)
        curve = Curve(
            x_label=self.param.text,
            x=x,
            true=np.array(y),
            log_x=self.param.scale == "log",
            true_label=self.true_label,
        )
        numbers = {
            "limit": str(value),
            "expected": self.expect,
            "point": f"{self.var} -> {self.point}{self.direction}",
        }
        if value.has(sp.Limit, sp.AccumBounds) or value is sp.nan:
            return CheckResult(
                self.kind,
                INCONCLUSIVE,
                f"sympy could not evaluate the limit ({_short(value, 60)})",
                numbers,
                curve,
            )
        finite = bool(value.is_finite)
        ok = {
            "finite": finite,
            "finite-nonzero": finite and value != 0,
            "infinite": value in (sp.oo, -sp.oo, sp.zoo),
        }[self.expect]
        text = (
            f"sympy: limit of {self.true_label} as {self.var} -> {self.point}"
            f"{self.direction} is {_short(value, 40)} (expected {self.expect})"
        )
        if not ok:
            numbers["counterexample"] = {
                "point": {self.param.name: float(self.point)},
                "text": f"the limit is {_short(value, 40)}, not {self.expect}",
            }
        return CheckResult(self.kind, HOLDS if ok else FAILS, text, numbers, curve)

    def negated(self) -> LimitCheck:
        return replace(self, expect="infinite" if self.expect != "infinite" else "finite")
