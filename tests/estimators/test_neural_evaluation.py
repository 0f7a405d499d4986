"""Held-out evaluation (value and influence-function standard error) and the cross-fitted
interval of estimators.neural, against exact identities and independent repetitions."""

import math

import numpy as np
import pytest
import torch
from scipy import stats
from torch import nn

from pruneleak.estimators.mi import correlated_gaussian_pair, correlation_for_mi
from pruneleak.estimators.neural.critics import ConcatCritic
from pruneleak.estimators.neural.evaluation import evaluate_infonce, evaluate_marginal
from pruneleak.estimators.neural.interval import cross_fit_interval
from pruneleak.estimators.neural.objectives import dv_bound, infonce_bound, nwj_bound, off_diagonal


class GaussianCritic(nn.Module):
    """``scale * log r + shift`` with ``log r`` the log density ratio of the correlated
    Gaussian pair (``scale = 1``: the optimal critic of DV, of NWJ with ``shift = 1``)."""

    hidden = (1,)  # read by the chunking of score matrices

    def __init__(self, rho: float, *, scale: float = 1.0, shift: float = 0.0):
        super().__init__()
        self.rho, self.scale, self.shift = rho, scale, shift

    def forward(self, x, y):
        rho = self.rho
        quad = (rho**2 * (x**2 + y**2) - 2 * rho * x * y) / (2 * (1 - rho**2))
        return self.scale * (-0.5 * math.log(1 - rho**2) - quad).sum(-1) + self.shift

    def scores(self, x, y):
        return self(x[:, None, :], y[None, :, :])


MI = 1.0
RHO = correlation_for_mi(MI, 1)


def _folds(count: int, n: int):
    x, y = correlated_gaussian_pair(count * n, 1, MI, seed=21)
    x, y = torch.as_tensor(x), torch.as_tensor(y)
    return [(x[i * n : (i + 1) * n], y[i * n : (i + 1) * n]) for i in range(count)]


@pytest.mark.parametrize(
    ("bound", "shift", "clip"), [("dv", 0.0, None), ("nwj", 1.0, None), ("smile", 0.0, 5.0)]
)
def test_marginal_bound_standard_error_matches_the_spread_over_folds(bound, shift, clip):
    """200 independent folds of 400 samples, one fixed critic (half the log density ratio,
    so that the marginal term matters): the influence-function standard error must match
    the standard deviation of the 200 values. That sd is known to ~5 % (1 / sqrt(2 *
    199)), so the ratio must lie in [0.85, 1.18] (3 of those 5 % either way). Measured when
    writing this test: 1.00 for DV; without the column role of each sample 0.78, without
    the marginal term 0.54. (For a critic much sharper than the density ratio, e^T is
    heavy-tailed and the first-order error underestimates: 0.70 at twice log r.)"""
    critic = GaussianCritic(RHO, scale=0.5, shift=shift)
    results = [
        evaluate_marginal(critic, x, y, bound, shifts=16, clip=clip) for x, y in _folds(200, 400)
    ]
    values = np.array([r.value for r in results])
    ratio = np.mean([r.se for r in results]) / values.std(ddof=1)
    assert 0.85 < ratio < 1.18, ratio


def test_infonce_standard_error_matches_the_spread_over_folds():
    """As above for InfoNCE with K = 100 (four blocks per fold of 400). Measured when
    writing this test: 0.92 (0.86 without the column term sum_i w_ik - 1, which matters
    little here; a standard error per block instead of per sample would be ~0.5)."""
    critic = GaussianCritic(RHO, scale=0.5)
    results = [evaluate_infonce(critic, x, y, block=100) for x, y in _folds(200, 400)]
    values = np.array([r.value for r in results])
    ratio = np.mean([r.se for r in results]) / values.std(ddof=1)
    assert 0.85 < ratio < 1.18, ratio


