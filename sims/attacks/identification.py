"""Turning a reconstruction into a guess of the secret: which candidates the attacker names.

An identification attack (Balle, Cherubin, Hayes 2022) succeeds when it names the secret
exactly; its error rate gives Fano's lower bound on the leakage
(:func:`bounds.leakage.fano_lower_confidence_bits`). A gradient inversion returns ``B``
images; the attacker names the ``B`` distinct candidates of least total L2 distance to
them (pixel space), an assignment problem.
"""

from __future__ import annotations

import torch
from scipy.optimize import linear_sum_assignment


def identify(reconstructions: torch.Tensor, candidates: torch.Tensor) -> list[int]:
    """The ``B`` distinct candidate indices the attacker names, sorted.

    The assignment of the ``B`` reconstructions (first dimension) to ``candidates`` (first
    dimension ``M >= B``) of least total L2 distance over the flattened pixels
    (:func:`scipy.optimize.linear_sum_assignment`); for ``B = 1``, the nearest candidate.
    """
    found = reconstructions.reshape(len(reconstructions), -1).double().cpu()
    pool = candidates.reshape(len(candidates), -1).double().cpu()
    if len(found) > len(pool):
        raise ValueError(
            f"The 'candidates' parameter of identify must hold at least as many images as "
            f"'reconstructions' ({len(found)}). Got {len(pool)} instead."
        )
    _, named = linear_sum_assignment(torch.cdist(found, pool).numpy())
    return sorted(int(j) for j in named)
