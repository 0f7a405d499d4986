"""Reference quantities the claims are checked against, each against an independent computation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from pruneleak.bounds import accounting
from pruneleak.bounds.claims import fedltp, huang, mine, priprune


def _hockey_stick(p, q, eps, lo, hi, points=()):
    """sup_S P(S) - e^eps Q(S) = int (p - e^eps q)_+ by quadrature."""
    value, _ = integrate.quad(
        lambda y: max(p(y) - math.exp(eps) * q(y), 0.0),
        lo,
        hi,
        points=points,
        limit=400,
        epsabs=1e-14,
        epsrel=1e-10,
    )
    return value


@pytest.mark.parametrize(("eps", "sigma"), [(-0.3, 1.0), (0.0, 0.7), (0.5, 1.0), (2.0, 3.0)])
def test_gaussian_privacy_profile_matches_quadrature(eps, sigma):
    ref = _hockey_stick(
        stats.norm(1, sigma).pdf,
        stats.norm(0, sigma).pdf,
        eps,
        -30 * sigma,
        30 * sigma,
        points=(0.5,),
    )
    assert math.exp(fedltp._gaussian_log_delta(eps, sigma)) == pytest.approx(ref, rel=1e-7)


@pytest.mark.parametrize(("eps", "scale"), [(-2.0, 1.0), (-0.2, 1.0), (0.3, 2.0), (0.9, 1.0)])
def test_laplace_privacy_profile_matches_quadrature(eps, scale):
    ref = _hockey_stick(
        stats.laplace(0, scale).pdf,
        stats.laplace(1, scale).pdf,
        eps,
        -60 * scale,
        60 * scale,
        points=(0.0, 1.0),
    )
    assert math.exp(fedltp._laplace_log_delta(eps, scale)) == pytest.approx(ref, rel=1e-7)


def test_laplace_privacy_profile_vanishes_above_pure_epsilon():
    assert fedltp._laplace_log_delta(1.5, 1.0) == -np.inf


@pytest.mark.parametrize(("eps", "alpha"), [(0.01, 1.5), (1.0, 2.0), (3.0, 20.0)])
def test_randomized_response_divergence(eps, alpha):
    p = math.exp(eps) / (1 + math.exp(eps))
    direct = math.log(p**alpha * (1 - p) ** (1 - alpha) + (1 - p) ** alpha * p ** (1 - alpha))
    assert fedltp._rr_divergence(eps, alpha) == pytest.approx(direct / (alpha - 1), rel=1e-10)


@pytest.mark.parametrize(("alpha", "q", "sigma"), [(2, 0.01, 1.0), (8, 0.1, 2.0), (3.5, 0.3, 0.8)])
def test_eq21_literal_quadrature_matches_published_rate_q_squared(alpha, q, sigma):
    # bounds.accounting evaluates eq. 21 through the identity (rate q^2): independent route.
    published = accounting.fedltp_rho_s_published(0, q=q, noise_multiplier=sigma, alpha=alpha)
    assert fedltp._eq21_literal(alpha, q, sigma) == pytest.approx(published, rel=1e-8)


def test_gaussian_mi_and_dv_of_the_optimal_critic():
    rho = 0.4
    assert mine.gaussian_mi(rho) == pytest.approx(-0.5 * math.log(1 - rho**2), rel=1e-12)
    estimate, se = mine._dv_sampler(np.random.default_rng(0), 200_000, rho, "optimal")
    # 4 standard errors: a deliberately wide band for a fixed-seed regression check.
    assert abs(estimate - mine.gaussian_mi(rho)) < 4 * se


@pytest.mark.parametrize("d_star", [1, 3, 8])
def test_gaussian_entropy_references(d_star):
    # h(N(0, S/B)) - h(N(0, B S)) = -d* log B; h(N(0, s R)) - h(N(0, I)) = (d*/2) log s, det R = 1.
    assert priprune._scaling_true(d_star, 5.0) == pytest.approx(-d_star * math.log(5.0))
    assert priprune._whitening_true(d_star, 3.0) == pytest.approx(0.5 * d_star * math.log(3.0))
    assert priprune._whitening_claimed(d_star, 3.0) == pytest.approx(-0.5 * d_star * math.log(3))


def test_part2_max_quantile_matches_laplace_sampling():
    # The reference is the (1 - delta/m)-quantile of z = e^2, e ~ Lap(0, b): sampled z must
    # stay below it with frequency 1 - delta/m, in every unit of b (b = 1e-3 and 1e3).
    m, delta = 10, 0.1
    for b in (1e-3, 1.0, 1e3):
        z = np.random.default_rng(1).laplace(0.0, b, size=200_000) ** 2
        empirical = np.mean(z <= huang._part2_max_true(b, m, delta))
        # Binomial standard error at p = 0.99 with 2e5 draws is 2.2e-4; allow 5 of them.
        assert empirical == pytest.approx(1 - delta / m, abs=1.1e-3)


def test_b5_exact_probability():
    assert huang._b5_c_exact(0.5, "e1") == 1.0  # C < 0: the event is certain
    assert huang._b5_c_exact(1.05 * huang._B5_C_ROOT, "e1") < 2.0**-huang._B5_M
    assert huang._b5_c_exact(0.5, "uniform") is None
