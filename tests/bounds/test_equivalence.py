"""bounds.equivalence: Huang et al.'s quantities against quadrature, sympy and Monte Carlo."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from pruneleak.bounds import equivalence as eq


@pytest.mark.parametrize("order", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("one_sided", [False, True])
def test_truncated_moments_match_quadrature(order, one_sided):
    a, sigma = 0.7, 1.3
    lo = 0.0 if one_sided else -a
    ref, _ = integrate.quad(lambda y: y**order * stats.norm(0, sigma).pdf(y), lo, a, epsrel=1e-13)
    ours = eq.truncated_gaussian_moment(order, a, sigma, one_sided=one_sided)
    assert ours == pytest.approx(ref, rel=1e-11, abs=1e-15)


def test_claim_c4_is_the_conditional_variance():
    a = np.array([0.05, 0.5, 2.0])
    conditional = stats.truncnorm(-a, a).var()
    np.testing.assert_allclose(eq.claim_c4_variance_published(a), conditional, rtol=1e-9)
    zeroed = eq.truncated_gaussian_moment(2, a, 1.0)  # Var[x 1{|x| <= a}], the stated quantity
    assert np.all(zeroed < conditional)
    # Small a: the conditional variance is a^2/3, not the published (5/6) a^2.
    assert eq.claim_c4_variance_published(0.01) == pytest.approx(0.01**2 / 3, rel=1e-4)


def test_laplace_fourth_moment():
    assert eq.laplace_fourth_moment(1.7) == pytest.approx(stats.laplace(0, 1.7).moment(4))


def _columns(m, d, sigma_a, n, seed):
    return np.random.default_rng(seed).normal(0, sigma_a, size=(n, m, d))


def test_sensitivity_bounds_monte_carlo():
    m, d, sigma_a, delta, n = 40, 8, 0.3, 0.05, 3000
    A = _columns(m, d, sigma_a, n, seed=5)
    l1 = np.abs(A).sum(axis=1).max(axis=1)  # max_k ||A_{*,k}||_1 per draw
    l2 = np.sqrt((A**2).sum(axis=1)).max(axis=1)
    # Failure frequencies must stay below delta; 3000 draws give a standard error of 0.004.
    assert np.mean(l1 > eq.gs1_bound_corrected(m, d, sigma_a, delta)) <= delta
    assert np.mean(l2 > eq.gs2_bound_corrected(m, d, sigma_a, delta)) <= delta
    assert np.mean(l1 > eq.gs1_bound(m, d, sigma_a, delta)) == 0.0  # D.2 holds (loosely)
    # D.3's statement has no sigma_A: with sigma_A = 10 it fails on every draw.
    big = _columns(m, d, 10.0, 200, seed=6)
    l2_big = np.sqrt((big**2).sum(axis=1)).max(axis=1)
    assert np.mean(l2_big > eq.gs2_bound(m, d, 10.0, delta)) == 1.0


@settings(max_examples=20, deadline=None)
@given(
    sigma=st.floats(0.1, 1e4),
    sigma_a=st.floats(1e-4, 10.0),
    m=st.integers(1, 10_000),
    d=st.integers(1, 1000),
    delta=st.floats(1e-6, 0.99),
)
def test_theorem_epsilons_symbolic_equal_numeric(sigma, sigma_a, m, d, delta):
    values = {"sigma": sigma, "sigma_A": sigma_a, "m": m, "d": d, "delta_dp": delta}
    for theorem, func in (("E.1", eq.epsilon_dp_theorem_e1), ("E.2", eq.epsilon_dp_theorem_e2)):
        expr = eq.epsilon_dp_theorem_expr(theorem=theorem)
        subs = {s: sp.Float(values[s.name], 30) for s in expr.free_symbols}
        ref = float(sp.N(expr.subs(subs), 30))
        assert func(sigma, sigma_a, m, d, delta) == pytest.approx(ref, rel=1e-11)


def test_sigma_for_epsilon_round_trip_and_table1():
    kw = {"sigma_a": 0.02, "m": 200, "d": 20, "delta_dp": 0.1}
    sigma = eq.sigma_for_epsilon_dp(0.5, **kw)
    assert eq.epsilon_dp_theorem_e2(sigma, **kw) == pytest.approx(0.5)
    sigma1 = eq.sigma_for_epsilon_dp(0.5, theorem="E.1", **kw)
    assert eq.epsilon_dp_theorem_e1(sigma1, **kw) == pytest.approx(0.5)
    assert eq.epsilon_dp_table1(3.0, theorem="E.2", **kw) == pytest.approx(
        eq.epsilon_dp_theorem_e2(3.0, **kw) / 2
    )
    grid = eq.epsilon_dp_theorem_e2(np.array([1.0, 2.0, 4.0]), **kw)
    np.testing.assert_allclose(grid * [1, 2, 4], grid[0])


def test_remark_e3_and_proof_form():
    params = eq.remark_e3_parameters(100)
    assert params["sigma"] * params["sigma_a"] == pytest.approx(1.0)
    eps = eq.epsilon_dp_theorem_e2(params["sigma"], params["sigma_a"], 100, 10, 0.1)
    assert eps > 2 * math.log(100 / 0.1)  # far above the paper's budget 0.5 (item 7)
    # The proof's floor 1/6 r^2 - 1/5 r^1.5 log(m/delta) is vacuous for r = a/sigma_A = 1.
    assert eq.epsilon_dp_proof_e2(100.0, 0.01, 0.01, 100, 10, 0.1) == math.inf
    r, m, delta = 200.0, 100, 0.1
    floor = r**2 / 6 - r**1.5 / 5 * math.log(m / delta)
    by_hand = 2 * (m + 4 * math.sqrt(m) * math.log(m * 10 / delta) ** 1.5) / (50.0 * floor)
    assert eq.epsilon_dp_proof_e2(50.0, 0.01, r * 0.01, m, 10, delta) == pytest.approx(by_hand)


def test_lemma_b5_part2_is_false_in_its_own_regime():
    m, delta, sigma_a = 10, 0.05, 1.0
    a = 20 * math.log(m / delta) * sigma_a
    floor = eq.lemma_b5_part2_floor(a, sigma_a, m, delta)
    rng = np.random.default_rng(2)
    y = rng.normal(0, sigma_a, size=(2000, m, 6))
    abar = np.where((y >= 0) & (y <= a), y, 0.0)
    x = np.full(6, 1 / 6)  # x >= 0, sum 1 (the lemma's x)
    assert floor > (abar @ x).max()  # the claimed floor exceeds every sampled (A-bar x)_i
    with pytest.raises(ValueError, match="20 log"):
        eq.lemma_b5_part2_floor(a / 2, sigma_a, m, delta)


def test_lemma_b1_threshold_holds_by_monte_carlo():
    a, sigma, delta, n = 0.5, 1.0, 0.05, 5000
    x = np.random.default_rng(1).normal(size=30)
    y = np.random.default_rng(4).normal(0, sigma, size=(n, 30))
    u = np.where(np.abs(y) <= a, y, 0.0)
    threshold = eq.lemma_b1_threshold(np.linalg.norm(x), a, sigma, delta)
    assert np.mean(np.abs(u @ x) >= threshold) <= delta


def test_required_width_is_the_smallest_tail_solution():
    kw = {"eps_ap": 2.0, "delta_ap": 0.2, "a": 0.02, "sigma": 1.0, "sigma_a": 0.05}
    m = eq.required_width(**kw)
    widths = np.arange(1, m + 2000)
    holds = widths >= eq.part2_width_rhs(widths, **kw)
    assert holds[m - 1 :].all()  # holds from m on (checked 2000 further widths)
    assert m == 1 or not holds[m - 2]
    big = eq.required_width(0.05, 0.1, a=0.01, sigma=100.0, sigma_a=0.01)
    assert big >= eq.part2_width_rhs(
        big, eps_ap=0.05, delta_ap=0.1, a=0.01, sigma=100.0, sigma_a=0.01
    )


@pytest.mark.parametrize("pruning", ["magnitude", "folded"])
def test_pruned_row_moments_match_monte_carlo(pruning):
    a, sigma_a, n = 0.8, 1.0, 200_000
    x = np.abs(np.random.default_rng(8).normal(size=5))
    x /= np.linalg.norm(x)
    y = np.random.default_rng(9).normal(0, sigma_a, size=(n, 5))
    keep = (np.abs(y) <= a) if pruning == "magnitude" else (y >= 0) & (y <= a)
    row = np.where(keep, y, 0.0) @ x
    m2, m4 = eq.pruned_row_moments(x, a=a, sigma_a=sigma_a, pruning=pruning)
    # Five standard errors of the sample moments.
    assert abs(np.mean(row**2) - m2) < 5 * np.std(row**2) / math.sqrt(n)
    assert abs(np.mean(row**4) - m4) < 5 * np.std(row**4) / math.sqrt(n)


def test_required_width_corrected_by_monte_carlo():
    a, sigma_a, sigma, eps_ap, delta_ap = 1.0, 1.0, 0.3, 0.5, 0.2
    x = np.full(4, 0.5)
    m2, m4 = eq.pruned_row_moments(x, a=a, sigma_a=sigma_a)
    assert eq.closeness_mean_square(sigma, m2) < eps_ap**2
    m = eq.required_width_corrected(eps_ap, delta_ap, sigma=sigma, row_m2=m2, row_m4=m4)
    rng = np.random.default_rng(10)
    y = rng.normal(0, sigma_a, size=(2000, m, 4))
    row = np.where(np.abs(y) <= a, y, 0.0) @ x
    z = (sigma * row * rng.laplace(0, 1, size=row.shape)) ** 2
    # Chebyshev is conservative; the empirical failure rate sits well below delta_ap.
    assert np.mean(z.mean(axis=1) >= eps_ap**2) <= delta_ap
    assert (
        eq.required_width_corrected(eps_ap, delta_ap, sigma=10.0, row_m2=m2, row_m4=m4) == math.inf
    )


def test_privacy_loss_unbounded_with_input_dependent_scale():
    y = np.array([[0.0], [10.0], [100.0]])
    loss = eq.privacy_loss(y, [0.0], [2.0], [0.0], [1.0])
    assert np.all(np.diff(loss) > 0) and loss[-1] > 40  # grows like |y| (1/1 - 1/2)
    same = eq.privacy_loss(y, [0.0], [1.0], [0.3], [1.0])
    assert np.all(np.abs(same) <= 0.3 + 1e-12)  # fixed scale: bounded by |shift| / b
    assert eq.epsilon_dp_fixed_scale(2.0, 0.5, 3.0) == pytest.approx(3.0)


@pytest.mark.parametrize(
    ("func", "args", "kwargs", "match"),
    [
        (eq.epsilon_dp_theorem_e2, (0.0, 0.1, 10, 5, 0.1), {}, "'sigma'"),
        (eq.epsilon_dp_theorem_e2, (1.0, 0.1, 0, 5, 0.1), {}, "'m'"),
        (eq.epsilon_dp_theorem_e2, (1.0, 0.1, 10, 5, 1.0), {}, "'delta_dp'"),
        (eq.epsilon_dp_theorem_e2, (1.0, 0.1, 10, 5, 0.1), {"gs1": -1.0}, "'gs1'"),
        (eq.lemma_b1_threshold, (1.0, 0.5, 1.0, 0.2), {}, "'delta'"),
        (eq.gs2_bound, (10, 5, 0.1, 0.1), {"form": "lemma"}, "'form'"),
        (eq.required_width, (0.0, 0.1), {"a": 1.0, "sigma": 1.0, "sigma_a": 1.0}, "'eps_ap'"),
        (eq.required_width, (0.1, 1.5), {"a": 1.0, "sigma": 1.0, "sigma_a": 1.0}, "'delta_ap'"),
        (
            eq.pruned_row_moments,
            (np.ones(3),),
            {"a": 1.0, "sigma_a": 1.0, "pruning": "x"},
            "'pruning'",
        ),
        (
            eq.required_width_corrected,
            (0.1, 0.1),
            {"sigma": 1.0, "row_m2": 1.0, "row_m4": 0.5},
            "'row_m4'",
        ),
        (eq.truncated_gaussian_moment, (9, 1.0, 1.0), {}, "'order'"),
    ],
)
def test_invalid_parameters_raise(func, args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        func(*args, **kwargs)


@pytest.mark.parametrize(
    ("sigma", "sigma_a", "m", "d", "delta"),
    [(1.0, 1.0, 1, 1, 0.5), (3.0, 0.02, 200, 20, 0.1), (1e3, 5.0, 10_000, 784, 1e-6)],
)
def test_lambdified_theorems_against_mpmath(sigma, sigma_a, m, d, delta):
    """Lemma D.2 and Theorems E.1/E.2 as printed (Huang et al.), typed anew in mpmath."""
    mpmath.mp.dps = 30
    s, sa, dl = mpmath.mpf(sigma), mpmath.mpf(sigma_a), mpmath.mpf(delta)
    gs1 = sa * m + 4 * sa * mpmath.sqrt(m) * mpmath.log(m * d / dl) ** 1.5
    # float64 against 30 digits; the largest term is ~1e9: 1e-12 relative.
    assert eq.gs1_bound(m, d, sigma_a, delta) == pytest.approx(float(gs1), rel=1e-12)
    e1 = 2 * gs1 * (m / dl) / (s * sa)
    e2 = 2 * gs1 * mpmath.log(m / dl) / (s * sa)
    assert eq.epsilon_dp_theorem_e1(sigma, sigma_a, m, d, delta) == pytest.approx(
        float(e1), rel=1e-12
    )
    assert eq.epsilon_dp_theorem_e2(sigma, sigma_a, m, d, delta) == pytest.approx(
        float(e2), rel=1e-12
    )


# ---------------------------------------------------------------------------------------
# Extreme inputs (issue 13): finite where the exact value is (references in mpmath)
# ---------------------------------------------------------------------------------------


def test_theorem_epsilon_does_not_overflow_through_sigma_a():
    """GS_1 of D.2 is proportional to sigma_A, which cancels: sigma_A = 1e300 once gave inf."""
    at_one = eq.epsilon_dp_theorem_e2(2.0, 1.0, 100, 10, 0.1)
    assert eq.epsilon_dp_theorem_e2(2.0, 1e300, 100, 10, 0.1) == pytest.approx(at_one, rel=1e-13)
    mpmath.mp.dps = 30
    ref = 2 * (100 + 4 * mpmath.sqrt(100) * mpmath.log(100 * 10 / mpmath.mpf("0.1")) ** 1.5)
    ref *= mpmath.log(100 / mpmath.mpf("0.1")) / 2
    assert at_one == pytest.approx(float(ref), rel=1e-12)


def test_large_widths_do_not_wrap_around():
    """m d = 1e19 exceeds int64: once nan (log of a wrapped negative product)."""
    m, d, sigma_a, delta = 10**9, 10**10, 1.0, 0.01
    mpmath.mp.dps = 30
    ref = m + 4 * mpmath.sqrt(m) * mpmath.log(mpmath.mpf(m) * d / mpmath.mpf(delta)) ** 1.5
    assert eq.lemma_d1_threshold(m, d, sigma_a, delta) == pytest.approx(float(ref), rel=1e-12)
    with pytest.raises(ValueError, match="'m' parameter of gs1_bound"):
        eq.gs1_bound(10**30, 1, 1.0, 0.1)  # once a TypeError from numpy's object arrays


@pytest.mark.parametrize("order", [0, 2, 4, 8])
def test_truncated_moment_when_sigma_dwarfs_a(order):
    """sigma = 1e154 once gave nan (inf * 0); the density is flat on [0, a]:
    E[y^k 1{0 <= y <= a}] = a^(k+1) / ((k+1) sigma sqrt(2 pi)) up to (a/sigma)^2."""
    a, sigma = 2.0, 1e154
    flat = a ** (order + 1) / ((order + 1) * sigma * math.sqrt(2 * math.pi))
    ours = eq.truncated_gaussian_moment(order, a, sigma, one_sided=True)
    assert ours == pytest.approx(flat, rel=1e-13)


def test_row_moments_of_a_large_input_are_finite():
    """x = 1.16e77: x^4 alone overflows and the cumulants cancelled to -inf; a single
    coordinate gives E[(ux)^2] = E[u^2] x^2 and E[(ux)^4] = E[u^4] x^4 exactly."""
    x, a, sigma_a = 1.157920892373162e77, 1.0, 1.0
    m2, m4 = eq.pruned_row_moments(np.array([x]), a=a, sigma_a=sigma_a)
    assert m2 == pytest.approx(eq.truncated_gaussian_moment(2, a, sigma_a) * x**2, rel=1e-12)
    assert m4 == pytest.approx(eq.truncated_gaussian_moment(4, a, sigma_a) * x**2 * x**2, rel=1e-12)


def test_small_threshold_variance_and_cancelling_privacy_loss():
    # Claim C.4 at a = 1e-100: a^2/3 (the printed form rounds to 0 there)
    assert eq.claim_c4_variance_published(1e-100) == pytest.approx(1e-200 / 3, rel=1e-12)
    # |y - mu_i| / b = 9e308 and 1e309 overflow alone; their difference is -1e308
    loss = eq.privacy_loss([1e300], [0.0], [1e-9], [1e299], [1e-9])
    assert loss == pytest.approx(-1e308, rel=1e-12)
    assert eq.privacy_loss([1e300], [0.0], [1e-10], [0.0], [1e-10]) == 0.0


def test_width_beyond_the_float_range_is_refused():
    """eps_ap = 1e-300 puts Part 2's width near 1e1200: once OverflowError, now a ValueError
    naming the inputs (required_width_corrected at the same point: the mean dominates, inf)."""
    with pytest.raises(ValueError, match=r"beyond the float range.*eps_ap=1e-300"):
        eq.required_width(1e-300, 0.1, a=1.0, sigma=1.0, sigma_a=1.0)
    assert eq.required_width_corrected(1e-300, 0.1, sigma=1.0, row_m2=1.0, row_m4=3.0) == math.inf
