"""The variational bounds against closed forms and slow loops, the critic's score matrix
against pair-by-pair evaluation.

The closed form: for a standard bivariate normal pair with correlation ``rho`` the
optimal critic is the log density ratio

    log dP/dQ (x, y) = -log(1 - rho^2) / 2 - (rho^2 x^2 - 2 rho x y + rho^2 y^2) / (2 (1 - rho^2)),

whose mean under the joint law is ``I = -log(1 - rho^2) / 2``; DV is tight at it and NWJ at
``1 + log dP/dQ``. The Monte Carlo tolerance is 6 standard errors of the joint mean
(``sd(log ratio) / sqrt(n)``, at most 0.003 nats for the sizes below) plus the marginal
term's error, bounded by the same amount.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from estimators.neural.critics import ConcatCritic
from estimators.neural.objectives import (
    dv_bound,
    infonce_bound,
    nwj_bound,
    off_diagonal,
    smile_bound,
)

RHO = 0.6
TRUTH = -0.5 * math.log(1 - RHO**2)


def _log_ratio(x: np.ndarray, y: np.ndarray) -> torch.Tensor:
    r2 = RHO**2
    value = -0.5 * math.log(1 - r2) - (r2 * x**2 - 2 * RHO * x * y + r2 * y**2) / (2 * (1 - r2))
    return torch.from_numpy(value)


def _optimal_scores(n: int, seed: int):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n)
    y = RHO * x + math.sqrt(1 - RHO**2) * rng.standard_normal(n)
    y_independent = rng.permutation(y)
    return _log_ratio(x, y), _log_ratio(x, y_independent)


def test_dv_is_tight_at_the_log_density_ratio():
    t_joint, t_marginal = _optimal_scores(400_000, 0)
    tolerance = 12 * float(t_joint.std()) / math.sqrt(len(t_joint))
    assert float(dv_bound(t_joint, t_marginal)) == pytest.approx(TRUTH, abs=tolerance)
    # a constant shift of the critic leaves DV unchanged
    shifted = dv_bound(t_joint + 3.0, t_marginal + 3.0)
    assert float(shifted) == pytest.approx(float(dv_bound(t_joint, t_marginal)), abs=1e-9)


def test_nwj_is_tight_at_one_plus_the_log_density_ratio():
    t_joint, t_marginal = _optimal_scores(400_000, 1)
    tolerance = 12 * float(t_joint.std()) / math.sqrt(len(t_joint))
    assert float(nwj_bound(1 + t_joint, 1 + t_marginal)) == pytest.approx(TRUTH, abs=tolerance)
    # without the shift NWJ is strictly lower: E_P[T] - E_Q[e^{T-1}] at T = log r is I - 1/e + ...
    assert float(nwj_bound(t_joint, t_marginal)) < TRUTH - 0.2


def test_bounds_match_their_formulas_in_a_slow_loop():
    rng = np.random.default_rng(2)
    t_joint = rng.normal(size=7)
    t_marginal = rng.normal(size=11) * 3
    mean_exp = sum(math.exp(t) for t in t_marginal) / len(t_marginal)
    clipped = sum(math.exp(min(max(t, -1.5), 1.5)) for t in t_marginal) / len(t_marginal)
    joint = sum(t_joint) / len(t_joint)
    tj, tm = torch.from_numpy(t_joint), torch.from_numpy(t_marginal)
    assert float(dv_bound(tj, tm)) == pytest.approx(joint - math.log(mean_exp), rel=1e-12)
    assert float(nwj_bound(tj, tm)) == pytest.approx(joint - mean_exp / math.e, rel=1e-12)
    assert float(smile_bound(tj, tm, clip=1.5)) == pytest.approx(
        joint - math.log(clipped), rel=1e-12
    )


def test_smile_with_a_wide_clip_is_dv():
    t_joint, t_marginal = _optimal_scores(5000, 3)
    assert float(smile_bound(t_joint, t_marginal, clip=1e6)) == float(dv_bound(t_joint, t_marginal))


def test_infonce_matches_a_slow_loop_and_stays_below_log_n():
    scores = torch.from_numpy(np.random.default_rng(4).normal(size=(9, 9)) * 4)
    n = scores.shape[0]
    expected = 0.0
    for i in range(n):
        row = [math.exp(float(scores[i, j])) for j in range(n)]
        expected += (float(scores[i, i]) - math.log(sum(row) / n)) / n
    assert float(infonce_bound(scores)) == pytest.approx(expected, rel=1e-12)
    assert float(infonce_bound(scores * 1000)) <= math.log(n) + 1e-12


def test_infonce_with_the_optimal_critic_approaches_the_truth_from_below():
    """With n candidates and T = log r, E[I_NCE] <= min(I, log n); at n = 512 it is close."""
    rng = np.random.default_rng(5)
    values = []
    for _ in range(20):
        x = rng.standard_normal(512)
        y = RHO * x + math.sqrt(1 - RHO**2) * rng.standard_normal(512)
        scores = _log_ratio(x[:, None], y[None, :])
        values.append(float(infonce_bound(scores)))
    mean, sem = np.mean(values), np.std(values) / math.sqrt(len(values))
    assert mean <= TRUTH + 4 * sem
    assert mean > TRUTH - 0.05  # the bias of I_NCE at n = 512 for I = 0.22 nats is ~0.01


def test_off_diagonal_is_every_pair_with_different_indices():
    scores = torch.arange(25.0).reshape(5, 5)
    expected = [float(scores[i, j]) for i in range(5) for j in range(5) if i != j]
    assert off_diagonal(scores).tolist() == expected


def test_critic_score_matrix_equals_pair_by_pair_evaluation():
    with torch.random.fork_rng():
        torch.manual_seed(0)
        critic = ConcatCritic(3, 2, hidden=(7, 5))
    x, y = torch.randn(6, 3), torch.randn(4, 2)
    scores = critic.scores(x, y)
    loop = torch.stack(
        [torch.stack([critic(x[i : i + 1], y[j : j + 1])[0] for j in range(4)]) for i in range(6)]
    )
    torch.testing.assert_close(scores, loop, rtol=1e-5, atol=1e-6)
