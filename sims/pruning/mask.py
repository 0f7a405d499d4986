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

from pruneleak.bounds.validation import check_int, check_real
from pruneleak.sims.core.functional import non_finite_names
from pruneleak.sims.core.runtime import check_seed


def prunable_names(params: Mapping[str, torch.Tensor]) -> list[str]:
    """Names of the prunable tensors: conv/linear weights, i.e. tensors with ``ndim >= 2``."""
    return [name for name, tensor in params.items() if tensor.ndim >= 2]


def _as_params(model_or_params) -> dict[str, torch.Tensor]:
    if isinstance(model_or_params, nn.Module):
        return dict(model_or_params.named_parameters())
    return dict(model_or_params)


def _stacked_by_device(scalars: list[torch.Tensor]) -> list[torch.Tensor]:
    """The 0-d tensors ``scalars`` stacked into one 1-d tensor per device, so that reading
    them costs one device-to-host copy per device rather than one per tensor (masks are
    built and counted on every client round)."""
    by_device: dict[torch.device, list[torch.Tensor]] = {}
    for scalar in scalars:
        by_device.setdefault(scalar.device, []).append(scalar)
    return [torch.stack(group) for group in by_device.values()]


def _all_true(flags: list[torch.Tensor]) -> bool:
    """Whether every 0-d bool tensor in ``flags`` is True (one read per device)."""
    return all(bool(group.all()) for group in _stacked_by_device(flags))


def _check_finite(name: str, tensors: Mapping[str, torch.Tensor], names, func: str) -> None:
    """Refuse NaN or infinite entries in ``tensors[n]`` for ``n`` in ``names``: a NaN has no
    rank, so a mask ranked by them would be arbitrary."""
    bad = non_finite_names({n: tensors[n] for n in names})
    if bad:
        raise ValueError(
            f"The '{name}' parameter of {func} must contain only finite values. "
            f"Got NaN or infinite entries in {bad} instead."
        )


