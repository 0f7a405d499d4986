"""Figures and Table 2 of PriPrune's defenses (arXiv:2310.19958 Fig. 4, Fig. 5a-d; journal
version Fig. 6, 8, 9 and Table 2) from the records of a defense sweep
(:func:`sims.sweep.runner.run_sweep`, e.g. ``sims/sweep/configs/priprune_defense.toml``).

Every figure shows both attackers: the one PriPrune evaluates with (``"unaware"``, SGI as
Algorithm 2 publishes it) and the defense-aware SGI (``"aware"``,
:mod:`sims.attacks.defense_aware`), as two panels; NMI is always drawn beside its chance
level (grey dashed). Records are grouped by their job fields (``record["job"]``); NMI of a
group is the mean and sample sd over its per-target values (``nmi_per_target``: each
target's best single-round NMI) pooled over seeds. Accuracy does not depend on the
attacker (the attacker only reads the uploads), so curves over rounds of accuracy and
defense rate are drawn once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from pruneleak.estimators.replicates import (
    METHOD,
    claim_verdict,
    mean_interval_text,
    paired_seed_comparison,
    seed_interval,
)
from pruneleak.sims.sweep.panels import seed_target_values

ATTACKER_TITLES = {"unaware": "unaware attacker (PriPrune's SGI)", "aware": "defense-aware SGI"}
FIXED = ("largest", "random", "mix")
#: Base schemes of Fig. 5d / Table 2, in the paper's order (Random last: ours only).
TABLE2_SCHEMES = ("prunefl", "feddst", "synflow", "snip", "random")
SCHEME_NAMES = {
    "prunefl": "PruneFL",
    "feddst": "FedDST",
    "synflow": "SynFlow",
    "snip": "SNIP",
    "random": "Random",
}
#: PriPrune journal version, Table 2 (priprune-journal-version.txt lines 2317-2328):
#: NMI mean and sd of Base and Base + PriPrune, "over three experiments".
PAPER_TABLE2 = {
    "femnist": {
        "prunefl": ((0.22, 0.008), (0.12, 0.007)),
        "feddst": ((0.21, 0.025), (0.13, 0.007)),
        "synflow": ((0.22, 0.009), (0.15, 0.005)),
        "snip": ((0.23, 0.012), (0.13, 0.014)),
    },
    "cifar10": {
        "prunefl": ((0.29, 0.009), (0.24, 0.009)),
        "feddst": ((0.25, 0.008), (0.18, 0.006)),
        "synflow": ((0.25, 0.012), (0.21, 0.018)),
        "snip": ((0.24, 0.004), (0.22, 0.008)),
    },
}
#: The headline improvements of PruneFL's privacy on FEMNIST: journal (line 2330, and
#: (0.22 - 0.12) / 0.22 of Table 2) and AAAI (arXiv:2310.19958 abstract).
PAPER_IMPROVEMENT = {"journal": 45.5, "aaai": 36.3}


def _job(record: Mapping, path: str):
    return record["job"][path]


def _attacker(record: Mapping) -> str:
    return record["job"].get("attacker", "unaware")


def _defense(record: Mapping) -> str:
    return record["job"].get("defense.name", "none")


def nmi_stats(records: Sequence[Mapping]) -> tuple[float | None, float, int]:
    """Mean, sample sd (0 for one value) and count of the per-target NMIs of ``records``."""
    values = [v for r in records for v in r.get("nmi_per_target") or [] if v is not None]
    if not values:
        return None, 0.0, 0
    sd = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0
    return float(np.mean(values)), sd, len(values)


def _mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None


def defense_points(records: Sequence[Mapping]) -> list[dict]:
    """One row per (scheme, defense, pseudo, rate, attacker) with NMI mean / sd, its
    chance level, accuracy and defense rate (means over the group's records); fields a
    defense does not read are reported as None (rate of ``none`` / ``priprune``)."""
    groups: dict[tuple, list[Mapping]] = {}
    for r in records:
        name = _defense(r)
        key = (
            _job(r, "pruning.scheme"),
            name,
            None if name == "none" else bool(_job(r, "defense.pseudo")),
            float(_job(r, "defense.rate")) if name in FIXED else None,
            _attacker(r),
        )
        groups.setdefault(key, []).append(r)
    rows = []
    for (scheme, name, pseudo, rate, attacker), group in groups.items():
        mean, sd, n = nmi_stats(group)
        rows.append(
            {
                "scheme": scheme,
                "defense": name,
                "pseudo": pseudo,
                "rate": rate,
                "attacker": attacker,
                "label": group[0].get("defense_label", name),
                "nmi": mean,
                "nmi_sd": sd,
                "n": n,
                "nmi_chance": _mean(r.get("nmi_chance") for r in group),
                "accuracy": _mean(r.get("accuracy") for r in group),
                "defense_rate": _mean(r.get("defense_rate") for r in group),
            }
        )
    return rows


def _axes(n_cols: int = 2, *, width: float = 4.6, height: float = 3.8, sharey: bool = True):
    import matplotlib.pyplot as plt
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="notebook")
    fig, axes = plt.subplots(
        1, n_cols, figsize=(width * n_cols, height), squeeze=False, sharey=sharey
    )
    return fig, list(axes[0])


def _chance_vline(ax, rows) -> None:
    chance = _mean(r["nmi_chance"] for r in rows)
    if chance is not None:
        ax.axvline(chance, color="grey", linestyle="--", linewidth=1, label="NMI chance")


def _legend(fig, axes) -> None:
    seen = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, handle)
    fig.legend(
        list(seen.values()),
        list(seen),
        loc="lower center",
        ncol=min(5, max(1, len(seen))),
        frameon=False,
        fontsize="small",
    )


def plot_fig4(records: Sequence[Mapping], *, scheme: str = "prunefl", rate: float = 0.3):
    """Fig. 4: accuracy against NMI of Largest / Random / Mix (filled: Pseudo, hollow:
    real pruning) at defense rate ``rate`` and of no defense, after ``scheme``; one
    panel per attacker; error bars: sd of NMI over targets."""
    import seaborn as sns

    rows = [
        r
        for r in defense_points(records)
        if r["scheme"] == scheme
        and (r["defense"] == "none" or (r["defense"] in FIXED and r["rate"] == rate))
        and r["nmi"] is not None
    ]
    colors = dict(zip(FIXED, sns.color_palette(n_colors=3), strict=True))
    fig, axes = _axes()
    for ax, attacker in zip(axes, ("unaware", "aware"), strict=True):
        mine = [r for r in rows if r["attacker"] == attacker]
        for r in mine:
            color = "black" if r["defense"] == "none" else colors[r["defense"]]
            filled = r["defense"] == "none" or r["pseudo"]
            ax.errorbar(
                [r["nmi"]],
                [r["accuracy"]],
                xerr=[r["nmi_sd"]],
                fmt="*" if r["defense"] == "none" else "o",
                markersize=11 if r["defense"] == "none" else 8,
                color=color,
                markerfacecolor=color if filled else "white",
                capsize=2,
                label=f"{SCHEME_NAMES.get(scheme, scheme)} (no defense)"
                if r["defense"] == "none"
                else r["label"],
            )
        _chance_vline(ax, mine)
        ax.set(xlabel="NMI (lower = more private)", title=ATTACKER_TITLES[attacker])
    axes[0].set_ylabel("test accuracy")
    _legend(fig, axes)
    fig.suptitle(f"Fig. 4: fixed defenses at rate {rate:g} (filled: Pseudo, hollow: real)")
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return fig


def plot_fig5a(records: Sequence[Mapping], *, scheme: str = "prunefl"):
    """Fig. 5a: accuracy against NMI of PriPrune (star, its measured defense rate written
    beside it) and of Largest (Pseudo) at each fixed rate (labelled), and no defense."""
    rows = [r for r in defense_points(records) if r["scheme"] == scheme and r["nmi"] is not None]
    fig, axes = _axes()
    for ax, attacker in zip(axes, ("unaware", "aware"), strict=True):
        mine = [r for r in rows if r["attacker"] == attacker]
        largest = sorted(
            (r for r in mine if r["defense"] == "largest" and r["pseudo"]), key=lambda r: r["rate"]
        )
        if largest:
            ax.errorbar(
                [r["nmi"] for r in largest],
                [r["accuracy"] for r in largest],
                xerr=[r["nmi_sd"] for r in largest],
                fmt="o-",
                color="tab:blue",
                capsize=2,
                label="Largest (Pseudo), fixed rate",
            )
            for r in largest:
                ax.annotate(f"{r['rate']:g}", (r["nmi"], r["accuracy"]), fontsize="x-small")
        for r in mine:
            if r["defense"] in ("none", "priprune"):
                pp = r["defense"] == "priprune"
                ax.errorbar(
                    [r["nmi"]],
                    [r["accuracy"]],
                    xerr=[r["nmi_sd"]],
                    fmt="*",
                    markersize=12,
                    color="tab:red" if pp else "black",
                    capsize=2,
                    label="PriPrune (adaptive)" if pp else "no defense",
                )
                if pp and r["defense_rate"] is not None:
                    ax.annotate(
                        f"rate {r['defense_rate']:.2f}",
                        (r["nmi"], r["accuracy"]),
                        fontsize="x-small",
                        color="tab:red",
                    )
        _chance_vline(ax, mine)
        ax.set(xlabel="NMI (lower = more private)", title=ATTACKER_TITLES[attacker])
    axes[0].set_ylabel("test accuracy")
    _legend(fig, axes)
    fig.suptitle("Fig. 5a: PriPrune vs Largest (Pseudo) at fixed rates")
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return fig


def _over_rounds_records(records, scheme):
    """The unaware records of ``scheme`` for none, PriPrune and Largest (Pseudo), by
    curve label (each run is the same for both attackers)."""
    curves: dict[str, list[Mapping]] = {}
    for r in records:
        if _job(r, "pruning.scheme") != scheme or _attacker(r) != "unaware":
            continue
        name = _defense(r)
        if name == "none":
            label = "no defense"
        elif name == "priprune":
            label = "PriPrune"
        elif name == "largest" and _job(r, "defense.pseudo"):
            label = f"Largest (Pseudo) {_job(r, 'defense.rate'):g}"
        else:
            continue
        curves.setdefault(label, []).append(r)
    return curves


def _curve_style(label: str, index: int):
    if label == "no defense":
        return {"color": "black", "linestyle": "-", "linewidth": 2}
    if label == "PriPrune":
        return {"color": "tab:red", "linestyle": "-", "linewidth": 2.2}
    import seaborn as sns

    return {"color": sns.color_palette("Blues", 8)[min(7, 2 + index)], "linestyle": "--"}


def plot_fig5b(records: Sequence[Mapping], *, scheme: str = "prunefl"):
    """Fig. 5b (journal Fig. 8a and 8d): test accuracy over rounds (left) of no defense,
    PriPrune and Largest (Pseudo) at each rate, and PriPrune's defense rate per round
    (right; the fixed rates are flat)."""
    curves = _over_rounds_records(records, scheme)
    fig, axes = _axes(sharey=False)
    for i, (label, group) in enumerate(sorted(curves.items())):
        style = _curve_style(label, i)
        rounds = group[0].get("accuracy_rounds") or []
        accs = np.mean([g["accuracy_per_round"] for g in group], axis=0) if rounds else []
        if len(rounds):
            axes[0].plot(rounds, accs, marker=".", label=label, **style)
        if label == "PriPrune":
            per_round = [
                _mean(vals)
                for vals in zip(*(g["defense_rate_per_round"] for g in group), strict=True)
            ]
            axes[1].plot(range(1, len(per_round) + 1), per_round, label=label, **style)
        elif label != "no defense":
            axes[1].axhline(float(group[0]["job"]["defense.rate"]), **style)
    axes[0].set(xlabel="round", ylabel="test accuracy", title="accuracy over rounds")
    axes[1].set(xlabel="round", ylabel="defense rate", title="defense rate over rounds")
    _legend(fig, axes)
    fig.suptitle("Fig. 5b: utility and PriPrune's adaptive defense rate")
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    return fig


def nmi_by_round(records: Sequence[Mapping]) -> tuple[list[int], list[float], list[float]]:
    """Rounds attacked, mean NMI of the attacks in each (over targets and records) and
    mean chance level."""
    by_round: dict[int, list[float]] = {}
    chance: dict[int, list[float]] = {}
    for r in records:
        for t, v, c in zip(
            r["rounds"], r["nmi_per_upload"], r["nmi_chance_per_upload"], strict=True
        ):
            by_round.setdefault(t, []).append(v)
            chance.setdefault(t, []).append(c)
    rounds = sorted(by_round)
    return (
        rounds,
        [float(np.mean(by_round[t])) for t in rounds],
        [float(np.mean(chance[t])) for t in rounds],
    )


def plot_fig5c(records: Sequence[Mapping], *, scheme: str = "prunefl"):
    """Fig. 5c (journal Fig. 8b): NMI of the attacked rounds, no defense, PriPrune and
    Largest (Pseudo) at each rate, one panel per attacker; chance level in grey."""
    fig, axes = _axes()
    for ax, attacker in zip(axes, ("unaware", "aware"), strict=True):
        mine = [r for r in records if _attacker(r) == attacker]
        flipped = [{**r, "job": {**r["job"], "attacker": "unaware"}} for r in mine]
        curves = _over_rounds_records(flipped, scheme)
        chance_all = []
        for i, (label, group) in enumerate(sorted(curves.items())):
            rounds, nmi, chance = nmi_by_round(group)
            ax.plot(rounds, nmi, marker="o", label=label, **_curve_style(label, i))
            chance_all.append((rounds, chance))
        if chance_all:
            rounds, chance = chance_all[0]
            ax.plot(rounds, chance, color="grey", linestyle=":", label="NMI chance")
        ax.set(xlabel="round", title=ATTACKER_TITLES[attacker])
    axes[0].set_ylabel("NMI of that round's attacks")
    _legend(fig, axes)
    fig.suptitle("Fig. 5c: privacy over rounds")
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    return fig


def plot_fig5d(records: Sequence[Mapping]):
    """Fig. 5d (journal Fig. 9): accuracy against NMI of each base scheme (circle) and
    base + PriPrune (star), an arrow between them; one panel per attacker."""
    import seaborn as sns

    rows = [r for r in defense_points(records) if r["defense"] in ("none", "priprune")]
    schemes = [s for s in TABLE2_SCHEMES if any(r["scheme"] == s for r in rows)]
    colors = dict(zip(schemes, sns.color_palette(n_colors=max(1, len(schemes))), strict=False))
    fig, axes = _axes()
    for ax, attacker in zip(axes, ("unaware", "aware"), strict=True):
        mine = [r for r in rows if r["attacker"] == attacker and r["nmi"] is not None]
        for scheme in schemes:
            pair = {r["defense"]: r for r in mine if r["scheme"] == scheme}
            for name, marker in (("none", "o"), ("priprune", "*")):
                if name in pair:
                    r = pair[name]
                    ax.errorbar(
                        [r["nmi"]],
                        [r["accuracy"]],
                        xerr=[r["nmi_sd"]],
                        fmt=marker,
                        markersize=11 if marker == "*" else 7,
                        color=colors[scheme],
                        capsize=2,
                        label=SCHEME_NAMES[scheme] + (" + PriPrune" if name == "priprune" else ""),
                    )
            if len(pair) == 2:
                ax.annotate(
                    "",
                    xy=(pair["priprune"]["nmi"], pair["priprune"]["accuracy"]),
                    xytext=(pair["none"]["nmi"], pair["none"]["accuracy"]),
                    arrowprops={"arrowstyle": "->", "color": colors[scheme]},
                )
        _chance_vline(ax, mine)
        ax.set(xlabel="NMI (lower = more private)", title=ATTACKER_TITLES[attacker])
    axes[0].set_ylabel("test accuracy")
    _legend(fig, axes)
    fig.suptitle("Fig. 5d: base scheme vs base + PriPrune")
    fig.tight_layout(rect=(0, 0.18, 1, 1))
    return fig


def _group(records: Sequence[Mapping], scheme: str, attacker: str, defense: str) -> list:
    return [
        r
        for r in records
        if _job(r, "pruning.scheme") == scheme
        and _attacker(r) == attacker
        and _defense(r) == defense
    ]


def _interval_fields(prefix: str, records: Sequence[Mapping], metric: str) -> dict:
    values = seed_target_values(records, metric)
    if not values:
        return {f"{prefix}_ci": None, f"{prefix}_seeds": 0}
    r = seed_interval(values)
    return {f"{prefix}_ci": (r.low, r.high), f"{prefix}_seeds": r.seeds}


def _paired_fields(prefix: str, base, pp, metric: str, *, relative: bool) -> dict:
    a, b = seed_target_values(base, metric), seed_target_values(pp, metric)
    if not set(a) & set(b):
        return {prefix: None, f"{prefix}_ci": None, f"{prefix}_p": None}
    r = paired_seed_comparison(a, b, relative=relative)
    return {
        prefix: r.interval.mean,
        f"{prefix}_ci": (r.interval.low, r.interval.high),
        f"{prefix}_p": r.p_value,
    }


def table2_rows(records: Sequence[Mapping], *, paper_dataset: str = "femnist") -> list[dict]:
    """Table 2: per base scheme and attacker, NMI of Base and Base + PriPrune (mean, sd and
    n over targets and seeds, and the t interval over the seeds' means:
    :func:`estimators.replicates.seed_interval`), PriPrune's relative improvement
    ``100 (base - pp) / base`` paired by seed and target (its mean over the seeds,
    interval and paired t test: :func:`estimators.replicates.paired_seed_comparison`),
    the accuracies and PriPrune's accuracy change (``pp - base``, paired by seed), the
    paper's numbers for ``paper_dataset`` (None where it has none), and the verdicts of
    :data:`TABLE2_CLAIMS` (:func:`estimators.replicates.claim_verdict`)."""
    points = defense_points(records)
    out = []
    for scheme in TABLE2_SCHEMES:
        for attacker in ("unaware", "aware"):
            pair = {
                p["defense"]: p
                for p in points
                if p["scheme"] == scheme
                and p["attacker"] == attacker
                and p["defense"] in ("none", "priprune")
            }
            if "none" not in pair and "priprune" not in pair:
                continue
            base, pp = pair.get("none"), pair.get("priprune")
            base_records = _group(records, scheme, attacker, "none")
            pp_records = _group(records, scheme, attacker, "priprune")
            paper = PAPER_TABLE2.get(paper_dataset, {}).get(scheme)
            row = {
                "scheme": scheme,
                "attacker": attacker,
                "base_nmi": base["nmi"] if base else None,
                "base_sd": base["nmi_sd"] if base else None,
                "base_n": base["n"] if base else 0,
                **_interval_fields("base", base_records, "nmi"),
                "pp_nmi": pp["nmi"] if pp else None,
                "pp_sd": pp["nmi_sd"] if pp else None,
                "pp_n": pp["n"] if pp else 0,
                **_interval_fields("pp", pp_records, "nmi"),
                **_paired_fields("improvement_pct", base_records, pp_records, "nmi", relative=True),
                "base_accuracy": base["accuracy"] if base else None,
                "pp_accuracy": pp["accuracy"] if pp else None,
                **_paired_fields(
                    "accuracy_change", pp_records, base_records, "accuracy", relative=False
                ),
                "nmi_chance": _mean([base and base["nmi_chance"], pp and pp["nmi_chance"]]),
                "paper_base": paper[0] if paper else None,
                "paper_pp": paper[1] if paper else None,
                "paper_improvement_pct": 100 * (paper[0][0] - paper[1][0]) / paper[0][0]
                if paper
                else None,
            }
            row["verdicts"] = _table2_verdicts(row)
            out.append(row)
    return out


#: The claims of the paper's Table 2 that :func:`table2_rows` judges (journal lines
#: 2321-2330: "adding PriPrune as defense consistently reduces NMI"; "PriPrune improves the
#: privacy of PruneFL by 45.5% without compromising accuracy").
TABLE2_CLAIMS = {
    "lowers_nmi": "lowers NMI",
    "improvement": "improvement = the paper's",
    "accuracy": "accuracy not lower",
}


def _table2_verdicts(row: Mapping) -> dict[str, str]:
    ci = row["improvement_pct_ci"] or (None, None)
    acc = row["accuracy_change_ci"] or (None, None)
    verdicts = {"lowers_nmi": claim_verdict(*ci, 0.0, direction="greater")}
    if row["paper_improvement_pct"] is not None:
        verdicts["improvement"] = claim_verdict(*ci, row["paper_improvement_pct"])
    verdicts["accuracy"] = claim_verdict(*acc, 0.0, direction="at_least")
    return verdicts


def _pm(mean, sd) -> str:
    return "-" if mean is None else f"{mean:.3f} ± {sd:.3f}"


def format_table2(rows: Sequence[Mapping], *, paper_dataset: str = "femnist") -> str:
    """Table 2 as text: ours (per attacker; mean [95 % interval over the seeds]) beside the
    paper's ``paper_dataset`` column, then the verdicts of :data:`TABLE2_CLAIMS`."""
    head = (
        f"{'scheme':<8} {'attacker':<8} {'seeds':>5} {'Base NMI':>21} {'Base+PriPrune':>21} "
        f"{'improvement %':>22} {'p':>6} {'acc. change':>24} {'chance':>6} | paper "
        f"{paper_dataset}: {'Base':>13} {'Base+PriPrune':>13} {'impr.':>6}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        p = "-" if r["improvement_pct_p"] is None else f"{r['improvement_pct_p']:.3f}"
        chance = "-" if r["nmi_chance"] is None else f"{r['nmi_chance']:.3f}"
        if r["paper_base"]:
            paper = (
                f"{_pm(*r['paper_base']):>13} {_pm(*r['paper_pp']):>13} "
                f"{r['paper_improvement_pct']:.1f}%"
            )
        else:
            paper = "(not in the paper)"
        cells = [
            mean_interval_text(r["base_nmi"], r["base_ci"]),
            mean_interval_text(r["pp_nmi"], r["pp_ci"]),
            mean_interval_text(r["improvement_pct"], r["improvement_pct_ci"], 1),
            mean_interval_text(r["accuracy_change"], r["accuracy_change_ci"]),
        ]
        lines.append(
            f"{SCHEME_NAMES[r['scheme']]:<8} {r['attacker']:<8} "
            f"{max(r['base_seeds'], r['pp_seeds']):>5} {cells[0]:>21} {cells[1]:>21} "
            f"{cells[2]:>22} {p:>6} {cells[3]:>24} {chance:>6} | "
            f"{'':>{len(paper_dataset) + 8}}{paper}"
        )
    lines.append(
        f"Mean [95 % interval]: {METHOD}; improvement and accuracy change paired by seed "
        "and target, p: paired t test of the improvement."
    )
    lines.append(
        f"Paper headline for PruneFL on FEMNIST: {PAPER_IMPROVEMENT['journal']}% (journal, "
        f"Table 2), {PAPER_IMPROVEMENT['aaai']}% (AAAI arXiv:2310.19958)."
    )
    lines.append(
        "Verdicts: lowers NMI (improvement > 0); improvement = the paper's (this scheme's "
        "in its Table 2); accuracy not lower (change >= 0):"
    )
    for r in rows:
        said = "; ".join(f"{TABLE2_CLAIMS[k]}: {v}" for k, v in r["verdicts"].items())
        if r["pp_nmi"] is None or r["base_nmi"] is None:
            said = "one arm has no record"
        lines.append(f"  {SCHEME_NAMES[r['scheme']]}, {r['attacker']}: {said}")
    return "\n".join(lines)


def defense_figures(records: Sequence[Mapping], name: str) -> list[tuple[str, object]]:
    """(figure name, drawing function) of the figures the records can feed."""
    points = defense_points(records)
    out = []
    if any(p["defense"] in FIXED for p in points):
        out.append((f"{name}_fig4", lambda: plot_fig4(records)))
    if any(p["defense"] == "priprune" for p in points):
        out += [
            (f"{name}_fig5a", lambda: plot_fig5a(records)),
            (f"{name}_fig5b", lambda: plot_fig5b(records)),
            (f"{name}_fig5c", lambda: plot_fig5c(records)),
            (f"{name}_fig5d", lambda: plot_fig5d(records)),
        ]
    return out


def is_defense_sweep(records: Sequence[Mapping]) -> bool:
    """Whether some record ran a defense (then the sweep command draws these figures)."""
    return any(_defense(r) != "none" for r in records)
