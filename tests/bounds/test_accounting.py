"""bounds.accounting against Google's dp-accounting, numerical integration and mpmath."""

from __future__ import annotations

import functools
import logging
import math

import dp_accounting as dpa
import mpmath
import numpy as np
import pytest
import sympy as sp
from dp_accounting.rdp import rdp_privacy_accountant as dp_rdp
from scipy import integrate, stats

from pruneleak.bounds import accounting as acc
from pruneleak.bounds.accounting import rdp as acc_rdp

ORDERS = np.array(acc.DEFAULT_ORDERS)
INT_ORDERS = ORDERS[np.round(ORDERS) == ORDERS]
FRAC_ORDERS = ORDERS[np.round(ORDERS) != ORDERS]


def _random_cases(n, seed):
    """(q, sigma, steps, delta) drawn log-uniformly over the DP-SGD range."""
    rng = np.random.default_rng(seed)
    return [
        (
            float(10 ** rng.uniform(-3, -0.3)),
            float(rng.uniform(0.6, 5.0)),
            int(10 ** rng.uniform(0, 4)),
            float(10 ** rng.uniform(-8, -2)),
        )
        for _ in range(n)
    ]


CASES = _random_cases(60, seed=20240601)


@pytest.fixture(autouse=True)
def _quiet_dp_accounting():
    # dp-accounting logs a warning for every fractional order its series does not converge.
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


@functools.cache
def _dp_sampled_gaussian_curve(q, sigma):
    """dp-accounting's RDP curve on ORDERS (cached: two tests share the 60 cases)."""
    return dp_rdp._compute_rdp_poisson_subsampled_gaussian(q, sigma, ORDERS)


def _dp_epsilon(q, sigma, steps, delta, orders):
    accountant = dp_rdp.RdpAccountant(list(orders))
    accountant.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), steps)
    return accountant.get_epsilon_and_optimal_order(delta)


@pytest.mark.parametrize(("q", "sigma", "steps", "delta"), CASES)
def test_epsilon_matches_dp_accounting_on_integer_orders(q, sigma, steps, delta):
    ours, order = acc.epsilon_sampled_gaussian(q, sigma, steps, delta, orders=INT_ORDERS)
    theirs, their_order = _dp_epsilon(q, sigma, steps, delta, INT_ORDERS)
    # Same formulas in float64; 1e-6 relative is the acceptance tolerance (observed ~1e-13).
    assert ours == pytest.approx(theirs, rel=1e-6, abs=1e-12)
    assert order == their_order


@pytest.mark.parametrize(("q", "sigma", "steps", "delta"), CASES)
def test_rdp_matches_dp_accounting_or_numerical_integration(q, sigma, steps, delta):
    """Per order: integer orders agree with dp-accounting; fractional ones agree or we match quad.

    Where the two differ on fractional orders, dp-accounting (0.6.0) is the one that is off:
    its ``_compute_log_a_frac`` adds the *absolute values* of the series terms (the
    generalised binomial coefficients alternate in sign for i > alpha). That over-states
    A_alpha only slightly (~2e-4 relative at q = 0.1, sigma = 1.4, alpha = 1.1) but the RDP
    log(A_alpha)/(alpha - 1) by up to +55 % there, and it returns inf when its series has not
    converged in 1000 terms (6 of the 18 cases q in {0.01, 0.1, 0.5}, sigma in {0.8, 1.4},
    alpha in {1.1, 1.5, 2.5}); measured against 40-digit mpmath quadrature in
    test_accounting_peer_findings.py. The quadrature of the defining integral agrees with
    our signed series to ~1e-10 here (~1e-14 there).
    """
    ours = acc.rdp_sampled_gaussian(ORDERS, q=q, noise_multiplier=sigma)
    theirs = _dp_sampled_gaussian_curve(q, sigma)
    is_int = np.round(ORDERS) == ORDERS
    np.testing.assert_allclose(ours[is_int], theirs[is_int], rtol=1e-6)
    differ = ~is_int & ~np.isclose(ours, theirs, rtol=1e-6, atol=0)
    assert np.all(ours[differ] <= theirs[differ])  # dp-accounting errs on the high side
    for alpha in ORDERS[differ][::20]:  # a sample keeps the test fast
        ref = acc.log_a_sampled_gaussian_quad(alpha, q=q, noise_multiplier=sigma) / (alpha - 1)
        ours_a = float(acc.rdp_sampled_gaussian(alpha, q=q, noise_multiplier=sigma))
        # quad runs at epsrel 1e-13 on log A; 1e-8 covers the log(1 + tiny) cancellation.
        assert ours_a == pytest.approx(ref, rel=1e-8)


