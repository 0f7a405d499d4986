"""The outputs of PriPrune's defense sweep: the job's ``attack_every`` and ``eval_every``
(stable keys, the attacked rounds, accuracy per round) and sims.plots.defense's figures
and Table 2 on small synthetic records."""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pytest
from test_sweep import TINY

from pruneleak.sims.plots import defense as plots
from pruneleak.sims.sweep import AttackJob, job_key, run_job

matplotlib.use("Agg")


# ------------------------------------------------------------------------------ job fields


def test_attack_every_and_eval_every_at_their_defaults_keep_the_keys():
    assert job_key(AttackJob(attack_every=1, eval_every=None)) == job_key(AttackJob())
    assert job_key(AttackJob()) == "attack-job/28243fbfbb10d79c"
    keys = {
        job_key(AttackJob.from_fields(change))
        for change in ({}, {"attack_every": 2}, {"eval_every": 1}, {"eval_every": 2})
    }
    assert len(keys) == 4


def test_attack_every_selects_multiples_and_the_last_round():
    job = AttackJob.from_fields({"fed.rounds": 7, "attack_every": 3})
    assert [t for t in range(1, 8) if job.attacked(t)] == [3, 6, 7]
    every = AttackJob.from_fields({"fed.rounds": 3})
    assert [t for t in range(1, 4) if every.attacked(t)] == [1, 2, 3]


@pytest.mark.parametrize("field", ["attack_every", "eval_every"])
def test_attack_every_and_eval_every_are_checked(field):
    with pytest.raises(ValueError, match=field):
        AttackJob.from_fields({field: 0})


def test_eval_every_sets_the_fed_config_and_stays_job_owned():
    job = AttackJob.from_fields({"fed.rounds": 6, "eval_every": 2})
    assert job.fed_config().eval_every == 2
    assert AttackJob.from_fields({"fed.rounds": 6}).fed_config().eval_every == 6
    with pytest.raises(ValueError, match=r"fed\.eval_every"):
        AttackJob.from_fields({"fed.eval_every": 2})


def test_run_job_attacks_the_selected_rounds_and_records_accuracy_per_round():
    job = AttackJob.from_fields(
        {**TINY, "fed.rounds": 5, "attack_every": 2, "eval_every": 2, "device": "cpu"}
    )
    record = run_job(job)
    assert set(record["rounds"]) == {2, 4, 5}  # both clients sampled every round
    assert len(record["nmi_per_upload"]) == record["n_uploads"] == len(record["rounds"])
    assert record["accuracy_rounds"] == [0, 2, 4, 5]
    assert len(record["accuracy_per_round"]) == 4
    assert record["accuracy"] == record["accuracy_per_round"][-1]
    last = AttackJob.from_fields({**TINY, "fed.rounds": 2, "device": "cpu"})
    assert run_job(last)["accuracy_rounds"] == [0, 2]


# ----------------------------------------------------------------------- synthetic records


def record(scheme, defense, attacker, nmi, accuracy, *, pseudo=True, rate=0.3, chance=0.4, seed=0):
    """A record as run_job writes it, with the fields the figures read (targets: clients
    3 and 5)."""
    job = {
        "seed": seed,
        "pruning.scheme": scheme,
        "defense.name": defense,
        "defense.pseudo": pseudo if defense != "none" else True,
        "defense.rate": rate if defense in plots.FIXED else 0.3,
        "attacker": attacker,
    }
    label = {"none": "none", "priprune": "PriPrune (Pseudo)"}.get(
        defense, f"{defense.title()} ({'Pseudo' if pseudo else 'real'})"
    )
    adaptive = [0.0, 0.05, 0.1]
    return {
        "job": job,
        "defense_label": label,
        "nmi_per_target": list(nmi),
        "nmi": float(np.mean(nmi)),
        "nmi_chance": chance,
        "accuracy": accuracy,
        "accuracy_rounds": [0, 2, 3],
        "accuracy_per_round": [0.1, accuracy / 2, accuracy],
        "defense_rate": 0.0 if defense == "none" else (0.05 if defense == "priprune" else rate),
        "defense_rate_per_round": [0.0] * 3
        if defense == "none"
        else (adaptive if defense == "priprune" else [rate] * 3),
        "rounds": [2, 2, 3, 3],
        "clients": [5, 3, 5, 3],
        "nmi_per_upload": [nmi[0], nmi[1], nmi[0] - 0.01, nmi[1] - 0.01],
        "nmi_chance_per_upload": [chance] * 4,
    }


