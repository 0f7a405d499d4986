"""Appendix A of Huang et al.: Gaussian tail, small-ball and chi-square bounds (Lemmas A.4-A.6).

Part of :mod:`bounds.claims.huang`; ``CLAIMS`` lists this appendix's claims in report order.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
from scipy import special, stats

from pruneleak.bounds import equivalence as eq
from pruneleak.bounds.claims.checks import (
    GridCheck,
    Param,
    SymbolicCheck,
)
from pruneleak.bounds.claims.claim import Claim
from pruneleak.bounds.claims.huang.common import _a

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

CLAIMS = (
    A4,
    A5,
    A6,
)
