r"""Pruning versus Laplace noise at matched accuracy: Huang et al., Sections 4.1-4.3, Figure 6.

Source: Huang, Su, Ravi, Song, Arora, Li, *Privacy-preserving Learning via Deep Net
Pruning*, arXiv:2003.01876 (``papers/huang-pruning-as-dp-noise-arxiv2003.01876.txt``).

Pipeline (one call of :func:`run_prune_vs_noise`):

1. **Training stage** (Algorithm 2, lines 5-8): LeNet-5 (:func:`sims.models.lenet5`) is
   trained densely with SGD (momentum 0.9, batch 64 as in Table 2; learning rate 0.03,
   see below) for ``train_epochs``.
2. **Pruning stage** (Algorithm 2, lines 9-15), once per target sparsity :math:`k_T`: from
   the training-stage weights, ``prune_epochs`` more epochs of SGD under gradual magnitude
   pruning with Zhu and Gupta's cubic schedule (Section 4.1, :class:`CubicSchedule`).
   The *dense* model is the same stage with :math:`k_T = 0`, so it gets exactly the same
   number of SGD steps as every pruned model.
3. **Representation** :math:`\Phi`: the network up to the released layer (default
   ``"c5"``, LeCun's C5, the 120-unit layer that Figure 6 inverts; :func:`split_at_layer`).
   :math:`\Phi'_{\text{prune}}(x) = \tilde\Phi(x)` uses the pruned weights;
   :math:`\Phi'_{\text{noise}}(x) = \Phi(x) + e` uses the dense weights and i.i.d.
   :math:`e_i \sim \mathrm{Lap}(0, b)` (Section 4.2).
4. **Matched accuracy** (Section 4.3, "we tune the amount of noise"): for each sparsity,
   :func:`match_noise_scale` bisects the largest :math:`b` at which the dense network with
   noisy representation still reaches the pruned network's test accuracy; the match is
   accepted when the two accuracies differ by at most ``accuracy_tolerance``.
5. **Inversion attack** (Section 4.2, after Mahendran and Vedaldi 2015):
   :math:`x^* = \arg\min_x \|\Phi_{\text{att}}(x) - \Phi'(x_0)\|_2^2 + \lambda\,\mathcal R(x)`
   with the isotropic total variation :math:`\mathcal R`
   (:func:`sims.attacks.priors.total_variation`), by
   Adam on the box :math:`[0, 1]^d` (:func:`invert_representation`).
6. **Similarity** between :math:`x^*` and :math:`x_0` (Section 4.2): normalised SSIM,
   pHash similarity, INFE (the dense model's accuracy on :math:`x^*`), plus PSNR and
   PriPrune's NMI, all from :mod:`estimators`; a higher value means more leakage.

Readings and deviations (the paper leaves these open or is inconsistent):

* **Which attacker.** Section 4.2 releases :math:`\Phi'(x)`, keeps :math:`\Phi'` private
  and lets the attacker invert with the *public* dense :math:`\Phi` in both cases
  (condition ``"prune_public"``). An attacker who also knows the pruned weights inverts
  :math:`\tilde\Phi` itself (``"prune_informed"``); it is the stronger attack and is
  reported beside the paper's. Against noise both attackers use the dense :math:`\Phi`
  (they know the noise distribution, not the draw); the paper's squared-L2 loss is kept
  although it is not the Laplace likelihood.
* **Pre-activation representation.** "Conv5 layer" does not say whether the ReLU is
  included; by default :math:`\Phi(x)` is the layer's output *before* its activation
  (``after_activation=False``), since after the ReLU about 80% of C5's units are zero on
  digits and even the undefended dense network is no longer inverted to a recognisable
  digit, unlike Figures 1 and 6(e).
* **Layer-wise sparsity.** Algorithm 2's THPRUNE uses one threshold :math:`a^{(t)}` for
  all layers, but Section 4.3 says the experiments prune "layers with the same target
  sparsity"; each prunable layer (all conv and linear weights, biases kept) is pruned to
  sparsity :math:`k_t` (:func:`sims.pruning.mask.magnitude_mask`).
* **Mask between updates.** Algorithm 2 re-applies THPRUNE at every step; as in Zhu and
  Gupta the mask is recomputed from the current weights at the schedule's update steps
  and held (pruned weights stay zero) in between; a final THPRUNE at :math:`k_T` ends
  the stage (line 15), so the final sparsity is exactly :math:`k_T` in every layer.
* **Schedule constants.** :math:`k_0 = 0` (Section 4.1), :math:`t_0 = 0` (start of the
  pruning stage), ``prune_updates`` = :math:`n` updates spread over the first
  ``ramp_fraction`` of the stage; the rest fine-tunes at :math:`k_T`. The paper gives
  neither :math:`n`, :math:`\Delta t` nor the split of Table 2's 20 epochs between the
  two stages.
* **Digits.** scikit-learn's 8x8 digits are resized bilinearly to ``image_size`` (28 by
  default, MNIST's size) before anything else, so LeNet-5 is the classic 61,706-parameter
  network, C5 sees a 16x5x5 map as on MNIST, and SSIM's 7x7 window and pHash's 7x7 mean
  filter act on digit-sized strokes; all metrics are computed at that resolution.
* **Learning rate.** Table 2's 0.1 (with momentum 0.9) diverges on digits with PyTorch's
  default initialisation (test accuracy falls to chance after 3 epochs), and 0.05 kills
  the network at the restart of the pruning stage for one of eight seeds tried; 0.03,
  cosine-annealed within each stage, trains all eight (dense accuracy 0.955-0.989).
* **Not implemented:** the SIFT similarity of Section 4.2 (no SIFT in the toolkit).
"""

