"""Finite inputs in the documented domain give finite outputs in the documented range.

Issue 13, acceptance: a hypothesis property test for every public function of
``bounds.priprune``, ``bounds.leakage`` and the checks of ``bounds.validation``, and a
completeness test that enumerates those public callables and fails for any that is neither
covered here (``@covers``) nor exempt with a reason (``EXEMPT``). The domains reach the
float64 extremes on purpose (batch sizes up to 1.8e308, integers up to 2**63 - 1, releases
and noise from 1e-300 to 1e300): that is where overflow turned answers into inf or NaN.
"""

from __future__ import annotations

import inspect
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pruneleak.bounds import claims, leakage, priprune, validation

COVERED: set[str] = set()


def covers(*names):
    """Record that the decorated test covers the public functions ``names`` (qualified:
    ``"priprune.single_round_bound"``)."""

    def mark(test):
        COVERED.update(names)
        return test

    return mark


EXEMPT = {
    "priprune.entr": "sympy Function class (symbolic); its numeric twin scipy.special.entr "
    "is covered through binary_entropy and the corrected bounds",
    "priprune.part_expr": "returns a sympy expression; its numeric twins part_*_published / "
    "part_*_corrected are covered",
    "priprune.single_round_bound_expr": "returns a sympy expression; single_round_bound and "
    "single_round_bound_corrected are covered",
    "priprune.multi_round_bound_expr": "returns a sympy expression; multi_round_bound and "
    "multi_round_bound_corrected are covered",
    "priprune.multi_round_bound_per_round_expr": "returns a sympy Sum; the *_per_round numeric "
    "twins are covered",
    "priprune.prunefl_single_round_bound_expr": "returns a sympy expression; the prunefl numeric "
    "twins are covered",
    "validation.interval_text": "formats an interval for messages (a string, no numeric "
    "output); its doctests and tests/sims/test_cli_config_options.py check the text",
    "leakage.ExactLeakage": "result dataclass built by exact_leakage (covered)",
    "leakage.BatchLeakage": "result dataclass built by batch_leakage (covered)",
    "leakage.BatchSensitivity": "result dataclass built by batch_sensitivity (covered)",
    "leakage.PosteriorLeakage": "result dataclass built by posterior_leakage and "
    "posterior_bracket (covered)",
}
CLAIMS_REASON = (
    "claims registry: runs and renders the papers' claim checks, not a numeric function of "
    "user input (unknown ids and efforts are rows of tests/invalid_inputs)"
)
EXEMPT |= {
    f"claims.{name}": CLAIMS_REASON for name in claims.__all__ if callable(getattr(claims, name))
}

FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

FLOAT_MAX = np.finfo(float).max
INT_MAX = 2**63 - 1

# --- bounds.priprune ------------------------------------------------------------------------

units = st.sampled_from(priprune.UNITS)
rates = st.floats(0.0, 1.0)
batch_sizes = st.floats(1.0, FLOAT_MAX)
dims = st.integers(1, INT_MAX)
rounds = st.integers(1, INT_MAX)
fractions = st.floats(-1.0, 1.0)


def _delta(fraction, d_star):
    """A Delta in the documented domain |Delta| <= 372.5 d* (a float64 log-determinant)."""
    return fraction * 372.5 * d_star


@st.composite
def dims_and_params(draw):
    """(d_star, d) with d_star <= d <= 2**63 - 1."""
    d_star = draw(dims)
    return d_star, draw(st.integers(d_star, INT_MAX))


def _finite_float(value, unit=None, *, low=-math.inf, high=math.inf):
    """A finite Python float in [low, high] (bits; scaled by ln 2 for nats), up to rounding:
    1e-12 relative (a few ulps of the formulas' float64 steps) plus 1e-12 absolute."""
    assert type(value) is float and math.isfinite(value), value
    scale = math.log(2) if unit == "nats" else 1.0
    slack = 1e-12 * (1 + abs(value))
    assert low * scale - slack <= value <= high * scale + slack, value


@covers("priprune.binary_entropy")
@FAST
@given(p=rates, unit=units)
def test_binary_entropy(p, unit):
    _finite_float(priprune.binary_entropy(p, unit=unit), unit, low=0.0, high=1.0)


