"""Huang et al.: registry verdicts of the newer claims and the corrected domain edges, each
against a computation by another route.

Same contract as ``test_claims_independent.py`` (whose coverage test also reads the
``INDEPENDENT_HUANG`` dict below): each function derives the verdict of one claim here (exact
rational arithmetic, explicit loops over matrices, seeded numpy Monte Carlo, mpmath), never
through the claim modules' formulas, and the registry must reach the same verdict. The
second half checks the domain edges stated in the ``corrected`` field of the Huang claims
that hold only on a domain: each closed form is compared with a root found numerically here
and, where the registry reports a domain, with the registry's edge.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from scipy import optimize, stats
from test_claims_independent import _verdict

from pruneleak.bounds import claims
from pruneleak.bounds.claims.checks import FAILS, HOLDS


def _registry(claim_id):
    return claims.run_claims([claims.get_claim(claim_id)], seed=0)[0]


def _registry_domain(claim_id):
    """The domain dict (param, low, high, text) that a check of ``claim_id`` reports."""
    (domain,) = [c.numbers["domain"] for c in _registry(claim_id).checks if "domain" in c.numbers]
    return domain


def _wilson(successes, n, z=3.3):
    """Wilson interval (z = 3.3: two-sided 99.9 %) for a binomial proportion."""
    p = successes / n
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
    return centre - half, centre + half


# --- Lemma B.1, proof: the choice of t ---------------------------------------------------


def huang_b1_proof_t():
    # Log-uniform random points (seeded) of a/sigma, ||x||_inf/||x||_2 and delta; at each,
    # Bernstein's exponent at the proof's t (in mpmath) must reach log(1/delta), and t must
    # not exceed the lemma's threshold.
    rng = np.random.default_rng(2003)
    ok = []
    for r, c, delta in zip(
        10 ** rng.uniform(-3, 3, 400),
        10 ** rng.uniform(-3, 0, 400),
        10 ** rng.uniform(-12, math.log10(0.099), 400),
        strict=True,
    ):
        r, c, lg = mp.mpf(r), mp.mpf(c), -mp.log(delta)
        t = 5 * r * mp.sqrt(r) * mp.sqrt(lg) + 5 * c * r * lg
        exponent = (t**2 / 2) / (r**3 + r * c * t / 3)
        ok.append(exponent >= lg and t <= 10 * r * (mp.sqrt(r) + 1) * lg)
    return _verdict(ok)


# --- Lemma B.2, proof: the choice of t ---------------------------------------------------


def _b2_step_ok(m, r, delta):
    # t written out term by term (||x|| = sigma = 1) against 1000 m (1 + a^2) log^3(m/delta).
    b_max = (10 * r * (math.sqrt(r) + 1) * math.log(m / delta)) ** 2
    t = 50 * m * math.log(1 / delta) + 50 * m * b_max * math.log(1 / delta)
    return t <= 1000 * m * (1 + r**2) * math.log(m / delta) ** 3


def _b2_edge(m, delta):
    return optimize.brentq(
        lambda r: float(_b2_step_ok(m, r, delta)) - 0.5, 1e-3, 1e3, xtol=1e-14, rtol=1e-14
    )


def huang_b2_proof_t():
    ms, deltas = (1, 10, 1000, 10**6), (1e-12, 1e-4, 0.05, 0.099)
    rs = np.geomspace(1e-3, 1e3, 61)
    return _verdict([all(_b2_step_ok(m, r, dl) for m in ms for dl in deltas) for r in rs])


def test_b2_proof_t_edge():
    # The edge in a/sigma grows with m and shrinks with delta: m = 1, delta = 0.099 binds.
    edges = {(m, dl): _b2_edge(m, dl) for m in (1, 10, 10**6) for dl in (1e-6, 0.099)}
    assert edges[(1, 0.099)] == min(edges.values())
    assert edges[(1, 0.099)] < edges[(10, 0.099)] < edges[(10**6, 0.099)]
    domain = _registry_domain("huang.B2.proof_t")
    assert domain["param"] == "r"
    assert domain["high"] == pytest.approx(edges[(1, 0.099)], rel=1e-4)  # bisected, 1e-9
    assert f"{edges[(1, 0.099)]:.4g}" in claims.get_claim("huang.B2.proof_t").corrected


# --- Lemma B.4, proof: ||e||_2^2 and ||e||_inf -------------------------------------------

B4_DELTAS = [0.1 * 0.9**k for k in range(60, 0, -1)]  # ascending in (0.0002, 0.09)


def _b4_norm_ok(d, delta):
    lg = math.log(1 / delta)
    return d + 3 * math.sqrt(d * lg) + 2 * lg <= 4 * d * lg


def _b4_norm_edge(d):
    """log(1/delta) at which the step turns true for dimension d, by bisection on the step."""
    lo, hi = 1e-9, 100.0  # false at L -> 0, true at L = 100 for every d >= 1
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if _b4_norm_ok(d, math.exp(-mid)) else (mid, hi)
    return hi


def huang_b4_proof_norm():
    # The step, for every d in 1..2000, along increasing delta.
    return _verdict([all(_b4_norm_ok(d, dl) for d in range(1, 2001)) for dl in B4_DELTAS])


def test_b4_proof_norm_edge_formula_and_registry_domain():
    # corrected: log(1/delta) >= d (3 + sqrt(16 d + 1))^2 / (4 (4 d - 2)^2), checked
    # against the bisection at every d; it decreases in d, so d = 1 sets the delta edge.
    def formula(d):
        return d * (3 + math.sqrt(16 * d + 1)) ** 2 / (4 * (4 * d - 2) ** 2)

    edges = [_b4_norm_edge(d) for d in range(1, 201)]
    assert all(
        e == pytest.approx(formula(d), rel=1e-9) for d, e in zip(range(1, 201), edges, strict=True)
    )
    assert edges == sorted(edges, reverse=True)
    assert edges[1] < math.log(10)  # from d = 2 on, every delta < 1/10 satisfies it
    domain = _registry_domain("huang.B4.proof_norm")
    assert domain["param"] == "delta"
    # The registry bisects its grid edge to ~1e-9 relative; 1e-4 is far below one grid step.
    assert domain["high"] == pytest.approx(math.exp(-formula(1)), rel=1e-4)
    assert f"{math.exp(-formula(1)):.4g}" in claims.get_claim("huang.B4.proof_norm").corrected


def huang_b4_proof_inf():
    # Seeded Monte Carlo of max_i |e_i| for e ~ N(0, I_d): the claimed level 1 - delta must
    # lie inside or below the 99.9 % interval of Pr[||e||_inf <= sqrt(log(d/delta))].
    rng = np.random.default_rng(1876)
    n, ok = 20_000, []
    for d in (1, 8, 64):
        e_inf = np.abs(rng.standard_normal((n, d))).max(axis=1)
        for delta in (0.01, 0.05, 0.09):
            hits = int(np.sum(e_inf <= math.sqrt(math.log(d / delta))))
            ok.append(_wilson(hits, n)[1] >= 1 - delta)
            # the corrected sqrt(2 log(2d/delta)) holds at the same draws
            fixed = int(np.sum(e_inf <= math.sqrt(2 * math.log(2 * d / delta))))
            assert _wilson(fixed, n)[1] >= 1 - delta
    return _verdict(ok)


# --- Theorem E.2 proof: the sign of A_bar ------------------------------------------------


def huang_e2_abar_sign():
    # Folded pruning of a seeded Gaussian matrix w (the paper's A), entry by entry: weights
    # with 0 <= y <= a are set to 0 (w_pruned, the paper's A_tilde); A_bar = A_tilde - A as
    # the proof defines it. Lemma B.5's
    # A_bar has the entries y 1{0 <= y <= a} >= 0, so (A_bar x)_i >= 0 for every x >= 0.
    rng = np.random.default_rng(7)
    m, d, a = 50, 20, 0.8
    w = rng.standard_normal((m, d))
    w_pruned = w.copy()
    for i in range(m):
        for j in range(d):
            if 0 <= w[i, j] <= a:
                w_pruned[i, j] = 0.0
    x = np.abs(rng.standard_normal(d))
    x /= np.linalg.norm(x)
    proof_bar = (w_pruned - w) @ x
    lemma_bar = np.where((w >= 0) & (w <= a), w, 0.0) @ x
    # corrected: A - A_tilde is the lemma's matrix
    np.testing.assert_allclose((w - w_pruned) @ x, lemma_bar, rtol=1e-14)
    ok = [np.allclose(proof_bar, lemma_bar), bool(np.all(proof_bar >= 0))]
    return HOLDS if all(ok) else FAILS


# --- Theorem E.2 proof, Part 2: closeness at Remark E.3's parameters -----------------------


def huang_e2_part2_closeness():
    # x = e_1, sigma = m, sigma_A = a = 1/m: z_i = (sigma A_bar_i1 W_i)^2, W_i ~ Lap(0, 1), with
    # A_bar_i1 = y 1{0 <= y <= a}. Scale-free: E z = 2 int_0^1 y^2 phi, E z^2 = 24 int_0^1 y^4
    # phi (mpmath). Chebyshev: Pr[mean z < eps^2] <= Var z/(m (E z - eps^2)^2), so the
    # probability of (1/sqrt m) ||e - A_bar x|| >= eps is at least 1 minus that.
    eps, delta = 0.05, 0.1
    mean = 2 * mp.quad(lambda y: y**2 * mp.npdf(y), [0, 1])
    var = 24 * mp.quad(lambda y: y**4 * mp.npdf(y), [0, 1]) - mean**2
    assert mean > eps**2
    ok = [1 - var / (m * (mean - eps**2) ** 2) <= delta for m in (100, 1000, 10_000, 10**6)]
    return _verdict(ok)


# --- Table 1 against Theorems E.1 and E.2 -------------------------------------------------


def huang_table1():
    # Theorem E.1: 2 GS_1 (m/delta)/(sigma sigma_A); E.2: 2 GS_1 log(m/delta)/(sigma sigma_A)
    # (as printed in Appendix E.1); Table 1's rows as printed: the same without the 2.
    ok = []
    for sigma, sigma_a, m, delta in ((1.0, 1.0, 10, 0.1), (100.0, 0.01, 1000, 1e-5)):
        gs1 = m * sigma_a
        for factor in (m / delta, math.log(m / delta)):
            theorem = 2 * gs1 * factor / (sigma * sigma_a)
            table = gs1 / (sigma * sigma_a) * factor
            ok.append(math.isclose(theorem, table, rel_tol=1e-12))
    return _verdict(ok)


# --- Section 4.1: gradual pruning ---------------------------------------------------------


def huang_sec4_1_gradual_pruning():
    # Exact rational arithmetic along every step t = t_0, t_0 + dt, ..., t_0 + n dt.
    ok = []
    for k0, kT in ((Fraction(0), Fraction(9, 10)), (Fraction(1, 10), Fraction(1, 2))):
        for t0, n, dt in ((0, 10, 1), (100, 7, 50), (3, 1, 2)):
            ks = [
                kT + (k0 - kT) * (1 - Fraction(t - t0, n * dt)) ** 3
                for t in range(t0, t0 + n * dt + 1, dt)
            ]
            ok.append(ks[0] == k0 and ks[-1] == kT and ks == sorted(ks))
    return _verdict(ok)


# --- Section 4.4: the budget and Figure 8 -------------------------------------------------

FIG8_MS = (10, 20, 50, 100, 200, 500, 1000, 1500)
# Figure 8 of the paper (rows k = 0.1 ... 0.9), transcribed again here.
FIG8 = {
    0.1: (0.0692, 0.0289, 0.0270, 0.0225, 0.0166, 0.0126, 0.0108, 0.0092),
    0.2: (0.0688, 0.0277, 0.0268, 0.0219, 0.0170, 0.0128, 0.0109, 0.0095),
    0.3: (0.0740, 0.0266, 0.0275, 0.0218, 0.0172, 0.0128, 0.0107, 0.0088),
    0.4: (0.0641, 0.0245, 0.0256, 0.0213, 0.0156, 0.0116, 0.0105, 0.0095),
    0.5: (0.0628, 0.0204, 0.0284, 0.0191, 0.0149, 0.0114, 0.0105, 0.0085),
    0.6: (0.0623, 0.0224, 0.0309, 0.0214, 0.0146, 0.0120, 0.0103, 0.0079),
    0.7: (0.0564, 0.0204, 0.0307, 0.0207, 0.0151, 0.0111, 0.0094, 0.0074),
    0.8: (0.0450, 0.0303, 0.0301, 0.0198, 0.0133, 0.0096, 0.0074, 0.0065),
    0.9: (0.0305, 0.0249, 0.0210, 0.0140, 0.0119, 0.0079, 0.0056, 0.0053),
}


def huang_sec4_4_figure8():
    # The first width at which each row drops below 0.05 and 0.01 (a loop over the row),
    # against the text: <= 20 for 0.05 everywhere; <= 500 for k > 0.8, <= 1500 otherwise.
    def first_below(row, eps):
        return next((m for m, err in zip(FIG8_MS, row, strict=True) if err < eps), math.inf)

    ok = []
    for k, row in FIG8.items():
        ok.append(first_below(row, 0.05) <= 20)
        ok.append(first_below(row, 0.01) <= (500 if k > 0.8 else 1500))
    return _verdict(ok)


def huang_sec4_4_budget():
    # Seeded Gaussian matrices at Remark E.3's sigma = m, sigma_A = 1/m (d = 16): Theorem
    # E.2's epsilon with GS_1 = max_k ||A_(*,k)||_1 (Lemma D.2's proof), and with the
    # bias-free lower bound sum_i (A_ik)_+, must reach 0.5 at Figure 8's widths.
    rng = np.random.default_rng(44)
    ok = []
    for m in FIG8_MS:
        sigma, sigma_a = m, 1 / m
        A = rng.normal(0.0, sigma_a, size=(200, m, 16))
        for gs1 in (np.abs(A).sum(axis=1).max(axis=1), np.maximum(A, 0).sum(axis=1).max(axis=1)):
            eps = 2 * gs1 * math.log(m / 0.1) / (sigma * sigma_a)
            ok.append(bool(np.all(eps <= 0.5)))
    return _verdict(ok)


INDEPENDENT_HUANG = {
    "huang.sec4_1.gradual_pruning": huang_sec4_1_gradual_pruning,
    "huang.sec4_4.budget": huang_sec4_4_budget,
    "huang.sec4_4.figure8": huang_sec4_4_figure8,
    "huang.B1.proof_t": huang_b1_proof_t,
    "huang.B2.proof_t": huang_b2_proof_t,
    "huang.B4.proof_norm": huang_b4_proof_norm,
    "huang.B4.proof_inf": huang_b4_proof_inf,
    "huang.E2.abar_sign": huang_e2_abar_sign,
    "huang.E2.part2_closeness": huang_e2_part2_closeness,
    "huang.table1": huang_table1,
}


def test_part2_max_reports_the_units_dependent_edge():
    # The published threshold holds for b <= 1/log(m/delta) only; the registry's units check
    # reports that edge at its grid's largest log(m/delta) = log(10^4/10^-3) and fails.
    result = _registry("huang.E2.part2_max")
    assert result.verdict == FAILS
    domain = _registry_domain("huang.E2.part2_max")
    # bisection to ~1e-9 relative; 1e-6 is far below one grid step (26 % on 121 log points)
    assert domain["high"] == pytest.approx(1 / math.log(10_000 / 1e-3), rel=1e-6)
    # and per width m (at the grid's smallest delta, 1e-3) the edge 1/log(m/delta)
    (by_m,) = [b for b in domain["boundaries"] if b["param"] == "m"]
    for m, high in zip(by_m["values"], by_m["high"], strict=True):
        assert high == pytest.approx(1 / math.log(m / 1e-3), rel=1e-6)
    assert "b_i^2 log^2(m/delta)" in result.claim.corrected


# --- corrected domain edges of the existing holds-on-domain claims -----------------------


def _number_after(text, anchor):
    """The first decimal number that follows ``anchor`` in ``text``."""
    match = re.search(re.escape(anchor) + r"\D*?(\d+\.\d+)", text)
    assert match, (anchor, text)
    return float(match.group(1))


def _folded(a, power):
    """int_0^a y^power phi(y) dy (sigma = 1), mpmath quadrature."""
    return mp.quad(lambda y: y**power * mp.npdf(y), [0, a])


@pytest.mark.parametrize(
    ("claim_id", "anchor", "equation", "start", "side"),
    [
        # 0.1 a^3/sigma <= E[u^2] = 2 int_0^a y^2 phi, up to the root
        ("huang.B2.moments", "iff a <=", lambda r: 2 * _folded(r, 2) - r**3 / 10, 1.9, "high"),
        # E[A_bar] = int_0^a y phi >= a^2/6, up to the root
        ("huang.B5.mean", "iff a <=", lambda r: _folded(r, 1) - r**2 / 6, 0.86, "high"),
        # E[A_bar^2] = int_0^a y^2 phi <= a^3/9, from the root on
        ("huang.B5.second_moment", "iff a >=", lambda r: _folded(r, 2) - r**3 / 9, 0.78, "low"),
    ],
)
def test_corrected_edge_of_a_scale_free_moment_bound(claim_id, anchor, equation, start, side):
    root = float(mp.findroot(equation, start))
    stated = _number_after(claims.get_claim(claim_id).corrected, anchor)
    assert stated == pytest.approx(root, abs=6e-5)  # printed to 5 significant digits
    domain = _registry_domain(claim_id)
    assert domain[side] == pytest.approx(root, rel=1e-4)  # bisected to ~1e-9 relative


@pytest.mark.parametrize("m", [1, 16, 1000])
@pytest.mark.parametrize("delta", [1e-6, 0.05, 0.099])
def test_b5_constant_c_edge_formula(m, delta):
    # corrected: C <= 0 iff a/sigma_A <= (8 + 4 sqrt 3) log(m/delta); C's positive root by
    # mpmath, and C's sign on both sides of it.
    lg = math.log(m / delta)

    def c(r):
        return r**2 / 6 - mp.sqrt(2 * r**3 / 9) * mp.sqrt(lg) - 2 * r / 3 * lg

    edge = (8 + 4 * math.sqrt(3)) * lg
    assert float(mp.findroot(c, 15 * lg)) == pytest.approx(edge, rel=1e-12)
    assert c(edge * 0.999) < 0 < c(edge * 1.001)
    assert "(8 + 4 sqrt 3) log(m/delta)" in claims.get_claim("huang.B5.constant_C").corrected


@pytest.mark.parametrize(("m", "d", "delta"), [(64, 8, 0.05), (16, 1, 0.01), (256, 32, 0.09)])
def test_d3_edge_formula(m, d, delta):
    # corrected: sigma_A <= t / sqrt(F^-1_chi2_m((1 - delta)^(1/d))), t = 2 (sqrt(md) +
    # sqrt(log(1/delta))). Against brentq on the exact tail 1 - F(t^2/s^2)^d, and a seeded
    # Monte Carlo of the column norms 10 % inside and outside the edge.
    t = 2 * (math.sqrt(m * d) + math.sqrt(math.log(1 / delta)))
    edge = t / math.sqrt(stats.chi2.ppf((1 - delta) ** (1 / d), m))
    root = optimize.brentq(lambda s: 1 - stats.chi2.cdf(t**2 / s**2, m) ** d - delta, 0.5, 100)
    assert edge == pytest.approx(root, rel=1e-9)
    rng = np.random.default_rng(m * d)
    n = 4000
    norms = np.sqrt((rng.standard_normal((n, m, d)) ** 2).sum(axis=1)).max(axis=1)
    inside, outside = (int(np.sum(s * norms > t)) for s in (0.9 * edge, 1.1 * edge))
    assert _wilson(inside, n)[0] <= delta <= _wilson(outside, n)[1]
    assert _wilson(outside, n)[0] > delta


def test_d3_registry_edge_below_the_formula():
    # The registry's Monte Carlo tests 8 values of sigma_A a factor 2.26 apart: its last
    # passing value lies within one step below the exact edge at m = 64, d = 8, delta = 0.05.
    t = 2 * (math.sqrt(64 * 8) + math.sqrt(math.log(20)))
    edge = t / math.sqrt(stats.chi2.ppf(0.95 ** (1 / 8), 64))
    found = _registry_domain("huang.D3")["high"]
    assert edge / 2.27 <= found <= edge
    assert f"{edge:.3g}" in claims.get_claim("huang.D3").corrected
