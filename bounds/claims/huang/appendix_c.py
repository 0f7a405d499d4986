"""Appendix C of Huang et al.: Claim C.4, the variance of a truncated Gaussian (small and large a).

Part of :mod:`bounds.claims.huang`; ``CLAIMS`` lists this appendix's claims in report order.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

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

CLAIMS = (
    C4_VARIANCE,
    C4_SMALL_A,
    C4_LARGE_A,
)
