"""One client's local update in pruned federated learning (PriPrune, arXiv:2310.19958).

PriPrune eq. (1) (Problem Formulation; Algorithm 1, UserUpdate)::

    w_hat_i^t := ( w^t - r * d l_i(F(D_i, w^t ⊙ m^t), y_i) / d w^t ) ⊙ m_i^t

Our reading: the forward pass uses the *pruned* weights ``m ⊙ w`` and the update is
masked again before it is sent. With one mask ``m`` for both places (the base pruning
mask of the round) and ``v = m ⊙ w``, the chain rule gives
``d l(F(m ⊙ w)) / d w = m ⊙ grad_v l(v)``, so with ``m ⊙ m = m``::

    w_hat = m ⊙ (w - r * grad_v l(m ⊙ w))

which is what :func:`client_update` computes (``gradient_at="masked"``). The paper's
``m^t`` (global) and ``m_i^t`` (user) masks coincide here; a caller wanting two masks
can compose two calls. ``gradient_at="dense"`` evaluates the gradient at ``w`` instead
(train densely, prune only the upload), for comparison. The two readings agree when
the broadcast weights are already pruned, as after Algorithm 1's aggregation (line 11,
``w^t <- (sum_i |D_i|/|D| w_hat_i^t) ⊙ m^t``); they differ from a dense start (round 1,
or when ``global_params`` are not masked). Several local steps repeat eq. (1) from the
previous step's output, as UserUpdate's loop over local epochs does. The paper writes
the loss over the whole local data set ``D_i``; the theory (eq. (3)) uses a batch of
size B: here the step is full-batch on the ``images`` given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import torch
from torch import nn
from torch.func import functional_call, grad

from bounds.validation import check_choice, check_int, check_real
from sims.pruning import Mask


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


def _detached(params: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {name: t.detach() for name, t in params.items()}


def batch_gradient(
    model: nn.Module, params: Mapping[str, torch.Tensor], images, labels
) -> dict[str, torch.Tensor]:
    """Gradient of the mean cross-entropy over the batch at ``params`` (model not mutated).

    This is PriPrune's ``x_i^t = (1/B) sum_b g_i(w, b)`` (Section "Theoretical analysis",
    eq. (3)), returned as ``{name: tensor}`` in ``params``' order.
    """
    check_batch(model, images, labels, func="batch_gradient")
    return grad(lambda p: batch_loss(model, p, images, labels))(_detached(params))


def client_update(
    model: nn.Module,
    global_params: Mapping[str, torch.Tensor],
    mask: Mask,
    images,
    labels,
    *,
    lr: float,
    local_steps: int = 1,
    gradient_at: str = "masked",
) -> dict[str, torch.Tensor]:
    """The pruned local model a client sends to the server, PriPrune eq. (1).

    Starting from ``w = global_params``, each of ``local_steps`` full-batch SGD steps with
    learning rate ``lr`` and mean cross-entropy loss computes
    ``w <- m ⊙ (w - lr * grad l(v))`` with ``v = m ⊙ w`` (``gradient_at="masked"``,
    eq. (1) as read in the module docstring) or ``v = w`` (``gradient_at="dense"``).
    Returns the final masked weights ``w_hat`` as ``{name: tensor}``; the model object
    and ``global_params`` are not modified.
    """
    func = "client_update"
    lr = check_real("lr", lr, func=func, low=0, low_inclusive=False)
    local_steps = check_int("local_steps", local_steps, func=func, low=1)
    check_choice("gradient_at", gradient_at, func=func, choices=("masked", "dense"))
    check_batch(model, images, labels, func=func)
    return local_sgd(
        model, global_params, mask, [(images, labels)] * local_steps, lr=lr, gradient_at=gradient_at
    )


def local_sgd(
    model: nn.Module,
    global_params: Mapping[str, torch.Tensor],
    mask: Mask,
    batches: Iterable[tuple[torch.Tensor, torch.Tensor]],
    *,
    lr: float,
    gradient_at: str = "masked",
    on_gradient: Callable[[dict[str, torch.Tensor]], None] | None = None,
) -> dict[str, torch.Tensor]:
    """The loop of :func:`client_update`, one eq. (1) step per ``(images, labels)`` batch.

    No validation (the caller validated once): this is the inner loop of the
    multi-round simulation (:mod:`sims.federated`), where FedSGD repeats one batch and
    FedAvg walks over minibatches. ``on_gradient`` receives each step's dense gradient
    ``grad l(v)`` (every coordinate, pruned ones included), e.g. for PruneFL's
    importance.
    """
    w = _detached(global_params)
    for images, labels in batches:
        at = mask.apply(w) if gradient_at == "masked" else w
        g = grad(batch_loss, argnums=1)(model, at, images, labels)
        if on_gradient is not None:
            on_gradient(g)
        w = mask.apply({name: w[name] - lr * g[name] for name in w})
    return w


@dataclass(frozen=True)
class RoundConfig:
    """Hyper-parameters of one FL round under attack (PriPrune Algorithm 1).

    Attributes:
        p: base pruning rate, fraction of prunable weights pruned, in [0, 1].
        batch_size: local batch size B >= 1 (full-batch local steps).
        lr: learning rate r > 0 of eq. (1).
        local_steps: number of local SGD steps (UserUpdate's local epochs), >= 1.
        pruning: base pruning scheme, ``"random"`` or ``"magnitude"``.
        seed: seed of everything random in the round, >= 0.
    """

    p: float
    batch_size: int
    lr: float
    local_steps: int = 1
    pruning: str = "random"
    seed: int = 0

    def __post_init__(self) -> None:
        func = "RoundConfig"
        check_real("p", self.p, func=func, low=0, high=1)
        check_int("batch_size", self.batch_size, func=func, low=1)
        check_real("lr", self.lr, func=func, low=0, low_inclusive=False)
        check_int("local_steps", self.local_steps, func=func, low=1)
        check_choice("pruning", self.pruning, func=func, choices=("random", "magnitude"))
        check_int("seed", self.seed, func=func, low=0)
