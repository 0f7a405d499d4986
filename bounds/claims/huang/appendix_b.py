"""Appendix B of Huang et al.: concentration of truncated and Gaussian inner products (B.1-B.5).

Part of :mod:`bounds.claims.huang`; ``CLAIMS`` lists this appendix's claims in report order.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
from scipy import optimize, special

from pruneleak.bounds import equivalence as eq
from pruneleak.bounds.claims.checks import (
    GridCheck,
    MonteCarloCheck,
    Param,
    SymbolicCheck,
)
from pruneleak.bounds.claims.claim import Claim
from pruneleak.bounds.claims.huang.common import (
    _MC_SAMPLES,
    _R,
    _RA,
    _a,
    _moment_check,
    _sig,
    _truncated,
    _unit_vector,
)

_B1_D = 32


def _b1_sampler(rng, n, r, delta):
    u = _truncated(rng, (n, _B1_D), r)
    t = eq.lemma_b1_threshold(1.0, r, 1.0, delta)
    return np.abs(u @ _unit_vector(_B1_D)) >= t


B1 = Claim(
    id="huang.B1",
    paper="huang",
    location="Lemma B.1",
    statement=(
        "For u_i = y_i 1{|y_i| <= a}, y_i ~ N(0, sigma^2), fixed x and delta in (0, 1/10): "
        "Pr[|<u, x>| >= 10 ||x||_2 a (sqrt(a/sigma) + 1) log(1/delta)] <= delta."
    ),
    checks=(
        MonteCarloCheck(
            sampler=_b1_sampler,
            claimed=lambda r, delta: delta,
            points=tuple(
                {"r": r, "delta": dl} for r in (0.1, 1.0, 4.0, 10.0) for dl in (0.01, 0.09)
            ),
            relation="<=",
            statistic="probability",
            samples=_MC_SAMPLES,
            true_label=f"Pr[|<u,x>| >= threshold] (d = {_B1_D})",
            claimed_label="delta",
            labels={"r": _R},
        ),
    ),
)


def _b1_proof_t(r, c, delta):
    """The proof's t, ||x||_2 = sigma = 1: 5 a^1.5 sqrt(L) + 5 ||x||_inf a L, L = log(1/delta)."""
    lg = -np.log(delta)
    return 5 * r**1.5 * np.sqrt(lg) + 5 * c * r * lg


def _b1_bernstein_log(r, c, delta):
    """log of Bernstein's bound at the proof's t: -(t^2/2)/(a^3 + a ||x||_inf t/3) (Lemma A.3)."""
    t = _b1_proof_t(r, c, delta)
    return -(t**2 / 2) / (r**3 + r * c * t / 3)


_B1_PROOF_PARAMS = (
    Param("r", 1e-3, 1e3, scale="log", points=31, label=_R),
    Param("c", 1e-3, 1.0, scale="log", points=13, label="||x||_inf/||x||_2"),
    Param("delta", 1e-12, 0.099, scale="log", points=13),
)

B1_PROOF_T = Claim(
    id="huang.B1.proof_t",
    paper="huang",
    location="Lemma B.1 (proof, choice of t)",
    statement=(
        "With t = 5 ||x||_2 a^1.5 sigma^-0.5 sqrt(log(1/delta)) + 5 ||x||_inf a log(1/delta), "
        "Bernstein's bound exp(-(t^2/2)/(||x||_2^2 a^3/sigma + a ||x||_inf t/3)) is at most "
        "delta, and t <= 10 ||x||_2 a (sqrt(a/sigma) + 1) log(1/delta)."
    ),
    checks=(
        GridCheck(
            true=_b1_bernstein_log,
            claimed=lambda r, c, delta: np.log(delta) + 0 * r * c,
            params=_B1_PROOF_PARAMS,
            relation="<=",
            true_label="log Bernstein bound at the proof's t (||x||_2 = sigma = 1)",
            claimed_label="log delta",
        ),
        GridCheck(
            true=_b1_proof_t,
            claimed=lambda r, c, delta: eq.lemma_b1_threshold(1.0, r, 1.0, delta) + 0 * c,
            params=_B1_PROOF_PARAMS,
            relation="<=",
            true_label="the proof's t",
            claimed_label="10 ||x||_2 a (sqrt(a/sigma) + 1) log(1/delta)",
        ),
    ),
    notes=(
        "Both directions needed: t^2 >= 25 L ||x||^2 a^3/sigma and t >= 5 ||x||_inf a L give "
        "t^2/2 >= L (variance + M t/3); ||x||_inf <= ||x||_2 and sqrt(L) <= L (L >= log 10) "
        "give t <= the lemma's threshold. Scale-free: ||x||_2 = sigma = 1, c = ||x||_inf/||x||_2."
    ),
)


