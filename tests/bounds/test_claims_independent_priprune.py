"""Verdicts of the PriPrune statement claims and the new H-MINE claims, derived independently.

Each function below computes the true and the claimed quantity by a route that does not go
through the registry's check: mpmath numerical derivatives of the bound written out here
(or of Gaussian entropies from scipy), scikit-learn's ``normalized_mutual_info_score`` on
freshly drawn images and on scikit-learn's digits, mpmath quadrature of the Gumbel
densities, per-weight scipy minimisation of the defense loss, the exact expected size of a
union of masks summed weight by weight, Gauss-Hermite quadrature of the DV critic, and
parameter counts of explicitly shaped weight arrays. The verdict (and
the domain edge for holds-on-domain claims) derived here must equal the registry's.
Only the verdicts and domains of ``run_claims`` are read from ``bounds``.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from numpy.polynomial import hermite_e
from scipy import optimize, stats
from sklearn.datasets import load_digits
from sklearn.metrics import normalized_mutual_info_score

from pruneleak.bounds import claims
from pruneleak.bounds.claims.checks import FAILS, HOLDS, HOLDS_ON_DOMAIN

LN2 = math.log(2)
TWO_PI_E = 2 * math.pi * math.e


def _verdict(ok: list[bool]) -> str:
    """holds / fails / holds-on-domain from the pass flags along one ordered parameter."""
    if all(ok):
        return HOLDS
    runs = "".join("1" if flag else "0" for flag in ok).split("0")
    return HOLDS_ON_DOMAIN if max(len(r) for r in runs) >= 2 else FAILS


def _conjunction(*verdicts: str) -> str:
    for verdict in (FAILS, HOLDS_ON_DOMAIN):
        if verdict in verdicts:
            return verdict
    return HOLDS


def _hb_bits(p):
    p = mp.mpf(p)
    return -(p * mp.log(p, 2) + (1 - p) * mp.log(1 - p, 2))


def _gaussian_bits(d_star, B):
    """Entropy of N(0, I_{d*}/B) in bits (scipy): the corrected part B with Sigma = I."""
    return stats.multivariate_normal(cov=np.eye(d_star) / B).entropy() / LN2


def _published(p, B, d_star, delta_nats):
    """Theorem 1 (eq. 4) as printed, in bits ("log" base 2, Delta given in nats)."""
    return (
        1
        - (p - 1) / (2 * mp.log(2))
        + 2 * mp.log(1 / mp.mpf(B), 2)
        + 2 * delta_nats / mp.log(2)
        + d_star * mp.log(2 * mp.pi * mp.e, 2)
    )


# --- monotonicity ----------------------------------------------------------------------

P_GRID = np.linspace(0.01, 0.99, 99)
B_GRID = np.geomspace(1.0, 1024.0, 61)


def monotone_p():
    # published slope in p: mpmath derivative of eq. (4); corrected: of d H_b(p) (the only
    # p-dependent term), for d = 1 and 10^6.
    published = [mp.diff(lambda q: _published(q, 4, 3, 0.0), p) <= 0 for p in P_GRID]
    corrected = [
        all(mp.diff(lambda q, d=d: d * _hb_bits(q), p) <= 1e-12 for d in (1, 10**6)) for p in P_GRID
    ]
    return _conjunction(_verdict(published), _verdict(corrected))


# d/dp of H_b vanishes at the edge: mpmath root of its derivative.
MONOTONE_P_EDGE = float(mp.findroot(lambda q: mp.diff(_hb_bits, q), 0.4))


def monotone_B():
    # corrected: 2 h(N(0, I/B)) in bits decreases in B (scipy entropies, finite differences)
    published = [mp.diff(lambda b: _published(0.3, b, 3, 0.0), B) < 0 for B in B_GRID]
    corrected = [
        all(
            _gaussian_bits(d, B * 1.01) < _gaussian_bits(d, B)
            for d in (1, 10, 100)  # d* as in the registry grid
        )
        for B in B_GRID
    ]
    return _conjunction(_verdict(published), _verdict(corrected))


def _dstar_increment(B):
    """Corrected bound (Sigma = I, Delta = 0) at d* + 1 minus at d*: 2 h per coordinate."""
    return 2 * (_gaussian_bits(2, B) - _gaussian_bits(1, B))


def monotone_dstar():
    published = [_published(0.3, B, 2, 0.0) >= _published(0.3, B, 1, 0.0) for B in B_GRID]
    corrected = [_dstar_increment(B) >= -1e-12 for B in B_GRID]
    return _conjunction(_verdict(published), _verdict(corrected))


MONOTONE_DSTAR_EDGE = optimize.brentq(_dstar_increment, 2.0, 100.0, xtol=1e-12)


DELTA_GRID = np.linspace(-20.0, 20.0, 81)


def monotone_T():
    # Corollary 1: T x bound at T + 1 minus at T, at B = d* = 1, for every p on [0, 1].
    def rises(delta):
        return all(
            2 * _published(p, 1, 1, delta) >= 1 * _published(p, 1, 1, delta)
            for p in np.linspace(0.0, 1.0, 11)
        )

    return _verdict([rises(delta) for delta in DELTA_GRID])


# the bound at p = 1 (its smallest value over p) crosses 0 here
MONOTONE_T_EDGE = float(mp.findroot(lambda delta: _published(1, 1, 1, delta), -1.0))

# --- NMI footnote ----------------------------------------------------------------------

CHANCE_TOLERANCE = 0.01  # the value "near 0" that the registry's claim tests against
NMI_POINTS = [(256, 64), (17, 64), (256, 784), (256, 3072), (2, 3072)]


def _sklearn_chance(levels, pixels, rng, pairs=100):
    u = rng.integers(0, levels, size=(pairs, pixels))
    v = rng.integers(0, levels, size=(pairs, pixels))
    scores = [
        normalized_mutual_info_score(a, b, average_method="arithmetic")
        for a, b in zip(u, v, strict=True)
    ]
    return np.mean(scores), np.std(scores, ddof=1) / math.sqrt(pairs)


def nmi_chance():
    # A point fails when a 99.9 % interval of the mean NMI lies above the tolerance.
    rng = np.random.default_rng(7)
    z = stats.norm.isf(0.0005)
    fails = []
    for levels, pixels in NMI_POINTS:
        mean, se = _sklearn_chance(levels, pixels, rng)
        fails.append(mean - z * se > CHANCE_TOLERANCE)
    # digits at 256 levels against unrelated uniform 256-level reconstructions
    digits = (load_digits().images.reshape(-1, 64).astype(int) * 255) // 16
    noise = rng.integers(0, 256, size=(200, 64))
    pairs = zip(digits[:200], noise, strict=True)
    digit_scores = [normalized_mutual_info_score(a, b) for a, b in pairs]
    fails.append(np.mean(digit_scores) > 0.5)  # the issue measured 0.61
    return FAILS if any(fails) else HOLDS


# --- Gumbel-Softmax mask ----------------------------------------------------------------


def gumbel_mask_probability():
    # P(log a + G0 > log(1 - a) + G1) = int f_G(g) F_G(g + log(a/(1-a))) dg with the Gumbel
    # density f_G(g) = exp(-g - e^-g) and F_G(x) = exp(-e^-x); substituting t = e^-g gives
    # int_0^oo exp(-t) exp(-t (1-a)/a) dt, integrated by mpmath. The event is the same for
    # every tau (dividing by tau > 0 keeps the order).
    def prob(a):
        c = (1 - a) / a
        return mp.quad(lambda t: mp.exp(-t) * mp.exp(-t * c), [0, mp.inf])

    ok = [abs(prob(mp.mpf(a)) - a) < 1e-12 for a in (0.1, 0.3, 0.7)]
    return HOLDS if all(ok) else FAILS


# --- defense loss, eq. 17 --------------------------------------------------------------

LAYERS = (np.linspace(1.0, 20.0, 20), np.exp(np.linspace(-3.0, 1.0, 50)))  # as the registry's


def _argmin_alpha(lam_pri_w, lam_sha):
    """argmin over alpha in (0, 1] of -lam_pri_w log(alpha) + lam_sha alpha, by a fine grid."""
    alpha = np.geomspace(1e-9, 1.0, 20001)
    values = -lam_pri_w * np.log(alpha) + lam_sha * alpha
    return alpha[np.argmin(values)]


def eq17_alpha_order():
    ok = []
    for w in np.geomspace(1e-8, 1e-1, 29):
        for ratio in np.geomspace(1.0, 1e6, 13):
            ok.append(_argmin_alpha(ratio * 1.5 * w, 1.0) >= _argmin_alpha(ratio * w, 1.0))
    return HOLDS if all(ok) else FAILS


def _layer_means(rate):
    """Per-layer mean of the per-weight minimisers of the full eq. (16) alpha terms."""
    n_total = sum(g.size for g in LAYERS)
    lam_sha = 1.0
    lam_pri = rate * lam_sha * n_total
    means = []
    for g in LAYERS:
        weights = g.size / n_total * g / g.sum()
        alphas = [
            optimize.minimize_scalar(
                lambda a, w=w: -lam_pri * w * math.log(a) + lam_sha * a,
                bounds=(1e-9, 1.0),
                method="bounded",
                options={"xatol": 1e-10},
            ).x
            for w in weights
        ]
        means.append(np.mean(alphas))
    return means


def eq17_uniform_layer_sparsity():
    ok = []
    for rate in np.geomspace(1e-3, 1.0, 61):
        first, second = _layer_means(rate)
        ok.append(abs(first - second) <= 1e-6 * max(first, second))
    return _verdict(ok)


# no alpha clips at 1 while rate * |g_j| / mean_l |g| <= 1 in every layer
UNIFORM_EDGE = min(g.mean() / g.max() for g in LAYERS)

# --- Mix defense rate -------------------------------------------------------------------


def mix_defense_rate():
    # Exact expected union fraction of a fixed set of k = a d largest weights and a random
    # mask that prunes each weight with probability b: E|union|/d = a + (1 - a) b, written as
    # a sum over the d weights (explicit loop), against the claimed a + b.
    d = 2000
    fails = []
    for a in (0.0, 0.1, 0.15, 0.2):
        b = round(0.3 - a, 2)
        k = round(a * d)
        expected = sum(1.0 if j < k else b for j in range(d)) / d
        fails.append(abs(expected - (a + b)) > 1e-9)
    return FAILS if any(fails) else HOLDS


# --- Conv-2 parameter count -------------------------------------------------------------


def conv2_parameter_count():
    # LEAF FEMNIST CNN built from explicitly shaped weight and bias arrays; the flattened
    # size after two 'same' convolutions and two 2x2 poolings is found by shrinking 28 twice.
    side = 28
    for _ in range(2):
        side //= 2
    shapes = [
        (32, 1, 5, 5), (32,),
        (64, 32, 5, 5), (64,),
        (2048, side * side * 64), (2048,),
        (62, 2048), (62,),
    ]  # fmt: skip
    total = sum(np.zeros(shape).size for shape in shapes)
    return HOLDS if total == 6_603_710 else FAILS


# --- H-MINE ----------------------------------------------------------------------------


def hmine_alg1_minibatch_lower_bound():
    # S = 1: E[V] = E_P[T*] - E_Q[T*], both by Gauss-Hermite quadrature (T* is quadratic,
    # so 20 nodes are exact), against I = -log(1 - rho^2)/2 from scipy's Gaussian entropies.
    rho = 0.3
    nodes, weights = hermite_e.hermegauss(20)
    weights = weights / weights.sum()
    a, b = np.meshgrid(nodes, nodes, indexing="ij")
    w2 = np.outer(weights, weights)

    def critic(x, y):
        quad = rho**2 * x**2 - 2 * rho * x * y + rho**2 * y**2
        return -0.5 * math.log(1 - rho**2) - quad / (2 * (1 - rho**2))

    joint_y = rho * a + math.sqrt(1 - rho**2) * b
    mean_joint = float((w2 * critic(a, joint_y)).sum())
    mean_product = float((w2 * critic(a, b)).sum())
    cov = [[1, rho], [rho, 1]]
    mi = 2 * stats.norm.entropy() - stats.multivariate_normal(cov=cov).entropy()
    return FAILS if mean_joint - mean_product > mi + 1e-3 else HOLDS


def hmine_input_layer_reduction():
    # explicit weight and bias arrays of a 200-neuron first layer, Adult d_x = 14
    def layer(inputs):
        return np.zeros((inputs, 200)).size + np.zeros(200).size

    ok = []
    for B in range(1, 65):
        ratios = [layer(B * 14 + d_g) / layer(14 + d_g) for d_g in (1, 15, 100, 10_000)]
        ok.append(all(abs(r - B) <= 1e-9 * B for r in ratios))
    return _verdict(ok)


INDEPENDENT = {
    "priprune.monotone_p": monotone_p,
    "priprune.monotone_B": monotone_B,
    "priprune.monotone_dstar": monotone_dstar,
    "priprune.monotone_T": monotone_T,
    "priprune.nmi_chance": nmi_chance,
    "priprune.gumbel_mask_probability": gumbel_mask_probability,
    "priprune.eq17_alpha_order": eq17_alpha_order,
    "priprune.eq17_uniform_layer_sparsity": eq17_uniform_layer_sparsity,
    "priprune.mix_defense_rate": mix_defense_rate,
    "priprune.conv2_parameter_count": conv2_parameter_count,
    "hmine.alg1_minibatch_lower_bound": hmine_alg1_minibatch_lower_bound,
    "hmine.input_layer_reduction": hmine_input_layer_reduction,
}


# claim -> (parameter, which end of the registry's domain, the edge computed here, allowed
# ratio window). The registry bisects a grid edge to ~1e-9 relative; 1e-4 is far below one
# grid step of any of these grids (1 % in p, 12 % in B, 0.5 in Delta, 12 % in rate).
DOMAIN_EDGES = {
    "priprune.monotone_p": ("p", "low", MONOTONE_P_EDGE),
    "priprune.monotone_dstar": ("B", "high", MONOTONE_DSTAR_EDGE),
    "priprune.monotone_T": ("Delta", "low", MONOTONE_T_EDGE),
    "priprune.eq17_uniform_layer_sparsity": ("rate", "high", UNIFORM_EDGE),
}


@pytest.mark.parametrize("claim_id", sorted(DOMAIN_EDGES))
def test_registry_domain_edge_agrees_with_an_independent_computation(claim_id):
    param, side, edge = DOMAIN_EDGES[claim_id]
    result = claims.run_claims([claims.get_claim(claim_id)], seed=0)[0]
    assert result.verdict == HOLDS_ON_DOMAIN, result.summary
    (domain,) = [c.numbers["domain"] for c in result.checks if c.verdict == HOLDS_ON_DOMAIN]
    assert domain["param"] == param
    assert domain[side] == pytest.approx(edge, rel=1e-4, abs=1e-9)


def test_edges_are_the_stated_closed_forms():
    """The edges computed numerically above are those the corrected statements give."""
    assert math.isclose(MONOTONE_P_EDGE, 0.5, rel_tol=1e-12)
    assert math.isclose(MONOTONE_DSTAR_EDGE, TWO_PI_E, rel_tol=1e-9)
    assert math.isclose(MONOTONE_T_EDGE, -math.log(4 * math.pi * math.e) / 2, rel_tol=1e-12)


def test_every_new_claim_has_a_failing_or_holding_corrected_statement():
    for claim_id in INDEPENDENT:
        claim = claims.get_claim(claim_id)
        verdict = claims.run_claims([claim], seed=0)[0].verdict
        if verdict in (FAILS, HOLDS_ON_DOMAIN):
            assert claim.corrected, claim_id
