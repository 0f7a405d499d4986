r"""The study of :mod:`sims.experiments.prune_vs_noise`: its configuration, the run, the
summary table, the paired comparison of pruning with noise and the verdict.
"""

from __future__ import annotations

import copy
import logging
import math
import time
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from pruneleak.bounds.progress import progress as show_progress
from pruneleak.bounds.validation import check_choice, check_int, check_real
from pruneleak.estimators.device import check_device, resolve_device
from pruneleak.sims.core.functional import check_lr
from pruneleak.sims.core.runtime import check_seed, seeded
from pruneleak.sims.core.scale import SCALES
from pruneleak.sims.data.datasets import available_datasets, load_train_test, resize_images
from pruneleak.sims.experiments.prune_vs_noise.inversion import (
    METRICS,
    invert_representation,
    score_inversions,
)
from pruneleak.sims.experiments.prune_vs_noise.representation import (
    LAYERS,
    conv_layer_names,
    laplace_noise,
    match_noise_scale,
    split_at_layer,
)
from pruneleak.sims.fl.server import evaluate
from pruneleak.sims.models import VGG_BASE_WIDTH, VGG_CONFIGS, lenet5, vgg
from pruneleak.sims.pruning.mask import Mask
from pruneleak.sims.pruning.schedule import OPTIMIZERS, CubicSchedule, train_sgd

logger = logging.getLogger(__name__)

# Leakage conditions: the undefended dense network, Laplace noise, and pruning attacked
# with the public dense Phi (Section 4.2) or with the pruned weights.
CONDITIONS = ("none", "noise", "prune_public", "prune_informed")
PRUNE_CONDITIONS = ("prune_public", "prune_informed")
# The paper's four similarity metrics (Section 4.2), Figure 6's panels (a)-(d).
PAPER_METRICS = ("ssim", "sift", "phash", "infe")
# The metrics whose calls vote on the overall verdict. SIFT is called but does not vote:
# three voters cannot tie, and SIFT rests on a handful of keypoints per image (3-13 on
# 28x28 digits) and is undefined on images without any.
VOTING_METRICS = ("ssim", "phash", "infe")
PAPER_SPARSITIES = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99)
QUICK_SPARSITIES = (0.5, 0.8, 0.9, 0.95, 0.98)
# Figure 7's quick arm: two sparsities, one where VGG-19 keeps its accuracy on CIFAR-10
# (Section 4.3: up to 0.8) and one beyond.
FIG7_QUICK_SPARSITIES = (0.5, 0.9)
# The networks of Section 4.1 -> the names of their layers that can be released:
# LeNet-5 (MNIST, Figure 6) and VGG-19 (CIFAR-10, Figure 7).
MODELS = {"lenet5": tuple(LAYERS), "vgg19": conv_layer_names(VGG_CONFIGS[19][0])}
# run_prune_vs_noise warns when the dense model closes less than half of the gap between
# chance and perfect test accuracy (a dead or diverged network).
_MIN_LEARNED = 0.5


