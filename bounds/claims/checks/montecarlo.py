"""Monte Carlo check: a probability or mean estimated by simulation, with intervals.

:class:`MonteCarloCheck` draws samples at each point and compares a Wilson interval
(probabilities) or a CLT interval (means, estimators with a standard error) with the
claimed value, at a family-wise confidence (Bonferroni over the points).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import numpy as np
from scipy import stats

from pruneleak.bounds.claims.checks.results import (
    _SWAPPED,
    FAILS,
    HOLDS,
    HOLDS_ON_DOMAIN,
    INCONCLUSIVE,
    RELATIONS,
    CheckResult,
    Curve,
    fmt,
    fmt_point,
)
from pruneleak.bounds.validation import check_choice, check_open_unit


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
        check_open_unit("confidence", self.confidence, func=func)
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
        numbers["counterexample"] = self._smallest_counterexample(rows)
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

    def _smallest_counterexample(self, rows) -> dict:
        """The failing point nearest the tested points' lower ends (sum of the numeric
        coordinates scaled to [0, 1] over the tested values)."""
        keys = [
            k for k in rows[0]["point"] if all(isinstance(r["point"][k], int | float) for r in rows)
        ]
        spans = {
            k: (min(r["point"][k] for r in rows), max(r["point"][k] for r in rows)) for k in keys
        }

        def size(row):
            return sum(
                (row["point"][k] - lo) / (hi - lo) for k, (lo, hi) in spans.items() if hi > lo
            )

        row = min((r for r in rows if r["verdict"] == FAILS), key=size)
        return {
            "point": row["point"],
            "true": row["estimate"],
            "interval": row["ci"],
            "claimed": row["claimed"],
            "text": f"at {fmt_point(row['point'], self.labels)}: estimate {fmt(row['estimate'])} "
            f"[{fmt(row['ci'][0])}, {fmt(row['ci'][1])}] vs claimed {fmt(row['claimed'])}",
        }

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
