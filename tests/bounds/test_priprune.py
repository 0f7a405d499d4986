"""bounds.priprune: numeric forms against the sympy forms, closed forms and scipy entropies."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from pruneleak.bounds import priprune

S = priprune.SYMBOLS
LN2 = math.log(2)

probabilities = st.floats(0.0, 1.0)
batch_sizes = st.floats(1.0, 512.0)
dims = st.integers(1, 5000)
deltas = st.floats(-372.5, 372.5)  # possible for every d* >= 1: |Delta| <= 372.5 d*
units = st.sampled_from(["bits", "nats"])


def _mp(expr, **values):
    """Evaluate a sympy expression with mpmath at 30 digits (independent of the numpy path)."""
    subs = {
        getattr(S, k): sp.Float(v, 30) if isinstance(v, float) else v for k, v in values.items()
    }
    return float(sp.N(expr.subs(subs), 30))


@settings(max_examples=25, deadline=None)
@given(p=probabilities, B=batch_sizes, d_star=dims, delta=deltas, unit=units)
def test_published_symbolic_equals_numeric(p, B, d_star, delta, unit):
    expr = priprune.single_round_bound_expr(unit=unit)
    ours = priprune.single_round_bound(p, B, d_star, delta, unit=unit)
    # float64 against 30-digit evaluation; terms reach ~1e4, so 1e-9 absolute-relative.
    assert ours == pytest.approx(
        _mp(expr, p=p, B=B, d_star=d_star, Delta=delta), rel=1e-10, abs=1e-9
    )


@settings(max_examples=25, deadline=None)
@given(
    p=st.floats(1e-9, 1 - 1e-9),
    B=batch_sizes,
    d_star=dims,
    extra=st.integers(0, 5000),
    delta=deltas,
    unit=units,
)
def test_corrected_symbolic_equals_numeric(p, B, d_star, extra, delta, unit):
    d = d_star + extra
    expr = priprune.single_round_bound_expr(unit=unit, corrected=True)
    ours = priprune.single_round_bound_corrected(p, d, B, d_star, delta, unit=unit)
    assert ours == pytest.approx(
        _mp(expr, p=p, B=B, d_star=d_star, Delta=delta, d=d), rel=1e-10, abs=1e-8
    )


@settings(max_examples=15, deadline=None)
@given(
    p=st.floats(1e-6, 1 - 1e-6),
    B=batch_sizes,
    d_star=st.integers(1, 50),
    delta=deltas,
    corrected=st.booleans(),
)
def test_proof_parts_symbolic_equal_numeric(p, B, d_star, delta, corrected):
    d = d_star + 7
    if corrected:
        numeric = {
            "A": priprune.part_a_corrected(p, d, B, d_star, delta),
            "B": priprune.part_b_corrected(B, d_star, delta),
            "C": priprune.part_c_corrected(B, d_star, delta),
            "D": priprune.part_d_corrected(B, d_star),
        }
    else:
        numeric = {
            "A": priprune.part_a_published(p, B, d_star, delta),
            "B": priprune.part_b_published(B, d_star, delta),
            "C": priprune.part_c_published(d_star, delta),
            "D": priprune.part_d_published(d_star),
        }
    for part, value in numeric.items():
        expr = priprune.part_expr(part, corrected=corrected)
        ref = _mp(expr, p=p, B=B, d_star=d_star, Delta=delta, d=d)
        assert value == pytest.approx(ref, rel=1e-10, abs=1e-9)


def _mp_hb(p):
    """Binary entropy in bits at mpmath precision, 0 log 0 = 0."""
    p = mpmath.mpf(p)
    return -sum(x * mpmath.log(x, 2) for x in (p, 1 - p) if x > 0)


def _mp_published(keep_fraction, B, d_star, delta):
    """Theorem 1 / eq. 23 as printed (PriPrune appendix), typed in mpmath, in bits."""
    ln2 = mpmath.log(2)
    return (
        1
        + mpmath.mpf(keep_fraction) / (2 * ln2)
        + 2 * mpmath.log(1 / mpmath.mpf(B), 2)
        + 2 * mpmath.mpf(delta) / ln2
        + d_star * mpmath.log(2 * mpmath.pi * mpmath.e, 2)
    )


def _mp_corrected(keep_fraction, d, B, d_star, delta):
    """d H_b + d* log2(2 pi e / B) - 2 Delta / ln 2 (module docstring, items 1-4), bits."""
    return (
        d * _mp_hb(keep_fraction)
        + d_star * mpmath.log(2 * mpmath.pi * mpmath.e / mpmath.mpf(B), 2)
        - 2 * mpmath.mpf(delta) / mpmath.log(2)
    )


# Points at the edges (p = 0, 1; B = 1) and inside; d* and Delta up to the sizes of the sims.
MP_POINTS = [
    (0.0, 1.0, 1, 0.0),
    (1.0, 3.0, 7, -2.5),
    (0.3, 20.0, 100, -50.0),
    (0.9, 256.0, 4000, 812.0),
]


@pytest.mark.parametrize(("p", "B", "d_star", "delta"), MP_POINTS)
@pytest.mark.parametrize("unit", ["bits", "nats"])
def test_lambdified_bounds_against_mpmath(p, B, d_star, delta, unit):
    """The lambdified sympy bounds against the paper's formulas typed anew in mpmath."""
    mpmath.mp.dps = 30
    scale = 1 if unit == "bits" else mpmath.log(2)
    d, kept = d_star + 11, d_star + 3
    cases = [
        (
            priprune.single_round_bound(p, B, d_star, delta, unit=unit),
            _mp_published(1 - p, B, d_star, delta),
        ),
        (
            priprune.single_round_bound_corrected(p, d, B, d_star, delta, unit=unit),
            _mp_corrected(p, d, B, d_star, delta),
        ),
        (
            priprune.multi_round_bound(p, B, d_star, delta, 5, unit=unit),
            5 * _mp_published(1 - p, B, d_star, delta),
        ),
        (
            priprune.prunefl_single_round_bound(kept, d, B, d_star, delta, unit=unit),
            _mp_published(mpmath.mpf(kept) / d, B, d_star, delta),
        ),
        (
            priprune.prunefl_single_round_bound_corrected(kept, d, B, d_star, delta, unit=unit),
            _mp_corrected(mpmath.mpf(kept) / d, d, B, d_star, delta),
        ),
        (priprune.binary_entropy(p, unit=unit), _mp_hb(p)),
    ]
    for ours, ref in cases:
        # float64 against 30 digits: terms reach ~1e4 bits, so 1e-12 relative + 1e-10 absolute.
        assert ours == pytest.approx(float(ref * scale), rel=1e-12, abs=1e-10)


