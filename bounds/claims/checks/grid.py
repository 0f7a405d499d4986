"""Grid check: a dense grid over the parameters, then Nelder-Mead from the worst point.

:class:`GridCheck` compares a true quantity with a claimed one on a grid and refines
the worst grid point with an optimiser; a violation on part of the domain is reported
as ``holds-on-domain`` with the interval of one parameter where the claim holds.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from scipy import optimize

from pruneleak.bounds.claims.checks.results import (
    _SWAPPED,
    FAILS,
    HOLDS,
    HOLDS_ON_DOMAIN,
    INCONCLUSIVE,
    RELATIONS,
    CheckResult,
    Curve,
    Param,
    fmt,
    fmt_point,
)
from pruneleak.bounds.validation import check_choice

_REFINE_EVALS_PER_DIM = 80
_BISECTION_STEPS = 40
#: Values of each other parameter at which a domain's ends are reported.
_BOUNDARY_VALUES = 9


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


def longest_run(flags) -> tuple[int, int] | None:
    """First and last index of the longest run of True in ``flags`` (the first such run),
    or None when no run has at least two elements."""
    best, start = None, None
    for i, flag in enumerate([*np.asarray(flags, dtype=bool), False]):
        if flag and start is None:
            start = i
        elif not flag and start is not None:
            if i - 1 > start and (best is None or i - 1 - start > best[1] - best[0]):
                best = (start, i - 1)
            start = None
    return best


def _evaluate(func, values):
    with np.errstate(all="ignore"):
        return func(**values)


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
        """Longest run of domain-parameter values where the relation holds throughout,
        with its ends as functions of each other parameter (:meth:`_boundaries`)."""
        axis = [p.name for p in self.params].index(self.domain_param)
        param = self.params[axis]
        holds = ok & ~nan
        others = tuple(i for i in range(len(self.params)) if i != axis)
        good = np.all(holds, axis=others) if others else holds
        grid = param.grid()
        run = longest_run(good)
        if run is None:
            held = [fmt(v) for v in grid[good]]
            return None, (f"holds only at {param.text} = {', '.join(held)}" if held else None)
        lo_i, hi_i = run
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
        edge = "high" if lo_i == 0 else ("low" if hi_i == len(grid) - 1 else "both")
        domain = {
            "param": param.name,
            "low": float(lo),
            "high": float(hi),
            "edge": edge,
            "text": text,
        }
        boundaries = self._boundaries(holds, axis)
        if boundaries:
            domain["boundaries"] = boundaries
        return domain, None

    def _boundaries(self, holds, axis) -> list[dict]:
        """The domain as a function of each other parameter ``p_j``: at up to
        :data:`_BOUNDARY_VALUES` evenly spaced grid values ``v`` of ``p_j``, the longest run
        of domain-parameter values where the relation holds for ``p_j = v`` and every grid
        value of the remaining parameters, its open ends refined by bisection (``None``
        where it holds at fewer than two grid values)."""
        param = self.params[axis]
        grid = param.grid()
        boundaries = []
        for j, other in enumerate(self.params):
            values = other.grid()
            if j == axis or len(values) < 2:
                continue
            rest = tuple(i for i in range(len(self.params)) if i not in (axis, j))
            flags = np.all(holds, axis=rest) if rest else holds
            flags = flags if j < axis else flags.T  # (values of p_j, values of the domain param)
            chosen = np.unique(
                np.linspace(0, len(values) - 1, _BOUNDARY_VALUES).round().astype(int)
            )
            runs = [longest_run(flags[i]) for i in chosen]
            ends = {}
            for side, inward in (("low", -1), ("high", 1)):
                end = np.array([np.nan if r is None else grid[r[side == "high"]] for r in runs])
                bad = [r is not None and 0 <= r[side == "high"] + inward < len(grid) for r in runs]
                if not param.integer and any(bad):
                    rows = np.flatnonzero(bad)
                    outside = [grid[runs[i][side == "high"] + inward] for i in rows]
                    end[rows] = self._bisect_paired(
                        axis, j, values[chosen[rows]], np.array(outside), end[rows]
                    )
                ends[side] = [None if np.isnan(e) else float(e) for e in end]
            boundaries.append({"param": other.name, "values": values[chosen].tolist(), **ends})
        return boundaries

    def _holds_paired(self, axis, j, other_values, domain_values) -> np.ndarray:
        """Whether the relation holds at each pair ``(p_j, domain param) = (other_values[k],
        domain_values[k])`` for every grid value of the remaining parameters."""
        rest = [i for i in range(len(self.params)) if i not in (axis, j)]
        mesh = np.meshgrid(*(self.params[i].grid() for i in rest), indexing="ij")
        ones = (1,) * len(rest)
        count = len(other_values)
        values = {
            self.params[j].name: np.reshape(other_values, (count, *ones)),
            self.params[axis].name: np.reshape(domain_values, (count, *ones)),
        }
        values.update({self.params[i].name: m[None] for i, m in zip(rest, mesh, strict=True)})
        true, claimed = self._pair(values)
        diff, tol, _, nan = _margins(true, claimed, self.relation, self.rtol, self.atol)
        return ((diff >= -tol) & ~nan).reshape(count, -1).all(axis=1)

    def _bisect_paired(self, axis, j, other_values, bad, good) -> np.ndarray:
        """:meth:`_bisect` for several values of ``p_j`` at once (one evaluation per step)."""
        param = self.params[axis]
        ub, ug = param.to_coordinate(bad), param.to_coordinate(good)
        for _ in range(_BISECTION_STEPS):
            mid = 0.5 * (ub + ug)
            ok = self._holds_paired(axis, j, other_values, param.from_coordinate(mid))
            ug, ub = np.where(ok, mid, ug), np.where(ok, ub, mid)
        return param.from_coordinate(ug)

    def _smallest_counterexample(self, values, violated, true, claimed, diff) -> dict:
        """The violating grid point nearest the parameters' lower ends (sum of the
        coordinates scaled to [0, 1], log for log-scale parameters), with its values."""
        size = np.zeros(violated.shape)
        for p in self.params:
            span = p.to_coordinate(p.high) - p.to_coordinate(p.low)
            if span > 0:
                size = size + (p.to_coordinate(values[p.name]) - p.to_coordinate(p.low)) / span
        index = np.unravel_index(int(np.argmin(np.where(violated, size, np.inf))), size.shape)
        point = self._scalar_point(values, index)
        return {
            "point": point,
            "true": float(true[index]),
            "claimed": float(claimed[index]),
            "violation": float(-diff[index]),
            "text": f"at {fmt_point(point, self._labels)}: true {fmt(true[index])} vs "
            f"claimed {fmt(claimed[index])}",
        }

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
        numbers["counterexample"] = (
            self._smallest_counterexample(values, violated, true, claimed, diff)
            if violated.any()
            else {
                "point": point,
                "true": p_true,
                "claimed": p_claimed,
                "violation": -p_diff,
                "text": f"at {where}: {values_text}",
            }
        )
        domain, only = self._domain(ok, nan) if self.domain_param else (None, None)
        if domain is not None:
            numbers["domain"] = domain
        counter = f"worst at {where}: {values_text}, {size}"
        if numbers["counterexample"]["point"] != point:
            counter += f"; smallest counterexample {numbers['counterexample']['text']}"
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