from __future__ import annotations

import copy
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm

from bounds.validation import check_choice, check_int, check_real
from estimators.device import check_device, resolve_device
from estimators.image import inference_accuracy, phash_similarity, score_reconstruction
from sims.attacks.priors import total_variation
from sims.core.runtime import seeded
from sims.core.scale import SCALES
from sims.data.datasets import available_datasets, load_train_test, resize_images
from sims.models import lenet5
from sims.pruning.mask import Mask, magnitude_mask

logger = logging.getLogger(__name__)

# LeCun et al. (1998)'s names of LeNet-5's weight layers -> their position (1-based)
# among the conv/linear layers of :func:`sims.models.lenet5`.
LAYERS = {"c1": 1, "c3": 2, "c5": 3, "f6": 4}
# Leakage conditions: the undefended dense network, Laplace noise, and pruning attacked
# with the public dense Phi (Section 4.2) or with the pruned weights.
CONDITIONS = ("none", "noise", "prune_public", "prune_informed")
PRUNE_CONDITIONS = ("prune_public", "prune_informed")
# name -> label; the first three are Figure 6's panels (a), (c), (d).
METRICS = {
    "ssim": "SSIM (normalised)",
    "phash": "pHash similarity",
    "infe": "INFE",
    "psnr": "PSNR (dB)",
    "nmi": "NMI",
}
PAPER_METRICS = ("ssim", "phash", "infe")
PAPER_SPARSITIES = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99)
QUICK_SPARSITIES = (0.5, 0.8, 0.9, 0.95, 0.98)
# Smoothing inside the square root of the total variation: the published R is not
# differentiable where both differences vanish (flat background); 1e-8 changes R by at most
# 1e-4 per pixel.
# Bisection of match_noise_scale: the bracket grows by doubling (at most _MAX_DOUBLINGS
# times) and is then halved until its relative width is below _BISECTION_RTOL.
_MAX_DOUBLINGS = 60
_BISECTION_RTOL = 1e-3
_MAX_BISECTIONS = 60
# run_prune_vs_noise warns when the dense model closes less than half of the gap between
# chance and perfect test accuracy (a dead or diverged network).
_MIN_LEARNED = 0.5


