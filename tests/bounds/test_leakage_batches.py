"""bounds.leakage.batch_leakage: against explicit subset means, hand values and limits."""

from __future__ import annotations

import itertools
import math
import tracemalloc
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from scipy import special, stats

from pruneleak.bounds import leakage
from pruneleak.bounds.leakage import batches as batches_module


def _subset_means(releases, b):
    """The explicit (N, k) matrix of batch means, one row per b-subset (the slow route)."""
    return np.array(
        [releases[list(c)].mean(axis=0) for c in itertools.combinations(range(len(releases)), b)]
    )


def _overlap(a, b):
    return a[0] <= b[1] and b[0] <= a[1]


# --- B = 1 and trivial cases -----------------------------------------------------------


@pytest.mark.parametrize(("m", "s"), [(6, 0.7), (6, 0.0), (2, 1.3)])
def test_batch_of_one_is_exact_leakage(m, s):
    releases = np.random.default_rng(m).normal(size=(m, 3))
    one = leakage.exact_leakage(releases, s, samples=300, seed=4)
    res = leakage.batch_leakage(releases, s, 1, samples=300, seed=4)
    assert (res.bits, res.ci_bits, res.bayes_success, res.exact) == (
        one.bits,
        one.ci_bits,
        one.bayes_success,
        one.exact,
    )
    assert res.method == ("exact" if one.exact else "monte_carlo")
    assert (res.secrets, res.batch_size, res.candidates) == (m, 1, m)


def test_whole_set_and_equal_releases_leak_nothing():
    releases = np.random.default_rng(0).normal(size=(5, 2))
    full = leakage.batch_leakage(releases, 1.0, 5)
    assert (full.bits, full.secrets, full.exact, full.bayes_success) == (0.0, 1, True, 1.0)
    same = leakage.batch_leakage(np.tile([2.0, -1.0], (6, 1)), 0.5, 3)
    assert (same.bits, same.ci_bits, same.exact, same.secrets) == (0.0, (0.0, 0.0), True, 20)
    assert same.bayes_success == pytest.approx(1 / 20, abs=1e-15)
    # Huge N: still exactly 0 (no enumeration needed), success 1/N.
    huge = leakage.batch_leakage(np.ones((1797, 3)), 0.0, 64)
    assert huge.bits == 0.0 and huge.secrets == math.comb(1797, 64)


# --- noiseless: hand-computed entropies ------------------------------------------------


def test_noiseless_coinciding_means_in_one_dimension():
    # Pairs of 0..4: sums 1, 2, 3, 4, 3, 4, 5, 5, 6, 7 -> groups 1,1,2,2,2,1,1 of N = 10.
    # H = 4 (0.1 log2 10) + 3 (0.2 log2 5) = 1.328771 + 1.393157 = 2.721928; success 7/10.
    res = leakage.batch_leakage(np.arange(5.0)[:, None], 0.0, 2)
    assert res.method == "exact" and res.exact and res.samples == 0
    assert res.bits == pytest.approx(0.4 * math.log2(10) + 0.6 * math.log2(5), abs=1e-14)
    assert res.bits == pytest.approx(2.721928, abs=1e-6)
    assert res.bayes_success == pytest.approx(0.7, abs=1e-15)


def test_noiseless_ties_of_quantised_releases_and_of_equal_rows():
    # r1 + r4 = r2 + r3 with r = 0.25, 0.5, 1.25, 1.5 (dyadic: summed exactly). Triples of
    # five points add a fifth value 3.0 to every triple with index 4 ... hand count instead:
    # pairs of (0.25, 0.5, 1.25, 1.5): sums 0.75, 1.5, 1.75, 1.75, 2.0, 2.75 -> one tie.
    r = np.array([[0.25], [0.5], [1.25], [1.5]])
    res = leakage.batch_leakage(r, 0.0, 2)
    assert res.bits == pytest.approx(4 / 6 * math.log2(6) + 2 / 6 * math.log2(3), abs=1e-14)
    assert res.bayes_success == pytest.approx(5 / 6, abs=1e-15)
    # Rows a, a, b in 2-D, B = 2: {0,1} -> a, {0,2} and {1,2} -> (a+b)/2: H(1/3, 2/3).
    res = leakage.batch_leakage([[0.1, 3.0], [0.1, 3.0], [7.3, -2.0]], 0.0, 2)
    assert res.bits == pytest.approx(math.log2(3) - 2 / 3, abs=1e-14)
    assert res.bayes_success == pytest.approx(2 / 3, abs=1e-15)


