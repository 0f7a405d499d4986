"""Where does a strong mask-aware attack stop recovering the image? Identifiability of a
pruned update against the number of surviving gradient coordinates.

PriPrune (arXiv:2310.19958, appendix Fig. 8) notes that "even with a high pruning rate
of 0.9" the server reconstructs the data. A pruned FedSGD upload reveals the gradient on
its kept coordinates only: ``k`` numbers (the kept weights plus the biases, which are
never pruned) for ``n = B x C x H x W`` unknown pixels. Counting suggests the image stays
identifiable while ``k / n`` is comfortably above 1. This experiment measures where a
strong SGI actually breaks down:

* model: Conv-1 of :func:`sims.models.conv_net` with ``width`` (``width // 4`` sigmoid
  3x3 channels, average pooling, ``hidden = width`` units; ``width = 64`` is
  :data:`sims.attacks.DIGITS_ATTACK_MODEL`), freshly initialised, in float64 so that the
  round-off of ``(w - w_hat) / lr`` (float32: ``2**-24 |w| / (lr |g|)`` relative) does
  not stand in for a loss of information;
* data: the embedded digits, resized to ``image_size`` (bilinear, antialiased), in
  client batches of ``B``;
* update: one FedSGD step under a random mask at rate p, with the gradient taken at the
  pruned weights ``m ⊙ w`` (``"masked"``, PriPrune eq. (1) as :mod:`sims.fl` reads it)
  or at the dense ``w`` with only the upload pruned (``"dense"``);
* attack: SGI (:func:`sims.attacks.sgi_attack_batched`: mask from the zeros, masked
  pseudo-gradient, known labels), squared L2 matching, our batched L-BFGS with
  backtracking, all targets of a configuration in one batch;
* success: PSNR >= ``psnr_threshold`` (30 dB: a visually exact digit).

The two gradient points differ in kind. With ``"dense"`` the kept coordinates are a
random subset of the full gradient, and the breakdown follows the count ``k / n``. With
``"masked"`` the client's own forward pass runs the pruned network: once almost all of a
conv channel's 9 weights are pruned the channel no longer sees the image, and the
surviving coordinates carry far less than ``k`` numbers about it, so SGI fails at much
larger ``k / n``.

:func:`breakdown_ratio` fits a logistic curve of success against ``log10(k / n)`` per
gradient point and reports the ratio of 50 % success.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import product

import numpy as np
import torch

from pruneleak.bounds.progress import progress as show_progress
from pruneleak.bounds.validation import check_choice, check_distinct, check_int, check_real
from pruneleak.estimators.device import check_device, resolve_device
from pruneleak.estimators.image import score_reconstruction
from pruneleak.sims.attacks import AttackConfig, sgi_attack_batched
from pruneleak.sims.core.functional import check_lr
from pruneleak.sims.core.runtime import check_seed, fingerprint, seeded
from pruneleak.sims.data.datasets import load_digits_dataset, resize_images
from pruneleak.sims.fl.client import client_update
from pruneleak.sims.models import conv_net
from pruneleak.sims.pruning.mask import random_mask
from pruneleak.sims.store.keys import key_number
from pruneleak.sims.store.reconstructions import save_reconstructions
from pruneleak.sims.store.results import ResultStore

logger = logging.getLogger(__name__)

GRADIENT_POINTS = ("dense", "masked")
PRECISIONS = {"float32": torch.float32, "float64": torch.float64}


@dataclass(frozen=True)
class IdentifiabilityConfig:
    """The grid of the identifiability experiment (module docstring).

    Attributes:
        pruning_rates: distinct p values, each in [0, 1].
        widths: distinct Conv-1 widths (``width // 4`` channels, ``hidden = width``),
            each >= 4.
        image_sizes: distinct sides of the resized digits, each >= 3.
        batch_sizes: distinct client batch sizes B >= 1.
        gradient_points: subset of ``("dense", "masked")``, each once.
        targets: client batches attacked per configuration, >= 1.
        iterations: L-BFGS iterations per attack, >= 1.
        psnr_threshold: success threshold in dB, > 0.
        client_lr: the client's learning rate, > 0.
        precision: ``"float64"`` (default) or ``"float32"``.
        seed: seeds the model, masks, target choice and attacks, >= 0.
        device: ``"auto"``, ``"cpu"``, ``"cuda"``.
    """

    pruning_rates: tuple[float, ...] = (0.9, 0.97, 0.99, 0.995, 0.998, 0.999, 1.0)
    widths: tuple[int, ...] = (64,)
    image_sizes: tuple[int, ...] = (8,)
    batch_sizes: tuple[int, ...] = (1,)
    gradient_points: tuple[str, ...] = GRADIENT_POINTS
    targets: int = 4
    iterations: int = 300
    psnr_threshold: float = 30.0
    client_lr: float = 0.25
    precision: str = "float64"
    seed: int = 0
    device: str = "auto"

    def __post_init__(self) -> None:
        func = "IdentifiabilityConfig"
        for name in ("pruning_rates", "widths", "image_sizes", "batch_sizes", "gradient_points"):
            object.__setattr__(self, name, check_distinct(name, getattr(self, name), func=func))
        for name, low in (("widths", 4), ("image_sizes", 3), ("batch_sizes", 1)):
            values = getattr(self, name)
            if not values:
                raise ValueError(f"The '{name}' parameter of {func} must not be empty.")
            for value in values:
                check_int(name, value, func=func, low=low)
        if not self.pruning_rates:
            raise ValueError(f"The 'pruning_rates' parameter of {func} must not be empty.")
        for p in self.pruning_rates:
            check_real("pruning_rates", p, func=func, low=0, high=1)
        if not self.gradient_points:
            raise ValueError(f"The 'gradient_points' parameter of {func} must not be empty.")
        for point in self.gradient_points:
            check_choice("gradient_points", point, func=func, choices=GRADIENT_POINTS)
        check_int("targets", self.targets, func=func, low=1)
        check_int("iterations", self.iterations, func=func, low=1)
        check_real("psnr_threshold", self.psnr_threshold, func=func, low=0, low_inclusive=False)
        check_lr("client_lr", self.client_lr, func=func)
        check_choice("precision", self.precision, func=func, choices=tuple(PRECISIONS))
        check_seed(self.seed, func=func)
        check_device(self.device, func=func)

    def fingerprint(self) -> str:
        """Hash of the fields that change a job's numbers (not the grid, not the device)."""
        fields = ("targets", "iterations", "client_lr", "precision", "seed")
        return fingerprint({k: v for k, v in asdict(self).items() if k in fields})


def study_configs(scale: str) -> list[IdentifiabilityConfig]:
    """The grids of the notebook (``scale`` ``"quick"`` or ``"paper"``): one for the dense
    gradient across widths and image sizes (and B at paper scale) near its breakdown, one
    for the gradient at the pruned weights, whose breakdown comes at lower p."""
    check_choice("scale", scale, func="study_configs", choices=("quick", "paper"))
    if scale == "quick":
        return [
            IdentifiabilityConfig(
                pruning_rates=(0.99, 0.995, 0.998, 0.999, 1.0),
                widths=(32, 64),
                image_sizes=(6, 8),
                gradient_points=("dense",),
                targets=2,
                iterations=150,
            ),
            IdentifiabilityConfig(
                pruning_rates=(0.5, 0.9, 0.97, 0.99),
                gradient_points=("masked",),
                targets=2,
                iterations=150,
            ),
        ]
    return [
        IdentifiabilityConfig(
            pruning_rates=(0.9, 0.97, 0.99, 0.995, 0.997, 0.998, 0.999, 0.9995, 1.0),
            widths=(16, 32, 64, 128),
            image_sizes=(6, 8, 12, 16),
            batch_sizes=(1, 2, 4),
            gradient_points=("dense",),
            targets=8,
            iterations=500,
        ),
        IdentifiabilityConfig(
            pruning_rates=(0.3, 0.5, 0.7, 0.8, 0.9, 0.93, 0.95, 0.97, 0.99),
            widths=(16, 32, 64, 128),
            image_sizes=(8, 12),
            batch_sizes=(1, 2),
            gradient_points=("masked",),
            targets=8,
            iterations=500,
        ),
    ]


@dataclass(frozen=True)
class _Job:
    gradient_at: str
    width: int
    image_size: int
    batch_size: int
    p: float

    def key(self, fingerprint: str) -> str:
        return (
            f"identifiability/{fingerprint}/{self.gradient_at}/width={self.width}/"
            f"size={self.image_size}/B={self.batch_size}/p={key_number(self.p)}"
        )


def _jobs(config: IdentifiabilityConfig) -> list[_Job]:
    return [
        _Job(*values)
        for values in product(
            config.gradient_points,
            config.widths,
            config.image_sizes,
            config.batch_sizes,
            config.pruning_rates,
        )
    ]


def labelled_keys(config: IdentifiabilityConfig) -> list[tuple[str, str]]:
    """``(label, record key)`` of each configuration of the grid, in order: the label
    names the gradient point and p, and the width, image size and batch size when the
    grid has several (the kept reconstructions are filed under the record keys)."""
    fingerprint = config.fingerprint()
    several = {
        "width": len(config.widths) > 1,
        "size": len(config.image_sizes) > 1,
        "B": len(config.batch_sizes) > 1,
    }
    out = []
    for job in _jobs(config):
        values = {"width": job.width, "size": job.image_size, "B": job.batch_size}
        extra = "".join(f" {name}={values[name]}" for name, many in several.items() if many)
        out.append((f"{job.gradient_at} p={job.p:g}{extra}", job.key(fingerprint)))
    return out


def resized_digits(size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The digits as ``(N, 1, size, size)`` images in [0, 1] (bilinear, antialiased) and
    their labels."""
    data = load_digits_dataset()
    return resize_images(data.images, size), data.labels


def _run_job(config: IdentifiabilityConfig, job: _Job, reconstructions_dir, key: str) -> dict:
    device = resolve_device(config.device)
    dtype = PRECISIONS[config.precision]
    with seeded(config.seed):
        model = conv_net(
            1,
            in_channels=1,
            image_size=job.image_size,
            num_classes=10,
            width=job.width,
            hidden=job.width,
            activation="sigmoid",
            pooling="avg",
        ).to(device, dtype)
    weights = {n: t.detach() for n, t in model.named_parameters()}
    mask = random_mask(weights, job.p, seed=config.seed).to(device)
    images, labels = resized_digits(job.image_size)
    order = torch.randperm(len(images), generator=torch.Generator().manual_seed(config.seed))
    batches = order[: config.targets * job.batch_size].reshape(config.targets, job.batch_size)
    xs = [images[rows].to(device, dtype) for rows in batches]
    ys = [labels[rows].to(device) for rows in batches]
    sent = [
        client_update(model, weights, mask, x, y, lr=config.client_lr, gradient_at=job.gradient_at)
        for x, y in zip(xs, ys, strict=True)
    ]
    attack = AttackConfig.dlg(
        optimizer="lbfgs_backtracking", iterations=config.iterations, device=str(device)
    )
    results = sgi_attack_batched(
        model,
        weights,
        sent,
        lr=config.client_lr,
        batch_shape=tuple(xs[0].shape),
        num_classes=10,
        labels=ys,
        config=attack,
        gradient_at=job.gradient_at,
        seeds=[config.seed + k for k in range(config.targets)],
    )
    scores = [
        score_reconstruction(x.cpu().float(), r.images, chance_draws=1)
        for x, r in zip(xs, results, strict=True)
    ]
    psnrs = [float(np.mean(score["psnr"])) for score in scores]
    if reconstructions_dir is not None:
        originals = torch.cat([x.cpu().float() for x in xs])
        matched = torch.cat(
            [r.images[score["assignment"]] for r, score in zip(results, scores, strict=True)]
        )
        save_reconstructions(reconstructions_dir, key, originals, matched)
    kept = sum(int(k.sum()) for k in mask.keep.values())
    unknowns = job.batch_size * job.image_size**2
    return {
        "kind": "identifiability",
        **asdict(job),
        "parameters": sum(t.numel() for t in weights.values()),
        "kept": kept,
        "unknowns": unknowns,
        "ratio": kept / unknowns,
        "psnr_per_target": psnrs,
        "psnr": float(np.mean(psnrs)),
        "success_rate": float(np.mean([s >= config.psnr_threshold for s in psnrs])),
        "iterations": [r.iterations for r in results],
    }


def run_identifiability(
    config: IdentifiabilityConfig,
    store: ResultStore | None = None,
    *,
    progress: bool | None = None,
    reconstructions_dir=None,
) -> list[dict]:
    """Run every configuration of the grid (resuming from ``store`` when given; each
    finished configuration is appended to it) and return one record per configuration.
    With ``reconstructions_dir`` each configuration's targets and their reconstructions
    are kept there under its record's key (:mod:`sims.store.reconstructions`;
    :func:`sims.plots.identifiability.identifiability_reconstruction_rows`).

    Record fields: ``gradient_at``, ``width``, ``image_size``, ``batch_size``, ``p``,
    ``parameters``, ``kept`` (surviving gradient coordinates k), ``unknowns`` (n),
    ``ratio`` (k / n), ``psnr_per_target`` (dB), ``psnr``, ``success_rate`` (share of
    targets at or above ``psnr_threshold``), ``iterations`` (L-BFGS, per target).
    """
    if not isinstance(config, IdentifiabilityConfig):
        raise ValueError(
            f"The 'config' parameter of run_identifiability must be an "
            f"IdentifiabilityConfig. Got {type(config).__name__} instead."
        )
    fingerprint = config.fingerprint()
    jobs = _jobs(config)
    found = {} if store is None else {r["key"]: r for r in store.records()}
    records = []
    with show_progress(jobs, desc="identifiability", unit="config", enabled=progress) as bar:
        for job in bar:
            key = job.key(fingerprint)
            if key not in found:
                found[key] = {"key": key, **_run_job(config, job, reconstructions_dir, key)}
                if store is not None:
                    store.append(found[key])
            records.append(found[key])
    return records


def _logistic_midpoint(log_ratio: np.ndarray, success: np.ndarray) -> float | None:
    """``log10(k / n)`` of 50 % success by a maximum-likelihood logistic fit, or None when
    the data do not bracket a transition (all successes or all failures)."""
    from sklearn.linear_model import LogisticRegression

    if success.all() or not success.any():
        return None
    fit = LogisticRegression(C=np.inf).fit(log_ratio.reshape(-1, 1), success)  # no penalty
    slope, intercept = float(fit.coef_[0, 0]), float(fit.intercept_[0])
    return -intercept / slope if slope > 0 else None


def breakdown_ratio(
    records: Sequence[Mapping], *, psnr_threshold: float = 30.0
) -> dict[str, float | None]:
    """``k / n`` at which SGI succeeds for half of the targets, per gradient point.

    One observation per target: ``(log10(k / n), PSNR >= psnr_threshold)``, pooled over
    widths, image sizes and batch sizes; a logistic regression of success on the log
    ratio gives the midpoint. None when every target succeeded or every one failed.
    """
    check_real("psnr_threshold", psnr_threshold, func="breakdown_ratio", low=0)
    out = {}
    for point in sorted({r["gradient_at"] for r in records}):
        mine = [r for r in records if r["gradient_at"] == point]
        x = np.array([math.log10(r["ratio"]) for r in mine for _ in r["psnr_per_target"]])
        y = np.array([s >= psnr_threshold for r in mine for s in r["psnr_per_target"]])
        midpoint = _logistic_midpoint(x, y) if x.size else None
        out[point] = None if midpoint is None else float(10**midpoint)
    return out


def format_table(records: Sequence[Mapping], *, psnr_threshold: float = 30.0) -> str:
    """Plain-text table of the records and the breakdown ratios."""
    lines = [
        f"{'gradient':<8} {'width':>5} {'size':>4} {'B':>2} {'p':>7} {'kept k':>7} "
        f"{'k/n':>7} {'PSNR dB':>8} {'success':>7}"
    ]
    for r in sorted(
        records,
        key=lambda r: (r["gradient_at"], r["width"], r["image_size"], r["batch_size"], r["p"]),
    ):
        lines.append(
            f"{r['gradient_at']:<8} {r['width']:>5} {r['image_size']:>4} {r['batch_size']:>2} "
            f"{r['p']:>7.4f} {r['kept']:>7d} {r['ratio']:>7.2f} {r['psnr']:>8.1f} "
            f"{r['success_rate']:>7.2f}"
        )
    lines.append("")
    for point, ratio in breakdown_ratio(records, psnr_threshold=psnr_threshold).items():
        text = "not bracketed by the grid" if ratio is None else f"k/n = {ratio:.2f}"
        lines.append(f"breakdown ({point} gradient, {psnr_threshold:g} dB, 50 %): {text}")
    return "\n".join(lines)
