"""Benchmark of KSG's neighbour searches: the k-d tree (the old path) against the chunked
brute force, on correlated Gaussian pairs (``estimators.mi.correlated_gaussian_pair``).

Issue 14 measured KSG 7x slower than benchmark-mi's in 50 dimensions: scipy's cKDTree with
the max-norm prunes nothing there and ends up slower than a scan. Three parts:

- the headline case, N = 5,000 and 50 + 50 dimensions: tree against ``algorithm="auto"``
  (which takes the brute force there), value only (``interval="none"``), both giving the
  same value to the last bit; then the cost of the default interval (30 half-samples);
- the crossover behind ``estimators.ksg.TREE_MAX_DIM``: both searches at N = 5,000 for
  2 to 20 joint dimensions;
- low dimension (1 + 1), where ``"auto"`` keeps the tree.

Each time is the median of ``--repeats`` runs after one warm-up run on a small problem
(imports, first-call allocations). Both searches run on one core (scipy's ``cdist`` and
``cKDTree`` with one worker). Run ``python benchmarks/bench_ksg.py`` (about 3 min) or
``--quick`` (N = 2,000, one repetition).
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

from pruneleak.estimators.estimate import MIWarning
from pruneleak.estimators.ksg import KSG, TREE_MAX_DIM
from pruneleak.estimators.mi import correlated_gaussian_pair


def _median_time(estimator: KSG, x, y, repeats: int) -> tuple[float, float]:
    """``(median seconds, value)`` of ``repeats`` runs."""
    times, value = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MIWarning)  # high dimension: expected here
            est = estimator.estimate(x, y)
        times.append(time.perf_counter() - start)
        if value is not None and est.value != value:
            raise AssertionError("the same estimator gave two values on the same data")
        value = est.value
    return statistics.median(times), value


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 2,000, one repetition")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    return _benchmark(args)


def _benchmark(args: argparse.Namespace) -> int:
    n = 2000 if args.quick else 5000
    repeats = 1 if args.quick else args.repeats
    print(f"# N = {n}, k = 3, median of {repeats} runs after a warm-up; 1 nat per pair")
    warm_x, warm_y = correlated_gaussian_pair(200, 2, 1.0, seed=0)
    for algorithm in ("tree", "brute"):
        _median_time(KSG(algorithm=algorithm), warm_x, warm_y, 1)

    x, y = correlated_gaussian_pair(n, 50, 1.0, seed=0)
    tree, tree_value = _median_time(KSG(algorithm="tree", interval="none"), x, y, repeats)
    auto, auto_value = _median_time(KSG(interval="none"), x, y, repeats)
    with_ci, _ = _median_time(KSG(), x, y, repeats)
    if tree_value != auto_value:
        raise AssertionError(f"tree {tree_value!r} and brute force {auto_value!r} differ")
    print(f"{'case':<26} {'search':<8} {'value':>8} {'median s':>9}")
    print(f"{'50 + 50, value only':<26} {'tree':<8} {tree_value:8.4f} {tree:9.2f}")
    print(f"{'50 + 50, value only':<26} {'auto':<8} {auto_value:8.4f} {auto:9.2f}")
    print(f"{'50 + 50, 30 half-samples':<26} {'auto':<8} {auto_value:8.4f} {with_ci:9.2f}")

    print(f"# crossover (auto takes the tree up to {TREE_MAX_DIM} joint dimensions)")
    for dim in (1, 2, 3, 4, 5, 6, 8, 10):
        x, y = correlated_gaussian_pair(n, dim, 1.0, seed=dim)
        row = []
        for algorithm in ("tree", "brute"):
            seconds, _ = _median_time(KSG(algorithm=algorithm, interval="none"), x, y, repeats)
            row.append(seconds)
        print(f"joint dim {2 * dim:>3}: tree {row[0]:7.3f} s, brute {row[1]:7.3f} s")

    print(f"headline: ksg_50d_speedup = {tree / auto:.1f} x")
    print(f"headline: ksg_50d_seconds = {auto:.2f} s (value only), {with_ci:.2f} s (with interval)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
