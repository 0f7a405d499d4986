"""The GPU campaign (benchmarks/gpu_campaign.py): its CPU dry run, the timing model's
sizing against hand-worked sums, the deadline and a failing job.

The dry run runs the campaign's code paths (the two panels' sweeps, SGI and GI, worker
processes, the store, the figures) at a reduced size on the CPU and prints the timing
model's estimate for the full campaign on a GPU, which issue 34 bounds by 8 minutes.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pruneleak.sims.store.results import ResultStore
from pruneleak.sims.sweep.grid import SweepConfig
from pruneleak.sims.sweep.job import job_key

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location(
    "gpu_campaign", ROOT / "benchmarks" / "gpu_campaign.py"
)
campaign = importlib.util.module_from_spec(_spec)
sys.modules["gpu_campaign"] = campaign
_spec.loader.exec_module(campaign)


def test_the_dry_run_records_every_job_and_estimates_at_most_eight_gpu_minutes(tmp_path):
    done = subprocess.run(
        [sys.executable, ROOT / "benchmarks" / "gpu_campaign.py", "--dry-run", "--out", tmp_path],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    headline = re.search(r"headline: estimated_gpu_minutes = ([\d.]+) min", done.stdout)
    assert headline and float(headline[1]) <= 8.0
    sweeps = campaign.dry_run_sweeps()
    # 2 schemes x 1 rate x (SGI, GI) on faces + 2 schemes x SGI on patches
    expected = {job_key(j) for s in sweeps.values() for j in s.jobs()}
    assert len(expected) == 6
    records = list(ResultStore(tmp_path / "campaign.jsonl").records())
    assert {r["key"] for r in records} == expected
    for record in records:
        assert len(record["exact_bits_per_target"]) == campaign.DRY_RUN["targets"]
        assert record["job"]["inversion.iterations"] == campaign.DRY_RUN_ITERATIONS
    summary = json.loads((tmp_path / "campaign.json").read_text())
    assert sorted(summary["jobs_ran"]) == sorted(expected)
    assert summary["jobs_failed"] == {} and summary["jobs_left"] == []
    assert sorted(summary["figures"]) == sorted(
        f"gpu_campaign_{panel}_{attack}.png"
        for panel, attack in (
            ("faces_conv2", "sgi"),
            ("faces_conv2", "gi"),
            ("patches_vgg11", "sgi"),
        )
    )
    assert all((tmp_path / name).stat().st_size > 0 for name in summary["figures"])
    # resumed: every job is in the store, so nothing runs again
    again = campaign.run_campaign(
        list(sweeps.values()), ResultStore(tmp_path / "campaign.jsonl"), workers=1, deadline=0
    )
    assert again == {"ran": [], "failed": {}, "left": []}


def test_the_campaign_lists_the_papers_p_panels():
    """Conv-2 on faces under SGI and GI, VGG-11 on the patches under SGI: six schemes x
    five rates each, B = 1, at the paper's attack settings apart from the iterations."""
    sweeps = campaign.campaign_sweeps(2_000, "cuda")
    faces, patches = sweeps["faces_conv2"].jobs(), sweeps["patches_vgg11"].jobs()
    assert len(faces) == 6 * 5 * 2 and len(patches) == 6 * 5
    assert {j.model.name for j in faces} == {"conv2"} and {j.model.name for j in patches} == {
        "vgg11"
    }
    assert {(j.attack, j.pruning.scheme, j.pruning.p) for j in faces} == {
        (a, s, p)
        for a in ("sgi", "gi")
        for s in ("random", "snip", "synflow", "grasp", "feddst", "prunefl")
        for p in (0.1, 0.3, 0.5, 0.7, 0.9)
    }
    for job in (*faces, *patches):
        assert job.fed.batch_size == 1 and job.inversion.iterations == 2_000
        assert job.inversion.optimizer == "adam" and job.inversion.lr == 0.01


def test_sizing_takes_the_largest_iterations_that_fit_by_hand_worked_sums():
    """90 jobs at 1 ms per iteration and no fixed part, 8 workers at efficiency 0.5: the
    campaign takes 90 * n * 1e-3 / 4 = 0.0225 n seconds. 8 minutes (480 s) hold n <=
    21,333: 10,000; 1 minute (60 s) holds n <= 2,666: 2,000; 1 s holds none: the
    smallest rung, 100."""
    timing = {key: campaign.JobTiming(fixed_s=0.0, per_iteration_s=1e-3) for key in campaign.TIMING}
    size = {"workers": 8, "efficiency": 0.5}
    assert campaign.sized_iterations(timing, 8.0, **size) == 10_000
    assert campaign.sized_iterations(timing, 1.0, **size) == 2_000
    assert campaign.sized_iterations(timing, 1 / 60, **size) == 100
    sweeps = campaign.campaign_sweeps(2_000, "cuda")
    assert campaign.estimate_seconds(sweeps, timing, **size) == pytest.approx(0.0225 * 2_000)


def test_the_fixed_part_counts_once_per_job():
    """Faces SGI 10 s fixed + 1 ms per iteration, the rest free: 30 jobs at 1,000
    iterations take 30 * (10 + 1) = 330 s one after the other."""
    timing = {key: campaign.JobTiming(0.0, 0.0) for key in campaign.TIMING}
    timing[("faces_conv2", "sgi")] = campaign.JobTiming(fixed_s=10.0, per_iteration_s=1e-3)
    sweeps = campaign.campaign_sweeps(1_000, "cuda")
    assert campaign.serial_seconds(sweeps, timing) == pytest.approx(330.0)


def test_no_job_starts_after_the_deadline(tmp_path):
    sweeps = campaign.dry_run_sweeps()
    store = ResultStore(tmp_path / "campaign.jsonl")
    outcome = campaign.run_campaign(list(sweeps.values()), store, workers=1, deadline=0)
    assert outcome["ran"] == [] and len(outcome["left"]) == 6
    assert list(store.records()) == []


def test_a_failing_job_is_reported_and_the_others_still_run(tmp_path):
    """A job whose data folder holds no files fails in its worker; the job beside it is
    recorded."""
    good = campaign.dry_run_sweeps()["faces_conv2"]
    bad = SweepConfig(
        name="broken",
        base={**good.base, "dataset": "mnist", "data_dir": str(tmp_path / "nothing")},
        grids=({"pruning.scheme": "random", "pruning.p": 0.5},),
    )
    one_good = SweepConfig(
        name=good.name, base=good.base, grids=({"pruning.scheme": "random", "pruning.p": 0.5},)
    )
    store = ResultStore(tmp_path / "campaign.jsonl")
    outcome = campaign.run_campaign([bad, one_good], store, workers=1, deadline=float("inf"))
    (failed_key,) = outcome["failed"]
    assert failed_key == job_key(bad.jobs()[0])
    assert outcome["ran"] == [job_key(one_good.jobs()[0])]
    assert [r["key"] for r in store.records()] == outcome["ran"]
