"""Time K gradient inversions run one after the other against the same K run batched.

Both sides run the same attack (SGI, squared-L2 matching; Adam or our backtracking
L-BFGS) with the same seeds on the same uploads: K one-image FedSGD updates under one
random mask at p = 0.5, client lr 0.25. The sequential side calls
``sims.attacks.sgi_attack`` K times, the batched side ``sgi_attack_batched`` once. The
whole run is inside ``sims.core.runtime.cpu_tuning(threads=1)``: one torch thread (a
second mostly adds synchronisation on a shared host) and glibc keeping freed blocks, for
both sides alike; the library itself changes neither. Throughput is attack iterations
per second: K x iterations / wall time.

Models: the digits attack model (8x8, 26,474 weights) and FEMNIST's Conv-2 at 28x28
(6.6 million weights, sigmoid + average pooling so that DLG's second derivatives exist).

    python benchmarks/bench_attacks.py            # K = 16, 100 (digits) / 5 (Conv-2) iterations
    python benchmarks/bench_attacks.py --quick    # 50 / 3 iterations, K = 8 on Conv-2 (< 3 min)

Ends with ``headline: batched_speedup = <ratio> x``: sequential time / batched time for
K = 16 Adam attacks on the digits model (the acceptance case of the attack study).
"""

from __future__ import annotations

import argparse
import logging
import time
from dataclasses import dataclass, replace

import torch

from estimators.device import resolve_device
from sims.attacks import (
    DIGITS_ATTACK_MODEL,
    AttackConfig,
    sgi_attack,
    sgi_attack_batched,
)
from sims.core.runtime import cpu_tuning, seeded
from sims.data.datasets import load_digits_dataset
from sims.fl.client import client_update
from sims.models import conv_net
from sims.pruning.mask import random_mask

CLIENT_LR = 0.25


@dataclass(frozen=True)
class Case:
    model: str
    optimizer: str
    attacks: int
    iterations: int


def build(model_name: str, attacks: int, device: torch.device):
    """Model, broadcast weights, K uploads, labels and batch shape of one benchmark case."""
    if model_name == "digits":
        with seeded(0):
            model = conv_net(in_channels=1, image_size=8, num_classes=10, **DIGITS_ATTACK_MODEL)
        data = load_digits_dataset()
        images, labels = data.images[:attacks], data.labels[:attacks]
    else:
        with seeded(0):
            model = conv_net(
                2, in_channels=1, image_size=28, num_classes=62, activation="sigmoid", pooling="avg"
            )
        generator = torch.Generator().manual_seed(0)
        images = torch.rand(attacks, 1, 28, 28, generator=generator)
        labels = torch.randint(0, 62, (attacks,), generator=generator)
    model = model.to(device)
    weights = {n: p.detach() for n, p in model.named_parameters()}
    mask = random_mask(weights, 0.5, seed=1).to(device)
    rows = [(images[k : k + 1].to(device), labels[k : k + 1].to(device)) for k in range(attacks)]
    sent = [client_update(model, weights, mask, x, y, lr=CLIENT_LR) for x, y in rows]
    shape = tuple(images[:1].shape)
    return model, weights, sent, [y for _, y in rows], shape, model.num_classes


def run_case(case: Case, device: torch.device) -> dict:
    model, weights, sent, labels, shape, classes = build(case.model, case.attacks, device)
    lr = 0.1 if case.optimizer == "adam" else 1.0
    config = AttackConfig(
        loss="l2",
        optimizer=case.optimizer,
        lr=lr,
        iterations=case.iterations,
        device=str(device),
    )
    common = {"lr": CLIENT_LR, "batch_shape": shape, "num_classes": classes}
    seeds = list(range(case.attacks))

    start = time.perf_counter()
    sequential = [
        sgi_attack(model, weights, s, labels=y, config=replace(config, seed=k), **common)
        for k, (s, y) in enumerate(zip(sent, labels, strict=True))
    ]
    t_seq = time.perf_counter() - start
    start = time.perf_counter()
    batched = sgi_attack_batched(
        model, weights, sent, labels=labels, config=config, seeds=seeds, **common
    )
    t_bat = time.perf_counter() - start
    # Adam runs every iteration; L-BFGS may stop early: count the iterations run.
    work_seq = sum(r.iterations for r in sequential)
    work_bat = sum(r.iterations for r in batched)
    difference = max(
        float((a.images - b.images).abs().max()) for a, b in zip(sequential, batched, strict=True)
    )
    return {
        "case": case,
        "t_seq": t_seq,
        "t_bat": t_bat,
        "its_seq": work_seq / t_seq,
        "its_bat": work_bat / t_bat,
        "speedup": t_seq / t_bat,
        "max_diff": difference,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations (< 3 minutes)")
    parser.add_argument("--attacks", type=int, default=16, help="K, attacks per batch")
    parser.add_argument("--device", default="cpu", help="cpu (default), cuda or auto")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    device = resolve_device(args.device)
    k = args.attacks
    digits_iterations = 50 if args.quick else 100
    conv2_attacks = min(k, 8) if args.quick else k
    cases = [
        Case("digits", "adam", k, digits_iterations),
        Case("digits", "lbfgs_backtracking", k, digits_iterations),
        Case("conv2-28x28", "adam", conv2_attacks, 3 if args.quick else 5),
    ]
    print(f"device: {device}, torch {torch.__version__}, intra-op threads during attacks: 1")
    header = (
        f"{'model':<12} {'optimizer':<19} {'K':>3} {'iters':>5} {'seq s':>8} {'batch s':>8} "
        f"{'seq it/s':>9} {'batch it/s':>10} {'speedup':>8} {'max |dx|':>9}"
    )
    print(header)
    print("-" * len(header))
    rows = []
    with cpu_tuning(threads=1):
        for case in cases:
            row = run_case(case, device)
            rows.append(row)
            print(
                f"{case.model:<12} {case.optimizer:<19} {case.attacks:>3} {case.iterations:>5} "
                f"{row['t_seq']:>8.2f} {row['t_bat']:>8.2f} {row['its_seq']:>9.1f} "
                f"{row['its_bat']:>10.1f} {row['speedup']:>7.2f}x {row['max_diff']:>9.1e}",
                flush=True,
            )
    print(
        "max |dx|: largest pixel difference between the sequential and batched "
        "reconstructions (L-BFGS: trajectories part after round-off, see sims.attacks.inversion)."
    )
    conv2 = rows[2]
    print(f"headline: batched_speedup_conv2_28x28 = {conv2['speedup']:.2f} x")
    print(f"headline: batched_speedup = {rows[0]['speedup']:.2f} x")


if __name__ == "__main__":
    main()