_B2_D = 16


def _b2_sampler(rng, n, m, r, delta):
    x = _unit_vector(_B2_D)
    A = _truncated(rng, (n, m, _B2_D), r)
    norm2 = np.sum((A @ x) ** 2, axis=1)
    mean = m * eq.truncated_gaussian_moment(2, r, 1.0)
    return np.abs(norm2 - mean) >= eq.lemma_b2_threshold(m, 1.0, r, 1.0, delta)


B2 = Claim(
    id="huang.B2",
    paper="huang",
    location="Lemma B.2",
    statement=(
        "For A with i.i.d. entries y 1{|y| <= a}, y ~ N(0, sigma^2), fixed x, delta in "
        "(0, 1/10): Pr[| ||Ax||^2 - E||Ax||^2 | >= 1000 m ||x||^2 (sigma^2 + a^2) "
        "log^3(m/delta)] <= delta."
    ),
    checks=(
        MonteCarloCheck(
            sampler=_b2_sampler,
            claimed=lambda m, r, delta: delta,
            points=tuple({"m": m, "r": r, "delta": 0.05} for m in (16, 128) for r in (0.5, 3.0)),
            relation="<=",
            statistic="probability",
            samples=_MC_SAMPLES // 2,
            true_label=f"Pr[deviation >= threshold] (d = {_B2_D})",
            claimed_label="delta",
            labels={"r": _R},
        ),
    ),
)


def _b2_proof_t(m, r, delta):
    """The proof's t / (m ||x||^2 sigma^2): 50 L_1 (1 + 100 r^2 (sqrt r + 1)^2 L_m^2), r = a/sigma,
    L_1 = log(1/delta), L_m = log(m/delta) (b_max = (10 ||x|| a (sqrt r + 1) L_m)^2)."""
    lg1, lgm = -np.log(delta), np.log(m / delta)
    return 50 * lg1 * (1 + 100 * r**2 * (np.sqrt(r) + 1) ** 2 * lgm**2)


B2_PROOF_T = Claim(
    id="huang.B2.proof_t",
    paper="huang",
    location="Lemma B.2 (proof, choice of t)",
    statement=(
        "The proof's t = 50 m sigma^2 ||x||^2 log(1/delta) + 50 m b_max log(1/delta), b_max = "
        "(10 ||x|| a (sqrt(a/sigma) + 1) log(m/delta))^2, is at most the lemma's threshold "
        "1000 m ||x||^2 (sigma^2 + a^2) log^3(m/delta)."
    ),
    checks=(
        GridCheck(
            true=_b2_proof_t,
            claimed=lambda m, r, delta: eq.lemma_b2_threshold(m, 1.0, r, 1.0, delta) / m,
            params=(
                Param("m", 1, 1_000_000, scale="log", integer=True, points=25),
                Param("r", 1e-3, 1e3, scale="log", points=61, label=_R),
                Param("delta", 1e-12, 0.099, scale="log", points=13),
            ),
            relation="<=",
            true_label="the proof's t / m (||x|| = sigma = 1)",
            claimed_label="1000 (sigma^2 + a^2) log^3(m/delta)",
            domain_param="r",
            atol=0.0,
        ),
    ),
    notes=(
        "b_max alone contributes 5000 a^2 (sqrt(a/sigma) + 1)^2 log^2(m/delta) log(1/delta) "
        "per row, above the threshold's 1000 a^2 log^3(m/delta) unless log(m/delta) is much "
        "larger than log(1/delta): the lemma holds numerically (huang.B2) because its "
        "threshold is loose, not by this proof. The binding case is m = 1, delta -> 1/10."
    ),
    corrected=(
        "The proof establishes the threshold 50 m ||x||^2 log(1/delta) (sigma^2 + 100 a^2 "
        "(sqrt(a/sigma) + 1)^2 log^2(m/delta)); it is below the stated one iff 50 L_1 (1 + "
        "100 r^2 (sqrt r + 1)^2 L_m^2) <= 1000 (1 + r^2) L_m^3 (r = a/sigma, L_1 = log(1/delta), "
        "L_m = log(m/delta)), which at m = 1 reads 5000 r^2 (sqrt r + 1)^2 + 50/L_1^2 <= "
        "1000 (1 + r^2): a <= 0.3003 sigma as delta -> 1/10, larger for larger m."
    ),
)