def test_default_orders_epsilon_never_above_dp_accounting():
    matched = 0
    for q, sigma, steps, delta in CASES:
        ours, _ = acc.epsilon_sampled_gaussian(q, sigma, steps, delta)
        theirs, _ = dp_rdp.compute_epsilon(
            ORDERS, steps * _dp_sampled_gaussian_curve(q, sigma), delta
        )
        assert ours <= theirs * (1 + 1e-9)
        matched += math.isclose(ours, theirs, rel_tol=1e-6, abs_tol=1e-12)
    # Most cases have their optimum at an order where the two agree; provenance: 43/60
    # with this seed when written (the others: fractional optimum, see the test above).
    assert matched >= 40


def test_fractional_series_against_mpmath():
    q, sigma, alpha = 0.05, 1.3, 2.5
    mpmath.mp.dps = 30
    s2 = mpmath.mpf(sigma) ** 2

    def integrand(z):
        mix = 1 - q + q * mpmath.exp((2 * z - 1) / (2 * s2))
        return mpmath.npdf(z, 0, sigma) * mix**alpha

    ref = float(mpmath.log(mpmath.quad(integrand, [-mpmath.inf, 0, alpha, mpmath.inf])))
    ours = float(acc.rdp_sampled_gaussian(alpha, q=q, noise_multiplier=sigma)) * (alpha - 1)
    # mpmath at 30 digits is exact to float precision; the series stops at exp(-36).
    assert ours == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize(("q", "sigma"), [(0.02, 1.1), (0.001, 1.5)])
def test_series_and_trapezoid_branches_agree(q, sigma):
    series, converged = acc_rdp._log_a_frac_series(FRAC_ORDERS, q, sigma)
    # Orders near 1 need more than 64 terms and fall back to the trapezoidal rule
    # (59 and 90 of the 99 orders converge for these two cases).
    assert converged.sum() >= 50
    trapezoid = acc_rdp._log_a_trapezoid(FRAC_ORDERS, q, sigma)
    # Both are accurate to ~1e-13 relative on log A (values of order 1e-6 and larger).
    np.testing.assert_allclose(series[converged], trapezoid[converged], rtol=1e-8)


def test_integer_fractional_boundary_is_continuous():
    q, sigma = 0.1, 1.0
    at_int = float(acc.rdp_sampled_gaussian(3, q=q, noise_multiplier=sigma))
    near = acc.rdp_sampled_gaussian(np.array([3 - 1e-7, 3 + 1e-7]), q=q, noise_multiplier=sigma)
    # The RDP curve is smooth in alpha: a 1e-7 step moves it by ~1e-7 relative.
    np.testing.assert_allclose(near, at_int, rtol=1e-6)


def test_sampled_gaussian_edge_cases():
    np.testing.assert_allclose(
        acc.rdp_sampled_gaussian(ORDERS, q=1.0, noise_multiplier=2.0),
        acc.rdp_gaussian(ORDERS, 2.0),
    )
    assert np.all(acc.rdp_sampled_gaussian(ORDERS, q=0.0, noise_multiplier=2.0) == 0)
    low = acc.rdp_sampled_gaussian(ORDERS, q=0.01, noise_multiplier=1.5)
    high = acc.rdp_sampled_gaussian(ORDERS, q=0.02, noise_multiplier=1.5)
    assert np.all(high > low)
    assert isinstance(acc.rdp_sampled_gaussian(2.5, q=0.01, noise_multiplier=1.0), float)


@pytest.mark.parametrize("scale", [0.3, 1.0, 4.0])
def test_laplace_rdp_matches_dp_accounting_and_integral(scale):
    ours = acc.rdp_laplace(ORDERS, scale)
    theirs = np.array([dp_rdp._laplace_rdp(1 / scale, a) for a in ORDERS])
    np.testing.assert_allclose(ours, theirs, rtol=1e-9)
    alpha = 2.7
    p, p2 = stats.laplace(0, scale).pdf, stats.laplace(1, scale).pdf
    span = 60 * scale  # the tails beyond carry exp(-60) of the mass
    value, _ = integrate.quad(
        lambda x: p(x) ** alpha * p2(x) ** (1 - alpha),
        -span,
        span,
        points=[0, 1],
        epsrel=1e-12,
        limit=200,
    )
    assert float(acc.rdp_laplace(alpha, scale)) == pytest.approx(
        math.log(value) / (alpha - 1), rel=1e-9
    )