def _prunable(params: Mapping[str, torch.Tensor], func: str) -> list[str]:
    """:func:`prunable_names`, refusing parameters with none: a rate would prune nothing."""
    names = prunable_names(params)
    if not names:
        raise ValueError(
            f"The 'params' parameter of {func} must hold at least one prunable tensor "
            f"(a weight with ndim >= 2). Got shapes "
            f"{ {n: tuple(t.shape) for n, t in params.items()} } instead."
        )
    return names


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
        whole = [name for name, tensor in self.keep.items() if tensor.ndim < 2]
        if not _all_true([self.keep[name].all() for name in whole]):
            pruned = [name for name in whole if not bool(self.keep[name].all())]
            raise ValueError(
                f"The 'keep' parameter of Mask must keep every non-prunable (ndim < 2) "
                f"tensor whole. Got pruned entries in {pruned} instead."
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
        counts = _stacked_by_device([(~t).sum() for t in self.keep.values()])
        return sum(int(group.sum()) for group in counts)

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
        for name, flags in self.keep.items():
            if params[name].shape != flags.shape:
                raise ValueError(
                    f"The 'params' parameter of Mask.apply must have the mask's shapes. "
                    f"Got {tuple(params[name].shape)} for {name!r} (mask: "
                    f"{tuple(flags.shape)}) instead."
                )
        return {name: params[name] * self.keep[name].to(params[name].device) for name in self.keep}

    def to(self, device: str | torch.device) -> Mask:
        """The same mask with its tensors on ``device`` (``self`` when they all are)."""
        device = torch.device(device)
        if all(t.device == device for t in self.keep.values()):
            return self
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
    seed = check_seed(seed, func=func)
    params = _as_params(params)
    names = _prunable(params, func)
    sizes = [params[name].numel() for name in names]
    n = sum(sizes)
    flat = torch.ones(n, dtype=torch.bool)
    generator = torch.Generator().manual_seed(seed)
    flat[torch.randperm(n, generator=generator)[: round(p * n)]] = False
    keep = {name: torch.ones_like(t, dtype=torch.bool) for name, t in params.items()}
    for name, chunk in zip(names, flat.split(sizes), strict=True):
        keep[name] = chunk.reshape(params[name].shape).to(params[name].device)
    return Mask(keep)


def _keep_from_order(params, flags_by_name) -> Mask:
    keep = {name: torch.ones_like(t, dtype=torch.bool) for name, t in params.items()}
    keep.update(flags_by_name)
    return Mask(keep)


def mask_from_scores(
    params: Mapping[str, torch.Tensor],
    scores: Mapping[str, torch.Tensor],
    p: float | None = None,
    *,
    keep_counts: Mapping[str, int] | None = None,
) -> Mask:
    """Keep the highest-scoring prunable weights; prune the rest.

    With ``p`` (global ranking, as SNIP, SynFlow and GraSP rank): the ``round(p * n)``
    lowest scores over all ``n`` prunable weights together are pruned. With
    ``keep_counts`` (layer-wise): each prunable tensor keeps its ``keep_counts[name]``
    highest scores. Exactly one of the two must be given. Ties are broken by position
    (a stable sort: among equal scores the earlier coordinate is pruned first), so the
    mask is deterministic. ``scores`` maps every prunable name of ``params`` to a tensor
    of its shape; non-prunable tensors (biases) are kept whole.
    """
    func = "mask_from_scores"
    params = _as_params(params)
    names = _prunable(params, func)
    for name in names:
        if name not in scores or tuple(scores[name].shape) != tuple(params[name].shape):
            raise ValueError(
                f"The 'scores' parameter of {func} must give a tensor of shape "
                f"{tuple(params[name].shape)} for {name!r}. Got "
                f"{tuple(scores[name].shape) if name in scores else 'nothing'} instead."
            )
    _check_finite("scores", scores, names, func)
    if (p is None) == (keep_counts is None):
        raise ValueError(f"{func} needs exactly one of 'p' and 'keep_counts'.")
    if keep_counts is None:
        p = _check_rate(p, func)
        flat = torch.cat([scores[name].detach().reshape(-1) for name in names])
        pruned = torch.ones_like(flat, dtype=torch.bool)
        pruned[torch.sort(flat, stable=True).indices[round(p * flat.numel()) :]] = False
        chunks = (~pruned).split([params[name].numel() for name in names])
        flags = {n: c.reshape(params[n].shape) for n, c in zip(names, chunks, strict=True)}
        return _keep_from_order(params, flags)
    flags = {}
    for name in names:
        size = params[name].numel()
        k = check_int(f"keep_counts[{name!r}]", keep_counts[name], func=func, low=0, high=size)
        order = torch.sort(scores[name].detach().reshape(-1), stable=True).indices
        flat = torch.zeros(size, dtype=torch.bool, device=order.device)
        flat[order[size - k :]] = True
        flags[name] = flat.reshape(params[name].shape)
    return _keep_from_order(params, flags)


def uniform_keep_counts(params: Mapping[str, torch.Tensor], p: float) -> dict[str, int]:
    """Layer-wise budgets at the same rate: layer ``l`` keeps ``n_l - round(p * n_l)``."""
    func = "uniform_keep_counts"
    p = _check_rate(p, func)
    params = _as_params(params)
    return {n: params[n].numel() - round(p * params[n].numel()) for n in _prunable(params, func)}


def erk_keep_counts(params: Mapping[str, torch.Tensor], p: float) -> dict[str, int]:
    """Erdős–Rényi-Kernel layer budgets (Evci et al. 2020, RigL, arXiv:1911.11134, Sec. 3).

    Layer ``l`` with weight shape ``s`` gets density ``min(1, eps * sum(s) / prod(s))``
    (``(n_in + n_out + k_h + k_w) / (n_in n_out k_h k_w)`` for a conv, ``(n_in + n_out)
    / (n_in n_out)`` for a linear layer), with ``eps`` chosen so that the kept weights
    total ``(1 - p) n``; layers that would exceed density 1 are kept dense and ``eps`` is
    re-solved for the others (RigL's loop; FedDST's code, Bibikar et al. 2022, uses ERK
    without that clipping). The real budgets are rounded by largest remainder so that
    they sum to exactly ``n - round(p * n)``.
    """
    func = "erk_keep_counts"
    p = _check_rate(p, func)
    params = _as_params(params)
    names = _prunable(params, func)
    sizes = {n: params[n].numel() for n in names}
    raw = {n: sum(params[n].shape) / sizes[n] for n in names}
    total = sum(sizes.values()) - round(p * sum(sizes.values()))
    dense: set[str] = set()
    for _ in range(len(names) + 1):  # each pass makes at least one more layer dense
        budget = total - sum(sizes[n] for n in dense)
        free = [n for n in names if n not in dense]
        eps = budget / sum(raw[n] * sizes[n] for n in free) if free else 0.0
        over = {n for n in free if eps * raw[n] > 1}
        if not over:
            break
        dense |= over
    real = {n: float(sizes[n]) if n in dense else eps * raw[n] * sizes[n] for n in names}
    counts = {n: min(sizes[n], int(real[n])) for n in names}
    by_remainder = sorted(names, key=lambda n: real[n] - counts[n], reverse=True)
    short = total - sum(counts.values())
    for name in by_remainder:
        if short <= 0:
            break
        if counts[name] < sizes[name]:
            counts[name] += 1
            short -= 1
    return counts


def magnitude_mask(params: Mapping[str, torch.Tensor], p: float) -> Mask:
    """Layer-wise magnitude pruning (Han et al. 2015): in each prunable layer the
    ``round(p * n_layer)`` weights of smallest ``|w|`` are pruned.

    Ties are broken by position (a stable sort), so the mask is deterministic.
    """
    func = "magnitude_mask"
    params = _as_params(params)
    counts = uniform_keep_counts(params, _check_rate(p, func))
    _check_finite("params", params, counts, func)
    return mask_from_scores(
        params, {n: params[n].detach().abs() for n in counts}, keep_counts=counts
    )
