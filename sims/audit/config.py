"""The inputs of an audit: the user's model, candidate data and release, checked once.

Everything here turns what a user holds (an ``nn.Module`` or a factory, a tensor / numpy
array / ``Dataset`` of images, a :class:`~sims.pruning.mask.Mask` or a scheme's name) into
what the leakage study takes (:class:`sims.experiments.leakage.GivenSetup`); nothing is
computed here.
"""

from __future__ import annotations

import copy

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from pruneleak.sims.pruning.mask import Mask

FUNC = "audit"


class FrozenBatchNorm(nn.Module):
    """A BatchNorm layer in evaluation mode: ``(x - running_mean) / sqrt(running_var + eps)
    * weight + bias`` with the layer's running statistics, in the input's dtype (the
    releases are computed in float64). Its parameters keep their names (``weight``,
    ``bias``), so a mask of the original model fits."""

    def __init__(self, layer: nn.modules.batchnorm._BatchNorm):
        super().__init__()
        self.weight, self.bias, self.eps = layer.weight, layer.bias, layer.eps
        self.register_buffer("running_mean", layer.running_mean.detach().clone())
        self.register_buffer("running_var", layer.running_var.detach().clone())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mean, var = self.running_mean.to(x.dtype), self.running_var.to(x.dtype)
        return F.batch_norm(x, mean, var, self.weight, self.bias, False, 0.0, self.eps)


def prepare_model(model) -> tuple[nn.Module, tuple[str, ...]]:
    """A copy of ``model`` (or of ``model()``, a zero-argument factory) in evaluation mode,
    and the names of the modules whose behaviour that fixes.

    The release is computed one sample at a time and the attacks replay the client's
    forward pass, so both need a forward pass that is deterministic and per sample:
    BatchNorm layers use their running statistics (replaced by :class:`FrozenBatchNorm`)
    and dropout is off, as at inference. A client that trains in training mode would
    normalise with its batch's statistics instead: that release is not the one audited.
    A BatchNorm layer without running statistics (``track_running_stats=False``) has no
    evaluation mode and is refused. The user's model is not modified.
    """
    if not isinstance(model, nn.Module) and callable(model):
        model = model()
    if isinstance(model, torch.jit.ScriptModule):
        raise ValueError(
            f"The 'model' parameter of {FUNC} must be an eager torch.nn.Module: TorchScript "
            "modules cannot be called with substituted weights (torch.func's stateless API), "
            "which the release and the attacks need. Got a TorchScript module instead: pass "
            "the Python module (or a factory, module:factory on the command line)."
        )
    if not isinstance(model, nn.Module):
        raise ValueError(
            f"The 'model' parameter of {FUNC} must be a torch.nn.Module or a zero-argument "
            f"factory returning one. Got {type(model).__name__} instead."
        )
    if not any(True for _ in model.parameters()):
        raise ValueError(f"The 'model' parameter of {FUNC} must have parameters. Got none.")
    model = copy.deepcopy(model).eval()
    changed = []
    for name, module in list(model.named_modules()):
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            if module.running_mean is None:
                raise ValueError(
                    f"The 'model' parameter of {FUNC} has BatchNorm module {name!r} without "
                    "running statistics (track_running_stats=False): it normalises with each "
                    "batch's statistics, so a release is not computed per sample. Got "
                    f"{type(module).__name__} instead: track running statistics or remove it."
                )
            parent_name, _, child = name.rpartition(".")
            parent = model.get_submodule(parent_name) if parent_name else model
            setattr(parent, child, FrozenBatchNorm(module))
            changed.append(f"{name} ({type(module).__name__}: running statistics)")
        elif isinstance(module, nn.modules.dropout._DropoutNd):
            changed.append(f"{name} ({type(module).__name__}: off)")
    if isinstance(model, FrozenBatchNorm | nn.modules.batchnorm._BatchNorm):
        raise ValueError(f"The 'model' parameter of {FUNC} must not be a bare BatchNorm layer.")
    return model, tuple(changed)


