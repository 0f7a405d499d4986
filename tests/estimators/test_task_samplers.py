"""Samplers of estimators.tasks: shapes, seeding, marginals, invertible maps, bad inputs.

KS tests use the level 1e-3 (``pvalue > 1e-3``) on fixed seeds: a correct sampler fails
with probability 1e-3 per test and seed, and the seeds are fixed, so a pass is stable;
a wrong marginal at n = 5,000 gives p-values far below it (e.g. a t with 2 instead of 1
degree of freedom: p = 6e-14 on the seed below).
"""

import math
import re

import numpy as np
import pytest
from scipy import stats

from pruneleak.estimators.tasks import FAMILIES, MITask
from pruneleak.estimators.tasks.batch import batch_task
from pruneleak.estimators.tasks.gaussian import (
    dense_normal_task,
    equicorrelated_covariance,
    normal_1v1_task,
    paired_covariance,
    sparse_normal_task,
)
from pruneleak.estimators.tasks.mixture import GaussianMixture, bimodal_task, x_mixture_task
from pruneleak.estimators.tasks.student import student_t_correction, student_task
from pruneleak.estimators.tasks.suite import DEFAULT_SUITE, get_task, task_names
from pruneleak.estimators.tasks.transformed import (
    TRANSFORMS,
    half_cube,
    half_cube_inverse,
    spiral,
    spiral_inverse,
    transformed_task,
)

KS_LEVEL = 1e-3  # module docstring
N = 5_000


@pytest.mark.parametrize("task", DEFAULT_SUITE, ids=lambda t: t.name)
def test_shapes_dtype_and_seeding(task):
    x, y = task.sample(64, seed=7)
    assert x.shape == (64, *task.x_shape) and y.shape == (64, *task.y_shape)
    assert x.dtype == y.dtype == np.float64
    assert np.all(np.isfinite(x)) and np.all(np.isfinite(y))
    x2, y2 = task.sample(64, seed=7)
    np.testing.assert_array_equal(x, x2)
    np.testing.assert_array_equal(y, y2)
    x3, y3 = task.sample(64, seed=8)
    assert not np.array_equal(x, x3) and not np.array_equal(y, y3)
    one_x, one_y = task.sample(1, seed=0)
    assert one_x.shape == (1, *task.x_shape) and one_y.shape == (1, *task.y_shape)


def test_the_suite_mixes_every_family_within_reach_of_a_neural_bound():
    assert 18 <= len(DEFAULT_SUITE) <= 22
    families = [task.family for task in DEFAULT_SUITE]
    assert set(families) == set(FAMILIES)
    assert families.count("batch") == 4
    assert sum(task.dim_x == task.dim_y == 25 for task in DEFAULT_SUITE) >= 3
    assert sum(task.family == "student" or "student" in task.name for task in DEFAULT_SUITE) >= 4
    for task in DEFAULT_SUITE:
        assert 0.2 <= task.mutual_information <= 2.5, task.name
    assert task_names() == tuple(task.name for task in DEFAULT_SUITE)
    assert len(set(task_names())) == len(DEFAULT_SUITE)
    for name in task_names():
        assert get_task(name).name == name


# ---------------------------------------------------------------- marginals


def test_normcdf_task_has_uniform_marginals():
    task = get_task("normcdf-2pair-25x25")
    x, y = task.sample(N, seed=0)
    assert x.min() > 0 and x.max() < 1
    for column in (x[:, 0], x[:, 24], y[:, 1], y[:, 13]):
        assert stats.kstest(column, "uniform").pvalue > KS_LEVEL


@pytest.mark.parametrize("dof", [1, 2, 3])
def test_student_sampler_marginal_is_a_t_distribution(dof):
    x, y = student_task(2, dof).sample(N, seed=1)
    for column in (x[:, 0], y[:, 1]):
        assert stats.kstest(column, stats.t(dof).cdf).pvalue > KS_LEVEL
    if dof == 1:  # the test has the power to see 1 against 2 degrees at this size
        assert stats.kstest(x[:, 0], stats.t(2).cdf).pvalue < KS_LEVEL


def test_student_identity_is_uncorrelated_in_rank_yet_dependent_in_magnitude():
    x, y = student_task(1, 3).sample(N, seed=2)
    assert abs(stats.spearmanr(x[:, 0], y[:, 0]).statistic) < 4 / math.sqrt(N)
    # the shared scale: |X| and |Y| are positively rank-correlated
    assert stats.spearmanr(abs(x[:, 0]), abs(y[:, 0])).statistic > 0.05


def test_x_mixture_has_normal_marginals_and_no_correlation():
    x, y = x_mixture_task(5, 0.7).sample(N, seed=3)
    for column in (x[:, 0], y[:, 4]):
        assert stats.kstest(column, "norm").pvalue > KS_LEVEL
    # correlation of N pairs with true correlation 0: standard error 1 / sqrt(N)
    assert abs(np.corrcoef(x[:, 0], y[:, 0])[0, 1]) < 4 / math.sqrt(N)
    # yet |y_0| grows with |x_0|: the dependence a correlation misses
    assert np.corrcoef(abs(x[:, 0]), abs(y[:, 0]))[0, 1] > 0.3


def test_bimodal_mixture_marginal_is_the_two_mode_mixture():
    x, _ = bimodal_task(2.0, -0.5).sample(N, seed=4)

    def cdf(t):
        return 0.5 * (stats.norm.cdf(t - 2) + stats.norm.cdf(t + 2))

    assert stats.kstest(x[:, 0], cdf).pvalue > KS_LEVEL


# ---------------------------------------------------------------- invertible maps


