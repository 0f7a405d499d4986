"""bounds.progress: a bar on a terminal, rate-limited lines with a heartbeat elsewhere.

The rate is driven by a fake clock (no wall-clock time is asserted); the heartbeat
thread is checked to write during an item that does not end, and to stop.
"""

from __future__ import annotations

import gc
import io
import time

import pytest
from tqdm.std import tqdm

from pruneleak.bounds.progress import (
    HEARTBEAT,
    HEARTBEAT_ENV,
    MIN_INTERVAL,
    ProgressLines,
    format_duration,
    heartbeat_seconds,
    plural,
    progress,
)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Stream(io.StringIO):
    """Records each line with the fake time at which it was written."""

    def __init__(self, clock):
        super().__init__()
        self.clock, self.times = clock, []

    def write(self, text):
        if text.strip():
            self.times.append(self.clock.now)
        return super().write(text)

    def lines(self) -> list[str]:
        return self.getvalue().splitlines()


def lines_over(items, seconds_each, *, total=None, initial=0, heartbeat=60.0, interval=5.0):
    """Run a loop whose items take ``seconds_each`` on a fake clock; (lines, times)."""
    clock = Clock()
    stream = Stream(clock)
    bar = ProgressLines(
        items,
        desc="sweep",
        unit="job",
        total=total,
        initial=initial,
        stream=stream,
        clock=clock,
        heartbeat=heartbeat,
        min_interval=interval,
        thread=False,
    )
    for _ in bar:
        clock.now += seconds_each
    return stream.lines(), stream.times


def test_a_loop_shorter_than_the_least_interval_writes_nothing():
    lines, _ = lines_over(range(4), 1.0)  # 4 s < 5 s
    assert lines == []


def test_lines_are_at_least_the_interval_apart_and_the_last_item_always_has_one():
    lines, times = lines_over(range(30), 2.0)  # items end at 2, 4, ..., 60 s
    assert times == [6.0 * k for k in range(1, 11)]  # 5 s since the last line: every third
    assert lines[0] == "sweep: 3/30 jobs, 6s elapsed, ETA 54s"
    assert lines[-1] == "sweep: 30/30 jobs, done in 1m00s"
    assert all("running" not in line for line in lines)  # items end: no heartbeat needed


def test_slow_items_get_a_line_each_with_the_eta():
    lines, _ = lines_over(range(3), 600.0)
    assert lines == [
        "sweep: 1/3 jobs, 10m00s elapsed, ETA 20m00s",
        "sweep: 2/3 jobs, 20m00s elapsed, ETA 10m00s",
        "sweep: 3/3 jobs, done in 30m00s",
    ]


def test_the_eta_counts_only_the_items_of_this_run():
    # 10 jobs were done by an earlier run: 2 in 20 s now leave 8 at 10 s each
    lines, _ = lines_over(range(10), 10.0, total=20, initial=10)
    assert lines[1] == "sweep: 12/20 jobs, 20s elapsed, ETA 1m20s"


def make(clock, stream, **kwargs):
    options = {"heartbeat": 60.0, "min_interval": 5.0, "thread": False}
    return ProgressLines(
        desc="train", unit="round", stream=stream, clock=clock, **{**options, **kwargs}
    )


def test_a_line_held_back_by_the_rate_is_written_by_the_next_tick_that_may():
    clock = Clock()
    stream = Stream(clock)
    bar = make(clock, stream, total=10)
    clock.now = 6.0
    bar.update()  # written: 6 s since the start
    clock.now = 7.0
    bar.update()  # held back: 1 s since the last line
    clock.now = 10.0
    bar.tick()  # 4 s: still too soon
    assert stream.times == [6.0]
    clock.now = 11.0
    bar.tick()
    assert stream.times == [6.0, 11.0]
    assert stream.lines()[-1].startswith("train: 2/10 rounds, 11s elapsed, ETA")
    clock.now = 15.0
    bar.tick()  # nothing new, and the heartbeat is a minute away
    assert stream.times == [6.0, 11.0]


def test_the_heartbeat_writes_at_least_once_a_minute_during_a_long_item():
    clock = Clock()
    stream = Stream(clock)
    bar = ProgressLines(
        iter(range(5)),
        total=5,
        desc="sweep",
        unit="job",
        stream=stream,
        clock=clock,
        heartbeat=60.0,
        min_interval=5.0,
        thread=False,
    )
    items = iter(bar)
    next(items)
    clock.now = 30.0
    next(items)  # job 1 ends at 30 s: written
    for t in range(35, 400, 5):  # job 2 runs on; the thread would tick every 5 s
        clock.now = float(t)
        bar.tick()
    assert stream.times == [30.0, 90.0, 150.0, 210.0, 270.0, 330.0, 390.0]
    assert stream.lines()[1] == "sweep: 1/5 jobs, 1m30s elapsed, ETA 6m00s; job 2 running for 1m00s"
    assert stream.lines()[-1].endswith("; job 2 running for 6m00s")