# ---------------------------------------------------------------------------------------
# Gradual magnitude pruning (Zhu and Gupta 2017; Huang et al. Section 4.1, Algorithm 2)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CubicSchedule:
    r"""Zhu and Gupta's gradual pruning schedule (arXiv:1710.01878, eq. (1); Huang et al.,
    Section 4.1):

    .. math:: k_t = k_T + (k_0 - k_T)\left(1 - \frac{t - t_0}{n\,\Delta t}\right)^3,
        \qquad t \in \{t_0, t_0 + \Delta t, \dots, t_0 + n\Delta t\}.

    Sparsity is the fraction of weights set to zero. Between update steps the sparsity
    of the last update holds; before :math:`t_0` it is :math:`k_0`, after
    :math:`t_0 + n\Delta t` it is :math:`k_T`.

    Attributes:
        final: target sparsity :math:`k_T` in [0, 1).
        initial: initial sparsity :math:`k_0` in [0, final] (0 in the paper).
        start: first update step :math:`t_0 \ge 0`.
        interval: steps between updates :math:`\Delta t \ge 1`.
        num_updates: :math:`n \ge 1`; there are :math:`n + 1` update steps.
    """

    final: float
    initial: float = 0.0
    start: int = 0
    interval: int = 1
    num_updates: int = 1

    def __post_init__(self) -> None:
        func = "CubicSchedule"
        final = check_real("final", self.final, func=func, low=0, high=1, high_inclusive=False)
        object.__setattr__(self, "final", final)
        object.__setattr__(
            self, "initial", check_real("initial", self.initial, func=func, low=0, high=final)
        )
        object.__setattr__(self, "start", check_int("start", self.start, func=func, low=0))
        object.__setattr__(self, "interval", check_int("interval", self.interval, func=func, low=1))
        object.__setattr__(
            self, "num_updates", check_int("num_updates", self.num_updates, func=func, low=1)
        )

    @property
    def end(self) -> int:
        """The last update step :math:`t_0 + n\\Delta t`, where :math:`k_T` is reached."""
        return self.start + self.num_updates * self.interval

    def is_update(self, step: int) -> bool:
        """Whether the mask is recomputed at ``step``."""
        return self.start <= step <= self.end and (step - self.start) % self.interval == 0

    def sparsity(self, step: int) -> float:
        """:math:`k_t` at ``step`` (the value of the last update at or before it)."""
        step = check_int("step", step, func="CubicSchedule.sparsity", low=0)
        updates_done = min((step - self.start) // self.interval, self.num_updates)
        if step < self.start or updates_done == 0:
            return self.initial
        if updates_done == self.num_updates:
            return self.final  # exactly, not k_T + (k_0 - k_T) * 0 after rounding
        remaining = 1.0 - updates_done / self.num_updates
        return self.final + (self.initial - self.final) * remaining**3


def _apply_mask_(model: nn.Module, mask: Mask) -> None:
    with torch.no_grad():
        for name, param in model.named_parameters():
            param.mul_(mask.keep[name])


def train_sgd(
    model: nn.Module,
    images: torch.Tensor,
    labels: torch.Tensor,
    *,
    epochs: int,
    batch_size: int = 64,
    lr: float = 0.03,
    momentum: float = 0.9,
    seed: int = 0,
    schedule: CubicSchedule | None = None,
    anneal: bool = True,
) -> Mask:
    """Minibatch SGD with momentum on ``model`` in place, optionally with gradual magnitude
    pruning (Huang et al., Algorithm 2; Zhu and Gupta's schedule).

    Without ``schedule`` this is Algorithm 2's training stage (lines 5-8). With it, it is
    the pruning stage (lines 9-15): at each update step of the schedule the layer-wise
    magnitude mask at sparsity :math:`k_t` is recomputed from the current weights; before
    every SGD step the weights are multiplied by the mask (THPRUNE), so the gradient is
    taken at the pruned weights :math:`\\tilde W^{(t)}` (line 12); a final THPRUNE at
    :math:`k_T` ends the stage (line 15). Steps count minibatches from 0; each epoch is a
    seeded random permutation of the data (drawn on CPU, so CPU and GPU see the same
    order); the last minibatch of an epoch may be smaller. With ``anneal`` the learning
    rate follows a cosine from ``lr`` to 0 over the call's steps (Table 2 gives only the
    *initial* rate; annealing each stage lets the dense and every pruned model end
    converged, so their accuracies can be matched).

    Args:
        model: a module whose parameters live on the device of ``images``.
        images, labels: training data ``(N, C, H, W)`` float and ``(N,)`` int64.
        epochs: passes over the data, >= 1.
        batch_size, lr, momentum: SGD settings (Table 2: 64, 0.1, 0.9; 0.1 diverges on
            digits, hence the default 0.03).
        seed: seeds the minibatch order.
        schedule: gradual pruning schedule, or None for dense training.
        anneal: cosine learning-rate annealing over the call.

    Returns:
        The final mask (all-True without a schedule).
    """
    func = "train_sgd"
    epochs = check_int("epochs", epochs, func=func, low=1)
    batch_size = check_int("batch_size", batch_size, func=func, low=1)
    lr = check_real("lr", lr, func=func, low=0, low_inclusive=False)
    momentum = check_real("momentum", momentum, func=func, low=0, high=1, high_inclusive=False)
    generator = torch.Generator().manual_seed(check_int("seed", seed, func=func, low=0))
    params = dict(model.named_parameters())
    mask = Mask.ones(params)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    total_steps = epochs * math.ceil(len(images) / batch_size)
    annealing = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=total_steps)
    step = 0
    model.train()
    for _ in range(epochs):
        order = torch.randperm(len(images), generator=generator).to(images.device)
        for index in order.split(batch_size):
            if schedule is not None:
                if schedule.is_update(step):
                    mask = magnitude_mask(params, schedule.sparsity(step))
                _apply_mask_(model, mask)
            loss = nn.functional.cross_entropy(model(images[index]), labels[index])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            if anneal:
                annealing.step()
            step += 1
    if schedule is not None:
        mask = magnitude_mask(params, schedule.final)
        _apply_mask_(model, mask)
    model.eval()
    return mask