def test_grid_vectorisation_matches_symbolic_lambdify():
    p, B, d_star = np.meshgrid(np.linspace(0, 1, 7), [1.0, 8.0, 64.0], [1, 10, 100], indexing="ij")
    f = sp.lambdify((S.p, S.B, S.d_star, S.Delta), priprune.single_round_bound_expr(), "numpy")
    np.testing.assert_allclose(
        priprune.single_round_bound(p, B, d_star, -3.0), f(p, B, d_star, -3.0), rtol=1e-12
    )


def test_published_value_by_hand():
    # p=0.3, B=20, d*=100, Delta=-50 nats, every log base 2 (module docstring).
    by_hand = (
        1
        + 0.7 / (2 * LN2)
        + 2 * math.log2(1 / 20)
        + 2 * (-50) / LN2
        + 100 * math.log2(2 * math.pi * math.e)
    )
    assert priprune.single_round_bound(0.3, 20, 100, -50.0) == pytest.approx(by_hand, rel=1e-14)
    assert priprune.single_round_bound(0.3, 20, 100, -50.0, unit="nats") == pytest.approx(
        by_hand * LN2, rel=1e-14
    )
    assert isinstance(priprune.single_round_bound(0.3, 20, 100, -50.0), float)


def test_corrected_is_mask_entropy_plus_twice_gaussian_entropy():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(6, 6))
    cov = a @ a.T + 0.1 * np.eye(6)
    d_star, log_pdet = priprune.spectrum_summary(np.linalg.eigvalsh(cov))
    delta = priprune.delta_from_log_pseudo_det(log_pdet)
    B, p, d = 8, 0.4, 40
    h_bits = stats.multivariate_normal(np.zeros(6), cov / B).entropy() / LN2  # scipy: nats
    mask_bits = d * stats.entropy([p, 1 - p], base=2)
    ours = priprune.single_round_bound_corrected(p, d, B, d_star, delta)
    assert ours == pytest.approx(mask_bits + 2 * h_bits, rel=1e-12)
    assert priprune.part_b_corrected(B, d_star, delta, unit="nats") == pytest.approx(
        h_bits * LN2, rel=1e-12
    )


