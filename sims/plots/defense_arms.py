"""The further arms of PriPrune's defense study, beside the paper's numbers: the lambda
grid of Table A1, the Mix-ratio study of Fig. A4, and the CIFAR-10 columns of Table 2
(journal version, Appendix D.1-D.3 and Table 2; AAAI arXiv:2310.19958 Fig. 11), from the
records of the packaged sweeps ``priprune_lambda_grid``, ``priprune_mix_ratio`` and
``priprune_defense_cifar10`` (offline stand-in: ``priprune_defense_patches``).

NMI of a group of records is the mean and sample sd over their per-target values
(``nmi_per_target``: each target's best single-round NMI), as in
:mod:`sims.plots.defense`; the attack loss is the record's ``attack_loss`` (the attack's
final matching loss, mean over the attacked uploads of each target, then over targets).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from pruneleak.bounds.validation import check_real
from pruneleak.sims.defenses.lambdas import (
    DIGITS_CONV1_WEIGHTS,
    PAPER_FEMNIST_CONV2_WEIGHTS,
    mean_alpha_star,
    rescale_lambdas,
)
from pruneleak.sims.plots.defense import format_table2, nmi_stats, table2_rows

#: Table A1's axes (journal lines 3063-3078), in the paper's column order: lambda_sha
#: runs 2e-4, 2e-5, 2e-6 within each lambda_pri.
TABLE_A1_ACC = (1.0, 5.0, 10.0)
TABLE_A1_PRI = (1.0, 10.0, 15.0)
TABLE_A1_SHA = (2e-4, 2e-5, 2e-6)
_TABLE_A1_VALUES = (  # rows lambda_acc = 1, 5, 10 (journal lines 3067, 3069, 3071)
    (0.166, 0.171, 0.156, 0.138, 0.153, 0.154, 0.138, 0.159, 0.151),
    (0.154, 0.158, 0.136, 0.125, 0.121, 0.123, 0.135, 0.123, 0.130),
    (0.148, 0.142, 0.140, 0.132, 0.126, 0.118, 0.135, 0.132, 0.140),
)
#: PriPrune journal version, Table A1 (priprune-journal-version.txt lines 3063-3071):
#: NMI of PruneFL + PriPrune on FEMNIST per ``(lambda_acc, lambda_pri, lambda_sha)``.
PAPER_TABLE_A1 = {
    (acc, pri, sha): _TABLE_A1_VALUES[i][3 * j + k]
    for i, acc in enumerate(TABLE_A1_ACC)
    for j, pri in enumerate(TABLE_A1_PRI)
    for k, sha in enumerate(TABLE_A1_SHA)
}
#: The four splits ``(p_largest, p_random)`` of Mix's rate 0.3 (journal lines 3024-3028).
PAPER_MIX_SPLITS = ((0.0, 0.3), (0.1, 0.2), (0.2, 0.1), (0.3, 0.0))
#: What the paper reports of Fig. A4 (journal lines 3030-3034; no numbers are given).
PAPER_MIX_FINDING = (
    "0 % largest with 30 % random attains the highest accuracy, while 30 % largest with "
    "0 % random yields the highest level of privacy protection"
)
# Relative tolerance matching a record's lambdas with a rescaled paper cell: the TOML
# files hold 4 significant digits (sims.defenses.lambdas.SIGNIFICANT_DIGITS), 5e-4 at most.
_LAMBDA_RTOL = 1e-3


def _mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= _LAMBDA_RTOL * max(abs(a), abs(b))


def table_a1_rows(
    records: Sequence[Mapping],
    *,
    n_paper: int = PAPER_FEMNIST_CONV2_WEIGHTS,
    n_ours: int = DIGITS_CONV1_WEIGHTS,
) -> list[dict]:
    """One row per cell of Table A1 (27, in the paper's order): the paper's lambdas and
    NMI, the rescaled lambdas (:func:`sims.defenses.lambdas.rescale_lambdas` from
    ``n_paper`` to ``n_ours`` prunable weights), the mean alpha* both keep, and ours
    (NMI mean / sd / n, accuracy, defense rate, attack loss; None without a record)
    from the PriPrune records whose lambdas match within 0.1 %. ``shared_with`` lists
    the other paper cells that map to the same job."""
    priprune = [r for r in records if r["job"].get("defense.name") == "priprune"]
    cells = list(PAPER_TABLE_A1)
    rescaled = {cell: rescale_lambdas(*cell, n_paper=n_paper, n_ours=n_ours) for cell in cells}
    rows = []
    for cell in cells:
        _, pri, sha = rescaled[cell]
        group = [
            r
            for r in priprune
            if _close(float(r["job"]["defense.lambda_pri"]), pri)
            and _close(float(r["job"]["defense.lambda_sha"]), sha)
            and float(r["job"]["defense.lambda_acc"]) == 1.0
        ]
        mean, sd, n = nmi_stats(group)
        rows.append(
            {
                "lambda_acc": cell[0],
                "lambda_pri": cell[1],
                "lambda_sha": cell[2],
                "paper_nmi": PAPER_TABLE_A1[cell],
                "ours_lambda_pri": pri,
                "ours_lambda_sha": sha,
                "alpha_star": mean_alpha_star(cell[1], cell[2], n_paper),
                "nmi": mean,
                "nmi_sd": sd,
                "n": n,
                "accuracy": _mean(r.get("accuracy") for r in group),
                "defense_rate": _mean(r.get("defense_rate") for r in group),
                "attack_loss": _mean(r.get("attack_loss") for r in group),
                "shared_with": [
                    other
                    for other in cells
                    if other != cell
                    and _close(rescaled[other][1], pri)
                    and _close(rescaled[other][2], sha)
                ],
            }
        )
    return rows


def _fmt(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def format_table_a1(rows: Sequence[Mapping], *, base: Mapping | None = None) -> str:
    """Table A1 as text: per paper cell, its NMI beside ours (mean ± sd), our accuracy,
    defense rate and attack loss; ``base`` (a no-defense record) adds its NMI and
    accuracy as the reference line, and the last line gives Spearman's rank correlation
    of ours with the paper's over the cells both have."""
    head = (
        f"{'acc':>4} {'pri':>4} {'sha':>6} | {'paper NMI':>9} | {'ours: pri':>9} "
        f"{'sha':>9} {'alpha*':>7} {'NMI':>15} {'acc.':>5} {'rate':>5} {'att.loss':>8}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        nmi = "-" if r["nmi"] is None else f"{r['nmi']:.3f} ± {r['nmi_sd']:.3f}"
        shared = " (= " + ", ".join(f"{a:g}/{p:g}/{s:g}" for a, p, s in r["shared_with"]) + ")"
        lines.append(
            f"{r['lambda_acc']:>4g} {r['lambda_pri']:>4g} {r['lambda_sha']:>6.0e} | "
            f"{r['paper_nmi']:>9.3f} | {r['ours_lambda_pri']:>9.4g} {r['ours_lambda_sha']:>9.4g} "
            f"{r['alpha_star']:>7.4f} {nmi:>15} {_fmt(r['accuracy'], '.3f'):>5} "
            f"{_fmt(r['defense_rate'], '.3f'):>5} {_fmt(r['attack_loss'], '.4f'):>8}"
            + (shared if r["shared_with"] else "")
        )
    if base is not None:
        mean, sd, _ = nmi_stats([base])
        accuracy, loss = _fmt(base.get("accuracy"), ".3f"), _fmt(base.get("attack_loss"), ".4f")
        lines.append(
            f"no defense (PruneFL): NMI {_fmt(mean, '.3f')} ± {sd:.3f}, accuracy {accuracy}, "
            f"attack loss {loss}"
        )
    both = [(r["paper_nmi"], r["nmi"]) for r in rows if r["nmi"] is not None]
    if len(both) > 2:
        from scipy.stats import spearmanr

        rho = float(spearmanr([a for a, _ in both], [b for _, b in both]).statistic)
        lines.append(f"Spearman rank correlation, ours vs paper over {len(both)} cells: {rho:.2f}")
    return "\n".join(lines)


def mix_parts(rate: float, largest_fraction: float) -> tuple[float, float]:
    """``(p_largest, p_random)`` of our Mix (:func:`sims.defenses.masks.defense_mask`) at
    defense rate ``rate`` and ``largest_fraction`` (both in [0, 1]): ``(f r, (1 - f) r)``;
    the random part is drawn among the weights the largest part left, so the combined
    rate is their sum (:func:`combined_rate`)."""
    rate = check_real("rate", rate, func="mix_parts", low=0, high=1)
    fraction = check_real("largest_fraction", largest_fraction, func="mix_parts", low=0, high=1)
    return float(rate * fraction), float(rate - rate * fraction)


def combined_rate(p_largest: float, p_random: float, *, independent: bool = False) -> float:
    """The fraction of kept weights Mix withholds with parts ``p_largest`` and
    ``p_random``: ``p_largest + p_random`` when the random part is drawn among the
    weights the largest part left (ours; their sum must be <= 1), else, for two
    independent masks, ``1 - (1 - p_largest)(1 - p_random)`` (claim
    ``priprune.mix_defense_rate``)."""
    func = "combined_rate"
    a = check_real("p_largest", p_largest, func=func, low=0, high=1)
    b = check_real("p_random", p_random, func=func, low=0, high=1)
    if independent:
        return float(1 - (1 - a) * (1 - b))
    if a + b > 1:
        raise ValueError(
            f"The 'p_random' parameter of {func} must be in [0, 1 - p_largest] = "
            f"[0, {1 - a:g}] when the parts are disjoint. Got {b!r} instead."
        )
    return float(a + b)


def metric_by_round(records: Sequence[Mapping], metric: str) -> tuple[list[int], list[float]]:
    """Attacked rounds and the mean of ``{metric}_per_upload`` over the uploads of each
    (all records, all targets)."""
    by_round: dict[int, list[float]] = {}
    for r in records:
        for t, v in zip(r["rounds"], r.get(f"{metric}_per_upload") or [], strict=True):
            if v is not None:
                by_round.setdefault(t, []).append(v)
    rounds = sorted(by_round)
    return rounds, [float(np.mean(by_round[t])) for t in rounds]


def mix_ratio_rows(records: Sequence[Mapping]) -> list[dict]:
    """One row per Mix split of the records (by ``largest_fraction``): its parts
    (:func:`mix_parts`), the nearest of the paper's splits, the measured defense rate,
    accuracy after T rounds and over rounds, NMI (mean / sd over targets) and over the
    attacked rounds, attack loss and over the attacked rounds."""
    groups: dict[tuple, list[Mapping]] = {}
    for r in records:
        if r["job"].get("defense.name") == "mix":
            key = (float(r["job"]["defense.rate"]), float(r["job"]["defense.largest_fraction"]))
            groups.setdefault(key, []).append(r)
    rows = []
    for (rate, fraction), group in sorted(groups.items(), key=lambda kv: kv[0][1]):
        p_largest, p_random = mix_parts(rate, fraction)
        paper = min(PAPER_MIX_SPLITS, key=lambda s: abs(s[0] - p_largest) + abs(s[1] - p_random))
        mean, sd, n = nmi_stats(group)
        acc_rounds = group[0].get("accuracy_rounds") or []
        rows.append(
            {
                "p_largest": p_largest,
                "p_random": p_random,
                "paper_split": paper,
                "label": f"{100 * p_largest:.0f} % largest + {100 * p_random:.0f} % random",
                "defense_rate": _mean(r.get("defense_rate") for r in group),
                "accuracy": _mean(r.get("accuracy") for r in group),
                "accuracy_rounds": list(acc_rounds),
                "accuracy_per_round": [
                    float(v) for v in np.mean([r["accuracy_per_round"] for r in group], axis=0)
                ]
                if acc_rounds
                else [],
                "nmi": mean,
                "nmi_sd": sd,
                "n": n,
                "nmi_by_round": metric_by_round(group, "nmi"),
                "attack_loss": _mean(r.get("attack_loss") for r in group),
                "attack_loss_by_round": metric_by_round(group, "attack_loss"),
            }
        )
    return rows


def format_mix_ratio(rows: Sequence[Mapping]) -> str:
    """The Mix splits as text, with the paper's finding (it gives no numbers)."""
    head = f"{'split':<28} {'rate':>5} {'accuracy':>8} {'NMI':>15} {'attack loss':>11}"
    lines = [head, "-" * len(head)]
    for r in rows:
        nmi = "-" if r["nmi"] is None else f"{r['nmi']:.3f} ± {r['nmi_sd']:.3f}"
        lines.append(
            f"{r['label']:<28} {_fmt(r['defense_rate'], '.3f'):>5} "
            f"{_fmt(r['accuracy'], '.3f'):>8} {nmi:>15} {_fmt(r['attack_loss'], '.4f'):>11}"
        )
    lines.append(f"Paper (Fig. A4, no numbers): {PAPER_MIX_FINDING}.")
    return "\n".join(lines)


def plot_mix_ratio(records: Sequence[Mapping]):
    """Fig. A4 (AAAI Fig. 11): test accuracy, NMI and attack loss over rounds of the Mix
    splits, one panel each."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="notebook")
    rows = mix_ratio_rows(records)
    fig, axes = plt.subplots(1, 3, figsize=(13.5, 3.8), squeeze=False)
    axes = list(axes[0])
    colors = sns.color_palette("flare", n_colors=max(1, len(rows)))
    for color, r in zip(colors, rows, strict=True):
        axes[0].plot(
            r["accuracy_rounds"], r["accuracy_per_round"], marker=".", color=color, label=r["label"]
        )
        axes[1].plot(*r["nmi_by_round"], marker="o", color=color, label=r["label"])
        axes[2].plot(*r["attack_loss_by_round"], marker="o", color=color, label=r["label"])
    axes[0].set(xlabel="round", ylabel="test accuracy", title="accuracy")
    axes[1].set(xlabel="round", ylabel="NMI (lower = more private)", title="privacy (NMI)")
    axes[2].set(
        xlabel="round", ylabel="final matching loss", title="attack loss (higher = more private)"
    )
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, frameon=False, fontsize="small")
    fig.suptitle("Fig. A4: Mix at four splits of its defense rate 0.3 (real pruning)")
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig


#: What a defense sweep's ``dataset`` is called beside the paper's CIFAR-10 column.
DATASET_LABELS = {
    "cifar10": "CIFAR-10",
    "patches": "STAND-IN, not CIFAR-10: the 755 embedded 32x32 RGB photo patches (4 classes)",
}


def format_table2_cifar10(records: Sequence[Mapping]) -> str:
    """Table 2's CIFAR-10 columns: ours (:func:`sims.plots.defense.table2_rows`) beside
    the paper's CIFAR-10 numbers, under a title naming the data set the records ran on
    (the patches stand-in is labelled as such)."""
    datasets = sorted({r["job"]["dataset"] for r in records})
    if len(datasets) != 1:
        raise ValueError(
            f"The 'records' parameter of format_table2_cifar10 must come from one data set. "
            f"Got {datasets} instead."
        )
    label = DATASET_LABELS.get(datasets[0], f"{datasets[0]} (not CIFAR-10)")
    table = format_table2(table2_rows(records, paper_dataset="cifar10"), paper_dataset="cifar10")
    return f"Table 2, CIFAR-10 columns. Ours on: {label}\n{table}"


def format_table2_beside_paper(records: Sequence[Mapping]) -> str:
    """Table 2 beside the paper's column of the records' data set: the CIFAR-10 columns
    (:func:`format_table2_cifar10`) for records on CIFAR-10 or its stand-in, else the
    FEMNIST column (:func:`sims.plots.defense.format_table2`)."""
    if records and {r["job"]["dataset"] for r in records} <= set(DATASET_LABELS):
        return format_table2_cifar10(records)
    return format_table2(table2_rows(records))
