"""Figures of an attack-study sweep: leakage per panel (PriPrune Fig. 2 / Fig. 10), SGI
against GI (appendix Fig. 7) and the bound-versus-attack direction consistency."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pruneleak.bounds.validation import check_choice
from pruneleak.sims.experiments.consistency import METRICS, POOLED, ConsistencyRow
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


def plot_panels(
    config: SweepConfig,
    records: Sequence[Mapping],
    panels: Sequence[str],
    *,
    metric: str = "nmi",
    attack: str = "sgi",
):
    """One subplot per panel: ``metric`` against the panel's axis, one line per scheme
    (PriPrune Fig. 2 / Fig. 10 layout), for ``attack``; error bars: std over targets."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="notebook")
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.8), squeeze=False)
    schemes = available_schemes()
    palette = dict(zip(schemes, sns.color_palette(n_colors=len(schemes)), strict=True))
    for ax, panel in zip(axes[0], panels, strict=True):
        rows = [
            r
            for r in panel_rows(config, records, panel, metric=metric)
            if r["attack"] == attack and r[metric] is not None
        ]
        axis = rows[0]["axis"] if rows else ""
        for scheme in schemes:
            mine = [r for r in rows if r["scheme"] == scheme]
            if mine:
                ax.errorbar(
                    [r["x"] for r in mine],
                    [r[metric] for r in mine],
                    yerr=[r[f"{metric}_std"] for r in mine],
                    marker="o",
                    capsize=2,
                    color=palette[scheme],
                    label=scheme,
                )
        if metric == "nmi" and rows:
            chance = sorted(
                {(r["x"], r["nmi_chance"]) for r in rows if r["nmi_chance"] is not None}
            )
            ax.plot(
                [c[0] for c in chance],
                [c[1] for c in chance],
                color="grey",
                linestyle="--",
                label="NMI chance",
            )
        if axis == MODEL_AXIS:
            ax.set_xscale("log")
        elif rows:
            ax.set_xticks(sorted({r["x"] for r in rows}))
        ax.set(
            xlabel=AXIS_LABELS.get(axis, axis),
            ylabel=_metric_label(metric),
            title=f"{attack.upper()}: {_metric_label(metric)} vs {AXIS_LABELS.get(axis, axis)}",
        )
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(
        handles, labels, loc="lower center", ncol=len(labels), frameon=False, fontsize="small"
    )
    fig.tight_layout(rect=(0, 0.08, 1, 1))
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
    in black) beside Spearman(x, bound) published (x) and corrected (+)."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    check_choice("metric", metric, func="plot_consistency", choices=METRICS)
    sns.set_theme(style="whitegrid", context="notebook")
    mine = [r for r in rows if r.metric == metric]
    panels = list(dict.fromkeys(r.panel for r in mine))
    schemes = list(dict.fromkeys(r.scheme for r in mine))
    palette = dict(
        zip(schemes, ["black", *sns.color_palette(n_colors=len(schemes) - 1)], strict=True)
    )
    fig, ax = plt.subplots(figsize=(2.2 + 1.8 * len(panels), 4.8))
    width = 0.7 / max(1, len(schemes))
    for i, panel in enumerate(panels):
        for j, scheme in enumerate(schemes):
            row = next((r for r in mine if r.panel == panel and r.scheme == scheme), None)
            if row is None or row.rho is None:
                continue
            at = i - 0.35 + (j + 0.5) * width
            # A percentile interval need not contain the estimate: clip the bars at 0.
            low = max(0.0, row.rho - row.ci_low) if row.ci_low is not None else 0.0
            high = max(0.0, row.ci_high - row.rho) if row.ci_high is not None else 0.0
            ax.errorbar(
                [at],
                [row.rho],
                yerr=[[low], [high]],
                fmt="o",
                capsize=2,
                color=palette[scheme],
                label=scheme if i == 0 else None,
            )
        pooled = next((r for r in mine if r.panel == panel and r.scheme == POOLED), None)
        if pooled is not None:
            for value, marker, label in (
                (pooled.rho_bound_published, "x", "bound as published"),
                (pooled.rho_bound_corrected, "P", "bound corrected"),
            ):
                if value is not None:
                    ax.scatter(
                        [i + 0.42],
                        [value],
                        marker=marker,
                        s=70,
                        color="crimson",
                        label=label if i == 0 else None,
                        zorder=3,
                    )
    ax.axhline(0, color="grey", linewidth=1)
    ax.set_xticks(
        range(len(panels)),
        [f"{p}\n({next(r.parameter for r in mine if r.panel == p)})" for p in panels],
    )
    ax.set(
        ylim=(-1.1, 1.1),
        ylabel=f"Spearman rho (parameter, {_metric_label(metric)})",
        title="Direction of leakage vs direction of Theorem 1",
    )
    fig.legend(
        *ax.get_legend_handles_labels(), loc="lower center", ncol=5, frameon=False, fontsize="small"
    )
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return fig
