"""Figure 6 of Huang et al. (arXiv:2003.01876) from a
:class:`sims.experiments.prune_vs_noise.PruneVsNoiseResult`: similarity against accuracy,
and example inversions."""

from __future__ import annotations

import numpy as np

from pruneleak.bounds.validation import check_int
from pruneleak.sims.experiments.prune_vs_noise.inversion import METRICS
from pruneleak.sims.experiments.prune_vs_noise.study import PruneVsNoiseResult

_STYLE = {
    "noise": ("tab:red", "o", "Laplace noise"),
    "prune_public": ("tab:blue", "s", "pruning, dense-Φ attacker"),
    "prune_informed": ("tab:green", "^", "pruning, pruned-Φ attacker"),
}


def _values(rows: list[dict], key: str) -> np.ndarray:
    """``row[key]`` of each row as floats, a gap (NaN, which matplotlib leaves out) where
    the metric is undefined on every image (None)."""
    return np.array([np.nan if r[key] is None else r[key] for r in rows], dtype=float)


def plot_similarity_curves(result: PruneVsNoiseResult):
    """Figure 6 (a)-(d) and Figure 5 (a) in one 2x4 grid.

    Six panels: mean similarity (SSIM, SIFT, pHash, INFE, PSNR, NMI) versus test accuracy
    for noise and for pruning under both attackers, the range over images shaded (not for
    INFE, as in the paper), dashed verticals at the matched accuracies (sparsity k
    annotated), the undefended dense network dotted; SIFT's means are over the images
    with keypoints. Seventh panel: test accuracy versus sparsity with the matched noise
    scale b. Returns the matplotlib figure.
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 4, figsize=(17, 7.5), constrained_layout=True)
    ks = result.config.sparsities
    matched_acc = [result.row("prune_public", k)["accuracy"] for k in ks]
    for ax, metric in zip(axes.flat, METRICS, strict=False):
        for condition, (colour, marker, label) in _STYLE.items():
            rows = [result.row(condition, k) for k in ks]
            acc = [r["accuracy"] for r in rows]
            ax.plot(acc, _values(rows, f"{metric}_mean"), marker=marker, color=colour, label=label)
            if metric != "infe":
                ax.fill_between(
                    acc,
                    _values(rows, f"{metric}_min"),
                    _values(rows, f"{metric}_max"),
                    color=colour,
                    alpha=0.1,
                )
        for k, acc in zip(ks, matched_acc, strict=True):
            ax.axvline(acc, color="grey", ls="--", lw=0.6)
            ax.annotate(
                f"{k:g}",
                (acc, 0.0),
                xycoords=("data", "axes fraction"),
                fontsize=6,
                rotation=90,
                va="bottom",
                ha="right",
                color="grey",
            )
        ax.axhline(
            _values([result.row("none", 0.0)], f"{metric}_mean")[0],
            color="black",
            ls=":",
            lw=1,
            label="no defence",
        )
        ax.set(xlabel="test accuracy", ylabel=METRICS[metric])
    if metric == "nmi":
        chance = np.mean([r["nmi_chance_mean"] for r in result.rows])
        ax.axhline(chance, color="black", ls="-.", lw=0.8, label="NMI chance level")
        ax.legend(fontsize=7)
    axes[0, 0].legend(fontsize=7)
    axes[1, 3].set_visible(False)
    ax = axes[1, 2]
    ax.plot(ks, matched_acc, marker="s", color="tab:blue", label="pruned")
    ax.axhline(result.dense_accuracy, color="black", ls=":", label="dense")
    ax.set(xlabel="sparsity k", ylabel="test accuracy", title="accuracy (Fig. 5a)")
    twin = ax.twinx()
    twin.plot(
        ks,
        [result.row("noise", k)["noise_scale"] for k in ks],
        marker="o",
        color="tab:red",
        label="matched noise b",
    )
    twin.set_ylabel("Laplace scale b", color="tab:red")
    ax.legend(loc="lower left", fontsize=7)
    cfg = result.config
    network = {"lenet5": "LeNet-5", "vgg19": f"VGG-19 (width {cfg.width})"}[cfg.model]
    fig.suptitle(
        f"{network} {cfg.layer.upper()} on {cfg.dataset}: inversion similarity at "
        f"matched accuracy ({len(result.originals)} images; verticals: sparsity k)"
    )
    return fig


def _show(ax, image: np.ndarray) -> None:
    """One ``(C, H, W)`` image in [0, 1]: in colour when it has 3 channels, else grey."""
    if image.shape[0] == 3:
        ax.imshow(image.transpose(1, 2, 0), vmin=0, vmax=1)
    else:
        ax.imshow(image.mean(axis=0), cmap="gray", vmin=0, vmax=1)


def plot_example_inversions(result: PruneVsNoiseResult, num_examples: int = 2):
    """Figure 6 (e): for each of the first ``num_examples`` attacked images, a block of
    three rows (noise, pruning with the public Φ, pruning with the pruned Φ) and one
    column per sparsity (titled with k and the matched accuracy), after the original and
    the undefended inversion. Returns the matplotlib figure."""
    import matplotlib.pyplot as plt

    num_examples = check_int(
        "num_examples",
        num_examples,
        func="plot_example_inversions",
        low=1,
        high=len(result.originals),
    )
    ks = result.config.sparsities
    conditions = tuple(_STYLE)
    fig, axes = plt.subplots(
        num_examples * len(conditions),
        2 + len(ks),
        figsize=(1.3 * (2 + len(ks)), 1.35 * num_examples * 3 + 0.5),
        squeeze=False,
        constrained_layout=True,
    )
    for ax in axes.flat:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.spines[:].set_visible(False)
    for i in range(num_examples):
        block = axes[i * len(conditions) : (i + 1) * len(conditions)]
        _show(block[0, 0], result.originals[i])
        _show(block[0, 1], result.reconstructions[("none", 0.0)][i])
        for r, condition in enumerate(conditions):
            block[r, 2].set_ylabel(_STYLE[condition][2], fontsize=6)
            for j, k in enumerate(ks):
                _show(block[r, 2 + j], result.reconstructions[(condition, k)][i])
    axes[0, 0].set_title("original", fontsize=7)
    axes[0, 1].set_title("no defence", fontsize=7)
    for j, k in enumerate(ks):
        acc = result.row("prune_public", k)["accuracy"]
        axes[0, 2 + j].set_title(f"k={k:g}\nacc {acc:.3f}", fontsize=7)
    fig.suptitle("Inversions at matched accuracy", fontsize=8)
    return fig