@covers("priprune.binary_entropy_taylor")
@SLOW
@given(p=rates, n_terms=st.integers(0, 2**20), unit=units)
def test_binary_entropy_taylor(p, n_terms, unit):
    # Each truncation lies between H_b(p) and 1 bit (non-negative terms).
    value = priprune.binary_entropy_taylor(p, n_terms, unit=unit)
    _finite_float(value, unit, high=1.0)
    assert value >= priprune.binary_entropy(p, unit=unit) - 1e-12


@covers("priprune.mask_entropy_published", "priprune.mask_entropy_corrected")
@FAST
@given(p=rates, d=dims, unit=units)
def test_mask_entropies(p, d, unit):
    # Published: 1 - (p - 1)/(2 ln 2) in [1, 1 + 1/(2 ln 2)]; corrected d H_b(p) in [0, d].
    published = priprune.mask_entropy_published(p, unit=unit)
    _finite_float(published, unit, low=1.0, high=1 + 1 / (2 * math.log(2)))
    _finite_float(priprune.mask_entropy_corrected(p, d, unit=unit), unit, low=0.0, high=d)


@covers(
    "priprune.part_a_published",
    "priprune.part_b_published",
    "priprune.part_c_published",
    "priprune.part_d_published",
    "priprune.single_round_bound",
    "priprune.multi_round_bound",
)
@FAST
@given(p=rates, B=batch_sizes, d_star=dims, fraction=fractions, T=rounds, unit=units)
def test_published_bounds(p, B, d_star, fraction, T, unit):
    delta = _delta(fraction, d_star)
    _finite_float(priprune.part_d_published(d_star, unit=unit), unit, low=0.0)
    for value in (
        priprune.part_c_published(d_star, delta, unit=unit),
        priprune.part_b_published(B, d_star, delta, unit=unit),
        priprune.part_a_published(p, B, d_star, delta, unit=unit),
        priprune.single_round_bound(p, B, d_star, delta, unit=unit),
        priprune.multi_round_bound(p, B, d_star, delta, T, unit=unit),
    ):
        _finite_float(value, unit)


@covers(
    "priprune.part_a_corrected",
    "priprune.part_b_corrected",
    "priprune.part_c_corrected",
    "priprune.part_d_corrected",
    "priprune.single_round_bound_corrected",
    "priprune.multi_round_bound_corrected",
)
@FAST
@given(p=rates, B=batch_sizes, dd=dims_and_params(), fraction=fractions, T=rounds, unit=units)
def test_corrected_bounds(p, B, dd, fraction, T, unit):
    d_star, d = dd
    delta = _delta(fraction, d_star)
    _finite_float(priprune.part_d_corrected(B, d_star, unit=unit), unit, low=0.0)
    for value in (
        priprune.part_c_corrected(B, d_star, delta, unit=unit),
        priprune.part_b_corrected(B, d_star, delta, unit=unit),
        priprune.part_a_corrected(p, d, B, d_star, delta, unit=unit),
        priprune.single_round_bound_corrected(p, d, B, d_star, delta, unit=unit),
        priprune.multi_round_bound_corrected(p, d, B, d_star, delta, T, unit=unit),
    ):
        _finite_float(value, unit)


@covers("priprune.prunefl_single_round_bound", "priprune.prunefl_single_round_bound_corrected")
@FAST
@given(
    B=batch_sizes,
    dd=dims_and_params(),
    kept_fraction=st.floats(0.0, 1.0),
    fraction=fractions,
    form=st.sampled_from(["union", "pbar"]),
    unit=units,
)
def test_prunefl_bounds(B, dd, kept_fraction, fraction, form, unit):
    d_star, d = dd
    kept, delta = min(d, int(kept_fraction * d)), _delta(fraction, d_star)
    value = priprune.prunefl_single_round_bound(kept, d, B, d_star, delta, form=form, unit=unit)
    _finite_float(value, unit)
    corrected = priprune.prunefl_single_round_bound_corrected(kept, d, B, d_star, delta, unit=unit)
    _finite_float(corrected, unit)


@covers("priprune.multi_round_bound_per_round", "priprune.multi_round_bound_corrected_per_round")
@FAST
@given(
    rows=st.lists(st.tuples(rates, batch_sizes, dims, fractions), min_size=1, max_size=6),
    unit=units,
)
def test_per_round_bounds(rows, unit):
    p, B, d_star, fraction = (np.array(column) for column in zip(*rows, strict=True))
    delta = _delta(fraction, d_star)
    _finite_float(priprune.multi_round_bound_per_round(p, B, d_star, delta, unit=unit), unit)
    total = priprune.multi_round_bound_corrected_per_round(p, d_star, B, d_star, delta, unit=unit)
    _finite_float(total, unit)


