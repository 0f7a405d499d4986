"""Pruning masks of the base pruning step of PriPrune (Chu et al., arXiv:2310.19958, eq. (1)).

A :class:`Mask` holds one boolean tensor per model parameter, keyed like
``model.named_parameters()``: ``True`` keeps the coordinate, ``False`` prunes it. Only
weights of convolutional and linear layers are *prunable* (tensors with ``ndim >= 2``);
biases are never pruned and their mask is all-True, since PriPrune (and the magnitude
pruning of Han et al. 2015 it builds on) prunes weights. The pruning rate ``p`` is the
fraction of prunable weights set to zero; ``density = 1 - p``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import torch
from torch import nn

from bounds.validation import check_int, check_real


def prunable_names(params: Mapping[str, torch.Tensor]) -> list[str]:
    """Names of the prunable tensors: conv/linear weights, i.e. tensors with ``ndim >= 2``."""
    return [name for name, tensor in params.items() if tensor.ndim >= 2]


def _as_params(model_or_params) -> dict[str, torch.Tensor]:
    if isinstance(model_or_params, nn.Module):
        return dict(model_or_params.named_parameters())
    return dict(model_or_params)


@dataclass(frozen=True, eq=False)
class Mask:
    """Boolean keep-mask per parameter (``True`` = kept); see the module docstring."""

    keep: dict[str, torch.Tensor]

    def __post_init__(self) -> None:
        if not self.keep:
            raise ValueError("The 'keep' parameter of Mask must name at least one parameter.")
        for name, tensor in self.keep.items():
            if not isinstance(tensor, torch.Tensor) or tensor.dtype != torch.bool:
                raise ValueError(
                    f"The 'keep' parameter of Mask must map names to bool tensors. "
                    f"Got {getattr(tensor, 'dtype', type(tensor).__name__)} for {name!r} instead."
                )
            if tensor.ndim < 2 and not bool(tensor.all()):
                raise ValueError(
                    f"The 'keep' parameter of Mask must keep every non-prunable (ndim < 2) "
                    f"tensor whole. Got pruned entries in {name!r} instead."
                )

    @classmethod
    def ones(cls, model_or_params) -> Mask:
        """The mask that keeps everything, for a module or a ``{name: tensor}`` dict."""
        params = _as_params(model_or_params)
        return cls({name: torch.ones_like(t, dtype=torch.bool) for name, t in params.items()})

    def num_prunable(self) -> int:
        """Number of prunable coordinates (weights of conv/linear layers)."""
        return int(sum(self.keep[name].numel() for name in prunable_names(self.keep)))

    def num_pruned(self) -> int:
        """Number of coordinates set to zero (all of them are prunable)."""
        return int(sum(int((~t).sum()) for t in self.keep.values()))

    def num_kept(self) -> int:
        """Number of kept coordinates over *all* parameters (biases included): the
        coordinates a client transmits."""
        return int(sum(t.numel() for t in self.keep.values())) - self.num_pruned()

    def density(self) -> float:
        """Kept fraction of the prunable coordinates, ``1 - p``."""
        return 1.0 - self.sparsity()

    def sparsity(self) -> float:
        """Pruned fraction of the prunable coordinates, the pruning rate ``p``."""
        return self.num_pruned() / self.num_prunable() if self.num_prunable() else 0.0

    def apply(self, params: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """``m ⊙ w`` for every parameter (a new dict; the inputs are not modified).

        The flags follow each parameter to its device (a no-op when they are already there).
        """
        missing = set(self.keep) ^ set(params)
        if missing:
            raise ValueError(
                f"The 'params' parameter of Mask.apply must have the mask's names. "
                f"Got a difference in {sorted(missing)} instead."
            )
        return {name: params[name] * self.keep[name].to(params[name].device) for name in self.keep}

    def to(self, device: str | torch.device) -> Mask:
        """The same mask with its tensors on ``device``."""
        return Mask({name: t.to(device) for name, t in self.keep.items()})

    def flatten(self) -> torch.Tensor:
        """All keep flags concatenated in the mask's (named_parameters) order, shape ``(d,)``."""
        return torch.cat([t.reshape(-1) for t in self.keep.values()])

    def equals(self, other: Mask) -> bool:
        """True when both masks have the same names, in order, and the same flags."""
        return list(self.keep) == list(other.keep) and all(
            torch.equal(self.keep[n].cpu(), other.keep[n].cpu()) for n in self.keep
        )


def _check_rate(p: float, func: str) -> float:
    return check_real("p", p, func=func, low=0, high=1)


def random_mask(params: Mapping[str, torch.Tensor], p: float, *, seed: int) -> Mask:
    """Prune exactly ``round(p * n)`` of the ``n`` prunable weights, uniformly at random.

    Global-exact: the pruned set is a uniformly random subset of that size drawn over all
    prunable weights together (not layer by layer). Every prunable coordinate is then
    pruned with the same probability ``round(p n) / n``, the exchangeable setting of
    PriPrune's analysis (Theorem 1 uses only the count of kept coordinates,
    ``d (1 - p)``). The permutation is drawn on CPU from ``torch.Generator(seed)`` so the
    mask does not depend on the device; the mask lives on the parameters' device.
    """
    func = "random_mask"
    p = _check_rate(p, func)
    seed = check_int("seed", seed, func=func, low=0)
    params = _as_params(params)
    names = prunable_names(params)
    sizes = [params[name].numel() for name in names]
    n = sum(sizes)
    flat = torch.ones(n, dtype=torch.bool)
    generator = torch.Generator().manual_seed(seed)
    flat[torch.randperm(n, generator=generator)[: round(p * n)]] = False
    keep = {name: torch.ones_like(t, dtype=torch.bool) for name, t in params.items()}
    for name, chunk in zip(names, flat.split(sizes), strict=True):
        keep[name] = chunk.reshape(params[name].shape).to(params[name].device)
    return Mask(keep)


def magnitude_mask(params: Mapping[str, torch.Tensor], p: float) -> Mask:
    """Layer-wise magnitude pruning (Han et al. 2015): in each prunable layer the
    ``round(p * n_layer)`` weights of smallest ``|w|`` are pruned.

    Ties are broken by position (a stable sort), so the mask is deterministic.
    """
    p = _check_rate(p, "magnitude_mask")
    params = _as_params(params)
    keep = {name: torch.ones_like(t, dtype=torch.bool) for name, t in params.items()}
    for name in prunable_names(params):
        w = params[name].detach().reshape(-1)
        order = torch.sort(w.abs(), stable=True).indices
        flat = torch.ones_like(w, dtype=torch.bool)
        flat[order[: round(p * w.numel())]] = False
        keep[name] = flat.reshape(params[name].shape)
    return Mask(keep)
