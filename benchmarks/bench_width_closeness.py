"""Benchmark of the width-versus-closeness experiment (Huang et al., Section 4.4, Figure 8).

Times the vectorised code on the paper grid (9 sparsities x 8 widths, 1,000 trials per
cell, d = 100, all five parameterisations on the same draws), and compares it with the
per-trial Python loop (``closeness_errors_reference``) on a sub-grid: the same cells with
fewer trials, run by both codes in this process (the ratio is on identical work, and the
two outputs are checked to agree).

    python benchmarks/bench_width_closeness.py [--quick] [--device auto] [--threads 1]

``--threads`` sets torch's intra-op threads for both codes (default 1), inside
:func:`sims.core.runtime.torch_threads`: on a loaded shared host every parallel region
waits for all its threads, so one thread is often the fastest. The script tunes its
process's heap as the command line does (:func:`sims.core.runtime.tune_process_heap`).
"""

from __future__ import annotations

import argparse
import time

import torch

from pruneleak.estimators.device import resolve_device
from pruneleak.sims.core.runtime import torch_threads, tune_process_heap
from pruneleak.sims.experiments.width_closeness import (
    WidthClosenessConfig,
    closeness_errors,
    closeness_errors_reference,
    run_width_closeness,
)


def _time_loop(config: WidthClosenessConfig, fn) -> tuple[float, list[torch.Tensor]]:
    start = time.perf_counter()
    outputs = [fn(config, m) for m in config.widths]
    if resolve_device(config.device).type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start, outputs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 trials; 4-trial sub-grid")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    args = parser.parse_args()
    tune_process_heap()
    with torch_threads(args.threads):
        _benchmark(args)


def _benchmark(args: argparse.Namespace) -> None:
    trials, sub_trials = (100, 4) if args.quick else (1000, 20)

    full = WidthClosenessConfig(trials=trials, device=args.device)
    run_width_closeness(WidthClosenessConfig(trials=2, widths=(10,), device=args.device))  # warm-up
    grid = run_width_closeness(full, progress=False)  # ends with a copy to the host

    sub = WidthClosenessConfig(trials=sub_trials, device=args.device)
    vec_seconds, vec = _time_loop(sub, closeness_errors)
    loop_seconds, ref = _time_loop(sub, closeness_errors_reference)
    worst = max(
        float(((a.cpu() - b.cpu()).abs() / b.cpu().abs()).max())
        for a, b in zip(vec, ref, strict=True)
    )

    cells = len(full.sparsities) * len(full.widths)
    print(
        f"device: {resolve_device(args.device)}, threads: {torch.get_num_threads()}, "
        f"d = {full.input_dim}, {len(full.parameterisations)} parameterisations"
    )
    print(f"{'run':<34}{'trials/cell':>12}{'cells':>7}{'seconds':>10}")
    print(f"{'vectorised, paper grid':<34}{trials:>12}{cells:>7}{grid.seconds:>10.2f}")
    print(f"{'vectorised, sub-grid':<34}{sub_trials:>12}{cells:>7}{vec_seconds:>10.2f}")
    print(f"{'per-trial loop, sub-grid':<34}{sub_trials:>12}{cells:>7}{loop_seconds:>10.2f}")
    print(f"max relative difference loop vs vectorised (float32): {worst:.2e}")
    print(
        "per-trial loop extrapolated to the paper grid (not measured): "
        f"{loop_seconds * trials / sub_trials:.0f} s"
    )
    print(f"headline: grid_seconds = {grid.seconds:.2f} s")
    print(f"headline: speedup = {loop_seconds / vec_seconds:.1f} x")


if __name__ == "__main__":
    main()
