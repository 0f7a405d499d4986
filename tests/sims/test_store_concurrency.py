"""Acceptance (issue 13): two processes writing one results store at the same time end
with each key exactly once and nothing lost, through the store's API and through two
sweeps (sims.sweep.run_sweep with a trivial job function, so that the test measures the
store, not the attacks)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from pruneleak.sims.store.results import ResultStore

# Both writers wait for this file, so that they start together.
_WAIT_FOR_GO = """
import os, sys, time
go = sys.argv[2]
while not os.path.exists(go):
    time.sleep(0.005)
"""

APPEND = (
    _WAIT_FOR_GO
    + """
from pruneleak.sims.store.results import ResultStore
store = ResultStore(sys.argv[1])
name = sys.argv[3]
shared = [f"shared-{i}" for i in range(100)]
mine = [f"{name}-{i}" for i in range(20)]
keys = shared[:50] + mine + shared[50:]  # both write the shared keys in the same order
written = sum(store.append({"key": k, "writer": name}) for k in keys)
print(written)
"""
)

SWEEP = (
    _WAIT_FOR_GO
    + """
from pruneleak.sims.store.results import ResultStore
from pruneleak.sims.sweep import SweepConfig, runner

def trivial_job(job, **options):
    time.sleep(0.01)
    return {"seconds": 0.01, "pid": os.getpid()}

runner.run_job = trivial_job
config = SweepConfig(name="both", grids=({"pruning.p": [i / 40 for i in range(24)]},))
runner.run_sweep(config, ResultStore(sys.argv[1]), progress=False)
"""
)


def _run_together(script: str, path, go, names) -> list[str]:
    """Start one process per name running ``script``, let them go at once, return their
    stdout (each must exit 0)."""
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(path), str(go), name],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in names
    ]
    time.sleep(0.5)  # let both reach the wait loop before releasing them
    go.write_text("")
    outputs = []
    for process in processes:
        out, err = process.communicate(timeout=240)
        assert process.returncode == 0, err
        outputs.append(out)
    return outputs


def _keys(path) -> list[str]:
    return [json.loads(line)["key"] for line in path.read_text().splitlines()]


@pytest.mark.timeout(300)
def test_two_processes_appending_overlapping_keys_record_each_key_once(tmp_path):
    path = tmp_path / "both.jsonl"
    outputs = _run_together(APPEND, path, tmp_path / "go", ["a", "b"])
    keys = _keys(path)
    expected = {f"shared-{i}" for i in range(100)} | {f"{w}-{i}" for w in "ab" for i in range(20)}
    assert len(keys) == len(set(keys)) == len(expected)
    assert set(keys) == expected
    assert sum(int(out) for out in outputs) == len(expected)  # each write reported once
    assert ResultStore(path).done() == expected


@pytest.mark.timeout(300)
def test_two_concurrent_sweeps_on_one_store_record_each_job_once(tmp_path):
    from pruneleak.sims.sweep import SweepConfig, job_key

    path = tmp_path / "sweep.jsonl"
    _run_together(SWEEP, path, tmp_path / "go", ["a", "b"])
    config = SweepConfig(name="both", grids=({"pruning.p": [i / 40 for i in range(24)]},))
    expected = [job_key(job) for job in config.jobs()]
    keys = _keys(path)
    assert len(keys) == len(set(keys)) == 24
    assert sorted(keys) == sorted(expected)
