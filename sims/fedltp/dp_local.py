"""Local DP-SGD of Fed-LTP (Algorithm 2, lines 12-19), per-example clipping through Opacus.

Batches. Every one of the ``tau`` local iterations draws a *Poisson* batch: each of the
client's ``n`` training records is included independently with probability
``q~ = min(1, B / n)`` (expected batch size B), as Opacus' ``DPDataLoader`` does. This is
the sampling the sampled-Gaussian RDP of Mironov, Talwar and Zhang (2019) — and so
Opacus' ``RDPAccountant`` and :mod:`bounds.accounting` — analyses, under add/remove
neighbours (the paper's Definition 1). The paper's fixed-size batches of B records are
not implemented: their analysis is a different one (sampling without replacement,
substitution neighbours). The inclusion draws use a CPU generator and all ``tau``
batches of a round are copied to the device at once, so the loop never waits for the
device (Opacus' own clipping reads no value back either); an empty batch is a step with
zero gradient and full noise.

``clipping="per_example"`` (default): DP-SGD (Abadi et al. 2016) with Opacus'
``GradSampleModule`` (per-sample gradients) and ``DPOptimizer`` (each per-sample
gradient scaled by ``min(1, C / (||g_i|| + 1e-6))``, summed, plus ``N(0, sigma^2 C^2 I)``,
divided by B). The l2 sensitivity of the clipped sum under add/remove is C, so one step
is the sampled Gaussian mechanism with noise multiplier sigma.

``clipping="batch"``: line 15 of Algorithm 2 as printed,
``theta <- theta - eta (g min(1, C / ||g||) + b)`` with ``g`` the mean gradient of the
batch and ``b ~ N(0, sigma^2 C^2 I)``. Adding or removing one record can move the clipped
``g`` anywhere in the ball of radius C, so the sensitivity is **2C** and one step is the
sampled Gaussian mechanism with noise multiplier **sigma / 2** (claim
``fedltp.algorithm2.clipping``); the accountant uses that
(:attr:`sims.fedltp.config.FedLTPConfig.accounted_noise_multiplier`).

Sparse-to-sparse training: gradients (per-sample ones before clipping) are restricted
to the client's mask, the noise on pruned coordinates is discarded (post-processing) and
pruned weights stay 0. Momentum SGD starts afresh every round.
"""

from __future__ import annotations

import warnings

import torch
from opacus import GradSampleModule
from opacus.optimizers import DPOptimizer
from torch import nn

from pruneleak.bounds.validation import check_choice, check_int, check_real
from pruneleak.sims.core.runtime import generator
from pruneleak.sims.fedltp.tickets import current_params, load_params
from pruneleak.sims.pruning.mask import Mask


