"""Per-sample gradients, and their Gram matrix without the ``n x d`` matrix, layer by layer.

``g_i = grad_w l(w; x_i, y_i)``, the cross-entropy gradient of one sample (the loss of a
batch of one, :func:`sims.core.functional.batch_loss`), is what PriPrune's Theorem 1
(:mod:`sims.core.gradstats`) and the MI experiments measure. One batched forward and
backward pass of the summed losses gives, for every linear map of the model, its input
and the loss gradient at its output, from which the per-sample gradients of its
parameters follow (Goodfellow 2015, "Efficient per-example gradient computations"; the
method of Opacus' ``GradSampleModule``): :func:`per_sample_gradients` forms them.

The statistics of Theorem 1 need only the ``n x n`` matrix ``K_ij = <g_i, g_j>`` over the
coordinates a client transmits. ``K`` is a sum over parameters, and
:func:`per_sample_gram` builds it one layer at a time:

* a linear layer ``z = W a + b`` has per-sample weight gradient ``delta_i a_i^T``, the
  outer product of its input ``a_i`` and the loss gradient ``delta_i = dl_i/dz_i`` at its
  output (Goodfellow 2015, "Efficient per-example gradient computations"), so without a
  mask the inner products factor (Rochette et al. 2019):
  ``<delta_i a_i^T, delta_j a_j^T> = (delta_i . delta_j)(a_i . a_j)``, an ``n^2 (in + out)``
  computation instead of ``n^2 in out``;
* with a mask ``M`` that keeps a subset of the weights, ``K_ij`` gains the kept entries only,
  ``sum_kl M_kl delta_ik delta_jk a_il a_jl = (delta_i * delta_j)^T M (a_i * a_j)``, which
  has no such factorisation: it is one matrix product with ``M`` per chunk of sample pairs
  or, when few weights are kept (or pruned), the per-sample gradients of those weights
  formed a block of output rows at a time (the pruned ones are subtracted from the
  factorised unmasked Gram);
* a convolution is a linear layer applied to the ``T`` patches of its unfolded input
  (``torch.nn.functional.unfold``), so its per-sample gradient is
  ``sum_t delta_it a_it^T``; it is formed a block of output channels at a time (a
  factorisation would cost ``n^2 T^2 (in + out)``, more than forming it for any
  convolution of the PriPrune models);
* any other parameter (a normalisation layer, a module called twice, a convolution with
  groups or a non-zero padding mode), in both functions, gets its per-sample gradients
  from ``torch.func.vmap(grad(...))``.

Inner products are accumulated in float64.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Mapping
from dataclasses import dataclass

import torch
from torch import nn
from torch.func import functional_call, grad, vmap

from sims.core.functional import batch_loss, check_batch
from sims.core.memory import check_fits
from sims.pruning.mask import Mask

#: Coordinates of one block of formed per-sample gradients (128 MiB in float64): bounds
#: the extra memory of the layers whose gradients are formed rather than factorised.
BLOCK_ELEMENTS = 2**24
#: Largest kept (or pruned) fraction of a masked linear layer whose gradients are formed
#: rather than paired: forming costs ``2 n^2`` multiply-adds per formed coordinate at a
#: few times less throughput than the paired matrix product's ``n^2 in out / 2``.
FORMED_FRACTION = 0.2


@dataclass(frozen=True)
class _Layer:
    """One linear map ``z_t = W a_t (+ b)`` applied at ``T`` positions per sample.

    ``inputs`` is ``(n, T, in)`` and ``output_grads`` ``(n, T, out)``; the weight's
    per-sample gradient is ``sum_t output_grads[i, t] inputs[i, t]^T`` reshaped like
    ``weight`` (``(out, in)``, or ``(out, C, kh, kw)`` for a convolution).
    """

    weight: str | None
    bias: str | None
    inputs: torch.Tensor
    output_grads: torch.Tensor


def _supported(module: nn.Module) -> bool:
    """Whether ``module`` is a linear map of its (unfolded) input handled here."""
    if type(module) is nn.Linear:
        return True
    return (
        type(module) is nn.Conv2d
        and module.groups == 1
        and module.padding_mode == "zeros"
        and not isinstance(module.padding, str)
    )


def layer_inputs(module: nn.Module, inputs: torch.Tensor) -> torch.Tensor:
    """The layer's input as ``(n, T, in)``: its positions for a linear layer, its unfolded
    patches (channel, then kernel row, then kernel column, like ``weight.view(out, -1)``)
    for a convolution."""
    n = inputs.shape[0]
    if type(module) is nn.Linear:
        return inputs.reshape(n, -1, inputs.shape[-1])
    unfolded = nn.functional.unfold(
        inputs,
        module.kernel_size,
        dilation=module.dilation,
        padding=module.padding,
        stride=module.stride,
    )
    return unfolded.transpose(1, 2)


def layer_output_grads(module: nn.Module, output_grads: torch.Tensor) -> torch.Tensor:
    """The loss gradient at the layer's output as ``(n, T, out)``."""
    n = output_grads.shape[0]
    if type(module) is nn.Linear:
        return output_grads.reshape(n, -1, output_grads.shape[-1])
    return output_grads.flatten(2).transpose(1, 2)