def accuracy(
    model: Callable[[torch.Tensor], torch.Tensor], inputs, labels, *, chunk: int = 2048
) -> float:
    """Fraction of ``inputs`` whose arg-max logit under ``model`` equals the label
    (evaluated in chunks of ``chunk`` rows, one device synchronisation at the end)."""
    correct = torch.zeros((), dtype=torch.int64, device=labels.device)
    with torch.no_grad():
        for x, y in zip(inputs.split(chunk), labels.split(chunk), strict=True):
            correct += (model(x).argmax(dim=1) == y).sum()
    return int(correct) / len(labels)


# ---------------------------------------------------------------------------------------
# Representation and Laplace noise (Section 4.2)
# ---------------------------------------------------------------------------------------


def split_at_layer(
    model: nn.Module, layer: str = "c5", *, after_activation: bool = False
) -> tuple[nn.Sequential, nn.Sequential]:
    """``(phi, head)`` with ``head(phi(x)) == model(x)``: ``phi`` maps an image to the
    output of LeNet-5's layer ``layer`` (LeCun's names C1, C3, C5, F6; see :data:`LAYERS`),
    before its activation unless ``after_activation``.

    Both parts share their modules (and thus their weights) with ``model``, which must be a
    :class:`sims.models.ConvNet` (``features`` then ``classifier``).
    """
    func = "split_at_layer"
    check_choice("layer", layer, func=func, choices=tuple(LAYERS))
    if not (hasattr(model, "features") and hasattr(model, "classifier")):
        raise ValueError(
            f"The 'model' parameter of {func} must be a ConvNet (features, classifier). "
            f"Got {type(model).__name__} instead."
        )
    modules = [*model.features, nn.Flatten(), *model.classifier]
    weight_layers = [i for i, m in enumerate(modules) if isinstance(m, nn.Conv2d | nn.Linear)]
    position = LAYERS[layer]
    if position > len(weight_layers) - 1:
        raise ValueError(
            f"The 'layer' parameter of {func} must name a hidden layer of the model "
            f"(it has {len(weight_layers)} weight layers). Got {layer!r} instead."
        )
    cut = weight_layers[position - 1] + 1 + int(bool(after_activation))
    return nn.Sequential(*modules[:cut]), nn.Sequential(*modules[cut:])