BASES = {
    "halfcube-1v1": normal_1v1_task(),
    "halfcube-dense-25x25": dense_normal_task(25),
    "asinh-student-1v1-dof1": student_task(1, 1),
    "asinh-student-5x5-dof2": student_task(5, 2),
    "normcdf-2pair-25x25": sparse_normal_task(25),
    "spiral-dense-5x5": dense_normal_task(5),
}


@pytest.mark.parametrize("name", sorted(BASES))
def test_transformed_task_inverts_to_its_base_samples(name):
    """The truth of a transformed task is its base's because the map is invertible: the
    inverse of the task's samples gives back the base's samples of the same seed."""
    task, base = get_task(name), BASES[name]
    assert task.mutual_information == base.mutual_information
    inverse = TRANSFORMS[name.split("-")[0]].inverse
    x, y = task.sample(N, seed=5)
    bx, by = base.sample(N, seed=5)
    assert not np.allclose(x, bx)  # the map does something
    np.testing.assert_allclose(inverse(x), bx, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(inverse(y), by, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_each_map_is_a_bijection_on_its_range(name):
    """forward(inverse(w)) = w as well, on points of the range (not only on samples)."""
    spec = TRANSFORMS[name]
    rng = np.random.default_rng(6)
    w = (
        rng.uniform(0.001, 0.999, (200, 4))
        if name == "normcdf"
        else 3 * rng.standard_normal((200, 4))
    )
    np.testing.assert_allclose(spec.forward(spec.inverse(w)), w, rtol=1e-9, atol=1e-12)
    v = rng.standard_normal((200, 4))
    np.testing.assert_allclose(spec.inverse(spec.forward(v)), v, rtol=1e-9, atol=1e-12)


def test_half_cube_and_spiral_by_hand():
    np.testing.assert_array_equal(half_cube(np.array([-4.0, 1.0, 9.0])), [-8.0, 1.0, 27.0])
    np.testing.assert_allclose(half_cube_inverse(np.array([-8.0, 27.0])), [-4.0, 9.0])
    v = np.array([[3.0, 4.0, 2.0]])  # norm sqrt(29); the third coordinate is left as is
    angle = 0.5 * math.sqrt(29.0)
    expected = [
        [3 * math.cos(angle) - 4 * math.sin(angle), 3 * math.sin(angle) + 4 * math.cos(angle), 2.0]
    ]
    np.testing.assert_allclose(spiral(v, speed=0.5), expected, rtol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(spiral(v, 0.5)), np.linalg.norm(v), rtol=1e-14)
    np.testing.assert_allclose(spiral_inverse(spiral(v, 0.5), 0.5), v, rtol=1e-14)


# ---------------------------------------------------------------- bad inputs


def _toy_sampler(n, seed):
    return np.zeros((n, 1)), np.zeros((n, 1))


TASK = get_task("normal-1v1")
BAD_CALLS = [
    ("n0", lambda: TASK.sample(0), "'n_samples'"),
    ("n-negative", lambda: TASK.sample(-3, seed=0), "'n_samples'"),
    ("n-float", lambda: TASK.sample(2.5), "'n_samples'"),
    ("seed-negative", lambda: TASK.sample(10, seed=-1), "'seed'"),
    ("batch-n0", lambda: get_task("batch-B2-dx5-dg5-s0.5").sample(0), "'n_samples'"),
    ("unknown-task", lambda: get_task("normal-3v3"), "'name'"),
    ("task-not-a-string", lambda: get_task(None), "'name'"),
    ("dense-dim0", lambda: dense_normal_task(0), "'dim_x'"),
    ("dense-correlation", lambda: equicorrelated_covariance(2, 2, -0.5), "'correlation'"),
    ("pairs-too-many", lambda: paired_covariance(2, 2, 3, 0.5), "'n_pairs'"),
    ("student-dof0", lambda: student_task(2, 0), "'dof'"),
    ("correction-dim0", lambda: student_t_correction(1, 0, 1), "'dim_x'"),
    ("transform-unknown", lambda: transformed_task(TASK, "cube"), "'transform'"),
    ("transform-of-batch", lambda: transformed_task(batch_task(2, 5, 5, 0.5), "asinh"), "'base'"),
    ("spiral-of-1v1", lambda: transformed_task(TASK, "spiral"), "'base'"),
    ("batch-noise0", lambda: batch_task(2, 5, 5, 0.0), "'noise_std'"),
    ("x-mixture-rho1", lambda: x_mixture_task(2, 1.0), "'correlation'"),
    (
        "mixture-weights",
        lambda: GaussianMixture(np.array([0.5, 0.6]), np.zeros((2, 1)), np.ones((2, 1, 1))),
        "'weights'",
    ),
    ("task-family", lambda: MITask("t", "cauchy", (1,), (1,), 0.1, 0.0, _toy_sampler), "'family'"),
    (
        "task-negative-truth",
        lambda: MITask("t", "normal", (1,), (1,), -0.1, 0.0, _toy_sampler),
        "'mutual_information'",
    ),
    (
        "task-shape",
        lambda: MITask("t", "normal", (0,), (1,), 0.1, 0.0, _toy_sampler),
        "'x_shape[0]'",
    ),
]


@pytest.mark.parametrize(
    ("call", "name"), [c[1:] for c in BAD_CALLS], ids=[c[0] for c in BAD_CALLS]
)
def test_bad_inputs_raise_value_error_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=re.escape(name)):
        call()


def test_covariance_helpers_are_symmetric_with_unit_diagonal():
    for cov in (equicorrelated_covariance(3, 4, 0.3), paired_covariance(4, 3, 2, -0.7)):
        np.testing.assert_array_equal(cov, cov.T)
        np.testing.assert_array_equal(np.diag(cov), 1.0)
