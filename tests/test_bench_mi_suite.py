"""The MI suite benchmark's runner (benchmarks/bench_mi_suite.py) on fake estimators.

CI-safe: no estimator is trained. Fake estimators return known values per input width, so
the table, the solved / covered logic, failures, timeouts, resume, the files, the
reference-timing path (a few steps) and the command line are checked exactly.
"""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from pruneleak.estimators import registry
from pruneleak.estimators.estimate import MIEstimate
from pruneleak.estimators.mi import correlated_gaussian_pair
from pruneleak.estimators.tasks.suite import get_task

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location(
    "bench_mi_suite", ROOT / "benchmarks" / "bench_mi_suite.py"
)
bench = importlib.util.module_from_spec(_spec)
sys.modules["bench_mi_suite"] = bench
_spec.loader.exec_module(bench)

TASKS = ("normal-1v1", "normal-dense-5x5", "batch-B2-dx5-dg5-s0.5")  # flat x widths 1, 5, 10
TRUTH = {name: get_task(name).mutual_information for name in TASKS}
WIDTH = {"normal-1v1": 1, "normal-dense-5x5": 5, "batch-B2-dx5-dg5-s0.5": 10}


class FakeEstimator:
    """Returns ``table[width](truth)`` = (value, low, high, n_warnings) for the flat width of x."""

    def __init__(self, name, table, *, raise_on=(), sleep_on=()):
        self.name, self.table, self.raise_on, self.sleep_on = name, table, raise_on, sleep_on

    def estimate(self, x, y, *, seed=0):
        width = int(np.prod(x.shape[1:]))
        if width in self.raise_on:
            raise RuntimeError(f"fake failure at width {width}")
        if width in self.sleep_on:
            time.sleep(60)
        truth = TRUTH[next(name for name, w in WIDTH.items() if w == width)]
        value, low, high, n_warnings = self.table[width](truth)
        return MIEstimate(
            value,
            low,
            high,
            0.95,
            self.name,
            len(x),
            diagnostics={"x_ndim": x.ndim, "seed": seed},
            warnings=("fake warning",) * n_warnings,
        )


GOOD = {  # solved and covered / off by 1.6 and not covered / exactly at the lower edge
    1: lambda t: (1.2 * t, t - 0.1, t + 0.1, 0),
    5: lambda t: (1.6 * t, 1.5 * t, 1.7 * t, 2),
    10: lambda t: (t / 1.5, t / 1.5 - 0.01, t, 1),
}
NEGATIVE = {  # never solved; covered at width 1 only
    1: lambda t: (-0.05, -0.2, t + 0.01, 1),
    5: lambda t: (-0.05, -0.1, 0.0, 1),
    10: lambda t: (1.5 * t * 1.001, 1.5 * t, 2 * t, 0),  # just above the upper edge
}


def _factories(**extra):
    factories = {
        "good": lambda: FakeEstimator("good", GOOD),
        "negative": lambda: FakeEstimator("negative", NEGATIVE),
        "broken": lambda: FakeEstimator("broken", GOOD, raise_on=(5,)),
        "hmine": lambda: FakeEstimator("hmine", GOOD),
    }
    factories.update(extra)
    return factories


def _run(tmp_path, factories, lines, **kwargs):
    options = {"out": tmp_path / "out", "n_samples": 50, "seed": 3, "timeout": 30.0}
    options.update(kwargs)
    return bench.run_benchmark(TASKS, factories, log=lines.append, **options)


def _row(result, task, estimator):
    (row,) = [
        r
        for r in result["rows"]
        if r["kind"] == "estimate" and r["task"] == task and r["estimator"] == estimator
    ]
    return row


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("bench")
    lines = []
    return tmp_path, _run(tmp_path, _factories(), lines), lines


def test_solved_and_covered_logic():
    assert bench.solved(1.5, 1.0) and bench.solved(1 / 1.5, 1.0) and bench.solved(1.0, 1.0)
    assert not bench.solved(1.5001, 1.0) and not bench.solved(0.6666, 1.0)
    assert not bench.solved(-0.1, 1.0) and not bench.solved(None, 1.0)
    assert not bench.solved(math.nan, 1.0)
    assert bench.covered(0.9, 1.1, 1.0) and bench.covered(1.0, 1.0, 1.0)
    assert not bench.covered(1.01, 1.1, 1.0) and not bench.covered(None, None, 1.0)


