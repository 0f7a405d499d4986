"""Every truth of estimators.tasks against an independent computation.

- normal: the closed forms against ``estimators.mi.gaussian_mutual_information`` of the
  constructed covariance, and against a Monte Carlo average of the log density ratio with
  ``scipy.stats.multivariate_normal`` on samples drawn by scipy;
- Student-t: the correction against mpmath, and the whole MI against a Monte Carlo
  average of the log density ratio with ``scipy.stats.multivariate_t`` (``scipy.stats.t``
  in one dimension), on scipy's own draws and on the task's sampler;
- mixtures: the Monte Carlo truth against ``scipy.integrate.dblquad`` (the bimodal density
  written out in plain arithmetic here; the X mixture through a semi-analytic reduction);
- batch channels: the brief's four values, and a Monte Carlo check of the sampler's layout.

Monte Carlo tolerances are 4 standard errors (two-sided probability 6e-5 of failing for a
correct truth under the normal approximation; the seeds are fixed, so a pass is stable).
"""

import itertools
import math

import mpmath
import numpy as np
import pytest
from scipy import integrate, stats

from pruneleak.estimators.mi import GaussianBatchChannel, gaussian_mutual_information
from pruneleak.estimators.tasks.batch import batch_task
from pruneleak.estimators.tasks.gaussian import (
    dense_normal_task,
    equicorrelated_covariance,
    equicorrelated_mutual_information,
    normal_1v1_task,
    paired_covariance,
    paired_mutual_information,
    sparse_normal_task,
)
from pruneleak.estimators.tasks.mixture import (
    TRUTH_DRAWS,
    GaussianMixture,
    bimodal_task,
    monte_carlo_mutual_information,
    x_mixture_task,
)
from pruneleak.estimators.tasks.student import (
    student_t_correction,
    student_t_mutual_information,
    student_task,
)
from pruneleak.estimators.tasks.suite import DEFAULT_SUITE

MC_SIGMAS = 4.0  # Monte Carlo tolerance in standard errors (module docstring)
MC_DRAWS = 20_000  # standard error about 0.01 nats for the cases below


def _mean_and_stderr(terms):
    return float(np.mean(terms)), float(np.std(terms, ddof=1) / math.sqrt(len(terms)))


# ---------------------------------------------------------------- multivariate normal


@pytest.mark.parametrize(
    ("dim_x", "dim_y", "correlation"),
    [(1, 1, 0.5), (5, 5, 0.5), (25, 25, 0.5), (3, 7, 0.2), (4, 2, -0.1), (2, 2, 0.9)],
)
def test_equicorrelated_closed_form_equals_log_determinants(dim_x, dim_y, correlation):
    cov = equicorrelated_covariance(dim_x, dim_y, correlation)
    expected = gaussian_mutual_information(cov, dim_x)  # slogdet of the three blocks
    closed = equicorrelated_mutual_information(dim_x, dim_y, correlation)
    assert closed == pytest.approx(expected, rel=1e-12, abs=1e-14)


@pytest.mark.parametrize(("dim", "n_pairs", "rho"), [(1, 1, 0.75), (5, 2, 0.8), (25, 2, 0.8)])
def test_paired_closed_form_equals_log_determinants(dim, n_pairs, rho):
    cov = paired_covariance(dim, dim, n_pairs, rho)
    expected = gaussian_mutual_information(cov, dim)
    assert paired_mutual_information(n_pairs, rho) == pytest.approx(expected, rel=1e-12)


def _gaussian_pmi(z, cov, dim_x):
    """log p(x, y) - log p(x) - log p(y) with scipy's normal densities."""
    joint = stats.multivariate_normal(cov=cov).logpdf(z)
    px = stats.multivariate_normal(cov=cov[:dim_x, :dim_x]).logpdf(z[:, :dim_x])
    py = stats.multivariate_normal(cov=cov[dim_x:, dim_x:]).logpdf(z[:, dim_x:])
    return joint - px - py