def test_corrected_steps_differ_from_published_as_documented():
    B, d_star, delta = 16.0, 30, -7.0
    # Item 1: scaling contributes -d* log2 B instead of -log2 B.
    scale_pub = priprune.part_b_published(B, d_star, delta) - priprune.part_c_published(
        d_star, delta
    )
    scale_cor = priprune.part_b_corrected(B, d_star, delta) - priprune.part_c_corrected(
        B, d_star, delta
    )
    assert scale_pub == pytest.approx(-math.log2(B)) and scale_cor == pytest.approx(
        -d_star * math.log2(B)
    )
    # Item 2: the whitening adds -Delta instead of +Delta.
    assert priprune.part_c_published(d_star, delta) - priprune.part_d_published(
        d_star
    ) == pytest.approx(delta / LN2)
    assert priprune.part_c_corrected(B, d_star, delta) - priprune.part_d_corrected(
        B, d_star
    ) == pytest.approx(-delta / LN2)
    # Item 3: the sum of B whitened vectors has covariance B I.
    assert priprune.part_d_corrected(B, d_star) - priprune.part_d_published(
        d_star
    ) == pytest.approx(d_star / 2 * math.log2(B))


def test_multi_round_forms():
    single = priprune.single_round_bound(0.2, 10, 50, 1.0)
    assert priprune.multi_round_bound(0.2, 10, 50, 1.0, T=7) == pytest.approx(7 * single)
    per_round = priprune.multi_round_bound_per_round([0.2] * 7, 10, 50, 1.0)
    assert per_round == pytest.approx(7 * single)
    p_t, B_t = [0.1, 0.5, 0.9], [4.0, 8.0, 16.0]
    expected = sum(
        priprune.single_round_bound(p, b, 50, 1.0) for p, b in zip(p_t, B_t, strict=True)
    )
    assert priprune.multi_round_bound_per_round(p_t, B_t, 50, 1.0) == pytest.approx(expected)
    corrected = priprune.multi_round_bound_corrected_per_round(p_t, 60, B_t, 50, 1.0)
    assert corrected == pytest.approx(
        sum(
            priprune.single_round_bound_corrected(p, 60, b, 50, 1.0)
            for p, b in zip(p_t, B_t, strict=True)
        )
    )
    assert priprune.multi_round_bound_corrected(0.2, 60, 10, 50, 1.0, 7) == pytest.approx(
        7 * priprune.single_round_bound_corrected(0.2, 60, 10, 50, 1.0)
    )


def test_per_round_symbolic_sum():
    expr = priprune.multi_round_bound_per_round_expr()
    values = expr.subs(S.T, 3).doit()
    idx = {str(b): b for b in values.atoms(sp.Indexed)}
    p_t, B_t, ds_t, dl_t = [0.1, 0.5, 0.9], [4.0, 8.0, 16.0], [5, 6, 7], [0.5, -1.0, 2.0]
    subs = {}
    for t in range(3):
        subs[idx[f"p[{t + 1}]"]] = p_t[t]
        subs[idx[f"B[{t + 1}]"]] = B_t[t]
        subs[idx[f"d^*[{t + 1}]"]] = ds_t[t]
        subs[idx[f"Delta[{t + 1}]"]] = dl_t[t]
    assert float(values.subs(subs)) == pytest.approx(
        priprune.multi_round_bound_per_round(p_t, B_t, ds_t, dl_t), rel=1e-12
    )


def test_symbolic_derivatives():
    expr = priprune.single_round_bound_expr()
    assert sp.simplify(sp.diff(expr, S.p) + 1 / (2 * sp.log(2))) == 0
    assert sp.simplify(sp.diff(expr, S.B) + 2 / (S.B * sp.log(2))) == 0
    corrected = priprune.multi_round_bound_expr(corrected=True)
    assert sp.simplify(sp.diff(corrected, S.B) + S.T * S.d_star / (S.B * sp.log(2))) == 0


def test_prunefl_forms():
    union = priprune.prunefl_single_round_bound(600, 1000, 8, 20, 0.0)
    pbar = priprune.prunefl_single_round_bound(500, 1000, 8, 20, 0.0, form="pbar")
    assert pbar < union  # |P-bar| <= |P-bar u A|: the published second "<=" points the wrong way
    expr = priprune.prunefl_single_round_bound_expr()
    assert union == pytest.approx(_mp(expr, kept=600, d=1000, B=8.0, d_star=20, Delta=0.0))
    corrected = priprune.prunefl_single_round_bound_corrected(600, 1000, 8, 20, 0.0)
    expr_c = priprune.prunefl_single_round_bound_expr(corrected=True)
    assert corrected == pytest.approx(_mp(expr_c, kept=600, d=1000, B=8.0, d_star=20, Delta=0.0))


