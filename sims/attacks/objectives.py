"""The function an inversion minimises: gradient matching plus an image prior.

For dummy images ``x`` (and labels) the dummy gradient ``g'`` is compared with the
gradient ``g`` the update reveals, on the kept coordinates ``m`` only (SGI) or on all
(GI), by one of two matching losses (:class:`sims.attacks.config.AttackConfig`):

* ``"l2"``: ``sum ||m ⊙ (g' - g)||^2 / sum ||m ⊙ g||^2`` (Zhu, Liu and Han 2019, "Deep
  Leakage from Gradients", normalised by the target's energy);
* ``"cosine_tv"``: ``1 - cos(m ⊙ g', m ⊙ g) + tv_weight * TV(x)`` over all layers at
  once (Geiping et al. 2020, "Inverting Gradients"; PriPrune Algorithm 2 below line 7,
  with the regulariser of deviation 2 in :mod:`sims.attacks.attack`), TV from
  :mod:`sims.attacks.priors`.

The client's loss is assumed to be the mean cross-entropy of
:func:`sims.core.functional.batch_gradient` (soft targets for jointly optimised labels)
and the model free of batch statistics (no BatchNorm), so the dummy gradient is a pure
function of (params, images, labels).

The objective works on N stacked problems ("rows": K attacks times their restarts, or
one), each row's gradients flattened and the small ones concatenated (:func:`_pieces`),
so that the matching loss is a few row-wise reductions however many layers are small.
The objective's gradient with respect to the images is taken by plain
``torch.autograd`` (that of the sum of the rows' objectives, whose gradient with
respect to a row's variables is that row's own).
The dummy gradients come from one of two functions, which differ only in how the
weights enter the forward pass:

* one problem (:func:`single_gradient`): a copy of the model whose parameters are the
  evaluation point's tensors as leaves, called directly, and
  ``torch.autograd.grad(..., create_graph=True)``, the way a plain inverting-gradients
  loop runs (``torch.func.functional_call`` would re-bind the weights on every call);
* N problems (:func:`stacked_gradient`): at a point shared by all rows, one forward of
  all rows' images through a copy of the model bound to it, and each linear or
  convolutional layer's per-row weight gradient as one batched product of its output
  gradients and inputs; otherwise per-row gradients by
  ``torch.func.vmap(torch.func.grad(...))``, a shared point passed once. Either way the
  objective on top of the dummy gradients and its derivative are ordinary tensor
  operations.
"""

from __future__ import annotations

import copy
import functools
import operator
from dataclasses import dataclass

import torch
from torch import nn
from torch.func import functional_call, grad, vmap

from pruneleak.sims.attacks.config import AttackConfig
from pruneleak.sims.attacks.priors import total_variation
from pruneleak.sims.gradients.per_sample import (
    layer_inputs,
    layer_output_grads,
    layer_owners,
    run_recorded,
)

#: Largest concatenation of flattened gradients per row in the matching loss
#: (:func:`_pieces`): about a core's L2 cache, where a copy costs less than the autograd
#: nodes it saves.
CONCAT_BYTES = 2**20


def image_map(config: AttackConfig):
    """Optimisation variables to images: ``sigmoid`` for boxed L-BFGS (the box as a
    reparametrisation), else the identity (Adam projects onto the box instead)."""
    return torch.sigmoid if config.box and config.optimizer != "adam" else (lambda z: z)


def input_map(config: AttackConfig):
    """Images in pixel space to the model's inputs: ``(x - mean) / std`` per channel with
    ``config.input_mean`` and ``config.input_std`` (as ``breaching``'s data config and
    torchvision's ``Normalize``), else the identity. The two ``(C, 1, 1)`` tensors are made
    once per device and dtype, not per evaluation."""
    if not config.input_mean:
        return lambda x: x
    made = {}

    def normalise(x: torch.Tensor) -> torch.Tensor:
        key = (x.device, x.dtype)
        if key not in made:
            made[key] = tuple(
                torch.tensor(values, dtype=x.dtype).reshape(-1, 1, 1).to(x.device)
                for values in (config.input_mean, config.input_std)
            )
        mean, std = made[key]
        return (x - mean) / std

    return normalise


def flatten(tensors) -> torch.Tensor:
    """The tensors of a dict (or list), in order, as one vector."""
    values = tensors.values() if isinstance(tensors, dict) else tensors
    return torch.cat([t.reshape(-1) for t in values])


