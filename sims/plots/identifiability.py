"""The identifiability figure: SGI's PSNR against the kept share ``k / n`` of a pruned
update, with the breakdown ratios of :func:`sims.experiments.identifiability.breakdown_ratio`;
and the rows of its grid of targets against reconstructions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pruneleak.sims.experiments.identifiability import breakdown_ratio, labelled_keys
from pruneleak.sims.plots.reconstructions import kept_rows


def plot_identifiability(records: Sequence[Mapping], *, psnr_threshold: float = 30.0):
    """PSNR per target against ``k / n`` (log scale), one marker per gradient point and
    colour per (width, size, B), with the threshold and the fitted breakdown ratios."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="notebook")
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    series = sorted({(r["width"], r["image_size"], r["batch_size"]) for r in records})
    palette = dict(zip(series, sns.color_palette(n_colors=len(series)), strict=True))
    markers = {"dense": "o", "masked": "s"}
    for r in records:
        colour = palette[(r["width"], r["image_size"], r["batch_size"])]
        ax.scatter(
            [r["ratio"]] * len(r["psnr_per_target"]),
            r["psnr_per_target"],
            marker=markers[r["gradient_at"]],
            color=colour,
            alpha=0.7,
            s=22,
        )
    for point, marker in markers.items():
        mine = sorted((r for r in records if r["gradient_at"] == point), key=lambda r: r["ratio"])
        for key in series:
            line = [r for r in mine if (r["width"], r["image_size"], r["batch_size"]) == key]
            if line:
                ax.plot(
                    [r["ratio"] for r in line],
                    [r["psnr"] for r in line],
                    linestyle="-" if point == "dense" else ":",
                    color=palette[key],
                    marker=marker,
                    label=f"{point}: width {key[0]}, {key[1]}x{key[1]}, B={key[2]}",
                )
    ax.axhline(psnr_threshold, color="grey", linestyle="--", label=f"{psnr_threshold:g} dB")
    for point, ratio in breakdown_ratio(records, psnr_threshold=psnr_threshold).items():
        if ratio is not None:
            ax.axvline(
                ratio,
                color="black",
                linestyle="-" if point == "dense" else ":",
                linewidth=1,
                label=f"50 % breakdown ({point}): k/n = {ratio:.2f}",
            )
    ax.set(
        xscale="log",
        xlabel="kept gradient coordinates / unknown pixels (k / n)",
        ylabel="PSNR of the SGI reconstruction (dB)",
        title="Identifiability of a pruned update",
    )
    ax.legend(fontsize="x-small", loc="upper left")
    fig.tight_layout()
    return fig


def identifiability_reconstruction_rows(config, directory):
    """The grid of :func:`sims.experiments.identifiability.run_identifiability` run with
    ``config`` from the files it kept in ``directory``: the targets of the first
    configuration and each configuration's reconstructions of the same images
    (:func:`sims.plots.reconstructions.kept_rows`; configurations of other image sizes or
    batch sizes attacked other images and are left out); None when none was kept."""
    return kept_rows(directory, labelled_keys(config))
