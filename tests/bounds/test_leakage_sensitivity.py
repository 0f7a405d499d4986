"""bounds.leakage.batch_sensitivity: the diameter of the batch means against brute force.

Reference: every pair of B-subsets, the squared distance of their means in exact rational
arithmetic (``Fraction``), so the comparisons "bound >= diameter" need no tolerance.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from pruneleak.bounds import leakage
from pruneleak.bounds.leakage import reconstruction


def _squared_diameter(releases, b) -> Fraction:
    """max over pairs of b-subsets S != S' of ||mean(r_S) - mean(r_S')||^2, exactly."""
    rows = [[Fraction(float(x)) for x in row] for row in np.asarray(releases)]
    sums = [
        [sum(col) for col in zip(*(rows[i] for i in members), strict=True)]
        for members in itertools.combinations(range(len(rows)), b)
    ]
    best = max(
        sum((x - y) ** 2 for x, y in zip(p, q, strict=True))
        for p, q in itertools.combinations(sums, 2)
    )
    return best / b**2


def _random(seed, m, k):
    return np.random.default_rng(seed).normal(size=(m, k))


def _collinear(seed, m, k):
    rng = np.random.default_rng(seed)
    return np.outer(rng.normal(size=m), rng.normal(size=k)) + 3.0


def _symmetric_collinear(seed, m, k):
    t = np.random.default_rng(seed).normal(size=m // 2)
    line = np.concatenate([t, -t, [0.0] * (m % 2)])
    return np.outer(line, np.ones(k))  # split at the mean: T_2q is the diameter


def _orthogonal(seed, m, k):
    return 2.5 * np.eye(m)  # equal norms: sqrt(2 q lambda_max) / B is the diameter


def _one_outlier(seed, m, k):
    releases = 0.01 * np.random.default_rng(seed).normal(size=(m, k))
    releases[seed % m] += 40.0
    return releases


def _far_from_the_origin(seed, m, k):
    return 1e6 + _random(seed, m, k)  # the rows are centred before any Gram matrix


GEOMETRIES = {
    "random": _random,
    "collinear": _collinear,
    "symmetric collinear": _symmetric_collinear,
    "orthogonal": _orthogonal,
    "one outlier": _one_outlier,
    "far from the origin": _far_from_the_origin,
}
CASES = [
    (name, seed, m, b)
    for name in GEOMETRIES
    for seed, (m, b) in enumerate([(6, 2), (7, 3), (8, 2), (8, 4), (9, 3)])
]


@pytest.mark.parametrize(("name", "seed", "m", "b"), CASES)
def test_exact_diameter_against_all_pairs_of_subsets(name, seed, m, b):
    releases = GEOMETRIES[name](seed, m, 3)
    res = leakage.batch_sensitivity(releases, b)
    assert res.method == "exact" and type(res.value) is float
    # The largest pair is measured as a sum of q row differences: a few roundings of the
    # value itself (relative 1e-15 each), far below 1e-13.
    expected = math.sqrt(_squared_diameter(releases, b))
    assert res.value == pytest.approx(expected, rel=1e-13, abs=0)


@pytest.mark.parametrize(("name", "seed", "m", "b"), CASES)
def test_bound_is_above_the_diameter_and_below_the_pairwise_distance(name, seed, m, b):
    releases = GEOMETRIES[name](seed, m, 3)
    res = leakage.batch_sensitivity(releases, b, max_enumerated=0)
    assert res.method == "bound"
    assert Fraction(res.value) ** 2 >= _squared_diameter(releases, b)  # exact, no tolerance
    assert res.value <= leakage.max_pairwise_distance(releases)


@pytest.mark.parametrize(
    ("seed", "m", "b", "scale", "offset"),
    [(0, 6, 2, 2.5, 0.0), (43, 7, 3, 2.5e5, 3e3), (53, 8, 3, 2.5e5, 3e3), (57, 6, 3, 2.5e5, 2e3)],
)
def test_bound_keeps_its_rounding_margin_on_rotated_orthogonal_sets(seed, m, b, scale, offset):
    # Rows of a random orthogonal matrix: sqrt(2 q lambda_max) / B is the diameter up to
    # rounding, and for these draws the computed lambda_max without its margin gives a value
    # below the exact diameter (found by a search over 60 seeds).
    rotation, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(m, m)))
    releases = scale * rotation + offset
    res = leakage.batch_sensitivity(releases, b, max_enumerated=0)
    assert Fraction(res.value) ** 2 >= _squared_diameter(releases, b)


@pytest.mark.parametrize("scale", [1e-300, 1e-150, 1e150, 1e300])
def test_bound_holds_at_the_extremes_of_the_float_range(scale):
    releases = _random(5, 7, 3) * scale
    res = leakage.batch_sensitivity(releases, 3, max_enumerated=0)
    assert Fraction(res.value) ** 2 >= _squared_diameter(releases, 3)
    exact = leakage.batch_sensitivity(releases, 3).value
    # the squares' ratio, in exact arithmetic (the squares themselves overflow at 1e300)
    ratio = float(Fraction(exact) ** 2 / _squared_diameter(releases, 3))
    assert ratio == pytest.approx(1.0, rel=2e-13)


def test_bound_sees_tiny_differences_beside_huge_entries():
    # Scaled by the largest entry, the second column is below the subnormal range.
    releases = np.array([[1e300, 1e-300], [1e300, 3e-300], [1e300, 2e-300], [1e300, 0.0]])
    res = leakage.batch_sensitivity(releases, 2, max_enumerated=0)
    assert Fraction(res.value) ** 2 >= _squared_diameter(releases, 2)
    assert res.value <= leakage.max_pairwise_distance(releases)


@pytest.mark.parametrize(
    ("name", "b", "tight"),
    [("orthogonal", 3, "spectral"), ("symmetric collinear", 3, "outer"), ("one outlier", 4, "")],
)
def test_bound_is_tight_where_one_of_its_terms_is(name, b, tight):
    # Orthogonal equal norms: sqrt(2 q lambda_max) / B attains the diameter; a collinear set
    # split at its mean: the sum of the 2q largest distances to the mean does. One outlier:
    # only one member can differ, so D_B ~ outlier distance / B, far below Delta_1.
    releases = GEOMETRIES[name](0, 10, 10)
    exact = leakage.batch_sensitivity(releases, b).value
    bound = leakage.batch_sensitivity(releases, b, max_enumerated=0).value
    pairwise = leakage.max_pairwise_distance(releases)
    if tight:  # the rounding margins only: relative ~1e-12 at M = k = 10
        assert bound == pytest.approx(exact, rel=1e-11)
    else:
        assert exact <= bound < 1.1 * exact < 0.3 * pairwise


def test_batch_of_one_is_max_pairwise_distance_and_edge_cases_are_exact():
    releases = _random(1, 7, 4) * 1e3
    assert leakage.batch_sensitivity(releases, 1).value == leakage.max_pairwise_distance(releases)
    assert leakage.batch_sensitivity(releases, 7) == leakage.BatchSensitivity(0.0, "exact")
    same = leakage.batch_sensitivity(np.ones((6, 2)), 3, max_enumerated=0)
    assert same == leakage.BatchSensitivity(0.0, "exact")
    # B = M - 1: the subsets are complements of one candidate each, D = Delta_1 / B.
    res = leakage.batch_sensitivity(releases, 6, max_enumerated=0)
    assert res.method == "exact"
    assert res.value == pytest.approx(math.sqrt(_squared_diameter(releases, 6)), rel=1e-13)


def test_complements_give_the_same_differences():
    # B and M - B subsets: mean differences scale by (M - B) / B (sum of S = total - sum of S^c).
    releases = _random(2, 8, 3)
    for b in (2, 3):
        small = leakage.batch_sensitivity(releases, b).value
        large = leakage.batch_sensitivity(releases, 8 - b).value
        assert large == pytest.approx(small * b / (8 - b), rel=1e-13)


def test_blocks_of_subsets_give_the_same_search(monkeypatch):
    releases = _random(3, 9, 2)
    whole = leakage.batch_sensitivity(releases, 3)
    monkeypatch.setattr(reconstruction, "_BLOCK_FLOATS", 200)  # 2 subsets per block of 84
    assert leakage.batch_sensitivity(releases, 3) == whole


def test_the_sensitivity_bounds_the_bayes_success_of_naming_the_batch():
    # Hayes et al.: success <= Phi(Phi^-1(1/N) + D_B / s) for the uniform prior on batches;
    # here D_B is well below Delta_1, so the bound is much smaller than with Delta_1.
    releases = _random(4, 7, 3)
    s, b = 0.8, 3
    res = leakage.batch_leakage(releases, s, b, samples=4000, seed=1)
    n = math.comb(7, b)
    d_b = leakage.batch_sensitivity(releases, b).value
    bound = leakage.gaussian_mechanism_success_bound(n, d_b, s)
    assert res.bayes_success_ci[0] <= bound
    assert bound < leakage.gaussian_mechanism_success_bound(n, 2 * d_b, s)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"batch_size": 0}, r"'batch_size' parameter of batch_sensitivity must be in \[1, 3\]"),
        ({"batch_size": 4}, r"'batch_size' parameter of batch_sensitivity must be in \[1, 3\]"),
        ({"max_enumerated": -1}, r"'max_enumerated' parameter of batch_sensitivity must be in"),
        ({"releases": [[0.0], [np.nan], [1.0]]}, "'releases' parameter of batch_sensitivity"),
        ({"releases": [[1.7e308], [-1.7e308], [0.0]]}, "'releases' parameter of batch_sensitiv"),
    ],
)
def test_bad_arguments_name_the_parameter(kwargs, message):
    arguments = {"releases": [[0.0], [1.0], [3.0]], "batch_size": 2, **kwargs}
    with pytest.raises(ValueError, match=message):
        leakage.batch_sensitivity(
            arguments.pop("releases"), arguments.pop("batch_size"), **arguments
        )
