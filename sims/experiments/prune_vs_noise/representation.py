r"""The released representation of Huang et al. (arXiv:2003.01876), Sections 4.2-4.3:
LeNet-5 or VGG-19 cut at a layer, i.i.d. Laplace noise on it, and the noise scale that
matches a target accuracy.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from pruneleak.bounds.validation import check_choice, check_real
from pruneleak.estimators.device import resolve_device
from pruneleak.sims.core.runtime import check_seed
from pruneleak.sims.fl.server import evaluate

logger = logging.getLogger(__name__)

# LeCun et al. (1998)'s names of LeNet-5's weight layers -> their position (1-based)
# among the conv/linear layers of :func:`sims.models.lenet5`.
LAYERS = {"c1": 1, "c3": 2, "c5": 3, "f6": 4}
_CONV_OR_POOL = (nn.Conv2d, nn.MaxPool2d, nn.AvgPool2d)
# Bisection of match_noise_scale: the bracket grows by doubling (at most _MAX_DOUBLINGS
# times) and is then halved until its relative width is below _BISECTION_RTOL.
_MAX_DOUBLINGS = 60
_BISECTION_RTOL = 1e-3
_MAX_BISECTIONS = 60


def conv_layer_names(plan) -> tuple[str, ...]:
    """Simonyan and Zisserman's names of the conv layers of a VGG ``plan`` (conv widths
    and ``"M"`` for a pool, as in :data:`sims.models.VGG_CONFIGS`): ``"conv<b>_<i>"``, the
    ``i``-th conv of block ``b``, blocks ending at each pool (VGG-19's ``"conv5_1"`` is
    its 13th conv layer, the one Figure 7 inverts)."""
    names, block, index = [], 1, 0
    for item in plan:
        if item == "M":
            block, index = block + 1, 0
        else:
            index += 1
            names.append(f"conv{block}_{index}")
    return tuple(names)


def split_at_layer(
    model: nn.Module, layer: str = "c5", *, after_activation: bool = False
) -> tuple[nn.Sequential, nn.Sequential]:
    """``(phi, head)`` with ``head(phi(x)) == model(x)``: ``phi`` maps an image to the
    output of the layer ``layer``, before its activation unless ``after_activation``.

    ``layer`` is one of LeNet-5's names of LeCun et al. (C1, C3, C5, F6; see
    :data:`LAYERS`), or a conv layer named by :func:`conv_layer_names` from the model's
    own conv layers and pools (``"conv5_1"`` of VGG-19). Both parts share their modules
    (and thus their weights) with ``model``, which must be a :class:`sims.models.ConvNet`
    (``features`` then ``classifier``).
    """
    func = "split_at_layer"
    if not (hasattr(model, "features") and hasattr(model, "classifier")):
        raise ValueError(
            f"The 'model' parameter of {func} must be a ConvNet (features, classifier). "
            f"Got {type(model).__name__} instead."
        )
    plan = [
        "M" if not isinstance(m, nn.Conv2d) else m.out_channels
        for m in model.features
        if isinstance(m, _CONV_OR_POOL)
    ]
    conv_names = conv_layer_names(plan)
    check_choice("layer", layer, func=func, choices=(*LAYERS, *conv_names))
    modules = [*model.features, nn.Flatten(), *model.classifier]
    weight_layers = [i for i, m in enumerate(modules) if isinstance(m, nn.Conv2d | nn.Linear)]
    position = LAYERS[layer] if layer in LAYERS else conv_names.index(layer) + 1
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
    seed = check_seed(seed, func="laplace_noise")
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
        return evaluate(head, None, representation + b * noise, labels)[0]

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