B2_MOMENTS = Claim(
    id="huang.B2.moments",
    paper="huang",
    location="Lemma B.2 (proof, moments of b_i = (Ax)_i^2)",
    statement=(
        "0.1 ||x||^2 a^3/sigma <= E[(Ax)_i^2] <= ||x||^2 a^3/sigma (i.e. 0.1 a^3/sigma <= E[u^2] "
        "<= a^3/sigma), and 4 E[u^4] <= 64 sigma^4."
    ),
    checks=(
        _moment_check(2, "<=", lambda r: r**3, "a^3/sigma", one_sided=False),
        _moment_check(2, ">=", lambda r: 0.1 * r**3, "0.1 a^3/sigma", one_sided=False, domain=True),
        _moment_check(4, "<=", lambda r: 64.0 + 0 * r, "64 sigma^4", one_sided=False, factor=4.0),
    ),
    corrected=(
        "E[u^2] = sigma^2 (erf(r/sqrt 2) - sqrt(2/pi) r exp(-r^2/2)), r = a/sigma, is >= "
        "0.1 a^3/sigma iff a <= 1.9118 sigma (the root of E[u^2] = 0.1 a^3/sigma); E[u^2] "
        "increases in a, so E[u^2] >= 0.1 sigma^2 min(a/sigma, 1.9118)^3 for every a. The "
        "upper bounds E[u^2] <= a^3/sigma and 4 E[u^4] <= 64 sigma^4 hold for every a."
    ),
)

_B3_D = 32


def _b3_log_prob(d, delta, e_inf):
    """log Pr[|<u,e>| >= threshold] for ||e||_2 = 1, sigma_1 = 1: <u,e> ~ N(0, 1)."""
    t = eq.lemma_b3_threshold(d, 1.0, 1.0, e_inf, delta)
    return math.log(2) + special.log_ndtr(-t)


def _b3_sampler(rng, n, delta):
    e = _unit_vector(_B3_D)
    t = eq.lemma_b3_threshold(_B3_D, 1.0, 1.0, e.max(), delta)
    return np.abs(rng.standard_normal((n, _B3_D)) @ e) >= t


B3 = Claim(
    id="huang.B3",
    paper="huang",
    location="Lemma B.3",
    statement=(
        "For u ~ N(0, sigma_1^2 I_d), fixed e and delta in (0, 1/10): Pr[|<u, e>| >= "
        "2 sigma_1 ||e||_2 sqrt(log(d/delta)) + sigma_1 ||e||_inf log^1.5(d/delta)] <= delta."
    ),
    checks=(
        GridCheck(
            # ||e||_inf = d^(-c/2) sweeps [1/sqrt(d), 1], every admissible ratio to ||e||_2.
            true=lambda d, delta, c: _b3_log_prob(d, delta, np.asarray(d, float) ** (-c / 2)),
            claimed=lambda d, delta, c: np.log(delta) + 0 * d * c,
            params=(
                Param("d", 1, 1_000_000, scale="log", integer=True, points=31),
                Param("delta", 1e-12, 0.099, scale="log", points=31),
                Param("c", 0.0, 1.0, points=11, label="log_d(||e||_2/||e||_inf)^2"),
            ),
            relation="<=",
            true_label="log Pr[|<u,e>| >= threshold] (exact: <u,e> ~ N(0, sigma_1^2 ||e||^2))",
            claimed_label="log delta",
        ),
        MonteCarloCheck(
            sampler=_b3_sampler,
            claimed=lambda delta: delta,
            points=({"delta": 0.01}, {"delta": 0.09}),
            relation="<=",
            statistic="probability",
            samples=_MC_SAMPLES,
            true_label=f"Pr[|<u,e>| >= threshold] (d = {_B3_D})",
            claimed_label="delta",
            exact=lambda delta: math.exp(_b3_log_prob(_B3_D, delta, _unit_vector(_B3_D).max())),
        ),
    ),
)


