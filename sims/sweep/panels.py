"""Reading a finished sweep panel by panel: its x-axis and one row per curve point.

A panel (:meth:`sims.sweep.grid.SweepConfig.panels`) varies one job field, its x-axis;
the curve fields (scheme, attack, seed) label curves, not x values. Records are those of
:func:`sims.sweep.runner.run_sweep`, whose ``job`` maps dotted field paths to values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from pruneleak.sims.sweep.grid import SweepConfig
from pruneleak.sims.sweep.job import FIELD_PATHS, AttackJob, job_key
from pruneleak.sims.sweep.runner import BOUND_FIELDS

#: Fields that label a curve rather than an x-axis when a panel is plotted.
CURVE_FIELDS = ("pruning.scheme", "attack", "seed")
#: The axis of a panel over models: measured by the number of parameters d.
MODEL_AXIS = "model.name"


def panel_axis(jobs: Sequence[AttackJob]) -> str:
    """The one job field (dotted path), besides :data:`CURVE_FIELDS`, that varies over a
    panel's jobs: its x-axis. ``""`` when none varies."""
    values = [job.as_fields() for job in jobs]
    varying = [
        path
        for path in FIELD_PATHS
        if path not in (*CURVE_FIELDS, "device") and len({v[path] for v in values}) > 1
    ]
    if len(varying) > 1:
        raise ValueError(
            f"A panel must vary one job field besides {CURVE_FIELDS}. Got {varying} instead."
        )
    return varying[0] if varying else ""


def x_value(record: Mapping, axis: str) -> float:
    """A record's numeric x on ``axis``: the field's value, or for the model the number
    of model parameters ``d``."""
    if axis == MODEL_AXIS:
        return float(record["d"])
    return float(record["job"][axis])


def panel_rows(
    config: SweepConfig, records: Iterable[Mapping], panel: str, *, metric: str = "nmi"
) -> list[dict]:
    """One row per (scheme, attack, x) of ``panel``: mean and std of ``metric`` over the
    seeds' per-target values, the bounds, and the mean ceiling ``log2 N`` of the exact
    bits (``ceiling_bits``, None without it). Missing records, and per-target values that
    are None or absent (e.g. exact bits not computed, older stores), are skipped."""
    jobs = config.panels()[panel]
    axis = panel_axis(jobs)
    by_key = {r["key"]: r for r in records}
    groups: dict[tuple, list[Mapping]] = {}
    for job in jobs:
        record = by_key.get(job_key(job))
        if record is not None:
            x = x_value(record, axis) if axis else 0.0
            groups.setdefault((job.pruning.scheme, job.attack, x), []).append(record)
    rows = []
    for (scheme, attack, x), group in sorted(groups.items()):
        values = [v for r in group for v in r.get(f"{metric}_per_target") or [] if v is not None]
        row = {
            "panel": panel,
            "axis": axis,
            "x": x,
            "scheme": scheme,
            "attack": attack,
            "n": len(values),
            "model": group[0]["job"][MODEL_AXIS],
        }
        row[metric] = float(np.mean(values)) if values else None
        row[f"{metric}_std"] = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0
        for name in (*BOUND_FIELDS, "nmi_chance", "nmi_permutation_floor", "d_star", "delta_nats"):
            present = [r[name] for r in group if r.get(name) is not None]
            row[name] = float(np.mean(present)) if present else None
        # the ceiling log2 N of the exact bits: the number of secrets of each target's batch
        ceilings = [v for r in group for v in r.get("leakage_secrets_log2") or [] if v is not None]
        row["ceiling_bits"] = float(np.mean(ceilings)) if ceilings else None
        rows.append(row)
    return rows
