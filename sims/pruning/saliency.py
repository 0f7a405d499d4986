"""Saliency scores of the one-shot pruning-at-initialisation criteria of PriPrune's Table 1.

Each function returns ``{name: score}`` for the prunable weights (``ndim >= 2``) of a
model evaluated functionally at ``params`` (the model object is never mutated); a
higher score means more worth keeping, except for GraSP, whose published rule prunes the
*highest* scores (see :func:`grasp_scores`). :func:`sims.pruning.mask.mask_from_scores`
turns scores into a mask.

* SNIP (Lee, Ajanthan and Torr 2019, arXiv:1810.02340, eq. (6)): connection
  sensitivity ``|g ⊙ w|``, the magnitude of the loss derivative with respect to a
  multiplicative gate on each weight, at initialisation on one batch.
* SynFlow (Tanaka et al. 2020, arXiv:2006.05467, eq. (2) and Algorithm 1): data-free
  synaptic saliency ``(dR/dθ) ⊙ θ`` of ``R = 1ᵀ (Π_l |θ^[l]|) 1``, the network evaluated
  with absolute parameters on an all-ones input.
* GraSP (Wang, Zhang and Grosse 2020, arXiv:2002.07376, eq. (8)): ``S(-θ) = -θ ⊙ Hg``
  with ``g`` the loss gradient and ``H`` its Hessian, removing the weights whose removal
  reduces gradient flow least.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import nn
from torch.func import functional_call, grad, jvp

from pruneleak.bounds.validation import check_real
from pruneleak.sims.core.functional import check_batch
from pruneleak.sims.pruning.mask import prunable_names


def _split(params: Mapping[str, torch.Tensor]) -> tuple[dict, dict]:
    """(prunable weights, other parameters), both detached."""
    names = set(prunable_names(params))
    weights = {n: t.detach() for n, t in params.items() if n in names}
    others = {n: t.detach() for n, t in params.items() if n not in names}
    return weights, others


def _weight_loss(model: nn.Module, others, images, labels, temperature: float = 1.0):
    """Loss as a function of the prunable weights only, logits divided by ``temperature``."""

    def loss(weights):
        logits = functional_call(model, {**others, **weights}, (images,))
        return nn.functional.cross_entropy(logits / temperature, labels)

    return loss


def snip_scores(
    model: nn.Module, params: Mapping[str, torch.Tensor], images, labels
) -> dict[str, torch.Tensor]:
    """SNIP connection sensitivity ``|∂L/∂w ⊙ w|`` on the batch (mean cross-entropy).

    Lee et al. normalise by the sum over all weights; the ranking, hence the mask, is
    the same without it, so the raw ``|g ⊙ w|`` is returned.
    """
    check_batch(model, images, labels, func="snip_scores")
    weights, others = _split(params)
    g = grad(_weight_loss(model, others, images, labels))(weights)
    return {n: (g[n] * weights[n]).abs() for n in weights}


def synflow_scores(
    model: nn.Module, params: Mapping[str, torch.Tensor], keep: Mapping[str, torch.Tensor]
) -> dict[str, torch.Tensor]:
    """SynFlow saliency ``(∂R/∂θ) ⊙ θ`` of the masked network, in float64.

    As Tanaka et al.'s code does: every parameter (biases included) is replaced by its
    absolute value, pruned weights (``keep`` False) by zero, the model runs on one
    all-ones input, and ``R`` is the sum of its outputs. Both factors are non-negative,
    so no absolute value is needed. The result does not depend on any data. For
    ReLU networks ``R`` is exactly the path sum ``1ᵀ (Π_l |θ^[l]|) 1`` (plus bias paths);
    for sigmoid/tanh models it is the same computation through those activations.
    """
    theta = {n: (t.detach().abs() * keep[n].to(t.device)).double() for n, t in params.items()}
    weights = {n: theta[n] for n in prunable_names(theta)}
    others = {n: t for n, t in theta.items() if n not in weights}
    shape = getattr(model, "input_shape", None)
    if shape is None:
        raise ValueError("synflow_scores needs a model that records its input_shape.")
    ones = torch.ones((1, *shape), dtype=torch.float64, device=next(iter(theta.values())).device)

    def flow(w):
        return functional_call(model, {**others, **w}, (ones,)).sum()

    g = grad(flow)(weights)
    return {n: (g[n] * weights[n]).to(params[n].dtype) for n in weights}


def hessian_gradient_product(
    model: nn.Module,
    params: Mapping[str, torch.Tensor],
    images,
    labels,
    *,
    temperature: float = 1.0,
) -> dict[str, torch.Tensor]:
    """``H g`` for the prunable weights: ``g = ∇_w L``, ``H = ∇²_w L`` (other parameters
    fixed), by forward-over-reverse differentiation (``jvp`` of ``grad``) on the batch.

    ``L`` is the mean cross-entropy of the logits divided by ``temperature``.
    """
    func = "hessian_gradient_product"
    check_batch(model, images, labels, func=func)
    temperature = check_real("temperature", temperature, func=func, low=0, low_inclusive=False)
    weights, others = _split(params)
    grad_fn = grad(_weight_loss(model, others, images, labels, temperature))
    g = grad_fn(weights)
    return jvp(grad_fn, (weights,), (g,))[1]


def grasp_scores(
    model: nn.Module,
    params: Mapping[str, torch.Tensor],
    images,
    labels,
    *,
    temperature: float = 200.0,
) -> dict[str, torch.Tensor]:
    """GraSP score ``-w ⊙ Hg`` (Wang et al. 2020, eq. (8)); GraSP prunes the *largest*.

    ``temperature=200`` divides the logits as in the authors' released code (the paper
    does not state it); the Hessian-gradient product is exact, not the code's two-pass
    approximation over separate batches.
    """
    weights, _ = _split(params)
    hg = hessian_gradient_product(model, params, images, labels, temperature=temperature)
    return {n: -weights[n] * hg[n] for n in weights}
