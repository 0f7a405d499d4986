"""Magnitude pruning of the remaining weights, and fed-iterative pruning (Fed-LTP eq. 12-16).

Fed-LTP prunes by weight magnitude layer by layer (eq. 9). Algorithm 1 line 5 reads
"prune Pr % of the parameters", which is what :func:`prune_remaining` does: in each
prunable layer (conv/linear weights, ``sims.pruning.mask``) the ``round(degree * n)``
smallest-magnitude weights among the ``n`` still kept are pruned, so a layer's density
after ``i`` iterations is ``(1 - degree)^i`` up to rounding. (Eq. 9 as printed,
``|w| > Pr |w_max|``, is a threshold relative to the largest weight; it does not fix the
pruned fraction, which Algorithm 1 and eq. 15 take as given, so the fraction reading is
implemented.)

Fed-iterative pruning (eq. 12): the K client models are nested, model ``i`` is model
``i - 1`` with a further ``P2`` of its weights pruned (model 1 is the global weights
with ``P2`` pruned), so client ``i`` keeps ``(1 - P2)^i`` of the ticket: eq. 15,
``p^i = (1 - P2)^i (1 - Pr)`` with ``Pr`` the ticket's pruning degree, and eq. 16 their
mean. Reading of eq. 13 used here: the global model keeps the ticket's support and the
client masks are recomputed every round from the current global weights; coordinates
no selected client trains keep their value (pruning the global model itself by P2 every
round would shrink it geometrically with t, which the paper's constant p contradicts).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch

from pruneleak.bounds.validation import check_int, check_real
from pruneleak.sims.pruning.mask import Mask, mask_from_scores, prunable_names, random_mask


def prune_remaining(params: Mapping[str, torch.Tensor], mask: Mask, degree: float) -> Mask:
    """Prune ``round(degree * n_l)`` of the ``n_l`` weights ``mask`` keeps in each prunable
    layer, smallest ``|w|`` first (ties by position); pruned weights stay pruned."""
    func = "prune_remaining"
    degree = check_real("degree", degree, func=func, low=0, high=1, high_inclusive=False)
    names = prunable_names(mask.keep)
    kept = torch.stack([mask.keep[n].sum() for n in names]).tolist()  # one host read
    counts = {n: k - round(degree * k) for n, k in zip(names, kept, strict=True)}
    # pruned coordinates score -1 < |w|, so they are the first to go and stay pruned
    scores = {
        n: torch.where(mask.keep[n].to(params[n].device), params[n].detach().abs(), -1.0)
        for n in names
    }
    return mask_from_scores(params, scores, keep_counts=counts)


def iterative_client_masks(
    params: Mapping[str, torch.Tensor], base: Mask, *, further_prune: float, count: int
) -> list[Mask]:
    """Eq. 12: ``count`` nested masks, mask ``i`` (1-based) prunes ``further_prune`` of
    mask ``i - 1``'s weights (mask 0 = ``base``) by the magnitude of ``params``."""
    func = "iterative_client_masks"
    count = check_int("count", count, func=func, low=1)
    further_prune = check_real(
        "further_prune", further_prune, func=func, low=0, high=1, high_inclusive=False
    )
    masks, current = [], base
    for _ in range(count):
        current = prune_remaining(params, current, further_prune)
        masks.append(current)
    return masks


def retention_rates(prune_degree: float, further_prune: float, count: int) -> np.ndarray:
    """Eq. 15: ``p^i = (1 - P2)^i (1 - Pr)`` for ``i = 1 .. count``; eq. 16 is their mean."""
    func = "retention_rates"
    pr = check_real("prune_degree", prune_degree, func=func, low=0, high=1, high_inclusive=False)
    p2 = check_real("further_prune", further_prune, func=func, low=0, high=1, high_inclusive=False)
    count = check_int("count", count, func=func, low=1)
    return (1 - p2) ** np.arange(1, count + 1) * (1 - pr)


def random_upload_mask(params: Mapping[str, torch.Tensor], keep: float, *, seed: int) -> Mask:
    """Fed-SPA's random sparsification of an upload (Hu, Gong and Guo 2021, the paper's
    [18]): keep exactly ``n - round((1 - keep) n)`` of the ``n`` prunable weights, a
    uniformly random subset over all layers together (``sims.pruning.mask.random_mask``,
    CPU generator seeded by ``seed``), and every bias (``Mask`` never prunes a tensor of
    fewer than 2 dimensions)."""
    keep = check_real("keep", keep, func="random_upload_mask", low=0, high=1, low_inclusive=False)
    return random_mask(params, 1.0 - keep, seed=seed)
