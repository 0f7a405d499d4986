"""Benchmark of the command line's start-up: ``pruneleak bound priprune`` (pure math) in
this tree against the baseline commit (:data:`BASELINE`, the tree issue 31 measured,
unless ``--baseline REV``).

Issue 31 measured seconds of start-up for every command, ``bound`` included, because the
parser imported every subcommand's module and torch with them. Each run is a fresh
interpreter: this tree's installed ``pruneleak.sims.cli.main`` (``make install``), and the
baseline's ``sims.cli.main`` with ``cwd`` at a temporary ``git worktree`` of it (removed
at the end), so that its own top-level ``bounds`` and ``sims`` are imported (a baseline
must predate the move under the one name ``pruneleak``); wall time per run, one warm-up
run (the file cache), then the median of ``--repeats`` runs (7). Both trees run with the
same interpreter, one after the other.
Run ``python benchmarks/bench_cli_startup.py`` (about a minute) or ``--quick`` (3 runs).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The command measured: the brief's bound (Delta given, the option it requires).
COMMAND = ("bound", "priprune", "--p", "0.3", "--B", "20", "--d-star", "100", "--delta", "1")
# The baseline: the last commit before the start-up work (every subcommand imported).
BASELINE = "61c0e7bef7"
CURRENT = "import sys; from pruneleak.sims.cli import main; sys.exit(main(sys.argv[1:]))"
BEFORE_ONE_NAME = "import sys; from sims.cli import main; sys.exit(main(sys.argv[1:]))"


def _seconds(tree: Path, wrapper: str) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", wrapper, *COMMAND],
        cwd=tree,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


def _median_seconds(tree: Path, wrapper: str, repeats: int) -> tuple[float, list[float]]:
    _seconds(tree, wrapper)  # warm-up
    times = [_seconds(tree, wrapper) for _ in range(repeats)]
    return statistics.median(times), times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repetitions")
    parser.add_argument("--repeats", type=int, default=7, help="timed runs per tree")
    parser.add_argument("--baseline", default=BASELINE, help="the baseline revision")
    args = parser.parse_args()
    repeats = 3 if args.quick else args.repeats
    git = ["git", "-C", str(ROOT)]
    commit = subprocess.run(
        [*git, "rev-parse", args.baseline], check=True, capture_output=True, text=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="pruneleak-baseline-") as scratch:
        baseline_tree = Path(scratch) / "tree"
        subprocess.run(
            [*git, "worktree", "add", "--detach", str(baseline_tree), commit],
            check=True,
            capture_output=True,
        )
        try:
            current, current_times = _median_seconds(ROOT, CURRENT, repeats)
            baseline, baseline_times = _median_seconds(baseline_tree, BEFORE_ONE_NAME, repeats)
        finally:
            subprocess.run(
                [*git, "worktree", "remove", "--force", str(baseline_tree)],
                check=True,
                capture_output=True,
            )
    print(f"pruneleak {' '.join(COMMAND)}: wall time of a fresh interpreter, s")
    print(f"{'tree':<28} {'median':>8}  runs")
    for name, median, times in (
        ("this tree", current, current_times),
        (f"baseline {commit[:10]}", baseline, baseline_times),
    ):
        print(f"{name:<28} {median:8.3f}  {' '.join(f'{t:.2f}' for t in times)}")
    print(f"headline: cli_startup_seconds = {current:.2f} s")
    print(f"headline: cli_startup_baseline_seconds = {baseline:.2f} s")
    print(f"headline: cli_startup_speedup = {baseline / current:.1f} x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
