"""Per-sample gradients, and their Gram matrix without the ``n x d`` matrix, layer by layer.

``g_i = grad_w l(w; x_i, y_i)``, the cross-entropy gradient of one sample (the loss of a
batch of one, :func:`sims.core.functional.batch_loss`), is what PriPrune's Theorem 1
(:mod:`sims.gradients.statistics`) and the MI experiments measure. One batched forward and
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

Every route also gives the block ``K(A, B) = G_A G_B^T`` between two sets of samples (the
same products with the samples of ``A`` on one side and those of ``B`` on the other), from
which :func:`per_sample_gram` with ``chunk_size`` assembles the Gram of many samples
holding only two chunks' layers at a time. Inner products are accumulated in float64.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Mapping
from dataclasses import dataclass

import torch
from torch import nn
from torch.func import functional_call, grad, vmap

from pruneleak.bounds.validation import check_int
from pruneleak.sims.core.functional import batch_loss, check_batch
from pruneleak.sims.core.memory import check_fits
from pruneleak.sims.pruning.mask import Mask

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


def _block_rows(n: int, fan_in: int) -> int:
    """Output rows per block of formed weight gradients of ``n`` samples: at most
    :data:`BLOCK_ELEMENTS` numbers per block."""
    return max(1, BLOCK_ELEMENTS // (n * fan_in))


def _weight_blocks(layer: _Layer, rows: int):
    """The layer's per-sample weight gradients ``rows`` output rows at a time: yields
    ``(block, g)``, ``block`` a slice of output units and ``g`` their gradients
    ``(n, len(block), in)``."""
    a, delta = layer.inputs, layer.output_grads
    for start in range(0, delta.shape[-1], rows):
        block = slice(start, start + rows)
        if a.shape[1] == 1:
            yield block, delta[:, 0, block, None] * a[:, 0, None, :]
        else:
            yield block, torch.einsum("nto,nti->noi", delta[:, :, block], a)


@dataclass(frozen=True)
class _WeightPlan:
    """How the Gram of one layer's weight gradients is computed, decided once per call
    (:func:`_plan`) so that the blocks of a chunked Gram need no host synchronisation.

    ``route``: ``"factorised"`` (nothing pruned, one position), ``"paired"``
    (:func:`_paired_gram` through ``flags``), ``"formed"`` (the coordinates of
    ``columns`` formed block by block) or ``"subtracted"`` (factorised minus the formed
    pruned coordinates of ``columns``). ``columns[b]`` indexes the formed coordinates in
    the flattened ``(rows, in)`` gradients of the ``b``-th block of ``rows`` output rows.
    """

    route: str
    flags: torch.Tensor
    rows: int
    columns: tuple[torch.Tensor, ...]


def _plan(layer: _Layer, flags: torch.Tensor, kept: int, n: int) -> _WeightPlan:
    """The route of the layer's weight Gram (module docstring): a layer applied at one
    position per sample takes the factorised Gram when nothing is pruned; when at most
    :data:`FORMED_FRACTION` of its weights are kept (or pruned), the kept (or pruned,
    subtracted) gradients are formed; otherwise the mask goes through
    :func:`_paired_gram`. A layer applied at several positions is formed. ``n`` is the
    largest number of samples of one side of a block (it sets the rows per block)."""
    out_features, fan_in = layer.output_grads.shape[-1], layer.inputs.shape[-1]
    flags = flags.reshape(out_features, fan_in)
    pruned = flags.numel() - kept
    rows = _block_rows(n, fan_in)
    if layer.inputs.shape[1] > 1:
        route, formed = "formed", flags
    elif pruned == 0:
        route, formed = "factorised", None
    elif min(kept, pruned) > FORMED_FRACTION * flags.numel():
        route, formed = "paired", None
    elif kept <= pruned:
        route, formed = "formed", flags
    else:
        route, formed = "subtracted", ~flags
    columns = ()
    if formed is not None:
        columns = tuple(
            formed[start : start + rows].reshape(-1).nonzero().squeeze(1)
            for start in range(0, out_features, rows)
        )
    return _WeightPlan(route, flags, rows, columns)


def _formed_columns(g: torch.Tensor, columns: torch.Tensor) -> torch.Tensor:
    """The coordinates ``columns`` of a block ``g`` of per-sample gradients, float64."""
    return g.reshape(g.shape[0], -1).index_select(1, columns).to(torch.float64)


def _formed_gram(left: _Layer, right: _Layer, plan: _WeightPlan) -> torch.Tensor:
    """``sum_k g_ik h_jk`` over the coordinates ``k`` of ``plan.columns``, ``g`` the
    per-sample weight gradients of ``left`` and ``h`` those of ``right`` (the same layer
    on other samples, or ``left`` itself), formed ``plan.rows`` output rows at a time."""
    n_left, n_right = left.inputs.shape[0], right.inputs.shape[0]
    gram = torch.zeros(n_left, n_right, dtype=torch.float64, device=left.inputs.device)
    rights = None if right is left else _weight_blocks(right, plan.rows)
    for columns, (_, g) in zip(plan.columns, _weight_blocks(left, plan.rows), strict=True):
        kept_left = _formed_columns(g, columns)
        kept_right = kept_left if rights is None else _formed_columns(next(rights)[1], columns)
        gram += kept_left @ kept_right.T
    return gram


def _single_position(layer: _Layer) -> tuple[torch.Tensor, torch.Tensor]:
    """Input ``(n, in)`` and output gradient ``(n, out)`` of a layer applied at one
    position per sample, in float64."""
    return layer.inputs[:, 0].to(torch.float64), layer.output_grads[:, 0].to(torch.float64)


def _paired_gram(left: _Layer, right: _Layer, flags: torch.Tensor) -> torch.Tensor:
    """Masked Gram of a linear layer's weight gradients through sample pairs:
    ``K_ij = (delta_i * delta_j)^T M (a_i * a_j)`` (elementwise products, ``i`` a sample
    of ``left``, ``j`` one of ``right``), a chunk of pairs at a time, in float64: the pairs
    ``i <= j`` when ``right`` is ``left`` (the Gram is symmetric), else all of them. One
    matrix product with the mask ``M`` per chunk: ``in out`` multiply-adds per pair
    whatever the mask, with no per-coordinate indexing."""
    a_left, d_left = _single_position(left)
    a_right, d_right = (a_left, d_left) if right is left else _single_position(right)
    n_left, n_right = a_left.shape[0], a_right.shape[0]
    device = a_left.device
    if right is left:
        first, second = torch.triu_indices(n_left, n_left, device=device)
    else:
        first = torch.arange(n_left, device=device).repeat_interleave(n_right)
        second = torch.arange(n_right, device=device).repeat(n_left)
    mask = flags.to(torch.float64)
    values = torch.empty(first.numel(), dtype=torch.float64, device=device)
    chunk = max(1, BLOCK_ELEMENTS // max(mask.shape))
    for start in range(0, first.numel(), chunk):
        i, j = first[start : start + chunk], second[start : start + chunk]
        through_mask = (a_left[i] * a_right[j]) @ mask.T
        values[start : start + chunk] = (through_mask * (d_left[i] * d_right[j])).sum(1)
    gram = torch.empty(n_left, n_right, dtype=torch.float64, device=device)
    gram[first, second] = values
    if right is left:
        gram[second, first] = values
    return gram


def _weight_gram(left: _Layer, right: _Layer, plan: _WeightPlan) -> torch.Tensor:
    """Block ``(left samples, right samples)`` of the Gram of a layer's weight gradients
    over its kept coordinates, by the route of ``plan`` (:func:`_plan`)."""
    if plan.route == "paired":
        return _paired_gram(left, right, plan.flags)
    if plan.route == "formed":
        return _formed_gram(left, right, plan)
    a_left, d_left = _single_position(left)
    a_right, d_right = (a_left, d_left) if right is left else _single_position(right)
    factorised = (d_left @ d_right.T) * (a_left @ a_right.T)
    if plan.route == "subtracted":
        return factorised - _formed_gram(left, right, plan)
    return factorised


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
            rows = _block_rows(n, layer.inputs.shape[-1])
            for block, per_sample in _weight_blocks(layer, rows):
                formed = kept(layer.weight, per_sample, block)
                columns[layer.weight][:, filled : filled + formed.shape[1]].copy_(formed)
                filled += formed.shape[1]
        if layer.bias is not None:
            columns[layer.bias].copy_(kept(layer.bias, layer.output_grads.sum(dim=1)))
    return flat


@dataclass(frozen=True)
class _Captured:
    """One chunk of samples (``samples``, its images), recorded: its layers
    (:func:`_capture_layers`) and the kept per-sample gradients ``(n, kept)`` in float64
    of the parameters outside them (None when there are none)."""

    samples: torch.Tensor
    layers: list[_Layer]
    rest: torch.Tensor | None


def _capture(model, params, images, labels, keep, *, func: str) -> _Captured:
    """Record one chunk for :func:`per_sample_gram`; the ``vmap`` gradients of the
    parameters outside the supported layers are formed here, once per chunk."""
    layers, rest = _capture_layers(model, params, images, labels)
    if not rest:
        return _Captured(images, layers, None)
    _check_matrix_fits(
        f"The per-sample gradients that {func} forms with vmap",
        images.shape[0],
        sum(params[name].numel() for name in rest),
        bytes_each=8,
        copies=2,
        device=images.device,
    )
    grads = _vmap_gradients(model, params, images, labels, rest)
    kept = [
        grads[name].index_select(1, keep[name].reshape(-1).nonzero().squeeze(1)) for name in rest
    ]
    return _Captured(images, layers, torch.cat(kept, dim=1).to(torch.float64))


def _names(captured: _Captured) -> list[tuple[str | None, str | None]]:
    return [(layer.weight, layer.bias) for layer in captured.layers]


def _gram_between(left: _Captured, right: _Captured, plans: dict[str, _WeightPlan]):
    """Block ``K(A, B)`` of the Gram between the samples of two chunks (``right`` may be
    ``left``): the sum over layers of the weight and bias blocks, and the block of the
    ``vmap`` gradients of the other parameters."""
    n_left, n_right = left.samples.shape[0], right.samples.shape[0]
    gram = torch.zeros(n_left, n_right, dtype=torch.float64, device=left.samples.device)
    for layer, other in zip(left.layers, right.layers, strict=True):
        other = layer if right is left else other
        if layer.weight is not None:
            gram += _weight_gram(layer, other, plans[layer.weight])
        if layer.bias is not None:  # a bias is kept whole (Mask keeps ndim < 2 tensors)
            summed = layer.output_grads.sum(dim=1).to(torch.float64)
            gram += summed @ (other.output_grads.sum(dim=1).to(torch.float64)).T
    if left.rest is not None:
        gram += left.rest @ right.rest.T
    return gram


def per_sample_gram(
    model: nn.Module,
    params: Mapping[str, torch.Tensor],
    images,
    labels,
    *,
    mask: Mask | None = None,
    chunk_size: int | None = None,
) -> tuple[torch.Tensor, int]:
    """Gram matrix ``K = G G^T`` of the per-sample gradients ``G`` (module docstring).

    ``G`` is the ``(n, d)`` matrix :func:`per_sample_gradients` returns for the same
    arguments (with ``mask``: only the kept coordinates), which is never formed.
    ``params`` are used as given.

    With ``chunk_size = c`` the samples are taken ``c`` at a time: each chunk is recorded
    (one forward and backward pass) and ``K`` is assembled from the blocks ``K(A, B) =
    G_A G_B^T`` of every pair of chunks ``A <= B`` (``K(B, A) = K(A, B)^T``), each layer's
    block computed by the route of the whole Gram with the samples of ``A`` on one side
    and those of ``B`` on the other. The chunk ``B`` is recorded again for every ``A``
    before it: ``ceil(n/c) (ceil(n/c) + 1) / 2`` passes of ``c`` samples instead of one
    pass of ``n``, the price of bounded memory. Memory: the ``(n, n)`` result, the
    recorded layers of two chunks (every supported layer's input, unfolded for a
    convolution, and output gradient, plus the ``vmap`` gradients of other parameters),
    and per side one block of at most :data:`BLOCK_ELEMENTS` formed gradients (or the
    working arrays of one chunk of pairs of :func:`_paired_gram`). ``None`` (default):
    one chunk of all ``n`` samples.

    The route of each layer and the indices of its formed coordinates are fixed once per
    call, so the loop over blocks does not synchronise with the device.

    Returns:
        ``(K, d)``: ``K`` the uncentred ``(n, n)`` float64 Gram matrix on ``images``'
        device, ``d`` the number of coordinates it sums over.
    """
    func = "per_sample_gram"
    check_batch(model, images, labels, func=func)
    n = images.shape[0]
    chunk = n if chunk_size is None else check_int("chunk_size", chunk_size, func=func, low=1)
    chunk = min(chunk, n)
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
    counts = dict(zip(keep, torch.stack([f.sum() for f in keep.values()]).tolist(), strict=True))
    gram = torch.empty(n, n, dtype=torch.float64, device=images.device)
    starts = range(0, n, chunk)
    plans = None
    for index, a in enumerate(starts):
        left = _capture(
            model, params, images[a : a + chunk], labels[a : a + chunk], keep, func=func
        )
        if plans is None:
            plans = {
                layer.weight: _plan(layer, keep[layer.weight], counts[layer.weight], chunk)
                for layer in left.layers
                if layer.weight is not None
            }
        for b in starts[index:]:
            right = left
            if b != a:
                chunk_b = (images[b : b + chunk], labels[b : b + chunk])
                right = _capture(model, params, *chunk_b, keep, func=func)
                if _names(right) != _names(left):
                    raise ValueError(
                        f"The 'chunk_size' parameter of {func} splits the samples into chunks "
                        f"whose recorded layers differ (a layer is batch-first for some "
                        f"chunk sizes only). Got {chunk_size!r} instead; pass None."
                    )
            block = _gram_between(left, right, plans)
            gram[a : a + chunk, b : b + chunk] = block
            if b != a:
                gram[b : b + chunk, a : a + chunk] = block.T
    return gram, int(sum(counts.values()))


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