def test_noiseless_ties_are_resolved_exactly_whatever_the_hash(monkeypatch):
    # Every hash key equal: the exact comparison alone must recover the groups.
    monkeypatch.setattr(batches_module, "_hash_weights", lambda k: np.zeros(k, dtype=np.int64))
    res = leakage.batch_leakage(np.arange(5.0)[:, None], 0.0, 2)
    assert res.bits == pytest.approx(0.4 * math.log2(10) + 0.6 * math.log2(5), abs=1e-14)
    releases = np.random.default_rng(2).normal(size=(9, 3))  # float route, no ties
    assert leakage.batch_leakage(releases, 0.0, 4).bits == math.log2(126)


def _slow_group_counts(releases, b, *, exact):
    """Sorted multiplicities of the b-subset sums, one subset at a time: exact rational sums
    (``exact=True``, what the integer route promises) or float64 sums in index order."""
    groups = Counter()
    for members in itertools.combinations(range(len(releases)), b):
        if exact:
            total = tuple(sum(Fraction(float(x)) for x in col) for col in releases[list(members)].T)
        else:
            acc = releases[members[0]].copy()
            for i in members[1:]:
                with np.errstate(over="ignore"):  # an overflowing float sum is inf
                    acc = acc + releases[i]
            total = tuple(float(x) + 0.0 for x in acc)
        groups[total] += 1
    return sorted(groups.values())


def _group_counts(releases, b):
    return sorted(batches_module._noiseless_group_counts(np.asarray(releases, float), b).tolist())


def _routes(releases, b):
    largest, smallest = batches_module._magnitude_range(np.asarray(releases, float))
    return batches_module._integer_exponent(largest, smallest, b) is not None


@pytest.mark.parametrize("b", [2, 3])
def test_noiseless_grouping_of_integer_releases_with_planted_coincidences(b):
    rng = np.random.default_rng(b)
    releases = rng.integers(-40, 40, size=(10, 3)).astype(float)
    releases[3] = releases[1] + releases[2] - releases[0]  # r0 + r3 = r1 + r2
    releases[7] = releases[4] + releases[5] + releases[6] - releases[8] - releases[9]
    assert _routes(releases, b)
    expected = _slow_group_counts(releases, b, exact=True)
    assert max(expected) > 1  # the planted ties are there
    assert _group_counts(releases, b) == expected


def test_noiseless_grouping_of_many_quantised_ties():
    # 4 levels in 2 dimensions: C(30, 3) = 4060 sums take few distinct values.
    releases = np.random.default_rng(3).integers(0, 4, size=(30, 2)) * 0.25
    expected = _slow_group_counts(releases, 3, exact=True)
    assert len(expected) < 100 and _group_counts(releases, 3) == expected


def test_noiseless_grouping_by_chunks_of_whole_hash_groups(monkeypatch):
    # Chunks of 7 // 2 = 3 sums: groups larger than a chunk and chunk ends inside groups.
    releases = np.random.default_rng(4).integers(0, 3, size=(9, 2)).astype(float)
    expected = _slow_group_counts(releases, 2, exact=True)
    assert max(expected) > 3
    monkeypatch.setattr(batches_module, "_CHUNK_FLOATS", 7)
    assert _group_counts(releases, 2) == expected


def test_noiseless_float_route_merges_sums_that_round_together():
    # 1e-30 widens the exponent range beyond int64: float route. 0.1 + 0.4 and 0.2 + 0.3 are
    # both the float 0.5, though the exact sums of these doubles differ; their keys (sums of
    # per-row hashes) differ in the last bits, so only the tolerance brings them together.
    releases = np.array([[0.1, 1e-30], [0.2, 1e-30], [0.3, 1e-30], [0.4, 1e-30], [0.7, 0.0]])
    assert not _routes(releases, 2)
    assert 0.1 + 0.4 == 0.2 + 0.3
    assert Fraction(0.1) + Fraction(0.4) != Fraction(0.2) + Fraction(0.3)
    expected = _slow_group_counts(releases, 2, exact=False)
    assert expected == [1] * 8 + [2]  # {0, 3} ~ {1, 2}; the other 8 pair sums differ
    assert _group_counts(releases, 2) == expected