class DPLocalTrainer:
    """Runs ``steps`` DP-SGD iterations of one client from given weights.

    Args:
        model: the network (wrapped in an Opacus ``GradSampleModule`` for per-example
            clipping; used as it is for batch clipping). Its parameters are overwritten.
        clipping: ``"per_example"`` or ``"batch"`` (module docstring).
        max_grad_norm: C > 0. noise_multiplier: sigma >= 0 (noise std sigma C).
        batch_size: expected batch size B >= 1. momentum: in [0, 1).
        device: where the model and data live.
    """

    def __init__(
        self,
        model: nn.Module,
        *,
        clipping: str,
        max_grad_norm: float,
        noise_multiplier: float,
        batch_size: int,
        momentum: float,
        device,
    ):
        func = "DPLocalTrainer"
        self.clipping = check_choice(
            "clipping", clipping, func=func, choices=("per_example", "batch")
        )
        self.max_grad_norm = check_real(
            "max_grad_norm", max_grad_norm, func=func, low=0, low_inclusive=False
        )
        self.noise_multiplier = check_real("noise_multiplier", noise_multiplier, func=func, low=0)
        self.batch_size = check_int("batch_size", batch_size, func=func, low=1)
        self.momentum = check_real(
            "momentum", momentum, func=func, low=0, high=1, high_inclusive=False
        )
        self.device = torch.device(device)
        model = model.to(self.device)
        self.base = model
        self.module = (
            GradSampleModule(model, loss_reduction="mean") if clipping == "per_example" else model
        )

    def sampling_rate(self, n: int) -> float:
        """q~ = min(1, B / n), the Poisson inclusion probability of a client of n records."""
        return min(1.0, self.batch_size / n)

    def draw_batches(self, n: int, *, steps: int, seed: int) -> list[torch.Tensor]:
        """The ``steps`` Poisson batches of a client of ``n`` records: each record joins
        each batch independently with probability :meth:`sampling_rate` (CPU int64
        index tensors, a CPU generator seeded by ``seed``)."""
        q = self.sampling_rate(n)
        draws = generator(seed)
        return [torch.nonzero(torch.rand(n, generator=draws) < q).squeeze(1) for _ in range(steps)]

    def optimizers(self, *, lr: float, seed: int):
        """``(sgd, optimizer)``: momentum SGD on the model's weights, and what
        :meth:`private_gradient` takes (Opacus' ``DPOptimizer`` around it for per-example
        clipping, the SGD itself for batch clipping); the noise is drawn on the device
        from a generator seeded by ``seed``."""
        self._noise_gen = generator(seed, self.device)
        sgd = torch.optim.SGD(self.base.parameters(), lr=lr, momentum=self.momentum)
        if self.clipping == "batch":
            return sgd, sgd
        optimizer = DPOptimizer(
            sgd,
            noise_multiplier=self.noise_multiplier,
            max_grad_norm=self.max_grad_norm,
            expected_batch_size=self.batch_size,
            loss_reduction="mean",
            generator=self._noise_gen,
        )
        return sgd, optimizer

    def private_gradient(self, optimizer, keep, images, labels) -> None:
        """Leave in each ``p.grad`` the noisy clipped gradient of one batch (empty allowed),
        restricted to ``keep``; ``optimizer`` is the :class:`DPOptimizer` (per-example) or
        the plain SGD (batch) of :meth:`train`."""
        named = list(self.base.named_parameters())
        optimizer.zero_grad(set_to_none=True)
        if self.clipping == "per_example":
            if len(labels) == 0:
                for _, p in named:
                    p.grad_sample = torch.zeros((0, *p.shape), device=p.device, dtype=p.dtype)
            else:
                with warnings.catch_warnings():
                    # Opacus' hooks warn that the inputs need no gradient: none is needed
                    warnings.filterwarnings("ignore", message="Full backward hook is firing")
                    nn.functional.cross_entropy(self.module(images), labels).backward()
                for name, p in named:
                    p.grad_sample.mul_(keep[name])  # gradient of the sparse model
            optimizer.pre_step()  # Opacus: clip, sum, add N(0, sigma^2 C^2), divide by B
            for name, p in named:
                p.grad.mul_(keep[name])
            return
        # batch clipping (line 15 as printed)
        if len(labels) == 0:
            grads = [torch.zeros_like(p) for _, p in named]
        else:
            loss = nn.functional.cross_entropy(self.module(images), labels)
            grads = torch.autograd.grad(loss, [p for _, p in named])
            grads = [g * keep[name] for g, (name, _) in zip(grads, named, strict=True)]
        norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
        factor = torch.clamp(self.max_grad_norm / (norm + 1e-6), max=1.0)
        std = self.noise_multiplier * self.max_grad_norm
        for g, (name, p) in zip(grads, named, strict=True):
            noise = torch.normal(0.0, std, p.shape, device=p.device, generator=self._noise_gen)
            p.grad = (g * factor + noise) * keep[name]

    def train(
        self,
        params: dict[str, torch.Tensor],
        mask: Mask,
        images: torch.Tensor,
        labels: torch.Tensor,
        *,
        steps: int,
        lr: float,
        seed: int,
    ) -> dict[str, torch.Tensor]:
        """``steps`` DP-SGD iterations from ``params`` on one client's data (already on
        the device); returns the new weights (pruned ones 0). ``seed`` drives the batch
        draws (CPU) and the noise (on the device).

        Afterwards ``self.finite`` is a 0-d boolean tensor on the device: whether every
        weight was finite after every step. It is accumulated on the device and not read
        here, so the steps never wait for the device; the caller reads it once per round
        (so a client's weight that overflowed is caught even when Fed-SPA's upload mask
        keeps it from the server)."""
        func = "DPLocalTrainer.train"
        steps = check_int("steps", steps, func=func, low=1)
        lr = check_real("lr", lr, func=func, low=0, low_inclusive=False)
        n = len(labels)
        load_params(self.base, mask.apply(params))
        keep = {k: v.to(self.device) for k, v in mask.keep.items()}
        sgd, optimizer = self.optimizers(lr=lr, seed=seed + 1)
        named = list(self.base.named_parameters())
        # all tau Poisson batches drawn on the host first and copied in one transfer, so
        # the loop below never waits for the device (their sizes are host integers)
        drawn = self.draw_batches(n, steps=steps, seed=seed)
        chosen_all = torch.cat(drawn).to(self.device)
        finite = torch.ones((), dtype=torch.bool, device=self.device)
        for chosen in chosen_all.split([len(d) for d in drawn]):
            self.private_gradient(optimizer, keep, images[chosen], labels[chosen])
            sgd.step()
            with torch.no_grad():
                for name, p in named:
                    p.mul_(keep[name])
                    finite &= torch.isfinite(p).all()
        self.finite = finite
        if self.clipping == "per_example":
            optimizer.zero_grad(set_to_none=True)
        return current_params(self.base)
