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
function of (params, images, labels) built with ``torch.func.functional_call``. Two
differentiation modes compute the same numbers:

* ``vectorised=True``: the dummy gradient by ``torch.func.grad`` and the objective's
  gradient by :func:`torch.func.grad_and_value`, so that the objective of one attack can
  be ``vmap``-ed over K attacks (:func:`sims.attacks.inversion.invert_gradient_batched`);
* ``vectorised=False``: both by ``torch.autograd.grad`` (the dummy gradient with
  ``create_graph=True``), the way a plain inverting-gradients loop runs. For one attack
  this avoids the per-operation cost of torch.func's transform layers, which on a small
  model is most of an iteration (``benchmarks/bench_attacks.py`` compares both with
  such a loop).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.func import functional_call, grad

from sims.attacks.config import AttackConfig
from sims.attacks.priors import total_variation


def image_map(config: AttackConfig):
    """Optimisation variables to images: ``sigmoid`` for boxed L-BFGS (the box as a
    reparametrisation), else the identity (Adam projects onto the box instead)."""
    return torch.sigmoid if config.box and config.optimizer != "adam" else (lambda z: z)


def _inner(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``sum(a * b)`` by ``torch.dot`` of the flattened tensors: no product tensor is
    allocated, which on a large model saves a pass over every weight gradient."""
    return torch.dot(a.reshape(-1), b.reshape(-1))


def _autograd_gradient(cross_entropy):
    """``params -> d cross_entropy / d params`` by ``torch.autograd.grad`` with
    ``create_graph=True``: differentiable once more, like ``torch.func.grad``. Tensors
    that do not require grad (the evaluation point) enter as fresh leaves."""

    def gradient(params, images, label_probs):
        with torch.enable_grad():
            params = {
                n: t if t.requires_grad else t.detach().requires_grad_() for n, t in params.items()
            }
            loss = cross_entropy(params, images, label_probs)
            grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)
        return dict(zip(params, grads, strict=True))

    return gradient


def autograd_grad_and_value(objective):
    """``torch.func.grad_and_value(objective, has_aux=True)`` by ``torch.autograd``, for an
    objective built with ``vectorised=False``: ``(variables, *args) -> (grads, (value,
    aux))`` with the gradient of ``value`` with respect to every tensor of ``variables``
    and the outputs detached."""

    def grad_and_value(variables, *args):
        variables = [v.detach().requires_grad_() for v in variables]
        with torch.enable_grad():
            value, aux = objective(variables, *args)
            grads = torch.autograd.grad(value, variables)
        return list(grads), (value.detach(), aux.detach())

    return grad_and_value


def attack_objective(
    model: nn.Module,
    config: AttackConfig,
    *,
    local_steps: int,
    client_lr: float,
    vectorised: bool,
):
    """Pure ``(variables, point, target, target_energy, keep, onehot) -> (objective, matching)``.

    Every tensor argument belongs to *one* attack, so the function can be ``vmap``-ed
    over attacks. ``variables[0]`` are the dummy images (their logits ``z``, ``x =
    sigmoid(z)``, for boxed L-BFGS), ``variables[1]`` the label logits with
    ``label_mode="optimize"`` (``onehot`` is then ignored). ``keep`` holds 0/1 floats
    for the prunable tensors (None for GI: nothing masked); ``target`` must already be
    masked and ``target_energy`` is its squared norm. ``matching`` is the loss without
    the prior, by which restarts are ranked.

    The dummy update replays the client's ``local_steps`` full-batch steps of eq. (1) on
    the dummy batch: ``keep ⊙ sum_s g(a_s)`` with ``a_0 = point`` and ``a_{s+1} = keep ⊙
    a_s - client_lr * keep ⊙ g(a_s)``, which is ``keep ⊙ (w - w_hat) / client_lr`` for
    the dummy data, i.e. what :func:`sims.attacks.update.pseudo_gradient` reveals for
    the real data (Geiping et al. 2020, Section 5, "multiple local updates"). One step
    is plain gradient matching.

    ``vectorised`` picks the differentiation mode (module docstring): True for
    ``torch.func.grad_and_value`` and ``vmap``, False for
    :func:`autograd_grad_and_value` (one attack at a time, faster).
    """

    def cross_entropy(p, images, label_probs):
        return nn.functional.cross_entropy(functional_call(model, p, (images,)), label_probs)

    dummy_gradient = grad(cross_entropy) if vectorised else _autograd_gradient(cross_entropy)
    to_image = image_map(config)
    optimize_labels = config.label_mode == "optimize"

    def objective(variables, point, target, target_energy, keep, onehot):
        images = to_image(variables[0])
        probs = torch.softmax(variables[1], dim=-1) if optimize_labels else onehot
        names = list(target)
        masked = keep if keep is not None else {}
        at, g = point, None
        for step in range(local_steps):
            g_step = {n: t.contiguous() for n, t in dummy_gradient(at, images, probs).items()}
            g_step = {n: g_step[n] * masked[n] if n in masked else g_step[n] for n in names}
            g = g_step if g is None else {n: g[n] + g_step[n] for n in names}
            if step + 1 < local_steps:
                at = {
                    n: (masked[n] * at[n] if n in masked else at[n]) - client_lr * g_step[n]
                    for n in names
                }
        if config.loss == "l2":
            residual = [g[n] - target[n] for n in names]
            matching = sum(_inner(r, r) for r in residual) / target_energy
            return matching, matching
        dot = sum(_inner(g[n], target[n]) for n in names)
        dummy_energy = sum(_inner(g[n], g[n]) for n in names)
        matching = 1 - dot / (dummy_energy.sqrt() * target_energy.sqrt())
        return matching + config.tv_weight * total_variation(images), matching

    return objective