def _b4_sampler(rng, n, d, delta):
    inner = np.einsum("ij,ij->i", rng.standard_normal((n, d)), rng.standard_normal((n, d)))
    return np.abs(inner) >= eq.lemma_b4_threshold(d, 1.0, 1.0, delta)


B4 = Claim(
    id="huang.B4",
    paper="huang",
    location="Lemma B.4",
    statement=(
        "For independent u ~ N(0, sigma_1^2 I_d), e ~ N(0, sigma_2^2 I_d), delta in (0, 1/10): "
        "Pr[|<u, e>| >= 10^4 sigma_1 sigma_2 sqrt(d) log^2(d/delta)] <= delta."
    ),
    checks=(
        MonteCarloCheck(
            sampler=_b4_sampler,
            claimed=lambda d, delta: delta,
            points=tuple({"d": d, "delta": dl} for d in (8, 256) for dl in (0.01, 0.09)),
            relation="<=",
            statistic="probability",
            samples=_MC_SAMPLES,
            true_label="Pr[|<u,e>| >= threshold]",
            claimed_label="delta",
        ),
    ),
    notes="Scale-free: sigma_1 = sigma_2 = 1.",
)


def _b4_norm_margin_terms(d, delta):
    """(d + 3 sqrt(d L) + 2 L, 4 d L), L = log(1/delta): the two sides of the proof's step."""
    lg = -np.log(delta)
    return d + 3 * np.sqrt(d * lg) + 2 * lg, 4 * d * lg


def _b4_norm_edge(d):
    r"""Smallest :math:`\log(1/\delta)` at which Lemma B.4's proof step holds, for dimension d.

    .. math:: d + 3\sqrt{dL} + 2L \le 4dL \iff
        L \ge \frac{d\,(3 + \sqrt{16d + 1})^2}{4\,(4d - 2)^2}

    (a quadratic in :math:`\sqrt L`, :math:`L = \log(1/\delta)`); Lemma B.4 allows
    :math:`\delta < 1/10`, :math:`L > \log 10`, so the step holds for every admissible
    :math:`\delta` once :math:`d \ge 2` and needs :math:`\delta \le 0.0421` at ``d = 1``.
    """
    return d * (3 + math.sqrt(16 * d + 1)) ** 2 / (4 * (4 * d - 2) ** 2)


B4_PROOF_NORM = Claim(
    id="huang.B4.proof_norm",
    paper="huang",
    location="Lemma B.4 (proof, bound on ||e||_2^2)",
    statement=(
        "For d >= 1 and delta in (0, 1/10): (d + 3 sqrt(d log(1/delta)) + 2 log(1/delta)) "
        "sigma_2^2 <= 4 d log(1/delta) sigma_2^2."
    ),
    checks=(
        GridCheck(
            true=lambda d, delta: _b4_norm_margin_terms(d, delta)[0],
            claimed=lambda d, delta: _b4_norm_margin_terms(d, delta)[1],
            params=(
                Param("d", 1, 1_000_000, scale="log", integer=True, points=31),
                Param("delta", 1e-12, 0.0999, scale="log", points=61),
            ),
            relation="<=",
            true_label="d + 3 sqrt(d log(1/delta)) + 2 log(1/delta)",
            claimed_label="4 d log(1/delta)",
            domain_param="delta",
            atol=0.0,
        ),
    ),
    corrected=(
        "Holds iff log(1/delta) >= d (3 + sqrt(16 d + 1))^2 / (4 (4d - 2)^2): for every "
        f"delta < 1/10 when d >= 2, and for delta <= "
        f"{math.exp(-_b4_norm_edge(1)):.4g} when d = 1; for all d and delta, "
        "||e||_2^2 <= (sqrt(d) + sqrt(2 log(1/delta)))^2 sigma_2^2 (Lemma A.6)."
    ),
)