def test_records_hold_the_fake_outputs_with_solved_and_covered(first_run):
    _, result, _ = first_run
    good = _row(result, "normal-1v1", "good")
    assert good["status"] == "ok" and good["solved"] and good["covered"]
    assert good["value"] == pytest.approx(1.2 * TRUTH["normal-1v1"])
    assert good["n_warnings"] == 0 and good["seconds"] >= 0
    assert good["diagnostics"] == {"x_ndim": 2, "seed": 3}  # the run's seed reaches estimate
    off = _row(result, "normal-dense-5x5", "good")
    assert not off["solved"] and not off["covered"] and off["n_warnings"] == 2
    edge = _row(result, "batch-B2-dx5-dg5-s0.5", "good")
    assert edge["solved"] and edge["covered"]  # value = truth / 1.5: inside the band
    assert not _row(result, "batch-B2-dx5-dg5-s0.5", "negative")["solved"]  # 1.5015 x truth
    negative = _row(result, "normal-1v1", "negative")
    assert not negative["solved"] and negative["covered"]
    failed = _row(result, "normal-dense-5x5", "broken")
    assert failed["status"] == "error" and "fake failure at width 5" in failed["error"]
    assert not failed["solved"] and not failed["covered"]


def test_hmine_receives_batches(first_run):
    _, result, _ = first_run
    # a non-batch task's x (n, d) reaches H-MINE as (n, 1, d); a batch task's stays (n, B, d)
    assert _row(result, "normal-1v1", "hmine")["diagnostics"]["x_ndim"] == 3
    assert _row(result, "batch-B2-dx5-dg5-s0.5", "hmine")["diagnostics"]["x_ndim"] == 3
    assert _row(result, "batch-B2-dx5-dg5-s0.5", "good")["diagnostics"]["x_ndim"] == 3


def test_summary_counts_and_headlines(first_run):
    _, result, lines = first_run
    summary = result["summary"]
    assert summary["good"] | {"median_seconds": None, "total_seconds": None} == {
        "tasks": 3,
        "solved": 2,
        "covered": 2,
        "failed": 0,
        "median_seconds": None,
        "total_seconds": None,
        "batch_solved": 1,
        "batch_tasks": 1,
    }
    assert (summary["negative"]["solved"], summary["negative"]["covered"]) == (0, 1)
    assert (summary["broken"]["solved"], summary["broken"]["failed"]) == (2, 1)
    headlines = [line for line in lines if line.startswith("headline: ")]
    assert headlines == result["headlines"]
    assert "headline: best_solved = 2/3 tasks" in headlines
    assert "headline: best_estimator = good+broken+hmine" in headlines
    assert "headline: good_coverage = 0.67" in headlines
    assert "headline: negative_solved = 0/3 tasks" in headlines
    assert "headline: hmine_batch_solved = 1/1 tasks" in headlines
    assert lines[-1].startswith("headline: ")  # the run ends with its headlines


def test_printed_table_per_task(first_run):
    _, _, lines = first_run
    text = "\n".join(lines)
    truth = TRUTH["normal-dense-5x5"]
    assert f"== normal-dense-5x5 (normal, 5x5): truth {truth:.4f} nats" in text
    (good,) = [
        line for line in lines if line.startswith("   good ") and f"{1.6 * truth:.4f}" in line
    ]
    assert good.split()[-4:] == ["no", "2", good.split()[-2], "ok"]
    assert "[" in good and f"{1.5 * truth:8.4f}" in good
    (broken,) = [line for line in lines if line.startswith("   broken") and "error" in line]
    assert "fake failure at width 5" in broken
    assert "== batch-B2-dx5-dg5-s0.5 (batch, 2*5x5)" in text


