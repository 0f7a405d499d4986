"""bounds.leakage bounds: ceiling, Gaussian channel, Fano, Clopper-Pearson, ReRo, status."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import optimize, stats

from pruneleak.bounds import leakage

# Random candidate sets: (seed, M, k, s), small enough for 2,000 Monte Carlo draws each.
RANDOM_SETS = [
    (seed, m, k, s)
    for seed, (m, k), s in itertools.product(range(3), [(6, 1), (10, 3), (12, 20)], [0.3, 1.0, 3.0])
]


def _random_releases(seed, m, k):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(m, k)) * rng.uniform(0.2, 2.0, size=k)


# --- ceiling -------------------------------------------------------------------------


def test_ceiling_is_batch_times_log2_m():
    assert leakage.ceiling_bits(1797) == pytest.approx(10.811375, abs=1e-6)  # log2 1797 (issue 12)
    # An 8x8 digit with 17 grey levels: 64 log2 17 = 64 x 4.087463 = 261.5976 (issue 12).
    assert leakage.ceiling_bits(17, batch_size=64) == pytest.approx(261.5976, abs=1e-4)
    assert leakage.ceiling_bits(1) == 0.0
    with pytest.raises(ValueError, match=r"'candidates' parameter of ceiling_bits must be in"):
        leakage.ceiling_bits(0)
    with pytest.raises(ValueError, match=r"'batch_size' parameter of ceiling_bits must be in"):
        leakage.ceiling_bits(4, batch_size=0)


# --- Gaussian channel ----------------------------------------------------------------


def _logdet_bits(releases, s):
    """Independent route: the k x k population covariance and slogdet."""
    cov = np.atleast_2d(np.cov(releases.T, bias=True))
    sign, logdet = np.linalg.slogdet(np.eye(cov.shape[0]) + cov / s**2)
    assert sign == 1
    return 0.5 * logdet / math.log(2)


@pytest.mark.parametrize(("m", "k"), [(5, 3), (3, 8), (7, 7), (1, 4)])
def test_gaussian_bound_equals_the_covariance_log_determinant(m, k):
    releases = _random_releases(m * k, m, k)
    ours = leakage.gaussian_channel_bound_bits(releases, 0.6)
    # Eigenvalues of the smaller Gram matrix vs slogdet of I_k + Sigma / s^2: rounding only.
    assert ours == pytest.approx(_logdet_bits(releases, 0.6), rel=1e-12, abs=1e-14)


@pytest.mark.parametrize(("seed", "m", "k", "s"), RANDOM_SETS)
def test_gaussian_bound_is_above_the_exact_leakage(seed, m, k, s):
    releases = _random_releases(seed, m, k)
    exact = leakage.exact_leakage(releases, s, samples=2000, seed=seed)
    assert leakage.gaussian_channel_bound_bits(releases, s) >= exact.ci_bits[0]


def test_gaussian_bound_limits_and_invariance():
    releases = _random_releases(1, 6, 3)
    assert leakage.gaussian_channel_bound_bits(np.ones((4, 3)), 2.0) == 0.0
    scaled = leakage.gaussian_channel_bound_bits(50 * releases + 3, 50 * 0.8)
    assert scaled == pytest.approx(leakage.gaussian_channel_bound_bits(releases, 0.8), rel=1e-12)
    for s in (-1.0, 0.0):  # no finite bound without noise: refused, not inf
        with pytest.raises(ValueError, match="'noise_std' parameter of gaussian_channel_bound"):
            leakage.gaussian_channel_bound_bits(releases, s)
    with pytest.raises(ValueError, match="'releases' parameter of gaussian_channel_bound_bits"):
        leakage.gaussian_channel_bound_bits([[0.0], [np.nan]], 1.0)


# --- Fano ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("m", "p_e", "expected"),
    [
        # log2 4 - h(1/2) - (1/2) log2 3 = 2 - 1 - 0.792481 = 0.207519
        (4, 0.5, 0.2075187496),
        # log2 10 - h(0.1) - 0.1 log2 9 = 3.3219281 - 0.4689956 - 0.3169925 = 2.5359400
        (10, 0.1, 2.5359400),
        (8, 0.0, 3.0),  # no error: the whole entropy
        (2, 1.0, 1.0),  # always wrong on two candidates: flip the guess, 1 bit
        (5, 0.8, 0.0),  # P_e = (M - 1)/M: blind guessing, nothing
        # Worse than guessing also informs: log2 5 - h(0.9) - 0.9 log2 4
        # = 2.3219281 - 0.4689956 - 1.8 = 0.0529325
        (5, 0.9, 0.0529325),
        (1, 0.0, 0.0),  # one candidate, no secret
    ],
)
def test_fano_against_hand_computed_values(m, p_e, expected):
    assert leakage.fano_lower_bound_bits(m, p_e) == pytest.approx(expected, abs=1e-7)


def test_fano_is_below_the_exact_leakage_for_the_map_attacker():
    # The MAP attacker errs with probability 1 - success; Fano must stay below I.
    for n, side, s in [(2, 1.5, 1.0), (3, 2.0, 0.5), (4, 1.0, 1.0)]:
        success = stats.norm.cdf(side / (2 * s)) ** n  # hypercube, closed form
        bits = n * leakage.binary_channel_bits(side, s)
        assert leakage.fano_lower_bound_bits(2**n, 1 - success) <= bits


def test_fano_confidence_takes_the_worst_end_of_the_interval():
    # 0 errors in 100: P_e <= 1 - 0.025^(1/100) (Clopper-Pearson, closed form at x = 0).
    upper = 1 - 0.025 ** (1 / 100)
    expected = 4 - (stats.entropy([upper, 1 - upper], base=2) + upper * math.log2(15))
    assert leakage.fano_lower_confidence_bits(16, 0, 100) == pytest.approx(expected, abs=1e-12)
    # An attack no better than guessing (interval contains (M - 1)/M) proves nothing.
    assert leakage.fano_lower_confidence_bits(4, 75, 100) == 0.0
    # Always wrong on two candidates: the lower CP limit is the worst case.
    lower = 0.025 ** (1 / 50)
    expected = 1 - stats.entropy([lower, 1 - lower], base=2)
    assert leakage.fano_lower_confidence_bits(2, 50, 50) == pytest.approx(expected, abs=1e-12)
    assert leakage.fano_lower_confidence_bits(16, 3, 100) <= leakage.fano_lower_bound_bits(16, 0.03)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: leakage.fano_lower_bound_bits(0, 0.1), "'candidates' parameter of fano_lower"),
        (lambda: leakage.fano_lower_bound_bits(4, 1.1), r"'error_probability' .* in \[0, 1\]"),
        (lambda: leakage.fano_lower_bound_bits(4, -0.1), r"'error_probability' .* in \[0, 1\]"),
        (lambda: leakage.fano_lower_confidence_bits(4, 11, 10), r"'errors' .* in \[0, 10\]"),
        (lambda: leakage.fano_lower_confidence_bits(4, 0, 0), "'trials' parameter of fano_lower"),
    ],
)
def test_fano_rejects_bad_arguments(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- Clopper-Pearson -----------------------------------------------------------------


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_clopper_pearson_closed_forms_at_the_edges(confidence):
    alpha = 1 - confidence
    lo, hi = leakage.clopper_pearson_interval(0, 10, confidence)
    assert lo == 0.0 and hi == pytest.approx(1 - (alpha / 2) ** (1 / 10), abs=1e-12)
    lo, hi = leakage.clopper_pearson_interval(10, 10, confidence)
    assert hi == 1.0 and lo == pytest.approx((alpha / 2) ** (1 / 10), abs=1e-12)


@pytest.mark.parametrize(("x", "n"), [(5, 10), (1, 20), (37, 40), (120, 1000)])
def test_clopper_pearson_inverts_the_binomial_tails(x, n):
    # Definition: lo solves P[X >= x | lo] = 2.5%, hi solves P[X <= x | hi] = 2.5%.
    lo_ref = optimize.brentq(lambda p: stats.binom.sf(x - 1, n, p) - 0.025, 1e-12, 1 - 1e-12)
    hi_ref = optimize.brentq(lambda p: stats.binom.cdf(x, n, p) - 0.025, 1e-12, 1 - 1e-12)
    lo, hi = leakage.clopper_pearson_interval(x, n)
    assert lo == pytest.approx(lo_ref, abs=1e-9) and hi == pytest.approx(hi_ref, abs=1e-9)


def test_clopper_pearson_rejects_bad_arguments():
    for args, message in [
        ((11, 10), r"'successes' parameter of clopper_pearson_interval must be in \[0, 10\]"),
        ((0, 0), r"'trials' parameter of clopper_pearson_interval .*in \[1, 9007199254740992"),
        ((0, 2**53 + 1), r"'trials' parameter of clopper_pearson_interval must be in \[1, 9"),
        ((1, 10, 1.0), r"'confidence' parameter of clopper_pearson_interval must be in \(0, 1\)"),
    ]:
        with pytest.raises(ValueError, match=message):
            leakage.clopper_pearson_interval(*args)


# --- Gaussian-mechanism reconstruction bound ------------------------------------------


def test_rero_bound_limits_and_direction():
    assert leakage.gaussian_mechanism_success_bound(10, 0.0, 1.0) == pytest.approx(0.1, abs=1e-15)
    assert leakage.gaussian_mechanism_success_bound(10, 1e-12, 1.0) == pytest.approx(0.1, abs=1e-9)
    assert leakage.gaussian_mechanism_success_bound(10, 40.0, 1.0) == 1.0
    assert leakage.gaussian_mechanism_success_bound(10, 1.0, 0.0) == 1.0
    assert leakage.gaussian_mechanism_success_bound(1, 3.0, 1.0) == 1.0
    mus = np.linspace(0, 8, 81)
    values = [leakage.gaussian_mechanism_success_bound(50, mu, 1.0) for mu in mus]
    assert np.all(np.diff(values) > 0)
    # 1 - f_mu(1/M) with the Gaussian trade-off f_mu(a) = Phi(Phi^-1(1 - a) - mu)
    # (Dong, Roth, Su 2022): at M = 4, mu = 1.3, 1 - Phi(0.674490 - 1.3) = Phi(0.625510)
    # = 0.734182 (normal table).
    trade_off = stats.norm.cdf(stats.norm.ppf(1 - 1 / 4) - 1.3)
    assert leakage.gaussian_mechanism_success_bound(4, 2.6, 2.0) == pytest.approx(
        1 - trade_off, abs=1e-12
    )
    assert 1 - trade_off == pytest.approx(0.734182, abs=1e-6)


@pytest.mark.parametrize(("seed", "m", "k", "s"), RANDOM_SETS)
def test_rero_bound_is_above_the_bayes_success(seed, m, k, s):
    releases = _random_releases(seed, m, k)
    exact = leakage.exact_leakage(releases, s, samples=2000, seed=seed)
    delta = leakage.max_pairwise_distance(releases)
    bound = leakage.gaussian_mechanism_success_bound(m, delta, s)
    assert bound >= exact.bayes_success_ci[0]


def test_two_candidates_rero_bound_is_phi_d_over_s():
    # M = 2: Phi(Phi^-1(1/2) + d/s) = Phi(d/s) >= the exact Phi(d/(2s)).
    for d, s in [(0.5, 1.0), (2.0, 1.0), (3.0, 0.4)]:
        bound = leakage.gaussian_mechanism_success_bound(2, d, s)
        assert bound == pytest.approx(stats.norm.cdf(d / s), abs=1e-12)
        assert bound >= leakage.binary_channel_success(d, s)


def test_max_pairwise_distance_against_a_double_loop(monkeypatch):
    from pruneleak.bounds.leakage import reconstruction

    releases = _random_releases(9, 23, 4) + 100.0
    slow = max(np.linalg.norm(a - b) for a in releases for b in releases)
    monkeypatch.setattr(reconstruction, "_BLOCK_FLOATS", 50)  # blocks of 2 rows
    assert leakage.max_pairwise_distance(releases) == pytest.approx(slow, rel=1e-15)
    assert leakage.max_pairwise_distance([[1.0, 2.0]]) == 0.0


# --- Theorem 1 status ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("bound", "kwargs", "expected"),
    [
        (5.0, {"exact_low_bits": 2.0}, "valid"),
        (2.0, {"exact_low_bits": 2.0}, "valid"),  # touching the lower limit is allowed
        (1.9, {"exact_low_bits": 2.0}, "violated"),  # below the exact value's interval
        (3.0, {"exact_low_bits": 2.0, "lower_bound_bits": 4.0}, "violated"),  # below Fano
        (3.0, {"exact_low_bits": -0.1}, "valid"),
        (-0.5, {}, "violated"),  # negative: below 0 <= I
        (-15.6, {"exact_low_bits": 1.9}, "violated"),
        (10.8, {}, "vacuous"),  # at the ceiling
        (6036.0, {"exact_low_bits": 2.0}, "vacuous"),
        (math.inf, {}, "vacuous"),
        (-math.inf, {}, "violated"),
        (np.float32(5.0), {"lower_bound_bits": 1.0}, "valid"),
    ],
)
def test_theorem1_status_on_constructed_cases(bound, kwargs, expected):
    status = leakage.theorem1_status(bound, ceiling_bits=10.8, **kwargs)
    assert status == expected and status in leakage.STATUSES


def test_theorem1_status_refuses_a_lower_limit_above_the_ceiling():
    # I(X; Y) <= ceiling, so a lower limit above it is an impossible input (it was reported as
    # "violated"); a lower limit at the ceiling is possible, and rounding slack is allowed.
    message = "'exact_low_bits' parameter of theorem1_status must be at most ceiling_bits"
    with pytest.raises(ValueError, match=message):
        leakage.theorem1_status(3.0, ceiling_bits=2.0, exact_low_bits=3.5)
    with pytest.raises(ValueError, match=r"Got lower_bound_bits=2\.001 > ceiling_bits=2\.0"):
        leakage.theorem1_status(3.0, ceiling_bits=2.0, lower_bound_bits=2.001)
    assert leakage.theorem1_status(2.0, ceiling_bits=2.0, exact_low_bits=2.0) == "vacuous"
    assert leakage.theorem1_status(1.9, ceiling_bits=2.0, exact_low_bits=2.0) == "violated"
    nudged = 2.0 * (1 + 1e-13)  # the same log2 N by another route, last bits apart
    assert leakage.theorem1_status(5.0, ceiling_bits=2.0, lower_bound_bits=nudged) == "vacuous"


def test_theorem1_status_rejects_bad_arguments():
    for call, message in [
        (lambda: leakage.theorem1_status("5", ceiling_bits=1.0), "'bound_bits' parameter"),
        (lambda: leakage.theorem1_status(5.0, ceiling_bits=-1.0), "'ceiling_bits' parameter"),
        (
            lambda: leakage.theorem1_status(5.0, ceiling_bits=1.0, exact_low_bits=math.nan),
            "'exact_low_bits' parameter",
        ),
    ]:
        with pytest.raises(ValueError, match=message):
            call()


# --- every public number is a Python float (STYLE.md, point 2) -------------------------

_RELEASES = np.array([[0.0, 1.0], [2.0, 0.5], [1.0, 1.0]])
FLOAT_CALLS = {
    "ceiling_bits": lambda: leakage.ceiling_bits(np.int64(8)),
    "binary_channel_bits": lambda: leakage.binary_channel_bits(np.float32(1.0), 1.0),
    "binary_channel_success": lambda: leakage.binary_channel_success(1.0, np.float64(1.0)),
    "gaussian_channel_bound_bits": lambda: leakage.gaussian_channel_bound_bits(_RELEASES, 1.0),
    "fano_lower_bound_bits": lambda: leakage.fano_lower_bound_bits(8, np.float64(0.2)),
    "fano_lower_confidence_bits": lambda: leakage.fano_lower_confidence_bits(8, 3, 50),
    "gaussian_mechanism_success_bound": lambda: leakage.gaussian_mechanism_success_bound(
        8, 1.0, 1.0
    ),
    "max_pairwise_distance": lambda: leakage.max_pairwise_distance(_RELEASES),
    "clopper_pearson_interval": lambda: leakage.clopper_pearson_interval(3, 10)[0],
    "exact_leakage.bits": lambda: leakage.exact_leakage(_RELEASES, 1.0, samples=16).bits,
    "exact_leakage.ci": lambda: leakage.exact_leakage(_RELEASES, 1.0, samples=16).ci_bits[1],
    "exact_leakage.success": lambda: leakage.exact_leakage(_RELEASES, 0.0).bayes_success,
}


@pytest.mark.parametrize("name", sorted(FLOAT_CALLS))
def test_public_numbers_are_python_floats(name):
    assert type(FLOAT_CALLS[name]()) is float


# --- Hardening (issue 13): extreme but finite inputs ---------------------------------------


@pytest.mark.parametrize(
    ("a", "s"), [(1e300, 1e-300), (1.7e308, 1.0), (1.0, 1e-300), (1e-300, 1e300), (1e-160, 1.0)]
)
def test_gaussian_bound_of_two_points_at_the_extremes_against_mpmath(a, s):
    # Releases -a, a: Sigma = a^2, bound = 1/2 log2(1 + a^2 / s^2) (was inf or 0 from overflow).
    mpmath.mp.dps = 40
    ref = mpmath.log(1 + (mpmath.mpf(a) / mpmath.mpf(s)) ** 2, 2) / 2
    ours = leakage.gaussian_channel_bound_bits([[-a], [a]], s)
    assert math.isfinite(ours)
    assert ours == pytest.approx(float(ref), rel=1e-13, abs=1e-300)


def test_gaussian_bound_is_scale_invariant_at_the_extremes():
    releases = _random_releases(2, 5, 3)
    ref = leakage.gaussian_channel_bound_bits(releases, 0.7)
    for scale in (1e-300, 1e-200, 1e200, 1e300):
        scaled = leakage.gaussian_channel_bound_bits(releases * scale, 0.7 * scale)
        assert scaled == pytest.approx(ref, rel=1e-12)


def _slow_max_distance(releases) -> float:
    """Every pair in exact rational arithmetic (Fraction), the square root in mpmath."""
    rows = [[Fraction(float(x)) for x in row] for row in np.asarray(releases)]
    best = max(
        sum((x - y) ** 2 for x, y in zip(a, b, strict=True))
        for a, b in itertools.combinations(rows, 2)
    )
    mpmath.mp.dps = 30
    return float(mpmath.sqrt(mpmath.mpf(best.numerator) / best.denominator))


@pytest.mark.parametrize("scale", [1e-300, 1e-200, 1.0, 1e160, 1e300])
def test_max_pairwise_distance_at_the_extremes_against_exact_arithmetic(scale):
    # Squared distances used to overflow (inf - inf = nan) or underflow (0): both gave 0.0.
    releases = _random_releases(3, 6, 4) * scale
    assert leakage.max_pairwise_distance(releases) == pytest.approx(
        _slow_max_distance(releases), rel=1e-14, abs=0
    )


def test_max_pairwise_distance_sees_tiny_differences_beside_huge_entries():
    releases = [[1e300, 1e-300], [1e300, 2e-300], [1e300, 1.5e-300]]
    assert leakage.max_pairwise_distance(releases) == pytest.approx(1e-300, rel=1e-14, abs=0)


def test_max_pairwise_distance_beyond_the_largest_float_is_refused():
    with pytest.raises(ValueError, match="'releases' parameter of max_pairwise_distance"):
        leakage.max_pairwise_distance([[1.7e308], [-1.7e308]])
    assert leakage.max_pairwise_distance([[0.8e308], [-0.8e308]]) == 1.6e308


@pytest.mark.parametrize(("m", "b"), [(10**6, 300), (10**4, 5000), (10**30, 1000), (2**80, 2**9)])
def test_ceiling_without_replacement_beyond_the_exact_route(m, b):
    # min(B, M - B) > 256 goes through mpmath's log-gamma; the exact integer is the reference.
    ours = leakage.ceiling_bits(m, b, replacement=False)
    assert ours == pytest.approx(math.log2(math.comb(m, b)), rel=1e-15)


def test_ceiling_without_replacement_for_astronomical_batches():
    # math.comb(2**62, 2**40) would not finish; Stirling with its first correction in mpmath:
    # log C(n, k) = n h(k/n) - (1/2) log(2 pi k (n - k) / n) + O(1/k), in nats.
    n, k = 2**62, 2**40
    mpmath.mp.dps = 40
    p = mpmath.mpf(k) / n
    nats = -n * (p * mpmath.log(p) + (1 - p) * mpmath.log1p(-p))
    nats -= mpmath.log(2 * mpmath.pi * k * (n - k) / n) / 2
    ours = leakage.ceiling_bits(n, k, replacement=False)
    assert ours == pytest.approx(float(nats / mpmath.log(2)), rel=1e-15)


def test_ceiling_refuses_a_value_beyond_the_largest_float():
    assert leakage.ceiling_bits(4, 10**300) == pytest.approx(2e300)  # with replacement, B > M
    with pytest.raises(ValueError, match=r"'batch_size' parameter of ceiling_bits.*1\.8e308"):
        leakage.ceiling_bits(2**2000, 10**306)
    with pytest.raises(ValueError, match="'replacement' parameter of ceiling_bits"):
        leakage.ceiling_bits(4, 2, replacement="no")


@pytest.mark.parametrize(("m", "mu"), [(10**100, 3.0), (2**1100, 10.0), (10**400, 40.0)])
def test_gaussian_mechanism_bound_for_astronomical_candidate_sets(m, mu):
    # 1/M underflows beyond 2**1074 (ndtri(0) = -inf gave 0.0, or NaN with mu = inf).
    mpmath.mp.dps = 500
    quantile = -mpmath.sqrt(2) * mpmath.erfinv(1 - 2 / mpmath.mpf(m))
    ref = mpmath.ncdf(quantile + mu)
    assert leakage.gaussian_mechanism_success_bound(m, mu, 1.0) == pytest.approx(
        float(ref), rel=1e-9, abs=0
    )
    assert leakage.gaussian_mechanism_success_bound(m, 1e308, 1e-300) == 1.0


def test_clopper_pearson_at_the_largest_count():
    n = 2**53
    lo, hi = leakage.clopper_pearson_interval(n // 2, n)
    # Normal approximation: 1.96 * sqrt(1/4 / n) = 1.03e-8 half-width around 1/2.
    assert lo == pytest.approx(0.5 - 1.96 * 0.5 / math.sqrt(n), rel=1e-6)
    assert hi == pytest.approx(0.5 + 1.96 * 0.5 / math.sqrt(n), rel=1e-6)


def test_fano_confidence_names_itself_for_a_bad_confidence():
    with pytest.raises(ValueError, match="'confidence' parameter of fano_lower_confidence_bits"):
        leakage.fano_lower_confidence_bits(4, 0, 10, 1.5)


def test_max_pairwise_distance_equal_to_the_largest_float_is_returned():
    # Found by hypothesis: log2(x) + e rounded the largest float itself up to 2**1024.
    big = np.finfo(float).max
    assert leakage.max_pairwise_distance([[0.0], [big]]) == big


def test_clopper_pearson_is_never_inverted():
    # Found by hypothesis: at confidence 1e-9 the two beta quantiles (each off by ~1e-12)
    # crossed. The interval contains x / n at every confidence (median of Bin(n, x/n) is x).
    n, x = 1_960_892_815_080, 612_779_004_712
    low, high = leakage.clopper_pearson_interval(x, n, 1e-9)
    assert low <= x / n <= high
