"""The bounds of estimators.neural.objectives against closed forms and slow loops.

Closed forms: for a Gaussian pair with coordinate-wise correlation ``rho`` in ``d``
dimensions the log density ratio is, per coordinate,

    log r(x, y) = -1/2 log(1 - rho^2) - (rho^2 (x^2 + y^2) - 2 rho x y) / (2 (1 - rho^2)),

so the optimal critics of every bound are known: ``T* = log r`` (DV, InfoNCE, SMILE as
tau -> inf) and ``T* = 1 + log r`` (NWJ), at which DV and NWJ equal ``I = -(d/2) log(1 -
rho^2)`` exactly. The Monte Carlo tolerances below are 4 standard errors computed in
numpy from the same draws (plain sample variances, independent of the code under test).
"""

import math

import numpy as np
import pytest
import torch

from pruneleak.estimators.mi import correlated_gaussian_pair, correlation_for_mi
from pruneleak.estimators.neural.objectives import (
    dv_bound,
    infonce_bound,
    js_objective,
    log_mean_exp,
    mine_surrogate,
    nwj_bound,
    off_diagonal,
    smile_bound,
)


def log_ratio(x: np.ndarray, y: np.ndarray, rho: float) -> np.ndarray:
    """``log p(x, y) / (p(x) p(y))`` of the coordinate-wise correlated Gaussian pair."""
    quad = (rho**2 * (x**2 + y**2) - 2 * rho * x * y) / (2 * (1 - rho**2))
    return np.sum(-0.5 * math.log(1 - rho**2) - quad, axis=-1)


@pytest.fixture(scope="module")
def gaussian_scores():
    """Optimal-critic scores of 200,000 joint and as many product-of-marginal pairs."""
    dim, mi = 2, 1.0
    rho = correlation_for_mi(mi, dim)
    x, y = correlated_gaussian_pair(200_000, dim, mi, seed=11)
    joint = log_ratio(x, y, rho)
    marginal = log_ratio(x, np.roll(y, 1, axis=0), rho)  # y_{i-1}: independent of x_i
    return mi, joint, marginal


def _t(a) -> torch.Tensor:
    return torch.as_tensor(np.asarray(a), dtype=torch.float64)


def test_dv_of_the_optimal_critic_is_the_mutual_information(gaussian_scores):
    mi, joint, marginal = gaussian_scores
    n = len(joint)
    se = math.sqrt(joint.var() / n + np.exp(marginal).var() / (n * np.exp(marginal).mean() ** 2))
    value = float(dv_bound(_t(joint), _t(marginal)))
    assert abs(value - mi) < 4 * se, (value, se)
    # any constant shift of the critic leaves DV unchanged (it is tight at log r + c)
    shifted = float(dv_bound(_t(joint + 3.0), _t(marginal + 3.0)))
    assert shifted == pytest.approx(value, abs=1e-9)


def test_nwj_of_the_shifted_optimal_critic_is_the_mutual_information(gaussian_scores):
    mi, joint, marginal = gaussian_scores
    n = len(joint)
    se = math.sqrt(joint.var() / n + np.exp(marginal).var() / n)
    value = float(nwj_bound(_t(joint + 1.0), _t(marginal + 1.0)))
    assert abs(value - mi) < 4 * se, (value, se)
    # without the +1 shift NWJ is looser: E_P[log r] - e^-1 E_Q[r] = I - 1/e (E_Q[r] = 1)
    unshifted = float(nwj_bound(_t(joint), _t(marginal)))
    assert abs(unshifted - (mi - math.exp(-1.0))) < 4 * se


def test_nwj_is_below_dv_for_every_critic():
    # log u <= u / e for u > 0 (equality at u = e): NWJ <= DV pointwise in the critic
    rng = np.random.default_rng(3)
    for _ in range(20):
        joint, marginal = _t(rng.normal(size=30)), _t(rng.normal(2.0, 1.5, size=50))
        assert float(nwj_bound(joint, marginal)) <= float(dv_bound(joint, marginal)) + 1e-12