@pytest.mark.parametrize("p", [0.0, 0.1, 0.3, 0.5, 0.77, 1.0])
def test_binary_entropy_and_taylor_series(p):
    ref = stats.entropy([p, 1 - p], base=2) if 0 < p < 1 else 0.0
    assert priprune.binary_entropy(p) == pytest.approx(ref, abs=1e-15)
    # Tail after N terms: sum_{n>N} x^(2n)/(n(2n-1)) < 1/(2N), times 1/(2 ln 2) (worst at p=0, 1).
    gap = priprune.binary_entropy_taylor(p, 2000) - ref
    assert -1e-15 <= gap <= 1 / (4 * 2000 * LN2)
    assert priprune.binary_entropy_taylor(p, 1) >= priprune.binary_entropy(p) - 1e-15
    assert priprune.mask_entropy_published(p) >= priprune.binary_entropy(p)


def test_spectrum_summary_matches_numpy():
    rng = np.random.default_rng(0)
    g = rng.normal(size=(5, 12))  # rank 5 in 12 dimensions
    cov = np.cov(g, rowvar=False)  # centred (Assumption 1)
    eig = np.linalg.eigvalsh(cov)
    d_star, log_pdet = priprune.spectrum_summary(eig)
    assert d_star == np.linalg.matrix_rank(cov) == 4  # 5 samples, centred: rank 4
    assert log_pdet == pytest.approx(np.sum(np.log(eig[-4:])), rel=1e-12)
    assert priprune.delta_from_log_pseudo_det(log_pdet) == pytest.approx(-log_pdet / 2)


