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


def plot_similarity_curves(result: PruneVsNoiseResult):
    """Figure 6 (a)-(d) and Figure 5 (a) in one 2x3 grid.

    Five panels: mean similarity (SSIM, pHash, INFE, PSNR, NMI) versus test accuracy for
    noise and for pruning under both attackers, the range over images shaded (not for
    INFE, as in the paper), dashed verticals at the matched accuracies (sparsity k
    annotated), the undefended dense network dotted. Sixth panel: test accuracy versus
    sparsity with the matched noise scale b. Returns the matplotlib figure.
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(13, 7.5), constrained_layout=True)
    ks = result.config.sparsities
    matched_acc = [result.row("prune_public", k)["accuracy"] for k in ks]
    for ax, metric in zip(axes.flat, METRICS, strict=False):
        for condition, (colour, marker, label) in _STYLE.items():
            rows = [result.row(condition, k) for k in ks]
            acc = [r["accuracy"] for r in rows]
            ax.plot(
                acc, [r[f"{metric}_mean"] for r in rows], marker=marker, color=colour, label=label
            )
            if metric != "infe":
                ax.fill_between(
                    acc,
                    [r[f"{metric}_min"] for r in rows],
                    [r[f"{metric}_max"] for r in rows],
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
            result.row("none", 0.0)[f"{metric}_mean"],
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
    fig.suptitle(
        f"LeNet-5 {cfg.layer.upper()} on {cfg.dataset}: inversion similarity at "
        f"matched accuracy ({len(result.originals)} images; verticals: sparsity k)"
    )
    return fig


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
        block[0, 0].imshow(result.originals[i].mean(axis=0), cmap="gray", vmin=0, vmax=1)
        none = result.reconstructions[("none", 0.0)]
        block[0, 1].imshow(none[i].mean(axis=0), cmap="gray", vmin=0, vmax=1)
        for r, condition in enumerate(conditions):
            block[r, 2].set_ylabel(_STYLE[condition][2], fontsize=6)
            for j, k in enumerate(ks):
                image = result.reconstructions[(condition, k)][i]
                block[r, 2 + j].imshow(image.mean(axis=0), cmap="gray", vmin=0, vmax=1)
    axes[0, 0].set_title("original", fontsize=7)
    axes[0, 1].set_title("no defence", fontsize=7)
    for j, k in enumerate(ks):
        acc = result.row("prune_public", k)["accuracy"]
        axes[0, 2 + j].set_title(f"k={k:g}\nacc {acc:.3f}", fontsize=7)
    fig.suptitle("Inversions at matched accuracy", fontsize=8)
    return fig