positive_floats = st.floats(5e-324, FLOAT_MAX)


@covers("priprune.spectrum_summary", "priprune.delta_from_log_pseudo_det")
@FAST
@given(
    eigenvalues=st.lists(st.floats(0.0, FLOAT_MAX), min_size=1, max_size=20),
    top=positive_floats,
)
def test_spectrum_summary_and_delta(eigenvalues, top):
    # Any float64 PSD spectrum gives d* >= 1, a finite log-pdet, and a Delta inside the domain
    # of the bounds (so single_round_bound takes it).
    d_star, log_pdet = priprune.spectrum_summary([*eigenvalues, top])
    assert isinstance(d_star, int) and d_star >= 1
    assert math.isfinite(log_pdet) and abs(log_pdet) < 745 * d_star
    delta = priprune.delta_from_log_pseudo_det(log_pdet)
    assert type(delta) is float and math.isfinite(delta)
    _finite_float(priprune.single_round_bound(0.5, 1.0, d_star, delta))


@covers("priprune.delta_from_log_pseudo_det")
@FAST
@given(log_pdet=st.floats(allow_nan=False, allow_infinity=False))
def test_delta_from_any_finite_log_pdet(log_pdet):
    assert priprune.delta_from_log_pseudo_det(log_pdet) == -log_pdet / 2


# --- bounds.leakage -------------------------------------------------------------------------

scales = st.sampled_from([1e-300, 1e-150, 1e-20, 1.0, 1e20, 1e150, 1e300])
any_finite = st.floats(allow_nan=False, allow_infinity=False)


@st.composite
def releases(draw, max_m=6, max_k=3, *, full_range=False):
    """(M, k) releases: moderate values times one extreme scale, or any finite floats."""
    m, k = draw(st.integers(1, max_m)), draw(st.integers(0, max_k))
    values = any_finite if full_range else st.floats(-1.0, 1.0)
    arr = np.array(draw(st.lists(values, min_size=m * k, max_size=m * k)), dtype=float)
    return arr.reshape(m, k) * (1.0 if full_range else draw(scales))


def _check_leakage_result(res, secrets):
    log2_n = math.log2(secrets)
    for bits in (res.bits, *res.ci_bits):
        assert math.isfinite(bits) and -1e-12 <= bits <= log2_n + 1e-12
    assert res.ci_bits[0] <= res.bits <= res.ci_bits[1]
    if res.bayes_success is not None:
        for p in (res.bayes_success, *res.bayes_success_ci):
            assert math.isfinite(p) and 1 / secrets - 1e-12 <= p <= 1 + 1e-12


@covers("leakage.exact_leakage")
@SLOW
@given(r=releases(), noise=st.floats(0.01, 10.0), noiseless=st.booleans(), seed=st.integers(0, 9))
def test_exact_leakage_at_any_scale(r, noise, noiseless, seed):
    # Releases and noise scaled together: always in the domain (no refusal allowed).
    s = 0.0 if noiseless else noise * max(float(np.abs(r).max(initial=0.0)), 1e-300)
    res = leakage.exact_leakage(r, s, samples=32, seed=seed)
    _check_leakage_result(res, r.shape[0])


@covers("leakage.exact_leakage")
@SLOW
@given(r=releases(full_range=True), s=st.floats(0.0, FLOAT_MAX))
def test_exact_leakage_with_raw_extremes(r, s):
    # Any finite input: a finite answer, or the documented refusal naming noise_std.
    try:
        res = leakage.exact_leakage(r, s, samples=16)
    except ValueError as err:
        assert "'noise_std' parameter of exact_leakage is too small" in str(err)
    else:
        _check_leakage_result(res, r.shape[0])


