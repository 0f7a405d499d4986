"""PriPrune's defenses and the defense-aware attacker in the attack-study jobs
(sims.sweep): DefenseSpec, the job's ``attacker``, the record's defense rates, stable
keys of jobs without a defense, TOML fields and errors."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from test_sweep import TINY, write

from pruneleak.sims.defenses import FixedDefense, PriPruneDefense
from pruneleak.sims.sweep import (
    AttackJob,
    job_key,
    load_config,
    packaged_config,
    read_config,
    run_job,
)
from pruneleak.sims.sweep import runner as runner_module
from pruneleak.sims.sweep.job import DefenseSpec

ROOT = Path(__file__).resolve().parents[2]


def test_jobs_without_a_defense_keep_their_keys():
    """Keys computed on main before the defense, partition and later fields existed
    (commit 976f812): the default job's, and a digest of the keys of the packaged
    quick_digits sweep's jobs with a one-shot scheme, in order (computed on 6baf253, whose
    digest of all 78 keys was 976f812's, 22649c7fe173fd16). FedDST's and PruneFL's 26
    jobs now re-adjust on the papers' schedules and have new keys (test_readjustment);
    paper_femnist has since moved to the paper's ReLU network and writer split, so its
    jobs are new ones."""
    assert job_key(AttackJob()) == "attack-job/28243fbfbb10d79c"
    jobs = packaged_config("quick_digits").jobs()
    one_shot = [job_key(j) for j in jobs if j.pruning.scheme not in ("feddst", "prunefl")]
    digest = hashlib.sha256("".join(one_shot).encode()).hexdigest()[:16]
    assert (len(jobs), len(one_shot), digest) == (78, 52, "a1f78b790bd7d287")


@pytest.mark.parametrize(
    "change",
    [
        {"defense.name": "largest"},
        {"defense.name": "largest", "defense.rate": 0.4},
        {"defense.name": "largest", "defense.pseudo": False},
        {"defense.name": "priprune", "defense.lambda_pri": 10.0},
        {"attacker": "aware"},
    ],
)
def test_a_defense_or_the_aware_attacker_changes_the_key(change):
    assert job_key(AttackJob.from_fields(change)) != job_key(AttackJob())


def test_defense_spec_builds_the_defense_with_its_fields():
    assert DefenseSpec().build(seed=0) is None
    mix = DefenseSpec(name="mix", rate=0.2, largest_fraction=0.25, pseudo=False).build(seed=3)
    assert isinstance(mix, FixedDefense)
    assert (mix.strategy, mix.rate, mix.largest_fraction, mix.pseudo, mix.seed) == (
        "mix", 0.2, 0.25, False, 3,
    )  # fmt: skip
    adaptive = DefenseSpec(name="priprune", lambda_pri=10.0, alpha_lr=0.5).build(seed=4)
    assert isinstance(adaptive, PriPruneDefense) and adaptive.seed == 4
    assert DefenseSpec(name="priprune").step_scale == 5.0  # lambda_acc's default
    assert DefenseSpec(name="largest").step_scale == 1.0


def test_run_job_hands_the_defense_to_the_fl_loop(monkeypatch):
    seen = {}
    real = runner_module.run_federated

    def run_federated(*args, **kwargs):
        seen["defense"] = kwargs["defense"]
        return real(*args, **kwargs)

    monkeypatch.setattr(runner_module, "run_federated", run_federated)
    run_job(AttackJob.from_fields({**TINY, "defense.name": "random", "defense.rate": 0.5}))
    assert isinstance(seen["defense"], FixedDefense)
    assert (seen["defense"].strategy, seen["defense"].rate) == ("random", 0.5)
    run_job(AttackJob.from_fields(TINY))
    assert seen["defense"] is None


def test_a_defended_job_records_the_rates_and_the_aware_attacker_leaks_more():
    """Largest (Pseudo) at 0.3 over 3 rounds, one target: every round withholds 0.3 of
    the base-kept weights; the aware attacker cannot use those nor, from round 2, the
    stale ones (measured: 0.30, 0.44, 0.53). Measured PSNR after 10 L-BFGS steps: aware
    11.6, 10.9, 10.2 dB; unaware 4.5, 4.9, 4.8 dB."""
    common = {**TINY, "fed.rounds": 3, "defense.name": "largest"}
    unaware = run_job(AttackJob.from_fields(common))
    aware = run_job(AttackJob.from_fields({**common, "attacker": "aware"}))
    for record in (unaware, aware):
        assert record["defense_label"] == "Largest (Pseudo)"
        assert record["defense_rate_per_round"] == pytest.approx([0.3] * 3, abs=1e-3)
        assert record["defense_rate"] == pytest.approx(0.3, abs=1e-3)
        effective = record["effective_defense_rate_per_upload"]
        assert effective[0] == pytest.approx(0.3, abs=1e-3)  # nothing stale yet
        assert all(e > 0.35 for e in effective[1:])  # then the stale weights count too
        assert record["effective_defense_rate"] == pytest.approx(sum(effective) / 3)
        json.dumps(record, allow_nan=False)
    assert all(
        a > u + 3 for a, u in zip(aware["psnr_per_upload"], unaware["psnr_per_upload"], strict=True)
    ), (aware["psnr_per_upload"], unaware["psnr_per_upload"])


def test_a_job_without_defense_records_zero_rates_and_both_attackers_agree():
    unaware = run_job(AttackJob.from_fields({**TINY, "fed.rounds": 2}))
    aware = run_job(AttackJob.from_fields({**TINY, "fed.rounds": 2, "attacker": "aware"}))
    assert unaware["defense_label"] == "none"
    assert unaware["defense_rate_per_round"] == [0.0, 0.0] and unaware["defense_rate"] == 0.0
    assert unaware["effective_defense_rate"] == 0.0
    # The same problems (mask, point, target), batched by round instead of by chunk: the
    # batched kernels' round-off, amplified by 10 L-BFGS steps (measured: 1.2e-4).
    assert aware["psnr_per_upload"] == pytest.approx(unaware["psnr_per_upload"], rel=1e-3)


def test_exact_bits_are_left_out_under_a_defense():
    """With 8 clients |D_i| ~ 180 <= leakage_candidates: the undefended job has its exact
    bits; under Largest the withheld coordinates depend on the batch and the release
    model does not hold, so they are None (the Fano bits stay)."""
    job = {**TINY, "num_clients": 8, "fed.clients_per_round": 8}
    plain = run_job(AttackJob.from_fields(job))
    defended = run_job(AttackJob.from_fields({**job, "defense.name": "largest"}))
    assert plain["exact_bits"] is not None and defended["exact_bits"] is None
    assert defended["fano_bits"] is not None


def test_toml_sets_the_defense_and_the_attacker(tmp_path):
    path = write(
        tmp_path / "d.toml",
        'name = "d"\n[base]\nattacker = "aware"\n[base.defense]\nname = "mix"\nrate = 0.2\n'
        "largest_fraction = 0.25\npseudo = false\n"
        "[[grid]]\ndefense.rate = [0.1, 0.2]\n"
        '[[grid]]\nattacker = ["unaware", "aware"]\n',
    )
    jobs = read_config(path).jobs()
    assert [(j.defense.rate, j.attacker) for j in jobs] == [
        (0.1, "aware"),
        (0.2, "aware"),
        (0.2, "unaware"),
    ]
    assert jobs[0].defense == DefenseSpec(name="mix", rate=0.1, largest_fraction=0.25, pseudo=False)


def test_the_packaged_defense_sweep_and_the_paper_scale_one_load():
    quick = load_config("priprune_defense")
    panels = {name: len(jobs) for name, jobs in quick.panels().items()}
    assert panels == {"defenses": 14, "rate": 12, "priprune": 2, "schemes": 20}
    assert len(quick.jobs()) == 42  # PruneFL's base and + PriPrune are in two panels
    names = {(j.defense.name, j.defense.pseudo, j.attacker) for j in quick.jobs()}
    assert ("none", True, "aware") in names and ("mix", False, "unaware") in names
    assert {j.pruning.scheme for j in quick.jobs()} == {
        "prunefl", "feddst", "synflow", "snip", "random",
    }  # fmt: skip
    assert {(j.attack_every, j.eval_every, j.fed.rounds) for j in quick.jobs()} == {(10, 5, 30)}
    paper = read_config(ROOT / "benchmarks" / "sweeps" / "priprune_defense_femnist.toml")
    assert {(j.dataset, j.model.name) for j in paper.jobs()} == {("femnist", "conv2")}
    panels = {name: len(jobs) for name, jobs in paper.panels().items()}
    assert panels == {"defenses": 14, "rate": 12, "priprune": 2, "schemes": 16}
    assert len(paper.jobs()) == 26 + 12


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        ({"defense.name": "biggest"}, r"'name' parameter of DefenseSpec.*biggest"),
        ({"defense.name": "largest", "defense.rate": 1.5}, r"'rate'.*\[0, 1\].*1.5"),
        ({"defense.rate": 0.2}, r"'rate' parameter of DefenseSpec.*not read.*'none'.*0.2"),
        ({"defense.name": "largest", "defense.lambda_pri": 1.0}, r"'lambda_pri'.*not read"),
        ({"defense.name": "priprune", "defense.temperature": 0.0}, r"'temperature'.*0.0"),
        ({"defense.name": "largest", "defense.pseudo": "yes"}, r"'pseudo'.*bool.*yes"),
        ({"attacker": "smart"}, r"'attacker' parameter of AttackJob.*smart"),
        ({"attacker": "aware", "attack": "gi"}, r"'attacker'.*needs attack='sgi'.*'gi'"),
    ],
)
def test_bad_defense_fields_are_one_clear_value_error(fields, match):
    with pytest.raises(ValueError, match=match):
        AttackJob.from_fields(fields)


def test_a_bad_defense_in_toml_names_the_file_and_the_field(tmp_path):
    path = write(tmp_path / "bad.toml", 'name = "x"\n[[grid]]\ndefense.name = ["largest", "top"]\n')
    with pytest.raises(ValueError, match=r"defense.name.*'name'.*top") as caught:
        read_config(path)
    assert str(path) in str(caught.value)


class _Captured(Exception):
    pass


@pytest.mark.parametrize(("defense", "scale"), [("priprune", 5.0), ("largest", 1.0)])
def test_the_aware_attacker_inverts_the_defenses_step(monkeypatch, defense, scale):
    """PriPrune's weight step is lambda_acc * lr * grad L_acc (Algorithm 3 line 9)."""
    seen = {}

    def attack(model, uploads, **kwargs):
        seen["lr"] = kwargs["lr"]
        raise _Captured

    monkeypatch.setattr(runner_module, "defense_aware_attack", attack)
    job = {**TINY, "fed.lr": 0.125, "defense.name": defense, "attacker": "aware"}
    with pytest.raises(_Captured):
        run_job(AttackJob.from_fields(job))
    assert seen["lr"] == 0.125 * scale
