"""Appendix D of Huang et al.: deviation bound, sensitivities GS_1, GS_2 (Lemmas D.1-D.3).

Part of :mod:`bounds.claims.huang`; ``CLAIMS`` lists this appendix's claims in report order.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from pruneleak.bounds import equivalence as eq
from pruneleak.bounds.claims.checks import (
    MonteCarloCheck,
    Param,
    SymbolicCheck,
)
from pruneleak.bounds.claims.claim import Claim
from pruneleak.bounds.claims.huang.common import _MC_SAMPLES

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
    corrected=(
        "Pr[GS_2 > t] = 1 - F_{chi^2_m}(t^2/sigma_A^2)^d for GS_2 = max_k ||A_(*,k)||_2, so the "
        "bound t = 2 (sqrt(md) + sqrt(log(1/delta))) holds iff sigma_A <= t / "
        "sqrt(F^-1_{chi^2_m}((1 - delta)^(1/d))) (4.98 at m = 64, d = 8, delta = 0.05); for "
        "every sigma_A, GS_2 <= sigma_A (sqrt(m) + sqrt(2 log(d/delta))) w.p. >= 1 - delta "
        "(Lemma A.6 per column, union bound over the d columns)."
    ),
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

CLAIMS = (
    D1,
    D2,
    D3,
    D3_PROOF,
)