def test_all_shifts_use_every_pair_of_the_fold():
    # shifts = n - 1 pairs each x_i with every other y_j: the DV and NWJ values of the
    # full off-diagonal of the score matrix
    torch.manual_seed(3)
    critic = ConcatCritic(2, 3, hidden=(8,)).double()
    x, y = torch.randn(9, 2, dtype=torch.float64), torch.randn(9, 3, dtype=torch.float64)
    with torch.no_grad():
        scores = critic.scores(x, y)
        joint, marginal = scores.diagonal(), off_diagonal(scores)
        for bound, reference in (("dv", dv_bound), ("nwj", nwj_bound)):
            result = evaluate_marginal(critic, x, y, bound, shifts=100)  # capped at n - 1
            assert result.value == pytest.approx(float(reference(joint, marginal)), rel=1e-12)
        result = evaluate_infonce(critic, x, y, block=9)
        assert result.value == pytest.approx(float(infonce_bound(scores)), rel=1e-12)
        assert result.n == 9


def test_infonce_blocks_are_nearly_equal_and_weighted_by_size():
    torch.manual_seed(4)
    critic = ConcatCritic(1, 1, hidden=(4,)).double()
    x, y = torch.randn(10, 1, dtype=torch.float64), torch.randn(10, 1, dtype=torch.float64)
    with torch.no_grad():
        result = evaluate_infonce(critic, x, y, block=4)  # 3 blocks: 3, 4, 3 samples
        parts = [(0, 3), (3, 7), (7, 10)]
        expected = sum(
            (b - a) * float(infonce_bound(critic.scores(x[a:b], y[a:b]))) for a, b in parts
        )
    assert result.value == pytest.approx(expected / 10, rel=1e-12)


# ---------------------------------------------------------------------------------------
# the cross-fitted interval
# ---------------------------------------------------------------------------------------


def test_interval_combines_the_spread_and_the_evaluation_errors():
    values, ses = [1.0, 1.3, 0.9, 1.1], [0.05, 0.04, 0.06, 0.05]
    value, low, high, details = cross_fit_interval(values, ses, confidence=0.9)
    se = math.sqrt((np.var(values, ddof=1) + np.mean(np.square(ses))) / 4)
    half = stats.t.ppf(0.95, 3) * se
    assert value == pytest.approx(np.mean(values))
    assert (low, high) == pytest.approx((value - half, value + half))
    assert details["between_fit_sd"] == pytest.approx(np.std(values, ddof=1))
    assert "training variance" in details["interval"]


def test_upper_end_adds_the_mean_train_validation_gap():
    values, ses = [1.0, 1.2, 1.1], [0.05, 0.05, 0.05]
    _, low, high, _ = cross_fit_interval(values, ses, confidence=0.95)
    _, low_gap, high_gap, details = cross_fit_interval(
        values, ses, confidence=0.95, gaps=[0.3, 0.1, 0.2]
    )
    assert low_gap == low and high_gap == pytest.approx(high + 0.2)
    assert details["generalisation_allowance"] == pytest.approx(0.2)
    assert "generalisation error" in details["interval"]
    # a validation bound above the training bound on average is noise, not an allowance
    _, _, high_negative, _ = cross_fit_interval(values, ses, confidence=0.95, gaps=[-0.1] * 3)
    assert high_negative == high


def test_one_fit_gives_a_normal_interval_of_evaluation_noise():
    _, low, high, details = cross_fit_interval([0.7], [0.1], confidence=0.95)
    assert (low, high) == pytest.approx((0.7 - 0.1959964, 0.7 + 0.1959964), rel=1e-6)
    assert "does not cover training variance" in details["interval"]


def test_interval_widens_with_the_disagreement_of_the_fits():
    _, low_a, high_a, _ = cross_fit_interval([1.0, 1.0, 1.0], [0.05] * 3, confidence=0.95)
    _, low_b, high_b, _ = cross_fit_interval([0.8, 1.0, 1.2], [0.05] * 3, confidence=0.95)
    assert high_b - low_b > 3 * (high_a - low_a)
    assert high_a - low_a > 0  # three agreeing fits still keep their evaluation noise
