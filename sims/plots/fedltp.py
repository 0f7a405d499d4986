"""Figures 3 and 4 of Fed-LTP (Shi et al.) from :func:`sims.fedltp.experiment.run_study`:
test accuracy against the epsilon spent over the rounds, and against the cumulative
communication (download plus upload, all clients, MiB); and the reconstructions of the
empirical-privacy study (:mod:`sims.fedltp.empirical`) per noise multiplier."""

from __future__ import annotations

from pruneleak.sims.fedltp.baselines import MIB
from pruneleak.sims.fedltp.empirical import reconstruction_key
from pruneleak.sims.plots.reconstructions import kept_rows, plot_reconstruction_grid


def _curves(result, budget, partition=None, seed=None):
    """(label, records) of the runs at ``budget``, of one partition and seed (default: the
    study's first of each)."""
    study = result.study
    partition = (
        (study.partitions or (study.config.partition,))[0] if partition is None else partition
    )
    seed = (study.seeds or (study.config.seed,))[0] if seed is None else seed
    return [
        (label, recs)
        for (label, b, part, s), recs in result.curves.items()
        if b == budget and part == partition and s == seed and recs
    ]


def plot_accuracy_vs_epsilon(result, *, budgets=None):
    """One panel per budget: test accuracy after each round against the epsilon spent
    (Fig. 3 style; every method runs the same rounds, so the x values coincide)."""
    import matplotlib.pyplot as plt

    budgets = tuple(result.study.budgets if budgets is None else budgets)
    fig, axes = plt.subplots(1, len(budgets), figsize=(4.5 * len(budgets), 3.2), squeeze=False)
    for ax, budget in zip(axes[0], budgets, strict=True):
        for i, (label, recs) in enumerate(_curves(result, budget)):
            ax.plot(
                [r["epsilon"] for r in recs],
                [r["test_accuracy"] for r in recs],
                "o-",
                ms=3,
                color=f"C{i}",
                label=label,
            )
        ax.axvline(budget, color="k", ls=":", lw=1)
        ax.set_xlabel("epsilon spent [nats]")
        ax.set_ylabel("test accuracy")
        ax.set_title(f"budget {budget:g}")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_accuracy_vs_communication(result, *, budget=None):
    """Test accuracy against cumulative communication in MiB at one budget (Fig. 4 style;
    default the largest)."""
    import matplotlib.pyplot as plt

    budget = max(result.study.budgets) if budget is None else budget
    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    for i, (label, recs) in enumerate(_curves(result, budget)):
        ax.plot(
            [r["bytes_cumulative"] / MIB for r in recs],
            [r["test_accuracy"] for r in recs],
            "o-",
            ms=3,
            color=f"C{i}",
            label=label,
        )
    ax.set_xlabel("cumulative communication [MiB, all clients]")
    ax.set_ylabel("test accuracy")
    ax.set_title(f"budget {budget:g}")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_empirical_reconstructions(config, directory, *, max_images: int = 8):
    """The attacked batches of :func:`sims.fedltp.empirical.empirical_privacy` run with
    ``config`` (an :class:`~sims.fedltp.empirical.EmpiricalConfig`) on top, then SGI's and
    GI's reconstructions of them at each sigma (the files it kept in ``directory``), each
    tile with its PSNR: what DP noise of each size leaves an attacker. ValueError when
    ``directory`` holds none of them (the study ran without ``reconstructions_dir``)."""
    labelled = [
        (f"{attack.upper()} sigma={sigma:g}", reconstruction_key(config, sigma, attack))
        for sigma in config.sigmas
        for attack in ("sgi", "gi")
    ]
    grid = kept_rows(directory, labelled)
    if grid is None:
        raise ValueError(
            "The 'directory' parameter of plot_empirical_reconstructions must hold the "
            "reconstructions empirical_privacy kept for this configuration "
            f"(run it with reconstructions_dir). Found none in {directory}."
        )
    originals, rows = grid
    return plot_reconstruction_grid(
        originals, rows, max_images=max_images, title="Fed-LTP DP uploads: SGI / GI (PSNR)"
    )
