"""Per-sample gradient statistics of PriPrune's Theorem 1: the per-layer Gram route against
the route it replaced, and our per-sample gradients against Opacus'.

Model: FEMNIST's Conv-2 at 28x28 with 62 classes (6,603,710 parameters, ReLU and max-pool
as in the paper), ``n`` noise images (uniform on [0, 1]) with random labels, all seeded.

- **gram**: ``sims.gradients.statistics.gradient_statistics`` (``d*`` and the log
  pseudo-determinant from the Gram matrix accumulated layer by layer) against the
  *baseline*, the implementation it replaced, kept here: the ``(n, d)`` per-sample gradient
  matrix from ``torch.func.vmap(grad(...))`` followed by
  ``gram_log_pseudo_determinant``. Unmasked and under a random mask at ``p = 0.5``.
- **per-sample**: ``sims.gradients.per_sample.per_sample_gradients`` against Opacus'
  ``GradSampleModule`` (forward, backward, the ``grad_sample`` tensors concatenated into
  the same ``(n, d)`` matrix; the peer is installed by the ``bench`` extra).

Each measured run is a fresh process (``spawn``), started after a pause of
:data:`SETTLE_SECONDS`: it builds the model and calls the path ``1 + --calls`` times on
the same ``n`` samples. The first call warms up (imports, first-touch page faults of the
large buffers) and gives the peak memory it added to what the process held before it
(``ru_maxrss`` against the resident size on a CPU; ``torch.cuda.max_memory_allocated`` on
a GPU); the median of the next ``--calls`` calls is the run's time. The two sides of a
comparison alternate (A B A B ...), ``--repeats`` runs each; the table gives medians and
min-max over the runs. Each side's result is returned and compared: ``d*`` and the log
pseudo-determinant (relative difference) for the Gram, a fixed random projection of the
gradient matrix for the per-sample gradients. Torch uses its default thread count.

    python benchmarks/bench_gradstats.py            # n = 256, 3 runs per side
    python benchmarks/bench_gradstats.py --quick    # n = 64, 2 runs per side

Ends with ``headline:`` lines: ``gram_speedup`` and ``gram_memory_ratio`` (baseline /
per-layer Gram, unmasked; ``*_masked`` at p = 0.5) and ``per_sample_vs_opacus`` (Opacus'
time / ours).
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
from torch import nn

#: Pause before each fresh-process run (see _compare).
SETTLE_SECONDS = 5.0


def _problem(n: int, p: float | None, device: str):
    """Conv-2, its weights, ``n`` images and labels, and the mask (None when p is None)."""
    from pruneleak.sims.core.runtime import seeded
    from pruneleak.sims.models import conv_net
    from pruneleak.sims.pruning.mask import random_mask

    with seeded(0):
        model = conv_net(2, in_channels=1, image_size=28, num_classes=62).to(device)
    params = {name: t.detach() for name, t in model.named_parameters()}
    generator = torch.Generator().manual_seed(0)
    images = torch.rand(n, 1, 28, 28, generator=generator).to(device)
    labels = torch.randint(0, 62, (n,), generator=generator).to(device)
    mask = None if p is None else random_mask(params, p, seed=1).to(device)
    return model, params, images, labels, mask


def _baseline_statistics(model, params, images, labels, mask):
    """The route gradient_statistics took before the per-layer Gram: the full (n, d)
    matrix from vmap, its kept columns, then the chunked float64 Gram."""
    from torch.func import grad, vmap

    from pruneleak.sims.core.functional import batch_loss
    from pruneleak.sims.gradients.statistics import gram_log_pseudo_determinant

    def sample_loss(p, x, y):
        return batch_loss(model, p, x.unsqueeze(0), y.unsqueeze(0))

    grads = vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, images, labels)
    flat = torch.cat([grads[name].reshape(len(images), -1) for name in params], dim=1)
    del grads
    if mask is not None:
        flat = flat[:, mask.flatten().to(flat.device)]
    return gram_log_pseudo_determinant(flat)


def _fast_statistics(model, params, images, labels, mask):
    from pruneleak.sims.gradients.statistics import gradient_statistics

    stats = gradient_statistics(model, params, images, labels, mask=mask)
    return stats.d_star, stats.log_pseudo_det


def _projection(matrix: torch.Tensor) -> list[float]:
    """``G v`` for a fixed random ``v``: compares two (n, d) matrices without moving them."""
    v = torch.randn(matrix.shape[1], generator=torch.Generator().manual_seed(7))
    return (matrix @ v.to(matrix.device, matrix.dtype)).tolist()


def _ours_per_sample(model, params, images, labels, mask):
    from pruneleak.sims.gradients.per_sample import per_sample_gradients

    return _projection(per_sample_gradients(model, params, images, labels))


def _opacus_per_sample(model, params, images, labels, mask):
    from opacus import GradSampleModule

    sampled = GradSampleModule(model, loss_reduction="sum")
    try:
        loss = nn.functional.cross_entropy(sampled(images), labels, reduction="sum")
        loss.backward()
        n = len(images)
        matrix = torch.cat([p.grad_sample.reshape(n, -1) for p in model.parameters()], dim=1)
        return _projection(matrix)
    finally:
        sampled._close()
        model.zero_grad(set_to_none=True)
        for p in model.parameters():
            p.grad_sample = None


PATHS = {
    "baseline": _baseline_statistics,
    "per-layer": _fast_statistics,
    "ours": _ours_per_sample,
    "opacus": _opacus_per_sample,
}


def _resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _measure(path: str, n: int, p: float | None, device: str, calls: int) -> dict:
    """One measured run in a fresh process (module docstring): the first call gives the
    peak memory, the median of ``calls`` further, warm calls the time."""
    run = PATHS[path]
    problem = _problem(n, p, device)
    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
    else:
        before = _resident_bytes()
    run(*problem)
    if device == "cuda":
        peak = torch.cuda.max_memory_allocated() - before
    else:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        result = run(*problem)
        if device == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return {"seconds": statistics.median(times), "peak": peak, "result": result}


def _compare(pool, a: str, b: str, *, n: int, p, device: str, repeats: int, calls: int) -> dict:
    """Alternating fresh-process runs of paths ``a`` and ``b``; lists of measurements.
    Each run starts after a pause that lets the kernel finish reclaiming the memory of
    the previous one (freeing many GiB otherwise slows the next run's page faults)."""
    runs = {a: [], b: []}
    for _ in range(repeats):
        for path in (a, b):
            time.sleep(SETTLE_SECONDS)
            runs[path].append(pool.submit(_measure, path, n, p, device, calls).result())
    return runs


def _summary(runs: list[dict], key: str) -> tuple[float, float, float]:
    values = [r[key] for r in runs]
    return statistics.median(values), min(values), max(values)


def _row(label: str, runs: list[dict]) -> str:
    t, t_lo, t_hi = _summary(runs, "seconds")
    m, m_lo, m_hi = _summary(runs, "peak")
    gib = 2.0**30
    return (
        f"{label:<28} {t:>9.2f} [{t_lo:.2f}, {t_hi:.2f}]   "
        f"{m / gib:>8.3f} [{m_lo / gib:.3f}, {m_hi / gib:.3f}]"
    )


def _relative(a: float, b: float) -> float:
    return abs(a - b) / max(abs(a), abs(b), 1e-300)


def _gram_part(pool, *, n: int, device: str, repeats: int, calls: int) -> dict[str, float]:
    """Baseline against the per-layer Gram, unmasked and at p = 0.5; their headlines."""
    headlines = {}
    for p, suffix in ((None, ""), (0.5, "_masked")):
        runs = _compare(
            pool, "baseline", "per-layer", n=n, p=p, device=device, repeats=repeats, calls=calls
        )
        case = "unmasked" if p is None else f"mask p = {p}"
        for path in ("baseline", "per-layer"):
            print(_row(f"gram {case}: {path}", runs[path]), flush=True)
        (rank_a, log_a), (rank_b, log_b) = (runs[k][0]["result"] for k in runs)
        print(
            f"  d* {rank_a} vs {rank_b}; log pseudo-determinant {log_a:.9g} vs {log_b:.9g} "
            f"(relative difference {_relative(log_a, log_b):.1e})"
        )
        base, fast = runs["baseline"], runs["per-layer"]
        for name, key in (
            (f"gram_speedup{suffix}", "seconds"),
            (f"gram_memory_ratio{suffix}", "peak"),
        ):
            headlines[name] = _summary(base, key)[0] / _summary(fast, key)[0]
    return headlines


def _per_sample_part(pool, *, n: int, device: str, repeats: int, calls: int) -> dict[str, float]:
    """Opacus against our per-sample gradients; the per_sample_vs_opacus headline."""
    runs = _compare(
        pool, "opacus", "ours", n=n, p=None, device=device, repeats=repeats, calls=calls
    )
    for path in ("opacus", "ours"):
        print(_row(f"per-sample gradients: {path}", runs[path]), flush=True)
    a, b = (runs[k][0]["result"] for k in runs)
    worst = max(_relative(x, y) for x, y in zip(a, b, strict=True))
    print(f"  projections G v agree to {worst:.1e} (largest relative difference)")
    opacus, ours = (_summary(runs[k], "seconds")[0] for k in ("opacus", "ours"))
    return {"per_sample_vs_opacus": opacus / ours}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 64, 2 runs per side")
    parser.add_argument("--n", type=int, default=256, help="samples (default 256)")
    parser.add_argument("--repeats", type=int, default=3, help="measured runs per side")
    parser.add_argument("--calls", type=int, default=2, help="timed calls per run")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    parser.add_argument(
        "--parts",
        nargs="+",
        choices=("gram", "per-sample"),
        default=["gram", "per-sample"],
        help="which comparisons to run (default both)",
    )
    args = parser.parse_args(argv)
    n, repeats = (64, 2) if args.quick else (args.n, args.repeats)
    print(
        f"# Conv-2 28x28 (6,603,710 parameters), n = {n}, device {args.device}, "
        f"torch {torch.__version__} with {torch.get_num_threads()} threads; "
        f"median [min, max] of {repeats} fresh-process runs per side, alternating, "
        f"each timing the median of {args.calls} warm calls"
    )
    print(f"{'case':<28} {'seconds':>9} {'':<14} {'peak GiB':>8}")
    headlines = {}
    sizes = {"n": n, "device": args.device, "repeats": repeats, "calls": args.calls}
    context = get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=context, max_tasks_per_child=1) as pool:
        if "gram" in args.parts:
            headlines.update(_gram_part(pool, **sizes))
        if "per-sample" in args.parts:
            headlines.update(_per_sample_part(pool, **sizes))
    for name, value in headlines.items():
        print(f"headline: {name} = {value:.2f} x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
