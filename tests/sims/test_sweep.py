"""sims.sweep: packaged and TOML configurations, the composed configs a job hands to the
FL loop and the attack, grid expansion, one job's record, resumable sweeps (injected
failure and a real SIGKILL), panels and the ``pruneleak sweep`` command."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from pruneleak.bounds import priprune
from pruneleak.sims.attacks import AttackConfig
from pruneleak.sims.cli.sweep import main as sweep_main
from pruneleak.sims.fl.server import FedConfig
from pruneleak.sims.plots.sweep import plot_attack_comparison, plot_panels
from pruneleak.sims.store.results import ResultStore
from pruneleak.sims.sweep import (
    AttackJob,
    ModelSpec,
    PruningSpec,
    SweepConfig,
    job_key,
    load_config,
    packaged_config,
    packaged_configs,
    read_config,
    run_job,
    run_sweep,
)
from pruneleak.sims.sweep import job as job_module
from pruneleak.sims.sweep import runner as runner_module
from pruneleak.sims.sweep.panels import panel_axis, panel_rows

# A job that runs in well under a second: 2 clients, 1 target, 10 L-BFGS iterations.
TINY = {
    "num_clients": 2,
    "fed.clients_per_round": 2,
    "targets": 1,
    "inversion.iterations": 10,
    "stats_samples": 8,
    "pruning.synflow_iterations": 2,
}
# The same in the TOML layout (sub-tables named after the job's fields).
TINY_TOML = """
[base]
num_clients = 2
targets = 1
stats_samples = 8
[base.fed]
clients_per_round = 2
[base.inversion]
iterations = 10
[base.pruning]
synflow_iterations = 2
"""


def tiny_sweep(name="tiny") -> SweepConfig:
    grids = ({"panel": "p", "pruning.p": [0.0, 0.3, 0.9]}, {"panel": "T", "fed.rounds": [1, 2]})
    return SweepConfig(name=name, base=TINY, grids=grids)


def write(path, text):
    path.write_text(text)
    return path


# --------------------------------------------------------------------------- configuration


def test_packaged_configs_are_found_through_the_package_from_any_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert set(packaged_configs()) >= {"quick_digits", "paper_femnist", "paper_cifar10"}
    for name in packaged_configs():
        assert load_config(name).jobs()
    quick = packaged_config("quick_digits")
    panels = quick.panels()
    axes = {
        name: panel_axis([j for j in jobs if j.attack == "sgi"]) for name, jobs in panels.items()
    }
    assert axes == {
        "p": "pruning.p",
        "B": "fed.batch_size",
        "d": "model.name",
        "T": "fed.rounds",
        "attacks": "pruning.p",
    }
    six = {"random", "snip", "synflow", "grasp", "feddst", "prunefl"}
    assert all({j.pruning.scheme for j in panels[p]} == six for p in ("p", "B", "d", "T"))
    with pytest.raises(ValueError, match=r"quick_digit.*neither a packaged one"):
        load_config("quick_digit")


def test_toml_values_reach_the_configs_the_job_hands_on(tmp_path):
    """Every settable field of the composed configurations, each away from its default,
    must arrive under its own name in the config the FL loop and the attack receive."""
    path = write(
        tmp_path / "all.toml",
        """name = "all"
