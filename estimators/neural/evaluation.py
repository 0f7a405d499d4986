r"""A trained critic's bound on held-out samples, with its evaluation standard error.

Held-out values use every pair the fold offers: for a :class:`ConcatCritic` the whole
score matrix ``S[i, j] = T(x_i, y_j)`` of the fold (``n`` joint and ``n (n - 1)``
product-of-marginal pairs; InfoNCE with ``K = n``), computed in row chunks; folds larger
than :data:`EVAL_BLOCK` samples are cut into nearly equal blocks, each evaluated on its
own pairs, and the value is the size-weighted mean of the block values. For the
:class:`HierarchicalCritic` (aligned pairs only) the marginal samples pair ``x_i`` with
``g`` at ``shifts`` cyclic offsets of the fold's order, ``(x_i, g_{i + s mod n})``, which
never re-pairs a sample with itself.

Standard error. Every value is a smooth function of sample means and of U-statistics
over pairs of distinct samples, so to first order (Hoeffding's projection and the delta
method; van der Vaart, *Asymptotic Statistics*, 1998, Chapters 3 and 12)
``value - E[value] ~ (1/n) sum_k psi_k`` with one influence value ``psi_k`` per sample, and
``se = sd(psi) / sqrt(n)``. With ``d_k = T(x_k, y_k)``, ``f`` the marginal transform
(``e^T``, or ``e^{clip(T)}`` for SMILE), ``r_k`` the mean of ``f`` over the marginal pairs in
which sample ``k`` supplies ``x`` and ``c_k`` over those in which it supplies ``y``, and
``M`` the mean of ``f`` over all marginal pairs:

- DV, SMILE: ``psi_k = (d_k - mean d) - (r_k + c_k - 2 M) / M``;
- NWJ: ``psi_k = (d_k - mean d) - e^{-1} (r_k + c_k - 2 M)``;
- InfoNCE: ``psi_k = (a_k - value) - (sum_i w_ik - 1)`` with
  ``a_k = S_kk - log mean_j e^{S_kj}`` and ``w_ik = softmax_j(S_i.)_k``.

The standard error covers the noise of evaluating a fixed critic on a finite fold
(tested against the spread over independent folds in
``tests/estimators/test_neural_evaluation.py``), nothing about how the critic was trained.
Being first order, it underestimates when ``e^T`` on product-of-marginal pairs is
heavy-tailed (a critic much sharper than the log density ratio).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import torch

from pruneleak.estimators.neural.critics import ConcatCritic, HierarchicalCritic

__all__ = ["EVAL_BLOCK", "Evaluation", "evaluate_infonce", "evaluate_marginal"]

#: Largest fold evaluated as one score matrix (512**2 scores); larger folds are cut into blocks.
EVAL_BLOCK = 512
#: Most hidden activations computed at once while filling a score matrix (64 MiB float32).
_CHUNK_ACTIVATIONS = 2**24
#: Aligned pairs per forward pass of a hierarchical critic.
_ALIGNED_CHUNK = 4096


@dataclass(frozen=True)
class Evaluation:
    """A bound on a held-out fold: ``value`` and its standard error ``se`` in nats, from
    ``n`` samples."""

    value: float
    se: float
    n: int


def _blocks(n: int, block: int) -> list[slice]:
    count = math.ceil(n / block)
    edges = np.linspace(0, n, count + 1).round().astype(int)
    return [slice(int(a), int(b)) for a, b in pairwise(edges)]


@torch.no_grad()
def score_matrix(critic: ConcatCritic, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``S[i, j] = T(x_i, y_j)`` of an ``n x n`` fold in float64, in row chunks."""
    widest = max(critic.hidden)
    rows = max(1, _CHUNK_ACTIVATIONS // (x.shape[0] * widest))
    return torch.cat(
        [critic.scores(x[i : i + rows], y).double() for i in range(0, x.shape[0], rows)]
    )


def _marginal_influence(bound, d, log_r, log_c, log_m):
    """value and psi of DV / SMILE / NWJ from the joint scores and log row / column means."""
    value_joint = d.mean()
    if bound == "nwj":
        value = value_joint - torch.exp(log_m - 1.0)
        marginal = torch.exp(log_r - 1.0) + torch.exp(log_c - 1.0) - 2 * torch.exp(log_m - 1.0)
    else:
        value = value_joint - log_m
        marginal = torch.exp(log_r - log_m) + torch.exp(log_c - log_m) - 2.0
    return value, (d - value_joint) - marginal


def _combine(parts: list[tuple[torch.Tensor, torch.Tensor]]) -> Evaluation:
    sizes = np.array([len(psi) for _, psi in parts], dtype=float)
    values = np.array([float(v) for v, _ in parts])
    psi = torch.cat([p for _, p in parts]).cpu().numpy()
    value = float(np.sum(sizes * values) / sizes.sum())
    se = float(np.std(psi, ddof=1) / math.sqrt(len(psi))) if len(psi) > 1 else math.inf
    return Evaluation(value=value, se=se, n=len(psi))


def _infonce_block(scores: torch.Tensor):
    n = scores.shape[0]
    log_rows = torch.logsumexp(scores, dim=1)
    a = scores.diagonal() - log_rows + math.log(n)
    value = a.mean()
    weights = torch.exp(scores - log_rows[:, None])  # softmax of each row
    return value, (a - value) - (weights.sum(dim=0) - 1.0)


@torch.no_grad()
def evaluate_infonce(
    critic: ConcatCritic, x: torch.Tensor, y: torch.Tensor, *, block: int = EVAL_BLOCK
) -> Evaluation:
    """InfoNCE of ``critic`` on the fold ``(x, y)``: the fold is cut into nearly equal blocks
    of at most ``block`` samples, each block's score matrix gives ``I_NCE`` with ``K`` = its
    size, and the value is the size-weighted mean; influence-function standard error
    (module docstring). A fold needs at least 2 samples."""
    parts = [_infonce_block(score_matrix(critic, x[p], y[p])) for p in _blocks(x.shape[0], block)]
    return _combine(parts)


@torch.no_grad()
def evaluate_marginal(
    critic: ConcatCritic | HierarchicalCritic,
    x: torch.Tensor,
    g: torch.Tensor,
    bound: str,
    *,
    shifts: int,
    clip: float | None = None,
) -> Evaluation:
    """The ``bound`` (``"dv"``, ``"nwj"`` or ``"smile"``) of an aligned-pair critic on
    ``(x, g)``: joint scores ``T(x_i, g_i)`` and ``shifts`` marginal scores per sample,
    ``T(x_i, g_{(i + s) mod n})`` for ``s = 1..shifts`` (at most ``n - 1``; at ``n - 1`` these
    are all the fold's pairs). Standard error as in the module docstring: sample ``k``
    supplies ``x`` to the pairs of row ``k`` and ``g`` to ``(k - s, k)``."""
    n = x.shape[0]
    shifts = min(shifts, n - 1)
    step = _ALIGNED_CHUNK

    def aligned(g_part):
        return torch.cat([critic(x[i : i + step], g_part[i : i + step]) for i in range(0, n, step)])

    d = aligned(g).double()
    # (shifts, n): marg[s - 1, i] = T(x_i, g_{(i + s) mod n})
    marg = torch.stack([aligned(torch.roll(g, -s, dims=0)).double() for s in range(1, shifts + 1)])
    if bound == "smile":
        marg = marg.clamp(-clip, clip)
    log_r = torch.logsumexp(marg, dim=0) - math.log(shifts)
    # sample k supplies g to row (k - s) of shift s: roll each shift back by s
    as_g = torch.stack([torch.roll(marg[s - 1], s) for s in range(1, shifts + 1)])
    log_c = torch.logsumexp(as_g, dim=0) - math.log(shifts)
    log_m = torch.logsumexp(log_r, dim=0) - math.log(n)
    value, psi = _marginal_influence(bound, d, log_r, log_c, log_m)
    return _combine([(value, psi)])