def test_smile_with_a_huge_clip_is_dv(gaussian_scores):
    _, joint, marginal = gaussian_scores
    j, m = _t(joint), _t(marginal)
    assert float(smile_bound(j, m, clip=1e6)) == float(dv_bound(j, m))
    assert float(smile_bound(j, m, clip=math.inf)) == float(dv_bound(j, m))


def test_smile_clips_only_the_partition_function():
    joint, marginal = _t([9.0, -9.0]), _t([-4.0, 0.5, 7.0])
    expected = 0.0 - math.log((math.exp(-2.0) + math.exp(0.5) + math.exp(2.0)) / 3)
    assert float(smile_bound(joint, marginal, clip=2.0)) == pytest.approx(expected, rel=1e-12)


def test_infonce_of_the_optimal_critic_matches_its_expansion():
    """With T* = log r, E[I_NCE(K)] = I - chi2 / (2K) + O(K^-2), chi2 = E_Q[r^2] - 1 =
    (1 - rho^2)^-d - 1 = e^{2I} - 1 (log S, S = mean_j r_1j, expanded to second order:
    E[S - 1] = chi2 / K, Var S ~ chi2 / K). At I = 0.5 nats and K = 256 the correction is
    0.0034 nats; 512 independent blocks give a standard error of ~0.003."""
    dim, mi, k, blocks = 1, 0.5, 256, 512
    rho = correlation_for_mi(mi, dim)
    x, y = correlated_gaussian_pair(k * blocks, dim, mi, seed=5)
    values = []
    for b in range(blocks):
        xb, yb = x[b * k : (b + 1) * k], y[b * k : (b + 1) * k]
        scores = log_ratio(xb[:, None, :], yb[None, :, :], rho)  # S[i, j] = T*(x_i, y_j)
        values.append(float(infonce_bound(_t(scores))))
    values = np.array(values)
    expected = mi - (math.exp(2 * mi) - 1) / (2 * k)
    se = values.std(ddof=1) / math.sqrt(blocks)
    assert abs(values.mean() - expected) < 4 * se + 1e-3, (values.mean(), expected, se)
    assert values.max() <= math.log(k)


def test_infonce_never_exceeds_log_n():
    # a critic that separates the true pairs perfectly reaches log n and no more
    for n in (2, 7, 64):
        scores = torch.full((n, n), -1e4, dtype=torch.float64)
        scores.fill_diagonal_(1e4)
        assert float(infonce_bound(scores)) == pytest.approx(math.log(n), abs=1e-12)
        random_scores = torch.randn(n, n, generator=torch.Generator().manual_seed(n)) * 50
        assert float(infonce_bound(random_scores)) <= math.log(n) + 1e-6


# ---------------------------------------------------------------------------------------
# slow, obviously correct loops over a small score matrix
# ---------------------------------------------------------------------------------------


def _loop_terms(s):
    n = len(s)
    joint = [s[i][i] for i in range(n)]
    marginal = [s[i][j] for i in range(n) for j in range(n) if i != j]
    return joint, marginal


def _loop_dv(s):
    joint, marginal = _loop_terms(s)
    return sum(joint) / len(joint) - math.log(sum(math.exp(t) for t in marginal) / len(marginal))


def _loop_nwj(s):
    joint, marginal = _loop_terms(s)
    return sum(joint) / len(joint) - sum(math.exp(t - 1) for t in marginal) / len(marginal)


def _loop_smile(s, clip):
    joint, marginal = _loop_terms(s)
    clipped = [min(max(math.exp(t), math.exp(-clip)), math.exp(clip)) for t in marginal]
    return sum(joint) / len(joint) - math.log(sum(clipped) / len(clipped))


def _loop_js(s):
    joint, marginal = _loop_terms(s)
    softplus = lambda t: math.log1p(math.exp(t))  # noqa: E731
    return -sum(softplus(-t) for t in joint) / len(joint) - sum(
        softplus(t) for t in marginal
    ) / len(marginal)


def _loop_infonce(s):
    n = len(s)
    total = 0.0
    for i in range(n):
        total += math.log(math.exp(s[i][i]) / (sum(math.exp(s[i][j]) for j in range(n)) / n))
    return total / n