def test_files_csv_json_and_heatmap(first_run):
    tmp_path, result, _ = first_run
    out = tmp_path / "out"
    assert {path.name for path in result["files"]} == {
        "results.csv",
        "results.json",
        "ratio_heatmap.png",
    }
    rows = (out / "results.csv").read_text().strip().splitlines()
    assert len(rows) == 1 + len(TASKS) * 4 and rows[0].startswith("task,family,dims,truth")
    payload = json.loads((out / "results.json").read_text())
    assert payload["headlines"] == result["headlines"]
    assert payload["config"]["n_samples"] == 50
    assert (out / "ratio_heatmap.png").read_bytes()[:4] == b"\x89PNG"
    assert len((out / "records.jsonl").read_text().splitlines()) == len(TASKS) * 4


class ExplodingEstimator(FakeEstimator):
    """The same settings as a FakeEstimator (so the same job keys), but never to be run."""

    def estimate(self, x, y, *, seed=0):
        raise AssertionError("a finished job was run again")


def test_a_second_run_resumes_without_running_finished_jobs(first_run):
    tmp_path, result, _ = first_run
    settings = {"good": GOOD, "negative": NEGATIVE, "broken": GOOD, "hmine": GOOD}
    factories = {
        name: partial(ExplodingEstimator, name, table, raise_on=(5,) if name == "broken" else ())
        for name, table in settings.items()
    }
    lines = []
    again = _run(tmp_path, factories, lines)
    assert f"# resuming: {len(TASKS) * 4} finished jobs skipped" in lines[1]
    assert again["summary"] == result["summary"]
    assert [r["key"] for r in again["rows"]] == [r["key"] for r in result["rows"]]
    assert not any(line.startswith("# done") for line in lines)


def test_other_estimator_settings_are_other_jobs(tmp_path):
    """A store written at one setting is not reused at another: new defaults recompute."""
    _run(tmp_path, {"good": lambda: FakeEstimator("good", GOOD)}, [], figure=False)
    lines = []
    changed = {"good": lambda: FakeEstimator("good", GOOD, sleep_on=(99,))}
    result = _run(tmp_path, changed, lines, figure=False)
    assert len([line for line in lines if line.startswith("# done")]) == len(TASKS)
    settings = {row["settings"]["sleep_on"][0] for row in result["rows"]}
    assert settings == {99}


def test_an_interrupted_run_finishes_only_the_missing_jobs_with_two_workers(tmp_path):
    lines = []
    _run(tmp_path, {"good": lambda: FakeEstimator("good", GOOD)}, lines, figure=False)
    lines = []
    factories = {
        "good": lambda: FakeEstimator("good", GOOD),
        "negative": lambda: FakeEstimator("negative", NEGATIVE),
    }
    result = _run(tmp_path, factories, lines, workers=2, figure=False)
    assert f"# resuming: {len(TASKS)} finished jobs skipped" in lines[1]
    done = [line for line in lines if line.startswith("# done")]
    assert len(done) == len(TASKS) and all("|negative|" in line for line in done)
    assert result["summary"]["negative"]["covered"] == 1
    assert result["summary"]["good"]["solved"] == 2


def test_a_job_past_its_timeout_is_stopped_and_recorded(tmp_path):
    factories = {"slow": lambda: FakeEstimator("slow", GOOD, sleep_on=(1,))}
    lines = []
    start = time.perf_counter()
    result = _run(tmp_path, factories, lines, timeout=1.0, figure=False)
    assert time.perf_counter() - start < 30  # not the fake's 60 s
    slow = _row(result, "normal-1v1", "slow")
    assert slow["status"] == "timeout" and not slow["solved"]
    assert _row(result, "normal-dense-5x5", "slow")["status"] == "ok"


def test_reference_timing_and_time_ratio(tmp_path):
    lines = []
    result = _run(
        tmp_path,
        {"mine": lambda: FakeEstimator("mine", GOOD)},
        lines,
        reference_tasks=("normal-1v1", "normal-dense-5x5"),
        reference={"steps": 3, "repeats": 2, "warmup_steps": 1},
        figure=False,
    )
    references = {r["task"]: r for r in result["rows"] if r["kind"] == "reference"}
    assert set(references) == {"normal-1v1", "normal-dense-5x5"}
    for task, ref in references.items():
        assert ref["status"] == "ok" and len(ref["all_seconds"]) == 2 and ref["steps"] == 3
        mine = _row(result, task, "mine")
        assert result["ratios"]["mine"][task] == pytest.approx(mine["seconds"] / ref["seconds"])
    largest = max(result["ratios"]["mine"].values())
    assert f"headline: mine_time_ratio_vs_reference = {largest:.3g} x" in lines