NORMAL_TASKS = [
    (normal_1v1_task(0.75), paired_covariance(1, 1, 1, 0.75)),
    (dense_normal_task(5, 0.5), equicorrelated_covariance(5, 5, 0.5)),
    (dense_normal_task(25, 0.5), equicorrelated_covariance(25, 25, 0.5)),
    (sparse_normal_task(5, 2, 0.8), paired_covariance(5, 5, 2, 0.8)),
    (sparse_normal_task(25, 2, 0.8), paired_covariance(25, 25, 2, 0.8)),
]


@pytest.mark.parametrize(("task", "cov"), NORMAL_TASKS, ids=lambda v: getattr(v, "name", ""))
def test_normal_truth_equals_monte_carlo_of_scipy_log_density_ratio(task, cov):
    dim_x = task.dim_x
    draws = stats.multivariate_normal(cov=cov).rvs(size=MC_DRAWS, random_state=1)
    draws = draws.reshape(MC_DRAWS, -1)
    mean, stderr = _mean_and_stderr(_gaussian_pmi(draws, cov, dim_x))
    assert abs(mean - task.mutual_information) < MC_SIGMAS * stderr
    assert task.truth_stderr == 0.0


@pytest.mark.parametrize(("task", "cov"), NORMAL_TASKS, ids=lambda v: getattr(v, "name", ""))
def test_normal_sampler_has_the_stated_covariance(task, cov):
    x, y = task.sample(MC_DRAWS, seed=3)
    empirical = np.cov(np.hstack([x, y]), rowvar=False)
    # entry-wise standard error sqrt((1 + c^2) / n) <= 0.01 at n = 20,000: 5 of them
    np.testing.assert_allclose(empirical.reshape(cov.shape), cov, atol=0.05)


# ---------------------------------------------------------------- Student-t


@pytest.mark.parametrize("dof", [1, 2, 3, 0.5, 7.5])
@pytest.mark.parametrize(("dim_x", "dim_y"), [(1, 1), (2, 2), (5, 5), (1, 3)])
def test_student_correction_equals_mpmath(dof, dim_x, dim_y):
    nu = mpmath.mpf(dof)

    def entropy_part(k):  # h_k without its log det and log(nu pi) terms, at 30 digits
        half = (nu + k) / 2
        return (
            mpmath.loggamma(nu / 2)
            - mpmath.loggamma(half)
            + half * (mpmath.digamma(half) - mpmath.digamma(nu / 2))
        )

    with mpmath.workdps(30):
        expected = entropy_part(dim_x) + entropy_part(dim_y) - entropy_part(dim_x + dim_y)
    assert student_t_correction(dof, dim_x, dim_y) == pytest.approx(float(expected), abs=1e-13)


def test_student_correction_is_positive_symmetric_and_vanishes_in_the_normal_limit():
    assert student_t_correction(3, 2, 5) == student_t_correction(3, 5, 2)
    values = [student_t_correction(dof, 2, 2) for dof in (1, 2, 3, 10, 100)]
    assert all(a > b > 0 for a, b in itertools.pairwise(values))
    assert student_t_correction(1e8, 5, 5) < 1e-6  # c = O(d_x d_y / nu^2) as nu -> infinity


def _student_pmi(z, scale, dim_x, dof):
    """log p(x, y) - log p(x) - log p(y) with scipy's t densities (independent code)."""

    def logpdf(block, cols):
        if block.shape[0] == 1:  # scipy.stats.t for a scalar, scale sqrt(Sigma_11)
            return stats.t(dof, scale=math.sqrt(block[0, 0])).logpdf(cols[:, 0])
        return stats.multivariate_t(shape=block, df=dof).logpdf(cols)

    joint = stats.multivariate_t(shape=scale, df=dof).logpdf(z)
    return (
        joint
        - logpdf(scale[:dim_x, :dim_x], z[:, :dim_x])
        - logpdf(scale[dim_x:, dim_x:], z[:, dim_x:])
    )


STUDENT_CASES = [(dim, dof, 0.0) for dim in (1, 2, 5) for dof in (1, 2, 3)] + [
    (2, 2, 0.5),
    (3, 1, -0.6),
]