def laplace_noise(shape: tuple[int, ...], *, seed: int, device="cpu") -> torch.Tensor:
    r"""I.i.d. standard Laplace draws :math:`\mathrm{Lap}(0, 1)` (density
    :math:`\tfrac12 e^{-|t|}`; Theorem E.6's :math:`\mathrm{Lap}(b)` is ``b`` times them).

    Inverse-CDF sampling from uniforms of a CPU generator seeded by ``seed``, then moved to
    ``device``, so every device sees the same numbers.
    """
    seed = check_int("seed", seed, func="laplace_noise", low=0)
    u = torch.rand(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    u = u - 0.5
    draws = -torch.sign(u) * torch.log1p(-2.0 * u.abs())
    return draws.to(device=resolve_device(device), dtype=torch.float32)


@dataclass(frozen=True)
class NoiseMatch:
    """Result of :func:`match_noise_scale`.

    Attributes:
        scale: the Laplace scale b (same unit as the representation).
        accuracy: accuracy of the noisy model at ``scale`` on the noise draw used.
        target: the accuracy to match.
        matched: whether ``|accuracy - target| <= tolerance``.
        evaluations: accuracy evaluations spent.
    """

    scale: float
    accuracy: float
    target: float
    matched: bool
    evaluations: int


def match_noise_scale(
    head: Callable[[torch.Tensor], torch.Tensor],
    representation: torch.Tensor,
    labels: torch.Tensor,
    target_accuracy: float,
    *,
    tolerance: float = 0.01,
    seed: int = 0,
) -> NoiseMatch:
    r"""Largest Laplace scale :math:`b` at which ``head(representation + b e)`` still reaches
    ``target_accuracy`` (Huang et al., Section 4.3: "we tune the amount of noise in
    :math:`\Phi'_{\text{noise}}` to make [it and :math:`\Phi'_{\text{prune}}`] yield the same
    test accuracy").

    One draw :math:`e` = :func:`laplace_noise` ``(representation.shape, seed=seed)`` is
    fixed (common random numbers), which makes the accuracy a deterministic step function
    of :math:`b`. The bracket ``[0, hi]`` starts at the representation's standard deviation
    and doubles until the accuracy falls below the target (at most 60 doublings); it is
    then bisected, keeping ``accuracy(lo) >= target > accuracy(hi)``, until its relative
    width is below 1e-3 (at most 60 halvings). When even :math:`b = 0` is below the
    target, :math:`b = 0` is returned. ``matched`` reports whether the accuracy at the
    returned scale is within ``tolerance`` of the target; a failed match is logged as a
    warning (the accuracy may jump by more than ``tolerance`` at one :math:`b`, or the
    target may exceed the noiseless accuracy).

    Args:
        head: maps a representation batch to logits ``(N, classes)``.
        representation: :math:`\Phi(x)` of the test images, any shape ``(N, ...)``.
        labels: ``(N,)`` int64 labels on the same device.
        target_accuracy: in [0, 1].
        tolerance: accepted accuracy gap, in (0, 1).
        seed: seed of the noise draw.
    """
    func = "match_noise_scale"
    target = check_real("target_accuracy", target_accuracy, func=func, low=0, high=1)
    tolerance = check_real(
        "tolerance",
        tolerance,
        func=func,
        low=0,
        high=1,
        low_inclusive=False,
        high_inclusive=False,
    )
    noise = laplace_noise(tuple(representation.shape), seed=seed, device=representation.device)
    evaluations = 0

    def acc(b: float) -> float:
        nonlocal evaluations
        evaluations += 1
        return accuracy(head, representation + b * noise, labels)

    lo, acc_lo = 0.0, acc(0.0)
    if acc_lo >= target:
        hi = float(representation.std()) or 1.0
        for _ in range(_MAX_DOUBLINGS):
            acc_hi = acc(hi)
            if acc_hi < target:
                break
            lo, acc_lo, hi = hi, acc_hi, 2.0 * hi
        else:
            hi = lo
        for _ in range(_MAX_BISECTIONS):
            if hi - lo <= _BISECTION_RTOL * hi:
                break
            mid = 0.5 * (lo + hi)
            acc_mid = acc(mid)
            if acc_mid >= target:
                lo, acc_lo = mid, acc_mid
            else:
                hi = mid
    matched = abs(acc_lo - target) <= tolerance
    if not matched:
        logger.warning(
            "match_noise_scale: accuracy %.4f at b = %.4g misses the target %.4f by more than %.4f",
            acc_lo,
            lo,
            target,
            tolerance,
        )
    return NoiseMatch(lo, acc_lo, target, matched, evaluations)


# ---------------------------------------------------------------------------------------
# Inversion attack (Section 4.2, Mahendran and Vedaldi 2015)
# ---------------------------------------------------------------------------------------


def invert_representation(
    phi: Callable[[torch.Tensor], torch.Tensor],
    target: torch.Tensor,
    image_shape: tuple[int, int, int],
    *,
    iterations: int = 200,
    lr: float = 0.1,
    tv_weight: float = 0.1,
    seed: int = 0,
) -> torch.Tensor:
    r"""Representation inversion (Huang et al., Section 4.2; Mahendran and Vedaldi 2015):

    .. math:: x^* = \arg\min_{x \in [0,1]^d} \|\Phi(x) - \Phi'_0\|_2^2
        + \lambda\,\mathcal R(x),

    with :func:`sims.attacks.priors.total_variation` (``"isotropic_sum"``) as
    :math:`\mathcal R`. Adam (learning rate ``lr``, cosine
    annealed to 0 over ``iterations``) from a seeded uniform :math:`[0, 1]` start; after
    every step the images are clamped to :math:`[0, 1]` (projected Adam). A batch is one
    optimisation of the *sum* of the per-image objectives; since Adam is coordinate-wise,
    each image follows exactly the trajectory it would follow alone.

    Args:
        phi: the attacker's representation function (a module or any differentiable
            callable), mapping ``(B, C, H, W)`` to ``(B, ...)``.
        target: :math:`\Phi'_0 = \Phi'(x_0)`, shape ``(B, ...)``, on the device to use.
        image_shape: ``(C, H, W)`` of one image.
        iterations: Adam steps, >= 1.
        lr: Adam's initial learning rate, > 0.
        tv_weight: :math:`\lambda \ge 0`.
        seed: seeds the starting images.

    Returns:
        The reconstructions ``(B, C, H, W)`` in [0, 1], detached.
    """
    func = "invert_representation"
    iterations = check_int("iterations", iterations, func=func, low=1)
    lr = check_real("lr", lr, func=func, low=0, low_inclusive=False)
    tv_weight = check_real("tv_weight", tv_weight, func=func, low=0)
    seed = check_int("seed", seed, func=func, low=0)
    shape_ok = isinstance(image_shape, tuple | list) and len(image_shape) == 3
    if not shape_ok or not all(isinstance(s, int) and s >= 1 for s in image_shape):
        raise ValueError(
            f"The 'image_shape' parameter of {func} must be (C, H, W) of positive integers. "
            f"Got {image_shape!r} instead."
        )
    if not isinstance(target, torch.Tensor) or target.ndim < 2 or target.shape[0] < 1:
        raise ValueError(
            f"The 'target' parameter of {func} must be a tensor (B, ...) with B >= 1. "
            f"Got {getattr(target, 'shape', type(target).__name__)} instead."
        )
    target = target.detach()
    generator = torch.Generator().manual_seed(seed)
    start = torch.rand((target.shape[0], *image_shape), generator=generator)
    images = start.to(target.device).requires_grad_(True)
    optimizer = torch.optim.Adam([images], lr=lr)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=iterations)
    for _ in range(iterations):
        matching = ((phi(images) - target) ** 2).sum()
        loss = matching + tv_weight * total_variation(images, "isotropic_sum").sum()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        schedule.step()
        with torch.no_grad():
            images.clamp_(0.0, 1.0)
    return images.detach()


