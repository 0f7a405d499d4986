"""bounds.leakage.isometry: releases from their Gram matrix, against the releases themselves.

References are independent of the eigendecomposition: squared distances summed directly
over the coordinates of the releases, the exact leakage of the releases (quadrature for
two candidates, Monte Carlo otherwise) and ``np.unique`` on rows with exact repeats.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pruneleak.bounds import leakage


def _squared_distances(r: np.ndarray) -> np.ndarray:
    """``||r_i - r_j||^2`` summed over the coordinates: the obvious reference."""
    return ((r[:, None, :] - r[None, :, :]) ** 2).sum(axis=-1)


def _random(m: int, k: int, *, rank: int | None = None, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if rank is None:
        return rng.normal(size=(m, k))
    return rng.normal(size=(m, rank)) @ rng.normal(size=(rank, k)) + rng.normal(size=k)


@pytest.mark.parametrize(("rank", "expected_columns"), [(None, 29), (4, 4)])
def test_rows_have_the_distances_of_the_releases(rank, expected_columns):
    # M = 30, k = 500; full rank (the centred releases span M - 1 = 29 dimensions) and rank
    # 4 plus an offset (centred rank 4: the rank-deficient case, round-off eigenvalues must
    # be dropped). Entries of the Gram are ~500 (~1e4 with the offset); the documented
    # error, M eps max(K_ii, lambda_max), is below 1e-10 absolute against squared
    # distances of ~1e3: 1e-12 relative to the largest.
    r = _random(30, 500, rank=rank)
    f = leakage.releases_from_gram(r @ r.T)
    assert f.shape == (30, expected_columns) and f.dtype == np.float64
    expected = _squared_distances(r)
    np.testing.assert_allclose(_squared_distances(f), expected, rtol=0, atol=1e-12 * expected.max())
    np.testing.assert_allclose(f.sum(axis=0), 0.0, atol=1e-12 * np.abs(f).max())


def test_all_equal_releases_have_no_coordinates():
    r = np.tile(_random(1, 7), (5, 1))
    assert leakage.releases_from_gram(r @ r.T).shape == (5, 0)
    assert leakage.exact_leakage(leakage.releases_from_gram(r @ r.T), 0.3).bits == 0.0


@pytest.mark.parametrize("s", [0.3, 1.0, 5.0])
def test_two_candidates_leak_the_same_exactly(s):
    # M = 2 is exact (quadrature of the distance) on both sides; the distances agree to
    # ~1e-15 relative, so the bits and the Bayes success do to 1e-12.
    r = _random(2, 500, seed=1)
    ours = leakage.exact_leakage(leakage.releases_from_gram(r @ r.T), s * math.sqrt(500))
    dense = leakage.exact_leakage(r, s * math.sqrt(500))
    assert ours.exact and dense.exact
    assert ours.bits == pytest.approx(dense.bits, rel=1e-12)
    assert ours.bayes_success == pytest.approx(dense.bayes_success, rel=1e-12)


def _agree(ours, dense):
    """Two independent Monte Carlo estimates of one number (different noise draws: r <
    k coordinates) within 3 standard errors of their difference (the 95% half-widths
    are 1.96 standard errors). Deterministic seeds; a correct implementation fails this
    for 0.3% of seeds."""
    half_ours = (ours.ci_bits[1] - ours.ci_bits[0]) / 2
    half_dense = (dense.ci_bits[1] - dense.ci_bits[0]) / 2
    assert abs(ours.bits - dense.bits) <= 3 / 1.96 * math.hypot(half_ours, half_dense)


def test_many_candidates_leak_the_same_within_the_intervals():
    # M = 30 releases at noise where the leakage is far from both 0 and log2 30 = 4.9 bits
    # (about 2 bits for B = 1), one candidate or a pair (N = 435 subsets, enumerated).
    r = _random(30, 500, seed=2)
    f = leakage.releases_from_gram(r @ r.T)
    s = 12.0
    ours, dense = (leakage.exact_leakage(x, s, samples=4096, seed=3) for x in (f, r))
    assert 1.0 < dense.bits < 4.0
    _agree(ours, dense)
    ours, dense = (leakage.batch_leakage(x, s, 2, samples=1024, seed=3) for x in (f, r))
    assert ours.method == dense.method == "enumerated"
    _agree(ours, dense)


def _canonical(labels: np.ndarray) -> np.ndarray:
    """Labels renumbered in order of first occurrence (partitions compare equal)."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[inverse.ravel()]


