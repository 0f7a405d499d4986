"""ReLU / max pooling against sigmoid / average pooling: how well the attacks invert each.

The paper-scale configurations once replaced PriPrune's ReLU / max-pool networks by
sigmoid / average pooling, on the grounds that DLG-style attacks need the activation's
second derivative. This script measures whether that holds, attack by attack, on the
same images, weights (seed 0) and hyper-parameters for both networks of each pair:

* models: the digits attack model (``sims.attacks.DIGITS_ATTACK_MODEL``: one 3x3 conv,
  8x8 digits from scikit-learn) and PriPrune's Conv-2 (LEAF's FEMNIST CNN, 6,603,710
  weights, 62 outputs) on the LFW faces bundled with scikit-image, resized to 28x28 (the
  offline stand-in for FEMNIST; labels face / non-face);
* uploads: one FedSGD step on one image (client lr 0.25, PriPrune's), with the
  label known to the attacker;
* attacks: inverting gradients (``AttackConfig.inverting_gradients``: cosine + TV,
  signed Adam, boxed), unpruned; DLG (``AttackConfig.dlg``: squared distance with
  torch's strong-Wolfe L-BFGS), unpruned; SGI (PriPrune Algorithm 2 with the
  inverting-gradients configuration) under one random mask at p = 0.5.

Reported: PSNR (dB) of each image's reconstruction, their mean and median per (model,
attack, network). A bimodal row (some images recovered, others not) shows as a mean far
from the median.

    python benchmarks/relu_vs_sigmoid.py            # 4 images, 300 Adam / 100 L-BFGS iterations
    python benchmarks/relu_vs_sigmoid.py --quick    # 2 images, 50 / 20 iterations

The headlines are printed last, as ``headline: name = value unit`` (mean PSNR).
"""

from __future__ import annotations

import argparse
import logging
import statistics
from dataclasses import replace

import torch

from pruneleak.estimators.device import resolve_device
from pruneleak.estimators.image import psnr
from pruneleak.sims.attacks import DIGITS_ATTACK_MODEL, AttackConfig, sgi_attack, sgi_attack_batched
from pruneleak.sims.core.runtime import seeded
from pruneleak.sims.data.datasets import load_digits_dataset, load_faces, resize_images
from pruneleak.sims.fl.client import client_update
from pruneleak.sims.models import conv_net
from pruneleak.sims.pruning.mask import random_mask

CLIENT_LR = 0.25
SGI_RATE = 0.5
NETWORKS = {"relu": ("relu", "max"), "sigmoid": ("sigmoid", "avg")}
MODELS = ("digits", "conv2_faces")


def attacks(ig_iterations: int, dlg_iterations: int) -> dict[str, tuple[AttackConfig, float]]:
    """Each attack's configuration and the pruning rate of the upload it inverts."""
    ig = AttackConfig.inverting_gradients(iterations=ig_iterations)
    return {
        "IG": (ig, 0.0),
        "DLG L-BFGS": (AttackConfig.dlg(iterations=dlg_iterations), 0.0),
        f"SGI p={SGI_RATE}": (ig, SGI_RATE),
    }


def build(name: str, network: str, count: int, device):
    """The model (weights from seed 0) and ``count`` images with their labels."""
    activation, pooling = NETWORKS[network]
    if name == "digits":
        options = {**DIGITS_ATTACK_MODEL, "activation": activation, "pooling": pooling}
        with seeded(0):
            model = conv_net(in_channels=1, image_size=8, num_classes=10, **options)
        data = load_digits_dataset()
        images, labels = data.images[:count], data.labels[:count]
    else:
        with seeded(0):
            model = conv_net(
                2,
                in_channels=1,
                image_size=28,
                num_classes=62,
                activation=activation,
                pooling=pooling,
            )
        data = load_faces()
        # faces and non-faces alternate: the first count // 2 of each
        order = torch.cat([torch.nonzero(data.labels == c).flatten() for c in (1, 0)])
        picked = order.reshape(2, -1)[:, : (count + 1) // 2].T.flatten()[:count]
        images, labels = resize_images(data.images[picked], 28), data.labels[picked]
    return model.to(device), images.to(device), labels.to(device)


def run_attack(model, images, labels, config: AttackConfig, rate: float, device) -> list[float]:
    """PSNR (dB) of each image's reconstruction from its own one-image upload."""
    weights = {n: p.detach() for n, p in model.named_parameters()}
    mask = random_mask(weights, rate, seed=1).to(device)
    sent = [
        client_update(model, weights, mask, images[k : k + 1], labels[k : k + 1], lr=CLIENT_LR)
        for k in range(len(images))
    ]
    common = {
        "lr": CLIENT_LR,
        "batch_shape": (1, *images.shape[1:]),
        "num_classes": model.num_classes,
        "config": replace(config, device=str(device)),
    }
    one_by_one = [labels[k : k + 1] for k in range(len(images))]
    if config.optimizer == "lbfgs":  # torch's L-BFGS runs one attack at a time
        results = [
            sgi_attack(model, weights, s, labels=y, **common)
            for s, y in zip(sent, one_by_one, strict=True)
        ]
    else:
        seeds = list(range(len(images)))
        results = sgi_attack_batched(model, weights, sent, labels=one_by_one, seeds=seeds, **common)
    return [float(psnr(images[k : k + 1].cpu(), r.images)) for k, r in enumerate(results)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 images, few iterations")
    parser.add_argument("--device", default="cpu", help="cpu (default), cuda or auto")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    device = resolve_device(args.device)
    count, ig_its, dlg_its = (2, 50, 20) if args.quick else (4, 300, 100)
    print(f"device: {device}, torch {torch.__version__}, {count} images per row")
    print(f"{'model':<12} {'attack':<12} {'network':<8} {'mean dB':>8} {'median':>7}  per image")
    headlines = {}
    for name in MODELS:
        for attack, (config, rate) in attacks(ig_its, dlg_its).items():
            for network in NETWORKS:
                model, images, labels = build(name, network, count, device)
                values = run_attack(model, images, labels, config, rate, device)
                mean = statistics.fmean(values)
                shown = " ".join(f"{v:.1f}" for v in values)
                print(
                    f"{name:<12} {attack:<12} {network:<8} {mean:>8.1f} "
                    f"{statistics.median(values):>7.1f}  {shown}",
                    flush=True,
                )
                slug = attack.split()[0].lower()
                headlines[f"{slug}_{name}_{network}_psnr"] = mean
    for key, value in headlines.items():
        print(f"headline: {key} = {value:.2f} dB")


if __name__ == "__main__":
    main()