@pytest.mark.parametrize(
    ("func", "args", "kwargs", "match"),
    [
        (
            priprune.single_round_bound,
            (-0.1, 10, 5, 0.0),
            {},
            "'p' parameter of single_round_bound",
        ),
        (priprune.single_round_bound, (1.3, 10, 5, 0.0), {}, "'p'"),
        (priprune.single_round_bound, (0.3, 0.5, 5, 0.0), {}, "'B'"),
        (priprune.single_round_bound, (0.3, 10, 0, 0.0), {}, "'d_star'"),
        (priprune.single_round_bound, (0.3, 10, 5, float("nan")), {}, "'delta'"),
        (priprune.single_round_bound, (0.3, 10, 5, 0.0), {"unit": "dits"}, "'unit'"),
        (priprune.single_round_bound, ([0.3, 2.0], 10, 5, 0.0), {}, "Got 2.0"),
        (priprune.multi_round_bound, (0.3, 10, 5, 0.0, 0), {}, "'T'"),
        (priprune.single_round_bound_corrected, (0.3, 4, 10, 5, 0.0), {}, "at least d_star"),
        (priprune.multi_round_bound_per_round, (0.3, 10, 5, 0.0), {}, "per-round"),
        (priprune.prunefl_single_round_bound, (20, 10, 10, 5, 0.0), {}, "'kept'"),
        (priprune.spectrum_summary, ([1.0, -0.5],), {}, "positive semi-definite"),
        (priprune.spectrum_summary, ([0.0, 0.0],), {}, "positive eigenvalue"),
        # Issue 13: each was an inf/-inf, a wrapped integer, a dropped imaginary part, a
        # d* = 0, numpy's own message or a silently accepted flag.
        (priprune.single_round_bound, (0.3, 10, 5, 1e308), {}, r"'delta'.*Got 1e\+308"),
        (priprune.single_round_bound, (0.3, 10, 5, -1863.0), {}, r"\[-1862.5, 1862.5\]"),
        (
            priprune.single_round_bound,
            (0.3, 10, np.array([2**64 - 1], dtype=np.uint64), 0.0),
            {},
            r"'d_star'.*Got 18446744073709551615",
        ),
        (priprune.multi_round_bound, (0.3, 10, 5, 0.0, 2**63), {}, r"'T'.*9223372036854775807"),
        (priprune.single_round_bound, (np.array([0.3 + 1j]), 10, 5, 0.0), {}, "complex"),
        (priprune.single_round_bound, ([[0.3], [0.1, 0.2]], 10, 5, 0.0), {}, "rectangular"),
        (
            priprune.single_round_bound,
            ([0.1, 0.2], [8, 8, 8], 5, 0.0),
            {},
            r"must broadcast.*p \(2,\), B \(3,\)",
        ),
        (
            priprune.prunefl_single_round_bound,
            ([1, 30], [40, 20], 10, 5, 0.0),
            {},
            "Got kept=30 > d=20",
        ),
        (priprune.multi_round_bound_per_round, ([], 10, 5, 0.0), {}, "at least one round"),
        (priprune.binary_entropy_taylor, (0.3, 2**20 + 1), {}, "'n_terms'"),
        (priprune.spectrum_summary, ([2.0, 1.0],), {"rtol": 1.0}, r"'rtol'.*\(0, 1\)"),
        (priprune.spectrum_summary, ([],), {}, "non-empty"),
        (priprune.spectrum_summary, (["1.0"],), {}, "real numbers"),
        (priprune.single_round_bound_expr, (), {"corrected": "yes"}, "'corrected'"),
        (priprune.part_expr, ("A",), {"corrected": 1}, "'corrected'"),
    ],
)
def test_invalid_parameters_raise(func, args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        func(*args, **kwargs)


# --- Hardening (issue 13) ---------------------------------------------------------------


@pytest.mark.parametrize("d_star", [1, 5, 4000])
@pytest.mark.parametrize("sign", [-1, 1])
def test_delta_domain_edge_is_accepted_and_finite(d_star, sign):
    # |Delta| <= 372.5 d*: the largest |log-determinant| / 2 of d* float64 eigenvalues.
    delta = sign * 372.5 * d_star
    mpmath.mp.dps = 30
    assert priprune.single_round_bound(0.4, 8.0, d_star, delta) == pytest.approx(
        float(_mp_published(0.6, 8.0, d_star, delta)), rel=1e-12
    )
    beyond = np.nextafter(delta, sign * np.inf)
    with pytest.raises(ValueError, match="The 'delta' parameter of single_round_bound"):
        priprune.single_round_bound(0.4, 8.0, d_star, beyond)


def test_extreme_spectra_give_a_delta_inside_the_domain():
    # The float64 extremes: every eigenvalue at 2**-1074 or at the largest float.
    for eig in ([5e-324] * 7, [1.7976931348623157e308] * 7, [5e-324, 1.7976931348623157e308]):
        d_star, log_pdet = priprune.spectrum_summary(np.array(eig))
        delta = priprune.delta_from_log_pseudo_det(log_pdet)
        assert abs(delta) <= 372.5 * d_star
        assert math.isfinite(priprune.multi_round_bound(0.5, 1e308, d_star, delta, 2**62))


def test_integer_arrays_beyond_2_62_do_not_wrap():
    # 2 * d_star in int64 wrapped to a negative number above 2**62; exact reference in mpmath.
    mpmath.mp.dps = 40
    d_star = 2**62 + 12345
    ours = priprune.single_round_bound_corrected(
        0.5, np.array([d_star]), 8.0, np.array([d_star]), 1.0
    )
    ref = _mp_corrected(0.5, d_star, 8.0, d_star, 1.0)
    assert ours[0] == pytest.approx(float(ref), rel=1e-14)
    big_t = priprune.multi_round_bound(0.5, 8.0, np.array([d_star]), 1.0, np.array([2**63 - 1]))
    assert big_t[0] == pytest.approx(float((2**63 - 1) * _mp_published(0.5, 8.0, d_star, 1.0)))


def test_per_round_sum_of_one_round_is_the_single_round():
    single = priprune.single_round_bound(0.2, 4.0, 3, -1.0)
    assert priprune.multi_round_bound_per_round([0.2], 4.0, 3, -1.0) == single


def test_taylor_series_in_chunks_equals_the_partial_sum():
    # 3000 terms for 1000 values of p: three chunks of 1048 terms; reference in mpmath.
    mpmath.mp.dps = 30
    p = np.linspace(0.0, 1.0, 1000)
    ours = priprune.binary_entropy_taylor(p, 3000)
    for i in (0, 137, 500, 999):
        x = 1 - 2 * mpmath.mpf(p[i])
        tail = mpmath.fsum(x ** (2 * n) / (n * (2 * n - 1)) for n in range(1, 3001))
        assert ours[i] == pytest.approx(float(1 - tail / (2 * mpmath.log(2))), abs=1e-13)
    assert priprune.binary_entropy_taylor(0.5, 2**20) == 1.0  # the cap itself is allowed
