"""Does PriPrune's bound move the way the attacks do? Direction consistency per parameter.

PriPrune (arXiv:2310.19958, Section "Attack Performance"; journal version Sec. 4.2.4)
reads its sweeps as "consistent with Theorem 1": leakage falls with the pruning rate p
and the batch size B and grows with the model size d and the number of rounds T, as the
bound does. This module makes the comparison quantitative for a sweep of
:mod:`sims.sweep`. For each panel (one swept parameter ``x``, all else fixed) and each
scheme (and all schemes pooled):

* ``rho_bound_published`` / ``rho_bound_corrected``: Spearman's rank correlation
  between ``x`` and Theorem 1 / Corollary 1 evaluated on the same configurations
  (``bound_published_bits``, ``bound_corrected_bits`` of the records; one value per
  configuration);
* ``rho``: Spearman's correlation between ``x`` and the measured leakage of each
  attacked target (one observation per target; the record's ``<metric>_per_target``),
  with a percentile bootstrap
  confidence interval: targets are resampled with replacement *within* each
  configuration (the design, i.e. the x values and schemes, is kept), and Spearman's
  rho is recomputed on each resample;
* a verdict per bound: ``"agree"`` when the bootstrap interval excludes 0 on the side
  of the bound's sign, ``"disagree"`` when it excludes 0 on the other side,
  ``"inconclusive"`` when it contains 0, ``"flat"`` when the bound does not change
  (|rho_bound| < 0.1 or undefined) and ``"undefined"`` when the leakage does not vary.

The leakage metrics (:data:`METRICS`, all recorded by :func:`sims.sweep.runner.run_job`):

* ``"nmi"`` and ``"psnr"``: similarity of the reconstruction to the batch (unitless, dB);
* ``"exact_bits"``: ``I(batch; upload)`` of one round in bits, the secret being the
  client's batch, a uniform ``B``-subset of its local data (:mod:`sims.sweep.leakage_bits`);
* ``"fano_bits"``: Fano's lower bound on that ``I`` in bits from the attack's
  identifications of the batch.

The last two are in the bound's unit and about a defined secret, so their direction is
compared like with like. Higher values of all four mean more leakage, so all are
compared with the bound the same way. Records without a metric (older stores) or with a
None per target contribute no observation of it; a metric without two observations is
``"undefined"``. Spearman's rho handles ties by average ranks (as
``scipy.stats.spearmanr``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy.stats import rankdata

from pruneleak.bounds.validation import (
    check_choice,
    check_distinct,
    check_finite_array,
    check_int,
    check_open_unit,
)
from pruneleak.sims.core.memory import check_fits
from pruneleak.sims.core.runtime import check_seed
from pruneleak.sims.sweep.grid import SweepConfig
from pruneleak.sims.sweep.job import ATTACKS, job_key
from pruneleak.sims.sweep.panels import panel_axis, x_value

METRICS = ("nmi", "psnr", "exact_bits", "fano_bits")
BOUNDS = {"published": "bound_published_bits", "corrected": "bound_corrected_bits"}
# |rho(x, bound)| below this reads as a bound that does not move with x.
FLAT_BOUND = 0.1
POOLED = "all"


@dataclass(frozen=True)
class ConsistencyRow:
    """Direction consistency of one (panel, scheme, metric); see the module docstring.

    Attributes:
        panel, parameter: the panel's name and its swept job field (``"model.name"`` is
            measured by the number of parameters d).
        scheme: a scheme name or ``"all"`` (pooled, bootstrap stratified by scheme too).
        metric: one of :data:`METRICS`.
        n_configs, n: configurations and target observations used.
        rho_bound_published, rho_bound_corrected: Spearman(x, bound), None if undefined.
        rho, ci_low, ci_high: Spearman(x, leakage) and its bootstrap interval (None if
            undefined).
        verdict_published, verdict_corrected: ``"agree"``, ``"disagree"``,
            ``"inconclusive"``, ``"flat"`` or ``"undefined"``.
    """

    panel: str
    parameter: str
    scheme: str
    metric: str
    n_configs: int
    n: int
    rho_bound_published: float | None
    rho_bound_corrected: float | None
    rho: float | None
    ci_low: float | None
    ci_high: float | None
    verdict_published: str
    verdict_corrected: str


def spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho of each row pair of ``x`` and ``y`` (shape ``(..., n)``), ties by
    average ranks; NaN where a row is constant. Vectorised ``scipy.stats.spearmanr``."""
    rx = rankdata(np.asarray(x, dtype=float), axis=-1)
    ry = rankdata(np.asarray(y, dtype=float), axis=-1)
    rx = rx - rx.mean(axis=-1, keepdims=True)
    ry = ry - ry.mean(axis=-1, keepdims=True)
    denominator = np.sqrt((rx * rx).sum(axis=-1) * (ry * ry).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, (rx * ry).sum(axis=-1) / denominator, np.nan)


