r"""Gradual magnitude pruning: Zhu and Gupta's cubic sparsity schedule and SGD under it.

Zhu and Gupta, *To prune, or not to prune*, arXiv:1710.01878, eq. (1); used by Huang et
al., *Privacy-preserving Learning via Deep Net Pruning*, arXiv:2003.01876, Section 4.1 and
Algorithm 2 (training stage, lines 5-8; pruning stage, lines 9-15).

Sparsity is the fraction of weights set to zero. Each prunable layer (conv and linear
weights; biases are kept) is pruned to the schedule's sparsity on its own
(:func:`sims.pruning.mask.magnitude_mask`), the layer-wise reading of Algorithm 2's
THPRUNE that Huang et al.'s Section 4.3 ("layers with the same target sparsity") implies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from pruneleak.bounds.validation import check_choice, check_int, check_real
from pruneleak.sims.core.functional import check_batch, check_lr
from pruneleak.sims.core.runtime import check_seed
from pruneleak.sims.pruning.mask import Mask, magnitude_mask

#: The optimizers of :func:`train_sgd` (Huang et al., Table 2: SGD for MNIST, Adam for
#: CIFAR-10).
OPTIMIZERS = ("sgd", "adam")


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
    optimizer: str = "sgd",
) -> Mask:
    """Minibatch SGD with momentum (or Adam) on ``model`` in place, optionally with gradual
    magnitude pruning (Huang et al., Algorithm 2; Zhu and Gupta's schedule).

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
        optimizer: ``"sgd"`` (with ``momentum``; Table 2's optimizer for MNIST) or
            ``"adam"`` (PyTorch's defaults besides ``lr``, ``momentum`` unused; Table 2's
            optimizer for CIFAR-10).

    Returns:
        The final mask (all-True without a schedule).

    Raises:
        ValueError: on invalid arguments, and when training diverges (``lr`` too large):
            checked once per epoch, the epoch's mean loss or the weights are not finite.
    """
    func = "train_sgd"
    check_batch(model, images, labels, func=func)
    epochs = check_int("epochs", epochs, func=func, low=1)
    batch_size = check_int("batch_size", batch_size, func=func, low=1)
    lr = check_lr("lr", lr, func=func)
    momentum = check_real("momentum", momentum, func=func, low=0, high=1, high_inclusive=False)
    check_choice("optimizer", optimizer, func=func, choices=OPTIMIZERS)
    generator = torch.Generator().manual_seed(check_seed(seed, func=func))
    params = dict(model.named_parameters())
    mask = Mask.ones(params)
    if optimizer == "adam":
        stepper = torch.optim.Adam(model.parameters(), lr=lr)
    else:
        stepper = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    total_steps = epochs * math.ceil(len(images) / batch_size)
    annealing = torch.optim.lr_scheduler.CosineAnnealingLR(stepper, T_max=total_steps)
    step = 0
    model.train()
    for epoch in range(1, epochs + 1):
        order = torch.randperm(len(images), generator=generator).to(images.device)
        epoch_loss = torch.zeros((), device=images.device)
        for index in order.split(batch_size):
            if schedule is not None:
                if schedule.is_update(step):
                    mask = magnitude_mask(params, schedule.sparsity(step))
                _apply_mask_(model, mask)
            loss = nn.functional.cross_entropy(model(images[index]), labels[index])
            epoch_loss += loss.detach() * len(index)
            stepper.zero_grad(set_to_none=True)
            loss.backward()
            stepper.step()
            if anneal:
                annealing.step()
            step += 1
        # host synchronisations once per epoch, not per step
        mean_loss = float(epoch_loss) / len(images)
        finite = torch.stack([torch.isfinite(p).all() for p in model.parameters()]).all()
        if not math.isfinite(mean_loss) or not bool(finite):
            raise ValueError(
                f"Training diverged in epoch {epoch} of {func}: the mean training loss is "
                f"{mean_loss} and the weights are {'' if bool(finite) else 'not '}finite. "
                f"The 'lr' parameter is too large for this model and data; got lr={lr!r}."
            )
    if schedule is not None:
        mask = magnitude_mask(params, schedule.final)
        _apply_mask_(model, mask)
    model.eval()
    return mask
