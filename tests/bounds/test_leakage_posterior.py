"""bounds.leakage.posterior: per-draw likelihoods against quadrature and hand values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from pruneleak.bounds import leakage


def _gaussian_draws(releases: np.ndarray, s: float, draws: int, seed: int):
    """Per-draw log-likelihoods of y = r_X + N(0, s^2 I), X uniform (written out)."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(len(releases), size=draws)
    y = releases[truth] + s * rng.standard_normal((draws, releases.shape[1]))
    squared = ((y[:, None, :] - releases[None, :, :]) ** 2).sum(axis=-1)
    return -squared / (2 * s**2), truth


def test_two_candidates_match_the_binary_channel_quadrature():
    releases = np.array([[0.0], [1.5]])
    ll, truth = _gaussian_draws(releases, 1.0, 20000, seed=0)
    value = leakage.posterior_leakage(ll, truth)
    exact = leakage.binary_channel_bits(1.5, 1.0)
    assert value.method == "monte_carlo"
    assert value.ci_bits[0] <= exact <= value.ci_bits[1]
    assert value.ci_bits[1] - value.ci_bits[0] < 0.05
    success = stats.norm.cdf(0.75)  # Phi(d / (2 s))
    assert value.bayes_success_ci[0] <= success <= value.bayes_success_ci[1]


def test_agrees_with_exact_leakage_on_the_same_release():
    rng = np.random.default_rng(1)
    releases = rng.normal(size=(6, 4))
    ll, truth = _gaussian_draws(releases, 0.8, 8000, seed=2)
    value = leakage.posterior_leakage(ll, truth)
    exact = leakage.exact_leakage(releases, 0.8, samples=8000, seed=3)
    assert value.ci_bits[0] <= exact.ci_bits[1] and exact.ci_bits[0] <= value.ci_bits[1]


def _mixture_bits(means_by_u: np.ndarray, s: float) -> float:
    """I(X; Y) for Y = m_U(X) + N(0, s^2), U a fair coin hidden from the server."""

    def density(x, y):
        return float(np.mean([stats.norm.pdf(y, m[x], s) for m in means_by_u]))

    m = means_by_u.shape[1]

    def term(x, y):
        px = density(x, y)
        py = np.mean([density(j, y) for j in range(m)])
        return px * math.log2(px / py) if px > 0 else 0.0

    lo, hi = means_by_u.min() - 8 * s, means_by_u.max() + 8 * s
    return float(np.mean([integrate.quad(lambda y, x=x: term(x, y), lo, hi)[0] for x in range(m)]))


def test_bracket_contains_the_value_with_the_true_marginal_critic_and_is_tight():
    means = np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])
    s, draws = 0.4, 6000
    rng = np.random.default_rng(4)
    truth = rng.integers(3, size=draws)
    u = rng.integers(2, size=draws)
    y = means[u, truth] + s * rng.standard_normal(draws)
    given_u = stats.norm.logpdf(y[:, None], means[u], s)  # log p(y | x, U_d)
    marginal = np.log(np.mean([stats.norm.pdf(y[:, None], m, s) for m in means], axis=0))
    value = leakage.posterior_bracket(given_u, marginal, truth)
    exact = _mixture_bits(means, s)
    assert value.ci_bits[0] <= exact <= value.ci_bits[1]
    # the exact marginal as critic attains I(X; Y) up to epsilon's cost and Monte Carlo error
    assert value.bracket_bits[0] == pytest.approx(exact, abs=0.05)
    # the upper end is I(X; Y, U), well above I(X; Y) here (U swaps candidates 0 and 2)
    assert value.bracket_bits[1] > exact + 0.4
    # the critic that sees U_d (the planted error) would claim more than I(X; Y)
    cheat = leakage.posterior_bracket(given_u, given_u, truth)
    assert cheat.ci_bits[0] > exact


def test_success_bracket_is_an_achievable_attack_below_the_attacker_who_sees_u():
    means = np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])
    rng = np.random.default_rng(5)
    truth, u = rng.integers(3, size=4000), rng.integers(2, size=4000)
    y = means[u, truth] + 0.4 * rng.standard_normal(4000)
    given_u = stats.norm.logpdf(y[:, None], means[u], 0.4)
    value = leakage.posterior_bracket(given_u, np.zeros((4000, 3)), truth)
    low, high = value.success_bracket
    assert low == pytest.approx(1 / 3, abs=0.03)  # a blind critic names candidate 0: chance
    # the MAP attacker who sees U names the nearest of three points 1 apart, s = 0.4:
    # Phi(1.25) at the two ends, 2 Phi(1.25) - 1 in the middle
    given = (2 * stats.norm.cdf(1.25) + 2 * stats.norm.cdf(1.25) - 1) / 3
    assert high == pytest.approx(given, abs=0.02)


@pytest.mark.parametrize(
    ("ll", "truth", "match"),
    [
        (np.zeros((1, 3)), [0], r"'log_likelihoods' .* at least 2 draws"),
        (np.full((2, 2), np.nan), [0, 1], r"'log_likelihoods' .* must not contain NaN"),
        (np.zeros((2, 2)), [0, 2], r"'truth' .* \[0, 1\]. Got 0..2"),
        (np.zeros((2, 2)), [0.0, 1.0], r"'truth' .* integer indices"),
        (np.array([[0.0, -np.inf], [0.0, 0.0]]), [1, 0], r"finite at each draw's true"),
    ],
)
def test_bad_input_names_the_parameter(ll, truth, match):
    with pytest.raises(ValueError, match=match):
        leakage.posterior_leakage(ll, truth)


def test_bracket_refuses_a_critic_of_another_shape():
    with pytest.raises(ValueError, match=r"'critic' .* shape of 'log_likelihoods', \(2, 2\)"):
        leakage.posterior_bracket(np.zeros((2, 2)), np.zeros((2, 3)), [0, 1])
