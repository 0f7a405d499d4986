"""The critics of estimators.neural against slow, obviously correct references."""

import pytest
import torch
from torch import nn

from pruneleak.estimators.neural.critics import MAX_PARAMETERS, ConcatCritic, HierarchicalCritic


@pytest.mark.parametrize("hidden", [(5,), (6, 3)])
@pytest.mark.parametrize("activation", ["elu", "relu", "softplus"])
def test_score_matrix_equals_the_critic_pair_by_pair(hidden, activation):
    torch.manual_seed(0)
    critic = ConcatCritic(3, 2, hidden=hidden, activation=activation).double()
    x, y = torch.randn(6, 3, dtype=torch.float64), torch.randn(4, 2, dtype=torch.float64)
    with torch.no_grad():
        expected = torch.tensor(
            [[float(critic(x[i : i + 1], y[j : j + 1])) for j in range(4)] for i in range(6)],
            dtype=torch.float64,
        )
        torch.testing.assert_close(critic.scores(x, y), expected)


def test_concat_critic_is_an_mlp_on_the_concatenation():
    # the split first layer is one nn.Linear on [x; y] with the two weight blocks side by side
    torch.manual_seed(1)
    critic = ConcatCritic(3, 2, hidden=(5, 4), activation="elu").double()
    first = nn.Linear(5, 5).double()
    with torch.no_grad():
        first.weight.copy_(torch.cat([critic.first_x.weight, critic.first_y.weight], dim=1))
        first.bias.copy_(critic.first_x.bias)
    x, y = torch.randn(7, 3, dtype=torch.float64), torch.randn(7, 2, dtype=torch.float64)
    expected = critic.rest(first(torch.cat([x, y], dim=1))).squeeze(1)
    torch.testing.assert_close(critic(x, y), expected)
    linear = [m for m in critic.modules() if isinstance(m, nn.Linear)]
    assert [m.out_features for m in linear] == [5, 5, 4, 1]


def test_hierarchical_critic_equals_a_loop_over_blocks():
    """Liu et al. (2021), Section 2.3: h_m = BlockModel([x_m; G]) for each m with one shared
    BlockModel, T = MixModel([h_1; ...; h_B]); written out with one concatenated linear
    layer per block."""
    torch.manual_seed(2)
    critic = HierarchicalCritic(3, 4, 5, block_hidden=(6,), embedding_dim=2, mix_hidden=(7,))
    critic = critic.double()
    x, g = torch.randn(8, 5, 3, dtype=torch.float64), torch.randn(8, 4, dtype=torch.float64)
    weight = torch.cat([critic.block_x.weight, critic.block_g.weight], dim=1)
    embeddings = []
    for m in range(5):
        hidden = torch.cat([x[:, m], g], dim=1) @ weight.T + critic.block_x.bias
        embeddings.append(critic.block_rest(hidden))
    expected = critic.mix(torch.cat(embeddings, dim=1)).squeeze(1)
    torch.testing.assert_close(critic(x, g), expected)


def test_hierarchical_shifted_scores_equal_the_critic_on_rolled_gradients():
    """Row s of shifted_scores is T(x_i, g_{(i + s) mod n}), evaluated here one shift at a
    time through forward on an explicitly re-paired g (an index gather, not torch.roll)."""
    torch.manual_seed(4)
    critic = HierarchicalCritic(3, 4, 5, block_hidden=(6,), embedding_dim=2, mix_hidden=(7,))
    critic = critic.double()
    n = 9
    x, g = torch.randn(n, 5, 3, dtype=torch.float64), torch.randn(n, 4, dtype=torch.float64)
    scores = critic.shifted_scores(x, g, 4)
    assert scores.shape == (5, n)
    for s in range(5):
        repaired = g[[(i + s) % n for i in range(n)]]
        torch.testing.assert_close(scores[s], critic(x, repaired))


def test_hierarchical_block_model_is_shared_across_the_batch():
    small = HierarchicalCritic(3, 4, 2, block_hidden=(6,), embedding_dim=2, mix_hidden=(7,))
    large = HierarchicalCritic(3, 4, 9, block_hidden=(6,), embedding_dim=2, mix_hidden=(7,))
    block = lambda c: [p.shape for n, p in c.named_parameters() if n.startswith("block")]  # noqa: E731
    assert block(small) == block(large)  # B times fewer input weights than a flat MLP
    assert large.mix[0].weight.shape == (7, 2 * 9)
    # every hidden layer, the embedding included, ends in the activation
    assert isinstance(small.block_rest[-1], nn.ELU)


def test_a_linear_mix_model_is_allowed():
    critic = HierarchicalCritic(1, 1, 3, block_hidden=(4,), embedding_dim=2, mix_hidden=())
    assert [m.in_features for m in critic.mix if isinstance(m, nn.Linear)] == [6]
    assert critic(torch.randn(5, 3, 1), torch.randn(5, 1)).shape == (5,)


def test_parameter_limit_is_refused_before_allocation():
    with pytest.raises(ValueError, match=str(MAX_PARAMETERS)):
        ConcatCritic(2, 2, hidden=(2**15, 2**14))
    with pytest.raises(ValueError, match="parameters"):
        HierarchicalCritic(2, 2, 2**20, embedding_dim=2**9)
