"""Gaussian closed forms of estimators.mi against sympy, Monte Carlo and each other."""

import math

import numpy as np
import pytest
import sympy as sp

from pruneleak.estimators.mi import (
    GaussianBatchChannel,
    correlated_gaussian_pair,
    correlation_for_mi,
    gaussian_channel_bound,
    gaussian_entropy,
    gaussian_mutual_information,
)


def _random_spd(dim, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((dim, dim))
    return a @ a.T + dim * np.eye(dim)


def test_entropy_equals_sympy_on_a_2x2_covariance():
    cov = sp.Matrix([[2, sp.Rational(1, 2)], [sp.Rational(1, 2), 1]])
    exact = sp.log(2 * sp.pi * sp.E) + sp.log(cov.det()) / 2  # (d/2) log(2 pi e) + log det / 2
    assert gaussian_entropy(np.array(cov, dtype=float)) == pytest.approx(float(exact), abs=1e-14)


def test_bivariate_mi_equals_textbook_formula():
    rho = 0.6
    # Cover and Thomas, Example 8.5.1: I = -1/2 log(1 - rho^2)
    assert gaussian_mutual_information([[1, rho], [rho, 1]], 1) == pytest.approx(
        -0.5 * math.log(1 - rho**2), abs=1e-14
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mi_is_sum_of_entropies_minus_joint(seed):
    cov = _random_spd(7, seed)
    expected = gaussian_entropy(cov[:3, :3]) + gaussian_entropy(cov[3:, 3:]) - gaussian_entropy(cov)
    assert gaussian_mutual_information(cov, 3) == pytest.approx(expected, abs=1e-12)


def test_entropy_monte_carlo():
    cov = _random_spd(3, 5)
    rng = np.random.default_rng(0)
    z = rng.multivariate_normal(np.zeros(3), cov, size=200_000)
    inv = np.linalg.inv(cov)
    log_density = -0.5 * np.einsum("ni,ij,nj->n", z, inv, z) - 0.5 * np.log(
        np.linalg.det(2 * np.pi * cov)
    )
    # -E[log p] from 2e5 draws: sd of log p is sqrt(d/2) ~ 1.2, so the standard error is
    # ~0.003; 0.015 is five standard errors
    assert gaussian_entropy(cov) == pytest.approx(-log_density.mean(), abs=0.015)


@pytest.mark.parametrize(("dim", "mi"), [(1, 0.5), (5, 1.0), (25, 4.0)])
def test_correlated_pair_has_the_requested_mi(dim, mi):
    rho = correlation_for_mi(mi, dim)
    cov = np.block([[np.eye(dim), rho * np.eye(dim)], [rho * np.eye(dim), np.eye(dim)]])
    assert gaussian_mutual_information(cov, dim) == pytest.approx(mi, rel=1e-12)
    x, y = correlated_gaussian_pair(100_000, dim, mi, seed=1)
    # sample correlation of 1e5 pairs: standard error (1 - rho^2) / sqrt(n) < 0.0032
    assert np.corrcoef(x[:, 0], y[:, 0])[0, 1] == pytest.approx(rho, abs=0.013)


@pytest.mark.parametrize(("batch_size", "noise_std"), [(1, 0.3), (3, 0.5), (8, 1.0)])
def test_batch_channel_closed_form_equals_joint_covariance(batch_size, noise_std):
    channel = GaussianBatchChannel(batch_size, 4, 6, noise_std, seed=batch_size)
    cov = channel.joint_covariance()
    assert gaussian_mutual_information(cov, batch_size * 4) == pytest.approx(
        channel.mutual_information(), rel=1e-10
    )


def test_batch_channel_samples_have_the_joint_covariance():
    channel = GaussianBatchChannel(3, 2, 3, 0.5, seed=0)
    x, g = channel.sample(200_000, seed=1)
    assert x.shape == (200_000, 3, 2)
    assert g.shape == (200_000, 3)
    empirical = np.cov(np.hstack([x.reshape(len(x), -1), g]), rowvar=False)
    # entries of order 1 estimated from 2e5 draws: standard error ~0.003
    np.testing.assert_allclose(empirical, channel.joint_covariance(), atol=0.015)


def test_batch_channel_mi_falls_with_batch_size_and_noise():
    mis = [GaussianBatchChannel(b, 4, 6, 0.5).mutual_information() for b in (1, 3, 8)]
    assert mis[0] > mis[1] > mis[2] > 0
    noisy = [GaussianBatchChannel(3, 4, 6, s).mutual_information() for s in (0.1, 0.5, 2.0)]
    assert noisy[0] > noisy[1] > noisy[2] > 0


def test_channel_bound_is_tight_for_the_gaussian_batch_channel():
    # G = A mean(X_B) + sigma eps is Gaussian: the bound holds with equality
    channel = GaussianBatchChannel(3, 4, 6, 0.7, seed=2)
    signal_cov = channel.mixing @ channel.mixing.T / 3
    assert gaussian_channel_bound(signal_cov, 0.7) == pytest.approx(
        channel.mutual_information(), rel=1e-12
    )


def test_channel_bound_exceeds_the_mi_of_a_binary_signal():
    # S = +-1 with equal odds plus N(0, 1) noise: I(S; S + eps) is a 1-d integral
    # (binary-input AWGN), below the Gaussian bound 0.5 log 2
    t = np.linspace(-12, 12, 20001)
    density = 0.5 * (np.exp(-((t - 1) ** 2) / 2) + np.exp(-((t + 1) ** 2) / 2)) / np.sqrt(2 * np.pi)
    h_output = -np.trapezoid(density * np.log(density), t)
    mi = h_output - 0.5 * np.log(2 * np.pi * np.e)
    assert 0 < mi < gaussian_channel_bound([[1.0]], 1.0) == pytest.approx(0.5 * np.log(2))


@pytest.mark.parametrize(
    ("func", "args", "match"),
    [
        (gaussian_entropy, ([[1.0, 2.0], [2.0, 1.0]],), "positive definite"),
        (gaussian_entropy, ([[1.0, 0.5], [0.0, 1.0]],), "symmetric"),
        (gaussian_entropy, (np.ones((2, 3)),), "square"),
        (gaussian_entropy, ([[np.nan]],), "finite"),
        (gaussian_mutual_information, (np.eye(3), 3), "dim_x"),
        (gaussian_mutual_information, (np.eye(3), 0), "dim_x"),
        (gaussian_mutual_information, ([[1.0, 1.0], [1.0, 1.0]], 1), "positive definite"),
        (correlation_for_mi, (-0.1, 3), "mi"),
        (correlation_for_mi, (1.0, 0), "dim"),
        (GaussianBatchChannel, (3, 2, 2, 0.0), "noise_std"),
        (gaussian_channel_bound, ([[1.0]], 0.0), "noise_std"),
        (gaussian_channel_bound, ([[-1.0]], 1.0), "semi-definite"),
        (gaussian_channel_bound, ([[1.0, 0.5], [0.0, 1.0]], 1.0), "symmetric"),
        (GaussianBatchChannel, (0, 2, 2, 1.0), "batch_size"),
    ],
)
def test_mi_closed_forms_reject_bad_input(func, args, match):
    with pytest.raises(ValueError, match=match):
        func(*args)


def test_correlated_pair_keeps_its_noise_at_large_mi():
    # I = 25 nats in one dimension: 1 - rho^2 = e^-50 rounds rho to 1.0, and the old
    # sqrt(1 - rho^2) = 0 returned y == x (infinite MI). The noise std must be e^-25; the
    # sample std of 1e4 draws has standard error 0.7 %, so 3 % is four standard errors.
    x, y = correlated_gaussian_pair(10_000, 1, 25.0, seed=3)
    assert np.std(y - x) / math.exp(-25.0) == pytest.approx(1.0, rel=0.03)


@pytest.mark.parametrize("noise_std", [1e-150, 1e-300])
def test_batch_channel_mi_at_tiny_noise(noise_std):
    # sigma^2 underflows (1e-300) or nearly (1e-150); with dim_g <= dim_x, A A^T is full
    # rank and log det(I + AA^T / (B s^2)) = log det(AA^T / B + s^2 I) - 2 dim_g log s,
    # where s^2 I is below rounding of AA^T / B: the reference is slogdet(AA^T / B).
    channel = GaussianBatchChannel(2, 5, 3, noise_std, seed=4)
    gram = channel.mixing @ channel.mixing.T / 2
    expected = 0.5 * (np.linalg.slogdet(gram)[1] - 2 * 3 * math.log(noise_std))
    assert channel.mutual_information() == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(("scale", "noise_std"), [(1.0, 1e-300), (1e300, 1e-10), (1e-300, 1e-300)])
def test_channel_bound_at_extreme_scales(scale, noise_std):
    # 0.5 sum log(1 + lambda / s^2) for diagonal covariances, in log space by hand:
    # log(1 + r) = log r + log1p(1 / r) with log r = log lambda - 2 log s
    eigenvalues = scale * np.array([3.0, 0.5])
    log_ratio = np.log(eigenvalues) - 2 * math.log(noise_std)
    expected = 0.5 * float(np.sum(log_ratio + np.log1p(np.exp(-log_ratio))))
    assert gaussian_channel_bound(np.diag(eigenvalues), noise_std) == pytest.approx(
        expected, rel=1e-12
    )


def test_entropy_of_a_covariance_near_the_float_maximum():
    # det of diag(1e308, 1e308) overflows; log det = 2 log 1e308 (Cover and Thomas 8.4.1)
    expected = 0.5 * (2 * math.log(2 * math.pi * math.e) + 2 * math.log(1e308))
    assert gaussian_entropy(np.diag([1e308, 1e308])) == pytest.approx(expected, rel=1e-14)


def test_symmetry_is_checked_relative_to_the_entries():
    # entries of 1e-20 with an asymmetry of 1e-14 passed the old absolute tolerance 1e-12
    # and the lower triangle was silently used
    with pytest.raises(ValueError, match="symmetric"):
        gaussian_entropy([[1e-20, 1e-14], [0.0, 1e-20]])
