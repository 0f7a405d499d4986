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


def seed_target_values(records: Sequence[Mapping], metric: str) -> dict[int, dict[int, float]]:
    """seed -> {target client: value} of ``metric`` (``"nmi"``, ``"psnr"`` ...: the
    record's ``<metric>_per_target``, ordered by client id; ``"accuracy"``: one value per
    run, target 0), the input of :mod:`estimators.replicates`; None values are left out."""
    out: dict[int, dict[int, float]] = {}
    for r in records:
        seed = int(r["job"].get("seed", 0))
        if metric == "accuracy":
            values, ids = [r.get("accuracy")], [0]
        else:
            values = r.get(f"{metric}_per_target") or []
            clients = sorted(set(r.get("clients") or []))
            ids = clients if len(clients) == len(values) else list(range(len(values)))
        out.setdefault(seed, {}).update(
            {t: float(v) for t, v in zip(ids, values, strict=True) if v is not None}
        )
    return {seed: values for seed, values in out.items() if values}


def panel_groups(
    config: SweepConfig, records: Iterable[Mapping], panel: str
) -> tuple[str, dict[tuple, list[Mapping]]]:
    """``panel``'s x-axis and its records by (scheme, attack, x), each group holding the
    seeds' records of one curve point; jobs without a record are left out."""
    jobs = config.panels()[panel]
    axis = panel_axis(jobs)
    by_key = {r["key"]: r for r in records}
    groups: dict[tuple, list[Mapping]] = {}
    for job in jobs:
        record = by_key.get(job_key(job))
        if record is not None:
            x = x_value(record, axis) if axis else 0.0
            groups.setdefault((job.pruning.scheme, job.attack, x), []).append(record)
    return axis, dict(sorted(groups.items()))


def panel_rows(
    config: SweepConfig, records: Iterable[Mapping], panel: str, *, metric: str = "nmi"
) -> list[dict]:
    """One row per (scheme, attack, x) of ``panel``: mean and std of ``metric`` over the
    seeds' per-target values, the bounds, and the mean ceiling ``log2 N`` of the exact
    bits (``ceiling_bits``, None without it). Missing records, and per-target values that
    are None or absent (e.g. exact bits not computed, older stores), are skipped."""
    axis, groups = panel_groups(config, records, panel)
    rows = []
    for (scheme, attack, x), group in groups.items():
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