def _row_dot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Row-wise ``sum(a * b, 1)`` of ``(N, D)`` matrices: ``torch.dot`` for one row (no
    product tensor is allocated, which on a large model saves a pass over the gradient),
    else the elementwise product and sum (a ``bmm`` would allocate no product either,
    but its backward, outer products ``(N, D, 1) x (N, 1, 1)``, is far slower)."""
    if a.shape[0] == 1:
        return torch.dot(a.reshape(-1), b.reshape(-1)).reshape(1)
    return (a * b).sum(1)


def _total(values):
    """The sum of tensors, without the ``0 +`` of Python's ``sum`` (one autograd node
    fewer per sum)."""
    return functools.reduce(operator.add, values)


def _pieces(flat: list[torch.Tensor]) -> list[torch.Tensor]:
    """The rows' flattened gradients ``(N, D_i)``, in order, with runs of consecutive
    small ones concatenated into one piece of at most :data:`CONCAT_BYTES` per row.

    The matching loss is a sum of row-wise reductions over the pieces: one piece saves
    the autograd nodes of one reduction per tensor, which dominate on a small model,
    while concatenating a large tensor would copy it on every evaluation (and keep it
    in memory twice); a tensor above the limit stays a piece of its own.
    """
    pieces, run, run_bytes = [], [], 0
    for t in flat:
        size = t.shape[1] * t.element_size()
        if run and run_bytes + size > CONCAT_BYTES:
            pieces.append(run[0] if len(run) == 1 else torch.cat(run, dim=1))
            run, run_bytes = [], 0
        run.append(t)
        run_bytes += size
    pieces.append(run[0] if len(run) == 1 else torch.cat(run, dim=1))
    return pieces


def _rows_times(matrices: torch.Tensor, vectors: torch.Tensor) -> torch.Tensor:
    """``matrices[n] @ vectors[n]^T`` for every row: ``(N, out, in)`` times ``(N, P, in)``
    gives ``(N, out, P)``. Matrices shared by all rows (an expanded view, row stride 0)
    enter one matrix product, so that they are never copied N times."""
    if matrices.stride(0) == 0:
        rows, count = vectors.shape[:2]
        product = matrices[0] @ vectors.reshape(rows * count, -1).T
        return product.reshape(-1, rows, count).transpose(0, 1)
    return torch.bmm(matrices, vectors.transpose(1, 2))


@dataclass(frozen=True)
class OuterProducts:
    """Row n's gradient of a linear layer's weight, ``sum_b output_grads[n, b]
    inputs[n, b]^T`` (shape ``(out, in)``), kept as its factors: ``output_grads`` is
    ``(N, B, out)`` and ``inputs`` ``(N, B, in)`` (Goodfellow 2015). The matching loss
    needs only its inner product with the target and its masked squared norm, which
    the factors give without the ``N x out x in`` gradient (Rochette et al. 2019)."""

    output_grads: torch.Tensor
    inputs: torch.Tensor

    @property
    def width(self) -> int:
        return self.output_grads.shape[-1] * self.inputs.shape[-1]

    def dot(self, target: torch.Tensor) -> torch.Tensor:
        """``<g_n, target_n>`` per row for ``target`` ``(N, out * in)``:
        ``sum_b delta_b^T T a_b``."""
        rows, out, fan_in = target.shape[0], self.output_grads.shape[-1], self.inputs.shape[-1]
        mapped = _rows_times(target.reshape(rows, out, fan_in), self.inputs)  # (N, out, B)
        return (mapped * self.output_grads.transpose(1, 2)).sum((1, 2))

    def energy(self, keep: torch.Tensor | None) -> torch.Tensor:
        """``||keep_n ⊙ g_n||^2`` per row for a 0/1 ``keep`` ``(N, out * in)`` (None: all
        kept): ``sum_{b,b'} (delta_b * delta_b')^T M (a_b * a_b')``, which without a mask
        factors into ``(delta_b . delta_b')(a_b . a_b')``."""
        delta, a = self.output_grads, self.inputs
        if keep is None:
            return (torch.bmm(delta, delta.transpose(1, 2)) * torch.bmm(a, a.transpose(1, 2))).sum(
                (1, 2)
            )
        rows, batch = delta.shape[:2]
        pairs = batch * batch
        delta_pairs = (delta[:, :, None] * delta[:, None]).reshape(rows, pairs, -1)
        a_pairs = (a[:, :, None] * a[:, None]).reshape(rows, pairs, -1)
        masked = _rows_times(keep.reshape(rows, delta.shape[-1], a.shape[-1]), a_pairs)
        return (masked * delta_pairs.transpose(1, 2)).sum((1, 2))


def _tensor_terms(pieces, targets, keeps) -> tuple[torch.Tensor, torch.Tensor]:
    """Row-wise ``<keep ⊙ g, target>`` and ``||keep ⊙ g||^2`` summed over formed pieces."""
    masked = [p if k is None else p * k for p, k in zip(pieces, keeps, strict=True)]
    dot = _total(_row_dot(p, t) for p, t in zip(masked, targets, strict=True))
    return dot, _total(_row_dot(p, p) for p in masked)


def _cosine_terms(grads, target, keep, rows) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`_tensor_terms` over every parameter, in ``grads``' order (that of
    ``target``'s columns): runs of formed gradients in pieces (:func:`_pieces`), linear
    weights given as :class:`OuterProducts` through their factors."""
    terms, run, start = [], [], 0

    def columns(first: int, width: int):
        cut = slice(first, first + width)
        return target[:, cut], None if keep is None else keep[:, cut]

    def flush(end: int) -> None:
        if run:
            pieces = _pieces(run)
            widths = [p.shape[1] for p in pieces]
            cut = columns(end - sum(widths), sum(widths))
            targets = cut[0].split(widths, dim=1)
            keeps = [None] * len(pieces) if keep is None else cut[1].split(widths, dim=1)
            terms.append(_tensor_terms(pieces, targets, keeps))
            run.clear()

    for g in grads.values():
        if isinstance(g, OuterProducts):
            flush(start)
            t, k = columns(start, g.width)
            terms.append((g.dot(t), g.energy(k)))
            start += g.width
        else:
            run.append(g.reshape(rows, -1))
            start += run[-1].shape[1]
    flush(start)
    return _total(t for t, _ in terms), _total(e for _, e in terms)


def _leaves(at: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """``at`` with every tensor that does not require grad (the evaluation point) as a
    fresh leaf that does."""
    return {n: t if t.requires_grad else t.detach().requires_grad_() for n, t in at.items()}


def _cross_entropy(model: nn.Module):
    def cross_entropy(params, images, label_probs):
        return nn.functional.cross_entropy(functional_call(model, params, (images,)), label_probs)

    return cross_entropy


def _bound_copy(model: nn.Module, point: dict[str, torch.Tensor], *, requires_grad: bool):
    """A copy of ``model`` whose parameters share ``point``'s storage (``model`` itself is
    not touched), and those parameters by name."""
    leaves = {n: nn.Parameter(t.detach(), requires_grad=requires_grad) for n, t in point.items()}
    named = dict(model.named_parameters())
    bound = copy.deepcopy(model, memo={id(named[n]): p for n, p in leaves.items() if n in named})
    return leaves, bound


def single_gradient(model: nn.Module, point: dict[str, torch.Tensor]):
    """Dummy gradients of one problem (N = 1 row) whose evaluation point is ``point``.

    ``gradient(at, images, label_probs, step)`` returns ``{name: d CE / d at[name]}``
    (differentiable once more) for ``images`` ``(1, B, C, H, W)``, each of the weight's
    own shape: the row dimension of 1 is left to the objective's reshapes and
    broadcasting (an autograd node fewer per tensor). At ``step`` 0, ``at`` is
    ``point``: the forward runs a copy of ``model`` whose parameters share ``point``'s
    storage as leaf tensors (built once here). Later local steps evaluate at tensors
    that depend on the images, by ``functional_call`` on the copy.
    """
    leaves, bound = _bound_copy(model, point, requires_grad=True)
    cross_entropy = _cross_entropy(bound)

    def gradient(at, images, label_probs, step: int, factored: bool = False):
        del factored  # formed gradients only
        with torch.enable_grad():
            if step == 0:
                params = leaves
                loss = nn.functional.cross_entropy(bound(images[0]), label_probs[0])
            else:
                params = _leaves({n: t[0] for n, t in at.items()})
                loss = cross_entropy(params, images[0], label_probs[0])
            grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)
        return dict(zip(params, grads, strict=True))

    return gradient


def _vmapped_gradient(model: nn.Module):
    """:func:`stacked_gradient` by ``vmap(grad(cross_entropy))``, for any model and points."""
    gradient_of = grad(_cross_entropy(model))

    def unbatched(t: torch.Tensor):
        return (t[0], None) if t.stride(0) == 0 else (t, 0)

    def gradient(at, images, label_probs, step: int, factored: bool = False):
        del step, factored  # formed gradients only
        at = {n: unbatched(t) for n, t in at.items()}
        label_probs, probs_dim = unbatched(label_probs)
        dims = ({n: d for n, (_, d) in at.items()}, 0, probs_dim)
        with torch.enable_grad():
            return vmap(gradient_of, in_dims=dims)(
                {n: t for n, (t, _) in at.items()}, images, label_probs
            )

    return gradient


def stacked_gradient(model: nn.Module, point: dict[str, torch.Tensor], *, fallback=None):
    """Dummy gradients of N problems at once: ``gradient(at, images, label_probs, step,
    factored=False)`` as in :func:`single_gradient`, every tensor with a leading row
    dimension N, for the rows' evaluation points ``point`` (a tensor shared by all rows
    enters as an expanded view, row stride 0). The result stays differentiable by
    ``torch.autograd`` with respect to the images.

    When every row shares ``point`` and every parameter belongs to a linear or
    convolutional layer that runs once per image
    (:func:`sims.gradients.per_sample.run_recorded`), the N x B images go through one copy of
    the model bound to the point, the loss gradient at each layer's output is taken once
    (``create_graph``), and row n's weight gradient is the sum over its images and
    positions of output gradient times input, ``sum_t delta_t a_t^T`` (Goodfellow 2015;
    the per-sample gradients of :mod:`sims.gradients.per_sample`, summed per row): one batched
    matrix product per layer, or, with ``factored=True``, for a linear layer applied once
    per image, the factors themselves (:class:`OuterProducts`). Otherwise (rows with their
    own points, later local steps, other layers) ``fallback`` (default
    ``vmap(grad(cross_entropy))``, a shared tensor passed to ``vmap`` once, so that its
    layers still run as one matrix product for all rows).
    """
    other = _vmapped_gradient(model) if fallback is None else fallback
    if not all(t.stride(0) == 0 for t in point.values()):
        return other
    leaves, bound = _bound_copy(model, {n: t[0] for n, t in point.items()}, requires_grad=False)
    owners = layer_owners(bound, leaves)
    layered = True

    def gradient(at, images, label_probs, step: int, factored: bool = False):
        nonlocal layered
        if step > 0 or not layered:
            return other(at, images, label_probs, step)
        rows, batch = images.shape[:2]
        flat = images.flatten(0, 1)
        with torch.enable_grad():
            if not flat.requires_grad:
                flat = flat.detach().requires_grad_()
            logits, once = run_recorded(owners, lambda: bound(flat), rows * batch)
            layered = {n for m in once for n in owners[m] if n is not None} == set(at)
            if not layered:
                return other(at, images, label_probs, step)
            probs = label_probs.expand(rows, *label_probs.shape[1:]).flatten(0, 1)
            loss = nn.functional.cross_entropy(logits, probs, reduction="sum") / batch
            outputs = [output for _, output in once.values()]
            deltas = torch.autograd.grad(loss, outputs, create_graph=True, allow_unused=True)
        grads = {}
        for (module, (inputs, output)), delta in zip(once.items(), deltas, strict=True):
            delta = torch.zeros_like(output) if delta is None else delta
            a = layer_inputs(module, inputs)
            d = layer_output_grads(module, delta)
            a = a.reshape(rows, -1, a.shape[-1])
            d = d.reshape(rows, -1, d.shape[-1])
            weight, bias = owners[module]
            if weight is not None and factored and type(module) is nn.Linear and inputs.dim() == 2:
                grads[weight] = OuterProducts(d, a)
            elif weight is not None:
                grads[weight] = torch.bmm(d.transpose(1, 2), a).reshape(at[weight].shape)
            if bias is not None:
                grads[bias] = d.sum(1)
        return {n: grads[n] for n in at}

    return gradient


def linear_weights(model: nn.Module) -> set[str]:
    """Names of the weights of ``model``'s linear layers, those :class:`OuterProducts`
    can stand for."""
    owners = layer_owners(model, dict(model.named_parameters()))
    return {w for m, (w, _) in owners.items() if type(m) is nn.Linear and w is not None}


def factored_matching(config: AttackConfig, local_steps: int) -> bool:
    """Whether :func:`attack_objective` matches linear layers through their factors
    (:class:`OuterProducts`): for the cosine loss of one local step. (The squared-L2 loss
    would need ``||g' - g||^2 = ||g'||^2 - 2 <g', g> + ||g||^2``, which cancels in
    float32 as L-BFGS converges; several local steps need the formed gradients.)"""
    return config.loss == "cosine_tv" and local_steps == 1


def grad_and_value(objective):
    """``(variables, *args) -> (grads, (objective, matching))`` for an
    :func:`attack_objective`: the gradient of every row's objective with respect to its
    own variables (that of the rows' sum), and the detached row values."""

    def evaluate(variables, *args):
        variables = [v.detach().requires_grad_() for v in variables]
        with torch.enable_grad():
            value, matching = objective(variables, *args)
            grads = torch.autograd.grad(value, variables, torch.ones_like(value))
        return list(grads), (value.detach(), matching.detach())

    return evaluate


def attack_objective(dummy_gradient, config: AttackConfig, *, local_steps: int, client_lr):
    """Pure ``(variables, point, target, target_energy, keep, onehot) -> (objective,
    matching)`` on N rows, each output of shape ``(N,)``.

    ``dummy_gradient`` is :func:`single_gradient` or :func:`stacked_gradient`. Every
    argument has a leading row dimension N: ``variables[0]`` the dummy images ``(N, B, C,
    H, W)`` (their logits ``z``, ``x = sigmoid(z)``, for boxed L-BFGS),
    ``variables[1]`` the label logits with ``label_mode="optimize"`` (``onehot`` is then
    ignored), ``point`` a dict of weights, ``target`` the flattened masked target
    (:func:`flatten`, in ``point``'s order) ``(N, D)``, ``target_energy`` its squared
    norm ``(N,)``, ``keep`` the flattened 0/1 mask ``(N, D)`` (1 on the tensors that are
    not prunable; None for GI: nothing masked). ``matching`` is the loss without the
    prior, by which restarts are ranked.

    ``keep`` restricts the dummy gradient as well as the target (``m ⊙ g'`` against
    ``m ⊙ g``) unless ``config.mask_dummy`` is False: then the whole dummy gradient is
    matched against the masked target, the literal PriPrune Algorithm 2 line 7
    (deviation 5 in :mod:`sims.attacks.attack`); the replayed local steps still prune
    the weights with ``keep``. The model sees ``(x - mean) / std`` of the pixel images
    when ``config.input_mean`` is set (:func:`input_map`); the prior sees the pixels.

    The dummy update replays the client's ``local_steps`` full-batch steps of eq. (1) on
    the dummy batch: ``keep ⊙ sum_s g(a_s)`` with ``a_0 = point`` and ``a_{s+1} = keep ⊙
    (a_s - client_lr * g(a_s))``, which is ``keep ⊙ (w - w_hat) / client_lr`` for the
    dummy data, i.e. what :func:`sims.attacks.update.pseudo_gradient` reveals for the
    real data (Geiping et al. 2020, Section 5, "multiple local updates"); the mask is
    0/1, so masking the sum equals summing masked steps. One step is plain gradient
    matching.
    """
    to_image = image_map(config)
    to_input = input_map(config)
    optimize_labels = config.label_mode == "optimize"
    factored = factored_matching(config, local_steps)

    def objective(variables, point, target, target_energy, keep, onehot):
        images = to_image(variables[0])
        inputs = to_input(images)
        probs = torch.softmax(variables[1], dim=-1) if optimize_labels else onehot
        rows = images.shape[0]
        matched = keep if config.mask_dummy else None
        if factored:
            grads = dummy_gradient(point, inputs, probs, 0, factored=True)
            dot, dummy_energy = _cosine_terms(grads, target, matched, rows)
        else:
            at, total = point, None
            for step in range(local_steps):
                g = dummy_gradient(at, inputs, probs, step)
                total = g if total is None else {n: total[n] + g[n] for n in g}
                if step + 1 < local_steps:
                    at = {n: at[n] - client_lr * g[n] for n in g}
                    if keep is not None:
                        sizes = [t[0].numel() for t in at.values()]
                        flags = keep.split(sizes, dim=1)
                        at = {
                            n: f.reshape(at[n].shape) * at[n]
                            for f, n in zip(flags, at, strict=True)
                        }
            pieces = _pieces([t.reshape(rows, -1) for t in total.values()])
            widths = [piece.shape[1] for piece in pieces]
            targets = target.split(widths, dim=1)
            keeps = [None] * len(pieces) if matched is None else matched.split(widths, dim=1)
            if config.loss == "l2":
                residuals = [
                    (p if k is None else p * k) - t
                    for p, k, t in zip(pieces, keeps, targets, strict=True)
                ]
                matching = _total(_row_dot(r, r) for r in residuals) / target_energy
                return matching, matching
            dot, dummy_energy = _tensor_terms(pieces, targets, keeps)
        matching = 1 - dot / (dummy_energy.sqrt() * target_energy.sqrt())
        return matching + config.tv_weight * total_variation(images, rows=True), matching

    return objective
