"""Functional loss and gradient of a model on one batch, and the batch checks they share.

The model is called through ``torch.func.functional_call`` with an explicit parameter
dict, so every helper is a pure function of (params, images, labels): the client update
(:mod:`sims.fl.client`), the saliency scores (:mod:`sims.pruning.saliency`), the
per-sample gradient statistics (:mod:`sims.gradients.statistics`) and the attacks all
differentiate the same loss, the mean cross-entropy of the batch.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import nn
from torch.func import functional_call, grad

from pruneleak.bounds.validation import check_real

#: The largest float32, the weights' type.
FLOAT32_MAX = float(torch.finfo(torch.float32).max)
#: Largest accepted learning rate (of a client step or an optimiser): the models are
#: float32, in which a step ``lr * g`` with a larger ``lr`` is infinite for every
#: ``|g| >= 1``. Smaller rates may still diverge; the training loops detect it.
MAX_LR = FLOAT32_MAX
#: Smallest accepted learning rate, float32's smallest normal number: a smaller rate is
#: rounded to a subnormal or to 0 in the float32 step, and the gradient read back from an
#: update, ``(w - w') / lr``, is then wrong or infinite.
MIN_LR = float(torch.finfo(torch.float32).tiny)


#: Adam's (beta1, beta2), torch.optim.Adam's defaults. Its first step is lr / (1 - beta1),
#: so Adam's lr is capped at MAX_LR * (1 - beta1) for that step to be a float32.
ADAM_BETAS = (0.9, 0.999)
MAX_ADAM_LR = MAX_LR * (1 - ADAM_BETAS[0])


def check_lr(name: str, value, *, func: str) -> float:
    """Return the learning rate ``value`` as a float in ``[MIN_LR, MAX_LR]``, else raise
    ValueError naming ``name``."""
    return check_real(name, value, func=func, low=MIN_LR, high=MAX_LR)


def non_finite_names(tensors: Mapping[str, torch.Tensor]) -> list[str]:
    """Names of the floating-point tensors of ``tensors`` holding a NaN or an infinity, in
    order.

    Each tensor is read once (``torch.aminmax``, which propagates NaN and shows an
    infinity as an extreme) and the results are read back with one device-to-host copy
    per device rather than one per tensor: the checks run on every client round and
    every attack.
    """
    extremes: dict[torch.device, list[tuple[str, torch.Tensor]]] = {}
    for name, tensor in tensors.items():
        if tensor.is_floating_point() and tensor.numel():
            pair = torch.stack(torch.aminmax(tensor))
            extremes.setdefault(tensor.device, []).append((name, pair))
    bad = set()
    for group in extremes.values():
        finite = torch.isfinite(torch.stack([pair for _, pair in group])).all(dim=1).tolist()
        bad.update(name for (name, _), ok in zip(group, finite, strict=True) if not ok)
    return [name for name in tensors if name in bad]


def check_batch(model: nn.Module, images, labels, *, func: str) -> None:
    """Raise ValueError unless ``images`` is a finite float ``(B, C, H, W)`` batch matching
    ``model.input_shape`` (when the model records one), B >= 1, and ``labels`` is an
    integer ``(B,)`` tensor of classes in ``[0, model.num_classes)`` (when recorded)."""
    if not isinstance(images, torch.Tensor) or not images.is_floating_point():
        raise ValueError(
            f"The 'images' parameter of {func} must be a floating-point torch.Tensor. "
            f"Got {type(images).__name__} {getattr(images, 'dtype', '')} instead."
        )
    expected = getattr(model, "input_shape", None)
    if (
        images.ndim != 4
        or images.shape[0] < 1
        or (expected is not None and tuple(images.shape[1:]) != tuple(expected))
    ):
        want = "(B, C, H, W)" if expected is None else f"(B, {', '.join(map(str, expected))})"
        raise ValueError(
            f"The 'images' parameter of {func} must have shape {want} with B >= 1. "
            f"Got shape {tuple(images.shape)} instead."
        )
    if not bool(torch.isfinite(images).all()):
        raise ValueError(
            f"The 'images' parameter of {func} must contain only finite values. "
            f"Got {int((~torch.isfinite(images)).sum())} NaN or infinite entries instead."
        )
    if (
        not isinstance(labels, torch.Tensor)
        or labels.dtype not in (torch.int64, torch.int32)
        or tuple(labels.shape) != (images.shape[0],)
    ):
        raise ValueError(
            f"The 'labels' parameter of {func} must be an integer tensor of shape "
            f"({images.shape[0]},). Got {type(labels).__name__} "
            f"{tuple(getattr(labels, 'shape', ()))} {getattr(labels, 'dtype', '')} instead."
        )
    num_classes = getattr(model, "num_classes", None)
    if num_classes is not None and (labels.min() < 0 or labels.max() >= num_classes):
        raise ValueError(
            f"The 'labels' parameter of {func} must be in [0, {num_classes - 1}]. "
            f"Got range [{int(labels.min())}, {int(labels.max())}] instead."
        )


def batch_loss(
    model: nn.Module, params: Mapping[str, torch.Tensor], images: torch.Tensor, labels: torch.Tensor
) -> torch.Tensor:
    """Mean cross-entropy of ``model`` evaluated with ``params`` (``functional_call``; the
    model is not mutated), a 0-d tensor differentiable in ``params`` and ``images``.
    Inputs are not validated: this is the inner function of gradients and attacks."""
    logits = functional_call(model, params, (images,))
    return nn.functional.cross_entropy(logits, labels)


def detached(params: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """A new dict of the same tensors cut from autograd (no copy of the data)."""
    return {name: t.detach() for name, t in params.items()}


def batch_gradient(
    model: nn.Module, params: Mapping[str, torch.Tensor], images, labels
) -> dict[str, torch.Tensor]:
    """Gradient of the mean cross-entropy over the batch at ``params`` (model not mutated).

    This is PriPrune's ``x_i^t = (1/B) sum_b g_i(w, b)`` (Section "Theoretical analysis",
    eq. (3)), returned as ``{name: tensor}`` in ``params``' order.
    """
    check_batch(model, images, labels, func="batch_gradient")
    return grad(lambda p: batch_loss(model, p, images, labels))(detached(params))
