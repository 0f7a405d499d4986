"""Benchmark of the MI estimators (KSG, MINE, H-MINE) on Gaussian cases with a known answer.

Two families (issue 5, item 7):

- ``pair``: ``X, Y`` in ``R^d`` with coordinate-wise correlation (d = 1, 5, 25, 100) and true
  MI 0.5, 1, 2, 4 nats (``estimators.mi.correlated_gaussian_pair``); H-MINE sees ``X`` as a
  batch of one (B = 1).
- ``batch``: the linear-Gaussian stand-in for a client's batch and gradient,
  ``G = (1/B) sum_m A x_m + sigma eps`` (``estimators.mi.GaussianBatchChannel``) with
  B = 1, 3, 8; MINE and KSG see the flattened batch, H-MINE its block structure.

For each case the table gives the estimate, the true value, the relative error and the
wall time. MINE and H-MINE share one training configuration (printed in the header);
their estimates are held-out DV lower bounds with a 95 % bootstrap interval.

KSG runs on the first ``--ksg-max-samples`` (5000) samples: its k-d tree search becomes a
brute-force scan in 50+ joint dimensions. Run ``python benchmarks/bench_mi.py`` (full,
~30 min on 1 CPU thread), ``--quick``, or a part (``--families pair --dims 25 100``).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from estimators.ksg import KSG
from estimators.mi import GaussianBatchChannel, correlated_gaussian_pair
from estimators.mine import DVTrainingConfig, hmine_estimate, mine_estimate
from sims.core.runtime import cpu_tuning

FULL = {
    "dims": (1, 5, 25, 100),
    "mis": (0.5, 1.0, 2.0, 4.0),
    "batch_sizes": (1, 3, 8),
    "n_samples": 10_000,
    "steps": 1500,
}
QUICK = {"dims": (1, 5), "mis": (1.0,), "batch_sizes": (1, 3), "n_samples": 4000, "steps": 300}
BATCH_DIM_X, BATCH_DIM_G, BATCH_NOISE = 8, 16, 1.3


def _run(name, func):
    start = time.perf_counter()
    result = func()
    elapsed = time.perf_counter() - start
    if isinstance(result, float):
        return name, result, math.nan, math.nan, elapsed
    return name, result.value, result.ci_low, result.ci_high, elapsed


def _estimators(x, y, x_batch, config, seed, device, ksg_max_samples):
    # KSG's neighbour search degenerates to brute force in high dimension: subsample
    return [
        _run("KSG (k=3)", lambda: KSG().estimate(x[:ksg_max_samples], y[:ksg_max_samples])),
        _run("MINE", lambda: mine_estimate(x, y, config=config, seed=seed, device=device)),
        _run("H-MINE", lambda: hmine_estimate(x_batch, y, config=config, seed=seed, device=device)),
    ]


def _cases(settings, families):
    n = settings["n_samples"]
    for dim in settings["dims"] if "pair" in families else ():
        for mi in settings["mis"]:
            x, y = correlated_gaussian_pair(n, dim, mi, seed=dim)
            yield f"pair d={dim} I={mi:g}", mi, x, y, x[:, None, :]
    for b in settings["batch_sizes"] if "batch" in families else ():
        channel = GaussianBatchChannel(b, BATCH_DIM_X, BATCH_DIM_G, BATCH_NOISE, seed=0)
        x_batch, g = channel.sample(n, seed=b)
        yield f"batch B={b}", channel.mutual_information(), x_batch.reshape(n, -1), g, x_batch


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--learning-rate", type=float, default=2e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dims", type=int, nargs="+", help="pair dimensions to run")
    parser.add_argument("--families", nargs="+", default=["pair", "batch"])
    parser.add_argument("--ksg-max-samples", type=int, default=5000)
    args = parser.parse_args(argv)
    with cpu_tuning(threads=args.threads):
        return _benchmark(args)


def _benchmark(args: argparse.Namespace) -> int:
    settings = dict(QUICK if args.quick else FULL)
    if args.dims:
        settings["dims"] = tuple(args.dims)
    config = DVTrainingConfig(steps=settings["steps"], learning_rate=args.learning_rate)
    print(
        f"# n_samples={settings['n_samples']} (25 % held out), steps={config.steps}, "
        f"batch={config.batch_size}, Adam lr={config.learning_rate}, ema={config.ema_rate}, "
        f"threads={args.threads}, KSG on the first {args.ksg_max_samples} samples; "
        f"batch case: dim_x={BATCH_DIM_X}, dim_g={BATCH_DIM_G}, "
        f"sigma={BATCH_NOISE}"
    )
    header = f"{'case':<16} {'true':>6} {'estimator':<10} {'estimate':>8} {'95% CI':>17} "
    print(header + f"{'rel.err':>8} {'time s':>7}")
    errors: dict[tuple[str, str], float] = {}
    times: dict[str, list[float]] = {}
    for case, truth, x, y, x_batch in _cases(settings, args.families):
        results = _estimators(x, y, x_batch, config, args.seed, args.device, args.ksg_max_samples)
        for name, value, low, high, elapsed in results:
            rel = (value - truth) / truth
            errors[(case, name)] = rel
            times.setdefault(name, []).append(elapsed)
            ci = "" if math.isnan(low) else f"[{low:6.3f}, {high:6.3f}]"
            print(
                f"{case:<16} {truth:6.3f} {name:<10} {value:8.3f} {ci:>17} "
                f"{100 * rel:7.1f}% {elapsed:7.2f}",
                flush=True,
            )
    largest_b = max(settings["batch_sizes"])
    key = f"batch B={largest_b}"
    if (key, "MINE") in errors:
        ratio = abs(errors[(key, "H-MINE")]) / max(abs(errors[(key, "MINE")]), 1e-12)
        print(f"headline: hmine_vs_mine_abs_rel_error_B{largest_b} = {ratio:.2f} x")
    if ("pair d=5 I=1", "KSG (k=3)") in errors:
        ksg_error = 100 * errors[("pair d=5 I=1", "KSG (k=3)")]
        print(f"headline: ksg_rel_error_pair_d5_mi1 = {ksg_error:.1f} %")
    mean_time = {name: float(np.mean(t)) for name, t in times.items()}
    print(f"headline: hmine_time_vs_mine = {mean_time['H-MINE'] / mean_time['MINE']:.2f} x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
