"""Figures of an attack-study sweep: leakage per panel (PriPrune Fig. 2 / Fig. 10), SGI
against GI (appendix Fig. 7) and the bound-versus-attack direction consistency."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from pruneleak.bounds.validation import check_choice
from pruneleak.sims.experiments.consistency import METRICS, POOLED, ConsistencyRow
from pruneleak.sims.plots.style import (
    COLOURS,
    TEXT_WIDTH,
    dodge,
    scheme_colours,
    use_style,
    wrap,
)
from pruneleak.sims.pruning.schemes import available_schemes
from pruneleak.sims.sweep.grid import SweepConfig
from pruneleak.sims.sweep.panels import MODEL_AXIS, panel_rows

AXIS_LABELS = {
    "pruning.p": "base pruning rate p",
    "fed.batch_size": "batch size B",
    MODEL_AXIS: "model parameters d",
    "fed.rounds": "training rounds T",
    "fed.local_epochs": "local steps E",
}

#: Axis labels of the leakage metrics (:data:`sims.experiments.consistency.METRICS`).
METRIC_LABELS = {
    "nmi": "NMI",
    "psnr": "PSNR (dB)",
    "exact_bits": "exact I (bits)",
    "fano_bits": "Fano lower bound (bits)",
}


def _metric_label(metric: str) -> str:
    return METRIC_LABELS.get(metric, metric.upper())


#: Metrics in bits (their axes start at 0; the exact bits' show the ceiling log2 N).
BITS_METRICS = ("exact_bits", "fano_bits")
#: Axes limits of the metrics whose range is fixed.
METRIC_LIMITS = {"nmi": (0.0, 1.02)}


def _equal(series: list[list[float]]) -> bool:
    """Whether every series holds the same values (to 1e-9 relative)."""
    first = series[0]
    return all(
        len(other) == len(first)
        and all(
            math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
            for a, b in zip(first, other, strict=True)
        )
        for other in series[1:]
    )


def _legend_below(fig, axes, *, columns: int) -> None:
    """One legend under the axes (a constrained layout), each label once, in up to
    ``columns`` columns."""
    handles: dict[str, object] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    fig.legend(
        list(handles.values()),
        list(handles),
        loc="outside lower center",
        ncols=min(columns, max(1, len(handles))),
        frameon=False,
    )


def _panel(ax, rows: list[dict], metric: str, palette: dict, schemes: list[str]) -> str | None:
    """One panel of :func:`plot_panels`; returns its note when every scheme is equal."""
    present = [s for s in schemes if any(r["scheme"] == s for r in rows)]
    series = {s: [r for r in rows if r["scheme"] == s] for s in present}
    for index, scheme in enumerate(present):
        mine = series[scheme]
        container = ax.errorbar(
            [r["x"] for r in mine],
            [r[metric] for r in mine],
            yerr=[r[f"{metric}_std"] for r in mine],
            marker="o",
            markersize=4,
            capsize=2,
            color=palette[scheme],
            label=scheme,
        )
        container.lines[0].set_gid(f"{metric}/{scheme}")
        data, caps, bars = container.lines
        for artist in (data, *caps, *bars):  # equal schemes side by side, not on top
            dodge(ax, artist, index, len(present), step_points=3.0)
    if metric == "nmi" and rows:
        # the permutation floor (records since it was added); else the NMI against uniform
        # noise, which is no floor: labelled as what it is
        floor = "nmi_permutation_floor"
        if not any(r.get(floor) is not None for r in rows):
            floor = "nmi_chance"
        chance = sorted({(r["x"], r[floor]) for r in rows if r.get(floor) is not None})
        ax.plot(
            [c[0] for c in chance],
            [c[1] for c in chance],
            color=COLOURS["chance"],
            linestyle="--",
            label="NMI, pixels shuffled (floor)"
            if floor == "nmi_permutation_floor"
            else "NMI against uniform noise",
            gid=floor,
        )
    if metric == "exact_bits":  # (Fano's bounds sit far below it: it would hide them)
        ceiling = sorted({(r["x"], r["ceiling_bits"]) for r in rows if r.get("ceiling_bits")})
        if ceiling:
            ax.plot(
                [c[0] for c in ceiling],
                [c[1] for c in ceiling],
                color=COLOURS["ceiling"],
                linewidth=6,
                alpha=0.45,
                solid_capstyle="butt",
                zorder=0,
                label="ceiling log2 N",
                gid="ceiling",
            )
    at_ceiling = metric in BITS_METRICS and all(
        r.get("ceiling_bits") and math.isclose(r[metric], r["ceiling_bits"], rel_tol=1e-6)
        for r in rows
    )
    values = [r[metric] + r[f"{metric}_std"] for r in rows]
    values += [r["ceiling_bits"] for r in rows if metric == "exact_bits" and r.get("ceiling_bits")]
    if metric in METRIC_LIMITS:
        ax.set_ylim(*METRIC_LIMITS[metric])
    elif values:  # from 0: a constant series must look constant, not like variation
        ax.set_ylim(0, max(1.0, 1.15 * max(values)))
    if len(present) > 1 and _equal([[r[metric] for r in series[s]] for s in present]):
        ys = {round(r[metric], 2) for r in rows}
        unit = " bits" if metric in BITS_METRICS else ""
        value = f": {ys.pop():g}{unit}" if len(ys) == 1 else ""
        note = f"all {len(present)} schemes equal{value}"
        if at_ceiling:
            note += " (the ceiling)"
        low, high = ax.get_ylim()
        middle = (sum(r[metric] for r in rows) / len(rows) - low) / (high - low)
        ax.text(  # in the half the data leave free
            0.03,
            0.05 if middle > 0.5 else 0.95,
            note,
            va="bottom" if middle > 0.5 else "top",
            transform=ax.transAxes,
            fontsize=8,
            bbox={"facecolor": "white", "edgecolor": "0.7", "pad": 2},
            gid="equal_note",
        )
        return note
    return None


def plot_panels(
    config: SweepConfig,
    records: Sequence[Mapping],
    panels: Sequence[str],
    *,
    metric: str = "nmi",
    attack: str = "sgi",
):
    """One subplot per panel, two to a row: ``metric`` against the panel's axis, one line
    per scheme (PriPrune Fig. 2 / Fig. 10 layout), for ``attack``; error bars: std over
    targets. Colour is the scheme; schemes with equal values are moved sideways a few
    points (so that each stays visible) and a panel where all are equal says so ("all 6
    schemes equal: 8.49 bits"). The y axis starts at 0 (NMI: 0 to 1), so a constant
    series looks constant; exact bits show the ceiling ``log2 N`` as a light band. The
    legend is under the panels. Each scheme's line has gid ``"<metric>/<scheme>"``."""
    import matplotlib.pyplot as plt

    use_style()
    columns = min(2, len(panels))
    rows_of_panels = math.ceil(len(panels) / columns)
    fig = plt.figure(figsize=(TEXT_WIDTH, 2.5 * rows_of_panels + 0.9), layout="constrained")
    axes = fig.subplots(rows_of_panels, columns, squeeze=False).ravel()
    schemes = available_schemes()
    palette = scheme_colours(schemes)
    for ax, panel in zip(axes, panels, strict=False):
        rows = [
            r
            for r in panel_rows(config, records, panel, metric=metric)
            if r["attack"] == attack and r[metric] is not None
        ]
        axis = rows[0]["axis"] if rows else ""
        _panel(ax, rows, metric, palette, schemes)
        if axis == MODEL_AXIS:
            ax.set_xscale("log")
        elif rows:
            ticks = sorted({r["x"] for r in rows})
            ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        ax.set(
            xlabel=AXIS_LABELS.get(axis, axis),
            ylabel=_metric_label(metric),
            title=f"panel {panel}",
        )
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    _legend_below(fig, axes[: len(panels)], columns=4)
    fig.suptitle(f"{attack.upper()}: {_metric_label(metric)} per panel ({config.name})")
    return fig


def plot_attack_comparison(
    config: SweepConfig, records: Sequence[Mapping], panel: str, *, metric: str = "nmi"
):
    """SGI against GI per scheme along ``panel``'s axis (PriPrune appendix Fig. 7)."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="notebook")
    rows = [r for r in panel_rows(config, records, panel, metric=metric) if r[metric] is not None]
    schemes = [s for s in available_schemes() if any(r["scheme"] == s for r in rows)]
    fig, axes = plt.subplots(
        1,
        max(1, len(schemes)),
        figsize=(3.2 * max(1, len(schemes)), 3.4),
        squeeze=False,
        sharey=True,
    )
    for ax, scheme in zip(axes[0], schemes, strict=False):
        for attack, style in (("sgi", "o-"), ("gi", "s--")):
            mine = [r for r in rows if r["scheme"] == scheme and r["attack"] == attack]
            ax.plot([r["x"] for r in mine], [r[metric] for r in mine], style, label=attack.upper())
        axis = rows[0]["axis"] if rows else ""
        ax.set(title=scheme, xlabel=AXIS_LABELS.get(axis, axis))
        ax.legend(fontsize="small")
    axes[0][0].set_ylabel(_metric_label(metric))
    fig.tight_layout()
    return fig


def plot_consistency(rows: Sequence[ConsistencyRow], *, metric: str = "nmi"):
    """Forest plot: per panel, Spearman(x, leakage) with its interval per scheme (pooled
    in black) beside Spearman(x, bound) published (x) and corrected (+).

    Colour is the scheme (every scheme of the rows in the legend, whether or not its
    first panel has a value), the bounds crimson; the legend is to the right of the axes,
    the x labels name each panel and its parameter on two lines. Each scheme's points have
    gid ``"rho/<scheme>"`` (one point per panel where it has a value)."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    check_choice("metric", metric, func="plot_consistency", choices=METRICS)
    use_style()
    mine = [r for r in rows if r.metric == metric]
    panels = list(dict.fromkeys(r.panel for r in mine))
    schemes = list(dict.fromkeys(r.scheme for r in mine))
    palette = {POOLED: "black", **scheme_colours(available_schemes())}
    for scheme in schemes:  # a scheme outside the registry (none today): grey
        palette.setdefault(scheme, "0.5")
    fig, ax = plt.subplots(figsize=(TEXT_WIDTH, 3.4), layout="constrained")
    width = 0.7 / max(1, len(schemes))
    for j, scheme in enumerate(schemes):
        points = []
        for i, panel in enumerate(panels):
            row = next((r for r in mine if r.panel == panel and r.scheme == scheme), None)
            if row is None or row.rho is None:
                continue
            at = i - 0.35 + (j + 0.5) * width
            # A percentile interval need not contain the estimate: clip the bars at 0.
            low = max(0.0, row.rho - row.ci_low) if row.ci_low is not None else 0.0
            high = max(0.0, row.ci_high - row.rho) if row.ci_high is not None else 0.0
            ax.errorbar([at], [row.rho], yerr=[[low], [high]], fmt="none", capsize=2,
                        color=palette[scheme])  # fmt: skip
            points.append((at, row.rho))
        if points:
            ax.plot(
                [x for x, _ in points],
                [y for _, y in points],
                linestyle="none",
                marker="o",
                color=palette[scheme],
                gid=f"rho/{scheme}",
            )
    bound_markers = (
        ("published", "x", "bound as published"),
        ("corrected", "P", "bound corrected"),
    )
    for i, panel in enumerate(panels):
        pooled = next((r for r in mine if r.panel == panel and r.scheme == POOLED), None)
        if pooled is None:
            continue
        if pooled.rho is None:  # e.g. a leakage equal at every x: no rank correlation
            ax.text(i, 0.5, "no rho:\nleakage\nconstant", ha="center", va="center",
                    fontsize=8, color="0.35", gid=f"undefined/{panel}")  # fmt: skip
        for shift, (kind, marker, _) in zip((0.38, 0.46), bound_markers, strict=True):
            value = getattr(pooled, f"rho_bound_{kind}")
            if value is not None:
                ax.scatter([i + shift], [value], marker=marker, s=50, color="crimson", zorder=3)
    ax.axhline(0, color="grey", linewidth=1)
    ax.set_xticks(
        range(len(panels)),
        [f"{p}\n({next(r.parameter for r in mine if r.panel == p)})" for p in panels],
    )
    ax.set_xlim(-0.6, len(panels) - 0.4)
    ax.set(
        ylim=(-1.1, 1.1),
        ylabel="Spearman rho with the parameter",
        title=wrap(f"Direction of {_metric_label(metric)} vs direction of Theorem 1", 70),
    )
    legend = [
        Line2D([], [], color=palette[s], marker="o", linestyle="none",
               label="all schemes pooled" if s == POOLED else s)
        for s in schemes
    ]  # fmt: skip
    legend += [
        Line2D([], [], color="crimson", marker=marker, linestyle="none", label=label)
        for _, marker, label in bound_markers
    ]
    fig.legend(handles=legend, loc="outside right upper", frameon=False)
    return fig


def plot_trend(rows: Sequence[Mapping], *, attack: str = "sgi"):
    """Fig. 2's p panel with intervals
    (:func:`sims.experiments.pruning_rate_trend.trend_rows`): one subplot per metric, its
    mean against the pruning rate, one line per scheme, error bars the 95 % interval over
    the seeds' means (none with one seed). Each title counts the schemes whose verdict on
    "a higher rate lowers it" is ``holds``; a scheme whose verdict is not ``holds`` is
    drawn with hollow markers. The y axis starts
    at 0 (NMI: 0 to 1); lines have gid ``"<metric>/<scheme>"``."""
    import matplotlib.pyplot as plt

    use_style()
    rows = [r for r in rows if r["attack"] == attack]
    metrics = list(dict.fromkeys(r["metric"] for r in rows))
    fig = plt.figure(figsize=(TEXT_WIDTH, 3.4), layout="constrained")
    axes = fig.subplots(1, max(1, len(metrics)), squeeze=False).ravel()
    schemes = [s for s in available_schemes() if any(r["scheme"] == s for r in rows)]
    palette = scheme_colours(available_schemes())
    for ax, metric in zip(axes, metrics, strict=False):
        mine = {r["scheme"]: r for r in rows if r["metric"] == metric}
        for index, scheme in enumerate(s for s in schemes if s in mine):
            points = mine[scheme]["points"]
            container = ax.errorbar(
                [p["x"] for p in points],
                [p["mean"] for p in points],
                yerr=[
                    [p["mean"] - p["ci"][0] if p["ci"] else 0.0 for p in points],
                    [p["ci"][1] - p["mean"] if p["ci"] else 0.0 for p in points],
                ],
                marker="o",
                markersize=4,
                markerfacecolor=palette[scheme] if mine[scheme]["verdict"] == "holds" else "white",
                capsize=2,
                color=palette[scheme],
                label=scheme,
            )
            container.lines[0].set_gid(f"{metric}/{scheme}")
            for artist in (container.lines[0], *container.lines[1], *container.lines[2]):
                dodge(ax, artist, index, len(mine), step_points=3.0)
        tops = [p["ci"][1] if p["ci"] else p["mean"] for r in mine.values() for p in r["points"]]
        if metric in METRIC_LIMITS:
            ax.set_ylim(*METRIC_LIMITS[metric])
        elif tops:
            ax.set_ylim(0, max(1.0, 1.15 * max(tops)))
        ticks = sorted({p["x"] for r in mine.values() for p in r["points"]})
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        held = sum(r["verdict"] == "holds" for r in mine.values())
        ax.set(
            xlabel=AXIS_LABELS["pruning.p"],
            ylabel=_metric_label(metric),
            title=f"falls with p: {held} of {len(mine)}",
        )
    _legend_below(fig, axes, columns=6)
    fig.suptitle(
        wrap(
            f"{attack.upper()}: mean and 95 % interval over seeds (hollow: no fall with p "
            "resolved at this scale)",
            90,
        )
    )
    return fig