def test_reference_loop_learns():
    """The yardstick is a working estimator: 300 steps reach most of a 1-nat truth."""
    x, y = correlated_gaussian_pair(2000, 1, 1.0, seed=0)
    untrained = bench.reference_dv_training(x, y, steps=0, seed=0)
    trained = bench.reference_dv_training(x, y, steps=300, seed=0)
    assert abs(untrained) < 0.1 and 0.5 < trained < 1.2  # measured 0.90 (seed 0)


FAKE_MODULE = """
from pruneleak.estimators.estimate import MIEstimate


class Fake:
    name = "fake"

    def __init__(self, *, device="cpu"):
        self.device = device

    def estimate(self, x, y, *, seed=0):
        return MIEstimate(0.4, 0.3, 0.5, 0.95, "fake", len(x), diagnostics={"device": self.device})
"""


@pytest.fixture
def fake_registry(tmp_path, monkeypatch):
    (tmp_path / "fake_mi_module.py").write_text(FAKE_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(registry.ESTIMATORS, "fake", "fake_mi_module:Fake")
    monkeypatch.setitem(registry.ESTIMATORS, "absent", "pruneleak.estimators.no_such_module:Absent")
    return tmp_path


def test_cli_skips_estimators_that_do_not_import(fake_registry, capsys):
    out = fake_registry / "cli-out"
    argv = ["--estimators", "fake", "absent", "--tasks", "normal-1v1", "--n-samples", "100"]
    code = bench.main([*argv, "--out", str(out), "--device", "cpu", "--no-figure"])
    assert code == 0
    text = capsys.readouterr().out
    assert (
        "# skipped estimator 'absent': cannot import pruneleak.estimators.no_such_module:Absent ("
        in text
    )
    assert "headline: fake_solved = 1/1 tasks" in text  # 0.4 for a truth of 0.413
    record = json.loads((out / "records.jsonl").read_text())
    assert record["diagnostics"] == {"device": "cpu"}  # --device reaches the estimator
    assert not (out / "ratio_heatmap.png").exists()


def test_cli_quick_runs_four_tasks_on_1000_samples(fake_registry, capsys):
    out = fake_registry / "quick"
    assert bench.main(["--quick", "--estimators", "fake", "--out", str(out), "--no-figure"]) == 0
    payload = json.loads((out / "results.json").read_text())
    assert payload["config"]["tasks"] == list(bench.QUICK_TASKS)
    assert payload["config"]["n_samples"] == 1000 and payload["config"]["reference_tasks"] == []


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--n-samples", "0"], "--n-samples"),
        (["--tasks", "normal-3v3"], "--tasks: unknown normal-3v3"),
        (["--estimators", "kNN"], "--estimators: unknown kNN"),
        (["--reference-tasks", "nope"], "--reference-tasks: unknown nope"),
        (["--seed", "-1"], "--seed"),
        (["--timeout", "-5"], "--timeout"),
        (["--workers", "0"], "--workers"),
    ],
)
def test_cli_refuses_bad_options_naming_them(argv, named, capsys):
    with pytest.raises(SystemExit) as info:
        bench.main(argv)
    assert info.value.code == 2
    assert named in capsys.readouterr().err


def test_tracked_output_files_are_never_overwritten(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.csv").write_text("kept\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "out/results.csv"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "tracked"], cwd=tmp_path, check=True)
    with pytest.raises(ValueError, match="tracked by git"):
        _run(tmp_path, {"good": lambda: FakeEstimator("good", GOOD)}, [], figure=False)
    assert (out / "results.csv").read_text() == "kept\n"


def test_shuffled_reference_loop_learns():
    """BMI's MINE pairing (one shuffled re-pairing per batch) is a working yardstick too."""
    x, y = correlated_gaussian_pair(2000, 1, 1.0, seed=0)
    untrained = bench.reference_dv_training(x, y, steps=0, pairing="shuffled", seed=0)
    trained = bench.reference_dv_training(x, y, steps=600, pairing="shuffled", seed=0)
    assert abs(untrained) < 0.15 and 0.5 < trained < 1.3
