"""The demo sweep: records, resume after a kill, table and figure."""

import json
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest

import sims.cli
from sims.core.store import ResultStore
from sims.experiments.demo import DemoConfig, format_table, plot_demo, run_demo, summarize

TINY = {
    "pruning_rates": (0.0, 0.9),
    "num_images": 2,
    "attack_iterations": 15,
    "stats_samples": 16,
    "seed": 3,
}


def test_tiny_demo_records_every_job_once_and_resumes(tmp_path):
    config = DemoConfig(**TINY)
    store = ResultStore(tmp_path / "demo.jsonl")
    records = run_demo(config, store, progress=False)
    kinds = Counter(r["kind"] for r in records)
    assert kinds == {"bound": 2, "attack": 2 * 2 * 2}
    assert len({r["key"] for r in records}) == len(records)
    for record in records:
        if record["kind"] == "attack":
            assert 0.0 <= record["nmi"] <= 1.0 and 0.0 <= record["nmi_chance"] <= 1.0
        else:
            assert 1 <= record["d_star"] <= TINY["stats_samples"] - 1
    again = run_demo(config, store, progress=False)
    assert again == records  # nothing re-run, nothing appended
    summary = summarize(records)
    assert [row["p"] for row in summary["bound"]] == [0.0, 0.9]
    assert {(row["attack"], row["p"]) for row in summary["attack"]} == {
        (a, p) for a in ("sgi", "gi") for p in (0.0, 0.9)
    }
    assert "published bits" in format_table(summary)
    assert plot_demo(summary).axes


def test_a_changed_configuration_does_not_reuse_old_records(tmp_path):
    store = ResultStore(tmp_path / "demo.jsonl")
    run_demo(DemoConfig(**{**TINY, "pruning_rates": (0.5,)}), store, progress=False)
    other = run_demo(
        DemoConfig(**{**TINY, "pruning_rates": (0.5,), "seed": 4}), store, progress=False
    )
    assert len(other) == 1 + 2 * 2
    assert len(list(store.records())) == 2 * (1 + 2 * 2)


@pytest.mark.timeout(600)
def test_killed_demo_restarts_without_duplicates_or_losses(tmp_path):
    results = tmp_path / "demo.jsonl"
    command = [
        sys.executable,
        "-m",
        "sims.cli",
        "demo",
        "--out",
        str(tmp_path),
        "--rates",
        "0",
        "0.5",
        "0.9",
        "--images",
        "2",
        "--iterations",
        "15",
        "--no-figure",
    ]
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and first.poll() is None:
        if results.exists() and results.read_text().count("\n") >= 3:
            break
        time.sleep(0.05)
    assert first.poll() is None, "the demo finished before it could be killed"
    first.send_signal(signal.SIGKILL)
    first.wait()
    before = [json.loads(line)["key"] for line in results.read_text().split("\n")[:-1]]
    assert 3 <= len(before) < 3 * (1 + 2 * 2)
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, timeout=500)
    keys = [record["key"] for record in ResultStore(results).records()]
    assert len(keys) == 3 * (1 + 2 * 2)
    assert len(set(keys)) == len(keys)
    assert keys[: len(before)] == before  # finished records kept, in place


def files_under(folder) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize(
    ("options", "out"),
    [([], "pruneleak-out/demo"), (["--out", "elsewhere/run1"], "elsewhere/run1")],
)
def test_demo_command_writes_its_results_and_figure_under_out_only(
    tmp_path, monkeypatch, capsys, options, out
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sims.cli, "SUBCOMMANDS", ("demo",))  # the others are not needed
    argv = ["demo", "--rates", "0", "--images", "1", "--iterations", "1", "--stats-samples", "8"]
    assert sims.cli.main([*argv, *options]) == 0
    names = ("demo.jsonl", "demo_bound_vs_nmi.png", "demo_bound_vs_nmi.pdf")
    assert files_under(tmp_path) == {f"{out}/{name}" for name in names}
    assert f"Results: {out}/demo.jsonl" in capsys.readouterr().out
    kinds = Counter(r["kind"] for r in ResultStore(tmp_path / out / "demo.jsonl").records())
    assert kinds == {"bound": 1, "attack": 2}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("pruning_rates", (1.5,)),
        ("pruning_rates", (-0.1,)),
        ("pruning_rates", ()),
        ("batch_size", 0),
        ("attacks", ("dlg",)),
        ("client_lr", 0.0),
        ("num_images", 0),
        ("pruning", "snip"),
        ("device", "tpu"),
    ],
)
def test_bad_configuration_is_a_clear_value_error(field, value):
    with pytest.raises(ValueError, match=field):
        DemoConfig(**{field: value})
