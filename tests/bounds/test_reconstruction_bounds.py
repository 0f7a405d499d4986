"""Hayes et al. (2023) reconstruction bounds: the mu-GDP and (epsilon, delta)-DP forms.

Each bound is checked against a route that does not use its formula: the power of the
Neyman-Pearson test between two Gaussians (scipy.stats and Monte Carlo), the
(epsilon, delta(epsilon)) curve of the Gaussian (Balle and Wang 2018, Thm. 8), the RDP
accountant, and the MAP attacker of a simplex game by Monte Carlo.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

from pruneleak.bounds.accounting import DEFAULT_ORDERS, epsilon_from_rdp, rdp_gaussian
from pruneleak.bounds.leakage import (
    dp_reconstruction_bound,
    gaussian_mechanism_success_bound,
    gdp_reconstruction_bound,
)

CASES = [(1 / 2, 0.5), (1 / 10, 1.0), (1 / 56, 2.0), (1 / 1000, 4.0), (0.3, 0.1)]


@pytest.mark.parametrize(("kappa", "mu"), CASES)
def test_gdp_bound_is_the_power_of_the_optimal_test(kappa, mu):
    # Neyman-Pearson: reject N(0, 1) above its (1 - kappa) quantile; power under N(mu, 1)
    power = stats.norm(loc=mu).sf(stats.norm.isf(kappa))
    assert gdp_reconstruction_bound(kappa, mu) == pytest.approx(power, rel=1e-12)


def test_gdp_bound_against_monte_carlo_of_the_test():
    rng = np.random.default_rng(0)
    n = 400_000
    for kappa, mu in CASES:
        null = rng.standard_normal(n)
        threshold = np.quantile(null, 1 - kappa)
        power = float(np.mean(rng.standard_normal(n) + mu > threshold))
        # SE of a proportion <= 0.5 / sqrt(n) = 8e-4; 5 SE plus the threshold's
        # quantile error (density * SE of the quantile, below 1e-3 here)
        assert abs(gdp_reconstruction_bound(kappa, mu) - power) < 5e-3


@pytest.mark.parametrize(("kappa", "mu"), CASES)
def test_gdp_bound_is_the_infimum_of_the_dp_bounds_of_its_curve(kappa, mu):
    # mu-GDP <=> (eps, delta(eps))-DP for all eps (Dong, Roth, Su 2022, Cor. 2.13),
    # delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Balle, Wang 2018)
    eps = np.linspace(0.0, 12.0 + 4 * mu * mu, 40001)
    delta = special.ndtr(-eps / mu + mu / 2) - np.exp(eps) * special.ndtr(-eps / mu - mu / 2)
    bounds = [
        dp_reconstruction_bound(kappa, e, min(1.0, max(0.0, d)))
        for e, d in zip(eps, delta, strict=True)
    ]
    best = min(bounds)
    gdp = gdp_reconstruction_bound(kappa, mu)
    assert best >= gdp - 1e-9  # every (eps, delta(eps)) bound is valid, so none is below
    assert best == pytest.approx(gdp, abs=2e-4)  # grid step 3e-4 in eps


@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0, 4.0])
def test_dp_bound_of_the_accountant_is_looser_than_gdp(sigma):
    # one Gaussian step, sensitivity C, noise sigma C: mu = 1 / sigma; the accountant's
    # RDP conversion is a valid (eps, delta) pair, so its bound cannot beat the GDP one
    delta = 1e-5
    eps, _ = epsilon_from_rdp(DEFAULT_ORDERS, rdp_gaussian(DEFAULT_ORDERS, sigma), delta)
    for kappa in (1 / 8, 1 / 56, 1e-3):
        assert dp_reconstruction_bound(kappa, eps, delta) >= gdp_reconstruction_bound(
            kappa, 1 / sigma
        )


def test_gdp_bound_generalises_the_gaussian_mechanism_bound():
    for m, d, s in [(2, 1.0, 1.0), (56, 2.0, 0.5), (1000, 0.3, 2.0)]:
        assert gdp_reconstruction_bound(1 / m, d / s) == pytest.approx(
            gaussian_mechanism_success_bound(m, d, s), rel=1e-12
        )


def test_map_attacker_of_a_simplex_game_stays_below_the_bound():
    # M candidates at the vertices of a regular simplex of side Delta, noise s: the MAP
    # attacker (nearest vertex) by Monte Carlo; every pair is at distance Delta, so the
    # release is (Delta / s)-GDP between any two candidates
    rng = np.random.default_rng(1)
    m, side, s, n = 8, 2.0, 1.0, 100_000
    vertices = np.eye(m) * side / math.sqrt(2)
    secret = rng.integers(m, size=n)
    y = vertices[secret] + s * rng.standard_normal((n, m))
    guess = np.argmin(((y[:, None, :] - vertices[None]) ** 2).sum(-1), axis=1)
    success = float(np.mean(guess == secret))
    se = math.sqrt(success * (1 - success) / n)
    bound = gdp_reconstruction_bound(1 / m, side / s)
    assert success <= bound + 3 * se
    assert success > 1 / m + 10 * se  # the game is not trivial


def test_edge_cases():
    assert gdp_reconstruction_bound(0.2, math.inf) == 1.0
    assert gdp_reconstruction_bound(0.0, 3.0) == 0.0
    assert gdp_reconstruction_bound(1.0, 3.0) == 1.0
    assert dp_reconstruction_bound(0.2, math.inf, 0.0) == 1.0
    assert dp_reconstruction_bound(0.0, 1.0, 1e-5) == pytest.approx(1e-5)
    assert dp_reconstruction_bound(1e-3, 1e4, 0.0) == 1.0  # e^eps overflows: bound 1
    # large kappa: the third branch 1 - e^-eps (1 - delta - kappa) is the smaller one
    assert dp_reconstruction_bound(0.9, 1.0, 0.0) == pytest.approx(1 - math.exp(-1) * 0.1)


@pytest.mark.parametrize(
    ("func", "args", "name"),
    [
        (gdp_reconstruction_bound, (1.5, 1.0), "kappa"),
        (gdp_reconstruction_bound, (0.5, -1.0), "mu"),
        (gdp_reconstruction_bound, (0.5, math.nan), "mu"),
        (dp_reconstruction_bound, (0.5, -1.0, 0.0), "epsilon"),
        (dp_reconstruction_bound, (0.5, 1.0, 2.0), "delta"),
        (dp_reconstruction_bound, (-0.1, 1.0, 0.0), "kappa"),
    ],
)
def test_invalid_inputs_name_the_parameter(func, args, name):
    with pytest.raises(ValueError, match=f"'{name}'"):
        func(*args)
