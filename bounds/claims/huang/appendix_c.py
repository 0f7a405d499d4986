"""Appendix C of Huang et al.: Lemma C.3 and its proof, Claim C.4 (the variance of a truncated
Gaussian, small and large a).

Part of :mod:`bounds.claims.huang`; ``CLAIMS`` lists this appendix's claims in report order.
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from scipy import special, stats

from pruneleak.bounds import equivalence as eq
from pruneleak.bounds.claims.checks import (
    GridCheck,
    LimitCheck,
    MonteCarloCheck,
    Param,
    SeriesCheck,
    SymbolicCheck,
)
from pruneleak.bounds.claims.claim import Claim
from pruneleak.bounds.claims.huang.common import _a, _xs

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
    corrected=(
        "Var[f(x)] = E[x^2 1{|x| <= a}] = erf(a/sqrt 2) - sqrt(2/pi) a exp(-a^2/2); the "
        "published expression is this divided by erf(a/sqrt 2), i.e. Var[x | |x| <= a]."
    ),
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
    corrected=(
        "1 - sqrt(2/pi) a exp(-a^2/2)/erf(a/sqrt 2) = a^2/3 - 2 a^4/45 + O(a^6) (the variance "
        "of x given |x| <= a); Var[x 1{|x| <= a}] = sqrt(2/pi) a^3/3 + O(a^5)."
    ),
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


def _law_of_f(a, t):
    """Pr_{x ~ N(0,1)}[|f(x)| <= t] for f(x) = x 1{|x| <= a}: the atom at 0 has mass
    Pr[|x| > a] = erfc(a/sqrt 2)."""
    return special.erf(np.minimum(t, a) / np.sqrt(2)) + special.erfc(a / np.sqrt(2))


def _conditioned(a, t):
    """mu(|x| <= t) for mu the N(0, 1) density restricted to [-a, a] and renormalised."""
    return special.erf(np.minimum(t, a) / np.sqrt(2)) / special.erf(a / np.sqrt(2))


_C3_WITNESS = 0.05
_DELTA = Param("delta", 1e-3, 100.0, scale="log", points=61)
_A_C3 = Param("a", 1e-2, 10.0, scale="log", points=31)


def _c3_gaussian_limit(a, delta):
    """The probability of Lemma C.3 for n -> infinity with equal alpha_i: p(f(x))/||alpha||
    tends to N(0, E[f(x)^2]) (central limit theorem)."""
    sd = np.sqrt(eq.truncated_gaussian_moment(2, a, 1.0))
    return special.erf(np.minimum(a, 0.1) * delta / (np.sqrt(2) * sd))


C3 = Claim(
    id="huang.C3",
    paper="huang",
    location="Lemma C.3",
    statement=(
        "For x ~ N(0, I_n), p(x) = sum_i alpha_i x_i and f(x) = x 1{|x| <= a}: "
        "Pr[|p(f(x))| <= min{a, 0.1} delta ||alpha||_2] >= C delta for a universal C > 0."
    ),
    checks=(
        GridCheck(
            true=lambda a, delta: _law_of_f(a, np.minimum(a, 0.1) * delta),
            claimed=lambda a, delta: _C3_WITNESS * delta + 0 * a,
            params=(_A_C3, _DELTA),
            relation=">=",
            true_label="the probability for n = 1 (exact, with the atom of f at 0)",
            claimed_label=f"C delta with the witness C = {_C3_WITNESS:g}",
            domain_param="delta",
        ),
        GridCheck(
            true=_c3_gaussian_limit,
            claimed=lambda a, delta: _C3_WITNESS * delta + 0 * a,
            params=(_A_C3, _DELTA),
            relation=">=",
            true_label="the probability for n -> infinity, equal alpha_i (exact Gaussian limit)",
            claimed_label=f"C delta with the witness C = {_C3_WITNESS:g}",
            domain_param="delta",
        ),
    ),
    notes=(
        "The constant is unnamed; C = 0.05 is a witness for delta <= 1 (the Gaussian limit "
        "gives C <= 2 phi(0) 0.1 = 0.080 as a -> infinity). No C > 0 works for every delta: "
        "the probability is at most 1. Anti-concentration results (Theorems C.1, C.2, C.5) "
        "bound this probability from above; the lemma bounds it from below."
    ),
    corrected=(
        "Pr[|p(f(x))| <= min{a, 0.1} delta ||alpha||_2] >= C delta can hold only for delta <= "
        "1/C (the probability is at most 1); C = 0.05 works for delta <= 1 in both limits "
        "checked. It is a lower bound, not an anti-concentration bound."
    ),
)

C3_LAW = Claim(
    id="huang.C3.proof_law",
    paper="huang",
    location="Lemma C.3 (proof), Theorem C.5 applied to the truncated Gaussian mu",
    statement=(
        "The truncated Gaussian distribution mu to which the proof applies Theorem C.5 is the "
        "law of f(x), so mu(|p| <= t) = Pr_{x ~ N(0, I)}[|p(f(x))| <= t]."
    ),
    checks=(
        GridCheck(
            true=lambda a, r: _law_of_f(a, r * a),
            claimed=lambda a, r: _conditioned(a, r * a),
            params=(_A_C3, Param("r", 1e-3, 1.0, scale="log", points=31, label="t/a")),
            relation="==",
            true_label="Pr[|f(x)| <= t], n = 1 (exact)",
            claimed_label="mu(|x| <= t), the log-concave truncated density (exact)",
        ),
    ),
    notes=(
        "f(x) = 0 for |x| > a, so the law of f(x) has an atom of mass erfc(a/sqrt 2) at 0 and "
        "is not log-concave; mu, the Gaussian conditioned on [-a, a]^n, is. Claim C.4's "
        "variance is mu's (huang.C4.variance)."
    ),
    corrected=(
        "Pr[|f(x)| <= t] = erf(min(t, a)/sqrt 2) + erfc(a/sqrt 2), whereas mu(|x| <= t) = "
        "erf(min(t, a)/sqrt 2)/erf(a/sqrt 2): Theorem C.5 bounds mu, not the law of f(x)."
    ),
)


def _second_moment_sampler(rng, n, a, beta):
    """(x_1 + beta x_2)^2 for x_i i.i.d. from mu (N(0, 1) conditioned on [-a, a])."""
    x = stats.truncnorm.rvs(-a, a, size=(n, 2), random_state=rng)
    return (x[:, 0] + beta * x[:, 1]) ** 2


C3_SECOND_MOMENT = Claim(
    id="huang.C3.proof_second_moment",
    paper="huang",
    location="Lemma C.3 (proof), int |p(x)|^2 d mu = sum_i alpha_i^2 Var[x_i]",
    statement=(
        "Under mu, E[(sum_i alpha_i x_i)^2] = sum_i alpha_i^2 Var[x_i], with Var[x_i] the "
        "Claim C.4 expression 1 - sqrt(2/pi) a exp(-a^2/2)/erf(a/sqrt 2)."
    ),
    checks=(
        MonteCarloCheck(
            sampler=_second_moment_sampler,
            claimed=lambda a, beta: (1 + beta**2) * eq.claim_c4_variance_published(a),
            points=tuple({"a": a, "beta": b} for a in (0.3, 1.0, 3.0) for b in (0.5, 2.0)),
            relation="==",
            statistic="mean",
            samples=20_000,
            true_label="E_mu[(x_1 + beta x_2)^2] (Monte Carlo, scipy truncnorm)",
            claimed_label="(1 + beta^2) x Claim C.4 expression",
        ),
    ),
    notes="Holds for mu (the conditioned Gaussian), not for the law of f(x) (huang.C3.proof_law).",
)

CLAIMS = (
    C3,
    C3_LAW,
    C3_SECOND_MOMENT,
    C4_VARIANCE,
    C4_SMALL_A,
    C4_LARGE_A,
)
