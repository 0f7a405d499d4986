"""Exact leakage of Conv-2's one-step releases: the Gram route against the dense route.

Problem: PriPrune's Conv-2 (``sims.models.conv_net(2, ...)``: 6,603,710 weights on 28x28
FEMNIST with 62 classes; the variant for the offline faces of scikit-image, 28x28 and 2
classes, has 6,480,770), ``M`` faces (a seeded permutation of the 200, resized to 28x28
by ``ImageDataset.resized``), the seeded initial weights, one FedSGD step at lr 0.25, a
random mask at each rate ``p``. For each ``p``, the exact leakage
(``bounds.leakage.batch_leakage``) at noise ``s`` in {0.01, 0.1} and batch sizes ``B`` in
{1, 2}, by two routes:

- **dense** (the *baseline*, today's route): ``sims.fl.release.release_vectors``, the
  ``(M, k)`` float64 releases (``k`` kept coordinates, up to 6.5 million), handed to
  ``batch_leakage``;
- **gram**: ``sims.fl.release.release_gram``, the ``(M, M)`` Gram of the releases
  (chunks of candidates, no ``(M, k)`` matrix), ``bounds.leakage.releases_from_gram``, an
  ``(M, r)`` matrix (``r < M``) with the same pairwise distances, handed to
  ``batch_leakage`` with the same samples and seed.

Both give the same bits up to Monte Carlo error (the noise draws differ: ``k`` against
``r`` coordinates); the table shows both with their 95% intervals and whether the
intervals overlap. The dense route is skipped where its estimated peak (5 copies of the
``(M, k)`` float64 matrix: the gradients, the update and their concatenation in
``release_vectors``, two temporaries of the centring in ``batch_leakage``) exceeds the
memory available (``MemAvailable`` of ``/proc/meminfo``; the GPU's total memory on CUDA).

Measurement: each route at each ``p`` runs in a fresh process (``spawn``), started after
a pause of :data:`SETTLE_SECONDS`; it builds the problem, runs the route once on 3
candidates (warm-up: kernels, first-touch allocations) and then ``--repeats`` times on
the ``M`` candidates; the time is the median of those (``--repeats`` 1 by default: the
dense route takes minutes). Peak memory is what the process's high-water mark rose above
its resident size before the timed runs (``ru_maxrss`` against ``/proc/self/statm``; on
CUDA also ``torch.cuda.max_memory_allocated`` above the allocation before them).

    python benchmarks/bench_leakage_gram.py            # M = 200, p in {0, 0.5, 0.9}, 512 samples
    python benchmarks/bench_leakage_gram.py --quick    # M = 24, p = 0.9, 64 samples

Ends with ``headline:`` lines: ``conv2_gram_speedup`` (dense time / Gram time, summed
over the rates where the dense route ran), ``conv2_gram_memory_ratio`` (dense peak / Gram
peak, the largest over those rates) and ``conv2_gram_peak_mib`` (the Gram route's largest
peak over all rates, host memory).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import torch

#: Pause before each fresh-process run: lets the kernel reclaim the previous run's memory.
SETTLE_SECONDS = 2.0
NOISE_STDS = (0.01, 0.1)
BATCH_SIZES = (1, 2)
LR = 0.25
#: Copies of the (M, k) float64 releases the dense route holds at its peak (module docstring).
DENSE_COPIES = 5
MIB = 2.0**20


def _problem(m: int, p: float, device: str):
    """Conv-2 for the 28x28 faces, its weights, ``m`` faces and labels, the mask at ``p``."""
    from pruneleak.sims.core.runtime import seeded
    from pruneleak.sims.data.datasets import load_dataset
    from pruneleak.sims.models import conv_net
    from pruneleak.sims.pruning.mask import random_mask

    data = load_dataset("faces").resized(28)
    with seeded(0):
        model = conv_net(2, in_channels=1, image_size=28, num_classes=data.num_classes)
    model = model.to(device)
    params = {name: t.detach() for name, t in model.named_parameters()}
    order = torch.randperm(len(data), generator=torch.Generator().manual_seed(0))[:m]
    images, labels = data.images[order].to(device), data.labels[order].to(device)
    return model, params, random_mask(params, p, seed=0).to(device), images, labels


def _dense_releases(model, params, mask, images, labels):
    from pruneleak.sims.fl.release import release_vectors

    return release_vectors(model, params, mask, images, labels, lr=LR).numpy()


def _gram_releases(model, params, mask, images, labels):
    from pruneleak.bounds.leakage import releases_from_gram
    from pruneleak.sims.fl.release import release_gram

    return releases_from_gram(release_gram(model, params, mask, images, labels, lr=LR).numpy())


ROUTES = {"dense": _dense_releases, "gram": _gram_releases}


def _run(route: str, problem, samples: int) -> dict:
    """One pass of ``route``: the releases, then the leakage at every (s, B)."""
    from pruneleak.bounds.leakage import batch_leakage

    start = time.perf_counter()
    releases = ROUTES[route](*problem)
    released = time.perf_counter()
    bits = {}
    for s in NOISE_STDS:
        for b in BATCH_SIZES:
            res = batch_leakage(releases, s, b, samples=samples, seed=0)
            bits[(s, b)] = (res.bits, *res.ci_bits, res.method)
    end = time.perf_counter()
    return {
        "seconds": end - start,
        "release_seconds": released - start,
        "columns": releases.shape[1],
        "bits": bits,
    }


def _resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _measure(route: str, m: int, p: float, device: str, samples: int, repeats: int) -> dict:
    """One fresh-process measurement (module docstring)."""
    cuda = device.startswith("cuda")
    _run(route, _problem(3, p, device), 2)  # warm-up
    problem = _problem(m, p, device)
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        gpu_before = torch.cuda.memory_allocated()
    before = _resident_bytes()
    runs = [_run(route, problem, samples) for _ in range(repeats)]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    gpu_peak = torch.cuda.max_memory_allocated() - gpu_before if cuda else None
    return {
        "seconds": statistics.median(r["seconds"] for r in runs),
        "release_seconds": statistics.median(r["release_seconds"] for r in runs),
        "columns": runs[0]["columns"],
        "bits": runs[0]["bits"],
        "peak": peak,
        "gpu_peak": gpu_peak,
    }


def _available_bytes(device: str) -> int:
    """Memory the dense route may use: MemAvailable on a CPU, total memory of a GPU."""
    if device.startswith("cuda"):
        return torch.cuda.get_device_properties(torch.device(device)).total_memory
    with open("/proc/meminfo") as meminfo:
        fields = dict(line.split(":", 1) for line in meminfo)
    return int(fields["MemAvailable"].split()[0]) * 1024


def _memory(run: dict) -> str:
    text = f"{run['peak'] / MIB:>9.0f}"
    return text if run["gpu_peak"] is None else f"{text} (GPU {run['gpu_peak'] / MIB:.0f})"


def _print_rate(p: float, kept: int, runs: dict, skipped: str | None) -> None:
    print(f"\np = {p}: k = {kept:,} kept coordinates")
    print(f"  {'route':<6} {'seconds':>8} {'release s':>9} {'columns':>8} {'peak MiB':>9}")
    for route, run in runs.items():
        print(
            f"  {route:<6} {run['seconds']:>8.1f} {run['release_seconds']:>9.1f} "
            f"{run['columns']:>8,} {_memory(run)}"
        )
    if skipped:
        print(f"  dense  skipped: {skipped}")
    print(f"  {'s':>5} {'B':>2} {'dense bits [95% CI]':>28} {'gram bits [95% CI]':>28}  overlap")
    gram = runs["gram"]["bits"]
    for key, (bits, lo, hi, method) in gram.items():
        cell = f"{bits:>8.4f} [{lo:.4f}, {hi:.4f}]"
        if "dense" in runs:
            d_bits, d_lo, d_hi, _ = runs["dense"]["bits"][key]
            dense = f"{d_bits:>8.4f} [{d_lo:.4f}, {d_hi:.4f}]"
            overlap = "yes" if max(lo, d_lo) <= min(hi, d_hi) else "NO"
        else:
            dense, overlap = "-", "-"
        print(f"  {key[0]:>5} {key[1]:>2} {dense:>28} {cell:>28}  {overlap} ({method})")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="M = 24, p = 0.9, 64 samples")
    parser.add_argument("--candidates", type=int, default=200, help="M (default 200)")
    parser.add_argument("--rates", type=float, nargs="+", default=[0.0, 0.5, 0.9])
    parser.add_argument("--samples", type=int, default=512, help="Monte Carlo draws")
    parser.add_argument("--repeats", type=int, default=1, help="timed runs per process")
    parser.add_argument("--device", default="auto", help="auto (default), cpu or cuda[:N]")
    args = parser.parse_args(argv)
    from pruneleak.estimators.device import resolve_device

    device = str(resolve_device(args.device))
    m, rates, samples = args.candidates, args.rates, args.samples
    if args.quick:
        m, rates, samples = 24, [0.9], 64
    print(
        f"# Conv-2 on 28x28 faces (2 classes), M = {m}, lr {LR}, s in {NOISE_STDS}, "
        f"B in {BATCH_SIZES}, {samples} samples, device {device}, torch {torch.__version__} "
        f"with {torch.get_num_threads()} threads; one fresh process per route and rate, "
        f"median of {args.repeats} timed run(s) after a warm-up"
    )
    totals = {"dense": 0.0, "gram": 0.0}
    ratios, gram_peaks = [], []
    context = get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=context, max_tasks_per_child=1) as pool:
        for p in rates:
            model, params, mask, _, _ = _problem(1, p, "cpu")
            kept = mask.num_kept()
            if p == rates[0]:
                print(f"# weights: {sum(t.numel() for t in params.values()):,}")
            need, have = DENSE_COPIES * m * kept * 8, _available_bytes(device)
            skipped = None
            if need > have:
                skipped = f"needs ~{need / 2**30:.1f} GiB, {have / 2**30:.1f} GiB available"
            del model, params, mask
            runs = {}
            for route in ("gram",) if skipped else ("dense", "gram"):
                time.sleep(SETTLE_SECONDS)
                options = (route, m, p, device, samples, args.repeats)
                runs[route] = pool.submit(_measure, *options).result()
            _print_rate(p, kept, runs, skipped)
            gram_peaks.append(runs["gram"]["peak"])
            if "dense" in runs:
                for route in totals:
                    totals[route] += runs[route]["seconds"]
                ratios.append(runs["dense"]["peak"] / runs["gram"]["peak"])
    if ratios:
        print(f"headline: conv2_gram_speedup = {totals['dense'] / totals['gram']:.1f} x")
        print(f"headline: conv2_gram_memory_ratio = {max(ratios):.1f} x")
    print(f"headline: conv2_gram_peak_mib = {max(gram_peaks) / MIB:.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