def test_composed_laplace_matches_dp_accounting():
    accountant = dp_rdp.RdpAccountant(list(ORDERS))
    accountant.compose(dpa.LaplaceDpEvent(2.0), 30)
    accountant.compose(dpa.LaplaceDpEvent(5.0), 70)
    curve = acc.compose(acc.rdp_laplace(ORDERS, 2.0), acc.rdp_laplace(ORDERS, 5.0), counts=[30, 70])
    np.testing.assert_allclose(curve, accountant._rdp, rtol=1e-9)
    ours, order = acc.epsilon_from_rdp(ORDERS, curve, 1e-6)
    theirs, their_order = accountant.get_epsilon_and_optimal_order(1e-6)
    assert ours == pytest.approx(theirs, rel=1e-9)
    assert order == their_order


def test_zcdp_relations():
    assert acc.zcdp_from_pure_dp(0.5) == 0.125
    assert acc.zcdp_gaussian(2.0) == 0.125
    np.testing.assert_allclose(acc.rdp_from_zcdp(0.125, ORDERS), acc.rdp_gaussian(ORDERS, 2.0))
    # Laplace mechanism: exact RDP <= zCDP bound alpha eps^2 / 2 and <= eps (Mironov 2017).
    assert np.all(
        acc.rdp_laplace(ORDERS, 2.0) <= acc.rdp_from_zcdp(acc.zcdp_from_pure_dp(0.5), ORDERS)
    )
    assert np.all(acc.rdp_laplace(ORDERS, 2.0) <= 0.5)


@pytest.mark.parametrize("conversion", ["tight", "classic"])
def test_conversion_round_trip(conversion):
    curve = 1000 * acc.rdp_sampled_gaussian(ORDERS, q=0.01, noise_multiplier=1.1)
    eps, _ = acc.epsilon_from_rdp(ORDERS, curve, 1e-5, conversion=conversion)
    delta, _ = acc.delta_from_rdp(ORDERS, curve, eps, conversion=conversion)
    assert delta == pytest.approx(1e-5, rel=1e-9)


def test_conversions_match_dp_accounting_and_formulas():
    curve = 500 * acc.rdp_sampled_gaussian(ORDERS, q=0.02, noise_multiplier=1.0)
    ours, order = acc.epsilon_from_rdp(ORDERS, curve, 1e-6)
    assert (ours, order) == pytest.approx(dp_rdp.compute_epsilon(ORDERS, curve, 1e-6), rel=1e-12)
    delta = acc.delta_from_rdp(ORDERS, curve, 3.0)
    assert delta == pytest.approx(dp_rdp.compute_delta(ORDERS, curve, 3.0), rel=1e-12)
    classic, _ = acc.epsilon_from_rdp(ORDERS, curve, 1e-6, conversion="classic")
    assert classic == pytest.approx(np.min(curve + math.log(1e6) / (ORDERS - 1)))
    assert classic > ours  # the tight conversion is tighter


# ---------------------------------------------------------------------------------------
# Fed-LTP
# ---------------------------------------------------------------------------------------


def test_fedltp_eq21_as_printed_is_sampling_rate_squared():
    q, sigma, alpha, t = 0.2, 1.2, 3.5, 4
    norm0, norm1 = stats.norm(0, sigma).pdf, stats.norm(1, sigma).pdf

    def integrand(z):  # eq. 21 literally: mu1 = q N(1) + (1-q) N(0) inside 1-q+q mu1/mu0
        mu1 = q * norm1(z) + (1 - q) * norm0(z)
        return norm0(z) * (1 - q + q * mu1 / norm0(z)) ** alpha

    expectation, _ = integrate.quad(integrand, -30, 30, points=[0, alpha], epsrel=1e-12)
    literal = (t + 1) / (alpha - 1) * math.log(expectation)
    published = acc.fedltp_rho_s_published(t, q=q, noise_multiplier=sigma, alpha=alpha)
    assert published == pytest.approx(literal, rel=1e-8)
    correct = (t + 1) * acc.rdp_sampled_gaussian(alpha, q=q, noise_multiplier=sigma)
    assert published < correct  # the double mixture under-states the training RDP


