r"""Critics (statistics networks) ``T(x, y)`` of the neural MI bounds.

Two architectures:

- :class:`ConcatCritic`: an MLP on the concatenation ``(x, y)`` (MINE's statistics network,
  Belghazi et al. 2018, Section 3; the "concat critic" of Poole et al. 2019, Section 5).
  Besides ``T`` on aligned pairs it computes the whole score matrix
  ``S[i, j] = T(x_i, y_j)`` of a minibatch, which InfoNCE needs and which gives the other
  bounds ``n (n - 1)`` product-of-marginal samples instead of ``n``. The first linear
  layer is split into an ``x`` part and a ``y`` part, ``W [x; y] + b = W_x x + (W_y y + b)``,
  so both are computed once per sample and broadcast-added: only the later layers see
  the ``n^2`` pairs.
- :class:`HierarchicalCritic`: H-MINE's network for a batch ``X_B = (x_1, ..., x_B)`` and
  its gradient ``G`` (Liu, Zhu, Wang and Xiao, "A quantitative metric for privacy
  leakage in federated learning", ICASSP 2021, Section 2.3, Fig. 2, Algorithm 1): one
  shared BlockModel maps each block ``O_m = (x_m, G)`` to an embedding ``h_m`` and a
  MixModel maps the concatenation ``(h_1, ..., h_B)`` to the scalar ``T``. It is evaluated
  on aligned pairs only; product-of-marginal samples come from re-paired indices.

Both refuse networks above :data:`MAX_PARAMETERS` weights before allocating anything.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import pairwise

import torch
from torch import nn

from pruneleak.bounds.validation import check_choice, check_int

__all__ = ["ACTIVATIONS", "MAX_PARAMETERS", "ConcatCritic", "HierarchicalCritic"]

#: Activations a critic may use, by name.
ACTIVATIONS = {"relu": nn.ReLU, "elu": nn.ELU, "softplus": nn.Softplus}
#: Largest critic built: 2**28 parameters are 1 GiB in float32 (4 GiB with Adam's state
#: and the gradients). Larger requests are refused before any allocation.
MAX_PARAMETERS = 2**28


def check_hidden(name: str, sizes, *, func: str, allow_empty: bool = True) -> tuple[int, ...]:
    """``sizes`` as a tuple of layer widths (ints >= 1), else ValueError naming ``name``."""
    if isinstance(sizes, str) or not isinstance(sizes, Iterable):
        raise ValueError(
            f"The '{name}' parameter of {func} must be a sequence of layer widths (ints >= 1), "
            f"e.g. (16, 8). Got {sizes!r} instead."
        )
    sizes = tuple(sizes)
    if not sizes and not allow_empty:
        raise ValueError(
            f"The '{name}' parameter of {func} must hold at least one layer width. Got () instead."
        )
    for size in sizes:
        check_int(name, size, func=func, low=1)
    return sizes


def _count(layer_sizes: list[tuple[int, ...]]) -> int:
    return sum(a * b + b for sizes in layer_sizes for a, b in pairwise(sizes))


def check_parameter_count(layer_sizes: list[tuple[int, ...]], *, func: str) -> int:
    """Parameters of MLPs given by their layer sizes; ValueError above MAX_PARAMETERS."""
    count = _count(layer_sizes)
    if count > MAX_PARAMETERS:
        raise ValueError(
            f"The critic of {func} would have {count} parameters "
            f"({count * 4 / 2**30:.3g} GiB in float32), more than the limit of "
            f"{MAX_PARAMETERS}; use smaller hidden widths."
        )
    return count


def _mlp(sizes: tuple[int, ...], activation: str, *, final_activation: bool) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (fan_in, fan_out) in enumerate(pairwise(sizes)):
        layers.append(nn.Linear(fan_in, fan_out))
        if final_activation or i < len(sizes) - 2:
            layers.append(ACTIVATIONS[activation]())
    return nn.Sequential(*layers)


class ConcatCritic(nn.Module):
    """``T(x, y) = MLP([x; y])`` with a cheap all-pairs score matrix.

    Parameters
    ----------
    dim_x, dim_y : int
        Features of one ``x`` and one ``y`` (flattened), >= 1.
    hidden : sequence of int, default (16, 8)
        Hidden widths, at least one layer (the first layer is the split one).
    activation : {"relu", "elu", "softplus"}, default "elu"

    Examples
    --------
    >>> critic = ConcatCritic(2, 3, hidden=(4,))
    >>> x, y = torch.randn(5, 2), torch.randn(5, 3)
    >>> critic(x, y).shape, critic.scores(x, y).shape
    (torch.Size([5]), torch.Size([5, 5]))
    """

    def __init__(self, dim_x: int, dim_y: int, *, hidden=(16, 8), activation: str = "elu"):
        super().__init__()
        func = "ConcatCritic"
        dim_x = check_int("dim_x", dim_x, func=func, low=1)
        dim_y = check_int("dim_y", dim_y, func=func, low=1)
        hidden = check_hidden("hidden", hidden, func=func, allow_empty=False)
        check_choice("activation", activation, func=func, choices=tuple(ACTIVATIONS))
        check_parameter_count([(dim_x + dim_y, *hidden, 1)], func=func)
        self.dim_x, self.dim_y, self.hidden = dim_x, dim_y, hidden
        # W [x; y] + b = (W_x x + b) + W_y y: the two parts of one linear layer
        self.first_x = nn.Linear(dim_x, hidden[0])
        self.first_y = nn.Linear(dim_y, hidden[0], bias=False)
        self.rest = nn.Sequential(
            ACTIVATIONS[activation](), *_mlp((*hidden, 1), activation, final_activation=False)
        )

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """``T(x_i, y_i)`` of shape (n,) for ``x`` (n, dim_x) and ``y`` (n, dim_y)."""
        return self.rest(self.first_x(x) + self.first_y(y)).squeeze(-1)

    def scores(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """``S[i, j] = T(x_i, y_j)`` of shape (n, m) for ``x`` (n, dim_x), ``y`` (m, dim_y).

        Costs one first-layer product per sample and the later layers on the ``n m``
        pairs; memory ``n m`` times the widest hidden layer.
        """
        return self.rest(self.first_x(x)[:, None, :] + self.first_y(y)[None, :, :]).squeeze(-1)


class HierarchicalCritic(nn.Module):
    """H-MINE's critic ``T(X_B, G) = MixModel(h_1, ..., h_B)``, ``h_m = BlockModel(x_m, G)``.

    Liu et al. (2021), Section 2.3 and Fig. 2: one BlockModel shared by the ``B`` blocks
    (``B`` times fewer input weights than an MLP on the flattened batch) and a MixModel
    on the concatenated embeddings. The paper's sizes are ``block_hidden=(200, 200)``,
    ``embedding_dim=5``, ``mix_hidden=(500,)``; the defaults here are smaller (tuned in
    :mod:`estimators.neural.estimators`). Every hidden layer, the embedding included, is
    followed by the activation. The paper's Algorithm 1 writes ``MixModel(H, G)`` while its
    text feeds only the concatenated embeddings to the MixModel; the text is implemented
    (``G`` reaches the MixModel through every ``h_m``).

    Parameters
    ----------
    dim_x : int
        Features of one input ``x_m``, >= 1.
    dim_g : int
        Features of ``G``, >= 1.
    batch_size : int
        ``B``, the inputs per sample, >= 1.
    block_hidden : sequence of int, default (32, 32)
        Hidden widths of the BlockModel, at least one layer.
    embedding_dim : int, default 8
        Width of each ``h_m``.
    mix_hidden : sequence of int, default (32,)
        Hidden widths of the MixModel (may be empty: a linear MixModel).
    activation : {"relu", "elu", "softplus"}, default "elu"

    Examples
    --------
    >>> critic = HierarchicalCritic(2, 3, 4, block_hidden=(8,), embedding_dim=2, mix_hidden=(8,))
    >>> critic(torch.randn(5, 4, 2), torch.randn(5, 3)).shape
    torch.Size([5])
    """

    def __init__(
        self,
        dim_x: int,
        dim_g: int,
        batch_size: int,
        *,
        block_hidden=(32, 32),
        embedding_dim: int = 8,
        mix_hidden=(32,),
        activation: str = "elu",
    ):
        super().__init__()
        func = "HierarchicalCritic"
        dim_x = check_int("dim_x", dim_x, func=func, low=1)
        dim_g = check_int("dim_g", dim_g, func=func, low=1)
        self.batch_size = check_int("batch_size", batch_size, func=func, low=1)
        embedding_dim = check_int("embedding_dim", embedding_dim, func=func, low=1)
        block_hidden = check_hidden("block_hidden", block_hidden, func=func, allow_empty=False)
        mix_hidden = check_hidden("mix_hidden", mix_hidden, func=func)
        check_choice("activation", activation, func=func, choices=tuple(ACTIVATIONS))
        block_sizes = (dim_x + dim_g, *block_hidden, embedding_dim)
        mix_sizes = (embedding_dim * self.batch_size, *mix_hidden, 1)
        check_parameter_count([block_sizes, mix_sizes], func=func)
        # the BlockModel's first layer split like ConcatCritic's: G's part once per sample
        self.block_x = nn.Linear(dim_x, block_hidden[0])
        self.block_g = nn.Linear(dim_g, block_hidden[0], bias=False)
        self.block_rest = nn.Sequential(
            ACTIVATIONS[activation](),
            *_mlp((*block_hidden, embedding_dim), activation, final_activation=True),
        )
        self.mix = _mlp(mix_sizes, activation, final_activation=False)

    def embeddings(self, x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        """``(h_1, ..., h_B)`` of shape (n, B, embedding_dim) for ``x`` (n, B, dim_x), ``g``."""
        return self.block_rest(self.block_x(x) + self.block_g(g)[:, None, :])

    def forward(self, x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        """``T(X_B, G)`` of shape (n,) for ``x`` (n, B, dim_x) and ``g`` (n, dim_g)."""
        return self.mix(self.embeddings(x, g).flatten(1)).squeeze(-1)

    def shifted_scores(self, x: torch.Tensor, g: torch.Tensor, shifts: int) -> torch.Tensor:
        """``S[s, i] = T(X_B,i, G_{(i + s) mod n})`` of shape (shifts + 1, n): the joint pairs
        (row 0) and ``shifts`` cyclic re-pairings, in one batched pass.

        Equal to ``forward(x, torch.roll(g, -s, dims=0))`` for each ``s``: the BlockModel's
        first layer is split, so each sample's ``x`` and ``g`` parts are computed once and
        only their sums are re-paired.
        """
        x_part = self.block_x(x)  # (n, B, h)
        g_part = self.block_g(g)  # (n, h)
        rolled = torch.stack([torch.roll(g_part, -s, dims=0) for s in range(shifts + 1)])
        embeddings = self.block_rest(x_part[None] + rolled[:, :, None, :])  # (S + 1, n, B, e)
        return self.mix(embeddings.flatten(2)).squeeze(-1)
