"""SGI with the dummy gradient masked (ours) against PriPrune Algorithm 2 line 7 as printed.

PriPrune's Algorithm 2 (arXiv:2310.19958) line 7 masks only the target gradient: it
matches the whole dummy gradient ``g'`` against ``m ⊙ g``. Our SGI matches ``m ⊙ g'``
against ``m ⊙ g`` (deviation 5 in :mod:`sims.attacks.attack`; ``AttackConfig.mask_dummy``).
This script measures what the difference costs the attack: one-image FedSGD uploads of
the first ``--images`` digits (scikit-learn's 8x8 set) from the digits attack model
(:data:`sims.attacks.DIGITS_ATTACK_MODEL`, weights from seed 0) under one random mask at
p = 0.5 (seed 1), client lr 0.25 (PriPrune's), attacked by ``sgi_attack_batched`` with
``AttackConfig.inverting_gradients()`` (cosine + TV, signed boxed Adam, 300 iterations,
known labels, the start of seed k for image k), once with ``mask_dummy=True`` and once
with ``mask_dummy=False``. Printed: the PSNR (dB, against the client's image) of every
image under both, and the means as ``headline: name = value dB``.

    python benchmarks/sgi_masking.py [--images 8] [--iterations 300] [--device cpu]
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from pruneleak.estimators.device import resolve_device
from pruneleak.estimators.image import psnr
from pruneleak.sims.attacks import DIGITS_ATTACK_MODEL, AttackConfig, sgi_attack_batched
from pruneleak.sims.core.runtime import seeded, torch_threads, tune_process_heap
from pruneleak.sims.data.datasets import load_digits_dataset
from pruneleak.sims.fl.client import client_update
from pruneleak.sims.models import conv_net
from pruneleak.sims.pruning.mask import random_mask

CLIENT_LR = 0.25  # PriPrune's client learning rate (arXiv:2310.19958)
PRUNING_RATE = 0.5


def run(images: int, iterations: int, device: str) -> dict[str, list[float]]:
    """PSNR (dB) per image of SGI with the dummy gradient masked and as printed."""
    with seeded(0):
        model = conv_net(in_channels=1, image_size=8, num_classes=10, **DIGITS_ATTACK_MODEL)
    model = model.to(resolve_device(device))
    weights = {n: t.detach() for n, t in model.named_parameters()}
    digits = load_digits_dataset()
    mask = random_mask(weights, PRUNING_RATE, seed=1)
    batches = [(digits.images[k : k + 1], digits.labels[k : k + 1]) for k in range(images)]
    uploads = [client_update(model, weights, mask, x, y, lr=CLIENT_LR) for x, y in batches]
    base = AttackConfig.inverting_gradients(iterations=iterations, device=device)
    scores = {}
    for name, masked in (("masked", True), ("literal", False)):
        results = sgi_attack_batched(
            model,
            weights,
            uploads,
            lr=CLIENT_LR,
            batch_shape=(1, 1, 8, 8),
            num_classes=10,
            labels=[y for _, y in batches],
            config=replace(base, mask_dummy=masked),
            seeds=list(range(images)),
        )
        scores[name] = [psnr(x, r.images) for (x, _), r in zip(batches, results, strict=True)]
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--images", type=int, default=8)
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    tune_process_heap()
    with torch_threads(1):
        scores = run(args.images, args.iterations, args.device)
    print(f"SGI at p = {PRUNING_RATE}, digits attack model, {args.iterations} iterations")
    print("| image | masked dummy (ours) PSNR dB | literal line 7 PSNR dB |")
    print("|---|---|---|")
    for k, (a, b) in enumerate(zip(scores["masked"], scores["literal"], strict=True)):
        print(f"| {k} | {a:.1f} | {b:.1f} |")
    means = {name: sum(v) / len(v) for name, v in scores.items()}
    print(f"headline: sgi_masked_psnr = {means['masked']:.1f} dB")
    print(f"headline: sgi_literal_psnr = {means['literal']:.1f} dB")


if __name__ == "__main__":
    main()
