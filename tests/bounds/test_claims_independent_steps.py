"""Verdicts of the coverage pass's claims (proof steps, cited tools, units), derived again.

Same contract as ``test_claims_independent.py``: each function computes the true and the
claimed quantity by another route than the registry's check and returns the verdict the
truth implies; ``test_claims_rederived.py`` compares it with the registry's. Routes: scalar
closed forms of the Gaussian chain (posterior precisions instead of log-determinants),
mpmath entropies and quadrature, exact binomial sums in mpmath, explicit enumeration,
Balle and Wang's delta in mpmath, and seeded draws of dense matrices. Domain edges that have
a closed form are compared with the registry's.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from pruneleak.bounds import claims
from pruneleak.bounds.claims.checks import FAILS, HOLDS, HOLDS_ON_DOMAIN

TWO_PI_E = 2 * math.pi * math.e


def _verdict_from(holds_somewhere: bool, fails_somewhere: bool) -> str:
    if not fails_somewhere:
        return HOLDS
    return HOLDS_ON_DOMAIN if holds_somewhere else FAILS


# --- PriPrune: the scalar Gaussian chain in closed form -------------------------------------
# D ~ N(0, 1), x_t = D + g eps_t, w_t = w0 - r x_t, y_t = w_t + s nu_t. After k releases the
# posterior precision of D is 1 + k r^2 / v with v = r^2 g^2 + s^2 (each y_t = -r D + noise).

CHAIN_POINTS = [(T, g, s) for T in (1, 3) for g in (0.05, 1.0, 20.0) for s in (0.05, 1.0, 20.0)]


def _chain_terms(t, g, s, r=1.0):
    """Per-round terms (nats) given the t - 1 earlier releases: I(D; y|P), I(w; y|P),
    I(D; w|P), I(x; y|P)."""
    v = r**2 * g**2 + s**2
    prec = 1 + (t - 1) * r**2 / v
    var_x = 1 / prec + g**2  # Var(x_t | P): posterior of D plus the gradient noise
    return {
        "Dy": 0.5 * mp.log(1 + r**2 / (prec * v)),
        "wy": 0.5 * mp.log(1 + r**2 * var_x / s**2),
        "Dw": 0.5 * mp.log(1 + 1 / (prec * g**2)),
        "xy": 0.5 * mp.log(1 + r**2 * var_x / s**2),
    }


def _sums(T, g, s, r=1.0):
    terms = [_chain_terms(t, g, s, r) for t in range(1, T + 1)]
    return {k: sum(term[k] for term in terms) for k in terms[0]}


def proof_step_a():
    # I(D; y_1..T) = (1/2) log(1 + T / v) against the sum of the per-round terms
    ok = [
        abs(0.5 * mp.log(1 + T / (g**2 + s**2)) - _sums(T, g, s)["Dy"]) < 1e-12
        for T, g, s in CHAIN_POINTS
    ]
    return HOLDS if all(ok) else FAILS


def proof_step_b():
    # printed right-hand side: I(w;y|P) + 0 - I(D;w|y,P), with I(D;w|y,P) = I(D;w|P) - I(D;y|P)
    bad = []
    for T, g, s in CHAIN_POINTS:
        sums = _sums(T, g, s)
        printed = sums["wy"] - (sums["Dw"] - sums["Dy"])
        bad.append(abs(printed - sums["Dy"]) > 1e-6 * abs(sums["Dy"]))
    return FAILS if any(bad) else HOLDS


def proof_step_c():
    ok = []
    for T, g, s in CHAIN_POINTS:
        sums = _sums(T, g, s)
        ok.append(sums["wy"] - (sums["Dw"] - sums["Dy"]) <= sums["wy"] + 1e-12)
    return HOLDS if all(ok) else FAILS


def proof_step_d():
    ok = [
        abs(_sums(T, g, s, r)["wy"] - _sums(T, g, s, r)["xy"]) < 1e-12
        for T, g, s in CHAIN_POINTS
        for r in (1e-3, 0.25, 1e3)
    ]
    return HOLDS if all(ok) else FAILS


def eq9_mi_identity():
    ok = []
    for rho in (-0.9, 0.0, 0.6, 0.99):
        for sx, sy in ((0.1, 10.0), (3.0, 0.2)):
            h_x, h_y = (0.5 * mp.log(TWO_PI_E * s**2) for s in (sx, sy))
            h_xy = mp.log(TWO_PI_E * sx * sy * mp.sqrt(1 - rho**2))
            ok.append(abs(h_x + h_y - h_xy + 0.5 * mp.log(1 - rho**2)) < 1e-12)
    return HOLDS if all(ok) else FAILS


# H(w, m) >= 0 with p = 0 (H_b = 0) holds iff (1/2) log(2 pi e s^2) >= 0
EQ15_NONNEGATIVE_EDGE = 1 / math.sqrt(TWO_PI_E)


def eq15_nonnegative():
    return _verdict_from(
        holds_somewhere=0.5 * math.log2(TWO_PI_E * 10.0**2) >= 0,
        fails_somewhere=0.5 * math.log2(TWO_PI_E * 0.01**2) < 0,
    )


def eq15_step_a():
    # H(w, m) = h(w) since m is a function of w; the gap is H(m) = H_b(q) >= 0 for every q
    gaps = [-(q * mp.log(q, 2) + (1 - q) * mp.log(1 - q, 2)) for q in mp.linspace(0.01, 0.99, 21)]
    return HOLDS if min(gaps) >= 0 else FAILS


def eq15_step_b():
    # h(w) - h(x) = d log r, by the change of variables of a density
    return FAILS if any(abs(d * math.log(r)) > 0 for d in (1, 8) for r in (0.25, 4.0)) else HOLDS


def gaussian_entropy_formula():
    ok = []
    for s in (1e-3, 0.5, 30.0):
        h = -mp.quad(
            lambda x, s=s: mp.npdf(x, 0, s) * mp.log(mp.npdf(x, 0, s)), [-40 * s, 0, 40 * s]
        )
        ok.append(abs(h - 0.5 * mp.log(TWO_PI_E * s**2)) < 1e-10)
    return HOLDS if all(ok) else FAILS


def part_b_bound():
    # true - claimed = log det(c^2 Sigma) - (d* - 1) log B = 2 d* log c + log det Sigma - ...
    # for any fixed SPD Sigma: negative as c -> 0, positive as c -> infinity
    log_det_sigma, d_star, B = 0.7, 3, 8.0
    gap = lambda c: 2 * d_star * math.log(c) + log_det_sigma - (d_star - 1) * math.log(B)  # noqa: E731
    return _verdict_from(holds_somewhere=gap(1e-3) <= 0, fails_somewhere=gap(1e3) > 0)


def _eq4(p, B, d_star, delta):
    """Eq. (4) written out in bits (Delta in nats)."""
    return (
        1
        - (p - 1) / (2 * mp.log(2))
        + 2 * mp.log(1 / mp.mpf(B), 2)
        + 2 * delta / mp.log(2)
        + d_star * mp.log(TWO_PI_E, 2)
    )


def theorem1_assembly():
    rng = np.random.default_rng(7)
    ok = []
    for p, B, d_star, delta in rng.uniform((0, 1, 1, 0.1), (1, 1024, 64, 50), size=(20, 4)):
        part_b = mp.log(1 / mp.mpf(B), 2) + delta / mp.log(2) + d_star / 2 * mp.log(TWO_PI_E, 2)
        mask = 1 - (p - 1) / (2 * mp.log(2))
        ok.append(abs(mask + 2 * part_b - _eq4(p, B, d_star, delta)) < 1e-9)
    return HOLDS if all(ok) else FAILS


def theorem1_unit():
    # Sigma -> c^2 Sigma: Delta -> Delta - d* log c, the bound -> bound - 2 d* log2 c
    base = _eq4(0.5, 16, 4, 0.0)
    shifted = lambda c: base - 2 * 4 * mp.log(c, 2)  # noqa: E731
    return _verdict_from(holds_somewhere=shifted(1e-3) >= 0, fails_somewhere=shifted(1e3) < 0)


# --- Huang et al.: the cited tools -----------------------------------------------------------


def _binom_upper(n, p, k):
    """Pr[Binomial(n, p) >= k] by an mpmath sum."""
    k = max(0, math.ceil(k))
    return mp.fsum(
        mp.binomial(n, j) * mp.mpf(p) ** j * (1 - mp.mpf(p)) ** (n - j) for j in range(k, n + 1)
    )


def _binom_lower(n, p, k):
    k = math.floor(k)
    return mp.fsum(
        mp.binomial(n, j) * mp.mpf(p) ** j * (1 - mp.mpf(p)) ** (n - j) for j in range(0, k + 1)
    )


def chernoff_upper():
    n = 1000

    def ok(mu, delta):
        return _binom_upper(n, mu / n, (1 + delta) * mu) <= mp.exp(-(delta**2) * mu / 3)

    return _verdict_from(holds_somewhere=ok(5.0, 0.5), fails_somewhere=not ok(1.0, 9.0))


def chernoff_lower():
    n = 1000
    ok = [
        _binom_lower(n, mu / n, (1 - delta) * mu) <= mp.exp(-(delta**2) * mu / 2)
        for mu in (0.5, 5.0, 50.0)
        for delta in (0.1, 0.5, 0.9)
    ]
    return HOLDS if all(ok) else FAILS


def hoeffding():
    ok = []
    for n in (1, 7, 50):
        for k in np.linspace(0.1, 2.5, 7) * math.sqrt(n):  # t / c
            both = _binom_upper(n, 0.5, n / 2 + k) + _binom_lower(n, 0.5, n / 2 - k)
            ok.append(both <= 2 * mp.exp(-2 * k**2 / n))
    return HOLDS if all(ok) else FAILS


def bernstein():
    ok = []
    for n in (1, 7, 50):
        for u in (0.1, 1.0, 4.0):
            t = u * math.sqrt(n)  # M = 1
            tail = _binom_upper(n, 0.5, math.floor((n + t) / 2) + 1)
            ok.append(tail <= mp.exp(-(t**2 / 2) / (n + t / 3)))
    return HOLDS if all(ok) else FAILS


def _dense_sign_norms(rng, draws, m, n):
    """Spectral norms of sums of m matrices eps E_jj built densely (np.linalg.norm, ord 2)."""
    norms = []
    for _ in range(draws):
        total = np.zeros((n, n))
        for j, e in zip(rng.integers(0, n, m), rng.choice((-1.0, 1.0), m), strict=True):
            total[j, j] += e
        norms.append(np.linalg.norm(total, 2))
    return np.array(norms)


def matrix_bernstein_expectation():
    rng = np.random.default_rng(11)
    ok = []
    for m, n in ((100, 2), (50, 25)):
        norms = _dense_sign_norms(rng, 300, m, n)
        bound = math.sqrt(2 * m / n * math.log(2 * n)) + math.log(2 * n) / 3
        ok.append(norms.mean() + 4 * norms.std() / math.sqrt(300) <= bound)
    return HOLDS if all(ok) else FAILS


def matrix_bernstein_tail():
    rng = np.random.default_rng(12)
    m, n = 400, 8
    norms = _dense_sign_norms(rng, 600, m, n)
    var = m / n
    ok = []
    for u in (2.5, 3.5):
        t = u * math.sqrt(var)
        bound = 2 * n * math.exp(-(t**2 / 2) / (var + t / 3))
        ok.append(np.mean(norms >= t) + 4 * math.sqrt(bound / 600) <= bound)
    return HOLDS if all(ok) else FAILS


def littlewood_offord():
    # equal coefficients: at most one of the sums (spaced by 2) lies in an interval of length 1
    def most(d):
        return math.comb(d, d // 2) / 2**d

    return _verdict_from(
        holds_somewhere=all(most(d) <= 2 * math.log(d) / math.sqrt(d) for d in range(2, 300)),
        fails_somewhere=most(1) > 0,  # C log(1)/1 = 0 for every C
    )


def _law_of_f(a, t):
    return mp.erf(min(t, a) / mp.sqrt(2)) + mp.erfc(a / mp.sqrt(2))


def lemma_c3():
    # the probability is at most 1 < C delta once delta > 1/C; small delta: n = 1 exact
    return _verdict_from(
        holds_somewhere=_law_of_f(10.0, 0.1 * 0.5) >= 0.05 * 0.5,
        fails_somewhere=1 < 0.05 * 100,
    )


def lemma_c3_law():
    a, t = 1.0, 0.5
    conditioned = mp.erf(t / mp.sqrt(2)) / mp.erf(a / mp.sqrt(2))
    return FAILS if abs(_law_of_f(a, t) - conditioned) > 1e-6 else HOLDS


def lemma_c3_second_moment():
    ok = []
    for a in (0.3, 1.0, 3.0):
        mass = mp.erf(a / mp.sqrt(2))
        var_mu = mp.quad(lambda x: x**2 * mp.npdf(x), [-a, a]) / mass
        c4 = 1 - mp.sqrt(2 / mp.pi) * a * mp.exp(-(a**2) / 2) / mass
        # independent, zero-mean coordinates: E[(x1 + b x2)^2] = (1 + b^2) Var
        ok.append(abs(var_mu - c4) < 1e-12)
    return HOLDS if all(ok) else FAILS


def laplace_mechanism():
    # log-density ratio |(|y - f1| - |y - f2|)| / b <= ||f1 - f2||_1 / b = phi eps <= eps
    return HOLDS if all(phi * 1.0 <= 1.0 for phi in np.linspace(0.05, 1.0, 5)) else FAILS


def _gaussian_delta(eps, delta):
    c = 2 * mp.sqrt(mp.log(1 / mp.mpf(delta)))
    return mp.ncdf(eps / (2 * c) - c) - mp.exp(eps) * mp.ncdf(-eps / (2 * c) - c)


def gaussian_mechanism():
    return _verdict_from(
        holds_somewhere=_gaussian_delta(0.5, 1e-5) <= 1e-5,
        fails_somewhere=_gaussian_delta(50, 1e-5) > 1e-5,
    )


# --- Fed-LTP: eq. (9) and (12) as printed, eq. (23)'s epsilon_val ---------------------------


def eq9_pruned_fraction():
    # E[fraction] = E[Pr(|w| <= Pr |w_max|)] ~ erf(Pr m/sqrt 2) with m the expected maximum
    m = float(np.abs(np.random.default_rng(3).standard_normal((20, 1000))).max(axis=1).mean())
    return FAILS if abs(float(mp.erf(0.2 * m / mp.sqrt(2))) - 0.2) > 0.05 else HOLDS


def eq12_iterated():
    weights = list(np.random.default_rng(4).standard_normal(2000))
    once = [w for w in weights if abs(w) > 0.2 * max(map(abs, weights))]
    twice = [w for w in once if abs(w) > 0.2 * max(map(abs, once))]
    # (1 - P2)^2 of the weights should remain after two steps; the second step keeps all
    return FAILS if len(twice) == len(once) else HOLDS


def eq23_epsilon_val():
    # scale Delta_1 lambda: loss <= phi Delta_1 / (Delta_1 lambda) = phi / lambda <= 1 / lambda
    ok = [
        phi * d1 / (d1 * lam) <= 1 / lam + 1e-15
        for phi in (0.05, 1.0)
        for d1 in (1e-4, 1.0)
        for lam in (0.05, 50.0)
    ]
    return HOLDS if all(ok) else FAILS


INDEPENDENT_STEPS = {
    "priprune.eq9_mi_identity": eq9_mi_identity,
    "priprune.proof_step_a": proof_step_a,
    "priprune.proof_step_b": proof_step_b,
    "priprune.proof_step_c": proof_step_c,
    "priprune.proof_step_d": proof_step_d,
    "priprune.eq15_nonnegative": eq15_nonnegative,
    "priprune.eq15_step_a": eq15_step_a,
    "priprune.eq15_step_b": eq15_step_b,
    "priprune.gaussian_entropy_formula": gaussian_entropy_formula,
    "priprune.part_b_bound": part_b_bound,
    "priprune.theorem1_assembly": theorem1_assembly,
    "priprune.theorem1_unit": theorem1_unit,
    "huang.A1.upper": chernoff_upper,
    "huang.A1.lower": chernoff_lower,
    "huang.A2": hoeffding,
    "huang.A3": bernstein,
    "huang.A7.expectation": matrix_bernstein_expectation,
    "huang.A7.tail": matrix_bernstein_tail,
    "huang.C1": littlewood_offord,
    "huang.C3": lemma_c3,
    "huang.C3.proof_law": lemma_c3_law,
    "huang.C3.proof_second_moment": lemma_c3_second_moment,
    "huang.E6": laplace_mechanism,
    "huang.E7": gaussian_mechanism,
    "fedltp.eq9_pruned_fraction": eq9_pruned_fraction,
    "fedltp.eq12_iterated": eq12_iterated,
    "fedltp.eq23.epsilon_val": eq23_epsilon_val,
}


@pytest.fixture(scope="module")
def results():
    wanted = ["priprune.eq15_nonnegative", "huang.C1"]
    return {r.claim.id: r for r in claims.run_claims(wanted, seed=0)}


def test_domain_edges_match_closed_forms(results):
    domain = results["priprune.eq15_nonnegative"].checks[0].numbers["domain"]
    assert domain["low"] == pytest.approx(EQ15_NONNEGATIVE_EDGE, rel=1e-6)
    domain = results["huang.C1"].checks[0].numbers["domain"]
    assert domain["low"] == 2  # log(1) = 0: only d = 1 violates