def test_fedltp_published_formula_and_expression():
    kw = {"q": 0.05, "noise_multiplier": 1.4, "lambda_val": 10.0, "delta": 1e-3}
    t, alpha = 9, 3.0
    value = acc.fedltp_epsilon_published(t, alpha=alpha, **kw)
    rho_s = (t + 1) * float(acc.rdp_sampled_gaussian(alpha, q=0.05**2, noise_multiplier=1.4))
    by_hand = (
        rho_s
        + (t + 1) * alpha * (alpha - 1) / 200
        + (math.log(1e3) - math.log(alpha)) / 2
        + math.log(1 - 1 / alpha)
    )
    assert value == pytest.approx(by_hand, rel=1e-12)
    expr = acc.fedltp_epsilon_published_expr()
    names = {s.name: s for s in expr.free_symbols}
    subs = {
        names["t"]: t,
        names["alpha"]: alpha,
        names["q"]: 0.05,
        names["sigma"]: 1.4,
        names["lambda_val"]: 10.0,
        names["delta"]: 1e-3,
    }
    expr = expr.subs(subs)
    (integral,) = expr.atoms(sp.Integral)
    integrand = sp.lambdify(integral.variables[0], integral.function, "math")
    expectation, _ = integrate.quad(integrand, -30, 30, points=[0, alpha], epsrel=1e-12)
    # quad on the lambdified integrand of eq. 21 is accurate to ~1e-12 relative.
    assert float(expr.xreplace({integral: expectation})) == pytest.approx(value, rel=1e-9)


def test_fedltp_validation_term_deviation():
    a = np.array([1.5, 2.0, 4.0])
    published = acc.fedltp_rho_v_published(0, lambda_val=2.0, alpha=a)
    lemma1 = acc.rdp_from_zcdp(acc.zcdp_from_pure_dp(0.5), a)
    assert published[0] < lemma1[0] and published[1] == lemma1[1] and published[2] > lemma1[2]


def test_fedltp_corrected_matches_dp_accounting():
    q, sigma, lam, delta, t, steps = 0.0125, 1.4, 10.0, 1e-3, 19, 30
    ours, order = acc.fedltp_epsilon_corrected(
        t,
        q=q,
        noise_multiplier=sigma,
        lambda_val=lam,
        delta=delta,
        steps_per_round=steps,
        orders=INT_ORDERS,
    )
    accountant = dp_rdp.RdpAccountant(list(INT_ORDERS))
    accountant.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), (t + 1) * steps)
    accountant.compose(dpa.LaplaceDpEvent(lam), t + 1)
    theirs, their_order = accountant.get_epsilon_and_optimal_order(delta)
    assert ours == pytest.approx(theirs, rel=1e-6)
    assert order == their_order
    zcdp, _ = acc.fedltp_epsilon_corrected(
        t,
        q=q,
        noise_multiplier=sigma,
        lambda_val=lam,
        delta=delta,
        steps_per_round=steps,
        validation="zcdp",
    )
    assert (
        zcdp
        >= acc.fedltp_epsilon_corrected(
            t, q=q, noise_multiplier=sigma, lambda_val=lam, delta=delta, steps_per_round=steps
        )[0]
    )


def test_fedltp_optimal_is_minimum_over_orders():
    kw = {"q": 0.01, "noise_multiplier": 1.4, "lambda_val": 10.0, "delta": 1e-3}
    eps, order = acc.fedltp_epsilon_published_optimal(50, **kw)
    grid = acc.fedltp_epsilon_published(50, alpha=ORDERS, **kw)
    assert eps == pytest.approx(grid.min()) and order == ORDERS[np.argmin(grid)]