@pytest.mark.parametrize(("dim", "dof", "rho"), STUDENT_CASES)
def test_student_truth_equals_monte_carlo_of_scipy_t_densities(dim, dof, rho):
    task = student_task(dim, dof, correlation=rho)
    scale = paired_covariance(dim, dim, dim, rho)
    assert task.mutual_information == pytest.approx(
        student_t_mutual_information(scale, dim, dof), rel=1e-12
    )
    draws = stats.multivariate_t(shape=scale, df=dof).rvs(size=MC_DRAWS, random_state=dim + dof)
    mean, stderr = _mean_and_stderr(_student_pmi(draws.reshape(MC_DRAWS, -1), scale, dim, dof))
    assert abs(mean - task.mutual_information) < MC_SIGMAS * stderr
    # the task's own sampler, through the same scipy densities
    x, y = task.sample(MC_DRAWS, seed=11)
    mean, stderr = _mean_and_stderr(_student_pmi(np.hstack([x, y]), scale, dim, dof))
    assert abs(mean - task.mutual_information) < MC_SIGMAS * stderr


# ---------------------------------------------------------------- mixtures


def _bimodal_density(x, y, m, r):
    """0.5 N((-m,-m), C) + 0.5 N((m, m), C), C = [[1, r], [r, 1]], in plain arithmetic."""
    norm = 1.0 / (2.0 * math.pi * math.sqrt(1.0 - r * r))

    def component(mu):
        u, v = x - mu, y - mu
        return norm * math.exp(-(u * u - 2 * r * u * v + v * v) / (2 * (1 - r * r)))

    return 0.5 * component(-m) + 0.5 * component(m)


def _bimodal_marginal(t, m):
    return (
        0.5
        * (math.exp(-((t - m) ** 2) / 2) + math.exp(-((t + m) ** 2) / 2))
        / math.sqrt(2 * math.pi)
    )


def test_bimodal_monte_carlo_truth_equals_dblquad():
    m, r = 2.0, -0.5
    task = bimodal_task(m, r)

    def integrand(y, x):
        p = _bimodal_density(x, y, m, r)
        return p * math.log(p / (_bimodal_marginal(x, m) * _bimodal_marginal(y, m)))

    # the modes sit at +-2 with unit spread: [-11, 11]^2 leaves out mass below 1e-18
    value, error = integrate.dblquad(integrand, -11, 11, -11, 11, epsabs=1e-9, epsrel=1e-9)
    assert error < 1e-6
    assert abs(task.mutual_information - value) < MC_SIGMAS * task.truth_stderr
    assert 0 < task.truth_stderr < 0.003  # 200,000 draws


def _x_mixture_by_quadrature(dim, rho):
    """I of the X mixture by a 2-d integral (derivation below), independent of sampling.

    With s2 = 1 - rho^2 and S = x.y, log p(x,y) - log p(x) - log p(y) =
    log cosh(rho S / s2) - rho^2 (|x|^2 + |y|^2) / (2 s2) + ... whose expectation reduces to
    I = E[log cosh(rho S / s2)] - d rho^2 / s2 - (d / 2) log s2, where (for the "+" component;
    log cosh is even, so the "-" one gives the same) |x| = r has the chi_d density and
    S | r ~ N(rho r^2, s2 r^2).
    """
    s2 = 1.0 - rho * rho
    log_chi_norm = (dim / 2 - 1) * math.log(2) + math.lgamma(dim / 2)

    def logcosh(u):
        u = abs(u)
        return u + math.log1p(math.exp(-2 * u)) - math.log(2)

    def integrand(xi, r):
        chi = math.exp((dim - 1) * math.log(r) - r * r / 2 - log_chi_norm) if r > 0 else 0.0
        phi = math.exp(-xi * xi / 2) / math.sqrt(2 * math.pi)
        return chi * phi * logcosh(rho * (rho * r * r + math.sqrt(s2) * r * xi) / s2)

    value, error = integrate.dblquad(integrand, 0, 12, -12, 12, epsabs=1e-9, epsrel=1e-9)
    assert error < 1e-6
    return value - dim * rho * rho / s2 - dim / 2 * math.log(s2)


