"""Algorithm 1 of Fed-LTP: winning tickets on public data, scored and drawn by softmax.

For each of the M tickets (``j = 0 .. M-1``): a fresh random initialisation ``w0``
(seeded by ``(seed, j)``), then ``iterations`` rounds of lottery-ticket pruning with
rewinding (Frankle and Carbin 2019): train the masked network ``M ⊙ w0`` for ``k``
iterations on the public data to get ``w_j``, prune ``Pr`` of each layer's remaining
weights by magnitude (:func:`sims.fedltp.masks.prune_remaining`), rewind the survivors
to ``w0``. Algorithm 1 as printed is one such round (``iterations = 1``, density
``1 - Pr``); ``i`` rounds give ``(1 - Pr)^i`` per layer. The ticket is ``M ⊙ w0``:
its kept weights equal ``w0`` bit for bit, its pruned ones are 0.

Score (line 8): ``V(w_j, D_pub)``, the number of correctly classified public validation
samples by the trained network ``w_j`` from which the last mask was taken.
Selection (eq. 10): ``P_j = exp(V_j / T) / sum_l exp(V_l / T)`` with temperature ``T = 1``
as printed (a count-valued V makes this nearly an arg-max; ``T`` tempers it).

No private data is touched, so Algorithm 1 costs no privacy budget (Sec. 4.1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from pruneleak.bounds.validation import check_int, check_real
from pruneleak.sims.core.functional import non_finite_names
from pruneleak.sims.core.runtime import generator, seeded
from pruneleak.sims.data.datasets import ImageDataset
from pruneleak.sims.fedltp.masks import prune_remaining
from pruneleak.sims.pruning.mask import Mask


@dataclass(frozen=True, eq=False)
class Ticket:
    """One winning ticket: ``w0``, its mask, the trained ``w_j`` and the score V."""

    init: dict[str, torch.Tensor]
    mask: Mask
    trained: dict[str, torch.Tensor]
    score: int

    @property
    def params(self) -> dict[str, torch.Tensor]:
        """``M ⊙ w0``, the rewound ticket (Algorithm 1 line 6)."""
        return self.mask.apply(self.init)


def load_params(module: nn.Module, params: dict[str, torch.Tensor]) -> None:
    """Copy ``params`` into ``module``'s parameters in place (names of named_parameters)."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            p.copy_(params[name])


def current_params(module: nn.Module) -> dict[str, torch.Tensor]:
    """Detached clones of ``module``'s parameters."""
    return {name: p.detach().clone() for name, p in module.named_parameters()}


def count_correct(module: nn.Module, data: ImageDataset, device, batch_size: int = 1000) -> int:
    """Number of samples of ``data`` whose arg-max logit is the label (one host read)."""
    correct = torch.zeros((), dtype=torch.int64, device=device)
    with torch.no_grad():
        for x, y in zip(data.images.split(batch_size), data.labels.split(batch_size), strict=True):
            correct += (module(x.to(device)).argmax(1) == y.to(device)).sum()
    return int(correct)


def train_masked(
    module: nn.Module,
    mask: Mask,
    data: ImageDataset,
    *,
    steps: int,
    lr: float,
    batch_size: int,
    seed: int,
    device,
) -> None:
    """``steps`` Adam iterations (the paper's public-data learning rate) on batches drawn
    with replacement; pruned weights get no gradient and stay 0."""
    gen = generator(seed)
    images, labels = data.images.to(device), data.labels.to(device)
    keep = {n: mask.keep[n].to(device) for n in mask.keep}
    opt = torch.optim.Adam(module.parameters(), lr=lr)
    named = list(module.named_parameters())
    every = torch.randint(len(data), (steps, min(batch_size, len(data))), generator=gen)
    for idx in every.to(device):  # one host-to-device copy for all steps
        opt.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(module(images[idx]), labels[idx]).backward()
        for name, p in named:
            p.grad.mul_(keep[name])
        opt.step()
        with torch.no_grad():
            for name, p in named:
                p.mul_(keep[name])


def find_ticket(
    model_factory: Callable[[], nn.Module],
    public: ImageDataset,
    public_val: ImageDataset,
    *,
    prune_degree: float,
    iterations: int = 1,
    steps: int,
    lr: float,
    batch_size: int,
    seed: int,
    device="cpu",
) -> Ticket:
    """One ticket of Algorithm 1 (lines 3-6 and the score of line 8); see the module
    docstring. ``model_factory()`` builds the network; its parameters are ``w0`` drawn
    under ``seed``."""
    func = "find_ticket"
    prune_degree = check_real(
        "prune_degree", prune_degree, func=func, low=0, high=1, high_inclusive=False
    )
    iterations = check_int("iterations", iterations, func=func, low=1)
    steps = check_int("steps", steps, func=func, low=1)
    batch_size = check_int("batch_size", batch_size, func=func, low=1)
    lr = check_real("lr", lr, func=func, low=0, low_inclusive=False)
    with seeded(seed):
        module = model_factory().to(device)
    init = current_params(module)
    mask = Mask.ones(init)
    trained = init
    for it in range(iterations):
        load_params(module, mask.apply(init))  # rewind to w0
        train_masked(
            module,
            mask,
            public,
            steps=steps,
            lr=lr,
            batch_size=batch_size,
            seed=seed * 1000 + it,
            device=device,
        )
        trained = current_params(module)
        diverged = non_finite_names(trained)  # one host read per pruning iteration
        if diverged:
            raise ValueError(
                f"The 'lr' parameter of {func} (FedLTPConfig.ticket_lr) made the ticket's "
                f"training diverge in pruning iteration {it}: {', '.join(diverged)} no longer "
                f"finite (float32). Got {lr!r}: lower it."
            )
        mask = prune_remaining(trained, mask, prune_degree)
    load_params(module, trained)
    return Ticket(
        init=init, mask=mask, trained=trained, score=count_correct(module, public_val, device)
    )


def find_tickets(
    model_factory: Callable[[], nn.Module],
    public: ImageDataset,
    public_val: ImageDataset,
    *,
    num_tickets: int,
    seed: int,
    **kwargs,
) -> list[Ticket]:
    """Algorithm 1, Procedure 1: ``num_tickets`` tickets, ticket ``j`` seeded by
    ``seed * num_tickets + j`` (other arguments as :func:`find_ticket`)."""
    num_tickets = check_int("num_tickets", num_tickets, func="find_tickets", low=1)
    return [
        find_ticket(model_factory, public, public_val, seed=seed * num_tickets + j, **kwargs)
        for j in range(num_tickets)
    ]


def selection_probabilities(scores, *, temperature: float = 1.0) -> np.ndarray:
    r"""Eq. 10: :math:`P_j = e^{V_j/T} / \sum_l e^{V_l/T}` (max-shifted, no overflow)."""
    func = "selection_probabilities"
    temperature = check_real("temperature", temperature, func=func, low=0, low_inclusive=False)
    v = np.asarray(scores, dtype=float)
    if v.ndim != 1 or v.size == 0 or not np.isfinite(v).all():
        raise ValueError(
            f"The 'scores' parameter of {func} must be a non-empty 1-D array of finite "
            f"values. Got {scores!r} instead."
        )
    z = (v - v.max()) / temperature
    e = np.exp(z)
    return e / e.sum()


def select_ticket(tickets: list[Ticket], *, temperature: float = 1.0, seed: int) -> int:
    """Algorithm 1, Procedure 2: the index of the ticket drawn with the eq. 10 probabilities."""
    probs = selection_probabilities([t.score for t in tickets], temperature=temperature)
    return int(np.random.default_rng([seed, 10]).choice(len(tickets), p=probs))