@pytest.mark.parametrize(
    ("func", "kwargs", "match"),
    [
        (acc.rdp_gaussian, {"orders": 1.0, "noise_multiplier": 1.0}, "orders"),
        (acc.rdp_gaussian, {"orders": [2.0, 0.5], "noise_multiplier": 1.0}, "orders"),
        (acc.rdp_gaussian, {"orders": 2.0, "noise_multiplier": -0.5}, "noise_multiplier"),
        (acc.rdp_sampled_gaussian, {"orders": 2.0, "q": 1.5, "noise_multiplier": 1.0}, "'q'"),
        (acc.rdp_sampled_gaussian, {"orders": 2.0, "q": -0.1, "noise_multiplier": 1.0}, "'q'"),
        (acc.rdp_laplace, {"orders": 2.0, "noise_multiplier": -1.0}, "noise_multiplier"),
        (acc.epsilon_from_rdp, {"orders": [2.0], "rdp": [1.0], "delta": 0.0}, "delta"),
        (acc.epsilon_from_rdp, {"orders": [2.0], "rdp": [1.0], "delta": 1.0}, "delta"),
        (acc.epsilon_from_rdp, {"orders": [2.0], "rdp": [1.0, 2.0], "delta": 0.1}, "shape"),
        (
            acc.epsilon_from_rdp,
            {"orders": [2.0], "rdp": [1.0], "delta": 0.1, "conversion": "x"},
            "conversion",
        ),
        (
            acc.epsilon_sampled_gaussian,
            {"q": 0.1, "noise_multiplier": 1.0, "steps": -1, "delta": 0.1},
            "steps",
        ),
        (
            acc.fedltp_epsilon_published,
            {
                "t": -1,
                "q": 0.1,
                "noise_multiplier": 1.0,
                "lambda_val": 1.0,
                "delta": 0.1,
                "alpha": 2.0,
            },
            "'t'",
        ),
        (
            acc.fedltp_epsilon_corrected,
            {"t": 1, "q": 0.1, "noise_multiplier": 1.0, "lambda_val": -1.0, "delta": 0.1},
            "lambda_val",
        ),
    ],
)
def test_invalid_parameters_raise(func, kwargs, match):
    with pytest.raises(ValueError, match=match):
        func(**kwargs)


@pytest.mark.parametrize(
    ("alpha", "rdp", "delta"), [(1.5, 0.3, 1e-5), (2.0, 1.0, 0.25), (32.0, 4.0, 1e-9)]
)
def test_lambdified_tight_conversion_and_rho_v_against_mpmath(alpha, rdp, delta):
    """The sympy-lambdified eq. 22 and eq. 23-24 against the printed formulas in mpmath."""
    mpmath.mp.dps = 30
    a, d = mpmath.mpf(alpha), mpmath.mpf(delta)
    # Canonne, Kamath, Steinke 2020, Prop. 12: rdp + log(1 - 1/a) - (log d + log a)/(a - 1).
    ref = rdp + mpmath.log(1 - 1 / a) - (mpmath.log(d) + mpmath.log(a)) / (a - 1)
    eps, order = acc.epsilon_from_rdp([alpha], [rdp], delta)
    # float64 against 30 digits on terms of size <= 30: 1e-13 relative.
    assert eps == pytest.approx(float(ref), rel=1e-13) and order == alpha
    rho_v = acc.fedltp_rho_v_published(4, lambda_val=3.0, alpha=alpha)
    assert rho_v == pytest.approx(float(5 * a * (a - 1) / (2 * mpmath.mpf(3) ** 2)), rel=1e-14)


# ---------------------------------------------------------------------------------------
# Extreme inputs (issue 13): finite where the exact value is, inf only for no privacy
# ---------------------------------------------------------------------------------------


def test_zero_noise_gives_inf_like_dp_accounting():
    for q, expected in [(0.1, math.inf), (1.0, math.inf), (0.0, 0.0)]:
        accountant = dp_rdp.RdpAccountant(list(INT_ORDERS))
        accountant.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(0.0)), 10)
        theirs, _ = accountant.get_epsilon_and_optimal_order(1e-5)
        ours, _ = acc.epsilon_sampled_gaussian(q, 0.0, 10, 1e-5, orders=INT_ORDERS)
        assert ours == theirs == expected
    # Laplace with no noise releases the record: inf (dp-accounting divides by zero here).
    assert np.all(acc.rdp_laplace(ORDERS, 0.0) == math.inf)
    assert acc.zcdp_gaussian(0.0) == math.inf


def test_tiny_noise_rdp_is_the_gaussian_line_or_inf():
    """sigma = 1e-100: the RDP is alpha/(2 sigma^2) to rounding (dp-accounting agrees on
    integer orders); sigma = 1e-300 (once ZeroDivisionError / nan): beyond the float range."""
    ours = acc.rdp_sampled_gaussian(INT_ORDERS, q=0.1, noise_multiplier=1e-100)
    theirs = dp_rdp._compute_rdp_poisson_subsampled_gaussian(0.1, 1e-100, INT_ORDERS)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    np.testing.assert_allclose(ours, INT_ORDERS / 2e-200, rtol=1e-12)
    assert np.all(acc.rdp_sampled_gaussian([2, 3, 2.5], q=0.1, noise_multiplier=1e-300) == np.inf)