@pytest.fixture
def records():
    out = []
    for attacker, shift in (("unaware", 0.0), ("aware", 0.1)):
        out.append(record("prunefl", "none", attacker, [0.8 + shift, 0.6 + shift], 0.7))
        out.append(record("prunefl", "priprune", attacker, [0.5 + shift, 0.3 + shift], 0.68))
        out.append(record("snip", "none", attacker, [0.7, 0.7], 0.6))
        out.append(record("snip", "priprune", attacker, [0.6, 0.5], 0.6))
        for name in plots.FIXED:
            for pseudo in (True, False):
                out.append(
                    record("prunefl", name, attacker, [0.5, 0.55], 0.3, pseudo=pseudo, rate=0.3)
                )
        for rate in (0.1, 0.6):
            out.append(record("prunefl", "largest", attacker, [0.6, 0.5], 0.2, rate=rate))
    return out


def test_table2_equals_a_hand_computation(records):
    rows = {(r["scheme"], r["attacker"]): r for r in plots.table2_rows(records)}
    assert set(rows) == {(s, a) for s in ("prunefl", "snip") for a in ("unaware", "aware")}
    row = rows["prunefl", "unaware"]
    assert row["base_nmi"] == pytest.approx(0.7)
    assert row["base_sd"] == pytest.approx(np.sqrt(0.02))  # (0.1^2 + 0.1^2) / (2 - 1)
    assert row["pp_nmi"] == pytest.approx(0.4)
    assert row["improvement_pct"] == pytest.approx(100 * 0.3 / 0.7)
    assert (row["base_accuracy"], row["pp_accuracy"]) == (0.7, 0.68)
    assert row["paper_base"] == (0.22, 0.008) and row["paper_pp"] == (0.12, 0.007)
    assert row["paper_improvement_pct"] == pytest.approx(100 * 0.10 / 0.22)  # 45.5 %
    aware = rows["prunefl", "aware"]
    assert (aware["base_nmi"], aware["pp_nmi"]) == pytest.approx((0.8, 0.5))
    snip = rows["snip", "unaware"]
    assert snip["improvement_pct"] == pytest.approx(100 * (0.7 - 0.55) / 0.7)
    assert snip["pp_sd"] == pytest.approx(np.std([0.6, 0.5], ddof=1))
    text = plots.format_table2(plots.table2_rows(records))
    assert "0.700 (1 seed)" in text and "42.9 (1 seed)" in text
    assert "45.5%" in text and "36.3%" in text and "not resolved at this scale" in text


def test_table2_intervals_and_paired_test_over_three_seeds_by_hand():
    """Per seed, base and PriPrune NMI of clients 3 and 5; the improvement is paired by
    seed: 100 (0.7 - 0.3) / 0.7, 100 (0.6 - 0.3) / 0.6, 100 (0.8 - 0.4) / 0.8."""
    base = {0: [0.8, 0.6], 1: [0.7, 0.5], 2: [0.9, 0.7]}
    pp = {0: [0.2, 0.4], 1: [0.3, 0.3], 2: [0.4, 0.4]}
    accuracy = {0: (0.70, 0.68), 1: (0.70, 0.69), 2: (0.70, 0.70)}
    records = [
        r
        for s in range(3)
        for r in (
            record("prunefl", "none", "unaware", base[s], accuracy[s][0], seed=s),
            record("prunefl", "priprune", "unaware", pp[s], accuracy[s][1], seed=s),
        )
    ]
    # the PriPrune record lists its targets in the other order: pairing is by client id
    for r in records[1::2]:
        r["clients"] = [3, 5, 3, 5]
    (row,) = plots.table2_rows(records)
    t975 = 0.95 * math.sqrt(2 / (1 - 0.95**2))  # t_{2, 0.975} in closed form
    seed_means = np.array([0.7, 0.6, 0.8])
    half = t975 * seed_means.std(ddof=1) / math.sqrt(3)
    assert row["base_ci"] == pytest.approx((0.7 - half, 0.7 + half))
    gains = np.array([100 * 0.4 / 0.7, 100 * 0.3 / 0.6, 100 * 0.4 / 0.8])
    half = t975 * gains.std(ddof=1) / math.sqrt(3)
    assert row["improvement_pct"] == pytest.approx(gains.mean())
    assert row["improvement_pct_ci"] == pytest.approx((gains.mean() - half, gains.mean() + half))
    t = gains.mean() / (gains.std(ddof=1) / math.sqrt(3))
    assert row["improvement_pct_p"] == pytest.approx(1 - t / math.sqrt(2 + t**2))
    assert row["accuracy_change"] == pytest.approx(-0.01)
    # 52.4 [42.1, 62.6] holds "lowers NMI", straddles the paper's 45.5 %
    assert row["verdicts"] == {
        "lowers_nmi": "holds",
        "improvement": "not resolved at this scale",
        "accuracy": "not resolved at this scale",
    }
    assert "3" in plots.format_table2([row]).splitlines()[2].split()[2]


