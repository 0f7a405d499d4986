"""PriPrune's Fig. 2 claim, "increasing pruning rate reduces the success of the privacy
attack" (journal version lines 1437-1446, NMI and PSNR in Fig. 2 and A2), judged on a
sweep's p panel with intervals over seeds and a paired test, and the exact leakage in
bits beside the attack's scores.

Per (scheme, attack) curve of the panel, each pruning rate's mean of a metric and its t
interval over the seeds' means (:func:`estimators.replicates.seed_interval`), and the
paired change from the smallest to the largest rate
(:func:`estimators.replicates.paired_seed_comparison`: the same seed, hence the same data
split, model and target clients, and the same target's best score at both rates). The
claim is that the change is negative; :func:`estimators.replicates.claim_verdict` says
whether the interval shows it ("holds"), shows the opposite or no change ("fails") or
straddles 0 (not resolved at this scale).
NMI and PSNR score a reconstruction; the exact bits (``exact_bits``, the Bayes-optimal
server's view of the same upload) say whether the leakage itself falls.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pruneleak.estimators.replicates import (
    METHOD,
    claim_verdict,
    mean_interval_text,
    paired_seed_comparison,
    seed_interval,
)
from pruneleak.sims.sweep.grid import SweepConfig
from pruneleak.sims.sweep.panels import panel_groups, seed_target_values

__all__ = ["PAPER_CLAIM", "TREND_METRICS", "format_trend_table", "trend_rows"]

#: The paper's claim these rows judge (journal version, lines 1445-1446).
PAPER_CLAIM = "increasing pruning rate reduces the success of the privacy attack"
#: Metrics judged by default: the attack's scores and the exact leakage (bits).
TREND_METRICS = ("nmi", "psnr", "exact_bits")


def trend_rows(
    config: SweepConfig,
    records: Iterable[Mapping],
    *,
    panel: str = "p",
    metrics: Sequence[str] = TREND_METRICS,
) -> list[dict]:
    """One row per (scheme, attack, metric) of ``panel`` whose records hold the metric.

    Row fields: ``scheme``, ``attack``, ``metric``, ``axis`` (the panel's job field),
    ``points`` (per x, ascending: ``x``, ``mean``, ``ci`` = (low, high) or None with one
    seed, ``seeds``, ``values``), ``change`` (the paired mean change from the first to the
    last x), its ``change_ci`` and ``change_p`` (paired t test), ``pairs``, and
    ``verdict`` (the claim that the change is negative). A curve with one x value, or
    without a (seed, target) measured at both ends, has no change (None) and the verdict
    "not resolved at this scale".
    """
    axis, groups = panel_groups(config, list(records), panel)
    curves: dict[tuple, dict[float, list[Mapping]]] = {}
    for (scheme, attack, x), group in groups.items():
        curves.setdefault((scheme, attack), {})[x] = group
    rows = []
    for (scheme, attack), by_x in curves.items():
        for metric in metrics:
            values = {x: seed_target_values(g, metric) for x, g in sorted(by_x.items())}
            values = {x: v for x, v in values.items() if v}
            if not values:
                continue
            rows.append(_row(scheme, attack, metric, axis, values))
    return rows


def _row(scheme, attack, metric, axis, values: dict) -> dict:
    points = []
    for x, by_seed in values.items():
        r = seed_interval(by_seed)
        points.append(
            {"x": x, "mean": r.mean, "ci": _ends(r), "seeds": r.seeds, "values": r.values}
        )
    first, last = values[min(values)], values[max(values)]
    change = change_ci = change_p = None
    pairs = 0
    if len(values) > 1 and any(set(first.get(s, {})) & set(last[s]) for s in last):
        r = paired_seed_comparison(last, first)
        change, change_ci, change_p, pairs = r.interval.mean, _ends(r.interval), r.p_value, r.pairs
    low, high = change_ci or (None, None)
    return {
        "scheme": scheme,
        "attack": attack,
        "metric": metric,
        "axis": axis,
        "points": points,
        "change": change,
        "change_ci": change_ci,
        "change_p": change_p,
        "pairs": pairs,
        "verdict": claim_verdict(low, high, 0.0, direction="less"),
    }


def _ends(interval) -> tuple[float, float] | None:
    return None if interval.low is None else (interval.low, interval.high)


def format_trend_table(rows: Sequence[Mapping]) -> str:
    """The rows as text: per curve and metric, mean [95 % interval] at each x, the paired
    change from the first to the last x with its p value, and the verdict."""
    lines = [f"Fig. 2's claim, '{PAPER_CLAIM}', per scheme and metric:"]
    for r in rows:
        points = "  ".join(
            f"{p['x']:g}: {mean_interval_text(p['mean'], p['ci'])}" for p in r["points"]
        )
        p_text = "-" if r["change_p"] is None else f"{r['change_p']:.3f}"
        lines.append(
            f"{r['scheme']:<8} {r['attack']:<4} {r['metric']:<10} {points}  | change "
            f"{mean_interval_text(r['change'], r['change_ci'])} (p {p_text}, "
            f"{r['pairs']} pairs): {r['verdict']}"
        )
    lines.append(
        f"Mean [95 % interval]: {METHOD}; the change (last x minus first x) is paired by seed "
        "and target, p: paired t test. exact_bits: the exact I(X; Y) of the upload in bits."
    )
    return "\n".join(lines)