B4_PROOF_INF = Claim(
    id="huang.B4.proof_inf",
    paper="huang",
    location="Lemma B.4 (proof, bound on ||e||_inf)",
    statement=(
        "For e ~ N(0, sigma_2^2 I_d): Pr[||e||_inf <= sqrt(log(d/delta)) sigma_2] >= 1 - delta "
        '("similar to Lemma B.3").'
    ),
    checks=(
        GridCheck(
            # Pr[max |e_i| <= s sigma_2] = (1 - 2 Phi(-s))^d exactly (i.i.d. coordinates).
            true=lambda d, delta: np.exp(
                d * np.log1p(-2 * special.ndtr(-np.sqrt(np.log(d / delta))))
            ),
            claimed=lambda d, delta: 1 - delta + 0 * d,
            params=(
                Param("d", 1, 1_000_000, scale="log", integer=True, points=31),
                Param("delta", 1e-12, 0.099, scale="log", points=31),
            ),
            relation=">=",
            true_label="Pr[||e||_inf <= sqrt(log(d/delta)) sigma_2] = (1 - 2 Phi(-s))^d (exact)",
            claimed_label="1 - delta",
        ),
    ),
    notes=(
        "Lemma B.3 has sqrt(2 log(d/delta)) and a one-sided tail; here the factor 2 under the "
        "root is dropped as well, so even d = 1 fails (2 Phi(-sqrt(log(1/delta))) > delta)."
    ),
    corrected=(
        "Pr[||e||_inf <= sigma_2 sqrt(2 log(2d/delta))] >= 1 - delta (Lemma A.4 on both tails "
        "of each coordinate, union bound over d)."
    ),
)


# Lemma B.5 ------------------------------------------------------------------------------

B5_MEAN_STEP = Claim(
    id="huang.B5.mean_step",
    paper="huang",
    location="Lemma B.5 (proof, bound on E[b_j])",
    statement=(
        "int_0^a y phi_{sigma_A}(y) dy >= a^2 / (2 sqrt(2 pi) sigma_A) for the folded "
        "pruned entry (first inequality of the bound on E[b_j])."
    ),
    checks=(
        _moment_check(
            1,
            ">=",
            lambda r: r**2 / (2 * math.sqrt(2 * math.pi)),
            "a^2/(2 sqrt(2 pi) sigma_A)",
            one_sided=True,
            domain=True,
        ),
    ),
    notes="1 - exp(-u) <= u: the inequality holds the other way for every a > 0.",
    corrected=(
        "int_0^a y phi_{sigma_A}(y) dy = sigma_A (1 - exp(-a^2/(2 sigma_A^2)))/sqrt(2 pi), "
        "which is <= a^2/(2 sqrt(2 pi) sigma_A) and >= exp(-a^2/(2 sigma_A^2)) a^2/"
        "(2 sqrt(2 pi) sigma_A)."
    ),
)

B5_MEAN = Claim(
    id="huang.B5.mean",
    paper="huang",
    location="Lemma B.5 (proof, E[b_j] >= a^2 x_j / (6 sigma_A))",
    statement=(
        "E[A_bar_ij] >= a^2 / (6 sigma_A) for A_bar_ij = y 1{0 <= y <= a}, y ~ N(0, sigma_A^2)."
    ),
    checks=(
        _moment_check(
            1,
            ">=",
            lambda r: eq.LEMMA_B5_MEAN_CONSTANT * r**2,
            "a^2/(6 sigma_A)",
            one_sided=True,
            domain=True,
        ),
    ),
    corrected=(
        "E[A_bar_ij] = sigma_A (1 - exp(-a^2/(2 sigma_A^2)))/sqrt(2 pi) >= a^2/(6 sigma_A) "
        "iff a <= 0.86115 sigma_A (the root of (1 - exp(-r^2/2))/sqrt(2 pi) = r^2/6); for "
        "every a, E[A_bar_ij] >= min(a, 0.86115 sigma_A)^2/(6 sigma_A) (the mean increases "
        "in a) and E[A_bar_ij] <= sigma_A/sqrt(2 pi)."
    ),
)