def score_inversions(originals, reconstructions, labels, classifier: nn.Module) -> dict:
    """Per-image similarity of reconstructions to their originals (no re-matching: the
    attack inverts each image separately), keys :data:`METRICS` plus ``"nmi_chance"``.

    ``"ssim"`` (normalised to [0, 1]), ``"psnr"`` (dB), ``"nmi"`` and ``"nmi_chance"`` come
    from :func:`estimators.image.score_reconstruction`, ``"phash"`` from
    :func:`estimators.image.phash_similarity` and ``"infe"`` (0/1 per image) from
    :func:`estimators.image.inference_accuracy` with ``classifier``.
    """
    scores = score_reconstruction(originals, reconstructions, match=None)
    return {
        "ssim": scores["ssim"],
        "phash": phash_similarity(originals, reconstructions, per_image=True),
        "infe": inference_accuracy(classifier, reconstructions, labels, per_image=True),
        "psnr": scores["psnr"],
        "nmi": scores["nmi"],
        "nmi_chance": scores["nmi_chance"],
    }


# ---------------------------------------------------------------------------------------
# The experiment
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PruneVsNoiseConfig:
    """Configuration of :func:`run_prune_vs_noise` (see the module docstring).

    Attributes:
        dataset: ``"digits"`` (embedded) or a file data set of :mod:`sims.data`
            (``"mnist"`` as in the paper, with ``data_dir``).
        data_dir: directory of the data files (not needed for digits).
        image_size: images are resized (bilinear) to this side when they differ from it.
        sparsities: target sparsities :math:`k_T` in (0, 1), increasing.
        layer: the released layer, a key of :data:`LAYERS` (``"c5"`` as in Figure 6).
        after_activation: release the layer's output after its ReLU instead of before.
        train_epochs: epochs of the dense training stage.
        prune_epochs: epochs of the pruning stage (also given to the dense model).
        prune_updates: :math:`n`, mask updates of the cubic schedule after :math:`t_0`.
        ramp_fraction: fraction of the pruning stage over which the schedule ramps.
        batch_size, lr, momentum: SGD settings (Table 2: 64, 0.1, 0.9; 0.1 diverges on
            digits, hence 0.03).
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
    layer: str = "c5"
    after_activation: bool = False
    train_epochs: int = 10
    prune_epochs: int = 5
    prune_updates: int = 8
    ramp_fraction: float = 0.75
    batch_size: int = 64
    lr: float = 0.03
    momentum: float = 0.9
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
        check_choice("layer", self.layer, func=func, choices=tuple(LAYERS))
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
            check_real(name, getattr(self, name), func=func, low=0, low_inclusive=False)
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
        check_int("seed", self.seed, func=func, low=0)
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
            for every metric of :data:`METRICS` plus ``nmi_chance_mean``.
        scores: ``(condition, sparsity) -> {metric: per-image ndarray}``.
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
            metrics = " ".join(f"{row[m + '_mean']:6.3f}" for m in METRICS)
            lines.append(
                f"{k:>8} {row['condition']:>15} {row['accuracy']:6.3f} {b:>7} {ok:>3} {metrics}"
            )
        return "\n".join(lines)

    def comparison(self, prune_condition: str = "prune_public") -> dict[str, dict]:
        """Paired leakage gap noise minus pruning at matched accuracy, per metric.

        Over the sparsities whose noise scale was matched, each attacked image gets the
        mean over sparsities of ``score(noise) - score(prune)``; images are the independent
        units. Returns per metric ``{"gap": mean, "stderr": standard error over images,
        "prune": mean score, "noise": mean score, "sparsities": count, "wins": sparsities
        where pruning's mean score is lower}``. A positive gap means pruning leaks less.
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
            if not ks:
                out[metric] = {
                    "gap": math.nan,
                    "stderr": math.nan,
                    "prune": math.nan,
                    "noise": math.nan,
                    "sparsities": 0,
                    "wins": 0,
                }
                continue
            prune = np.array([self.scores[(prune_condition, k)][metric] for k in ks])
            noise = np.array([self.scores[("noise", k)][metric] for k in ks])
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
                "wins": int((prune.mean(axis=1) < noise.mean(axis=1)).sum()),
            }
        return out

    def leakage_calls(self, prune_condition: str = "prune_public") -> dict[str, str]:
        """Per metric of :data:`METRICS`, and overall under key ``"overall"``: ``"less"``
        when pruning's paired gap (:meth:`comparison`) exceeds twice its standard error,
        ``"more"`` when it is below minus twice, else ``"unclear"``. The overall call is the
        one at least two of Figure 6's metrics (SSIM, pHash, INFE) agree on, else
        ``"unclear"``."""
        comparison = self.comparison(prune_condition)
        calls = {}
        for metric, c in comparison.items():
            calls[metric] = "unclear"
            if c["gap"] > 2 * c["stderr"]:
                calls[metric] = "less"
            elif c["gap"] < -2 * c["stderr"]:
                calls[metric] = "more"
        votes = [calls[m] for m in PAPER_METRICS]
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
            f"{comparison[m]['stderr']:.3f} ({calls[m]})"
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
        row[f"{metric}_mean"] = float(np.mean(values))
        row[f"{metric}_min"] = float(np.min(values))
        row[f"{metric}_max"] = float(np.max(values))
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