def stratified_bootstrap_spearman(
    x,
    y,
    strata,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float | None, float | None, float | None]:
    """Spearman's rho of ``(x, y)`` with a percentile bootstrap interval.

    Each resample draws, within every stratum, as many observations as it holds, with
    replacement. Returns ``(rho, low, high)``; None where rho is undefined (constant
    ``x`` or ``y``). Resamples with an undefined rho are dropped from the interval.
    """
    func = "stratified_bootstrap_spearman"
    n_resamples = check_int("n_resamples", n_resamples, func=func, low=1)
    confidence = check_open_unit("confidence", confidence, func=func)
    seed = check_seed(seed, func=func)
    x, y = check_finite_array("x", x, func=func), check_finite_array("y", y, func=func)
    strata = np.asarray(strata)
    if x.ndim != 1 or x.shape != y.shape or strata.shape != x.shape or x.size < 2:
        raise ValueError(
            f"The 'x', 'y' and 'strata' parameters of {func} must be 1-D of one length >= 2. "
            f"Got shapes {x.shape}, {y.shape} and {strata.shape} instead."
        )
    check_fits(
        f"The 'n_resamples' parameter of {func} ({n_resamples} resamples of {x.size} observations)",
        n_resamples * x.size,
        unit="indices",
        bytes_each=np.dtype(np.int64).itemsize,
        copies=3,  # the indices, and x and y gathered by them
        device="cpu",
    )
    rho = float(spearman_rows(x, y))
    if math.isnan(rho):
        return None, None, None
    rng = np.random.default_rng(seed)
    index = np.empty((n_resamples, x.size), dtype=np.int64)
    for value in np.unique(strata):
        members = np.flatnonzero(strata == value)
        index[:, members] = members[rng.integers(0, members.size, (n_resamples, members.size))]
    resampled = spearman_rows(x[index], y[index])
    resampled = resampled[np.isfinite(resampled)]
    if resampled.size == 0:
        return rho, None, None
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(resampled, [tail, 100 - tail])
    return rho, float(low), float(high)


