"""train_critic's weight averaging and restored critic against a slow closed-form loop.

The critic is one scalar weight ``w`` trained on the loss ``-c w`` (a constant gradient),
so every AdamW step moves it by exactly ``lr c / (|c| + eps)`` (with a constant gradient
Adam's bias-corrected moments are ``g`` and ``g^2``), and the validation "bound" is ``w``
itself, so it improves at every evaluation and the last one is restored. The exponential
moving average of the weights is then a short loop written out in the test.
"""

import pytest
import torch
from torch import nn

from pruneleak.estimators.neural.evaluation import Evaluation
from pruneleak.estimators.neural.training import TrainingConfig, train_critic

LR, C, W0, EPS = 0.01, 2.0, 0.5, 1e-8


class Scalar(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.tensor(W0, dtype=torch.float64))


def _train(averaging: float, steps: int, eval_every: int) -> tuple[float, list[float]]:
    critic = Scalar()
    config = TrainingConfig(
        max_steps=steps,
        batch_size=2,
        learning_rate=LR,
        averaging=averaging,
        schedule="constant",
        eval_every=eval_every,
        patience=steps,
        min_improvement=0.0,
    )

    def objective(indices):
        loss = -C * critic.w
        return loss, -loss.detach()

    def evaluate(fold):
        return Evaluation(value=float(critic.w), se=0.0, n=1)

    result = train_critic(
        critic,
        objective=objective,
        evaluate=evaluate,
        n_train=4,
        config=config,
        generator=torch.Generator().manual_seed(0),
    )
    return float(critic.w.detach()), list(result.trace["validation"])


def _slow(averaging: float, steps: int, eval_every: int) -> tuple[float, list[float]]:
    """Raw weights w_t = W0 + t * step, averages a_t = d a_{t-1} + (1 - d) w_t, a_0 = W0;
    evaluations see a_t (or w_t without averaging) at t = 0, eval_every, 2 eval_every, ..."""
    step = LR * C / (C + EPS)
    raw, average, seen = W0, W0, [W0]
    for t in range(1, steps + 1):
        raw = W0 + t * step
        average = averaging * average + (1 - averaging) * raw
        if t % eval_every == 0:
            seen.append(average if averaging > 0 else raw)
    return seen[-1], seen


@pytest.mark.parametrize("averaging", [0.0, 0.9, 0.99])
def test_evaluations_and_restored_critic_follow_the_weight_average(averaging):
    """Several evaluations: training must resume from the raw weights after each one (a
    loop that kept the averaged weights would fall behind), and the restored critic is
    the average at the best (last) evaluation."""
    restored, seen = _train(averaging, steps=60, eval_every=10)
    expected_restored, expected_seen = _slow(averaging, steps=60, eval_every=10)
    assert seen == pytest.approx(expected_seen, rel=1e-9, abs=1e-12)
    assert restored == pytest.approx(expected_restored, rel=1e-9)