@pytest.mark.parametrize(("dim", "rho"), [(1, 0.9), (5, 0.7)])
def test_x_mixture_monte_carlo_truth_equals_quadrature(dim, rho):
    task = x_mixture_task(dim, rho)
    assert abs(task.mutual_information - _x_mixture_by_quadrature(dim, rho)) < (
        MC_SIGMAS * task.truth_stderr
    )


def test_mixture_log_densities_equal_scipy():
    rng = np.random.default_rng(5)
    weights = np.array([0.2, 0.3, 0.5])
    means = rng.standard_normal((3, 4))
    factors = rng.standard_normal((3, 4, 4))
    covariances = factors @ factors.transpose(0, 2, 1) + np.eye(4)
    mixture = GaussianMixture(weights, means, covariances)
    z = 2 * rng.standard_normal((50, 4))
    expected = np.log(
        sum(
            w * stats.multivariate_normal(mu, c).pdf(z)
            for w, mu, c in zip(weights, means, covariances, strict=True)
        )
    )
    np.testing.assert_allclose(mixture.logpdf(z), expected, rtol=1e-10, atol=1e-12)
    marginal = sum(
        w * stats.multivariate_normal(mu[1:3], c[1:3, 1:3]).pdf(z[:, 1:3])
        for w, mu, c in zip(weights, means, covariances, strict=True)
    )
    np.testing.assert_allclose(
        mixture.marginal(1, 3).logpdf(z[:, 1:3]), np.log(marginal), rtol=1e-10
    )


def test_monte_carlo_truth_is_deterministic_and_its_stderr_is_honest():
    task = x_mixture_task(1, 0.9)
    assert task.mutual_information == x_mixture_task(1, 0.9).mutual_information  # fixed seed
    # another seed: the difference of two independent estimates has stderr sqrt(2) se
    mixture = GaussianMixture(
        np.array([0.5, 0.5]),
        np.zeros((2, 2)),
        np.array([[[1, 0.9], [0.9, 1]], [[1, -0.9], [-0.9, 1]]]),
    )
    other, stderr = monte_carlo_mutual_information(mixture, 1, draws=TRUTH_DRAWS, seed=1)
    assert abs(other - task.mutual_information) < MC_SIGMAS * math.sqrt(2) * stderr
    assert stderr == pytest.approx(task.truth_stderr, rel=0.05)  # same spread of the terms


# ---------------------------------------------------------------- batch channels


# The four channels of issue 14's brief, with the truths it states (rounded to 3 decimals).
BRIEF_CHANNELS = [
    ((2, 5, 5, 0.5), 1.863),
    ((5, 3, 10, 0.5), 1.346),
    ((10, 2, 10, 0.3), 1.477),
    ((10, 5, 10, 0.5), 1.145),
]


@pytest.mark.parametrize(("channel", "truth"), BRIEF_CHANNELS)
def test_batch_truths_equal_the_brief_and_the_joint_covariance(channel, truth):
    task = batch_task(*channel)
    assert round(task.mutual_information, 3) == truth
    joint = GaussianBatchChannel(*channel, seed=0).joint_covariance()
    b, dim_x = channel[0], channel[1]
    assert task.mutual_information == pytest.approx(
        gaussian_mutual_information(joint, b * dim_x), rel=1e-10
    )


@pytest.mark.parametrize("channel", [c for c, _ in BRIEF_CHANNELS[:2]])
def test_batch_sampler_layout_matches_the_joint_covariance(channel):
    """x (n, B, d_x) flattened row-major is (x_1, ..., x_B): the layout of the covariance."""
    task = batch_task(*channel)
    joint = GaussianBatchChannel(*channel, seed=0).joint_covariance()
    x, y = task.sample(MC_DRAWS, seed=2)
    z = np.hstack([x.reshape(MC_DRAWS, -1), y])
    mean, stderr = _mean_and_stderr(_gaussian_pmi(z, joint, task.dim_x))
    assert abs(mean - task.mutual_information) < MC_SIGMAS * stderr


def test_every_suite_truth_is_a_finite_value_with_a_stated_error():
    for task in DEFAULT_SUITE:
        assert math.isfinite(task.mutual_information)
        assert (task.truth_stderr > 0) == (task.family == "mixture"), task.name
