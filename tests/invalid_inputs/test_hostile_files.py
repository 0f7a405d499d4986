"""Hostile files and oversized inputs whose refusal needs more than "raises with names"
(issue 30): nothing in a hostile file runs (a marker file its unpickling would create stays
absent), a finished Fed-LTP run reads no checkpoint, and calls that used to hang return
within a stated limit."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest
from invalid_cases_checkpoints import (
    CHECKPOINT,
    CONFIG,
    RUN,
    _data,
    logreg,
    record_round_1,
    server_state,
    write_checkpoint,
)

from pruneleak.sims.cli import main
from pruneleak.sims.fedltp import FedLTPConfig, affordable_rounds, epsilon_after, run_fedltp
from pruneleak.sims.store.reconstructions import load_reconstructions, reconstruction_path
from pruneleak.sims.store.results import ResultStore


class CreatesMarker:
    """Pickles as ``open(marker, "w")``: unpickling it creates the marker file."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def test_hostile_checkpoint_is_refused_without_running(tmp_path):
    marker = tmp_path / "ran"
    store = ResultStore(tmp_path / "f.jsonl")
    record_round_1(store, RUN)
    write_checkpoint(tmp_path / "f.jsonl.ckpt" / RUN, server_state(best=CreatesMarker(marker)))
    with pytest.raises(ValueError, match=re.escape(CHECKPOINT)):
        run_fedltp(CONFIG, _data(), logreg, store=store, device="cpu", variant="dp-fed")
    assert not marker.exists()


def test_hostile_reconstruction_npz_is_refused_without_running(tmp_path):
    marker = tmp_path / "ran"
    path = reconstruction_path(tmp_path, "job")
    np.savez(path, originals=np.array([CreatesMarker(marker)], object), reconstructions=[0.5])
    with pytest.raises(ValueError, match=r"job\.npz"):
        load_reconstructions(tmp_path, "job")
    assert not marker.exists()


def test_a_finished_run_reads_no_checkpoint(tmp_path):
    config = FedLTPConfig(**{**CONFIG.as_dict(), "rounds": 1})
    store = ResultStore(tmp_path / "f.jsonl")
    first = run_fedltp(config, _data(), logreg, store=store, device="cpu", variant="dp-fed")
    checkpoints = list((tmp_path / "f.jsonl.ckpt").rglob("*.pt"))
    assert [p.name for p in checkpoints] == ["round=1.pt"]
    checkpoints[0].write_bytes(b"damaged after the run finished")
    again = run_fedltp(config, _data(), logreg, store=store, device="cpu", variant="dp-fed")
    assert again.records == first.records and again.rounds_run == 1
    with pytest.raises(ValueError, match=r"round=1\.pt"):  # read only when asked for
        again.final_params  # noqa: B018


@pytest.mark.timeout(20)  # one accounting call per round took about 25 ms: 4 minutes
def test_affordable_rounds_of_the_largest_run_is_fast():
    config = FedLTPConfig(rounds=10_000, epsilon=1e300)
    assert affordable_rounds(config, sampling_rate=0.1) == 10_000
    budget = epsilon_after(config, 5_000, sampling_rate=0.1)
    tight = FedLTPConfig(rounds=10_000, epsilon=budget)
    assert affordable_rounds(tight, sampling_rate=0.1) == 5_000


@pytest.mark.timeout(20)  # opening a FIFO waits for a writer forever
@pytest.mark.parametrize("action", ["check", "repair"])
def test_results_on_a_fifo_is_refused_at_once(tmp_path, capsys, action):
    fifo = tmp_path / "r.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(SystemExit) as info:
        main(["results", action, str(fifo)])
    assert info.value.code == 2
    assert "is a FIFO, not a regular file" in capsys.readouterr().err


@pytest.mark.timeout(20)
def test_store_on_a_fifo_is_refused_at_once(tmp_path):
    fifo = tmp_path / "r.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"r\.jsonl is a FIFO"):
        ResultStore(fifo)
