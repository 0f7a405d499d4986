"""Huang et al.'s Figure 8 (width versus closeness) beside this package's runs of it.

:func:`plot_width_closeness` draws the paper's table of mean errors and the mean error of
each parameterisation of :mod:`sims.experiments.width_closeness` (and the ratio of
``theorem_3_2`` to the paper) as heat maps, one under the other at the printed width
(:mod:`sims.plots.style`), each with its colour bar and every cell annotated at 8 pt;
boxes mark, per sparsity, the first width whose error is at most each ``eps_ap`` (blue
0.05, green 0.01, as in Figure 8), explained by a legend under the maps.
:func:`plot_width_closeness_calibrated` draws the theory-calibrated runs the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pruneleak.sims.plots.style import MIN_FONT_PT, TEXT_WIDTH, use_style, wrap

#: The parameterisations of Figure 8's comparison, in the order drawn.
FIG8_PARAMETERISATIONS = ("fixed", "remark_e3_folded", "remark_e3_gaussian", "theorem_3_2")
#: Colours of the boxes of the first width below each eps_ap (Figure 8's).
BOX_COLOURS = ("tab:blue", "tab:green")
#: Height of one heat map's row of cells, in inches.
ROW_INCHES = 0.2


def heatmap(
    ax,
    table,
    widths: Sequence[int],
    sparsities: Sequence[float],
    *,
    title: str,
    norm=None,
    vmin=None,
    vmax=None,
    cmap: str = "viridis",
    fmt: str = ".2g",
    colorbar_label: str = "mean error",
    boxes: Sequence[float] = (),
) -> None:
    """One annotated heat map of ``table`` (sparsity x width) with its colour bar labelled
    ``colorbar_label``; for each threshold of ``boxes`` (with :data:`BOX_COLOURS`), a box
    on each row's first width whose value is at most it. The axes' gid is ``title``'s
    first line."""
    import seaborn as sns

    from pruneleak.sims.experiments import width_closeness as wc

    sns.heatmap(
        np.asarray(table, dtype=float),
        ax=ax,
        annot=True,
        fmt=fmt,
        annot_kws={"size": MIN_FONT_PT},
        norm=norm,
        vmin=vmin,
        vmax=vmax,
        cmap=cmap,
        xticklabels=list(widths),
        yticklabels=list(sparsities),
        cbar=True,
        cbar_kws={"label": colorbar_label, "pad": 0.02, "fraction": 0.05},
    )
    from matplotlib.patches import Rectangle

    for eps, colour in zip(boxes, BOX_COLOURS, strict=False):
        first = wc.first_width_below(table, widths, eps)
        for row, m in enumerate(first):
            if np.isfinite(m):
                ax.add_patch(
                    Rectangle(
                        (list(widths).index(m), row), 1, 1, fill=False, edgecolor=colour, lw=2
                    )
                )
    ax.set(title=title, xlabel="width m", ylabel="sparsity k")
    ax.set_gid(title.split("\n")[0])
    ax.tick_params(axis="y", rotation=0)


def _box_legend(fig, eps_values: Sequence[float]) -> None:
    from matplotlib.patches import Patch

    handles = [
        Patch(facecolor="none", edgecolor=colour, linewidth=2, label=f"first width with {text}")
        for colour, text in zip(
            BOX_COLOURS, [f"error <= {eps:g} (eps_ap)" for eps in eps_values], strict=False
        )
    ]
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), frameon=False)


def plot_width_closeness(result, *, trials: int | None = None):
    """Figure 8 of Huang et al. against ``result`` (a
    :class:`sims.experiments.width_closeness.WidthClosenessResult`): the paper's mean
    errors, the mean error of each parameterisation of :data:`FIG8_PARAMETERISATIONS`
    (labelled with its ``sigma`` and ``sigma_A`` at m = 100) on the paper's widths, all on
    one log colour scale from 1e-3 to 10, and the ratio ``theorem_3_2 / paper`` on a log
    scale from 0.1 to 100. One map per row, each with its colour bar. Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    from pruneleak.sims.experiments import width_closeness as wc

    use_style()
    config = result.config
    trials = result.errors.shape[1] if trials is None else trials
    columns = [config.widths.index(m) for m in wc.PAPER_WIDTHS]
    maps = [("paper, Figure 8", wc.PAPER_FIG8_ERROR)]
    for name in FIG8_PARAMETERISATIONS:
        sigma, sigma_a = config.noise_parameters(name, 100)
        label = f"{name} (at m = 100: sigma = {sigma:.3g}, sigma_A = {sigma_a:.3g})"
        maps.append((label, result.mean(name)[:, columns]))
    rows = len(config.sparsities)
    height = len(maps) + 1
    fig = plt.figure(
        figsize=(TEXT_WIDTH, height * (ROW_INCHES * rows + 0.75) + 0.6), layout="constrained"
    )
    axes = fig.subplots(height, 1)
    error_norm = {"norm": LogNorm(vmin=1e-3, vmax=1e1)}
    for ax, (title, table) in zip(axes, maps, strict=False):
        heatmap(ax, table, wc.PAPER_WIDTHS, config.sparsities, title=wrap(title, 90),
                boxes=wc.PAPER_EPS_AP, **error_norm)  # fmt: skip
    ratio = result.mean("theorem_3_2")[:, columns] / wc.PAPER_FIG8_ERROR
    heatmap(axes[-1], ratio, wc.PAPER_WIDTHS, config.sparsities,
            title="ratio theorem_3_2 / paper", norm=LogNorm(vmin=0.1, vmax=100),
            cmap="coolwarm", colorbar_label="ratio")  # fmt: skip
    fig.suptitle(
        wrap(
            "Mean error (1/sqrt m) ||h(x) - g(x)||: Huang et al.'s Figure 8 against each "
            f"parameterisation ({trials} trials per cell)",
            80,
        )
    )
    _box_legend(fig, wc.PAPER_EPS_AP)
    return fig


def plot_width_closeness_calibrated(result, *, eps_ap: float = 0.05):
    """The theory-calibrated runs of ``result``: the mean error of ``calibrated`` and of
    ``theorem_3_2`` (log colour scale) and the empirical ``delta_ap`` of ``theorem_3_2``
    at ``eps_ap`` (0 to 1), over every width of the run, one map per row with its colour
    bar. Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    use_style()
    config = result.config
    rows = len(config.sparsities)
    fig = plt.figure(figsize=(TEXT_WIDTH, 3 * (ROW_INCHES * rows + 0.75) + 0.3),
                     layout="constrained")  # fmt: skip
    axes = fig.subplots(3, 1)
    for ax, name in zip(axes, ("calibrated", "theorem_3_2"), strict=False):
        heatmap(ax, result.mean(name), config.widths, config.sparsities,
                title=f"{name}: mean error", norm=LogNorm())  # fmt: skip
    heatmap(axes[2], result.delta_ap("theorem_3_2", eps_ap), config.widths, config.sparsities,
            title=f"theorem_3_2: empirical delta_ap at eps_ap = {eps_ap:g}", vmin=0, vmax=1,
            cmap="magma", fmt=".2f", colorbar_label="delta_ap")  # fmt: skip
    return fig