B5_SECOND_MOMENT_STEP = Claim(
    id="huang.B5.second_moment_step",
    paper="huang",
    location="Lemma B.5 (proof, bound on E[b_j^2])",
    statement=(
        "E[A_bar_ij^2] = int_0^a y^2 phi_{sigma_A}(y) dy <= a^3 / (3 sqrt(2 pi) sigma_A) "
        "<= a^3 / (9 sigma_A)."
    ),
    checks=(
        _moment_check(
            2,
            "<=",
            lambda r: r**3 / (3 * math.sqrt(2 * math.pi)),
            "a^3/(3 sqrt(2 pi) sigma_A)",
            one_sided=True,
        ),
        SymbolicCheck(
            true=_a**3 / (3 * sp.sqrt(2 * sp.pi) * _sig),
            claimed=_a**3 / (9 * _sig),
            relation="<=",
            params=(
                Param("a", 1e-3, 10.0, scale="log", points=21),
                Param("sigma", 0.1, 10.0, scale="log", points=5),
            ),
            true_label="a^3/(3 sqrt(2 pi) sigma_A)",
            claimed_label="a^3/(9 sigma_A)",
        ),
    ),
    notes="3 sqrt(2 pi) = 7.52 < 9.",
    corrected=(
        "E[A_bar_ij^2] <= a^3/(3 sqrt(2 pi) sigma_A) = a^3/(7.52 sigma_A) (the first "
        "inequality holds; the constant 9 must be 3 sqrt(2 pi))."
    ),
)

B5_SECOND_MOMENT = Claim(
    id="huang.B5.second_moment",
    paper="huang",
    location="Lemma B.5 (proof, E[b_j^2] <= a^3 x_j^2 / (9 sigma_A))",
    statement="E[A_bar_ij^2] <= a^3 / (9 sigma_A), the bound the proof goes on to use.",
    checks=(
        _moment_check(2, "<=", lambda r: r**3 / 9, "a^3/(9 sigma_A)", one_sided=True, domain=True),
    ),
    corrected=(
        "E[A_bar_ij^2] = sigma_A^2 (Phi(r) - 1/2 - r phi(r)), r = a/sigma_A, is <= "
        "a^3/(9 sigma_A) iff a >= 0.78078 sigma_A (the root of Phi(r) - 1/2 - r phi(r) = "
        "r^3/9); for every a, E[A_bar_ij^2] <= min(a^3/(3 sqrt(2 pi) sigma_A), sigma_A^2/2)."
    ),
)

_B5_M, _B5_D, _B5_DELTA = 16, 8, 0.05


def _b5_rows(rng, n, r, x):
    """(A_bar x)_i for i in [m], n draws; x = e_1 or the uniform vector (sum 1, x >= 0)."""
    if x == "e1":
        return _truncated(rng, (n, _B5_M), r, one_sided=True)
    A = _truncated(rng, (n, _B5_M, _B5_D), r, one_sided=True)
    return A.mean(axis=2)


def _b5_c(r):
    return eq.lemma_b5_constant_c(r, 1.0, _B5_M, _B5_DELTA)


# C(a/sigma_A) changes sign once: negative (vacuous bound) below the root, positive above.
_B5_C_ROOT = optimize.brentq(_b5_c, 1.0, 1e4, xtol=1e-10)
_B5_C_POINTS = (0.5, 2.0, 8.0, 32.0, 0.98 * _B5_C_ROOT, 1.02 * _B5_C_ROOT, 128.0, 256.0)


def _b5_c_exact(r, x):
    """Pr[min_i A_bar_i1 >= C] = Pr[A_bar >= C]^m for x = e_1 (sigma_A = 1)."""
    if x != "e1":
        return None
    c = _b5_c(r)
    single = 1.0 if c <= 0 else max(0.0, special.ndtr(r) - special.ndtr(min(c, r)))
    return single**_B5_M