def test_before_the_first_item_the_heartbeat_says_what_runs():
    clock = Clock()
    stream = Stream(clock)
    bar = make(clock, stream, total=3)
    clock.now = 60.0
    bar.tick()
    assert stream.lines() == ["train: 0/3 rounds, 1m00s elapsed; no round finished yet"]
    clock.now = 70.0
    bar.update()
    clock.now = 190.0
    bar.tick()
    assert stream.lines()[-1].endswith("; last round finished 2m00s ago")


def test_postfix_and_a_stopped_loop():
    clock = Clock()
    stream = Stream(clock)
    with pytest.raises(RuntimeError), make(clock, stream, total=4) as bar:
        clock.now = 6.0
        bar.set_postfix(acc="0.912", eps=1.5)
        bar.update()
        clock.now = 7.0
        bar.update()  # held back, then written by close
        raise RuntimeError("diverged")
    assert stream.lines() == [
        "train: 1/4 rounds (acc=0.912, eps=1.5), 6s elapsed, ETA 18s",
        "train: 2/4 rounds (acc=0.912, eps=1.5), stopped after 7s",
    ]
    clock.now = 100.0
    bar.tick()  # closed: nothing more
    bar.update()
    assert len(stream.lines()) == 2


def test_a_loop_without_a_total_ends_with_done():
    lines, _ = lines_over((i for i in range(3)), 4.0)
    assert lines == ["sweep: 2 jobs, 8s elapsed", "sweep: 3 jobs, done in 12s"]


def test_the_heartbeat_thread_writes_during_an_item_that_hangs_and_stops_with_the_loop():
    stream = io.StringIO()
    bar = ProgressLines(
        range(2), desc="slow", unit="job", stream=stream, heartbeat=0.05, min_interval=0.05
    )
    thread = bar._thread
    for _ in bar:
        deadline = time.monotonic() + 30  # generous: only "eventually" is asserted
        while "running for" not in stream.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
        break  # leave the loop early: the generator is closed, the thread stopped
    del _
    bar.close()
    assert "slow: 0/2 jobs" in stream.getvalue() and "job 1 running for" in stream.getvalue()
    assert not thread.is_alive()


def test_a_forgotten_display_does_not_keep_its_thread():
    bar = ProgressLines(desc="x", total=2, stream=io.StringIO(), heartbeat=0.02)
    thread = bar._thread
    assert thread.daemon and thread.is_alive()
    del bar
    gc.collect()
    thread.join(timeout=30)
    assert not thread.is_alive()


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_is_a_bar_on_a_terminal_lines_elsewhere_and_nothing_when_disabled():
    shown = progress(range(3), desc="d", stream=Terminal())
    assert isinstance(shown, tqdm) and not shown.disable
    shown.close()
    lines = progress(range(3), desc="d", stream=io.StringIO(), enabled=True)
    assert isinstance(lines, ProgressLines) and lines.total == 3
    lines.close()
    assert not lines._thread.is_alive()
    quiet = io.StringIO()
    off = progress(range(3), desc="d", stream=quiet, enabled=False)
    assert isinstance(off, tqdm) and off.disable
    assert list(off) == [0, 1, 2] and quiet.getvalue() == ""


def test_heartbeat_seconds_reads_the_environment(monkeypatch):
    monkeypatch.delenv(HEARTBEAT_ENV, raising=False)
    assert heartbeat_seconds() == HEARTBEAT
    monkeypatch.setenv(HEARTBEAT_ENV, "0.5")
    assert heartbeat_seconds() == 0.5
    assert ProgressLines(desc="x", thread=False).min_interval == 0.5
    monkeypatch.setenv(HEARTBEAT_ENV, "600")
    assert ProgressLines(desc="x", thread=False).min_interval == MIN_INTERVAL
    for bad in ("0", "-1", "nan", "soon"):
        monkeypatch.setenv(HEARTBEAT_ENV, bad)
        with pytest.raises(ValueError, match=HEARTBEAT_ENV):
            heartbeat_seconds()


def test_durations_and_plurals():
    assert [format_duration(s) for s in (0, 59.4, 60, 3599, 3600, 86399)] == [
        "0s",
        "59s",
        "1m00s",
        "59m59s",
        "1h00m",
        "23h59m",
    ]
    assert [plural(u) for u in ("job", "it", "steps", "sparsity", "day")] == [
        "jobs",
        "it",
        "steps",
        "sparsities",
        "days",
    ]
