"""sims.sweep: grid expansion, one job's record, resumable sweeps (injected failure and a
real SIGKILL), panels and the ``pruneleak sweep`` command."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

import pytest

from bounds import priprune
from sims.cli.sweep import main as sweep_main
from sims.core.store import ResultStore
from sims.sweep import jobs as sweep_module
from sims.sweep.jobs import (
    SWEEP_DIR,
    AttackJob,
    SweepConfig,
    job_key,
    panel_axis,
    panel_rows,
    plot_attack_comparison,
    plot_panels,
    run_job,
    run_sweep,
)

# A job that runs in well under a second: 2 clients, 1 target, 10 L-BFGS iterations.
TINY = {
    "num_clients": 2,
    "clients_per_round": 2,
    "targets": 1,
    "attack_iterations": 10,
    "stats_samples": 8,
    "synflow_iterations": 2,
}


def tiny_sweep(name="tiny", **grid) -> SweepConfig:
    grids = [{"panel": "p", "p": [0.0, 0.3, 0.9]}, {"panel": "T", "rounds": [1, 2]}]
    if grid:
        grids = [grid]
    return SweepConfig(name=name, base=TINY, grids=tuple(grids))


# --------------------------------------------------------------------------- configuration


def test_grids_expand_as_products_and_share_jobs_across_panels():
    config = SweepConfig(
        name="s",
        base={"p": 0.3},
        grids=(
            {"panel": "p", "scheme": ["random", "snip"], "p": [0.3, 0.6]},
            {"panel": "B", "scheme": ["random", "snip"], "batch_size": [1, 2]},
        ),
    )
    panels = config.panels()
    assert [len(panels["p"]), len(panels["B"])] == [4, 4]
    # (scheme, p=0.3, B=1) belongs to both panels and is one job
    assert len(config.jobs()) == 4 + 4 - 2
    assert len({job_key(j) for j in config.jobs()}) == 6
    assert panel_axis(panels["p"]) == "p" and panel_axis(panels["B"]) == "batch_size"


def test_fingerprint_ignores_device_and_chunking_but_not_numbers():
    job = AttackJob()
    assert job_key(job) == job_key(AttackJob(device="cpu", attack_chunk=3))
    assert job_key(job) != job_key(AttackJob(p=0.31))
    assert job_key(job) != job_key(AttackJob(seed=1))


def test_shipped_sweep_files_parse():
    files = sorted(SWEEP_DIR.glob("*.toml"))
    assert {f.name for f in files} >= {"quick_digits.toml", "paper_femnist.toml"}
    for path in files:
        config = SweepConfig.from_toml(path)
        assert config.jobs()
    quick = SweepConfig.from_toml(SWEEP_DIR / "quick_digits.toml")
    assert set(quick.panels()) == {"p", "B", "d", "T", "attacks"}
    for panel in ("p", "B", "d", "T"):
        assert {j.scheme for j in quick.panels()[panel]} == {
            "random",
            "snip",
            "synflow",
            "grasp",
            "feddst",
            "prunefl",
        }


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("dataset", "imagenet"),
        ("model", "resnet"),
        ("p", 1.5),
        ("batch_size", 0),
        ("targets", 11),
        ("clients_per_round", 11),
        ("attack", "dlg"),
        ("optimizer", "lbfgs"),
        ("loss", "l1"),
        ("label_mode", "guess"),
        ("gradient_at", "sent"),
        ("scheme", "magnitude"),
        ("seed", -1),
        ("device", "tpu"),
    ],
)
def test_bad_job_field_is_a_clear_value_error(field, value):
    with pytest.raises(ValueError, match=field):
        AttackJob(**{field: value})


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({"name": "", "grid": [{"p": 0.1}]}, "name"),
        ({"name": "x", "grid": []}, "at least one grid"),
        ({"name": "x", "base": {"pp": 1}, "grid": [{"p": 0.1}]}, "unknown job fields"),
        ({"name": "x", "grid": [{"p": []}]}, "non-empty"),
        ({"name": "x", "grid": [{"p": [2.0]}]}, "'p'"),
        ({"name": "x", "grids": [{"p": 0.1}]}, "unknown keys"),
    ],
)
def test_bad_sweep_configuration_is_a_clear_value_error(data, match):
    with pytest.raises(ValueError, match=match):
        SweepConfig.from_dict(data)


def test_unreadable_toml_is_a_value_error(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("name = [unclosed\n")
    with pytest.raises(ValueError, match="not valid TOML"):
        SweepConfig.from_toml(bad)
    with pytest.raises(ValueError, match="does not exist"):
        SweepConfig.from_toml(tmp_path / "missing.toml")


# --------------------------------------------------------------------------- one job


def test_one_job_record_holds_per_upload_scores_and_the_bounds():
    job = AttackJob(**{**TINY, "rounds": 2, "targets": 2, "p": 0.5})
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
    inputs = {"p": 0.5, "B": 1, "d_star": record["d_star"], "delta": record["delta_nats"]}
    assert record["bound_published_bits"] == pytest.approx(
        priprune.multi_round_bound(**inputs, T=2), rel=1e-12
    )
    assert record["bound_corrected_single_bits"] == pytest.approx(
        priprune.single_round_bound_corrected(**inputs, d=record["d"]), rel=1e-12
    )
    json.dumps(record, allow_nan=False)  # storable as is


def test_sgi_leaks_more_than_gi_in_a_job():
    """Measured on one digit at p = 0.5 after 10 L-BFGS steps: SGI 11.5 dB, GI 4.7 dB."""
    common = {**TINY, "p": 0.5}
    sgi = run_job(AttackJob(**common, attack="sgi"))
    gi = run_job(AttackJob(**common, attack="gi"))
    assert sgi["psnr"] > gi["psnr"] + 3.0, (sgi["psnr"], gi["psnr"])


# --------------------------------------------------------------------------- resuming


def test_sweep_resumes_after_an_injected_failure(tmp_path, monkeypatch):
    config = tiny_sweep()
    store = ResultStore(tmp_path / "s.jsonl")
    calls = {"n": 0}
    real = sweep_module.run_job

    def failing(job):
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("injected")
        return real(job)

    monkeypatch.setattr(sweep_module, "run_job", failing)
    with pytest.raises(RuntimeError, match="injected"):
        run_sweep(config, store, progress=False)
    assert len(list(store.records())) == 2
    monkeypatch.setattr(sweep_module, "run_job", real)
    records = run_sweep(config, store, progress=False)
    keys = [r["key"] for r in store.records()]
    assert len(keys) == len(config.jobs()) == 4 and len(set(keys)) == 4
    assert [r["key"] for r in records] == [job_key(j) for j in config.jobs()]
    assert run_sweep(config, store, progress=False) == records  # nothing re-run


@pytest.mark.timeout(300)
def test_killed_sweep_restarts_with_every_job_recorded_once(tmp_path):
    """Acceptance: SIGKILL mid-sweep (``python -m sims.cli.sweep``), then a restart."""
    config_path = tmp_path / "kill.toml"
    base = "\n".join(f"{k} = {json.dumps(v)}" for k, v in TINY.items())
    config_path.write_text(
        f'name = "kill"\n[base]\n{base}\n[[grid]]\npanel = "p"\n'
        f"p = [0.0, 0.2, 0.4, 0.6, 0.8, 0.9]\n"
    )
    results = tmp_path / "kill.jsonl"
    command = [
        sys.executable,
        "-m",
        "sims.cli.sweep",
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


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    config = SweepConfig(
        name="panels",
        base=TINY,
        grids=(
            {"panel": "p", "scheme": ["random", "snip"], "p": [0.0, 0.9]},
            {"panel": "attacks", "scheme": ["random"], "attack": ["sgi", "gi"], "p": [0.0, 0.9]},
        ),
    )
    store = ResultStore(tmp_path_factory.mktemp("sweep") / "panels.jsonl")
    return config, run_sweep(config, store, progress=False), store


def test_panel_rows_and_figures(finished):
    config, records, _ = finished
    rows = panel_rows(config, records, "p")
    assert {(r["scheme"], r["x"]) for r in rows} == {
        (s, p) for s in ("random", "snip") for p in (0.0, 0.9)
    }
    assert all(r["n"] == 1 and r["bound_published_bits"] is not None for r in rows)
    assert len(plot_panels(config, records, ["p"]).axes) == 1
    assert plot_attack_comparison(config, records, "attacks").axes


def test_cli_reports_and_writes_figures(finished, tmp_path, monkeypatch, capsys):
    config, _, store = finished
    path = tmp_path / "panels.toml"
    lines = ['name = "panels"', "[base]"]
    lines += [f"{k} = {json.dumps(v)}" for k, v in TINY.items()]
    for grid in config.grids:
        lines.append("[[grid]]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in grid.items()]
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setenv("PRUNELEAK_FIG_DIR", str(tmp_path / "figs"))
    assert sweep_main([str(path), "--results", str(store.path), "--figures"]) == 0
    out = capsys.readouterr().out
    assert "6 of 6 jobs recorded" in out and "rho(x,leak)" in out
    assert (tmp_path / "figs" / "panels_consistency.png").exists()
    assert Path(tmp_path / "figs" / "panels_panels_nmi.pdf").exists()
    assert asdict(config.jobs()[0])  # the jobs are plain dataclasses
