"""PriPrune's fixed defense masks: which of the base-kept weights a client withholds.

PriPrune (arXiv:2310.19958, "Insights from Evaluation", Insight 1 and appendix "Defense
Details"; journal version Sec. 5.1 and Appendix D.1) prunes, on the client and after the
base scheme, a fraction ``p_hat`` (the defense rate) of the weights the base mask keeps:

* **Largest**: the weights with the largest gradients;
* **Random**: weights drawn uniformly at random;
* **Mix**: ``p_largest`` by gradient plus ``p_random`` at random (0.15 + 0.15 in the paper).

Our readings, where the papers are silent:

* "Gradient" is the client's update in this round, ``|w_start - w_trained|`` (the
  accumulated gradient times the learning rate: with FedSGD's single step, ``lr |g|``).
* The rate applies to each prunable tensor (conv and linear weights; biases are always
  shared): a tensor with ``k`` kept weights withholds ``round(p_hat k)`` of them, the
  layer-wise uniform sparsity the adaptive defense aims for (journal, after eq. 17).
* Mix withholds exactly ``round(p_largest k) + round(p_random k)`` weights: the random
  part is drawn from the weights Largest left (two independent masks would overlap and
  withhold ``p_l + p_r - p_l p_r``, 0.2775 instead of 0.3; claim
  ``priprune.mix_defense_rate``).
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from pruneleak.bounds.validation import check_real
from pruneleak.sims.core.functional import non_finite_names
from pruneleak.sims.pruning.mask import Mask, prunable_names

Params = Mapping[str, torch.Tensor]

STRATEGIES = ("largest", "random", "mix")


def _withhold_top(
    scores: Params, available: Mapping[str, torch.Tensor], counts: Mapping[str, int]
) -> dict[str, torch.Tensor]:
    """Per tensor, its ``counts[name]`` available coordinates with the largest scores, as
    bool flags (True = withheld)."""
    withheld = {}
    for name, flags in available.items():
        chosen = torch.zeros_like(flags)
        if counts[name]:
            ranked = torch.where(flags, scores[name], -torch.inf).reshape(-1)
            chosen.view(-1)[ranked.topk(counts[name]).indices] = True
        withheld[name] = chosen
    return withheld


def _random_scores(base: Mask, names, generator: torch.Generator) -> dict[str, torch.Tensor]:
    """Uniform random scores (drawn on CPU from ``generator``, so that the mask does not
    depend on the device), one per coordinate of the tensors ``names``."""
    return {
        name: torch.rand(base.keep[name].shape, generator=generator).to(base.keep[name].device)
        for name in names
    }


def _check_update(update, base: Mask, names, *, func: str) -> None:
    """Raise ValueError unless ``update`` holds a finite floating tensor of the base mask's
    shape for each prunable name: a missing name would be a KeyError, another shape a
    broadcasting error deep in torch, and a NaN would be ranked as the largest change."""
    for name in names:
        tensor = update.get(name) if isinstance(update, Mapping) else None
        shape = tuple(base.keep[name].shape)
        if (
            not isinstance(tensor, torch.Tensor)
            or not tensor.is_floating_point()
            or tuple(tensor.shape) != shape
        ):
            got = (
                f"{tensor.dtype} of shape {tuple(tensor.shape)}"
                if isinstance(tensor, torch.Tensor)
                else type(tensor).__name__
            )
            raise ValueError(
                f"The 'update' parameter of {func} must hold a floating-point tensor of shape "
                f"{shape} for {name!r} (the base mask's). Got {got} instead."
            )
    bad = non_finite_names({name: update[name] for name in names})
    if bad:
        raise ValueError(
            f"The 'update' parameter of {func} must be finite. "
            f"Got NaN or infinite entries in {bad[0]!r} instead."
        )


def defense_mask(
    strategy: str,
    base: Mask,
    update: Params,
    *,
    rate: float,
    largest_fraction: float = 0.5,
    generator: torch.Generator | None = None,
) -> Mask:
    """The mask of the weights a client shares: ``base`` minus the withheld ones.

    Args:
        strategy: ``"largest"``, ``"random"`` or ``"mix"`` (module docstring).
        base: the client's base mask ``m_i^t`` (True = kept by the base scheme).
        update: the client's update ``w_start - w_trained`` per parameter (only its
            magnitude on the kept prunable weights is used).
        rate: the defense rate ``p_hat`` in [0, 1], the fraction of each prunable
            tensor's kept weights withheld.
        largest_fraction: for ``"mix"``, the share of ``rate`` chosen by gradient, in
            [0, 1] (PriPrune's Mix: 0.5, i.e. 0.15 + 0.15 of 0.3).
        generator: CPU generator of the random choices (``"random"``, ``"mix"``).

    Returns:
        The shared mask: ``base`` with the withheld weights set to False.
    """
    func = "defense_mask"
    if strategy not in STRATEGIES:
        raise ValueError(
            f"The 'strategy' parameter of {func} must be one of {STRATEGIES}. "
            f"Got {strategy!r} instead."
        )
    rate = check_real("rate", rate, func=func, low=0, high=1)
    largest_fraction = check_real("largest_fraction", largest_fraction, func=func, low=0, high=1)
    if strategy != "largest" and not isinstance(generator, torch.Generator):
        raise ValueError(
            f"The 'generator' parameter of {func} must be a torch.Generator for "
            f"{strategy!r}. Got {type(generator).__name__} instead."
        )
    names = prunable_names(base.keep)
    _check_update(update, base, names, func=func)
    available = {name: base.keep[name] for name in names}
    kept = {name: int(flags.sum()) for name, flags in available.items()}
    largest_rate = {"largest": rate, "random": 0.0, "mix": rate * largest_fraction}[strategy]
    magnitude = {name: update[name].abs() for name in names}
    largest = {name: round(largest_rate * k) for name, k in kept.items()}
    withheld = _withhold_top(magnitude, available, largest)
    if strategy != "largest":
        remaining = {name: available[name] & ~withheld[name] for name in names}
        drawn = {
            name: min(round((rate - largest_rate) * k), k - largest[name])
            for name, k in kept.items()
        }
        scores = _random_scores(base, names, generator)
        extra = _withhold_top(scores, remaining, drawn)
        withheld = {name: withheld[name] | extra[name] for name in names}
    keep = dict(base.keep)
    keep.update({name: base.keep[name] & ~withheld[name] for name in names})
    return Mask(keep)