@covers("leakage.batch_leakage")
@SLOW
@given(
    r=releases(max_m=6),
    noise=st.floats(0.01, 10.0),
    noiseless=st.booleans(),
    batch_fraction=st.floats(0.0, 1.0),
    cap=st.sampled_from([0, 3, 10_000]),
)
def test_batch_leakage_at_any_scale(r, noise, noiseless, batch_fraction, cap):
    m = r.shape[0]
    b = 1 + int(batch_fraction * (m - 1))
    s = 0.0 if noiseless else noise * max(float(np.abs(r).max(initial=0.0)), 1e-300)
    try:
        res = leakage.batch_leakage(r, s, b, samples=16, max_enumerated=cap, negatives=8)
    except ValueError as err:  # documented: noiseless, too many subsets, equal rows
        assert s == 0 and "cannot assume distinct batch means" in str(err)
        return
    _check_leakage_result(res, math.comb(m, b))
    if res.bracket_bits is not None:
        # Two Monte Carlo means (of a lower and of an upper bound) may cross when the bracket
        # is narrower than their errors (found at 16 draws); the interval holds both.
        assert res.ci_bits[0] <= min(res.bracket_bits) <= max(res.bracket_bits) <= res.ci_bits[1]


@covers("leakage.binary_channel_bits", "leakage.binary_channel_success")
@FAST
@given(d=st.floats(0.0, FLOAT_MAX), s=st.floats(0.0, FLOAT_MAX))
def test_binary_channel(d, s):
    _finite_float(leakage.binary_channel_bits(d, s), low=0.0, high=1.0)
    _finite_float(leakage.binary_channel_success(d, s), low=0.5, high=1.0)


@covers("leakage.ceiling_bits")
@FAST
@given(m=st.integers(1, 2**4000), b_fraction=st.floats(0.0, 1.0), b=st.integers(1, 2**60))
def test_ceiling_bits(m, b_fraction, b):
    with_replacement = leakage.ceiling_bits(m, b)
    _finite_float(with_replacement, low=0.0)
    distinct = min(m, 1 + int(b_fraction * min(m - 1, 2**64)))
    without = leakage.ceiling_bits(m, distinct, replacement=False)
    _finite_float(without, low=0.0, high=leakage.ceiling_bits(m, distinct) * (1 + 1e-12))


@covers("leakage.clopper_pearson_interval")
@FAST
@given(n=st.integers(1, 2**53), x_fraction=st.floats(0.0, 1.0), conf=st.floats(1e-9, 1 - 1e-9))
def test_clopper_pearson_interval(n, x_fraction, conf):
    x = int(x_fraction * n)
    low, high = leakage.clopper_pearson_interval(x, n, conf)
    _finite_float(low, low=0.0, high=1.0)
    _finite_float(high, low=0.0, high=1.0)
    # The median of Bin(n, x/n) is x, so x / n lies inside the interval at every confidence
    # (was violated by the quantiles' rounding at confidence 1e-9, n ~ 2e12: low > high).
    assert low <= x / n <= high


@covers("leakage.fano_lower_bound_bits", "leakage.fano_lower_confidence_bits")
@FAST
@given(
    m=st.integers(1, 2**2000),
    p=rates,
    n=st.integers(1, 2**53),
    e_fraction=st.floats(0.0, 1.0),
    conf=st.floats(1e-9, 1 - 1e-9),
)
def test_fano(m, p, n, e_fraction, conf):
    _finite_float(leakage.fano_lower_bound_bits(m, p), low=0.0, high=math.log2(m))
    bits = leakage.fano_lower_confidence_bits(m, int(e_fraction * n), n, conf)
    _finite_float(bits, low=0.0, high=math.log2(m))


@covers("leakage.gaussian_channel_bound_bits")
@SLOW
@given(r=releases(full_range=True), s=positive_floats)
def test_gaussian_channel_bound(r, s):
    _finite_float(leakage.gaussian_channel_bound_bits(r, s), low=0.0)


@covers("leakage.gaussian_mechanism_success_bound")
@FAST
@given(m=st.integers(1, 2**4000), sensitivity=st.floats(0.0, FLOAT_MAX), s=st.floats(0, FLOAT_MAX))
def test_gaussian_mechanism_success_bound(m, sensitivity, s):
    value = leakage.gaussian_mechanism_success_bound(m, sensitivity, s)
    _finite_float(value, low=0.0, high=1.0)
    assert value >= 1 / m * (1 - 1e-12)