def layer_owners(model: nn.Module, params) -> dict[nn.Module, tuple[str | None, str | None]]:
    """Supported modules whose weight or bias is in ``params``, with those two names (None
    for one that is not). A parameter shared with another module (tied weights) is left
    out: its gradient sums over the modules that use it."""
    aliases: dict[int, int] = {}
    for _, tensor in model.named_parameters(remove_duplicate=False):
        aliases[id(tensor)] = aliases.get(id(tensor), 0) + 1
    owners = {}
    for prefix, module in model.named_modules():
        if not _supported(module):
            continue
        names = []
        for attribute in ("weight", "bias"):
            name = f"{prefix}.{attribute}" if prefix else attribute
            own = aliases.get(id(getattr(module, attribute)), 0) == 1
            names.append(name if own and name in params else None)
        if any(names):
            owners[module] = tuple(names)
    return owners


def run_recorded(owners, forward, n: int):
    """``forward()`` with every module of ``owners`` recorded: returns its result and
    ``{module: (input, output)}`` for the modules that ran exactly once and batch-first
    (the first dimension of their input and output is the ``n`` samples). A second call
    would sum two gradients, and a layer that sees reshaped samples mixes them, so the
    others are left out."""
    calls: dict[nn.Module, list[tuple[torch.Tensor, torch.Tensor]]] = {m: [] for m in owners}

    def record(module, args, output):
        calls[module].append((args[0], output))

    handles = [module.register_forward_hook(record) for module in owners]
    try:
        result = forward()
    finally:
        for handle in handles:
            handle.remove()
    once = {
        module: c[0]
        for module, c in calls.items()
        if len(c) == 1 and c[0][0].shape[0] == n and c[0][1].shape[0] == n
    }
    return result, once


def _capture_layers(model, params, images, labels) -> tuple[list[_Layer], list[str]]:
    """One forward and backward pass of the summed per-sample losses, recording every
    supported layer's input and output gradient (:func:`run_recorded`). Returns the
    layers and the names of the parameters they do not cover (left to
    :func:`_vmap_gradients`)."""
    owners = layer_owners(model, params)
    inputs = {name: t.detach().requires_grad_() for name, t in params.items()}
    logits, once = run_recorded(
        owners, lambda: functional_call(model, inputs, (images,)), images.shape[0]
    )
    covered = {name for m in once for name in owners[m] if name is not None}
    loss = nn.functional.cross_entropy(logits, labels, reduction="sum")
    outputs = [output for _, output in once.values()]
    output_grads = torch.autograd.grad(loss, outputs, allow_unused=True) if outputs else ()
    layers = [
        _Layer(
            *owners[module],
            inputs=layer_inputs(module, layer_input.detach()),
            output_grads=layer_output_grads(module, torch.zeros_like(out) if g is None else g),
        )
        for (module, (layer_input, out)), g in zip(once.items(), output_grads, strict=True)
    ]
    return layers, [name for name in params if name not in covered]


