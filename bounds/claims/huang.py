r"""Claims of Huang et al., appendices A-E.

Source: ``papers/huang-pruning-as-dp-noise-arxiv2003.01876.txt`` (arXiv 2003.01876).

Thresholds and constants are those of ``bounds.equivalence`` (``lemma_*``, ``gs*_bound``,
``claim_c4_variance_published``, ``laplace_fourth_moment``, ``truncated_gaussian_moment``,
``privacy_loss``, ``epsilon_dp_theorem_e2``). Exact references: the Gaussian and
chi-square distribution functions of ``scipy`` in log space; Monte Carlo otherwise. Where a
lemma is stated for all values of a scale-free ratio (e.g. :math:`a/\sigma`), the check
sweeps the ratio with :math:`\sigma = 1`.

Monte Carlo tail bounds ("with probability at most delta") are checked at failure
probabilities a simulation can resolve (delta >= 0.01); the thresholds of Appendix B are
so loose that no exceedance is ever observed, and each point reports the Wilson interval.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import sympy as sp
from scipy import optimize, special, stats

from bounds import equivalence as eq
from bounds.claims.checks import (
    GridCheck,
    LimitCheck,
    MonteCarloCheck,
    Param,
    SeriesCheck,
    SymbolicCheck,
    fmt,
)
from bounds.claims.claim import Claim

_MC_SAMPLES = 2000
_R = "a/sigma"
_RA = "a/sigma_A"


def _unit_vector(d: int) -> np.ndarray:
    """x_j proportional to 1/j, ||x||_2 = 1 (unequal entries, so ||x||_inf > 1/sqrt(d))."""
    x = 1.0 / np.arange(1, d + 1)
    return x / np.linalg.norm(x)


def _truncated(rng, shape, a, sigma=1.0, *, one_sided=False):
    """y 1{|y| <= a} (magnitude pruning) or y 1{0 <= y <= a} (folded), y ~ N(0, sigma^2)."""
    y = rng.normal(0.0, sigma, size=shape)
    keep = (y >= 0) & (y <= a) if one_sided else np.abs(y) <= a
    return np.where(keep, y, 0.0)


def _r_param(low=1e-3, high=100.0, points=81, label=_R):
    return Param("r", low, high, scale="log", points=points, label=label)


def _moment_check(order, relation, claimed, claimed_label, *, one_sided, factor=1.0, domain=False):
    """factor * E[u^order] (exact, sigma = 1) against ``claimed(r)``, r = a/sigma swept.

    ``atol=0``: the moments are computed to full relative precision (incomplete gamma),
    so even the tiny values at small a/sigma are compared relatively.
    """
    label = _RA if one_sided else _R
    name = "A_bar_ij" if one_sided else "u"
    return GridCheck(
        true=lambda r: factor * eq.truncated_gaussian_moment(order, r, 1.0, one_sided=one_sided),
        claimed=claimed,
        params=(_r_param(label=label),),
        relation=relation,
        true_label=f"{fmt(factor) + ' ' if factor != 1 else ''}E[{name}^{order}] (exact)",
        claimed_label=claimed_label,
        domain_param="r" if domain else None,
        atol=0.0,
    )


# ---------------------------------------------------------------------------------------
# Appendix A
# ---------------------------------------------------------------------------------------

A4 = Claim(
    id="huang.A4",
    paper="huang",
    location="Lemma A.4",
    statement="For X ~ N(0, sigma^2) and all t >= 0, Pr[X >= t] <= exp(-t^2 / (2 sigma^2)).",
    checks=(
        GridCheck(
            true=lambda r, sigma: special.log_ndtr(-r) + 0 * sigma,
            claimed=lambda r, sigma: np.log(eq.lemma_a4_gaussian_tail(r * sigma, sigma)),
            # exp(-37.5^2/2) = 1e-305 is still a normal double: the claimed side stays finite.
            params=(
                Param("r", 0.0, 37.5, points=201, label="t/sigma"),
                Param("sigma", 1e-2, 1e2, scale="log", points=5),
            ),
            relation="<=",
            true_label="log Pr[X >= t] (exact, log_ndtr)",
            claimed_label="log exp(-t^2/(2 sigma^2))",
        ),
    ),
)

_a, _sig = sp.symbols("a sigma", positive=True)

A5 = Claim(
    id="huang.A5",
    paper="huang",
    location="Lemma A.5 (the constant 4/5)",
    statement="For X ~ N(0, sigma^2) and t >= 0, Pr[|X| <= t] <= (4/5) t / sigma.",
    checks=(
        GridCheck(
            true=lambda r: special.erf(r / math.sqrt(2)),
            claimed=lambda r: eq.lemma_a5_small_ball(r, 1.0),
            params=(Param("r", 1e-8, 1e2, scale="log", points=201, label="t/sigma"),),
            relation="<=",
            true_label="Pr[|X| <= t] = erf(t/(sigma sqrt 2)) (exact)",
            claimed_label="(4/5) t/sigma",
        ),
        SymbolicCheck(
            true=2 / sp.sqrt(2 * sp.pi) + 0 * _a,
            claimed=sp.Rational(4, 5) + 0 * _a,
            relation="<=",
            params=(Param("a", 1.0, 2.0, points=2, label="(constant)"),),
            true_label="sup_t Pr[|X| <= t] sigma/t = 2 max density sigma = sqrt(2/pi)",
            claimed_label="4/5",
        ),
    ),
    notes="Tight: sqrt(2/pi) = 0.7979 is the limit as t -> 0.",
)


def _chi2_upper(k, t):
    return stats.chi2.logsf(k + 2 * np.sqrt(k * t) + 2 * t, k)


def _chi2_lower(k, t):
    x = k - 2 * np.sqrt(k * t)
    return np.where(x > 0, stats.chi2.logcdf(np.maximum(x, 1e-300), k), -np.inf)


_A6_PARAMS = (
    Param("k", 1, 10_000, scale="log", integer=True, points=41),
    Param("t", 1e-3, 100.0, scale="log", points=41),
)

A6 = Claim(
    id="huang.A6",
    paper="huang",
    location="Lemma A.6 (Laurent-Massart)",
    statement=(
        "For X = sigma^2 chi^2_k: Pr[X - k sigma^2 >= (2 sqrt(kt) + 2t) sigma^2] <= exp(-t) "
        "and Pr[k sigma^2 - X >= 2 sqrt(kt) sigma^2] <= exp(-t)."
    ),
    checks=(
        GridCheck(
            true=_chi2_upper,
            claimed=lambda k, t: -t + 0 * k,
            params=_A6_PARAMS,
            relation="<=",
            true_label="log Pr[upper deviation] (scipy chi2.logsf)",
            claimed_label="-t",
        ),
        GridCheck(
            true=_chi2_lower,
            claimed=lambda k, t: -t + 0 * k,
            params=_A6_PARAMS,
            relation="<=",
            true_label="log Pr[lower deviation] (scipy chi2.logcdf)",
            claimed_label="-t",
        ),
    ),
    notes="Scale-free: sigma = 1.",
)

# ---------------------------------------------------------------------------------------
# Appendix B
# ---------------------------------------------------------------------------------------

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
)

B5_SECOND_MOMENT = Claim(
    id="huang.B5.second_moment",
    paper="huang",
    location="Lemma B.5 (proof, E[b_j^2] <= a^3 x_j^2 / (9 sigma_A))",
    statement="E[A_bar_ij^2] <= a^3 / (9 sigma_A), the bound the proof goes on to use.",
    checks=(
        _moment_check(2, "<=", lambda r: r**3 / 9, "a^3/(9 sigma_A)", one_sided=True, domain=True),
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
)

# ---------------------------------------------------------------------------------------
# Claim C.4
# ---------------------------------------------------------------------------------------

_xs = sp.Symbol("x", real=True)
_C4_EXPR = 1 - sp.sqrt(2 / sp.pi) * _a * sp.exp(-(_a**2) / 2) / sp.erf(_a / sp.sqrt(2))
_C4_VAR_F = sp.integrate(_xs**2 * sp.exp(-(_xs**2) / 2) / sp.sqrt(2 * sp.pi), (_xs, -_a, _a))
_G_LARGE = 1 - _a * sp.exp(-(_a**2)) - sp.exp(-(_a**2) / 2) / _a


def _c4_sampler(rng, n, a):
    x = rng.standard_normal(n)
    return np.where(np.abs(x) <= a, x, 0.0) ** 2


C4_VARIANCE = Claim(
    id="huang.C4.variance",
    paper="huang",
    location="Claim C.4",
    statement=(
        "For x ~ N(0, 1) and f(x) = x 1{|x| <= a}: Var[f(x)] = 1 - sqrt(2/pi) a exp(-a^2/2) / "
        "erf(a/sqrt(2))."
    ),
    checks=(
        SymbolicCheck(
            true=_C4_VAR_F,
            claimed=_C4_EXPR,
            relation="==",
            params=(Param("a", 1e-2, 10.0, scale="log", points=61),),
            true_label="Var[f(x)] = int_{-a}^{a} x^2 phi(x) dx (sympy)",
            claimed_label="Claim C.4",
        ),
        MonteCarloCheck(
            sampler=_c4_sampler,
            claimed=lambda a: eq.claim_c4_variance_published(a),
            points=({"a": 0.5}, {"a": 1.0}, {"a": 2.0}),
            relation="==",
            statistic="mean",
            samples=20_000,
            true_label="Var[f(x)] = E[f(x)^2] (E f = 0 by symmetry)",
            claimed_label="Claim C.4",
            exact=lambda a: eq.truncated_gaussian_moment(2, a, 1.0),
        ),
    ),
    notes="The formula is Var[x | |x| <= a], the variance of the conditioned Gaussian.",
)

C4_SMALL_A = Claim(
    id="huang.C4.small_a",
    paper="huang",
    location="Lemma C.3 (proof), small-a expansion of Claim C.4",
    statement="For 0 <= a << 1: 1 - sqrt(2/pi) a exp(-a^2/2)/erf(a/sqrt(2)) = (5/6) a^2 + o(a^3).",
    checks=(
        SeriesCheck(
            true=_C4_EXPR,
            claimed=sp.Rational(5, 6) * _a**2,
            var=_a,
            order=4,
            param=Param("a", 1e-3, 1.0, scale="log"),
            true_label="Claim C.4 expression",
            claimed_label="(5/6) a^2",
        ),
    ),
    notes="The expansion starts a^2/3; Var[x 1{|x| <= a}] itself is sqrt(2/pi) a^3/3 + O(a^5).",
)

C4_LARGE_A = Claim(
    id="huang.C4.large_a",
    paper="huang",
    location="Lemma C.3 (proof), a >= 1",
    statement=(
        "For a >= 1 the Claim C.4 expression is Theta(1 - a e^(-a^2) - e^(-a^2/2)/a), and "
        "0.025 <= 1 - a e^(-a^2) - e^(-a^2/2)/a <= 1."
    ),
    checks=(
        GridCheck(
            true=lambda a: 1 - a * np.exp(-(a**2)) - np.exp(-(a**2) / 2) / a,
            claimed=lambda a: 0.025 + 0 * a,
            params=(Param("a", 1.0, 50.0, scale="log", points=201),),
            relation=">=",
            true_label="1 - a e^(-a^2) - e^(-a^2/2)/a",
            claimed_label="0.025",
        ),
        GridCheck(
            true=lambda a: 1 - a * np.exp(-(a**2)) - np.exp(-(a**2) / 2) / a,
            claimed=lambda a: 1.0 + 0 * a,
            params=(Param("a", 1.0, 50.0, scale="log", points=201),),
            relation="<=",
            true_label="1 - a e^(-a^2) - e^(-a^2/2)/a",
            claimed_label="1",
        ),
        LimitCheck(
            expr=_C4_EXPR / _G_LARGE,
            var=_a,
            point=sp.oo,
            direction="-",
            expect="finite-nonzero",
            param=Param("a", 1.0, 20.0, scale="log"),
            true_label="Claim C.4 expression / (1 - a e^(-a^2) - e^(-a^2/2)/a)",
        ),
    ),
    notes=(
        "Both sides are positive and continuous on [1, inf) and their ratio tends to 1: "
        "Theta holds (the ratio is 11.4 at a = 1)."
    ),
)

# ---------------------------------------------------------------------------------------
# Appendix D
# ---------------------------------------------------------------------------------------

_D_D = 8
_D_POINTS = tuple({"m": m, "delta": dl} for m in (8, 64, 512) for dl in (0.02, 0.09))


def _d1_sampler(rng, n, m, delta):
    z = np.abs(rng.standard_normal((n, m, _D_D)))
    deviation = (z - math.sqrt(2 / math.pi)).sum(axis=1).max(axis=1)
    return deviation > eq.lemma_d1_threshold(m, _D_D, 1.0, delta)


D1 = Claim(
    id="huang.D1",
    paper="huang",
    location="Lemma D.1",
    statement=(
        "For A with i.i.d. N(0, sigma_A^2) entries and z = |A_ij|: for every column j, "
        "Pr[sum_i (z_ij - E z_ij) > sigma_A m + 4 sigma_A sqrt(m) log^1.5(md/delta)] <= delta."
    ),
    checks=(
        MonteCarloCheck(
            sampler=_d1_sampler,
            claimed=lambda m, delta: delta,
            points=_D_POINTS,
            relation="<=",
            statistic="probability",
            samples=_MC_SAMPLES,
            true_label=f"Pr[max_j deviation of column j > threshold] (d = {_D_D})",
            claimed_label="delta",
        ),
    ),
    notes="Checked in the stronger form with the maximum over the d columns; sigma_A = 1.",
)


def _columns(rng, n, m, sigma_a):
    return rng.normal(0.0, sigma_a, size=(n, m, _D_D))


def _d2_sampler(rng, n, m, delta, sigma_a):
    gs1 = np.abs(_columns(rng, n, m, sigma_a)).sum(axis=1).max(axis=1)
    return gs1 > eq.gs1_bound(m, _D_D, sigma_a, delta)


D2 = Claim(
    id="huang.D2",
    paper="huang",
    location="Lemma D.2",
    statement=(
        "For f(x) = ReLU(Ax + b) with A ~ N(0, sigma_A^2)^(m x d): Pr[GS_1(f) <= sigma_A m + "
        "4 sigma_A sqrt(m) log^1.5(md/delta)] >= 1 - delta."
    ),
    checks=(
        MonteCarloCheck(
            sampler=_d2_sampler,
            claimed=lambda m, delta, sigma_a: delta,
            points=tuple(
                {"m": m, "delta": 0.05, "sigma_a": s} for m in (8, 64, 512) for s in (0.01, 1.0)
            ),
            relation="<=",
            statistic="probability",
            samples=_MC_SAMPLES,
            true_label=f"Pr[max_k ||A_(*,k)||_1 > bound] (d = {_D_D})",
            claimed_label="delta",
            labels={"sigma_a": "sigma_A"},
        ),
    ),
    notes=(
        "GS_1(f) <= max_k ||A_(*,k)||_1, with equality for a large bias; the proof applies "
        "D.1 (a deviation bound) to the norm itself, which still holds because sigma_A m "
        "exceeds the mean sigma_A m sqrt(2/pi)."
    ),
)

_D3_SIGMAS = tuple(float(s) for s in np.geomspace(0.1, 30.0, 8))
_D3_M, _D3_DELTA = 64, 0.05


def _d3_sampler(form):
    def sampler(rng, n, sigma_a):
        gs2 = np.sqrt((_columns(rng, n, _D3_M, sigma_a) ** 2).sum(axis=1)).max(axis=1)
        return gs2 > eq.gs2_bound(_D3_M, _D_D, sigma_a, _D3_DELTA, form=form)

    return sampler


def _d3_check(form):
    return MonteCarloCheck(
        sampler=_d3_sampler(form),
        claimed=lambda sigma_a: _D3_DELTA,
        points=tuple({"sigma_a": s} for s in _D3_SIGMAS),
        relation="<=",
        statistic="probability",
        samples=_MC_SAMPLES // 2,
        true_label=f"Pr[max_k ||A_(*,k)||_2 > bound] (m = {_D3_M}, d = {_D_D})",
        claimed_label="delta",
        domain_param="sigma_a",
        labels={"sigma_a": "sigma_A"},
    )


D3 = Claim(
    id="huang.D3",
    paper="huang",
    location="Lemma D.3",
    statement=(
        "For f(x) = ReLU(Ax + b) with A ~ N(0, sigma_A^2)^(m x d): "
        "Pr[GS_2(f) <= 2 (sqrt(md) + sqrt(log(1/delta)))] >= 1 - delta."
    ),
    checks=(_d3_check("statement"),),
    notes="The statement has no sigma_A; the proof's last line has it (huang.D3.proof).",
)

_m, _d, _L = sp.symbols("m d L", positive=True)

D3_PROOF = Claim(
    id="huang.D3.proof",
    paper="huang",
    location="Lemma D.3 (proof, last two lines)",
    statement=(
        "sigma_A (2 sqrt(2 md log(1/delta)) + 2 log(1/delta) + md)^(1/2) = sigma_A (sqrt(md) "
        "+ sqrt(2 log(1/delta))), and Pr[GS_2(f) <= sigma_A (sqrt(md) + sqrt(2 log(1/delta)))] "
        ">= 1 - delta."
    ),
    checks=(
        # Both sides are positive: compare their squares (sympy does not denest the root).
        SymbolicCheck(
            true=2 * sp.sqrt(2 * _m * _d * _L) + 2 * _L + _m * _d,
            claimed=(sp.sqrt(_m * _d) + sp.sqrt(2 * _L)) ** 2,
            relation="==",
            params=(
                Param("m", 1, 1e4, scale="log", points=9),
                Param("d", 1, 1e3, scale="log", points=7),
                Param("L", 1e-3, 1e2, scale="log", points=11, label="log(1/delta)"),
            ),
            true_label="2 sqrt(2 md L) + 2L + md",
            claimed_label="(sqrt(md) + sqrt(2L))^2",
        ),
        _d3_check("proof"),
    ),
    notes=(
        "Loose: A.6 is applied with md degrees of freedom where a column has m entries, and "
        "the supremum over the d columns needs a union bound."
    ),
)

# ---------------------------------------------------------------------------------------
# Appendix E
# ---------------------------------------------------------------------------------------

_E3_D = 16
_E3_MS = (16, 128, 1024, 4096)


def _e3_ratio_sampler(rng, n, m):
    gs1 = np.abs(rng.standard_normal((n, m, _E3_D))).sum(axis=1).max(axis=1)
    return gs1 / m


def _e3_check(relation, claimed, claimed_label):
    return MonteCarloCheck(
        sampler=_e3_ratio_sampler,
        claimed=claimed,
        points=tuple({"m": m} for m in _E3_MS),
        relation=relation,
        statistic="mean",
        samples=200,
        true_label=f"E[max_k ||A_(*,k)||_1]/(m sigma_A) (d = {_E3_D})",
        claimed_label=claimed_label,
    )


E3 = Claim(
    id="huang.E3",
    paper="huang",
    location="Remark E.3",
    statement="GS_1(f) = Theta(m sigma_A).",
    checks=(
        _e3_check(">=", lambda m: math.sqrt(2 / math.pi), "sqrt(2/pi)"),
        _e3_check(
            "<=",
            lambda m: math.sqrt(2 / math.pi) + math.sqrt(2 * math.log(_E3_D) / m),
            "sqrt(2/pi) + sqrt(2 log(d)/m)",
        ),
    ),
    notes=(
        "Sandwich sqrt(2/pi) <= E[max_k ||A_(*,k)||_1]/(m sigma_A) <= sqrt(2/pi) + "
        "sqrt(2 log d/m) (Gaussian concentration) at every m: Theta(m sigma_A) uniformly. "
        "With Remark E.3's sigma sigma_A = 1, Theorem E.2 then gives epsilon_dp of order "
        "2 log(m/delta_dp)."
    ),
)

_bs = sp.Symbol("b", positive=True)


def _laplace4_sampler(rng, n, b):
    return rng.laplace(0.0, b, size=n) ** 4


LAPLACE_FOURTH = Claim(
    id="huang.E2.laplace_fourth_moment",
    paper="huang",
    location="Theorem E.2 proof, Part 2 (E[z_i^2])",
    statement="For a Laplace variable of scale b: int x^4 exp(-|x|/b)/(2b) dx = 24 b^4.",
    checks=(
        SymbolicCheck(
            true=sp.integrate(
                _xs**4 * sp.exp(-sp.Abs(_xs) / _bs) / (2 * _bs), (_xs, -sp.oo, sp.oo)
            ),
            claimed=int(eq.LAPLACE_FOURTH_MOMENT) * _bs**4,
            relation="==",
            params=(Param("b", 1e-2, 1e2, scale="log", points=21),),
            true_label="E[X^4] (sympy integral)",
            claimed_label="24 b^4",
        ),
        MonteCarloCheck(
            sampler=_laplace4_sampler,
            claimed=lambda b: eq.laplace_fourth_moment(b),
            points=({"b": 0.5}, {"b": 2.0}),
            relation="==",
            statistic="mean",
            # X^4/b^4 = E^4 with E ~ Exp(1) is strongly skewed (skewness 60): a large
            # sample keeps the CLT interval's coverage near its nominal level.
            samples=200_000,
            true_label="E[X^4], X ~ Lap(0, b)",
            claimed_label="24 b^4",
        ),
    ),
)


def _part2_max_true(b, m, delta):
    u = (b * np.log(m / delta)) ** 0.25  # z <= sqrt(b log(m/delta))  <=>  |e| <= u
    return -np.expm1(-u / b)


PART2_MAX = Claim(
    id="huang.E2.part2_max",
    paper="huang",
    location="Theorem E.2 proof, Part 2 (bound on max_i z_i)",
    statement=(
        "For z_i = (e_i - (A_bar x)_i)^2 with e_i - (A_bar x)_i ~ Lap(0, b_i): "
        "z_i <= sqrt(b_i log(m/delta)) with probability at least 1 - delta/m."
    ),
    checks=(
        GridCheck(
            true=_part2_max_true,
            claimed=lambda b, m, delta: 1 - delta / m + 0 * b,
            params=(
                Param("b", 1e-4, 100.0, scale="log", points=61, label="b_i"),
                Param("m", 10, 10_000, scale="log", integer=True, points=7),
                Param("delta", 1e-3, 0.1, scale="log", points=5),
            ),
            relation=">=",
            true_label="Pr[z_i <= sqrt(b_i log(m/delta))] = 1 - exp(-(b log(m/delta))^(1/4)/b)",
            claimed_label="1 - delta/m",
            domain_param="b",
        ),
    ),
    notes=(
        "The Laplace tail Pr[|e| >= t] = exp(-t/b) gives z_i <= b_i^2 log^2(m/delta) with "
        "probability 1 - delta/m; the published threshold is not even of the right dimension."
    ),
)

_P1_M, _P1_D, _P1_SIGMA, _P1_A, _P1_DELTA = 4, 3, 10.0, 1.0, 0.1
_P1_X = (np.array([0.6, 0.8, 0.0]), np.array([0.8, 0.6, 0.0]))


@lru_cache(maxsize=1)
def _part1_mechanism():
    """Location and scale of B(x) = f(x) + e for the two neighbouring inputs (sigma_A = 1)."""
    rng = np.random.default_rng(2003_01876)
    for _ in range(100):  # draw until every (A_bar x)_i > 0, so that each scale is positive
        A = rng.standard_normal((_P1_M, _P1_D))
        bar = np.where((A >= 0) & (A <= _P1_A), A, 0.0)
        if all(np.all(bar @ x > 0) for x in _P1_X):
            break
    else:
        raise RuntimeError("no weight draw with positive A_bar x in 100 tries")
    out = []
    for x in _P1_X:
        noise = bar @ x
        out.append((np.maximum(A @ x, 0.0) + noise, _P1_SIGMA * noise))
    return out


def _part1_loss(u):
    """The larger of the two privacy losses (x_1 against x_2 and back) at y = u (1, ..., 1)."""
    (loc1, scale1), (loc2, scale2) = _part1_mechanism()
    y = np.asarray(u)[..., None] * np.ones(_P1_M)
    return np.maximum(
        eq.privacy_loss(y, loc1, scale1, loc2, scale2),
        eq.privacy_loss(y, loc2, scale2, loc1, scale1),
    )


PART1_LOSS = Claim(
    id="huang.E2.part1",
    paper="huang",
    location="Theorem E.2 proof, Part 1",
    statement=(
        "For neighbouring inputs x_1, x_2, the output density ratio of B(x) = f(x) + e, "
        "e = Lap(1, sigma)^m o (A_bar x), is at most exp(epsilon_dp) at every output y, with "
        "epsilon_dp = 2 GS_1(f) log(m/delta_dp)/(sigma sigma_A) (Theorem E.2)."
    ),
    checks=(
        GridCheck(
            true=_part1_loss,
            claimed=lambda u: (
                eq.epsilon_dp_theorem_e2(_P1_SIGMA, 1.0, _P1_M, _P1_D, _P1_DELTA) + 0 * u
            ),
            params=(Param("u", 1e-3, 1e7, scale="log", points=61, label="|y|"),),
            relation="<=",
            true_label=(
                "exact privacy loss max(log p_1/p_2, log p_2/p_1) at y = |y| (1,...,1), "
                f"m = {_P1_M}, d = {_P1_D}, sigma = {_P1_SIGMA}, a = {_P1_A}, sigma_A = 1"
            ),
            claimed_label="epsilon_dp of Theorem E.2 (nats)",
            domain_param="u",
            domain_verdict=False,
        ),
    ),
    notes=(
        "The noise scale sigma (A_bar x)_i depends on the input, so the privacy loss grows "
        "linearly in |y|: no finite epsilon (bounds.equivalence, item 5)."
    ),
)

CLAIMS = (
    A4,
    A5,
    A6,
    B1,
    B2,
    B2_MOMENTS,
    B3,
    B4,
    B5_MEAN_STEP,
    B5_MEAN,
    B5_SECOND_MOMENT_STEP,
    B5_SECOND_MOMENT,
    B5_CONSTANT_C,
    B5_PART2,
    C4_VARIANCE,
    C4_SMALL_A,
    C4_LARGE_A,
    D1,
    D2,
    D3,
    D3_PROOF,
    E3,
    LAPLACE_FOURTH,
    PART2_MAX,
    PART1_LOSS,
)