@covers("leakage.gdp_reconstruction_bound")
@FAST
@given(
    kappa=st.floats(0.0, 1.0),
    mu=st.one_of(st.floats(0.0, FLOAT_MAX), st.just(math.inf)),
)
def test_gdp_reconstruction_bound(kappa, mu):
    value = leakage.gdp_reconstruction_bound(kappa, mu)
    _finite_float(value, low=0.0, high=1.0)
    assert value >= kappa * (1 - 1e-12)  # never below the blind guess


@covers("leakage.dp_reconstruction_bound")
@FAST
@given(
    kappa=st.floats(0.0, 1.0),
    epsilon=st.one_of(st.floats(0.0, FLOAT_MAX), st.just(math.inf)),
    delta=st.floats(0.0, 1.0),
)
def test_dp_reconstruction_bound(kappa, epsilon, delta):
    value = leakage.dp_reconstruction_bound(kappa, epsilon, delta)
    _finite_float(value, low=0.0, high=1.0)
    assert value >= kappa * (1 - 1e-12)


def _exceeds_float_max(r) -> bool:
    """Whether the largest pairwise distance, in exact arithmetic, is above 1.8e308."""
    rows = [[Fraction(float(x)) for x in row] for row in r]
    squares = (
        sum((x - y) ** 2 for x, y in zip(a, b, strict=True))
        for a, b in itertools.combinations(rows, 2)
    )
    return max(squares, default=0) > Fraction(FLOAT_MAX) ** 2


@st.composite
def grams(draw, max_m=6, max_k=3):
    """``(K, B, scale)``: ``K = B B^T`` times one extreme scale, ``B`` moderate rows."""
    m, k = draw(st.integers(1, max_m)), draw(st.integers(0, max_k))
    values = draw(st.lists(st.floats(-1.0, 1.0), min_size=m * k, max_size=m * k))
    b = np.array(values, dtype=float).reshape(m, k)
    scale = draw(scales)
    return (b @ b.T) * scale, b, scale


