"""Attack iterations against a plain inverting-gradients loop, and batched against sequential.

Two comparisons, both timed the same way (:func:`interleaved`): one warm-up call of
every side, then repetitions interleaved side by side (A B A B ...), each side timed at
two iteration counts ``n1 < n2``. Reported: the median wall time of a call at ``n2``
with its min-max over the repetitions, and the marginal cost per iteration,
``(t(n2) - t(n1)) / (n2 - n1)`` per repetition (median and min-max), which separates an
iteration from the fixed costs of a call (input checks, set-up, the final evaluation).

1. Inverting gradients (Geiping et al. 2020) of one image, ours against a reference:
   ``sims.attacks.invert_gradient`` with ``AttackConfig.inverting_gradients`` (cosine
   matching over all coordinates + ``tv_weight`` x anisotropic-mean TV, Adam on the
   sign of the image gradient, lr 0.1 dropped 10x at 3/8, 5/8 and 7/8 of the run, images
   clamped to [0, 1] after every step, known label, no mask) against
   :func:`reference_inverting_gradients`, an independent loop written here the way the
   ``breaching`` library runs the attack: the model's own ``nn.Parameter`` weights, a
   plain forward, ``torch.autograd.grad(loss, params, create_graph=True)``,
   ``torch.optim.Adam`` under ``MultiStepLR``. Same model, image, target gradient, start
   (``N(0, 1)`` from ``torch.Generator().manual_seed(seed)``), hyper-parameters and
   iterations, both returning their best point (lowest cosine distance, TV excluded);
   the largest pixel difference of the two reconstructions is printed. The two rank
   their points by float32 distances that differ by round-off, so on the plateau late
   in a run they may pick iterates far apart (digits, 200 iterations: 0.06, against
   2e-4 between the two last iterates), a difference of selection, not of the steps.
   Headline: reference time per iteration / ours (marginal costs), per model.
2. K SGI attacks (PriPrune Algorithm 2; one-image FedSGD uploads under one random mask
   at p = 0.5, client lr 0.25, the inverting-gradients configuration, seeds 0..K-1): K
   calls of ``sgi_attack`` against one ``sgi_attack_batched``. Headline: sequential
   wall time / batched wall time of the whole calls at ``n2`` iterations (median over
   the repetitions); the marginal costs are in the table. L-BFGS
   (``"lbfgs_backtracking"``, squared-L2 matching) is timed once per side at ``n2`` for
   the table only: it may stop early, so it has no marginal cost.

Models: the digits attack model (``sims.attacks.DIGITS_ATTACK_MODEL``, 8x8, 26,474
weights, a digit from scikit-learn's set) and FEMNIST's Conv-2 at 28x28 (6,603,710
weights, sigmoid + average pooling so that second derivatives exist; a uniform random
image). Everything runs in a process whose heap is tuned
(``sims.core.runtime.tune_process_heap``: glibc keeping freed blocks, as under the
command line) on one torch thread (``sims.core.runtime.torch_threads(1)``), both sides
alike, unless ``--device cuda``.

    python benchmarks/bench_attacks.py            # full run (see FULL)
    python benchmarks/bench_attacks.py --quick    # fewer iterations and repetitions (QUICK)

The headlines are printed last, as ``headline: name = value unit``.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import torch
from torch import nn

from pruneleak.estimators.device import resolve_device
from pruneleak.sims.attacks import (
    DIGITS_ATTACK_MODEL,
    AttackConfig,
    invert_gradient,
    sgi_attack,
    sgi_attack_batched,
)
from pruneleak.sims.attacks.optimizers import ADAM_GAMMA, ADAM_MILESTONES
from pruneleak.sims.core.runtime import seeded, torch_threads, tune_process_heap
from pruneleak.sims.data.datasets import load_digits_dataset
from pruneleak.sims.fl.client import client_update
from pruneleak.sims.models import conv_net
from pruneleak.sims.pruning.mask import random_mask

CLIENT_LR = 0.25  # PriPrune's client learning rate (arXiv:2310.19958)
PRUNING_RATE = 0.5
MODELS = ("digits", "conv2")


@dataclass(frozen=True)
class Settings:
    """Iteration counts ``(n1, n2)``, attacks K and repetitions of one run mode."""

    reps: int
    ig_iterations: dict[str, tuple[int, int]]
    batched_iterations: dict[str, tuple[int, int]]
    attacks: dict[str, int]


FULL = Settings(
    reps=5,
    ig_iterations={"digits": (100, 400), "conv2": (10, 60)},
    batched_iterations={"digits": (50, 200), "conv2": (10, 50)},
    attacks={"digits": 16, "conv2": 8},
)
QUICK = Settings(
    reps=3,
    ig_iterations={"digits": (50, 200), "conv2": (5, 20)},
    batched_iterations={"digits": (25, 100), "conv2": (2, 8)},
    attacks={"digits": 16, "conv2": 4},
)


def build(name: str, count: int, device: torch.device):
    """The model (weights from seed 0) and ``count`` one-image batches ``(x, y)``."""
    if name == "digits":
        with seeded(0):
            model = conv_net(in_channels=1, image_size=8, num_classes=10, **DIGITS_ATTACK_MODEL)
        data = load_digits_dataset()
        images, labels = data.images[:count], data.labels[:count]
    else:
        with seeded(0):
            model = conv_net(
                2, in_channels=1, image_size=28, num_classes=62, activation="sigmoid", pooling="avg"
            )
        generator = torch.Generator().manual_seed(0)
        images = torch.rand(count, 1, 28, 28, generator=generator)
        labels = torch.randint(0, 62, (count,), generator=generator)
    model = model.to(device)
    return model, [
        (images[k : k + 1].to(device), labels[k : k + 1].to(device)) for k in range(count)
    ]


def reference_inverting_gradients(model, target, image_shape, label, config, device):
    """Inverting gradients as a plain loop (module docstring, comparison 1).

    ``target`` is the observed gradient, one tensor per ``model.parameters()`` entry;
    ``config`` supplies lr, tv_weight, iterations and seed. Returns the point with the
    lowest cosine distance (TV excluded) among every iterate and the final point, as
    ``breaching`` keeps its best candidate (CPU).
    """
    params = list(model.parameters())
    target_norm = torch.stack([(t * t).sum() for t in target]).sum().sqrt()
    start = torch.randn(image_shape, generator=torch.Generator().manual_seed(config.seed))
    x = start.to(device).requires_grad_(True)
    optimizer = torch.optim.Adam([x], lr=config.lr)
    milestones = [int(config.iterations * f) for f in ADAM_MILESTONES]
    schedule = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones, gamma=ADAM_GAMMA)

    def cosine_distance(create_graph: bool):
        loss = nn.functional.cross_entropy(model(x), label)
        dummy = torch.autograd.grad(loss, params, create_graph=create_graph)
        dot = sum((g * t).sum() for g, t in zip(dummy, target, strict=True))
        dummy_norm = sum((g * g).sum() for g in dummy).sqrt()
        return 1 - dot / (dummy_norm * target_norm)

    best, best_distance = x.detach().clone(), torch.tensor(float("inf"), device=device)

    def keep_best(distance):
        nonlocal best, best_distance
        better = distance.detach() < best_distance
        best = torch.where(better, x.detach(), best)
        best_distance = torch.where(better, distance.detach(), best_distance)

    for _ in range(config.iterations):
        optimizer.zero_grad()
        distance = cosine_distance(create_graph=True)
        keep_best(distance)
        tv = (x[..., :, 1:] - x[..., :, :-1]).abs().mean() + (
            x[..., 1:, :] - x[..., :-1, :]
        ).abs().mean()
        objective = distance + config.tv_weight * tv
        (x.grad,) = torch.autograd.grad(objective, [x])
        x.grad.sign_()
        optimizer.step()
        schedule.step()
        with torch.no_grad():
            x.clamp_(0.0, 1.0)
    keep_best(cosine_distance(create_graph=False))
    return best.cpu()


def interleaved(sides: dict[str, Callable[[int], object]], counts, reps: int, device):
    """``{(side, count): [seconds per repetition]}``: a warm-up call of every side at
    ``counts[0]``, then ``reps`` rounds, each calling every side at every count in turn."""

    def timed(call, count):
        start = time.perf_counter()
        call(count)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        return time.perf_counter() - start

    for call in sides.values():
        timed(call, counts[0])
    times = {(side, n): [] for side in sides for n in counts}
    for _ in range(reps):
        for n in counts:
            for side, call in sides.items():
                times[side, n].append(timed(call, n))
    return times


def summary(times, side, counts) -> dict:
    """Median and min-max of the wall time at ``counts[1]`` and of the marginal cost per
    iteration (per repetition, as in the module docstring)."""
    n1, n2 = counts
    wall = times[side, n2]
    marginal = [(b - a) / (n2 - n1) for a, b in zip(times[side, n1], wall, strict=True)]
    return {
        "wall": (statistics.median(wall), min(wall), max(wall)),
        "marginal": (statistics.median(marginal), min(marginal), max(marginal)),
    }


def compare_ig(name: str, settings: Settings, device) -> dict:
    """Comparison 1 on one model: summaries of both sides and the pixel difference."""
    model, ((x, y),) = build(name, 1, device)
    params = list(model.parameters())
    loss = nn.functional.cross_entropy(model(x), y)
    target = [g.detach() for g in torch.autograd.grad(loss, params)]
    weights = {n: p.detach() for n, p in model.named_parameters()}
    target_dict = dict(zip(weights, target, strict=True))
    config = AttackConfig.inverting_gradients(device=str(device))
    shape = tuple(x.shape)
    common = {"batch_shape": shape, "num_classes": model.num_classes, "labels": y}

    def ours(n):
        return invert_gradient(
            model, weights, target_dict, config=replace(config, iterations=n), **common
        ).images

    def reference(n):
        return reference_inverting_gradients(
            model, target, shape, y, replace(config, iterations=n), device
        )

    counts = settings.ig_iterations[name]
    times = interleaved({"ours": ours, "reference": reference}, counts, settings.reps, device)
    difference = float((ours(counts[1]) - reference(counts[1])).abs().max())
    return {
        "ours": summary(times, "ours", counts),
        "reference": summary(times, "reference", counts),
        "counts": counts,
        "max_diff": difference,
    }


def compare_batched(name: str, settings: Settings, device) -> dict:
    """Comparison 2 on one model: summaries, pixel difference, and one L-BFGS run."""
    count = settings.attacks[name]
    model, rows = build(name, count, device)
    weights = {n: p.detach() for n, p in model.named_parameters()}
    mask = random_mask(weights, PRUNING_RATE, seed=1).to(device)
    sent = [client_update(model, weights, mask, x, y, lr=CLIENT_LR) for x, y in rows]
    labels = [y for _, y in rows]
    shape = tuple(rows[0][0].shape)
    common = {"lr": CLIENT_LR, "batch_shape": shape, "num_classes": model.num_classes}

    def sequential(config):
        return [
            sgi_attack(model, weights, s, labels=y, config=replace(config, seed=k), **common)
            for k, (s, y) in enumerate(zip(sent, labels, strict=True))
        ]

    def batched(config):
        seeds = list(range(count))
        return sgi_attack_batched(
            model, weights, sent, labels=labels, config=config, seeds=seeds, **common
        )

    config = AttackConfig.inverting_gradients(device=str(device))
    counts = settings.batched_iterations[name]
    sides = {
        "sequential": lambda n: sequential(replace(config, iterations=n)),
        "batched": lambda n: batched(replace(config, iterations=n)),
    }
    times = interleaved(sides, counts, settings.reps, device)
    final = replace(config, iterations=counts[1])
    difference = max(
        float((a.images - b.images).abs().max())
        for a, b in zip(sequential(final), batched(final), strict=True)
    )
    lbfgs = AttackConfig.dlg(optimizer="lbfgs_backtracking", iterations=counts[1])
    lbfgs = replace(lbfgs, device=str(device))
    wall = {}
    for side, call in (("sequential", sequential), ("batched", batched)):
        start = time.perf_counter()
        results = call(lbfgs)
        wall[side] = (time.perf_counter() - start, sum(r.iterations for r in results))
    return {
        "sequential": summary(times, "sequential", counts),
        "batched": summary(times, "batched", counts),
        "counts": counts,
        "attacks": count,
        "max_diff": difference,
        "lbfgs": wall,
    }


def _pair(counts) -> str:
    return f"{counts[0]},{counts[1]}"


def _ms(triple) -> str:
    median, low, high = (1e3 * v for v in triple)
    return f"{median:9.2f} [{low:.2f}-{high:.2f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="QUICK settings (< 4 minutes)")
    parser.add_argument("--device", default="cpu", help="cpu (default), cuda or auto")
    args = parser.parse_args()
    tune_process_heap()
    logging.basicConfig(level=logging.WARNING)
    device = resolve_device(args.device)
    settings = QUICK if args.quick else FULL
    print(
        f"device: {device}, torch {torch.__version__}, one intra-op thread, "
        f"{'QUICK' if args.quick else 'FULL'}: {settings}"
    )
    headlines = {}
    with torch_threads(1):
        print("\n1. inverting gradients, one image: ours vs the reference loop")
        print(
            f"{'model':<7} {'side':<10} {'n1,n2':>8} {'call at n2, ms [min-max]':>30} "
            f"{'per iteration, ms [min-max]':>30} {'max |dx|':>9}"
        )
        for name in MODELS:
            row = compare_ig(name, settings, device)
            for side in ("ours", "reference"):
                s = row[side]
                print(
                    f"{name:<7} {side:<10} {_pair(row['counts']):>8} {_ms(s['wall']):>30} "
                    f"{_ms(s['marginal']):>30} {row['max_diff']:>9.1e}",
                    flush=True,
                )
            ratio = row["reference"]["marginal"][0] / row["ours"]["marginal"][0]
            headlines[f"ig_speed_vs_reference_{name}"] = ratio
        headlines["ig_speed_vs_reference"] = min(
            headlines[f"ig_speed_vs_reference_{name}"] for name in MODELS
        )

        print("\n2. K SGI attacks (inverting-gradients configuration): sequential vs batched")
        print(
            f"{'model':<7} {'side':<10} {'K':>3} {'n1,n2':>8} {'call at n2, ms [min-max]':>30} "
            f"{'per iteration, ms [min-max]':>30} {'L-BFGS s (iters)':>17}"
        )
        for name in MODELS:
            row = compare_batched(name, settings, device)
            for side in ("sequential", "batched"):
                s, (seconds, iterations) = row[side], row["lbfgs"][side]
                print(
                    f"{name:<7} {side:<10} {row['attacks']:>3} {_pair(row['counts']):>8} "
                    f"{_ms(s['wall']):>30} {_ms(s['marginal']):>30} "
                    f"{seconds:>8.2f} ({iterations:>5})",
                    flush=True,
                )
            print(f"        max |dx| sequential vs batched (Adam, n2): {row['max_diff']:.1e}")
            speedup = row["sequential"]["wall"][0] / row["batched"]["wall"][0]
            headlines[f"batched_speedup_{'small' if name == 'digits' else name}"] = speedup
    print(
        "\nper iteration: marginal cost (t(n2) - t(n1)) / (n2 - n1) of one call (all K attacks "
        "in part 2). max |dx|: largest pixel difference of the reconstructions (batched "
        "signed Adam: kernel round-off can flip a sign, see sims.attacks.inversion)."
    )
    for key, value in headlines.items():
        print(f"headline: {key} = {value:.2f} x")


if __name__ == "__main__":
    main()
