"""PriPrune's defense study in bits: every defense's exact leakage beside the NMI it is ranked by.

PriPrune (journal Table 2, Figs. 4-5) ranks its defenses by the NMI of an attacker's
reconstructions. :func:`compare_defenses` runs the leakage study
(:func:`sims.experiments.leakage.run_leakage`) once per defense on the same candidates,
warm-up and noise grid, so that each record holds, for the same secret, the exact
``I(X; Y)`` in bits (or its bracket), the Bayes-optimal success, both attackers' success
and Fano bound, their NMI with its chance level, PSNR and the model's accuracy.
:func:`nmi_rank_agreement` answers the question the records are for: does NMI rank the
defenses as the bits do? Per noise level and attacker it gives Kendall's tau between the
two orders (more bits is more leakage; higher NMI is read by the paper as more leakage)
and the pairs that NMI orders against the bits where the bits' intervals do not overlap
(contradictions that Monte Carlo error cannot explain).
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from pruneleak.sims.defenses import DefenseSpec
from pruneleak.sims.experiments.leakage.config import LeakageConfig
from pruneleak.sims.experiments.leakage.study import run_leakage
from pruneleak.sims.store.results import ResultStore

#: The defense study's defenses (``sims/sweep/configs/priprune_defense.toml``): none,
#: Largest, Random and Mix at rate 0.3 with real pruning and with Pseudo-Pruning, and
#: PriPrune's adaptive defense with that study's lambdas (eq. (16) divided by 5, alpha's
#: step 25) and Pseudo-Pruning.
DEFENSE_STUDY = (
    DefenseSpec(),
    *(
        DefenseSpec(name=name, pseudo=pseudo)
        for name in ("largest", "random", "mix")
        for pseudo in (False, True)
    ),
    DefenseSpec(
        name="priprune", lambda_acc=1.0, lambda_pri=3.0, lambda_sha=1.954e-3, alpha_lr=25.0
    ),
)


def defense_label(record: dict) -> str:
    """``"Largest (Pseudo)"``, ``"none"``, ...: the defense of a record as the paper names it."""
    name = record["defense"]
    if name == "none":
        return "none"
    label = "PriPrune" if name == "priprune" else name.capitalize()
    return label + (" (Pseudo)" if record["pseudo"] else "")


#: The two attackers of the defense study, and each one's attack in a record: without a
#: defense the defense-aware server runs plain SGI (there is nothing to be aware of).
ATTACKERS = ("unaware", "aware")


def attack_of(record: dict, attacker: str) -> str:
    """The record's attack of ``attacker`` (:data:`ATTACKERS`)."""
    if attacker == "aware" and "sgi_aware" in record["attack_success"]:
        return "sgi_aware"
    return "sgi"


def compare_defenses(
    base: LeakageConfig,
    defenses=DEFENSE_STUDY,
    *,
    store: ResultStore | None = None,
    progress: bool | None = None,
    reconstructions_dir=None,
) -> list[dict]:
    """The records of ``base`` with each of ``defenses`` (its ``defense`` replaced), in
    order: one per (defense, p, s). Resumable through ``store`` like
    :func:`~sims.experiments.leakage.run_leakage`."""
    records = []
    for spec in defenses:
        config = replace(base, defense=spec)
        records += run_leakage(
            config, store, progress=progress, reconstructions_dir=reconstructions_dir
        )
    return records


def nmi_rank_agreement(records: list[dict]) -> list[dict]:
    """Per (p, s) and attacker (:data:`ATTACKERS`): does NMI order the defenses as the
    exact bits do?

    Only pairs of defenses whose bits' intervals do not overlap are ordered by the bits
    (the others are ties: Monte Carlo error could order them either way). Over those
    pairs, ``tau = (C - D) / (C + D)`` with ``C`` the pairs NMI orders the same way (a
    higher NMI read as more leakage, as the paper reads it) and ``D`` the pairs it orders
    the other way (Kendall's tau restricted to the certified pairs; NMI ties count in
    neither). Returns one dict per (p, s, attacker) with ``tau`` (None when no pair is
    ordered), ``pairs`` (``C + D``) and ``contradictions``: the ``D`` pairs as
    ``(more private by NMI, more private by the bits)`` labels.
    """
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        groups.setdefault((r["p"], r["noise_std"]), []).append(r)
    out = []
    for (p, s), rows in groups.items():
        for attacker in ATTACKERS:
            concordant, contradictions = 0, []
            for a, b in itertools.permutations(rows, 2):
                if not a["exact_ci_bits"][0] > b["exact_ci_bits"][1]:
                    continue  # b is not certified to leak less than a
                nmi_a, nmi_b = (r["nmi"][attack_of(r, attacker)] for r in (a, b))
                if nmi_a > nmi_b:
                    concordant += 1
                elif nmi_a < nmi_b:
                    contradictions.append((defense_label(a), defense_label(b)))
            pairs = concordant + len(contradictions)
            out.append(
                {
                    "p": p,
                    "noise_std": s,
                    "attacker": attacker,
                    "tau": (concordant - len(contradictions)) / pairs if pairs else None,
                    "pairs": pairs,
                    "contradictions": contradictions,
                }
            )
    return out


def format_defense_table(records: list[dict]) -> str:
    """A Markdown table, one row per (defense, p, s): bits with interval and method, Bayes
    success, per attacker success / Fano / NMI / PSNR, NMI's chance level and accuracy."""
    head = ["defense", "p", "s", "bits [95% CI]", "method", "Bayes"]
    for attacker in ATTACKERS:
        head += [f"{attacker} success", f"{attacker} Fano", f"{attacker} NMI", f"{attacker} PSNR"]
    head += ["NMI chance", "accuracy"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in records:
        lo, hi = r["exact_ci_bits"]
        success = r["bayes_success"]
        cells = [
            defense_label(r),
            f"{r['p']:g}",
            f"{r['noise_std']:g}",
            f"{r['exact_bits']:.2f} [{lo:.2f}, {hi:.2f}]",
            r["exact_method"],
            "-" if success is None else f"{success:.3f}",
        ]
        for attacker in ATTACKERS:
            attack = attack_of(r, attacker)
            cells += [
                f"{r['attack_success'][attack]:.2f}",
                f"{r['fano_lower_bits'][attack]:.2f}",
                f"{r['nmi'][attack]:.3f}",
                f"{r['psnr'][attack]:.1f}",
            ]
        cells += [f"{r['nmi_chance']:.3f}", f"{r['accuracy']:.3f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def format_agreement(agreement: list[dict]) -> str:
    """One line per (p, s, attack) of :func:`nmi_rank_agreement`."""
    lines = []
    for a in agreement:
        tau = "-" if a["tau"] is None else f"{a['tau']:+.2f}"
        pairs = "; ".join(f"{x} < {y} by NMI, > by bits" for x, y in a["contradictions"])
        lines.append(
            f"p = {a['p']:g}, s = {a['noise_std']:g}, {a['attacker']}: tau {tau} over "
            f"{a['pairs']} pairs certified apart" + (f"; contradicted: {pairs}" if pairs else "")
        )
    return "\n".join(lines)
