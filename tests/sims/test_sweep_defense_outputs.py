"""The outputs of PriPrune's defense sweep: the job's ``attack_every`` and ``eval_every``
(stable keys, the attacked rounds, accuracy per round) and sims.plots.defense's figures
and Table 2 on small synthetic records."""

from __future__ import annotations

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


def record(scheme, defense, attacker, nmi, accuracy, *, pseudo=True, rate=0.3, chance=0.4):
    """A record as run_job writes it, with the fields the figures read."""
    job = {
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
    assert "0.700 ± 0.141" in text and "42.9%" in text and "45.5%" in text and "36.3%" in text


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
