"""What Huang et al. (arXiv:2003.01876) state about their Figures 5-7, each statement with
its line in ``papers/huang-pruning-as-dp-noise-arxiv2003.01876.txt``, and the number a
:class:`PruneVsNoiseResult` measures for it, to print side by side.

The paper's figures are plots without tables; only these sentences carry numbers or
claims that can be checked against a run. Similarity scores describe reconstructions:
the statements on leakage are compared through the paired gaps of
:meth:`PruneVsNoiseResult.comparison`, never through one score alone.
"""

from __future__ import annotations

import numpy as np

from pruneleak.bounds.validation import check_choice
from pruneleak.sims.experiments.prune_vs_noise.study import (
    PAPER_METRICS,
    PruneVsNoiseResult,
)

#: Figure -> ``(line, quote, what our run measures for it)``; the measured kind is one of
#: ``"accuracy_kept"``, ``"leakage_smaller"``, ``"accuracy_gap"`` (:func:`beside_paper`).
PAPER_STATEMENTS = {
    "figure6": (
        (
            241,
            "The task on MNIST achieves the same level of accuracy as the network model "
            "without pruning when the sparsity level is <= 0.5",
            "accuracy_kept",
        ),
        (
            251,
            "for the same accuracy, there are substantial gaps between magnitude-based "
            "pruning and adding differential private noise in terms of the similarity "
            "measures between inversion and original images",
            "leakage_smaller",
        ),
    ),
    "figure7": (
        (
            241,
            "The test with CIFAR-10 maintains the same accuracy as or better than the model "
            "without pruning when the sparsity level is <= 0.8",
            "accuracy_kept",
        ),
        (
            255,
            "the privacy leakage (measured as similarity) of Phi'_prune is always smaller "
            "than that for Phi'_noise",
            "leakage_smaller",
        ),
        (
            255,
            "matching the privacy leakage instead of accuracy [...] pruning always yields a "
            "higher accuracy (~10% as shown in Figure 7) than adding differentially private "
            "noise",
            "accuracy_gap",
        ),
    ),
}


def _accuracy_kept(result: PruneVsNoiseResult) -> str:
    tolerance = result.config.accuracy_tolerance
    kept = [
        k
        for k in result.config.sparsities
        if result.row("prune_public", k)["accuracy"] >= result.dense_accuracy - tolerance
    ]
    accuracies = ", ".join(
        f"{result.row('prune_public', k)['accuracy']:.3f} at k={k:g}"
        for k in result.config.sparsities
    )
    largest = f"up to k = {max(kept):g}" if kept else "at none of the sparsities"
    return (
        f"accuracy within {tolerance:g} of the dense {result.dense_accuracy:.3f} {largest} "
        f"({accuracies})"
    )


def _leakage_smaller(result: PruneVsNoiseResult) -> str:
    comparison = result.comparison("prune_public")
    calls = result.leakage_calls("prune_public")
    parts = [
        f"{m} lower under pruning at {comparison[m]['wins']} of "
        f"{comparison[m]['sparsities']} sparsities, gap {comparison[m]['gap']:+.3f} ± "
        f"{comparison[m]['stderr']:.3f} ({calls[m]})"
        if comparison[m]["images"]
        else f"{m} undefined (no image scored under both at every sparsity)"
        for m in PAPER_METRICS
    ]
    return f"dense-Φ attacker: {'; '.join(parts)}; overall {calls['overall']}"


def _accuracy_gap(result: PruneVsNoiseResult) -> str:
    gaps = result.accuracy_gap_at_matched_leakage("ssim", "prune_public")
    inside = [g for g in gaps.values() if g is not None]
    each = ", ".join(
        f"k={k:g}: {'outside the noise curve' if g is None else f'{g:+.3f}'}"
        for k, g in gaps.items()
    )
    mean = f"{np.mean(inside):+.3f}" if inside else "undefined"
    return f"pruning minus noise accuracy at equal mean SSIM: mean {mean} ({each})"


_MEASURES = {
    "accuracy_kept": _accuracy_kept,
    "leakage_smaller": _leakage_smaller,
    "accuracy_gap": _accuracy_gap,
}


def beside_paper(result: PruneVsNoiseResult, figure: str) -> str:
    """A Markdown table: for each statement of ``PAPER_STATEMENTS[figure]`` (``"figure6"``
    or ``"figure7"``), its line in the paper, the quote, and what ``result`` measures
    for it (the pruned accuracies against the dense one, the paired leakage gaps of the
    paper's attacker with the public dense Φ, the accuracy gap at equal mean SSIM of
    :meth:`PruneVsNoiseResult.accuracy_gap_at_matched_leakage`)."""
    check_choice("figure", figure, func="beside_paper", choices=tuple(PAPER_STATEMENTS))
    lines = ["| paper line | the paper says | this run |", "|---|---|---|"]
    for line, quote, kind in PAPER_STATEMENTS[figure]:
        lines.append(f"| {line} | {quote} | {_MEASURES[kind](result)} |")
    return "\n".join(lines)