def _weight_blocks(layer: _Layer):
    """The layer's per-sample weight gradients a block of output rows at a time: yields
    ``(rows, g)``, ``rows`` a slice of output units and ``g`` their gradients
    ``(n, len(rows), in)``, at most :data:`BLOCK_ELEMENTS` numbers per block."""
    a, delta = layer.inputs, layer.output_grads
    n, positions, fan_in = a.shape
    rows = max(1, BLOCK_ELEMENTS // (n * fan_in))
    for start in range(0, delta.shape[-1], rows):
        block = slice(start, start + rows)
        if positions == 1:
            yield block, delta[:, 0, block, None] * a[:, 0, None, :]
        else:
            yield block, torch.einsum("nto,nti->noi", delta[:, :, block], a)


def _formed_gram(layer: _Layer, flags: torch.Tensor) -> torch.Tensor:
    """``sum_k g_ik g_jk`` over the weight coordinates ``k`` where ``flags`` is True,
    forming the per-sample weight gradients a block of output rows at a time."""
    n = layer.inputs.shape[0]
    flags = flags.reshape(layer.output_grads.shape[-1], -1)
    gram = torch.zeros(n, n, dtype=torch.float64, device=flags.device)
    for rows, per_sample in _weight_blocks(layer):
        kept = per_sample.reshape(n, -1)[:, flags[rows].reshape(-1)].to(torch.float64)
        gram += kept @ kept.T
    return gram


def _paired_gram(inputs: torch.Tensor, output_grads: torch.Tensor, flags: torch.Tensor):
    """Masked Gram of a linear layer's weight gradients through sample pairs:
    ``K_ij = (delta_i * delta_j)^T M (a_i * a_j)`` (elementwise products), for the pairs
    ``i <= j`` a chunk at a time, in float64. One matrix product with the mask ``M`` per
    chunk: ``n^2 in out / 2`` multiply-adds whatever the mask, with no per-coordinate
    indexing."""
    n, fan_in = inputs.shape
    mask = flags.reshape(-1, fan_in).to(torch.float64)
    first, second = torch.triu_indices(n, n, device=inputs.device)
    values = torch.empty(first.numel(), dtype=torch.float64, device=inputs.device)
    chunk = max(1, BLOCK_ELEMENTS // max(mask.shape))
    for start in range(0, first.numel(), chunk):
        i, j = first[start : start + chunk], second[start : start + chunk]
        through_mask = (inputs[i] * inputs[j]) @ mask.T
        values[start : start + chunk] = (through_mask * (output_grads[i] * output_grads[j])).sum(1)
    gram = torch.empty(n, n, dtype=torch.float64, device=inputs.device)
    gram[first, second] = values
    gram[second, first] = values
    return gram


def _weight_gram(layer: _Layer, flags: torch.Tensor) -> torch.Tensor:
    """Gram of the layer's weight gradients over its kept coordinates (module docstring).

    A layer applied at one position per sample takes the factorised Gram when nothing is
    pruned; when at most :data:`FORMED_FRACTION` of its weights are kept (or pruned), the
    kept (or pruned, subtracted) gradients are formed; otherwise the mask goes through
    :func:`_paired_gram`."""
    a, delta = layer.inputs, layer.output_grads
    if a.shape[1] > 1:
        return _formed_gram(layer, flags)
    a64, d64 = a[:, 0].to(torch.float64), delta[:, 0].to(torch.float64)
    pruned = int((~flags).sum())
    kept = flags.numel() - pruned
    if min(kept, pruned) > FORMED_FRACTION * flags.numel():
        return _paired_gram(a64, d64, flags)
    if kept <= pruned:
        return _formed_gram(layer, flags)
    factorised = (d64 @ d64.T) * (a64 @ a64.T)
    return factorised - _formed_gram(layer, ~flags) if pruned else factorised


def _vmap_gradients(model, params, images, labels, names) -> dict[str, torch.Tensor]:
    """Per-sample gradients ``(n, numel)`` of the parameters ``names`` only (the others
    held fixed), from ``torch.func.vmap(grad(...))``."""
    fixed = {name: t.detach() for name, t in params.items() if name not in names}
    free = {name: params[name].detach() for name in names}
    n = images.shape[0]

    def sample_loss(p, x, y):
        return batch_loss(model, {**fixed, **p}, x.unsqueeze(0), y.unsqueeze(0))

    grads = vmap(grad(sample_loss), in_dims=(None, 0, 0))(free, images, labels)
    return {name: grads[name].reshape(n, -1) for name in names}


def _check_matrix_fits(what: str, n: int, d: int, *, bytes_each: int, copies: int, device) -> None:
    check_fits(
        f"{what} (n = {n} samples of 'images' x d = {d} parameters)",
        n * d,
        unit="values",
        bytes_each=bytes_each,
        copies=copies,
        device=device,
    )


def _keep_flags(mask, params, images, *, func: str) -> dict[str, torch.Tensor] | None:
    """The mask's flags on ``images``' device, after checking them against ``params``."""
    if mask is None:
        return None
    _check_mask(mask, params, func=func)
    return {name: flags.to(images.device) for name, flags in mask.keep.items()}


def per_sample_gradients(
    model: nn.Module,
    params: Mapping[str, torch.Tensor],
    images,
    labels,
    *,
    mask: Mask | None = None,
) -> torch.Tensor:
    """Per-sample cross-entropy gradients ``g(w, b)``, one row per sample, shape ``(n, d)``.

    Taken at ``params`` as given (pass ``mask.apply(params)`` for the pruned point of
    PriPrune's eq. (1)); ``model`` supplies only the architecture. Columns follow the
    ``params`` order, each tensor flattened; with ``mask`` only the kept coordinates are
    returned (``d = mask.num_kept()``, the coordinates a client transmits). The layers'
    gradients are written into the matrix a block at a time, so the matrix is the only
    large allocation (plus the ``vmap`` gradients of parameters outside the supported
    layers); one that cannot fit in the memory of ``images``' device is refused before
    it is allocated (:func:`sims.core.memory.check_fits`).
    """
    func = "per_sample_gradients"
    check_batch(model, images, labels, func=func)
    keep = _keep_flags(mask, params, images, func=func)
    n = images.shape[0]
    layers, rest = _capture_layers(model, params, images, labels)
    widths = {
        name: t.numel() if keep is None else int(keep[name].sum()) for name, t in params.items()
    }
    _check_matrix_fits(
        f"The per-sample gradient matrix of {func} and the gradients it forms with vmap",
        n,
        sum(widths.values()) + sum(params[name].numel() for name in rest),
        bytes_each=max((t.element_size() for t in params.values()), default=0),
        copies=1,
        device=images.device,
    )
    dtype = functools.reduce(torch.promote_types, (t.dtype for t in params.values()))
    flat = torch.empty(n, sum(widths.values()), dtype=dtype, device=images.device)
    ends = dict(zip(widths, itertools.accumulate(widths.values()), strict=True))
    columns = {name: flat[:, ends[name] - widths[name] : ends[name]] for name in params}

    def kept(name: str, g: torch.Tensor, part=slice(None)) -> torch.Tensor:
        g = g.reshape(n, -1)
        return g if keep is None else g[:, keep[name][part].reshape(-1)]

    for name, g in (_vmap_gradients(model, params, images, labels, rest) if rest else {}).items():
        columns[name].copy_(kept(name, g))
    for layer in layers:
        if layer.weight is not None:
            filled = 0
            for rows, per_sample in _weight_blocks(layer):
                block = kept(layer.weight, per_sample, rows)
                columns[layer.weight][:, filled : filled + block.shape[1]].copy_(block)
                filled += block.shape[1]
        if layer.bias is not None:
            columns[layer.bias].copy_(kept(layer.bias, layer.output_grads.sum(dim=1)))
    return flat


def per_sample_gram(
    model: nn.Module,
    params: Mapping[str, torch.Tensor],
    images,
    labels,
    *,
    mask: Mask | None = None,
) -> tuple[torch.Tensor, int]:
    """Gram matrix ``K = G G^T`` of the per-sample gradients ``G`` (module docstring).

    ``G`` is the ``(n, d)`` matrix :func:`per_sample_gradients` returns for the same
    arguments (with ``mask``: only the kept coordinates), which is never formed: memory
    stays of the order of ``n^2``, the layers' activations and one block of
    :data:`BLOCK_ELEMENTS`. ``params`` are used as given.

    Returns:
        ``(K, d)``: ``K`` the uncentred ``(n, n)`` float64 Gram matrix on ``images``'
        device, ``d`` the number of coordinates it sums over.
    """
    func = "per_sample_gram"
    check_batch(model, images, labels, func=func)
    n = images.shape[0]
    keep = _keep_flags(mask, params, images, func=func) or {
        name: torch.ones_like(t, dtype=torch.bool) for name, t in params.items()
    }
    check_fits(
        f"The Gram matrix of {func} (n = {n} samples of 'images', squared)",
        n * n,
        unit="values",
        bytes_each=8,
        copies=3,
        device=images.device,
    )
    layers, rest = _capture_layers(model, params, images, labels)
    gram = torch.zeros(n, n, dtype=torch.float64, device=images.device)
    for layer in layers:
        if layer.weight is not None:
            gram += _weight_gram(layer, keep[layer.weight])
        if layer.bias is not None:
            summed = layer.output_grads.sum(dim=1)[:, keep[layer.bias]].to(torch.float64)
            gram += summed @ summed.T
    if rest:
        _check_matrix_fits(
            f"The per-sample gradients that {func} forms with vmap",
            n,
            sum(params[name].numel() for name in rest),
            bytes_each=8,
            copies=2,
            device=images.device,
        )
        grads = _vmap_gradients(model, params, images, labels, rest)
        kept = torch.cat([grads[name][:, keep[name].reshape(-1)] for name in rest], dim=1)
        kept = kept.to(torch.float64)
        gram += kept @ kept.T
    d = int(sum(int(flags.sum()) for flags in keep.values()))
    return gram, d


def _check_mask(mask: Mask, params: Mapping[str, torch.Tensor], *, func: str) -> None:
    """Refuse a mask whose names or shapes differ from ``params``'."""
    if not isinstance(mask, Mask):
        raise ValueError(
            f"The 'mask' parameter of {func} must be a Mask or None. "
            f"Got {type(mask).__name__} instead."
        )
    different = sorted(set(mask.keep) ^ set(params))
    shapes = [n for n in mask.keep if n in params and mask.keep[n].shape != params[n].shape]
    if different or shapes:
        raise ValueError(
            f"The 'mask' parameter of {func} must have the names and shapes of 'params'. "
            f"Got differences in {different + shapes} instead."
        )