@dataclass(frozen=True)
class PruneVsNoiseConfig:
    """Configuration of :func:`run_prune_vs_noise` (see the module docstring).

    Attributes:
        dataset: ``"digits"`` or ``"patches"`` (embedded) or a file data set of
            :mod:`sims.data` (``"mnist"`` or ``"cifar10"`` as in the paper, with
            ``data_dir``).
        data_dir: directory of the data files (not needed for digits and patches).
        image_size: images are resized (bilinear) to this side when they differ from it.
        sparsities: target sparsities :math:`k_T` in (0, 1), increasing.
        model: a key of :data:`MODELS`: ``"lenet5"`` (Figure 6) or ``"vgg19"``
            (Figure 7; :func:`sims.models.vgg` with depth 19, He-initialised).
        width: VGG-19's first-block channels (the paper's is 64; every conv width
            scales with it); not used by LeNet-5.
        layer: the released layer, one of the model's names in :data:`MODELS`
            (``"c5"`` as in Figure 6, ``"conv5_1"`` as in Figure 7).
        after_activation: release the layer's output after its ReLU instead of before.
        train_epochs: epochs of the dense training stage.
        prune_epochs: epochs of the pruning stage (also given to the dense model).
        prune_updates: :math:`n`, mask updates of the cubic schedule after :math:`t_0`.
        ramp_fraction: fraction of the pruning stage over which the schedule ramps.
        batch_size, lr, momentum: SGD settings (Table 2: 64, 0.1, 0.9; 0.1 diverges on
            digits, hence 0.03).
        optimizer: ``"sgd"`` (Table 2 for MNIST) or ``"adam"`` (Table 2 for CIFAR-10,
            learning rate 0.001; ``momentum`` unused).
        test_fraction: held-out fraction for data sets without a test split (digits).
        accuracy_tolerance: accepted gap between pruned and noisy accuracy.
        num_images: test images attacked (Section 4.3 uses 100).
        attack_iterations, attack_lr, tv_weight: settings of
            :func:`invert_representation`.
        seed: seeds the split, the initialisation, the minibatches, the noise, the attacked
            images and the attack.
        device: ``"auto"``, ``"cpu"``, ``"cuda"`` ...
    """

    dataset: str = "digits"
    data_dir: str | None = None
    image_size: int = 28
    sparsities: tuple[float, ...] = QUICK_SPARSITIES
    model: str = "lenet5"
    width: int = VGG_BASE_WIDTH
    layer: str = "c5"
    after_activation: bool = False
    train_epochs: int = 10
    prune_epochs: int = 5
    prune_updates: int = 8
    ramp_fraction: float = 0.75
    batch_size: int = 64
    lr: float = 0.03
    momentum: float = 0.9
    optimizer: str = "sgd"
    test_fraction: float = 0.2
    accuracy_tolerance: float = 0.01
    num_images: int = 16
    attack_iterations: int = 200
    attack_lr: float = 0.1
    tv_weight: float = 0.1
    seed: int = 0
    device: str = "auto"

    def __post_init__(self) -> None:
        func = "PruneVsNoiseConfig"
        check_choice("dataset", self.dataset, func=func, choices=available_datasets())
        check_int("image_size", self.image_size, func=func, low=8)
        sparsities = tuple(
            check_real(
                "sparsities", k, func=func, low=0, high=1, low_inclusive=False, high_inclusive=False
            )
            for k in self.sparsities
        )
        if not sparsities or list(sparsities) != sorted(set(sparsities)):
            raise ValueError(
                f"The 'sparsities' parameter of {func} must be a non-empty increasing tuple "
                f"in (0, 1). Got {self.sparsities!r} instead."
            )
        object.__setattr__(self, "sparsities", sparsities)
        check_choice("model", self.model, func=func, choices=tuple(MODELS))
        check_int("width", self.width, func=func, low=1)
        check_choice("layer", self.layer, func=func, choices=MODELS[self.model])
        check_choice("optimizer", self.optimizer, func=func, choices=OPTIMIZERS)
        check_choice("after_activation", self.after_activation, func=func, choices=(False, True))
        for name in (
            "train_epochs",
            "prune_epochs",
            "prune_updates",
            "batch_size",
            "num_images",
            "attack_iterations",
        ):
            check_int(name, getattr(self, name), func=func, low=1)
        check_real(
            "ramp_fraction", self.ramp_fraction, func=func, low=0, high=1, low_inclusive=False
        )
        for name in ("lr", "attack_lr"):
            check_lr(name, getattr(self, name), func=func)
        check_real("momentum", self.momentum, func=func, low=0, high=1, high_inclusive=False)
        for name in ("test_fraction", "accuracy_tolerance"):
            check_real(
                name,
                getattr(self, name),
                func=func,
                low=0,
                high=1,
                low_inclusive=False,
                high_inclusive=False,
            )
        check_real("tv_weight", self.tv_weight, func=func, low=0)
        check_seed(self.seed, func=func)
        check_device(self.device, func=func)

    @classmethod
    def for_scale(cls, scale: str, *, data_dir: str | None = None, **overrides):
        """The notebook's configuration at ``scale`` (``"quick"`` or ``"paper"``).

        ``quick``: digits, 10 + 5 epochs, the sparsities of :data:`QUICK_SPARSITIES`, 16
        images, 200 attack steps. ``paper``: MNIST from ``data_dir`` when given (Table 2's
        20 epochs, split 10 + 10), else digits with 60 + 30 epochs (digits has 23
        minibatches per epoch, MNIST 938); the eight sparsities of
        :data:`PAPER_SPARSITIES`, 100 images (Section 4.3) and 2000 attack steps.
        ``overrides`` replace any field.
        """
        check_choice("scale", scale, func="PruneVsNoiseConfig.for_scale", choices=SCALES)
        if scale == "quick":
            return cls(**overrides)
        fields = {"sparsities": PAPER_SPARSITIES, "num_images": 100, "attack_iterations": 2000}
        if data_dir is not None:
            fields.update(dataset="mnist", data_dir=str(data_dir), train_epochs=10, prune_epochs=10)
        else:
            fields.update(train_epochs=60, prune_epochs=30)
        return cls(**{**fields, **overrides})

    @classmethod
    def figure7_for_scale(cls, scale: str, *, data_dir: str | None = None, **overrides):
        """Figure 7's configuration at ``scale``: VGG-19 released at ``"conv5_1"``, Adam at
        Table 2's learning rate 0.001 and batch 64.

        ``quick`` (CPU minutes): scikit-image's 32x32 RGB photograph patches
        (:func:`sims.data.datasets.load_patches`, 4 classes, 604 training images) as the
        stand-in for CIFAR-10, VGG-19 at ``width=8`` (every conv width / 8: 614,738
        parameters), 12 + 2 epochs, the sparsities of :data:`FIG7_QUICK_SPARSITIES`, 8
        images and 50 attack steps. ``paper``: the full VGG-19 (``width=64``) on CIFAR-10
        from ``data_dir`` when given (Table 2's 200 epochs, split 100 + 100), else on the
        patches with 100 + 50 epochs; the eight sparsities of :data:`PAPER_SPARSITIES`,
        100 images (Section 4.3) and 2000 attack steps. ``overrides`` replace any field.
        """
        check_choice("scale", scale, func="PruneVsNoiseConfig.figure7_for_scale", choices=SCALES)
        fields = {
            "dataset": "patches",
            "image_size": 32,
            "model": "vgg19",
            "layer": "conv5_1",
            "optimizer": "adam",
            "lr": 0.001,
        }
        if scale == "quick":
            fields.update(
                width=8,
                train_epochs=12,
                prune_epochs=2,
                sparsities=FIG7_QUICK_SPARSITIES,
                num_images=8,
                attack_iterations=50,
            )
        else:
            fields.update(sparsities=PAPER_SPARSITIES, num_images=100, attack_iterations=2000)
            if data_dir is not None:
                fields.update(
                    dataset="cifar10", data_dir=str(data_dir), train_epochs=100, prune_epochs=100
                )
            else:
                fields.update(train_epochs=100, prune_epochs=50)
        return cls(**{**fields, **overrides})

    def schedule(self, final: float, num_train: int) -> CubicSchedule:
        """The cubic schedule of the pruning stage for ``num_train`` training images:
        :math:`t_0 = 0`, :math:`n` = ``prune_updates`` and :math:`\\Delta t` such that
        :math:`n\\Delta t` covers ``ramp_fraction`` of the stage (at least 1)."""
        steps = self.prune_epochs * math.ceil(num_train / self.batch_size)
        interval = max(1, int(self.ramp_fraction * steps) // self.prune_updates)
        return CubicSchedule(final=final, interval=interval, num_updates=self.prune_updates)


@dataclass
class PruneVsNoiseResult:
    """Everything :func:`run_prune_vs_noise` measured.

    Attributes:
        config: the configuration.
        dense_accuracy: test accuracy of the dense model (same SGD steps as the pruned).
        rows: one dict per (condition, sparsity): ``condition`` (:data:`CONDITIONS`),
            ``sparsity`` (0 for ``"none"``), ``accuracy`` (test accuracy of the
            released mechanism), ``noise_scale`` (b, noise rows), ``matched``,
            ``pruned_fraction`` (measured), and ``<metric>_mean`` / ``_min`` / ``_max``
            for every metric of :data:`METRICS` plus ``nmi_chance_mean``, over the images
            where the metric is defined; ``sift_defined`` counts those images for SIFT
            (its mean, min and max are None when it is 0).
        scores: ``(condition, sparsity) -> {metric: per-image ndarray}``; SIFT's is a
            masked array, masked where undefined (:func:`score_inversions`).
        originals: attacked test images ``(B, C, H, W)``; labels ``(B,)``.
        reconstructions: ``(condition, sparsity) -> (B, C, H, W)`` ndarray.
        seconds: wall-clock time of the run.
    """

    config: PruneVsNoiseConfig
    dense_accuracy: float
    rows: list[dict] = field(default_factory=list)
    scores: dict = field(default_factory=dict)
    originals: np.ndarray | None = None
    labels: np.ndarray | None = None
    reconstructions: dict = field(default_factory=dict)
    seconds: float = 0.0

    def row(self, condition: str, sparsity: float) -> dict:
        """The row of ``condition`` at ``sparsity`` (``"none"`` is at sparsity 0)."""
        for row in self.rows:
            if row["condition"] == condition and row["sparsity"] == sparsity:
                return row
        raise KeyError((condition, sparsity))

    def table(self) -> str:
        """Fixed-width text table: sparsity, accuracies, matched b, mean metrics."""
        head = f"{'sparsity':>8} {'condition':>15} {'acc':>6} {'b':>7} {'ok':>3} " + " ".join(
            f"{m:>6}" for m in METRICS
        )
        lines = [head, "-" * len(head)]
        for row in self.rows:
            k = f"{row['sparsity']:g}"
            b = "-" if row["condition"] != "noise" else f"{row['noise_scale']:.3g}"
            ok = "yes" if row["matched"] else "NO"
            metrics = " ".join(
                "     -" if row[m + "_mean"] is None else f"{row[m + '_mean']:6.3f}"
                for m in METRICS
            )
            lines.append(
                f"{k:>8} {row['condition']:>15} {row['accuracy']:6.3f} {b:>7} {ok:>3} {metrics}"
            )
        return "\n".join(lines)

    def comparison(self, prune_condition: str = "prune_public") -> dict[str, dict]:
        """Paired leakage gap noise minus pruning at matched accuracy, per metric.

        Over the sparsities whose noise scale was matched, each attacked image gets the
        mean over sparsities of ``score(noise) - score(prune)``; images are the independent
        units, and only images whose score is defined under both conditions at every such
        sparsity take part (all of them except for SIFT). Returns per metric ``{"gap":
        mean, "stderr": standard error over images, "prune": mean score, "noise": mean
        score, "sparsities": count, "images": count, "wins": sparsities where pruning's
        mean score is lower}``; the numbers are NaN when no sparsity or no image remains. A
        positive gap means pruning leaks less.
        """
        check_choice(
            "prune_condition",
            prune_condition,
            func="PruneVsNoiseResult.comparison",
            choices=PRUNE_CONDITIONS,
        )
        ks = [k for k in self.config.sparsities if self.row("noise", k)["matched"]]
        out = {}
        for metric in METRICS:
            pairs = [
                np.ma.stack([self.scores[(condition, k)][metric] for k in ks])
                for condition in (prune_condition, "noise")
            ]
            defined = (
                ~(np.ma.getmaskarray(pairs[0]) | np.ma.getmaskarray(pairs[1])).any(axis=0)
                if ks
                else np.zeros(0, dtype=bool)
            )
            if not defined.any():
                out[metric] = {
                    "gap": math.nan,
                    "stderr": math.nan,
                    "prune": math.nan,
                    "noise": math.nan,
                    "sparsities": len(ks),
                    "images": 0,
                    "wins": 0,
                }
                continue
            prune, noise = (np.ma.getdata(p)[:, defined] for p in pairs)
            per_image = (noise - prune).mean(axis=0)
            stderr = (
                per_image.std(ddof=1) / math.sqrt(per_image.size)
                if per_image.size > 1
                else math.nan
            )
            out[metric] = {
                "gap": float(per_image.mean()),
                "stderr": float(stderr),
                "prune": float(prune.mean()),
                "noise": float(noise.mean()),
                "sparsities": len(ks),
                "images": int(defined.sum()),
                "wins": int((prune.mean(axis=1) < noise.mean(axis=1)).sum()),
            }
        return out

    def accuracy_gap_at_matched_leakage(
        self, metric: str = "ssim", prune_condition: str = "prune_public"
    ) -> dict[float, float | None]:
        """Per sparsity k: pruning's test accuracy minus the accuracy noise reaches at the
        same mean ``metric`` (Section 4.3's "horizontal lines": matching the leakage
        instead of the accuracy; positive means pruning is more accurate at equal leakage).

        The noise curve is accuracy against mean similarity through the undefended dense
        network and the matched noise rows, sorted by similarity and interpolated
        linearly; a pruning point outside the curve's similarity range, or where the
        metric is undefined, gets None (no extrapolation).
        """
        func = "PruneVsNoiseResult.accuracy_gap_at_matched_leakage"
        check_choice("metric", metric, func=func, choices=tuple(METRICS))
        check_choice("prune_condition", prune_condition, func=func, choices=PRUNE_CONDITIONS)
        key = f"{metric}_mean"
        noise = [self.row("none", 0.0)] + [
            r for r in (self.row("noise", k) for k in self.config.sparsities) if r["matched"]
        ]
        curve = sorted((r[key], r["accuracy"]) for r in noise if r[key] is not None)
        gaps: dict[float, float | None] = {}
        for k in self.config.sparsities:
            row = self.row(prune_condition, k)
            level = row[key]
            inside = bool(curve) and level is not None and curve[0][0] <= level <= curve[-1][0]
            gaps[k] = None
            if inside:
                levels, accuracies = zip(*curve, strict=True)
                gaps[k] = row["accuracy"] - float(np.interp(level, levels, accuracies))
        return gaps

    def leakage_calls(self, prune_condition: str = "prune_public") -> dict[str, str]:
        """Per metric of :data:`METRICS`, and overall under key ``"overall"``: ``"less"``
        when pruning's paired gap (:meth:`comparison`) exceeds twice its standard error,
        ``"more"`` when it is below minus twice, else ``"unclear"``. The overall call is the
        one at least two of :data:`VOTING_METRICS` (SSIM, pHash, INFE) agree on, else
        ``"unclear"``; SIFT is called but does not vote."""
        comparison = self.comparison(prune_condition)
        calls = {}
        for metric, c in comparison.items():
            calls[metric] = "unclear"
            if c["gap"] > 2 * c["stderr"]:
                calls[metric] = "less"
            elif c["gap"] < -2 * c["stderr"]:
                calls[metric] = "more"
        votes = [calls[m] for m in VOTING_METRICS]
        calls["overall"] = next((v for v in ("less", "more") if votes.count(v) >= 2), "unclear")
        return calls

    def verdict(self, prune_condition: str = "prune_public") -> str:
        """One sentence: at matched accuracy, does pruning leak less or more than noise?
        With the numbers of :meth:`comparison` and the calls of :meth:`leakage_calls`."""
        comparison = self.comparison(prune_condition)
        calls = self.leakage_calls(prune_condition)
        overall = {
            "less": "less than",
            "more": "more than",
            "unclear": "neither clearly less nor clearly more than",
        }[calls["overall"]]
        details = "; ".join(
            f"{METRICS[m]} {comparison[m]['prune']:.3f} (pruning) vs "
            f"{comparison[m]['noise']:.3f} (noise), gap {comparison[m]['gap']:+.3f} ± "
            f"{comparison[m]['stderr']:.3f} ({calls[m]}"
            + (
                f", {comparison[m]['images']} images with keypoints, no vote)"
                if m not in VOTING_METRICS
                else ")"
            )
            for m in PAPER_METRICS
        )
        attacker = (
            "the public dense Φ (Section 4.2)"
            if prune_condition == "prune_public"
            else "the pruned weights"
        )
        return (
            f"At matched accuracy, pruning leaks {overall} noise on {self.config.dataset} "
            f"(attacker inverting with {attacker}; {comparison['ssim']['sparsities']} matched "
            f"sparsities, {len(self.originals)} images): {details}."
        )


def _summary_row(
    condition: str, sparsity: float, accuracy_value: float, scores: dict, **extra
) -> dict:
    row = {
        "condition": condition,
        "sparsity": sparsity,
        "accuracy": accuracy_value,
        "noise_scale": 0.0,
        "matched": True,
        **extra,
    }
    for metric, values in scores.items():
        defined = np.ma.compressed(values)
        summary = (np.mean, np.min, np.max)
        for name, f in zip(("mean", "min", "max"), summary, strict=True):
            row[f"{metric}_{name}"] = float(f(defined)) if defined.size else None
        if np.ma.isMaskedArray(values):
            row[f"{metric}_defined"] = int(defined.size)
    return row


class _Attack:
    """The attacked images and the attack settings shared by every condition."""

    def __init__(self, config: PruneVsNoiseConfig, images, labels, dense: nn.Module):
        self.config = config
        self.images, self.labels, self.dense = images, labels, dense

    def run(self, phi, target, condition: str, sparsity: float, result: PruneVsNoiseResult):
        cfg = self.config
        reconstructions = invert_representation(
            phi,
            target,
            tuple(self.images.shape[1:]),
            iterations=cfg.attack_iterations,
            lr=cfg.attack_lr,
            tv_weight=cfg.tv_weight,
            seed=cfg.seed,
        )
        scores = score_inversions(self.images, reconstructions, self.labels, self.dense)
        result.scores[(condition, sparsity)] = scores
        result.reconstructions[(condition, sparsity)] = reconstructions.cpu().numpy()
        return scores


def _build_model(cfg: PruneVsNoiseConfig, in_channels: int, num_classes: int) -> nn.Module:
    """The network of ``cfg.model``, seeded by ``cfg.seed``. VGG-19 gets He et al.'s
    normal initialisation for ReLU (zero biases): with PyTorch's default its 16 conv
    layers without BatchNorm shrink the signal about 6-fold in variance per layer and do
    not train."""
    sizes = {"in_channels": in_channels, "image_size": cfg.image_size, "num_classes": num_classes}
    with seeded(cfg.seed):
        if cfg.model == "lenet5":
            return lenet5(**sizes)
        model = vgg(19, width=cfg.width, **sizes)
        for module in model.modules():
            if isinstance(module, nn.Conv2d | nn.Linear):
                nn.init.kaiming_normal_(module.weight, nonlinearity="relu")
                nn.init.zeros_(module.bias)
    return model


def run_prune_vs_noise(
    config: PruneVsNoiseConfig, *, progress: bool | None = None
) -> PruneVsNoiseResult:
    """Run the matched-accuracy comparison of pruning and Laplace noise (module docstring).

    Returns a :class:`PruneVsNoiseResult`; its ``rows`` hold, per sparsity, the pruned
    network's test accuracy, the matched noise scale and accuracy, and the leakage of
    ``"noise"``, ``"prune_public"`` and ``"prune_informed"``, plus one ``"none"`` row (the
    undefended dense network). ``progress`` over the sparsities: False none, True or None
    a bar on a terminal, else lines on stderr (:func:`bounds.progress.progress`).
    """
    device = resolve_device(config.device)
    return _run(config, device, progress)


def _run(cfg: PruneVsNoiseConfig, device: torch.device, progress) -> PruneVsNoiseResult:
    began = time.perf_counter()
    train, test = load_train_test(
        cfg.dataset, cfg.data_dir, test_fraction=cfg.test_fraction, seed=cfg.seed
    )
    x_train = resize_images(train.images, cfg.image_size).to(device)
    x_test = resize_images(test.images, cfg.image_size).to(device)
    y_train, y_test = train.labels.to(device), test.labels.to(device)
    base = _build_model(cfg, train.image_shape[0], train.num_classes).to(device)
    sgd = {
        "batch_size": cfg.batch_size,
        "lr": cfg.lr,
        "momentum": cfg.momentum,
        "optimizer": cfg.optimizer,
    }
    train_sgd(base, x_train, y_train, epochs=cfg.train_epochs, seed=cfg.seed, **sgd)

    def pruning_stage(final: float) -> nn.Module:
        model = copy.deepcopy(base)
        schedule = cfg.schedule(final, len(x_train)) if final > 0 else None
        train_sgd(
            model,
            x_train,
            y_train,
            epochs=cfg.prune_epochs,
            seed=cfg.seed + 1,
            schedule=schedule,
            **sgd,
        )
        return model

    split = {"layer": cfg.layer, "after_activation": cfg.after_activation}
    dense = pruning_stage(0.0)
    phi, head = split_at_layer(dense, **split)
    result = PruneVsNoiseResult(config=cfg, dense_accuracy=evaluate(dense, None, x_test, y_test)[0])
    chance = 1.0 / train.num_classes
    if result.dense_accuracy < chance + _MIN_LEARNED * (1.0 - chance):
        logger.warning(
            "run_prune_vs_noise: the dense model reached only %.3f test accuracy (chance "
            "%.3f); training failed and the comparison is meaningless. Lower lr or change "
            "the seed.",
            result.dense_accuracy,
            chance,
        )
    generator = torch.Generator().manual_seed(cfg.seed)
    chosen = torch.randperm(len(x_test), generator=generator)[: cfg.num_images].to(device)
    attack = _Attack(cfg, x_test[chosen], y_test[chosen], dense)
    result.originals = attack.images.cpu().numpy()
    result.labels = attack.labels.cpu().numpy()
    with torch.no_grad():
        clean_test, clean_attacked = phi(x_test), phi(attack.images)
    scores = attack.run(phi, clean_attacked, "none", 0.0, result)
    result.rows.append(
        _summary_row("none", 0.0, result.dense_accuracy, scores, pruned_fraction=0.0)
    )
    with show_progress(cfg.sparsities, desc="sparsity", unit="sparsity", enabled=progress) as bar:
        for k in bar:
            pruned = pruning_stage(k)
            acc_k = evaluate(pruned, None, x_test, y_test)[0]
            num_prunable = Mask.ones(pruned).num_prunable()
            zeros = sum(int((p == 0).sum()) for p in pruned.parameters() if p.ndim >= 2)
            phi_k, _ = split_at_layer(pruned, **split)
            with torch.no_grad():
                released = phi_k(attack.images)
            for condition, attacker_phi in zip(PRUNE_CONDITIONS, (phi, phi_k), strict=True):
                scores = attack.run(attacker_phi, released, condition, k, result)
                result.rows.append(
                    _summary_row(condition, k, acc_k, scores, pruned_fraction=zeros / num_prunable)
                )
            match = match_noise_scale(
                head, clean_test, y_test, acc_k, tolerance=cfg.accuracy_tolerance, seed=cfg.seed
            )
            noise = laplace_noise(tuple(clean_attacked.shape), seed=cfg.seed + 1, device=device)
            scores = attack.run(phi, clean_attacked + match.scale * noise, "noise", k, result)
            result.rows.append(
                _summary_row(
                    "noise",
                    k,
                    match.accuracy,
                    scores,
                    noise_scale=match.scale,
                    matched=match.matched,
                    pruned_fraction=0.0,
                )
            )
            logger.info(
                "k = %g: pruned accuracy %.4f, noise b = %.4g (accuracy %.4f)",
                k,
                acc_k,
                match.scale,
                match.accuracy,
            )
    result.seconds = time.perf_counter() - began
    return result