@pytest.mark.parametrize("b", [2, 3])
def test_noiseless_float_route_against_index_order_sums(b):
    rng = np.random.default_rng(10 + b)
    releases = rng.normal(size=(11, 4)) * np.exp2(rng.integers(-80, 10, size=(11, 4)))
    releases[5] = releases[0] + releases[1] - releases[2]  # ties only where rounding agrees
    releases[6] = releases[0]  # equal rows: certain ties
    assert not _routes(releases, b)
    expected = _slow_group_counts(releases, b, exact=False)
    assert max(expected) > 1 and _group_counts(releases, b) == expected


def test_noiseless_sums_that_overflow_are_compared_as_floats():
    # b max|r| >= 2^1023: the slow route. 1.5e308 + 1.5e308 and 1.5e308 + 1e308 are both inf.
    releases = np.array([[1.5e308, 1.0], [1.5e308, 2.0], [1.0e308, 1.0], [-1e308, 3.0]])
    expected = _slow_group_counts(releases, 2, exact=False)
    assert expected == [1, 1, 1, 1, 2] and _group_counts(releases, 2) == expected


def test_noiseless_hash_sends_few_sums_to_the_exact_comparison(monkeypatch):
    # Quantised releases (multiples of 2^-2: 52 trailing zero bits in the int64 units of the
    # integer route) with no ties: the hash alone must separate the 4950 sums. A hash that
    # kept only a few random bits of each key would send many to the exact comparison.
    releases = np.random.default_rng(5).integers(-500, 500, size=(100, 6)) * 0.25
    assert _routes(releases, 2)
    compared = []
    original = batches_module._exact_group_counts
    monkeypatch.setattr(
        batches_module,
        "_exact_group_counts",
        lambda values, subsets: compared.append(subsets.shape[1]) or original(values, subsets),
    )
    assert _group_counts(releases, 2) == [1] * math.comb(100, 2)
    assert sum(compared) == 0


def test_exact_grouping_hashes_quantised_floats_apart(monkeypatch):
    # The slow route hashes the float sums' bit patterns; multiples of 2^-2 leave ~45 low
    # mantissa bits zero, which the mixing must spread: then the 4950 distinct sums are
    # formed once (to hash) and never again (no equal hashes to compare).
    releases = np.random.default_rng(6).integers(-500, 500, size=(100, 6)) * 0.25
    calls = []
    original = batches_module.subset_sums
    monkeypatch.setattr(
        batches_module,
        "subset_sums",
        lambda values, subsets: calls.append(1) or original(values, subsets),
    )
    counts = batches_module._exact_group_counts(releases, batches_module.all_subsets(100, 2))
    assert counts.tolist() == [1] * math.comb(100, 2) and len(calls) == 1


def test_noiseless_generic_releases_leak_log2_n():
    releases = np.random.default_rng(2).normal(size=(9, 3))
    res = leakage.batch_leakage(releases, 0.0, 4)
    assert (res.bits, res.bayes_success, res.secrets) == (math.log2(126), 1.0, 126)
    # Beyond the cap: the documented assumption, not exact.
    big = leakage.batch_leakage(releases, 0.0, 4, max_enumerated=100)
    assert big.method == "assumed_distinct" and not big.exact
    assert big.bits == pytest.approx(math.log2(126), abs=1e-15)
    with pytest.raises(ValueError, match="max_enumerated >= 126"):
        leakage.batch_leakage(np.vstack([releases[:8], releases[:1]]), 0.0, 4, max_enumerated=100)


# --- enumerated: against the explicit matrix of subset means ----------------------------


@pytest.mark.parametrize(("m", "b", "s"), [(7, 2, 0.8), (7, 3, 0.6), (7, 5, 0.5), (8, 4, 1.0)])
def test_enumerated_agrees_with_exact_leakage_on_the_subset_means(m, b, s):
    # Different route: build the (N, k) means explicitly and hand them to exact_leakage as N
    # candidates (its own Monte Carlo, distances through <y, r_j> of the means). B = 5 of 7
    # exercises the complement enumeration; (8, 4) the self-complementary middle.
    releases = np.random.default_rng(m * b).normal(size=(m, 3)) + 5.0
    means = _subset_means(releases, b)
    ref = leakage.exact_leakage(means, s, samples=40_000, seed=1, method="monte_carlo")
    res = leakage.batch_leakage(releases, s, b, samples=40_000, seed=2)
    assert res.method == "enumerated" and res.secrets == len(means) == math.comb(m, b)
    assert _overlap(res.ci_bits, ref.ci_bits)
    assert _overlap(res.bayes_success_ci, ref.bayes_success_ci)
    # Both standard errors are ~5e-3 bits here; 0.05 would flag a wrong formula.
    assert abs(res.bits - ref.bits) < 0.05