def test_groups_are_those_of_the_exactly_equal_rows():
    # Nine distinct rows of very different norms (1, 1e-6 and 1e6), one of them a
    # neighbour of another at relative squared distance 1e-10 (far above the round-off
    # bound gram_rounding_rtol(50) = 2.4e-14, so distinct), repeated 1 to 4 times and
    # shuffled: the groups must be np.unique's.
    rng = np.random.default_rng(4)
    base = rng.normal(size=(9, 50)) * np.array([1, 1, 1e-6, 1e-6, 1e6, 1, 1, 1e-6, 1])[:, None]
    base[8] = base[0] * (1 + 1e-5)
    rows = np.repeat(np.arange(9), [1, 3, 2, 1, 4, 2, 1, 3, 2])
    r = base[rng.permutation(rows)]
    gram = r @ r.T
    labels = leakage.gram_groups(gram, rtol=leakage.gram_rounding_rtol(50))
    expected = _canonical(np.unique(r, axis=0, return_inverse=True)[1])
    np.testing.assert_array_equal(labels, expected)
    # Rows shared within a group (the first member's): the distances stay the releases'
    # (exact repeats have distance 0), and at s = 0 the exact leakage counts the groups.
    f = leakage.releases_from_gram(gram, groups=labels)
    expected = _squared_distances(r)
    np.testing.assert_allclose(_squared_distances(f), expected, rtol=0, atol=1e-12 * expected.max())
    for b in (1, 2):
        ours, dense = leakage.batch_leakage(f, 0.0, b), leakage.batch_leakage(r, 0.0, b)
        assert ours.exact and (ours.bits, ours.bayes_success) == (dense.bits, dense.bayes_success)


def test_a_chain_of_links_is_one_group():
    # Single linkage: 0 ~ 1 and 1 ~ 2 below the tolerance join 0 and 2, whose squared
    # distance (4e-6, relative to norms of 1) is above it.
    r = np.array([[1.0, 0.0], [1.0, 1e-3], [1.0, 2e-3], [0.0, 1.0]])
    assert leakage.gram_groups(r @ r.T, rtol=2e-6).tolist() == [0, 0, 0, 1]


def test_rounding_bound_is_four_gamma():
    u = 2.0**-53
    assert leakage.gram_rounding_rtol(1) == pytest.approx(4 * 4 * u / (1 - 4 * u), rel=1e-15)
    assert leakage.gram_rounding_rtol(10**6) > 4 * 10**6 * u


@pytest.mark.parametrize(
    ("gram", "kwargs", "message"),
    [
        (np.ones((2, 3)), {}, r"'gram' parameter of releases_from_gram must be a square"),
        (np.zeros((0, 0)), {}, r"'gram' .* square \(M, M\) matrix with M >= 1"),
        ([[1.0, np.nan], [np.nan, 1.0]], {}, "'gram' parameter .* finite"),
        ([[-1.0, 0.0], [0.0, 1.0]], {}, r"non-negative diagonal .* Got -1 at row 0"),
        ([[1.0, 0.5], [0.0, 1.0]], {}, r"symmetric, up to 1e-06 .* Got max \|K - K\^T\| = 0.5"),
        (
            [[0.0, 2.0], [2.0, 1.0]],
            {},
            "no entry larger than its largest diagonal entry 1 .* Got 2",
        ),
        ([[1, 1, -1], [1, 1, 1], [-1, 1, 1]], {}, "positive semi-definite .* eigenvalue -0.66"),
        (np.eye(2), {"rtol": 1.0}, r"'rtol' parameter of releases_from_gram must be in \[0, 1\)"),
        (np.eye(2), {"groups": [0]}, "'groups' parameter .* 2 integer labels"),
        (np.eye(2), {"groups": [0, 0.5]}, "'groups' parameter .* 2 integer labels"),
    ],
)
def test_bad_arguments_name_the_parameter(gram, kwargs, message):
    with pytest.raises(ValueError, match=message):
        leakage.releases_from_gram(gram, **kwargs)


def test_bad_arguments_of_the_groups_name_the_parameter():
    with pytest.raises(ValueError, match=r"'rtol' parameter of gram_groups must be in \[0, 1\)"):
        leakage.gram_groups(np.eye(2), rtol=-1e-3)
    with pytest.raises(ValueError, match="'gram' parameter of gram_groups must be symmetric"):
        leakage.gram_groups([[1.0, 0.1], [0.2, 1.0]], rtol=0.0)
    with pytest.raises(ValueError, match=r"'terms' parameter of gram_rounding_rtol .* Got 0"):
        leakage.gram_rounding_rtol(0)
