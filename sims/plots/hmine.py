"""Figures 3, 4 and 5 of H-MINE (Liu et al., ICASSP 2021): from the records of
:func:`sims.experiments.hmine.run_study`, the estimated leakage beside the attack's error;
from those of :func:`sims.experiments.hmine.run_convergence`, the critics' bounds over
training."""

from __future__ import annotations

import math

import numpy as np


def plot_study(records: list[dict], *, ax=None):
    """Estimated I(X_B; G) with its CI and bounds (left axis) beside epsilon (right axis)."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 3.2))
    study = records[0]["study"]
    x = np.array([r["value"] for r in records], dtype=float)
    mi = np.array([r["mi"] for r in records])
    ax.plot(x, mi, "o-", color="C0", label="H-MINE estimate")
    ax.fill_between(
        x,
        [r["mi_ci_low"] for r in records],
        [r["mi_ci_high"] for r in records],
        color="C0",
        alpha=0.2,
    )
    bound = [min(r["bound_batches"], r["bound_gaussian_channel"] or math.inf) for r in records]
    ax.plot(x, bound, "--", color="C2", label="upper bound on the truth")
    ax.set_xlabel(study)
    ax.set_ylabel("I(X_B; G) [nats]")
    # the bounds are often far above the estimates (log C(N, B) grows like B log N)
    ax.set_ylim(min(0.0, 1.2 * float(np.min(mi))), 1.5 * max(r["mi_ci_high"] for r in records))
    twin = ax.twinx()
    twin.plot(
        x, [r["inference_error"] for r in records], "s:", color="C3", label="DLG epsilon (variance)"
    )
    twin.plot(
        x, [r["reconstruction_mse"] for r in records], "^:", color="C1", label="DLG MSE to truth"
    )
    twin.set_ylabel("inference error")
    lines = ax.get_legend_handles_labels()
    twin_lines = twin.get_legend_handles_labels()
    ax.legend(lines[0] + twin_lines[0], lines[1] + twin_lines[1], fontsize=7, loc="best")
    return ax


CRITIC_LABELS = {"hmine": "H-MINE", "mine": "conventional (MINE, concat MLP)"}


def plot_convergence(records: list[dict]):
    """Fig. 3: one panel per batch size, each critic's validation bound (solid) and
    training-probe bound (dotted) against the critic's training epochs."""
    import matplotlib.pyplot as plt

    sizes = sorted({r["batch_size"] for r in records})
    fig, axes = plt.subplots(1, len(sizes), figsize=(4.5 * len(sizes), 3.2), squeeze=False)
    for ax, b in zip(axes[0], sizes, strict=True):
        for i, r in enumerate(x for x in records if x["batch_size"] == b):
            label = CRITIC_LABELS[r["critic"]]
            ax.plot(r["epoch"], r["validation"], "-", color=f"C{i}", label=f"{label}, validation")
            ax.plot(r["epoch"], r["train"], ":", color=f"C{i}", label=f"{label}, training probe")
        ax.set_xlabel("critic training epochs")
        ax.set_ylabel("DV bound [nats]")
        ax.set_title(f"B = {b}")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    return fig