@pytest.mark.parametrize("n", [2, 3, 7])
@pytest.mark.parametrize("seed", [0, 1])
def test_bounds_equal_slow_loops(n, seed):
    rng = np.random.default_rng(seed)
    s = rng.normal(0.0, 2.0, size=(n, n))
    s[np.diag_indices(n)] += 1.5
    scores = _t(s)
    rows = s.tolist()
    joint, marginal = scores.diagonal(), off_diagonal(scores)
    assert float(dv_bound(joint, marginal)) == pytest.approx(_loop_dv(rows), rel=1e-12)
    assert float(nwj_bound(joint, marginal)) == pytest.approx(_loop_nwj(rows), rel=1e-12)
    assert float(smile_bound(joint, marginal, clip=1.0)) == pytest.approx(
        _loop_smile(rows, 1.0), rel=1e-12
    )
    assert float(js_objective(joint, marginal)) == pytest.approx(_loop_js(rows), rel=1e-12)
    assert float(infonce_bound(scores)) == pytest.approx(_loop_infonce(rows), rel=1e-12)


@pytest.mark.parametrize("n", [2, 3, 5, 16])
def test_off_diagonal_is_the_row_major_off_diagonal(n):
    scores = torch.arange(float(n * n)).reshape(n, n)
    expected = scores[~torch.eye(n, dtype=torch.bool)]
    torch.testing.assert_close(off_diagonal(scores), expected, rtol=0, atol=0)


def test_js_objective_is_maximised_by_the_log_density_ratio(gaussian_scores):
    # a logistic regression of joint against marginal samples: scaling or shifting the
    # optimal critic only lowers the objective (up to Monte Carlo noise, ~1e-3 here)
    _, joint, marginal = gaussian_scores
    best = float(js_objective(_t(joint), _t(marginal)))
    for scale, shift in ((0.7, 0.0), (1.4, 0.0), (1.0, 0.5), (1.0, -0.5)):
        other = float(js_objective(_t(scale * joint + shift), _t(scale * marginal + shift)))
        assert other < best


def test_log_mean_exp_is_stable():
    assert float(log_mean_exp(torch.tensor([1000.0, 1000.0]))) == pytest.approx(1000.0)
    assert float(log_mean_exp(torch.tensor([-1000.0, -1000.0 - math.log(3)]))) == pytest.approx(
        -1000.0 + math.log(2 / 3), rel=1e-6
    )


# ---------------------------------------------------------------------------------------
# MINE's moving-average gradient correction
# ---------------------------------------------------------------------------------------


def _parameterised_scores():
    weight = torch.tensor([0.3, -0.8, 1.1], dtype=torch.float64, requires_grad=True)
    features = torch.randn(5, 3, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    t_joint = features[:2] @ weight
    t_marginal = features[2:] @ weight
    return weight, features, t_joint, t_marginal


def test_surrogate_without_averaging_has_the_dv_gradient():
    weight, _, t_joint, t_marginal = _parameterised_scores()
    surrogate, _ = mine_surrogate(t_joint, t_marginal, torch.tensor(5.0), rate=1.0)
    (grad_surrogate,) = torch.autograd.grad(surrogate, weight, retain_graph=True)
    (grad_dv,) = torch.autograd.grad(dv_bound(t_joint, t_marginal), weight)
    torch.testing.assert_close(grad_surrogate, grad_dv)


def test_surrogate_gradient_divides_by_the_moving_average():
    """MINE Section 3.2: gradient = E_P[grad T] - E_Q[e^T grad T] / a, with
    a = (1 - rate) a_old + rate mean_Q e^T, written out here with the features."""
    weight, features, t_joint, t_marginal = _parameterised_scores()
    rate, old = 0.1, 2.5
    surrogate, log_average = mine_surrogate(
        t_joint, t_marginal, torch.tensor(math.log(old), dtype=torch.float64), rate=rate
    )
    (grad,) = torch.autograd.grad(surrogate, weight)
    e_t = torch.exp(t_marginal.detach())
    average = (1 - rate) * old + rate * float(e_t.mean())
    assert float(log_average) == pytest.approx(math.log(average), rel=1e-12)
    expected = features[:2].mean(0) - (e_t[:, None] * features[2:]).mean(0) / average
    torch.testing.assert_close(grad, expected)
    assert not log_average.requires_grad