def run_prune_vs_noise(
    config: PruneVsNoiseConfig, *, progress: bool | None = None
) -> PruneVsNoiseResult:
    """Run the matched-accuracy comparison of pruning and Laplace noise (module docstring).

    Returns a :class:`PruneVsNoiseResult`; its ``rows`` hold, per sparsity, the pruned
    network's test accuracy, the matched noise scale and accuracy, and the leakage of
    ``"noise"``, ``"prune_public"`` and ``"prune_informed"``, plus one ``"none"`` row (the
    undefended dense network). ``progress``: tqdm bar (None: only on a terminal).
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
    with seeded(cfg.seed):
        base = lenet5(
            in_channels=train.image_shape[0],
            image_size=cfg.image_size,
            num_classes=train.num_classes,
        ).to(device)
    sgd = {"batch_size": cfg.batch_size, "lr": cfg.lr, "momentum": cfg.momentum}
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
    result = PruneVsNoiseResult(config=cfg, dense_accuracy=accuracy(dense, x_test, y_test))
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
    bar = tqdm(cfg.sparsities, desc="sparsity", disable=None if progress is None else not progress)
    for k in bar:
        pruned = pruning_stage(k)
        acc_k = accuracy(pruned, x_test, y_test)
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


# ---------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------

_STYLE = {
    "noise": ("tab:red", "o", "Laplace noise"),
    "prune_public": ("tab:blue", "s", "pruning, dense-Φ attacker"),
    "prune_informed": ("tab:green", "^", "pruning, pruned-Φ attacker"),
}


def plot_similarity_curves(result: PruneVsNoiseResult):
    """Figure 6 (a)-(d) and Figure 5 (a) in one 2x3 grid.

    Five panels: mean similarity (SSIM, pHash, INFE, PSNR, NMI) versus test accuracy for
    noise and for pruning under both attackers, the range over images shaded (not for
    INFE, as in the paper), dashed verticals at the matched accuracies (sparsity k
    annotated), the undefended dense network dotted. Sixth panel: test accuracy versus
    sparsity with the matched noise scale b. Returns the matplotlib figure.
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(13, 7.5), constrained_layout=True)
    ks = result.config.sparsities
    matched_acc = [result.row("prune_public", k)["accuracy"] for k in ks]
    for ax, metric in zip(axes.flat, METRICS, strict=False):
        for condition, (colour, marker, label) in _STYLE.items():
            rows = [result.row(condition, k) for k in ks]
            acc = [r["accuracy"] for r in rows]
            ax.plot(
                acc, [r[f"{metric}_mean"] for r in rows], marker=marker, color=colour, label=label
            )
            if metric != "infe":
                ax.fill_between(
                    acc,
                    [r[f"{metric}_min"] for r in rows],
                    [r[f"{metric}_max"] for r in rows],
                    color=colour,
                    alpha=0.1,
                )
        for k, acc in zip(ks, matched_acc, strict=True):
            ax.axvline(acc, color="grey", ls="--", lw=0.6)
            ax.annotate(
                f"{k:g}",
                (acc, 0.0),
                xycoords=("data", "axes fraction"),
                fontsize=6,
                rotation=90,
                va="bottom",
                ha="right",
                color="grey",
            )
        ax.axhline(
            result.row("none", 0.0)[f"{metric}_mean"],
            color="black",
            ls=":",
            lw=1,
            label="no defence",
        )
        ax.set(xlabel="test accuracy", ylabel=METRICS[metric])
    if metric == "nmi":
        chance = np.mean([r["nmi_chance_mean"] for r in result.rows])
        ax.axhline(chance, color="black", ls="-.", lw=0.8, label="NMI chance level")
        ax.legend(fontsize=7)
    axes[0, 0].legend(fontsize=7)
    ax = axes[1, 2]
    ax.plot(ks, matched_acc, marker="s", color="tab:blue", label="pruned")
    ax.axhline(result.dense_accuracy, color="black", ls=":", label="dense")
    ax.set(xlabel="sparsity k", ylabel="test accuracy", title="accuracy (Fig. 5a)")
    twin = ax.twinx()
    twin.plot(
        ks,
        [result.row("noise", k)["noise_scale"] for k in ks],
        marker="o",
        color="tab:red",
        label="matched noise b",
    )
    twin.set_ylabel("Laplace scale b", color="tab:red")
    ax.legend(loc="lower left", fontsize=7)
    cfg = result.config
    fig.suptitle(
        f"LeNet-5 {cfg.layer.upper()} on {cfg.dataset}: inversion similarity at "
        f"matched accuracy ({len(result.originals)} images; verticals: sparsity k)"
    )
    return fig