def _verdict(rho_bound: float | None, low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "undefined"
    if rho_bound is None or abs(rho_bound) < FLAT_BOUND:
        return "flat"
    if low > 0 or high < 0:
        return "agree" if (low > 0) == (rho_bound > 0) else "disagree"
    return "inconclusive"


def _optional(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def consistency_rows(
    config: SweepConfig,
    records: Sequence[Mapping],
    *,
    panels: Sequence[str] = ("p", "B", "d", "T"),
    attack: str = "sgi",
    metrics: Sequence[str] = METRICS,
    per_scheme: bool = True,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[ConsistencyRow]:
    """One :class:`ConsistencyRow` per (panel, scheme or ``"all"``, metric).

    ``records`` are those of :func:`sims.sweep.runner.run_sweep` for ``config``; jobs of the
    panels without a record, or without a bound (``d* = 0``), are left out, and so is a
    panel whose jobs share one x value (it has no trend to compare with the bounds').
    """
    func = "consistency_rows"
    for metric in check_distinct("metrics", metrics, func=func):
        check_choice("metrics", metric, func=func, choices=METRICS)
    known = config.panels()
    for panel in check_distinct("panels", panels, func=func):
        check_choice("panels", panel, func=func, choices=tuple(known))
    check_choice("attack", attack, func=func, choices=tuple(ATTACKS))
    by_key = {r["key"]: r for r in records}
    rows = []
    for panel in panels:
        jobs = [j for j in known[panel] if j.attack == attack]
        axis = panel_axis(jobs)
        if not axis:
            continue
        found = [by_key[job_key(j)] for j in jobs if job_key(j) in by_key]
        found = [r for r in found if all(r.get(b) is not None for b in BOUNDS.values())]
        schemes = sorted({r["job"]["pruning.scheme"] for r in found})
        groups = [(POOLED, found)] + (
            [(s, [r for r in found if r["job"]["pruning.scheme"] == s]) for s in schemes]
            if per_scheme
            else []
        )
        for scheme, group in groups:
            for metric in metrics:
                rows.append(_row(panel, axis, scheme, metric, group, n_resamples, confidence, seed))
    return rows


def _row(panel, axis, scheme, metric, group, n_resamples, confidence, seed) -> ConsistencyRow:
    xs, ys, strata = [], [], []
    for i, record in enumerate(group):
        values = [v for v in record.get(f"{metric}_per_target") or [] if v is not None]
        xs += [x_value(record, axis)] * len(values)
        ys += values
        strata += [i] * len(values)
    config_x = np.array([x_value(r, axis) for r in group]) if group else np.zeros(0)
    rho_bounds = {}
    for name, field_name in BOUNDS.items():
        bound = np.array([r[field_name] for r in group], dtype=float)
        rho_bounds[name] = _optional(spearman_rows(config_x, bound)) if len(group) > 1 else None
    if len(ys) >= 2:
        rho, low, high = stratified_bootstrap_spearman(
            xs, ys, strata, n_resamples=n_resamples, confidence=confidence, seed=seed
        )
    else:
        rho = low = high = None
    return ConsistencyRow(
        panel=panel,
        parameter=axis,
        scheme=scheme,
        metric=metric,
        n_configs=len(group),
        n=len(ys),
        rho_bound_published=rho_bounds["published"],
        rho_bound_corrected=rho_bounds["corrected"],
        rho=rho,
        ci_low=low,
        ci_high=high,
        verdict_published=_verdict(rho_bounds["published"], low, high),
        verdict_corrected=_verdict(rho_bounds["corrected"], low, high),
    )


def _fmt(value: float | None, width: int = 6) -> str:
    return f"{'--':>{width}}" if value is None else f"{value:>+{width}.2f}"


def format_table(rows: Sequence[ConsistencyRow], *, schemes: bool = True) -> str:
    """Plain-text table; ``schemes=False`` keeps only the pooled rows."""
    header = (
        f"{'panel':<6} {'parameter':<14} {'scheme':<8} {'metric':<10} {'n':>4} "
        f"{'rho(x,pub)':>10} {'rho(x,cor)':>10} {'rho(x,leak) [95% CI]':>25} "
        f"{'published':>12} {'corrected':>12}"
    )
    lines = [header, "-" * len(header)]
    for r in rows:
        if not schemes and r.scheme != POOLED:
            continue
        interval = (
            f"{_fmt(r.rho)} [{_fmt(r.ci_low, 5)}, {_fmt(r.ci_high, 5)}]"
            if r.rho is not None
            else "--"
        )
        lines.append(
            f"{r.panel:<6} {r.parameter:<14} {r.scheme:<8} {r.metric:<10} {r.n:>4} "
            f"{_fmt(r.rho_bound_published, 10)} {_fmt(r.rho_bound_corrected, 10)} "
            f"{interval:>25} {r.verdict_published:>12} {r.verdict_corrected:>12}"
        )
    return "\n".join(lines)


def rows_as_dicts(rows: Sequence[ConsistencyRow]) -> list[dict]:
    """The rows as plain dicts (for JSON or a DataFrame)."""
    return [asdict(r) for r in rows]