def as_data(images, labels=None) -> tuple[torch.Tensor, torch.Tensor]:
    """``(images, labels)`` as float32 ``(N, C, H, W)`` in [0, 1] and int64 ``(N,)``, on CPU.

    ``images``: a torch tensor or numpy array ``(N, C, H, W)`` or ``(N, H, W)`` (one
    channel), float in [0, 1] or uint8 (divided by 255), with ``labels`` of length ``N``;
    or a ``torch.utils.data.Dataset`` of ``(image, label)`` pairs (``labels`` None).
    """
    if isinstance(images, torch.utils.data.Dataset):
        if labels is not None:
            raise ValueError(
                f"The 'labels' parameter of {FUNC} must be None when 'images' is a Dataset "
                f"of (image, label) pairs. Got {type(labels).__name__} instead."
            )
        pairs = [images[i] for i in range(len(images))]
        images = torch.stack([torch.as_tensor(np.asarray(x)) for x, _ in pairs])
        labels = torch.as_tensor([int(y) for _, y in pairs])
    if labels is None:
        raise ValueError(f"The 'labels' parameter of {FUNC} must be given with an image array.")
    x = torch.as_tensor(np.asarray(images) if not isinstance(images, torch.Tensor) else images)
    y = torch.as_tensor(np.asarray(labels) if not isinstance(labels, torch.Tensor) else labels)
    x, y = x.detach().cpu(), y.detach().cpu()
    if x.dtype == torch.uint8:
        x = x.to(torch.float32) / 255
    if x.ndim == 3:
        x = x.unsqueeze(1)
    if x.ndim != 4 or not x.is_floating_point() or len(x) < 2:
        raise ValueError(
            f"The 'images' parameter of {FUNC} must be (N, C, H, W) or (N, H, W) images, "
            f"float or uint8, N >= 2. Got shape {tuple(x.shape)} and {x.dtype} instead."
        )
    x = x.to(torch.float32)
    if not bool(torch.isfinite(x).all()) or x.min() < 0 or x.max() > 1:
        raise ValueError(
            f"The 'images' parameter of {FUNC} must have finite values in [0, 1] (uint8 is "
            f"divided by 255). Got range [{float(x.min())}, {float(x.max())}] instead."
        )
    if y.ndim != 1 or len(y) != len(x) or y.is_floating_point() or y.dtype == torch.bool:
        raise ValueError(
            f"The 'labels' parameter of {FUNC} must be {len(x)} integer labels, one per image. "
            f"Got shape {tuple(y.shape)} and {y.dtype} instead."
        )
    return x, y.to(torch.int64)


def num_classes_of(model: nn.Module, images: torch.Tensor, labels: torch.Tensor) -> int:
    """The model's number of classes (its logits' width on one image); every label must be
    one of them."""
    with torch.no_grad():
        param = next(model.parameters())
        logits = model(images[:1].to(param.device, param.dtype))
    if logits.ndim != 2 or logits.shape[0] != 1:
        raise ValueError(
            f"The 'model' parameter of {FUNC} must map (1, C, H, W) images to (1, classes) "
            f"logits. Got output shape {tuple(logits.shape)} instead."
        )
    classes = logits.shape[1]
    if labels.min() < 0 or labels.max() >= classes:
        raise ValueError(
            f"The 'labels' parameter of {FUNC} must be in [0, {classes - 1}] (the model has "
            f"{classes} logits). Got range [{int(labels.min())}, {int(labels.max())}] instead."
        )
    return int(classes)


def check_mask(mask, model: nn.Module) -> Mask:
    """``mask`` (a :class:`Mask` or a ``{name: bool array}`` dict) with exactly the model's
    parameter names and shapes."""
    if not isinstance(mask, Mask):
        if not isinstance(mask, dict):
            raise ValueError(
                f"The 'mask' parameter of {FUNC} must be a sims.pruning.mask.Mask or a dict "
                f"of boolean arrays. Got {type(mask).__name__} instead."
            )
        mask = Mask({k: torch.as_tensor(np.asarray(v)) for k, v in mask.items()})
    shapes = {name: tuple(t.shape) for name, t in model.named_parameters()}
    given = {name: tuple(t.shape) for name, t in mask.keep.items()}
    if given != shapes:
        missing = sorted(set(shapes) - set(given))
        extra = sorted(set(given) - set(shapes))
        wrong = sorted(n for n in set(given) & set(shapes) if given[n] != shapes[n])
        raise ValueError(
            f"The 'mask' parameter of {FUNC} must have the model's parameter names and "
            f"shapes {shapes}. Got missing {missing}, unknown {extra}, wrong shapes "
            f"{[(n, given[n]) for n in wrong]} instead."
        )
    # the model's order: releases list the kept coordinates in named_parameters order
    return Mask({name: mask.keep[name].to(torch.bool) for name in shapes})