def test_gram_and_k_space_quadratic_terms_agree(monkeypatch):
    releases = np.random.default_rng(3).normal(size=(8, 4))
    base = leakage.batch_leakage(releases, 0.7, 3, samples=500, seed=5)
    monkeypatch.setattr(batches_module, "_GRAM_FLOATS", 0)
    other = leakage.batch_leakage(releases, 0.7, 3, samples=500, seed=5)
    assert other.bits == pytest.approx(base.bits, abs=1e-12)
    assert other.bayes_success == pytest.approx(base.bayes_success, abs=1e-12)


def test_blocked_log_sum_exp_equals_one_block(monkeypatch):
    # Same draws (one per chunk either way), subsets in one block vs blocks of 5.
    releases = np.random.default_rng(4).normal(size=(9, 2))
    n = math.comb(9, 3)
    monkeypatch.setattr(batches_module, "_CHUNK_FLOATS", n + 9 + 2)
    one = leakage.batch_leakage(releases, 0.5, 3, samples=50, seed=6)
    monkeypatch.setattr(batches_module, "_CHUNK_FLOATS", 5)
    blocked = leakage.batch_leakage(releases, 0.5, 3, samples=50, seed=6)
    assert blocked.bits == pytest.approx(one.bits, abs=1e-12)
    assert blocked.bayes_success == pytest.approx(one.bayes_success, abs=1e-12)


def test_small_noise_tends_to_log2_n_and_large_noise_to_zero():
    releases = np.random.default_rng(5).normal(size=(7, 4))
    means = _subset_means(releases, 3)
    gaps = np.linalg.norm(means[:, None] - means[None], axis=-1)[np.triu_indices(len(means), 1)]
    assert gaps.min() > 0.05  # so at s = 1e-4 the other logits trail by > 1e5: one-hot
    tiny = leakage.batch_leakage(releases, 1e-4, 3, samples=256)
    assert tiny.method == "enumerated"
    assert tiny.bits == pytest.approx(math.log2(35), abs=1e-12)
    assert tiny.bayes_success == pytest.approx(1.0, abs=1e-12)
    # Gaussian-channel bound at s = 1e3: tr(Cov of means) / (2 s^2 ln 2) < 1e-5 bits.
    huge = leakage.batch_leakage(releases, 1e3, 3, samples=256)
    assert leakage.gaussian_channel_bound_bits(means, 1e3) < 1e-5
    assert 0.0 <= huge.bits < 1e-5 and huge.ci_bits[0] == 0.0
    # The interval is the empirical Bernstein one (Maurer & Pontil 2009, Thm. 4): at zero
    # spread it is 7 R ln(2/delta) / (3 (n - 1)) wide, R = log2 35 bits, delta = 0.025.
    assert huge.ci_bits[1] == pytest.approx(
        huge.bits + 7 * math.log2(35) * math.log(80) / (3 * 255), abs=1e-6
    )


def test_enumeration_memory_is_bounded():
    # M = 600, B = 2: N = 179,700 subsets; one (draws, N) float array would be 1.4 MB per
    # draw. Peak stays around a few (N,)-sized arrays plus the index table.
    releases = np.random.default_rng(8).normal(size=(600, 5))
    tracemalloc.start()
    leakage.batch_leakage(releases, 1.0, 2, samples=64)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 64 * 2**20


# --- bracket ---------------------------------------------------------------------------