def plot_example_inversions(result: PruneVsNoiseResult, num_examples: int = 2):
    """Figure 6 (e): for each of the first ``num_examples`` attacked images, a block of
    three rows (noise, pruning with the public Φ, pruning with the pruned Φ) and one
    column per sparsity (titled with k and the matched accuracy), after the original and
    the undefended inversion. Returns the matplotlib figure."""
    import matplotlib.pyplot as plt

    num_examples = check_int(
        "num_examples",
        num_examples,
        func="plot_example_inversions",
        low=1,
        high=len(result.originals),
    )
    ks = result.config.sparsities
    conditions = tuple(_STYLE)
    fig, axes = plt.subplots(
        num_examples * len(conditions),
        2 + len(ks),
        figsize=(1.3 * (2 + len(ks)), 1.35 * num_examples * 3 + 0.5),
        squeeze=False,
        constrained_layout=True,
    )
    for ax in axes.flat:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.spines[:].set_visible(False)
    for i in range(num_examples):
        block = axes[i * len(conditions) : (i + 1) * len(conditions)]
        block[0, 0].imshow(result.originals[i].mean(axis=0), cmap="gray", vmin=0, vmax=1)
        none = result.reconstructions[("none", 0.0)]
        block[0, 1].imshow(none[i].mean(axis=0), cmap="gray", vmin=0, vmax=1)
        for r, condition in enumerate(conditions):
            block[r, 2].set_ylabel(_STYLE[condition][2], fontsize=6)
            for j, k in enumerate(ks):
                image = result.reconstructions[(condition, k)][i]
                block[r, 2 + j].imshow(image.mean(axis=0), cmap="gray", vmin=0, vmax=1)
    axes[0, 0].set_title("original", fontsize=7)
    axes[0, 1].set_title("no defence", fontsize=7)
    for j, k in enumerate(ks):
        acc = result.row("prune_public", k)["accuracy"]
        axes[0, 2 + j].set_title(f"k={k:g}\nacc {acc:.3f}", fontsize=7)
    fig.suptitle("Inversions at matched accuracy", fontsize=8)
    return fig