[base]
dataset = "digits"
num_clients = 6
targets = 3
attack = "gi"
seed = 7
[base.model]
name = "conv2"
width = 8
hidden = 12
activation = "tanh"
pooling = "max"
[base.pruning]
scheme = "feddst"
p = 0.45
readjust_every = 3
synflow_iterations = 5
[base.fed]
rounds = 4
clients_per_round = 5
local_epochs = 2
batch_size = 3
lr = 0.125
gradient_at = "dense"
init_batch_size = 50
eval_batch_size = 64
[base.inversion]
loss = "cosine_tv"
optimizer = "adam"
iterations = 33
lr = 0.05
tv_weight = 0.001
restarts = 2
label_mode = "optimize"
box = true
signed_gradients = true
[[grid]]
panel = "one"
""",
    )
    (job,) = read_config(path).jobs()
    assert (job.dataset, job.num_clients, job.targets, job.attack, job.seed) == (
        "digits",
        6,
        3,
        "gi",
        7,
    )
    assert job.model == ModelSpec(
        name="conv2", width=8, hidden=12, activation="tanh", pooling="max"
    )
    assert job.pruning == PruningSpec(
        scheme="feddst", p=0.45, readjust_every=3, synflow_iterations=5
    )
    assert job.fed_config() == FedConfig(
        rounds=4,
        clients_per_round=5,
        local_epochs=2,
        batch_size=3,
        lr=0.125,
        algorithm="fedsgd",
        gradient_at="dense",
        init_batch_size=50,
        eval_every=4,  # evaluated after the last round only
        eval_batch_size=64,
        seed=7,
    )
    assert job.attack_config(device="cpu") == AttackConfig(
        loss="cosine_tv",
        optimizer="adam",
        iterations=33,
        lr=0.05,
        tv_weight=0.001,
        restarts=2,
        label_mode="optimize",
        box=True,
        signed_gradients=True,
        seed=7,
        device="cpu",
    )


class _Captured(Exception):
    pass


def test_run_job_hands_the_jobs_configs_to_the_fl_loop_and_the_attack(monkeypatch):
    job = AttackJob.from_fields({**TINY, "fed.lr": 0.125, "inversion.lr": 0.5, "seed": 3})
    seen = {}
    real_run_federated = runner_module.run_federated

    def run_federated(*args, **kwargs):
        seen["fed"] = args[5]
        return real_run_federated(*args, **kwargs)

    def attack(*args, **kwargs):
        seen["attack"], seen["lr"] = kwargs["config"], kwargs["lr"]
        raise _Captured

    monkeypatch.setattr(runner_module, "run_federated", run_federated)
    monkeypatch.setitem(job_module.ATTACKS, "sgi", attack)
    with pytest.raises(_Captured):
        run_job(job)
    assert seen["fed"] == job.fed_config() and seen["fed"].lr == 0.125
    assert seen["lr"] == 0.125  # the attack inverts the client's step size
    assert seen["attack"] == job.attack_config(device="cpu")
    assert seen["attack"].lr == 0.5


def test_grids_expand_as_products_and_share_jobs_across_panels():
    config = SweepConfig(
        name="s",
        base={"pruning.p": 0.3},
        grids=(
            {"panel": "p", "pruning.scheme": ["random", "snip"], "pruning.p": [0.3, 0.6]},
            {"panel": "B", "pruning.scheme": ["random", "snip"], "fed.batch_size": [1, 2]},
        ),
    )
    panels = config.panels()
    assert [len(panels["p"]), len(panels["B"])] == [4, 4]
    # (scheme, p=0.3, B=1) belongs to both panels and is one job
    assert len(config.jobs()) == 4 + 4 - 2
    assert len({job_key(j) for j in config.jobs()}) == 6
    assert panel_axis(panels["p"]) == "pruning.p" and panel_axis(panels["B"]) == "fed.batch_size"
    by_job = config.job_panels()
    assert set(by_job) == set(config.jobs())
    assert sorted(by_job.values()) == [("B",)] * 2 + [("p",)] * 2 + [("p", "B")] * 2


@pytest.mark.parametrize(
    "change",
    [
        {"pruning.p": 0.31},
        {"seed": 1},
        {"fed.lr": 0.5},
        {"inversion.iterations": 7},
        {"model.width": 8},
        {"attack": "gi"},
        {"leakage_candidates": 100},
        {"partition": "natural"},
        {"image_size": 16},
    ],
)
def test_fingerprint_changes_with_every_kind_of_number(change):
    assert job_key(AttackJob()) != job_key(AttackJob.from_fields(change))


def test_fingerprint_ignores_where_a_job_runs_and_reads():
    where = {"device": "cuda:1", "data_dir": "/data", "attack_chunk": 3, "fed.eval_batch_size": 7}
    assert job_key(AttackJob()) == job_key(AttackJob.from_fields(where))


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("dataset", "imagenet", "'dataset'.*imagenet"),
        ("model.name", "resnet", "'name'.*resnet"),
        ("pruning.p", 1.5, r"'p'.*\[0, 1\].*1.5"),
        ("fed.batch_size", 0, "'batch_size'.*0"),
        ("targets", 11, "'targets'.*11"),
        ("fed.clients_per_round", 11, "'fed.clients_per_round'.*11"),
        ("attack", "dlg", "'attack'.*dlg"),
        ("inversion.optimizer", "lbfgs", "'inversion.optimizer'.*lbfgs"),
        ("inversion.loss", "l1", "'loss'.*l1"),
        ("inversion.label_mode", "guess", "'label_mode'.*guess"),
        ("fed.gradient_at", "sent", "'gradient_at'.*sent"),
        ("pruning.scheme", "magnitude", "'scheme'.*magnitude"),
        ("seed", -1, "'seed'.*-1"),
        ("device", "tpu", "'device'.*tpu"),
        ("leakage_candidates", 0, "'leakage_candidates'.*0"),
        ("partition", "dirichlet", "'partition'.*dirichlet"),
        ("image_size", 0, "'image_size'.*0"),
    ],
)
def test_bad_job_field_is_a_clear_value_error(field, value, match):
    with pytest.raises(ValueError, match=match):
        AttackJob.from_fields({field: value})


def test_job_owned_fields_cannot_be_set_in_a_section():
    with pytest.raises(ValueError, match=r"'fed.seed'.*set by the job.*Got 5"):
        AttackJob(fed=FedConfig(rounds=1, seed=5))


def test_a_device_is_not_resolved_when_a_config_is_loaded():
    # check_device only: a CUDA configuration loads (and fingerprints) without a GPU.
    config = SweepConfig(name="gpu", base={"device": "cuda:7"}, grids=({"seed": [0, 1]},))
    assert [j.device for j in config.jobs()] == ["cuda:7", "cuda:7"]


@pytest.mark.parametrize(
    ("toml", "match"),
    [
        ('name = ""\n[[grid]]\nseed = 0\n', "'name'"),
        ('name = "x"\n', "at least one grid"),
        ('name = "x"\n[base.fed]\nclient_lr = 0.1\n[[grid]]\nseed = 0\n', r"\['fed.client_lr'\]"),
        ('name = "x"\n[base]\nscheme = "snip"\n[[grid]]\nseed = 0\n', r"\['scheme'\]"),
        ('name = "x"\n[[grid]]\npruning.p = []\n', "'grids.0.*pruning.p' .*non-empty"),
        ('name = "x"\n[[grid]]\npruning.p = [0.5, 2.0]\n', r"grids\[0\].*'p'.*2.0"),
        ('name = "x"\n[base.fed]\nseed = 3\n[[grid]]\nseed = 0\n', "'fed.seed'.*job sets itself"),
        ('name = "x"\nbase = 3\n[[grid]]\nseed = 0\n', "'base'.*table"),
        ('name = "x"\n[[grids]]\nseed = 0\n', r"unknown keys \['grids'\]"),
    ],
)
def test_bad_toml_is_a_value_error_naming_the_key_and_value(tmp_path, toml, match):
    path = write(tmp_path / "bad.toml", toml)
    with pytest.raises(ValueError, match=match) as caught:
        read_config(path)
    assert str(path) in str(caught.value)


def test_unreadable_toml_is_a_value_error(tmp_path):
    bad = write(tmp_path / "bad.toml", "name = [unclosed\n")
    with pytest.raises(ValueError, match="not valid TOML"):
        read_config(bad)
    with pytest.raises(ValueError, match="does not exist"):
        load_config(tmp_path / "missing.toml")


# --------------------------------------------------------------------------- one job


def test_one_job_record_holds_per_upload_scores_and_the_bounds():
    job = AttackJob.from_fields({**TINY, "fed.rounds": 2, "targets": 2, "pruning.p": 0.5})
    record = run_job(job)
    assert record["n_uploads"] == 4 and sorted(record["rounds"]) == [1, 1, 2, 2]
    assert sorted(set(record["clients"])) == [0, 1]
    for client, best in zip((0, 1), record["nmi_per_target"], strict=True):
        mine = [
            v
            for c, v in zip(record["clients"], record["nmi_per_upload"], strict=True)
            if c == client
        ]
        assert best == max(mine)  # leakage after T rounds: the best round per target
    assert 0.0 <= record["nmi"] <= 1.0 and 0.0 <= record["nmi_chance"] <= 1.0
    assert all(record["labels_correct_per_upload"])  # label_mode="known"
    assert 1 <= record["d_star"] <= TINY["stats_samples"] - 1
    assert record["stats_samples_used"] == TINY["stats_samples"]
    inputs = {"p": 0.5, "B": 1, "d_star": record["d_star"], "delta": record["delta_nats"]}
    assert record["bound_published_bits"] == pytest.approx(
        priprune.multi_round_bound(**inputs, T=2), rel=1e-12
    )
    assert record["bound_corrected_single_bits"] == pytest.approx(
        priprune.single_round_bound_corrected(**inputs, d=record["d"]), rel=1e-12
    )
    assert record["job"]["pruning.p"] == 0.5 and "device" not in record["job"]
    json.dumps(record, allow_nan=False)  # storable as is


def test_sgi_leaks_more_than_gi_in_a_job():
    """Measured on one digit at p = 0.5 after 10 L-BFGS steps: SGI 11.5 dB, GI 4.7 dB."""
    common = {**TINY, "pruning.p": 0.5}
    sgi = run_job(AttackJob.from_fields({**common, "attack": "sgi"}))
    gi = run_job(AttackJob.from_fields({**common, "attack": "gi"}))
    assert sgi["psnr"] > gi["psnr"] + 3.0, (sgi["psnr"], gi["psnr"])


# --------------------------------------------------------------------------- resuming


def test_sweep_resumes_after_an_injected_failure(tmp_path, monkeypatch):
    config = tiny_sweep()
    store = ResultStore(tmp_path / "s.jsonl")
    calls = {"n": 0}
    real = runner_module.run_job

    def failing(job, **options):
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("injected")
        return real(job, **options)

    monkeypatch.setattr(runner_module, "run_job", failing)
    with pytest.raises(RuntimeError, match="injected"):
        run_sweep(config, store, progress=False)
    assert len(list(store.records())) == 2
    monkeypatch.setattr(runner_module, "run_job", real)
    records = run_sweep(config, store, progress=False)
    keys = [r["key"] for r in store.records()]
    assert len(keys) == len(config.jobs()) == 4 and len(set(keys)) == 4
    assert [r["key"] for r in records] == [job_key(j) for j in config.jobs()]
    assert run_sweep(config, store, progress=False) == records  # nothing re-run


@pytest.mark.timeout(300)
def test_killed_sweep_restarts_with_every_job_recorded_once(tmp_path):
    """Acceptance: SIGKILL mid-sweep (``python -m sims.cli.sweep``), then a restart."""
    grid = '[[grid]]\npanel = "p"\npruning.p = [0.0, 0.2, 0.4, 0.6, 0.8, 0.9]\n'
    config_path = write(tmp_path / "kill.toml", f'name = "kill"\n{TINY_TOML}{grid}')
    results = tmp_path / "kill.jsonl"
    command = [
        sys.executable,
        "-m",
        "pruneleak.sims.cli.sweep",
        str(config_path),
        "--results",
        str(results),
        "--no-table",
    ]
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 200
    while time.monotonic() < deadline and first.poll() is None:
        if results.exists() and results.read_text().count("\n") >= 2:
            break
        time.sleep(0.02)
    assert first.poll() is None, "the sweep finished before it could be killed"
    first.send_signal(signal.SIGKILL)
    first.wait()
    before = [json.loads(line)["key"] for line in results.read_text().split("\n")[:-1]]
    assert 2 <= len(before) < 6
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, timeout=200)
    keys = [record["key"] for record in ResultStore(results).records()]
    assert len(keys) == 6 and len(set(keys)) == 6
    assert keys[: len(before)] == before


# --------------------------------------------------------------------------- output


PANELS_GRIDS = (
    {"panel": "p", "pruning.scheme": ["random", "snip"], "pruning.p": [0.0, 0.9]},
    {
        "panel": "attacks",
        "pruning.scheme": ["random"],
        "attack": ["sgi", "gi"],
        "pruning.p": [0.0, 0.9],
    },
)
PANELS_TOML = """
[[grid]]
panel = "p"
pruning.scheme = ["random", "snip"]
pruning.p = [0.0, 0.9]
[[grid]]
panel = "attacks"
pruning.scheme = ["random"]
attack = ["sgi", "gi"]
pruning.p = [0.0, 0.9]
"""


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    config = SweepConfig(name="panels", base=TINY, grids=PANELS_GRIDS)
    store = ResultStore(tmp_path_factory.mktemp("sweep") / "panels.jsonl")
    return config, run_sweep(config, store, progress=False), store


def test_each_record_names_its_sweep_and_the_panels_of_its_job(finished):
    config, records, _ = finished
    panels = {job_key(job): list(names) for job, names in config.job_panels().items()}
    assert {r["key"]: r["panels"] for r in records} == panels
    assert {r["sweep"] for r in records} == {"panels"}


def test_panel_rows_and_figures_show_the_records(finished):
    config, records, _ = finished
    rows = panel_rows(config, records, "p")
    assert {(r["scheme"], r["x"]) for r in rows} == {
        (s, p) for s in ("random", "snip") for p in (0.0, 0.9)
    }
    assert all(r["n"] == 1 and r["bound_published_bits"] is not None for r in rows)
    (legend,) = plot_panels(config, records, ["p"]).legends
    assert sorted(t.get_text() for t in legend.get_texts()) == [
        "NMI, pixels shuffled (floor)",
        "random",
        "snip",
    ]
    fig = plot_attack_comparison(config, records, "attacks")
    (ax,) = fig.axes
    by_attack = {line.get_label(): line.get_ydata() for line in ax.get_lines()}
    for attack in ("sgi", "gi"):
        expected = [
            np.mean(r["nmi_per_target"])
            for r in sorted(records, key=lambda r: r["job"]["pruning.p"])
            if r["job"]["attack"] == attack and r["job"]["pruning.scheme"] == "random"
        ]
        np.testing.assert_allclose(by_attack[attack.upper()], expected, rtol=1e-12)


def test_cli_takes_a_toml_writes_under_out_and_reports(finished, tmp_path, monkeypatch, capsys):
    _, _, store = finished
    path = write(tmp_path / "panels.toml", f'name = "panels"\n{TINY_TOML}{PANELS_TOML}')
    out = tmp_path / "out"
    store_copy = out / "panels.jsonl"
    out.mkdir()
    store_copy.write_text(store.path.read_text())  # finished jobs: nothing to run
    monkeypatch.chdir(tmp_path)
    assert sweep_main([str(path), "--out", str(out), "--figures"]) == 0
    printed = capsys.readouterr().out
    assert "6 of 6 jobs recorded" in printed and "rho(x,leak)" in printed
    assert {p.name for p in out.iterdir()} == {
        "panels.jsonl",
        "panels_consistency.png",
        "panels_consistency.pdf",
        "panels_panels_nmi.png",
        "panels_panels_nmi.pdf",
        # Fano bits in every record; no exact bits (|D_i| = 719 > leakage_candidates).
        "panels_consistency_fano_bits.png",
        "panels_consistency_fano_bits.pdf",
        "panels_panels_fano_bits.png",
        "panels_panels_fano_bits.pdf",
        # the p panel: Fig. 2's claim with intervals over the seeds
        "panels_fig2_intervals.png",
        "panels_fig2_intervals.pdf",
    }
    assert "fano_bits" in printed and "Fig. 2's claim" in printed


def test_cli_default_out_is_under_the_current_directory(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert sweep_main(["quick_digits", "--max-jobs", "0", "--no-table"]) == 0
    printed = capsys.readouterr().out
    assert "0 of 78 jobs recorded in pruneleak-out/sweep/quick_digits.jsonl" in printed
    assert [p.name for p in tmp_path.iterdir()] == ["pruneleak-out"]
    assert (tmp_path / "pruneleak-out" / "sweep").is_dir()


# --------------------------------------------------------------------------- one record per key


@pytest.mark.parametrize(
    ("values", "shown"), [([0.5, 0.5], "0.5"), ([0.1, 0.3, 0.1], "0.1"), ([0.0, 0], "0")]
)
def test_a_value_listed_twice_on_a_grid_axis_is_refused(values, shown):
    with pytest.raises(ValueError, match=rf"'grids\[0\].pruning.p' .* lists the value {shown} "):
        SweepConfig(name="s", grids=({"pruning.p": values},))


def test_a_toml_grid_with_a_repeated_value_names_the_file_and_the_axis(tmp_path):
    path = write(tmp_path / "dup.toml", 'name = "dup"\n[[grid]]\nfed.rounds = [1, 2, 2]\n')
    with pytest.raises(ValueError, match=r"dup.toml: .*'grids\[0\].fed.rounds' .* value 2 twice"):
        read_config(path)


@pytest.mark.parametrize(
    ("grids", "match"),
    [
        (5, "The 'grids' parameter of SweepConfig must be a sequence of at least one"),
        ({"pruning.p": [0.5]}, "The 'grids' parameter of SweepConfig must be a sequence"),
        (({"panel": ["p"], "pruning.p": 0.5},), r"'grids\[0\].panel' .* Got \['p'\] instead"),
        (({"panel": "", "pruning.p": 0.5},), r"'grids\[0\].panel' .* Got '' instead"),
    ],
)
def test_grids_of_the_wrong_shape_are_refused(grids, match):
    with pytest.raises(ValueError, match=match):
        SweepConfig(name="s", grids=grids)


def _fake_jobs(monkeypatch, during=None):
    """Replace run_job by a trivial one that records which jobs ran and calls
    ``during(job)`` while it "runs"."""
    ran = []

    def fake(job, **options):
        ran.append(job_key(job))
        if during is not None:
            during(job)
        return {"seconds": 0.0}

    monkeypatch.setattr(runner_module, "run_job", fake)
    return ran


def test_a_sweep_skips_a_job_another_writer_recorded_meanwhile(tmp_path, monkeypatch):
    config = tiny_sweep()
    keys = [job_key(j) for j in config.jobs()]
    other = ResultStore(tmp_path / "s.jsonl")  # a second sweep on the same file

    def other_records_the_third_job(job):
        if job_key(job) == keys[0]:
            other.append({"key": keys[2], "by": "other"})

    ran = _fake_jobs(monkeypatch, other_records_the_third_job)
    records = run_sweep(config, ResultStore(tmp_path / "s.jsonl"), progress=False)
    assert ran == [keys[0], keys[1], keys[3]]
    assert [r["key"] for r in records] == keys
    assert records[2]["by"] == "other"


def test_a_job_two_sweeps_ran_at_once_is_recorded_once(tmp_path, monkeypatch):
    config = tiny_sweep()
    keys = [job_key(j) for j in config.jobs()]
    other = ResultStore(tmp_path / "s.jsonl")

    def other_finishes_first(job):
        if job_key(job) == keys[1]:
            other.append({"key": keys[1], "by": "other"})

    ran = _fake_jobs(monkeypatch, other_finishes_first)
    records = run_sweep(config, ResultStore(tmp_path / "s.jsonl"), progress=False)
    assert ran == keys
    written = [r["key"] for r in ResultStore(tmp_path / "s.jsonl").records()]
    assert sorted(written) == sorted(keys) and len(written) == len(keys)
    assert records[1]["by"] == "other"


@pytest.mark.parametrize("func", [run_sweep, runner_module.sweep_records])
def test_a_sweep_needs_a_result_store(tmp_path, func):
    with pytest.raises(ValueError, match=r"The 'store' parameter of .* must be a ResultStore"):
        func(tiny_sweep(), str(tmp_path / "s.jsonl"))


def test_stats_samples_beyond_the_target_client_are_recorded_as_used():
    # The digits training split (1437 images) over 2 clients gives target 0 about 719
    # samples: asking for 1000 uses all of them, and the record says how many.
    job = AttackJob.from_fields({**TINY, "stats_samples": 1000})
    record = run_job(job)
    assert 700 <= record["stats_samples_used"] <= 737
    assert 1 <= record["d_star"] <= record["stats_samples_used"] - 1
