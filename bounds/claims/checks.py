r"""The three kinds of check behind every claim, and how each reaches a verdict.

A check compares a **true** quantity (exact, closed form, quadrature or Monte Carlo) with
the **claimed** expression of a paper under a relation: ``"<="`` (the paper claims
true <= claimed, e.g. a tail bound), ``">="`` (true >= claimed, e.g. a lower bound on a
mean) or ``"=="`` (an identity). Each ``run(rng=..., effort=...)`` returns a
:class:`CheckResult` with one of the verdicts

``holds``
    proved symbolically, or no violation anywhere on a dense grid after an optimiser
    searched for the worst point, or every Monte Carlo confidence interval agrees;
``holds-on-domain``
    violated on part of the stated domain but holding on a non-degenerate interval of
    one parameter, which is reported (e.g. ``a/sigma_A <= 0.8601``);
``fails``
    a concrete counterexample (point, true value, claimed value, size of the violation),
    or a Monte Carlo interval that excludes the claimed value;
``inconclusive``
    sympy could not decide and no numeric check settled it, points could not be
    evaluated, or a confidence interval straddles the claimed value.

Kinds (``CheckResult.kind``):

* ``"symbolic"``: :class:`SymbolicCheck` (identity or inequality, sympy with the symbols'
  assumptions, numeric fallback on a grid when sympy cannot decide),
  :class:`SeriesCheck` (an expansion to a stated order) and :class:`LimitCheck`;
* ``"grid"``: :class:`GridCheck` (dense grid, then Nelder-Mead from the worst grid point);
* ``"monte-carlo"``: :class:`MonteCarloCheck` (Wilson intervals for probabilities, CLT
  intervals for means and for estimators returning ``(estimate, standard_error)``),
  family-wise confidence 99 % by default (Bonferroni over the points).

Every check has a failure path; ``negated()`` returns the check of a claim that contradicts
it (relation reversed, or the claimed value shifted), which the tests run to show that
a check reported as holding could have failed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import sympy as sp
from scipy import optimize, stats

from bounds.validation import check_choice, check_real

VERDICTS = ("holds", "holds-on-domain", "fails", "inconclusive")
HOLDS, HOLDS_ON_DOMAIN, FAILS, INCONCLUSIVE = VERDICTS
RELATIONS = ("<=", ">=", "==")
_SWAPPED = {"<=": ">=", ">=": "<=", "==": "=="}
_REFINE_EVALS_PER_DIM = 80
_BISECTION_STEPS = 40


def fmt(value) -> str:
    """Short human-readable form of a number (4 significant digits)."""
    if isinstance(value, bool | str) or value is None:
        return str(value)
    if isinstance(value, int | np.integer):
        return str(int(value))
    value = float(value)
    if not math.isfinite(value):
        return str(value)
    return f"{value:.4g}"


def fmt_point(point: Mapping[str, float], labels: Mapping[str, str] | None = None) -> str:
    labels = labels or {}
    return ", ".join(f"{labels.get(k, k)}={fmt(v)}" for k, v in point.items())


def combine_verdicts(verdicts: Sequence[str]) -> str:
    """Verdict of a conjunction of checks: any fails -> fails, then holds-on-domain, ..."""
    for verdict in verdicts:
        check_choice("verdict", verdict, func="combine_verdicts", choices=VERDICTS)
    if not verdicts:
        return INCONCLUSIVE
    for verdict in (FAILS, HOLDS_ON_DOMAIN, INCONCLUSIVE):
        if verdict in verdicts:
            return verdict
    return HOLDS


# ---------------------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    """A parameter swept by a grid: ``points`` values in ``[low, high]``.

    ``scale="log"`` spaces them geometrically; ``integer=True`` rounds them (duplicates
    removed) and hands int64 arrays to the functions. ``label`` names it in reports.
    """

    name: str
    low: float
    high: float
    scale: str = "linear"
    integer: bool = False
    points: int = 41
    label: str | None = None

    def __post_init__(self):
        func = "Param"
        check_choice("scale", self.scale, func=func, choices=("linear", "log"))
        check_real(
            "low",
            self.low,
            func=func,
            low=0 if self.scale == "log" else None,
            low_inclusive=self.scale != "log",
        )
        check_real("high", self.high, func=func, low=self.low)
        if self.points < 1:
            raise ValueError(f"The 'points' parameter of Param must be >= 1. Got {self.points}.")

    @property
    def text(self) -> str:
        return self.label or self.name

    def grid(self, points: int | None = None) -> np.ndarray:
        n = points or self.points
        if n == 1 or self.low == self.high:
            values = np.array([self.low], dtype=float)
        elif self.scale == "log":
            values = np.geomspace(self.low, self.high, n)
        else:
            values = np.linspace(self.low, self.high, n)
        if self.integer:
            return np.unique(np.round(values)).astype(np.int64)
        return values

    def to_coordinate(self, value):
        return np.log(value) if self.scale == "log" else value

    def from_coordinate(self, u):
        return np.exp(u) if self.scale == "log" else u


@dataclass(frozen=True, eq=False)
class Curve:
    """Claimed and true values along one parameter (for plots of failing claims)."""

    x_label: str
    x: np.ndarray
    true: np.ndarray
    claimed: np.ndarray | None = None
    true_low: np.ndarray | None = None
    true_high: np.ndarray | None = None
    log_x: bool = False
    true_label: str = "true"
    claimed_label: str = "claimed"


@dataclass(frozen=True, eq=False)
class CheckResult:
    """Outcome of one check: ``kind``, ``verdict``, a one-line ``summary`` and ``numbers``."""

    kind: str
    verdict: str
    summary: str
    numbers: dict = field(default_factory=dict)
    curve: Curve | None = None

    def to_dict(self) -> dict:
        return {"kind": self.kind, "verdict": self.verdict, "summary": self.summary, **self.numbers}


# ---------------------------------------------------------------------------------------
# Margins shared by the grid and symbolic checks
# ---------------------------------------------------------------------------------------


def _margins(true, claimed, relation, rtol, atol):
    """Signed margin (>= 0 where the relation holds), tolerance, relative margin and NaN mask."""
    true = np.asarray(true, dtype=float)
    claimed = np.asarray(claimed, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        if relation == "<=":
            diff = claimed - true
        elif relation == ">=":
            diff = true - claimed
        else:
            diff = -np.abs(claimed - true)
        diff = np.where(claimed == true, 0.0, diff)
        scale = np.maximum(np.abs(true), np.abs(claimed))
        finite_scale = np.where(np.isfinite(scale), scale, 0.0)
        tol = rtol * finite_scale + atol
        denominator = finite_scale + atol
        relative = diff / np.where(denominator > 0, denominator, 1.0)
    nan = np.isnan(true) | np.isnan(claimed) | np.isnan(diff)
    return diff, tol, np.where(nan, np.inf, relative), nan


def _evaluate(func, values):
    with np.errstate(all="ignore"):
        return func(**values)


# ---------------------------------------------------------------------------------------
# Grid check
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class GridCheck:
    r"""Numeric comparison on a dense grid, refined by an optimiser at the worst point.

    ``true(**params)`` and ``claimed(**params)`` are vectorised (numpy broadcasting over
    the meshgrid of ``params``). A point violates the relation when the signed margin is
    below ``-(rtol * max(|true|, |claimed|) + atol)``. Nelder-Mead then minimises the
    relative margin over the continuous parameters from the worst grid point.

    With violations and a ``domain_param``, the values of that parameter at which the
    relation holds for every value of the others are collected; the longest run of them
    (at least two grid values, refined by bisection at its open ends) is the domain
    reported. ``domain_verdict=False`` reports that domain but keeps the verdict
    ``fails`` (for claims about a limit, e.g. a noiseless release).
    """

    true: Callable
    claimed: Callable
    params: tuple[Param, ...]
    relation: str
    true_label: str
    claimed_label: str
    domain_param: str | None = None
    domain_verdict: bool = True
    curve_param: str | None = None
    rtol: float = 1e-9
    atol: float = 1e-12
    refine: bool = True
    kind = "grid"

    def __post_init__(self):
        check_choice("relation", self.relation, func="GridCheck", choices=RELATIONS)
        names = [p.name for p in self.params]
        for name in (self.domain_param, self.curve_param):
            if name is not None and name not in names:
                raise ValueError(f"GridCheck parameter {name!r} is not one of {names}.")

    @property
    def _labels(self):
        return {p.name: p.text for p in self.params}

    def _values(self, grids):
        mesh = np.meshgrid(*grids, indexing="ij")
        return {p.name: m for p, m in zip(self.params, mesh, strict=True)}

    def _pair(self, values):
        shape = np.broadcast_shapes(*(np.shape(v) for v in values.values()))
        true = np.broadcast_to(np.asarray(_evaluate(self.true, values), dtype=float), shape)
        claimed = np.broadcast_to(np.asarray(_evaluate(self.claimed, values), dtype=float), shape)
        return true, claimed

    def _scalar_point(self, values, index):
        return {
            k: (int(v[index]) if v.dtype.kind in "iu" else float(v[index]))
            for k, v in values.items()
        }

    def _refine(self, point, best):
        continuous = [p for p in self.params if not p.integer and p.low < p.high]
        if not self.refine or not continuous or not math.isfinite(best):
            return point, best

        def objective(u):
            trial = dict(point)
            for p, ui in zip(continuous, u, strict=True):
                trial[p.name] = float(np.clip(p.from_coordinate(ui), p.low, p.high))
            try:
                true, claimed = self._pair({k: np.asarray(v) for k, v in trial.items()})
            except ValueError:
                return np.inf
            rel = _margins(true, claimed, self.relation, self.rtol, self.atol)[2]
            return float(rel.reshape(-1)[0])

        u0 = [p.to_coordinate(point[p.name]) for p in continuous]
        lims = [(p.to_coordinate(p.low), p.to_coordinate(p.high)) for p in continuous]
        res = optimize.minimize(
            objective,
            u0,
            method="Nelder-Mead",
            bounds=lims,
            options={
                "maxfev": _REFINE_EVALS_PER_DIM * len(continuous),
                "xatol": 1e-10,
                "fatol": 1e-15,
            },
        )
        if res.fun < best:
            refined = dict(point)
            for p, ui in zip(continuous, res.x, strict=True):
                refined[p.name] = float(np.clip(p.from_coordinate(ui), p.low, p.high))
            return refined, float(res.fun)
        return point, best

    def _ok_at(self, param, value):
        """Whether the relation holds for every grid value of the other parameters."""
        grids = [np.array([value]) if p is param else p.grid() for p in self.params]
        true, claimed = self._pair(self._values(grids))
        diff, tol, _, nan = _margins(true, claimed, self.relation, self.rtol, self.atol)
        return bool(np.all((diff >= -tol) & ~nan))

    def _domain(self, ok, nan):
        """Longest run of domain-parameter values where the relation holds throughout."""
        axis = [p.name for p in self.params].index(self.domain_param)
        param = self.params[axis]
        others = tuple(i for i in range(len(self.params)) if i != axis)
        good = np.all(ok & ~nan, axis=others) if others else (ok & ~nan)
        grid = param.grid()
        best, start = (0, 0), None
        for i, flag in enumerate([*good, False]):
            if flag and start is None:
                start = i
            elif not flag and start is not None:
                if i - start > best[1] - best[0]:
                    best = (start, i)
                start = None
        lo_i, hi_i = best[0], best[1] - 1
        if hi_i - lo_i < 1:
            held = [fmt(v) for v in grid[good]]
            return None, (f"holds only at {param.text} = {', '.join(held)}" if held else None)
        lo, hi = grid[lo_i], grid[hi_i]
        if not param.integer:
            if lo_i > 0:
                lo = self._bisect(param, grid[lo_i - 1], lo)
            if hi_i < len(grid) - 1:
                hi = self._bisect(param, grid[hi_i + 1], hi)
        if lo_i == 0 and hi_i == len(grid) - 1:
            text = f"{param.text} in [{fmt(lo)}, {fmt(hi)}]"
        elif lo_i == 0:
            text = f"{param.text} <= {fmt(hi)}"
        elif hi_i == len(grid) - 1:
            text = f"{param.text} >= {fmt(lo)}"
        else:
            text = f"{fmt(lo)} <= {param.text} <= {fmt(hi)}"
        return {"param": param.name, "low": float(lo), "high": float(hi), "text": text}, None

    def _bisect(self, param, bad, good):
        ub, ug = param.to_coordinate(float(bad)), param.to_coordinate(float(good))
        for _ in range(_BISECTION_STEPS):
            mid = 0.5 * (ub + ug)
            if self._ok_at(param, float(param.from_coordinate(mid))):
                ug = mid
            else:
                ub = mid
        return float(param.from_coordinate(ug))

    def _curve(self, point):
        name = self.curve_param or self.domain_param or self.params[0].name
        param = next(p for p in self.params if p.name == name)
        x = param.grid(max(param.points, 200) if not param.integer else param.points)
        values = {k: (x if k == name else np.full(x.shape, v)) for k, v in point.items()}
        true, claimed = self._pair(values)
        return Curve(
            x_label=param.text,
            x=np.asarray(x, dtype=float),
            true=np.array(true),
            claimed=np.array(claimed),
            log_x=param.scale == "log",
            true_label=self.true_label,
            claimed_label=self.claimed_label,
        )

    def run(self, *, rng=None, effort: float = 1.0) -> CheckResult:
        """Evaluate on the grid (``rng`` and ``effort`` are unused: the grid is exact)."""
        del rng, effort
        values = self._values([p.grid() for p in self.params])
        true, claimed = self._pair(values)
        diff, tol, relative, nan = _margins(true, claimed, self.relation, self.rtol, self.atol)
        ok = diff >= -tol
        violated = ~ok & ~nan
        index = np.unravel_index(int(np.argmin(relative)), relative.shape)
        point, worst_rel = self._refine(self._scalar_point(values, index), float(relative[index]))
        p_true, p_claimed = self._pair({k: np.asarray(v) for k, v in point.items()})
        p_true, p_claimed = float(p_true.reshape(-1)[0]), float(p_claimed.reshape(-1)[0])
        p_diff, p_tol = (
            float(a.reshape(-1)[0])
            for a in _margins(p_true, p_claimed, self.relation, self.rtol, self.atol)[:2]
        )
        refined_violation = p_diff < -p_tol
        numbers = {
            "comparison": f"{self.true_label} {self.relation} {self.claimed_label}",
            "grid_points": int(relative.size),
            "violating_fraction": float(np.mean(violated)),
            "worst_point": point,
            "true_value": p_true,
            "claimed_value": p_claimed,
            "margin": p_diff,
            "relative_margin": worst_rel,
        }
        where = fmt_point(point, self._labels)
        values_text = f"true {fmt(p_true)} vs claimed {fmt(p_claimed)}"
        if not violated.any() and not refined_violation:
            if nan.any():
                bad = self._scalar_point(values, tuple(np.argwhere(nan)[0]))
                numbers["nan_points"] = int(nan.sum())
                return CheckResult(
                    self.kind,
                    INCONCLUSIVE,
                    f"could not evaluate {int(nan.sum())} grid points (e.g. at "
                    f"{fmt_point(bad, self._labels)}); no violation elsewhere",
                    numbers,
                    self._curve(point),
                )
            return CheckResult(
                self.kind,
                HOLDS,
                f"no violation on {relative.size} grid points and after refinement; "
                f"tightest at {where}: {values_text}",
                numbers,
                self._curve(point),
            )
        size = f"violation {fmt(-p_diff)} ({fmt(-worst_rel * 100)}% relative)"
        numbers["violation"] = -p_diff
        domain, only = self._domain(ok, nan) if self.domain_param else (None, None)
        if domain is not None:
            numbers["domain"] = domain
        counter = f"counterexample at {where}: {values_text}, {size}"
        frac = f"{fmt(100 * np.mean(violated))}% of the grid violates"
        if domain is not None and self.domain_verdict:
            return CheckResult(
                self.kind,
                HOLDS_ON_DOMAIN,
                f"holds for {domain['text']}; {counter}; {frac}",
                numbers,
                self._curve(point),
            )
        extra = (
            f"; holds only for {domain['text']}"
            if domain is not None
            else (f"; {only}" if only else "")
        )
        return CheckResult(
            self.kind, FAILS, f"{counter}; {frac}{extra}", numbers, self._curve(point)
        )

    def negated(self) -> GridCheck:
        """The contradicting claim: relation reversed, or for ``==`` the claim shifted."""
        if self.relation == "==":
            claimed = self.claimed

            def shifted(**kw):
                value = np.asarray(claimed(**kw), dtype=float)
                return value + 1 + np.abs(value)

            return replace(self, claimed=shifted, domain_param=None)
        return replace(self, relation=_SWAPPED[self.relation], domain_param=None)


# ---------------------------------------------------------------------------------------
# Symbolic checks
# ---------------------------------------------------------------------------------------


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
        return CheckResult(self.kind, HOLDS if ok else FAILS, text, numbers, curve)

    def negated(self) -> LimitCheck:
        return replace(self, expect="infinite" if self.expect != "infinite" else "finite")


# ---------------------------------------------------------------------------------------
# Monte Carlo
# ---------------------------------------------------------------------------------------


def wilson_interval(successes: int, n: int, *, confidence: float) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion at the two-sided ``confidence``."""
    z = stats.norm.isf((1 - confidence) / 2)
    p = successes / n
    denom = 1 + z**2 / n
    centre = (p + z**2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_interval(estimate: float, std_error: float, *, confidence: float):
    """CLT (normal) interval ``estimate +- z * std_error``."""
    z = stats.norm.isf((1 - confidence) / 2)
    return estimate - z * std_error, estimate + z * std_error


@dataclass(frozen=True, eq=False)
class MonteCarloCheck:
    r"""A probability or mean estimated by simulation at each of ``points``.

    ``sampler(rng, n, **point)`` returns, per ``statistic``:

    * ``"probability"``: ``n`` booleans (the event); Wilson interval;
    * ``"mean"``: ``n`` real values; CLT interval;
    * ``"estimate"``: a pair ``(estimate, standard_error)`` (e.g. a delta-method
      estimator); CLT interval.

    The claimed value at a point is ``claimed(**point)``; ``exact(**point)``, if given and
    not ``None`` at that point, is reported beside the estimate. Per point, with the
    interval at family-wise level ``confidence`` (Bonferroni over the points): ``"<="``
    holds when the upper end is at most the claimed value and fails when the lower end
    exceeds it (``">="`` mirrored); ``"=="`` holds when the interval contains the claimed
    value and fails otherwise. Each point draws ``ceil(samples * effort)`` samples.
    """

    sampler: Callable
    claimed: Callable
    points: tuple[dict, ...]
    relation: str
    statistic: str
    samples: int
    true_label: str
    claimed_label: str
    domain_param: str | None = None
    exact: Callable | None = None
    confidence: float = 0.99
    labels: Mapping[str, str] = field(default_factory=dict)
    kind = "monte-carlo"

    def __post_init__(self):
        func = "MonteCarloCheck"
        check_choice("relation", self.relation, func=func, choices=RELATIONS)
        check_choice(
            "statistic", self.statistic, func=func, choices=("probability", "mean", "estimate")
        )
        check_real(
            "confidence",
            self.confidence,
            func=func,
            low=0,
            high=1,
            low_inclusive=False,
            high_inclusive=False,
        )
        if not self.points:
            raise ValueError("MonteCarloCheck needs at least one point.")

    def _interval(self, draw, n, level):
        if self.statistic == "probability":
            k = int(np.count_nonzero(draw))
            lo, hi = wilson_interval(k, n, confidence=level)
            return k / n, math.sqrt(k * (n - k) / n) / n, lo, hi
        if self.statistic == "mean":
            values = np.asarray(draw, dtype=float)
            est, se = float(values.mean()), float(values.std(ddof=1) / math.sqrt(n))
        else:
            est, se = (float(v) for v in draw)
        lo, hi = mean_interval(est, se, confidence=level)
        return est, se, lo, hi

    def _decide(self, lo, hi, claimed):
        if self.relation == "<=":
            return HOLDS if hi <= claimed else (FAILS if lo > claimed else INCONCLUSIVE)
        if self.relation == ">=":
            return HOLDS if lo >= claimed else (FAILS if hi < claimed else INCONCLUSIVE)
        return HOLDS if lo <= claimed <= hi else FAILS

    def run(self, *, rng=None, effort: float = 1.0) -> CheckResult:
        rng = np.random.default_rng(rng)
        n = max(2, math.ceil(self.samples * effort))
        level = 1 - (1 - self.confidence) / len(self.points)
        rows = []
        for point in self.points:
            draw = self.sampler(rng, n, **point)
            est, se, lo, hi = self._interval(draw, n, level)
            claimed = float(self.claimed(**point))
            row = {
                "point": dict(point),
                "n": n,
                "estimate": est,
                "std_error": se,
                "ci": [lo, hi],
                "claimed": claimed,
                "verdict": self._decide(lo, hi, claimed),
            }
            exact = None if self.exact is None else self.exact(**point)
            if exact is not None:
                row["exact"] = float(exact)
            rows.append(row)
        return self._result(rows, n)

    def _distance(self, row):
        """How far the interval lies on the wrong (positive) or right (negative) side."""
        lo, hi = row["ci"]
        c = row["claimed"]
        if self.relation == "<=":
            return lo - c if row["verdict"] == FAILS else hi - c
        if self.relation == ">=":
            return c - hi if row["verdict"] == FAILS else c - lo
        return max(lo - c, c - hi)

    def _result(self, rows, n):
        verdicts = [r["verdict"] for r in rows]
        numbers = {
            "comparison": f"{self.true_label} {self.relation} {self.claimed_label}",
            "confidence": f"{self.confidence:.0%} family-wise (Bonferroni over {len(rows)} points)",
            "samples_per_point": n,
            "points": rows,
        }
        worst = max(rows, key=self._distance)
        extra = f", exact {fmt(worst['exact'])}" if "exact" in worst else ""
        where = (
            f"at {fmt_point(worst['point'], self.labels)}: estimate {fmt(worst['estimate'])} "
            f"[{fmt(worst['ci'][0])}, {fmt(worst['ci'][1])}]{extra} vs claimed "
            f"{fmt(worst['claimed'])} (n={n})"
        )
        curve = self._curve(rows)
        if all(v == HOLDS for v in verdicts):
            return CheckResult(
                self.kind,
                HOLDS,
                f"all {len(rows)} points agree at {numbers['confidence']}; closest {where}",
                numbers,
                curve,
            )
        if FAILS not in verdicts:
            return CheckResult(
                self.kind,
                INCONCLUSIVE,
                f"interval straddles the claimed value {where}",
                numbers,
                curve,
            )
        numbers["violation"] = self._distance(worst)
        domain = self._domain(rows)
        if domain is not None:
            numbers["domain"] = domain
            return CheckResult(
                self.kind,
                HOLDS_ON_DOMAIN,
                f"holds for {domain['text']} (tested points); fails {where}",
                numbers,
                curve,
            )
        return CheckResult(
            self.kind,
            FAILS,
            f"fails at {verdicts.count(FAILS)}/{len(rows)} points; worst {where}",
            numbers,
            curve,
        )

    def _domain(self, rows):
        if self.domain_param is None:
            return None
        name = self.domain_param
        label = self.labels.get(name, name)
        ordered = sorted(rows, key=lambda r: r["point"][name])
        values = sorted({r["point"][name] for r in ordered})
        good = [
            all(r["verdict"] == HOLDS for r in ordered if r["point"][name] == v) for v in values
        ]
        runs, start = [], None
        for i, flag in enumerate([*good, False]):
            if flag and start is None:
                start = i
            elif not flag and start is not None:
                runs.append((start, i - 1))
                start = None
        if not runs:
            return None
        lo_i, hi_i = max(runs, key=lambda r: r[1] - r[0])
        if hi_i == lo_i:
            return None
        if lo_i == 0:
            text = f"{label} <= {fmt(values[hi_i])}"
            if hi_i + 1 < len(values):
                text += f" (fails from {fmt(values[hi_i + 1])})"
        elif hi_i == len(values) - 1:
            text = f"{label} >= {fmt(values[lo_i])} (fails at {fmt(values[lo_i - 1])})"
        else:
            text = f"{fmt(values[lo_i])} <= {label} <= {fmt(values[hi_i])}"
        return {
            "param": name,
            "low": float(values[lo_i]),
            "high": float(values[hi_i]),
            "text": text,
        }

    def _curve(self, rows):
        keys = list(rows[0]["point"])
        name = self.domain_param or next(
            (k for k in keys if len({r["point"][k] for r in rows}) > 1), keys[0]
        )
        rows = sorted(rows, key=lambda r: r["point"][name])
        x = np.array([r["point"][name] for r in rows], dtype=float)
        return Curve(
            x_label=self.labels.get(name, name),
            x=x,
            true=np.array([r["estimate"] for r in rows]),
            claimed=np.array([r["claimed"] for r in rows]),
            true_low=np.array([r["ci"][0] for r in rows]),
            true_high=np.array([r["ci"][1] for r in rows]),
            log_x=bool(np.all(x > 0) and x.max() / x.min() > 20),
            true_label=self.true_label,
            claimed_label=self.claimed_label,
        )

    def negated(self) -> MonteCarloCheck:
        if self.relation == "==":
            claimed = self.claimed
            return replace(
                self, claimed=lambda **kw: claimed(**kw) + 1 + abs(claimed(**kw)), domain_param=None
            )
        return replace(self, relation=_SWAPPED[self.relation], domain_param=None)


CHECK_TYPES = (GridCheck, SymbolicCheck, SeriesCheck, LimitCheck, MonteCarloCheck)