def test_nmi_by_round_averages_targets_per_round(records):
    rounds, nmi, chance = plots.nmi_by_round(records[:1])
    assert rounds == [2, 3] and nmi == pytest.approx([0.7, 0.69]) and chance == [0.4, 0.4]


def test_every_defense_figure_is_drawn_with_both_attackers(records):
    import matplotlib.pyplot as plt

    drawn = plots.defense_figures(records, "tiny")
    assert [name for name, _ in drawn] == [
        f"tiny_{f}" for f in ("fig4", "fig5a", "fig5b", "fig5c", "fig5d")
    ]
    for name, draw in drawn:
        fig = draw()
        titles = [ax.get_title() for ax in fig.axes]
        if not name.endswith("fig5b"):
            assert titles[:2] == [plots.ATTACKER_TITLES["unaware"], plots.ATTACKER_TITLES["aware"]]
            labels = {t.get_text() for t in fig.legends[0].get_texts()}
            assert "NMI chance" in labels, name
        plt.close(fig)
    assert plots.is_defense_sweep(records)
    assert not plots.is_defense_sweep([r for r in records if r["job"]["defense.name"] == "none"])


# ------------------------------------------------------------------------- sweep command

DEFENSE_TOML = """
name = "tiny_defense"
[base]
num_clients = 2
targets = 1
stats_samples = 8
attack_every = 2
eval_every = 1
[base.fed]
clients_per_round = 2
rounds = 3
[base.inversion]
iterations = 5
[[grid]]
defense.name = ["none", "priprune"]
attacker = ["unaware", "aware"]
[[grid]]
defense.name = "largest"
attacker = ["unaware", "aware"]
"""


def test_the_sweep_command_prints_table2_and_draws_the_defense_figures(tmp_path, capsys):
    from pruneleak.sims.cli.sweep import main as sweep_main

    path = tmp_path / "tiny_defense.toml"
    path.write_text(DEFENSE_TOML)
    out = tmp_path / "out"
    assert sweep_main([str(path), "--out", str(out), "--figures", "--device", "cpu"]) == 0
    printed = capsys.readouterr().out
    assert "6 of 6 jobs recorded" in printed
    assert "Base+PriPrune" in printed and "45.5%" in printed
    for figure in ("fig4", "fig5a", "fig5b", "fig5c", "fig5d"):
        assert (out / f"tiny_defense_{figure}.png").exists(), figure


def test_table2_leaves_out_a_study_panels_jobs_and_the_p_panel_gets_its_claim(tmp_path, capsys):
    """A sweep with a p panel (one round, seed 1) beside the defense grid: Table 2 reads
    the defense grid's seed-0 runs only, and the p panel prints Fig. 2's claim."""
    from pruneleak.sims.cli.sweep import main as sweep_main

    path = tmp_path / "tiny_defense.toml"
    path.write_text(
        DEFENSE_TOML.replace(
            '[[grid]]\ndefense.name = "largest"', '[[grid]]\ndefense.name = "none"'
        )
        + '[[grid]]\npanel = "p"\npruning.p = [0.3, 0.9]\nfed.rounds = 1\nseed = 1\n'
    )
    out = tmp_path / "out"
    assert sweep_main([str(path), "--out", str(out), "--device", "cpu"]) == 0
    printed = capsys.readouterr().out
    assert "6 of 6 jobs recorded" in printed
    assert "Fig. 2's claim" in printed and "not resolved at this scale" in printed
    (random_row,) = [line for line in printed.splitlines() if line.startswith("Random   unaware")]
    assert random_row.split()[2] == "1"  # one seed: the p panel's seed-1 runs are not a Base arm
