"""Benchmark of the command line's start-up: ``pruneleak bound priprune`` (pure math) in
this tree against the baseline commit (``origin/main`` unless ``--baseline REV``).

Issue 31 measured seconds of start-up for every command, ``bound`` included, because the
parser imported every subcommand's module and torch with them. Each run is a fresh
interpreter running ``sims.cli.main`` with ``cwd`` at the tree measured, so that its own
``bounds`` and ``sims`` are imported (the baseline from a temporary ``git worktree``,
removed at the end); wall time per run, one warm-up run (the file cache), then the median
of ``--repeats`` runs (7). Both trees run with the same interpreter, one after the other.
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
WRAPPER = "import sys; from sims.cli import main; sys.exit(main(sys.argv[1:]))"


def _seconds(tree: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", WRAPPER, *COMMAND],
        cwd=tree,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


def _median_seconds(tree: Path, repeats: int) -> tuple[float, list[float]]:
    _seconds(tree)  # warm-up
    times = [_seconds(tree) for _ in range(repeats)]
    return statistics.median(times), times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repetitions")
    parser.add_argument("--repeats", type=int, default=7, help="timed runs per tree")
    parser.add_argument("--baseline", default="origin/main", help="the baseline revision")
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
            current, current_times = _median_seconds(ROOT, repeats)
            baseline, baseline_times = _median_seconds(baseline_tree, repeats)
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