B5_CONSTANT_C = Claim(
    id="huang.B5.constant_C",
    paper="huang",
    location="Lemma B.5, part 1 (the constant C)",
    statement=(
        "For x >= 0 with sum_j x_j = 1 and delta in (0, 1/10): Pr[for all i, (A_bar x)_i >= "
        "sigma_A C] > 1 - delta with C = a^2/(6 sigma_A^2) - (2a^3/(9 sigma_A^3))^(1/2) "
        "sqrt(log(m/delta)) - (2a/(3 sigma_A)) log(m/delta)."
    ),
    checks=(
        MonteCarloCheck(
            sampler=lambda rng, n, r, x: np.all(_b5_rows(rng, n, r, x) >= _b5_c(r), axis=1),
            claimed=lambda r, x: 1 - _B5_DELTA,
            points=tuple({"r": r, "x": x} for r in _B5_C_POINTS for x in ("e1", "uniform")),
            relation=">=",
            statistic="probability",
            samples=_MC_SAMPLES // 2,
            true_label=f"Pr[min_i (A_bar x)_i >= sigma_A C] (m = {_B5_M}, d = {_B5_D})",
            claimed_label="1 - delta",
            domain_param="r",
            exact=_b5_c_exact,
            labels={"r": _RA},
        ),
    ),
    notes=(
        "C <= 0 (the bound is vacuous since A_bar x >= 0) exactly where the claim holds: "
        f"C turns positive at a/sigma_A = {_B5_C_ROOT:.4g} for m = {_B5_M}, delta = "
        f"{_B5_DELTA}, and above it the probability drops to 0 (for x = e_1 to at most 2^-m)."
    ),
    corrected=(
        "C <= 0 iff sqrt(a/sigma_A) <= (sqrt 2 + sqrt 6) sqrt(log(m/delta)), i.e. the claim "
        "holds (vacuously, since (A_bar x)_i >= 0) iff a/sigma_A <= (8 + 4 sqrt 3) "
        "log(m/delta) = 14.93 log(m/delta); above it it fails for x = e_1 (Pr <= 2^-m). No "
        "positive floor holds for every admissible x: for x = e_1, (A_bar x)_i = 0 with "
        "probability >= 1/2."
    ),
)


def _b5_part2_sampler(rng, n, r, x):
    floor = eq.lemma_b5_part2_floor(r, 1.0, _B5_M, _B5_DELTA)
    return np.all(_b5_rows(rng, n, r, x) >= floor, axis=1)


_B5_PART2_R = eq.LEMMA_B5_PART2_RATIO * math.log(_B5_M / _B5_DELTA)

B5_PART2 = Claim(
    id="huang.B5.part2",
    paper="huang",
    location="Lemma B.5, part 2",
    statement=(
        "If a/sigma_A >= 20 log(m/delta), then Pr[for all i, (A_bar x)_i >= "
        "0.02 a^2/sigma_A] > 1 - delta."
    ),
    checks=(
        MonteCarloCheck(
            sampler=_b5_part2_sampler,
            claimed=lambda r, x: 1 - _B5_DELTA,
            points=tuple(
                {"r": f * _B5_PART2_R, "x": x} for f in (1.0, 2.0) for x in ("e1", "uniform")
            ),
            relation=">=",
            statistic="probability",
            samples=_MC_SAMPLES // 2,
            true_label=f"Pr[min_i (A_bar x)_i >= 0.02 a^2/sigma_A] (m = {_B5_M})",
            claimed_label="1 - delta",
            labels={"r": _RA},
        ),
    ),
    notes="0 <= (A_bar x)_i has mean at most sigma_A/sqrt(2 pi), far below the floor.",
    corrected=(
        "Pr[(A_bar x)_i >= 0.02 a^2/sigma_A] <= 50 sigma_A^2/(sqrt(2 pi) a^2) (Markov, "
        "E[(A_bar x)_i] <= sigma_A/sqrt(2 pi)), below 0.01 under the premise; the only floor "
        "valid for every admissible x with probability > 1 - delta is (A_bar x)_i >= 0."
    ),
)

CLAIMS = (
    B1,
    B1_PROOF_T,
    B2,
    B2_PROOF_T,
    B2_MOMENTS,
    B3,
    B4,
    B4_PROOF_NORM,
    B4_PROOF_INF,
    B5_MEAN_STEP,
    B5_MEAN,
    B5_SECOND_MOMENT_STEP,
    B5_SECOND_MOMENT,
    B5_CONSTANT_C,
    B5_PART2,
)
