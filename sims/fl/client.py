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

import torch
from torch import nn
from torch.func import grad_and_value

from pruneleak.bounds.validation import check_choice, check_int
from pruneleak.sims.core.functional import batch_loss, check_batch, check_lr, detached
from pruneleak.sims.pruning.mask import Mask


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
    lr = check_lr("lr", lr, func=func)
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
    on_loss: Callable[[torch.Tensor], None] | None = None,
) -> dict[str, torch.Tensor]:
    """The loop of :func:`client_update`, one eq. (1) step per ``(images, labels)`` batch.

    No validation (the caller validated once): this is the inner loop of the
    multi-round simulation (:mod:`sims.fl.server`), where FedSGD repeats one batch and
    FedAvg walks over minibatches. ``on_gradient`` receives each step's dense gradient
    ``grad l(v)`` (every coordinate, pruned ones included), e.g. for PruneFL's
    importance; ``on_loss`` each step's loss ``l(v)``, a 0-d tensor on the device (not
    synchronised), e.g. to detect divergence.
    """
    w = detached(global_params)
    for images, labels in batches:
        at = mask.apply(w) if gradient_at == "masked" else w
        g, loss = grad_and_value(batch_loss, argnums=1)(model, at, images, labels)
        if on_gradient is not None:
            on_gradient(g)
        if on_loss is not None:
            on_loss(loss)
        w = mask.apply({name: w[name] - lr * g[name] for name in w})
    return w