def test_bracket_contains_the_enumerated_value_and_narrows_with_more_negatives():
    releases = np.random.default_rng(6).normal(size=(8, 3))
    s, b = 0.6, 3  # N = 56
    enumerated = leakage.batch_leakage(releases, s, b, samples=20_000, seed=1)
    widths = []
    for k in (4, 32, 256):
        res = leakage.batch_leakage(
            releases, s, b, samples=4000, seed=2, max_enumerated=10, negatives=k
        )
        assert res.method == "bracket" and not res.exact and res.bayes_success is None
        lower, upper = res.bracket_bits
        assert res.ci_bits[0] <= lower <= res.bits <= upper <= res.ci_bits[1]
        assert res.ci_bits[0] <= enumerated.ci_bits[1]
        assert enumerated.ci_bits[0] <= res.ci_bits[1]
        # Bounds of the true value, each within its Monte Carlo error (~0.02 bits here).
        assert lower <= enumerated.bits + 0.05
        assert upper >= enumerated.bits - 0.05
        widths.append(upper - lower)
    assert widths[0] > widths[1] > widths[2]
    assert widths[2] < 0.1


def _bracket_reference(releases, s, b, negatives, draws, seed):
    """Means (bits) of the raw InfoNCE term log((K+1) p_0 / sum_j p_j) and of the leave-one-
    out term log(p_0 / (p_0 / N + (N - 1) / N mean_{S_k != S} p_k)), from the explicit
    (N, k) matrix of subset means and Euclidean distances (own draws)."""
    rng = np.random.default_rng(seed)
    means = _subset_means(releases, b)
    n = len(means)
    truth = rng.integers(n, size=draws)
    others = rng.integers(n, size=(draws, negatives))
    y = means[truth] + s * rng.standard_normal((draws, releases.shape[1]))
    everyone = np.concatenate([truth[:, None], others], axis=1)
    log_lik = -np.sum((y[:, None, :] - means[everyone]) ** 2, axis=2) / (2 * s * s)
    info_nce = math.log(negatives + 1) + log_lik[:, 0] - special.logsumexp(log_lik, axis=1)
    kept = others != truth[:, None]
    count = kept.sum(axis=1)
    total = np.sum(np.where(kept, np.exp(log_lik[:, 1:] - log_lik[:, :1]), 0.0), axis=1)
    ratio = 1 / n + (n - 1) / n * total / np.maximum(count, 1)  # p(y|S) -> 1 here
    loo = np.where(count > 0, -np.log(ratio), math.log(n))  # no other negative: log N
    return np.array([info_nce.mean(), loo.mean()]) / math.log(2), [
        info_nce.std() / math.log(2) / math.sqrt(draws),
        loo.std() / math.log(2) / math.sqrt(draws),
    ]


@pytest.mark.parametrize(("s", "negatives"), [(0.5, 3), (1.5, 8)])
def test_bracket_means_agree_with_the_raw_terms_on_explicit_means(s, negatives):
    # The bracket averages log(K+1) - H(w) (the InfoNCE term's expectation over which of the
    # K + 1 subsets is the true one) and the leave-one-out term with the true subset's share
    # kept: same expectations as the raw terms above, computed another way.
    releases = np.random.default_rng(11).normal(size=(6, 2))
    res = leakage.batch_leakage(
        releases, s, 2, samples=20_000, seed=3, max_enumerated=0, negatives=negatives
    )
    ref, se = _bracket_reference(releases, s, 2, negatives, draws=40_000, seed=4)
    # Both sides are Monte Carlo means (the code's of lower-variance terms): 5 of the
    # reference's standard errors, which bound the sum of both errors.
    assert abs(res.bracket_bits[0] - ref[0]) < 5 * se[0]
    assert abs(res.bracket_bits[1] - ref[1]) < 5 * se[1]


def test_bracket_limits_are_exact():
    # Huge noise: every likelihood is equal, both bounds are log((K+1)/(K+1)) = log(K/K) = 0.
    releases = np.random.default_rng(10).normal(size=(30, 4))
    flat = leakage.batch_leakage(releases, 1e6, 5, samples=100, negatives=4, max_enumerated=0)
    assert flat.method == "bracket"
    assert flat.bracket_bits[0] == pytest.approx(0.0, abs=1e-5)  # logit spread ~ 1e-6
    assert flat.bracket_bits[1] == pytest.approx(0.0, abs=1e-5)
    # Tiny noise, distinct means: InfoNCE reaches its ceiling log2(K+1) (a negative equal to
    # the truth has probability 4 / C(30, 5) per draw), the upper bound the entropy log2 N.
    sharp = leakage.batch_leakage(releases, 1e-3, 5, samples=100, negatives=7, max_enumerated=0)
    assert sharp.bracket_bits[0] == pytest.approx(3.0, abs=1e-6)
    assert sharp.bracket_bits[1] == pytest.approx(math.log2(math.comb(30, 5)), abs=1e-6)


