"""GaussianMI: the plug-in against the closed form, its exact bias against Monte Carlo, the
bootstrap interval's coverage, what it estimates on non-Gaussian data, and its warnings.

References: ``estimators.mi.gaussian_mutual_information`` of ``numpy.cov`` (the sample
covariance computed without this module's rescaling); the true MI of
``correlated_gaussian_pair``, ``-(d/2) log(1 - rho^2)``; for a uniform input plus Gaussian
noise, ``h(Y) - h(noise)`` by numerical integration of the convolved density.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from mi_warnings import estimate_quietly, issued_mi_warnings
from scipy import integrate, stats

from pruneleak.estimators.closed_form import GaussianMI, gaussian_plugin_bias
from pruneleak.estimators.mi import correlated_gaussian_pair, gaussian_mutual_information
from pruneleak.estimators.registry import estimate_mi, get_estimator


@pytest.mark.parametrize(("n", "dim_x", "dim_y"), [(50, 1, 1), (300, 3, 2), (400, 1, 6)])
def test_value_is_the_closed_form_of_the_sample_covariance(n, dim_x, dim_y):
    # fails on: a biased covariance (n instead of n - 1 changes nothing here, but a
    # forgotten centring or a swapped x / y block does), a wrong dim_x split
    rng = np.random.default_rng(n)
    x = rng.normal(size=(n, dim_x))
    y = x[:, :1] @ np.ones((1, dim_y)) + 3.0 * rng.normal(size=(n, dim_y)) + 5.0
    expected = gaussian_mutual_information(np.cov(np.hstack([x, y]).T), dim_x)
    assert estimate_quietly(
        GaussianMI(n_resamples=2, bias_correct=False), x, y
    ).value == pytest.approx(expected, abs=1e-10)


@pytest.mark.parametrize("dim", [1, 5, 25])
def test_bias_corrected_value_matches_the_truth_of_gaussian_pairs(dim):
    # N = 5,000, 1 nat: sd of the estimate 0.023 at 5 + 5 (40 seeds, measured): 3 sd
    x, y = correlated_gaussian_pair(5000, dim, 1.0, seed=dim)
    est = GaussianMI(bias_correct=True, n_resamples=20).estimate(x, y)
    assert est.value == pytest.approx(1.0, abs=0.07)


def _bias_mpmath(n, dim_x, dim_y):
    """The Wishart bias formula at 30 digits (mpmath's digamma, not scipy's)."""
    with mpmath.workdps(30):
        psi = [mpmath.digamma(mpmath.mpf(n - i) / 2) for i in range(1, dim_x + dim_y + 1)]
        return float((sum(psi[:dim_x]) + sum(psi[:dim_y]) - sum(psi)) / 2)


@pytest.mark.parametrize(("n", "dim_x", "dim_y"), [(4, 1, 2), (40, 3, 3), (5000, 50, 50)])
def test_plugin_bias_equals_its_formula_at_high_precision(n, dim_x, dim_y):
    expected = _bias_mpmath(n, dim_x, dim_y)
    assert gaussian_plugin_bias(n, dim_x, dim_y) == pytest.approx(expected, rel=1e-12)


def test_plugin_bias_matches_monte_carlo():
    # 400 replicates of independent 3 + 3 Gaussians with N = 40: the mean plug-in value is
    # the bias (truth 0). Formula: 0.1269 (mpmath); sd of one estimate 0.061, of the mean
    # 0.0031 (measured): tolerance 0.01 (3.3 sd). The large-N approximation
    # dim_x dim_y / (2N) = 0.1125 is 5 sd from the Monte Carlo mean (0.1288), so the test also
    # tells the exact formula from the approximation.
    # Fails on: psi((N - i) / 2) shifted by one, a wrong sign, the approximation.
    values = []
    for seed in range(400):
        rng = np.random.default_rng(seed)
        x, y = rng.normal(size=(40, 3)), rng.normal(size=(40, 3))
        values.append(estimate_quietly(GaussianMI(n_resamples=2, bias_correct=False), x, y).value)
    assert np.mean(values) == pytest.approx(_bias_mpmath(40, 3, 3), abs=0.01)


def test_plugin_bias_tends_to_the_large_sample_approximation():
    # dim_x dim_y / (2 N): relative error O(D / N)
    assert gaussian_plugin_bias(10**6, 4, 5) == pytest.approx(20 / 2e6, rel=1e-4)
    assert gaussian_plugin_bias(5000, 50, 50) == pytest.approx(0.25, rel=0.05)


@pytest.mark.parametrize(
    ("n", "dim", "mi", "bias_correct"),
    [(300, 1, 0.5, False), (200, 10, 1.0, True)],
)
def test_bootstrap_interval_covers_at_about_the_nominal_level(n, dim, mi, bias_correct):
    # 150 replicates, 95 % intervals from 200 resamples each. Measured with 200 replicates
    # (other seeds): coverage of the estimator's mean 0.93-0.985 at N = 500-2,000 and 1-25
    # dimensions per side; the plain percentile interval covered 0 % at 25 + 25 dimensions
    # and N = 1,000 (centred on value + bias). Tolerance: [0.87, 1.0], 4 binomial sd (0.018)
    # below nominal. At 10 + 10 dimensions and N = 200 the bias (0.26 nats) is 3 times the
    # sd: this is the case that tells the centred interval from the plain percentile, and,
    # with bias_correct=True, it covers the truth as well.
    rows = []
    for seed in range(150):
        x, y = correlated_gaussian_pair(n, dim, mi, seed=500 + seed)
        est = estimate_quietly(GaussianMI(bias_correct=bias_correct), x, y, seed=seed)
        rows.append((est.value, est.ci_low, est.ci_high))
    value, low, high = np.array(rows).T
    mean = value.mean()
    assert np.mean((low <= mean) & (mean <= high)) >= 0.87
    assert np.mean((low <= mi) & (mi <= high)) >= 0.87


def test_on_a_uniform_input_with_gaussian_noise_it_is_above_the_truth():
    # Not a lower bound (module docstring): X ~ U(-sqrt 3, sqrt 3), Y = X + 0.1 N(0, 1).
    # Truth h(Y) - h(N) = 2.178 nats by quadrature; the Gaussian with the same covariance has
    # 0.5 log(1 + 1 / 0.01) = 2.308. N = 20,000: sd of the estimate about 0.006.
    half, noise = math.sqrt(3.0), 0.1

    def density(v):
        return (stats.norm.cdf((v + half) / noise) - stats.norm.cdf((v - half) / noise)) / (
            2 * half
        )

    h_y = integrate.quad(
        lambda v: -density(v) * math.log(density(v)) if density(v) > 0 else 0.0,
        -half - 12 * noise, half + 12 * noise, limit=200,
    )[0]  # fmt: skip
    truth = h_y - 0.5 * math.log(2 * math.pi * math.e * noise**2)
    assert truth == pytest.approx(2.178, abs=1e-3)
    rng = np.random.default_rng(0)
    x = rng.uniform(-half, half, size=(20_000, 1))
    y = x + noise * rng.standard_normal((20_000, 1))
    plug_in = GaussianMI(n_resamples=20, bias_correct=False).estimate(x, y).value
    assert plug_in == pytest.approx(0.5 * math.log(1 + 1 / noise**2), abs=0.03)
    assert plug_in > truth + 0.08
    # the Gaussian-copula estimate of scalar variables is a lower bound in the limit
    copula = GaussianMI(transform="rank", n_resamples=20, bias_correct=False).estimate(x, y).value
    assert copula < truth


def test_rank_transform_gives_the_copula_estimate_invariant_to_monotone_maps():
    x, y = correlated_gaussian_pair(500, 2, 1.0, seed=4)
    estimator = GaussianMI(transform="rank", n_resamples=10)
    a, b = estimator.estimate(x, y), estimator.estimate(np.exp(x), y**3)
    assert (a.value, a.ci_low, a.ci_high) == (b.value, b.ci_low, b.ci_high)


def test_magnitudes_near_the_float_limits_give_the_same_estimate():
    # the MI is scale invariant; computing the covariance of raw 1e300 values overflows
    x, y = correlated_gaussian_pair(300, 2, 1.0, seed=6)
    reference = GaussianMI(n_resamples=5).estimate(x, y)
    for scale in (1e300, 1e-300):
        got = GaussianMI(n_resamples=5).estimate(scale * x, y / scale)
        assert got.value == pytest.approx(reference.value, abs=1e-9)


def test_singular_covariances_are_refused_with_a_clear_message():
    x, y = correlated_gaussian_pair(6, 3, 1.0, seed=0)
    with pytest.raises(ValueError, match=r"more samples than joint dimensions.*Got N = 6"):
        GaussianMI().estimate(x, y)
    x, y = correlated_gaussian_pair(100, 2, 1.0, seed=0)
    with pytest.raises(ValueError, match="singular sample covariance"):
        GaussianMI().estimate(x, np.hstack([y, 2.0 * x[:, :1]]))


def test_a_shared_outlier_is_resolved_up_to_float_precision():
    # x and y both dominated by one outlier in sample 0: correlation 1 - O(1e-18) at 1e9,
    # which a covariance (condition number squared) rounds to singular and the QR factors
    # of the data resolve; at 1e16 the data themselves are collinear within float64.
    # Fails on: forming the covariance (refuses the 1e9 case), or no rank check (returns
    # a meaningless huge value at 1e16).
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(10, 1)), rng.normal(size=(10, 1))
    x[0], y[0] = -1e9, -1e9
    est = estimate_quietly(GaussianMI(n_resamples=10, bias_correct=False), x, y)
    # the Gaussian MI of data this close to collinear is large (about 17 nats here)
    assert math.isfinite(est.value) and est.value > 10
    x[0], y[0] = -1e16, -1e16
    with pytest.raises(ValueError, match="singular sample covariance"):
        GaussianMI().estimate(x, y)


def test_few_samples_per_dimension_warn_and_name_the_bias():
    x, y = correlated_gaussian_pair(40, 5, 1.0, seed=0)
    issued = issued_mi_warnings(GaussianMI(n_resamples=20, bias_correct=False), x, y)
    assert any("fewer than 5 per dimension" in m for m in issued)
    assert any("biased upwards by" in m and "bias_correct=True" in m for m in issued)
    corrected = issued_mi_warnings(GaussianMI(n_resamples=20, bias_correct=True), x, y)
    assert not any("biased upwards" in m for m in corrected)


def test_cauchy_samples_warn_of_heavy_tails_unless_transformed():
    rng = np.random.default_rng(0)
    x = rng.standard_cauchy((1000, 1))
    y = x + rng.standard_cauchy((1000, 1))
    assert (
        sum("heavy tails" in m for m in issued_mi_warnings(GaussianMI(n_resamples=20), x, y)) == 2
    )
    issued = issued_mi_warnings(GaussianMI(transform="rank", n_resamples=20), x, y)
    assert not any("heavy tails" in m for m in issued)


def test_a_clean_case_gives_no_warning():
    x, y = correlated_gaussian_pair(2000, 2, 0.5, seed=0)
    assert issued_mi_warnings(GaussianMI(), x, y) == []


def test_registry_builds_it_and_the_seed_moves_only_the_interval():
    x, y = correlated_gaussian_pair(500, 1, 0.5, seed=1)
    est = estimate_mi(x, y, "gaussian", n_resamples=50, seed=3)
    assert isinstance(get_estimator("gaussian"), GaussianMI) and est.method == "gaussian"
    assert est == GaussianMI(n_resamples=50).estimate(x, y, seed=3)
    other = GaussianMI(n_resamples=50).estimate(x, y, seed=4)
    assert other.value == est.value and other.ci_low != est.ci_low
