"""bounds.leakage.exact_leakage: against quadrature, closed forms, limits and a slow loop."""

from __future__ import annotations

import math
import tracemalloc

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, special, stats

from pruneleak.bounds import leakage
from pruneleak.bounds.leakage import _releases as releases_module
from pruneleak.bounds.leakage import exact as exact_module


def _bawgn_bits(a: float) -> float:
    """I = 1 - E log2(1 + exp(-L)), L ~ N(a^2/2, a^2): the information-density form.

    exact_leakage integrates the posterior-entropy form 1 - E h2(sigmoid(L)) instead, so
    the two agree only if both are right (Richardson & Urbanke 2008, Sec. 4.2).
    """
    mean, sd = a * a / 2, a

    def integrand(llr):
        return stats.norm.pdf(llr, mean, sd) * np.logaddexp(0.0, -llr) / math.log(2)

    lo, hi = mean - 40 * sd, mean + 40 * sd
    value = integrate.quad(integrand, lo, hi, points=[0.0, mean], limit=400, epsabs=1e-13)[0]
    return 1.0 - value


def _two_candidates(d: float, k: int = 5, seed: int = 0) -> np.ndarray:
    """Two releases at distance d in R^k, in a random direction, far from the origin."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=k)
    base = 10 * rng.normal(size=k)
    return np.stack([base, base + d * u / np.linalg.norm(u)])


def _hypercube(n: int, side: float) -> np.ndarray:
    """The 2^n vertices of a cube of the given side: n independent binary channels."""
    return side * np.array(list(np.ndindex(*(2,) * n)), dtype=float)


@pytest.mark.parametrize(("d", "s"), [(0.1, 1.0), (1.0, 1.0), (2.0, 0.7), (6.0, 1.0), (3.0, 0.1)])
def test_two_candidates_are_exact_and_match_the_binary_gaussian_channel(d, s):
    res = leakage.exact_leakage(_two_candidates(d), s)
    assert res.exact and res.samples == 0 and res.ci_bits == (res.bits, res.bits)
    # Two quadratures of different integrands, each to ~1e-13: 1e-6 is the bar.
    assert abs(res.bits - _bawgn_bits(d / s)) < 1e-6
    # Bayes success of two candidates: Phi(d / (2 s)) (MAP picks the nearer release).
    assert abs(res.bayes_success - stats.norm.cdf(d / (2 * s))) < 1e-12


def test_binary_channel_against_mpmath():
    a = 1.5
    mpmath.mp.dps = 30

    def density(llr):
        return mpmath.npdf(llr, a * a / 2, a) * mpmath.log(1 + mpmath.exp(-llr), 2)

    reference = 1 - mpmath.quad(density, [-mpmath.inf, 0, a * a / 2, mpmath.inf])
    # 30-digit integral; the float quadrature is good to ~1e-13.
    assert abs(leakage.binary_channel_bits(a, 1.0) - float(reference)) < 1e-10


def test_monte_carlo_path_agrees_with_the_quadrature_for_two_candidates():
    r, s = _two_candidates(2.0), 1.0
    exact = leakage.exact_leakage(r, s)
    mc = leakage.exact_leakage(r, s, samples=200_000, seed=3, method="monte_carlo")
    assert not mc.exact and mc.samples == 200_000
    assert mc.ci_bits[0] <= exact.bits <= mc.ci_bits[1]
    assert mc.bayes_success_ci[0] <= exact.bayes_success <= mc.bayes_success_ci[1]
    # Standard error of the bits at 2e5 draws is ~1e-3; 1e-2 is ten of them.
    assert abs(mc.bits - exact.bits) < 1e-2
    assert abs(mc.bayes_success - exact.bayes_success) < 1e-2


@pytest.mark.parametrize(("n", "side", "s"), [(2, 1.5, 1.0), (3, 2.0, 1.2)])
def test_hypercube_is_n_independent_binary_channels(n, side, s):
    # Vertices of a cube: the posterior factorises over the n axes, so I = n I_binary and
    # success = Phi(side / (2 s))^n.
    res = leakage.exact_leakage(_hypercube(n, side), s, samples=4096, seed=0)
    assert res.candidates == 2**n and res.distinct == 2**n
    assert res.ci_bits[0] <= n * _bawgn_bits(side / s) <= res.ci_bits[1]
    success = stats.norm.cdf(side / (2 * s)) ** n
    assert res.bayes_success_ci[0] <= success <= res.bayes_success_ci[1]


def test_interval_coverage_on_a_known_case():
    # 20 seeds x 512 draws on the square (M = 4): a 95% interval should miss about once.
    # With exact 95% coverage, P[fewer than 16 covers] = 0.3% (binomial(20, 0.95)).
    truth_bits = 2 * _bawgn_bits(1.0)
    truth_success = stats.norm.cdf(0.5) ** 2
    square = _hypercube(2, 1.0)
    runs = [leakage.exact_leakage(square, 1.0, samples=512, seed=seed) for seed in range(20)]
    bits_covered = sum(r.ci_bits[0] <= truth_bits <= r.ci_bits[1] for r in runs)
    success_covered = sum(
        r.bayes_success_ci[0] <= truth_success <= r.bayes_success_ci[1] for r in runs
    )
    assert bits_covered >= 16
    assert success_covered >= 16


def _slow_reference(releases, s, samples, chunk, seed):
    """The obvious loop: Euclidean distances, one draw and one candidate at a time."""
    rng = np.random.default_rng(seed)
    m, k = releases.shape
    info, success = [], []
    for start in range(0, samples, chunk):
        n = min(chunk, samples - start)
        truth = rng.integers(m, size=n)
        noise = rng.standard_normal((n, k))
        for t in range(n):
            y = releases[truth[t]] + s * noise[t]
            log_lik = [-np.sum((y - releases[j]) ** 2) / (2 * s * s) for j in range(m)]
            log_post = np.array(log_lik) - special.logsumexp(log_lik)
            post = np.exp(log_post)
            info.append(math.log2(m) + np.sum(post * log_post) / math.log(2))
            success.append(post.max())
    return np.mean(info), np.mean(success)


def test_vectorised_chunks_equal_a_slow_loop(monkeypatch):
    rng = np.random.default_rng(5)
    releases = rng.normal(size=(6, 3)) + 7.0
    monkeypatch.setattr(exact_module, "_CHUNK_FLOATS", 45)  # chunk = 45 // (6 + 3) = 5
    res = leakage.exact_leakage(releases, 0.8, samples=23, seed=9)
    bits, success = _slow_reference(releases, 0.8, samples=23, chunk=5, seed=9)
    # Same draws, two algebraic routes (inner products vs distances): rounding only.
    assert res.bits == pytest.approx(bits, abs=1e-12)
    assert res.bayes_success == pytest.approx(success, abs=1e-12)


def test_identical_candidates_leak_nothing():
    res = leakage.exact_leakage(np.tile([1.0, -2.0, 3.0], (7, 1)), 0.5)
    assert (res.bits, res.ci_bits, res.exact, res.distinct) == (0.0, (0.0, 0.0), True, 1)
    assert res.bayes_success == pytest.approx(1 / 7, abs=1e-15)


def test_noiseless_release_of_distinct_candidates_leaks_log2_m():
    res = leakage.exact_leakage(np.random.default_rng(1).normal(size=(10, 4)), 0.0)
    assert (res.bits, res.bayes_success, res.exact) == (math.log2(10), 1.0, True)


def test_noiseless_release_merges_equal_rows():
    # Rows a, a, b: the server learns the group. I = H(2/3, 1/3) = log2 3 - 2/3 bits
    # (hand: 1.584963 - 0.666667 = 0.918296); MAP success = 2 groups / 3 candidates.
    res = leakage.exact_leakage([[0.0, 1.0], [0.0, 1.0], [5.0, 1.0]], 0.0)
    assert res.bits == pytest.approx(math.log2(3) - 2 / 3, abs=1e-15)
    assert res.bayes_success == pytest.approx(2 / 3, abs=1e-15)
    assert res.distinct == 2


def test_equal_rows_under_noise_leak_the_group_only():
    # Rows a, a, b at s > 0: I(X; Y) = I(G; Y) for the group G with prior (2/3, 1/3),
    # here by quadrature along the line through a and b.
    d, s = 1.5, 1.0
    prior, means = np.array([2 / 3, 1 / 3]), np.array([0.0, d])

    def integrand(y):
        lik = stats.norm.pdf(y, means, s)
        mix = prior @ lik
        return float(np.sum(prior * lik * np.log2(lik / mix)))

    reference = integrate.quad(integrand, -30, d + 30, limit=200)[0]
    res = leakage.exact_leakage([[0.0, 2.0], [0.0, 2.0], [d, 2.0]], s, samples=20_000, seed=2)
    assert res.ci_bits[0] <= reference <= res.ci_bits[1]


def test_small_noise_tends_to_log2_m_and_large_noise_to_zero():
    releases = np.random.default_rng(4).normal(size=(8, 5))
    # Smallest pairwise distance here is > 0.5, so other logits trail by > 1e5: one-hot.
    tiny = leakage.exact_leakage(releases, 1e-3, samples=256)
    assert not tiny.exact
    assert tiny.bits == pytest.approx(3.0, abs=1e-12)
    assert tiny.bayes_success == pytest.approx(1.0, abs=1e-12)
    # At s = 1e3 the Gaussian-channel bound is ~ tr(Sigma) / (2 s^2 ln 2) ~ 4e-6 bits.
    huge = leakage.exact_leakage(releases, 1e3, samples=256)
    assert 0.0 <= huge.bits < 1e-5 and huge.ci_bits[0] == 0.0
    # 256 draws cannot certify that: an interval valid for every distribution on [0, 3] bits
    # is ~3 ln(1/delta) / 256 wide; empirical Bernstein (Maurer & Pontil 2009, Thm. 4) adds
    # 7 R ln(2/delta) / (3 (n - 1)) with R = 3 bits, delta = 0.025, and a variance term of
    # order sqrt(2 Var ln(80) / n) < 1e-6 here (every draw is below 1e-5 bits).
    assert huge.ci_bits[1] == pytest.approx(huge.bits + 7 * 3 * math.log(80) / (3 * 255), abs=1e-6)
    # Success moves at first order in Delta / s: between 1/M and the mu-GDP bound (~1/8 + 8e-4).
    sensitivity = leakage.max_pairwise_distance(releases)
    ceiling = leakage.gaussian_mechanism_success_bound(8, sensitivity, 1e3)
    assert huge.bayes_success_ci[0] >= 1 / 8 and huge.bayes_success <= ceiling < 0.127


def test_translation_and_joint_rescaling_change_nothing():
    releases = np.random.default_rng(6).normal(size=(9, 4))
    base = leakage.exact_leakage(releases, 0.7, samples=512, seed=1)
    moved = leakage.exact_leakage(releases + 123.0, 0.7, samples=512, seed=1)
    scaled = leakage.exact_leakage(releases * 1e4, 0.7e4, samples=512, seed=1)
    for other in (moved, scaled):
        assert other.bits == pytest.approx(base.bits, abs=1e-9)
        assert other.bayes_success == pytest.approx(base.bayes_success, abs=1e-9)


def test_same_seed_same_numbers_and_fields():
    releases = np.random.default_rng(7).normal(size=(5, 2))
    a = leakage.exact_leakage(releases, 1.0, samples=100, seed=11, confidence=0.9)
    b = leakage.exact_leakage(releases, 1.0, samples=100, seed=11, confidence=0.9)
    assert a == b
    assert (a.candidates, a.distinct, a.samples, a.noise_std, a.exact) == (5, 5, 100, 1.0, False)
    assert 0 <= a.ci_bits[0] <= a.bits <= a.ci_bits[1] <= math.log2(5)
    assert 1 / 5 <= a.bayes_success_ci[0] <= a.bayes_success <= a.bayes_success_ci[1] <= 1


def test_memory_stays_linear_in_the_candidates():
    # An M x M float64 matrix at M = 4000 is 128 MB; 64 draws x (M + k) floats are 2 MB.
    releases = np.random.default_rng(8).normal(size=(4000, 2))
    tracemalloc.start()
    leakage.exact_leakage(releases, 1.0, samples=64)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 16e6


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"releases": [[0.0], [np.nan]]}, "'releases' parameter of exact_leakage must contain"),
        ({"releases": [[0.0], [np.inf]]}, "'releases' parameter of exact_leakage must contain"),
        ({"releases": [0.0, 1.0]}, "'releases' parameter of exact_leakage must be a 2-dim"),
        ({"releases": np.zeros((0, 3))}, "'releases' parameter of exact_leakage must have at"),
        ({"noise_std": -0.1}, r"'noise_std' parameter of exact_leakage must be in \[0, inf\)"),
        ({"noise_std": math.nan}, "'noise_std' parameter of exact_leakage"),
        ({"noise_std": 1e-300}, "'noise_std' parameter of exact_leakage is too small"),
        ({"samples": 1}, r"'samples' parameter of exact_leakage must be in \[2, "),
        ({"samples": 2.5}, "'samples' parameter of exact_leakage must be an integer"),
        ({"confidence": 1.0}, r"'confidence' parameter of exact_leakage must be in \(0, 1\)"),
        ({"seed": -1}, r"'seed' parameter of exact_leakage must be in \[0, inf\)"),
        ({"method": "exact"}, "'method' parameter of exact_leakage must be one of"),
    ],
)
def test_bad_arguments_name_the_parameter(kwargs, message):
    arguments = {"releases": [[0.0], [1.0], [2.0]], "noise_std": 1.0, **kwargs}
    with pytest.raises(ValueError, match=message):
        leakage.exact_leakage(arguments.pop("releases"), arguments.pop("noise_std"), **arguments)


# --- Hardening (issue 13): extreme but finite inputs give finite, right answers ----------


@pytest.mark.parametrize(
    "releases",
    [
        [[1.7e308], [-1.7e308]],  # the distance overflows: was a ValueError about 'distance'
        [[0.0, 1.0], [1.0, 0.0]],  # with s = 1e-300 below: d/s overflowed a*a to nan
    ],
)
def test_two_candidates_beyond_float_range_leak_one_bit(releases):
    s = 1.0 if abs(releases[0][0]) > 1 else 1e-300
    res = leakage.exact_leakage(releases, s)
    assert res.exact and (res.bits, res.bayes_success) == (1.0, 1.0)


@pytest.mark.parametrize("scale", [1e-300, 1e-150, 1e150, 1e300])
def test_two_candidates_are_scale_invariant_at_the_extremes(scale):
    r = _two_candidates(2.0)
    ref = leakage.exact_leakage(r, 0.8)
    res = leakage.exact_leakage(r * scale, 0.8 * scale)
    assert res.bits == pytest.approx(ref.bits, rel=1e-13)
    assert res.bayes_success == pytest.approx(ref.bayes_success, rel=1e-13)


def test_binary_channel_saturates_beyond_snr_40():
    # The cut-off rests on h2(q) <= 2 sqrt(q (1 - q)) (bits); check it on a grid first.
    q = np.linspace(1e-9, 1 - 1e-9, 10_001)
    assert np.all(stats.entropy([q, 1 - q], base=2) <= 2 * np.sqrt(q * (1 - q)) + 1e-15)
    # Then 1 - I <= 2 exp(-a^2 / 8) on the quadrature side of the cut (a <= 40) ...
    for a in (10.0, 20.0, 39.9):
        assert 1.0 - leakage.binary_channel_bits(a, 1.0) <= 2 * math.exp(-a * a / 8) + 2e-16
    # ... and exactly 1 beyond, up to distances / noise that overflow float64.
    for d, s in [(40.01, 1.0), (1e154, 1.0), (1e308, 1.0), (1e308, 1e-300), (1.0, 5e-324)]:
        assert leakage.binary_channel_bits(d, s) == 1.0
        assert leakage.binary_channel_success(d, s) == 1.0
    assert leakage.binary_channel_bits(1e-300, 1e300) == 0.0


def test_monte_carlo_is_scale_invariant_at_the_extremes():
    r = _hypercube(2, 1.5)
    ref = leakage.exact_leakage(r, 1.0, samples=500, seed=4)
    for scale in (1e-300, 1e300):
        res = leakage.exact_leakage(r * scale, scale, samples=500, seed=4)
        assert res.bits == pytest.approx(ref.bits, rel=1e-12)
        assert res.bayes_success == pytest.approx(ref.bayes_success, rel=1e-12)


def test_separated_releases_near_the_overflow_limit_leak_everything():
    # max ||r_i - mean|| / s = 0.87e149 < 1e150: accepted; the candidates are 1e149 apart.
    res = leakage.exact_leakage(np.eye(4) * 1e149, 1.0, samples=64)
    assert (res.bits, res.bayes_success) == (2.0, 1.0)
    with pytest.raises(ValueError, match="'noise_std' parameter of exact_leakage is too small"):
        leakage.exact_leakage(np.eye(4) * 1e151, 1.0)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 3), min_size=1, max_size=12),
    st.integers(1, 5),
    st.booleans(),
)
def test_distinct_rows_counts_the_groups_np_unique_finds(labels, width, signed_zero):
    """Rows drawn from a few prototypes (one of them all zeros, written as -0.0 when
    ``signed_zero``): the multiplicities are np.unique's (which compares values, so
    -0.0 == 0.0), listed in the order of first occurrence."""
    prototypes = np.random.default_rng(width).normal(size=(4, width))
    prototypes[0] = -0.0 if signed_zero else 0.0
    rows = prototypes[labels]
    rows[::2][np.array(labels[::2]) == 0] = 0.0  # +0.0 and -0.0 in the same group
    counts = leakage.distinct_rows(rows)
    first_seen = list(dict.fromkeys(labels))
    assert counts.tolist() == [labels.count(label) for label in first_seen]
    assert sorted(counts) == sorted(np.unique(rows, axis=0, return_counts=True)[1])


def test_distinct_rows_splits_rows_whose_digests_collide(monkeypatch):
    """A digest that collides for unequal rows must not merge them: every digest made
    equal, three distinct rows and a repeat still give counts [2, 1, 1]."""

    class Constant:
        def __init__(self, *_, **__):
            pass

        def digest(self):
            return b"same"

    monkeypatch.setattr(releases_module.hashlib, "blake2b", Constant)
    rows = np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 2.0], [5.0, 6.0]])
    assert leakage.distinct_rows(rows).tolist() == [2, 1, 1]