@pytest.mark.parametrize(("m", "b"), [(5, 2), (6, 3), (8, 6)])
def test_random_subsets_are_uniform_over_subsets_and_elements(m, b):
    """Catches a non-uniform subset sampler (e.g. one subset or one element drawn 2:1):
    the bracket's truth and negatives, InfoNCE and leave-one-out assume uniform B-subsets.

    Both routes: Floyd's algorithm (B^2 <= 4M: (5, 2), (6, 3)) and the B smallest of M
    uniform keys ((8, 6), in two chunks of rows). 200,000 draws (fixed seed); a chi-square
    test of the C(M, B) subset counts and of the M element counts at level 1e-6 (the
    false-alarm rate of a correct sampler, each test). One subset twice as likely as the
    others (probability 2 / (C + 1) for C subsets, not 1 / C) moves its count tens of
    standard deviations at M = 5, B = 2 (36,364 against 20,000 +- 134)."""
    n = 200_000
    rng = np.random.default_rng(20240532)
    chunk = batches_module._CHUNK_FLOATS // m
    assert b * b <= 4 * m or chunk < n  # the keys route is run on more than one chunk
    subsets = batches_module._random_subsets(rng, m, b, n)
    assert subsets.shape == (n, b)
    assert subsets.min() >= 0 and subsets.max() < m
    assert (np.sort(subsets, axis=1)[:, 1:] != np.sort(subsets, axis=1)[:, :-1]).all()
    codes = np.bitwise_or.reduce(np.left_shift(1, subsets), axis=1)
    every = [sum(1 << i for i in s) for s in itertools.combinations(range(m), b)]
    counts = np.bincount(codes, minlength=1 << m)[every]
    assert counts.sum() == n  # every draw is one of the C(M, B) subsets
    assert stats.chisquare(counts).pvalue > 1e-6
    # Each element is in a uniform B-subset with probability B / M. The M counts are not
    # a multinomial (each draw adds B distinct elements): on the sum-zero deviations their
    # covariance is n (B / M)(M - B) / (M - 1) times the identity, so Pearson's statistic
    # is (M - B) / (M - 1) times a chi-square with M - 1 degrees of freedom.
    marginal = np.bincount(subsets.ravel(), minlength=m)
    expected = n * b / m
    statistic = ((marginal - expected) ** 2 / expected).sum() * (m - 1) / (m - b)
    assert stats.chi2.sf(statistic, m - 1) > 1e-6


def test_bracket_on_a_huge_number_of_batches():
    releases = np.random.default_rng(7).normal(size=(200, 6))
    m, b, s = 200, 10, 2.0
    res = leakage.batch_leakage(releases, s, b, samples=1000, negatives=63)
    assert res.secrets == math.comb(m, b) and res.method == "bracket"
    assert 0.0 <= res.ci_bits[0] <= res.bracket_bits[0] <= res.bracket_bits[1]
    assert res.ci_bits[1] <= math.log2(res.secrets)
    # The mean of a uniform B-subset has covariance Sigma (M - B) / (B (M - 1)) (finite
    # population correction), so the maximum-entropy bound applies to rescaled releases.
    factor = math.sqrt((m - b) / (b * (m - 1)))
    bound = leakage.gaussian_channel_bound_bits(releases * factor, s)
    assert res.ci_bits[0] <= bound


# --- ceiling and Fano for huge N ---------------------------------------------------------


def test_ceiling_without_replacement_is_log2_binomial():
    assert leakage.ceiling_bits(16, 3, replacement=False) == pytest.approx(math.log2(560))
    # C(1797, 2) = 1797 * 1796 / 2 = 1,613,706.
    assert leakage.ceiling_bits(1797, 2, replacement=False) == pytest.approx(
        math.log2(1_613_706), abs=1e-12
    )
    assert leakage.ceiling_bits(5, 5, replacement=False) == 0.0
    assert leakage.ceiling_bits(16, 3) == 12.0  # the default is unchanged
    with pytest.raises(
        ValueError, match=r"'batch_size' parameter of ceiling_bits must be in \[1, 4\]"
    ):
        leakage.ceiling_bits(4, 5, replacement=False)
    with pytest.raises(ValueError, match="'replacement' parameter of ceiling_bits"):
        leakage.ceiling_bits(4, 2, replacement="no")