@st.composite
def symmetric_matrices(draw, max_m=4):
    """Any finite symmetric matrix (not necessarily a Gram)."""
    m = draw(st.integers(1, max_m))
    upper = draw(st.lists(any_finite, min_size=m * (m + 1) // 2, max_size=m * (m + 1) // 2))
    out = np.zeros((m, m))
    out[np.triu_indices(m)] = upper
    return out + np.triu(out, 1).T


def _squared(x: np.ndarray) -> np.ndarray:
    return ((x[:, None, :] - x[None, :, :]) ** 2).sum(axis=-1)


@covers("leakage.releases_from_gram")
@FAST
@given(case=grams())
def test_releases_from_gram_at_any_scale(case):
    # Finite, at most M - 1 coordinates, the distances of B scaled (in B's units: 1e-9 of
    # its largest squared norm, plus 1e-20 for the entries of K that underflow at 1e-300).
    k, b, scale = case
    f = leakage.releases_from_gram(k)
    m = k.shape[0]
    assert np.all(np.isfinite(f)) and f.shape[0] == m and f.shape[1] <= max(m - 1, 0)
    slack = 1e-9 * float(np.max(np.einsum("ij,ij->i", b, b))) + 1e-20
    assert np.all(np.abs(_squared(f) / scale - _squared(b)) <= slack)


@covers("leakage.releases_from_gram", "leakage.gram_groups")
@FAST
@given(k=symmetric_matrices(), rtol=st.floats(0.0, 1.0, exclude_max=True))
def test_gram_functions_with_raw_extremes(k, rtol):
    # Any finite symmetric matrix: a finite answer, or a refusal naming 'gram'.
    for call in (leakage.releases_from_gram, lambda g: leakage.gram_groups(g, rtol=rtol)):
        try:
            out = call(k)
        except ValueError as err:
            assert "'gram' parameter of" in str(err)
        else:
            assert np.all(np.isfinite(out)) and out.shape[0] == k.shape[0]


@covers("leakage.gram_groups")
@FAST
@given(case=grams(), rtol=st.floats(0.0, 1.0, exclude_max=True))
def test_gram_groups_are_labels_in_order_of_first_member(case, rtol):
    labels = leakage.gram_groups(case[0], rtol=rtol)
    assert labels.dtype == np.int64 and labels.shape == (case[0].shape[0],)
    _, first = np.unique(labels, return_index=True)
    assert labels[0] == 0 and np.all(np.diff(first) > 0)
    assert np.array_equal(np.unique(labels), np.arange(first.size))


@covers("leakage.gram_rounding_rtol")
@FAST
@given(terms=st.integers(1, 2**50))
def test_gram_rounding_rtol(terms):
    value = leakage.gram_rounding_rtol(terms)
    assert type(value) is float and 0 < value < 1


@covers("leakage.max_pairwise_distance")
@FAST
@given(r=releases(max_m=4, full_range=True))
def test_max_pairwise_distance(r):
    # Finite unless the exact distance is beyond the largest float: then a ValueError.
    try:
        value = leakage.max_pairwise_distance(r)
    except ValueError as err:
        assert "'releases' parameter of max_pairwise_distance" in str(err)
        assert _exceeds_float_max(r)
    else:
        _finite_float(value, low=0.0)


@covers("leakage.batch_sensitivity")
@FAST
@given(r=releases(max_m=5), batch_fraction=st.floats(0.0, 1.0), cap=st.sampled_from([0, 100]))
def test_batch_sensitivity_is_at_most_the_single_distance(r, batch_fraction, cap):
    # the diameter of the batch means never exceeds the largest single-release distance
    # (a batch mean difference is 1/B times at most B single differences), up to rounding
    b = 1 + int(batch_fraction * (r.shape[0] - 1))
    res = leakage.batch_sensitivity(r, b, max_enumerated=cap)
    single = leakage.max_pairwise_distance(r)
    _finite_float(res.value, low=0.0, high=single * (1 + 1e-9))
    assert res.method in ("exact", "bound")
    if b == 1:
        assert res.value == single


scores = st.floats(-1e300, 1e300) | st.just(-math.inf)


@st.composite
def draw_scores(draw, max_d=6, max_m=5):
    """(D, M) per-draw scores (any finite floats or -inf) and truths with a finite score."""
    d, m = draw(st.integers(2, max_d)), draw(st.integers(1, max_m))
    arr = np.array(draw(st.lists(scores, min_size=d * m, max_size=d * m))).reshape(d, m)
    truth = np.array(draw(st.lists(st.integers(0, m - 1), min_size=d, max_size=d)))
    arr[np.arange(d), truth] = np.array(
        draw(st.lists(st.floats(-1e300, 1e300), min_size=d, max_size=d))
    )
    return arr, truth


@covers("leakage.posterior_leakage", "leakage.posterior_bracket")
@FAST
@given(upper=draw_scores(), critic=st.lists(scores, min_size=30, max_size=30))
def test_posterior_leakage_and_bracket_stay_in_range(upper, critic):
    ll, truth = upper
    d, m = ll.shape
    for res in (
        leakage.posterior_leakage(ll, truth),
        leakage.posterior_bracket(ll, np.resize(np.array(critic), (d, m)), truth),
    ):
        _check_leakage_result(res, m)
        low, high = res.bracket_bits or (res.bits, res.bits)
        assert low >= -1e-12 and high <= math.log2(m) + 1e-12


@covers("leakage.theorem1_status")
@FAST
@given(
    bound=st.floats(allow_nan=False, allow_infinity=True),
    ceiling=st.floats(0.0, FLOAT_MAX),
    low_fraction=st.one_of(st.none(), st.floats(-1.0, 1.0)),
    fano_fraction=st.one_of(st.none(), st.floats(0.0, 1.0)),
)
def test_theorem1_status(bound, ceiling, low_fraction, fano_fraction):
    exact_low = None if low_fraction is None else low_fraction * ceiling
    fano = None if fano_fraction is None else fano_fraction * ceiling
    status = leakage.theorem1_status(
        bound, ceiling_bits=ceiling, exact_low_bits=exact_low, lower_bound_bits=fano
    )
    assert status in leakage.STATUSES
    lower = max([0.0, *(v for v in (exact_low, fano) if v is not None)])
    expected = "violated" if not bound >= lower else "vacuous" if bound >= ceiling else "valid"
    assert status == expected


# --- bounds.validation ----------------------------------------------------------------------

finite_floats = st.floats(allow_nan=False, allow_infinity=False)


@covers("validation.check_real", "validation.check_open_unit")
@FAST
@given(x=finite_floats, unit=st.floats(5e-324, 1.0, exclude_max=True))
def test_real_checks_return_the_value(x, unit):
    assert validation.check_real("x", x, func="f") == x
    assert validation.check_real("x", np.float32(unit), func="f") == float(np.float32(unit))
    assert validation.check_open_unit("x", unit, func="f") == unit


@covers("validation.check_int")
@FAST
@given(n=st.integers(-(2**2000), 2**2000))
def test_check_int_returns_the_value(n):
    assert validation.check_int("n", n, func="f") == n
    assert validation.check_int("n", n, func="f", low=n, high=n) == n


@covers("validation.check_seed")
@FAST
@given(seed=st.integers(-(2**70), 2**70))
def test_check_seed_accepts_exactly_the_seeds_in_range(seed):
    if 0 <= seed <= validation.MAX_SEED:
        assert validation.check_seed(seed, func="f") == seed
    else:
        with pytest.raises(ValueError, match=r"'seed'.*\[0, 9223372036854775807\]"):
            validation.check_seed(seed, func="f")


@covers("validation.check_choice", "validation.check_bool")
@FAST
@given(choice=st.sampled_from(["bits", "nats", 3, None]), flag=st.booleans())
def test_choice_and_bool_return_the_value(choice, flag):
    choices = ("bits", "nats", 3, None)
    assert validation.check_choice("c", choice, func="f", choices=choices) is choice
    assert validation.check_bool("b", np.bool_(flag), func="f") is flag


@covers("validation.check_finite_array", "validation.as_real_array")
@FAST
@given(values=st.lists(finite_floats, max_size=12), ints=st.lists(st.integers(-(2**62), 2**62)))
def test_array_checks_return_the_values(values, ints):
    arr = validation.check_finite_array("x", values, func="f", ndim=1)
    assert arr.dtype == float and arr.tolist() == values
    assert validation.as_real_array("x", ints, func="f").tolist() == [float(i) for i in ints]


@covers("validation.check_distinct", "validation.check_broadcast", "validation.check_finite_result")
@FAST
@given(
    values=st.lists(finite_floats, max_size=12, unique=True),
    shape=st.lists(st.integers(1, 4), max_size=3),
)
def test_distinct_broadcast_and_finite_result_return_the_values(values, shape):
    assert validation.check_distinct("v", values, func="f") == tuple(values)
    assert validation.check_broadcast("f", x=np.ones(shape), y=1.0) == tuple(shape)
    assert validation.check_finite_result(values, func="f", x=1.0) == values
    if values:
        with pytest.raises(ValueError, match="'v'"):
            validation.check_distinct("v", [*values, values[0]], func="f")


@covers("leakage.distinct_rows")
@FAST
@given(
    rows=st.lists(st.lists(finite_floats, min_size=2, max_size=2), min_size=1, max_size=8),
    repeat=st.integers(0, 3),
)
def test_distinct_rows_counts_positive_multiplicities_summing_to_the_rows(rows, repeat):
    """Any finite rows, some repeated: positive counts summing to the number of rows,
    one per distinct row (np.unique's, which compares values)."""
    matrix = np.array(rows + rows[:repeat], dtype=float)
    counts = leakage.distinct_rows(matrix)
    assert counts.min() >= 1 and counts.sum() == len(matrix)
    assert len(counts) == len(np.unique(matrix, axis=0))


# --- completeness -----------------------------------------------------------------------------


def _public_callables() -> list[str]:
    """Qualified names of the public callables: ``__all__`` of priprune, leakage and claims,
    and the public functions defined in bounds.validation."""
    names = [
        f"{tag}.{name}"
        for tag, module in (("priprune", priprune), ("leakage", leakage), ("claims", claims))
        for name in module.__all__
        if callable(getattr(module, name))
    ]
    names += [
        f"validation.{name}"
        for name, obj in inspect.getmembers(validation, inspect.isfunction)
        if obj.__module__ == validation.__name__ and not name.startswith("_")
    ]
    return names


def test_every_public_callable_is_covered_or_exempt():
    missing = [name for name in _public_callables() if name not in COVERED | set(EXEMPT)]
    assert not missing, f"neither covered by a property test nor exempt: {missing}"


def test_exemptions_and_coverage_name_real_callables():
    known = set(_public_callables())
    assert set(EXEMPT) <= known, set(EXEMPT) - known
    assert known >= COVERED, COVERED - known
    assert not COVERED & set(EXEMPT)
    assert all(reason.strip() for reason in EXEMPT.values())