def test_huge_noise_leaves_only_the_validation_term():
    """sigma = 1e308 (once OverflowError): the training RDP is below 1e-600, so Fed-LTP's
    corrected epsilon is that of the t + 1 Laplace releases alone (dp-accounting)."""
    t, lam, delta = 3, 1.0, 1e-3
    ours, order = acc.fedltp_epsilon_corrected(
        t, q=0.1, noise_multiplier=1e308, lambda_val=lam, delta=delta, orders=INT_ORDERS
    )
    accountant = dp_rdp.RdpAccountant(list(INT_ORDERS))
    accountant.compose(dpa.LaplaceDpEvent(lam), t + 1)
    theirs, their_order = accountant.get_epsilon_and_optimal_order(delta)
    assert ours == pytest.approx(theirs, rel=1e-9) and order == their_order
    assert np.all(acc.rdp_sampled_gaussian(ORDERS, q=0.1, noise_multiplier=1e308) == 0)


@pytest.mark.parametrize("alpha", [2.0, 5.0, 1.01, 2.5, 10.5])
def test_large_sigma_rdp_keeps_relative_accuracy(alpha):
    """sigma = 1e6: A - 1 ~ 1e-14, below the rounding of a sum around 1. Reference: mpmath
    quadrature of A - 1 at 60 digits (Mironov et al. 2019, eq. 3)."""
    q, sigma = 0.3, 1e6
    with mpmath.workdps(60):
        s, qq, a = mpmath.mpf(sigma), mpmath.mpf(q), mpmath.mpf(alpha)

        def excess(z):
            return mpmath.npdf(z, 0, s) * (
                (1 + qq * mpmath.expm1((2 * z - 1) / (2 * s**2))) ** a - 1
            )

        ref = mpmath.log1p(mpmath.quad(excess, [-mpmath.inf, -10 * s, 0, 10 * s, mpmath.inf]))
        ref = float(ref / (a - 1))
    # the excess integrand cancels at first order: 60 digits leave > 30 exact; 1e-9 relative
    assert float(acc.rdp_sampled_gaussian(alpha, q=q, noise_multiplier=sigma)) == pytest.approx(
        ref, rel=1e-9
    )


def test_laplace_rdp_at_large_scale_and_near_order_one():
    """Once 5.6e-17 at b = 1e308 and cancelling near alpha = 1: now exact to rounding."""
    b = 1e10
    with mpmath.workdps(80):
        a, bb = mpmath.mpf(3), mpmath.mpf(b)
        mix = a / (2 * a - 1) * mpmath.exp((a - 1) / bb) + (a - 1) / (2 * a - 1) * mpmath.exp(
            -a / bb
        )
        ref = float(mpmath.log(mix) / (a - 1))
    assert acc.rdp_laplace(3.0, b) == pytest.approx(ref, rel=1e-12)  # ~ alpha / (2 b^2)
    # alpha -> 1: the KL divergence 1/b + e^{-1/b} - 1 of Lap(0, b) and Lap(1, b)
    kl = 1 / 2.0 + math.expm1(-1 / 2.0)
    assert acc.rdp_laplace(1 + 1e-9, 2.0) == pytest.approx(kl, rel=1e-8)
    assert acc.rdp_laplace(1e308, 1e-300) == pytest.approx(1e300)  # -> 1/b, once inf


def test_conversions_at_tiny_rdp_and_subnormal_delta():
    # delta <= sqrt(1 - e^-rdp): rdp = 1e-38 gives 1.08e-19 (once 0: exp(-1e-38) == 1)
    delta, _ = acc.delta_from_rdp([2.0], [1e-38], 0.0)
    assert delta == pytest.approx(math.sqrt(1e-38), rel=1e-12)
    # delta = 5e-324: log(1/delta) once overflowed to inf; classic formula by hand
    eps, _ = acc.epsilon_from_rdp([2.0], [1.0], 5e-324, conversion="classic")
    assert eps == pytest.approx(1.0 - math.log(5e-324), rel=1e-14)
    eps, _ = acc.epsilon_from_rdp([2.0], [1.0], 5e-324)
    assert eps == pytest.approx(1.0 + math.log(0.5) - (math.log(5e-324) + math.log(2)), rel=1e-14)
    # rdp = 0: identical outputs, epsilon 0 even when delta^2 underflows
    assert acc.epsilon_from_rdp([1.005], [0.0], 5e-324) == (0.0, 1.005)