def test_fano_takes_huge_numbers_of_candidates():
    n = math.comb(1797, 4)  # 433,141,345,690 ... any size works
    log2_n = (math.lgamma(1798) - math.lgamma(5) - math.lgamma(1794)) / math.log(2)
    assert leakage.fano_lower_bound_bits(n, 0.0) == pytest.approx(log2_n, abs=1e-9)
    # P_e = 1/2: log2 N - 1 - (1/2) log2(N - 1), and log2(N - 1) = log2 N to 1e-11.
    assert leakage.fano_lower_bound_bits(n, 0.5) == pytest.approx(log2_n / 2 - 1, abs=1e-9)
    huge = math.comb(1797, 64)
    assert leakage.fano_lower_bound_bits(huge, 0.0) == pytest.approx(math.log2(huge), rel=1e-15)
    upper = 1 - 0.025 ** (1 / 100)  # Clopper-Pearson upper limit at 0 errors of 100
    expected = (1 - upper) * math.log2(huge) - (
        -upper * math.log2(upper) - (1 - upper) * math.log2(1 - upper)
    )
    assert leakage.fano_lower_confidence_bits(huge, 0, 100) == pytest.approx(expected, rel=1e-12)


# --- validation ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"batch_size": 0}, r"'batch_size' parameter of batch_leakage must be in \[1, 4\]"),
        ({"batch_size": 5}, r"'batch_size' parameter of batch_leakage must be in \[1, 4\]"),
        ({"batch_size": 2.0}, "'batch_size' parameter of batch_leakage must be an integer"),
        ({"negatives": 0}, r"'negatives' parameter of batch_leakage must be in \[1, "),
        ({"negatives": 1.5}, "'negatives' parameter of batch_leakage must be an integer"),
        ({"max_enumerated": -1}, r"'max_enumerated' parameter of batch_leakage must be in \[0"),
        ({"noise_std": -1.0}, r"'noise_std' parameter of batch_leakage must be in \[0, inf\)"),
        ({"noise_std": 1e-300}, "'noise_std' parameter of batch_leakage is too small"),
        ({"samples": 1}, r"'samples' parameter of batch_leakage must be in \[2, "),
        ({"confidence": 0.0}, r"'confidence' parameter of batch_leakage must be in \(0, 1\)"),
        ({"seed": -2}, r"'seed' parameter of batch_leakage must be in \[0, inf\)"),
        ({"releases": [[0.0], [np.nan]]}, "'releases' parameter of batch_leakage must contain"),
    ],
)
def test_bad_arguments_name_the_parameter(kwargs, message):
    arguments = {"releases": [[0.0], [1.0], [2.0], [4.0]], "noise_std": 1.0, "batch_size": 2}
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=message):
        leakage.batch_leakage(
            arguments.pop("releases"),
            arguments.pop("noise_std"),
            arguments.pop("batch_size"),
            **arguments,
        )


def test_same_seed_same_numbers():
    releases = np.random.default_rng(9).normal(size=(6, 2))
    a = leakage.batch_leakage(releases, 1.0, 2, samples=100, seed=3)
    b = leakage.batch_leakage(releases, 1.0, 2, samples=100, seed=3)
    assert a == b and a.samples == 100 and a.noise_std == 1.0


@pytest.mark.parametrize("m", [3, 7, 1000, 1797])
def test_noiseless_distinct_releases_never_exceed_the_ceiling(m):
    # log2 M summed as M equal terms rounds above log2 M for some M (1797 did): the
    # "ceiling >= exact" order of every record must hold exactly, not up to rounding.
    releases = np.arange(m, dtype=float)[:, None]
    assert leakage.exact_leakage(releases, 0.0).bits == leakage.ceiling_bits(m)
    assert leakage.batch_leakage(releases, 0.0, 1).bits == leakage.ceiling_bits(m)
    two = leakage.batch_leakage(np.exp2(np.arange(min(m, 40)))[:, None], 0.0, 2)
    assert two.bits == leakage.ceiling_bits(min(m, 40), 2, replacement=False)
