"""What the server knows of the target client's round, and the secrets it cannot see.

A release mechanism (:mod:`sims.releases`) maps the target's secret, a batch of ``B``
distinct candidates drawn uniformly from ``M`` (``N = C(M, B)`` equally likely values), to
what the server sees. Everything else is fixed and known to the server (the worst case
for privacy, and the setting of PriPrune's analysis): the architecture, the broadcast
weights, the base mask, the learning rate, the number of local steps and where the
gradient is taken. :class:`ClientSetting` holds these, in float64: the exact leakage
decides which releases are equal, and float32 rounding merges releases that differ by
less than its resolution.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass

import torch
from torch import nn

from pruneleak.bounds.validation import check_choice, check_int
from pruneleak.sims.attacks.checks import check_param_dict
from pruneleak.sims.core.functional import check_batch, check_lr
from pruneleak.sims.core.memory import check_fits
from pruneleak.sims.pruning.mask import Mask

GRADIENT_AT = ("masked", "dense")
#: Default cap on the number of secrets a release is computed for one by one (every
#: B-subset of the candidates): a release that is not the mean of its members' releases
#: (several local steps or rounds, a defense) has one simulated world per secret.
MAX_SECRETS = 20_000


@dataclass(frozen=True)
class ClientSetting:
    """The target client's round as the server knows it (module docstring).

    Attributes:
        model: the architecture, called through ``torch.func.functional_call`` with the
            weights below (its own parameters are not used or modified).
        params: the broadcast weights ``w`` of the round, ``{name: tensor}`` in the
            model's ``named_parameters`` order; stored as detached float64 copies.
        mask: the base pruning mask ``m`` the client trains under (PriPrune eq. (1)).
        lr: the client's learning rate ``r`` of eq. (1), > 0.
        local_steps: full-batch steps ``tau`` on the batch per round (FedSGD: 1), >= 1.
        gradient_at: ``"masked"`` (the gradient at ``m ⊙ w``, eq. (1) as read in
            :mod:`sims.fl.client`) or ``"dense"`` (at ``w``).
    """

    model: nn.Module
    params: Mapping[str, torch.Tensor]
    mask: Mask
    lr: float
    local_steps: int = 1
    gradient_at: str = "masked"

    def __post_init__(self) -> None:
        func = "ClientSetting"
        if not isinstance(self.model, nn.Module):
            raise ValueError(
                f"The 'model' parameter of {func} must be a torch.nn.Module. "
                f"Got {type(self.model).__name__} instead."
            )
        if not isinstance(self.mask, Mask):
            raise ValueError(
                f"The 'mask' parameter of {func} must be a sims.pruning.Mask. "
                f"Got {type(self.mask).__name__} instead."
            )
        check_lr("lr", self.lr, func=func)
        check_int("local_steps", self.local_steps, func=func, low=1)
        check_choice("gradient_at", self.gradient_at, func=func, choices=GRADIENT_AT)
        names = [name for name, _ in self.model.named_parameters()]
        if list(self.params) != names or list(self.mask.keep) != names:
            raise ValueError(
                f"The 'params' and 'mask' parameters of {func} must be keyed like the "
                f"model's named_parameters, {names}. Got {list(self.params)} and "
                f"{list(self.mask.keep)} instead."
            )
        check_param_dict("params", self.params, func=func, model=self.model)
        for name, flags in self.mask.keep.items():
            if flags.shape != self.params[name].shape:
                raise ValueError(
                    f"The 'mask' parameter of {func} must give {name!r} the shape of its "
                    f"weights, {tuple(self.params[name].shape)}. Got {tuple(flags.shape)} instead."
                )
        device = next(iter(self.params.values())).device
        object.__setattr__(
            self,
            "params",
            {name: t.detach().to(torch.float64) for name, t in self.params.items()},
        )
        object.__setattr__(self, "mask", self.mask.to(device))

    @property
    def device(self) -> torch.device:
        return next(iter(self.params.values())).device

    def kept_rows(self, weights: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """The kept coordinates of per-row weights ``{name: (n, *shape)}`` as an ``(n, k)``
        float64 matrix, ``k = mask.num_kept()``, in the mask's (named_parameters) order."""
        n = next(iter(weights.values())).shape[0]
        flat = torch.cat([weights[name].reshape(n, -1) for name in self.mask.keep], dim=1)
        return flat[:, self.mask.flatten()]


def secret_batches(candidates: int, batch_size: int, *, max_secrets: int = MAX_SECRETS):
    """Every ``batch_size``-subset of ``range(candidates)``, ``(N, B)`` int64 in
    lexicographic order: the secrets of a release computed one world per secret. A
    ValueError names ``batch_size`` when ``N = C(M, B)`` exceeds ``max_secrets``."""
    func = "secret_batches"
    m = check_int("candidates", candidates, func=func, low=1)
    b = check_int("batch_size", batch_size, func=func, low=1, high=m)
    cap = check_int("max_secrets", max_secrets, func=func, low=1)
    n = math.comb(m, b)
    if n > cap:
        raise ValueError(
            f"The 'batch_size' parameter of {func} gives C({m}, {b}) = {n} secrets, each a "
            f"world to simulate; at most {cap} are allowed. Got {b} instead: use fewer "
            "candidates or a smaller batch."
        )
    combos = itertools.combinations(range(m), b)
    return torch.tensor(list(combos), dtype=torch.int64).reshape(n, b)


def secret_data(
    setting: ClientSetting,
    images: torch.Tensor,
    labels: torch.Tensor,
    batch_size: int,
    *,
    max_secrets: int,
    func: str,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Every secret's batch, ``(N, B, C, H, W)`` float64 images and ``(N, B)`` labels on the
    setting's device (:func:`secret_batches` order), after checking the ``M`` candidates
    against the model, ``batch_size`` against ``[1, M]`` and that the ``N`` worlds fit
    (:func:`check_worlds_fit`); ``func`` names the caller."""
    check_batch(setting.model, images, labels, func=func)
    b = check_int("batch_size", batch_size, func=func, low=1, high=len(images))
    index = secret_batches(len(images), b, max_secrets=max_secrets).to(setting.device)
    check_worlds_fit(setting, len(index), func=func)
    return images.to(setting.device, torch.float64)[index], labels.to(setting.device)[index]


#: Copies of every world's weights that a computation world by world holds (its state, the
#: step's gradient, the new state).
WORLD_COPIES = 3


def check_worlds_fit(setting: ClientSetting, worlds: int, *, func: str) -> None:
    """ValueError naming the candidates when ``worlds`` float64 copies of the model's
    weights, :data:`WORLD_COPIES` times, exceed the memory of the setting's device
    (:func:`sims.core.memory.check_fits`)."""
    weights = sum(t.numel() for t in setting.params.values())
    check_fits(
        f"The release of {func}: {worlds} secrets (C(M, B) for the candidates and batch "
        f"size), one world of {weights:,} weights each,",
        worlds * weights,
        unit="float64 weights",
        bytes_each=8,
        copies=WORLD_COPIES,
        device=setting.device,
    )
