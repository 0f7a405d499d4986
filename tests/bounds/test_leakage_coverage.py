"""Coverage of the Monte Carlo intervals of exact_leakage and batch_leakage (issue 29).

Candidates: :math:`M = 16` orthogonal releases of equal norm, :math:`r_i = \\mu e_i`, noise
:math:`s = 1`; the secret is a uniform :math:`B`-subset :math:`S` (:math:`B = 1`:
``exact_leakage``; :math:`B = 2`: ``batch_leakage``, method ``"enumerated"``). Then
:math:`m_S = (\\mu/B) 1_S`, every :math:`\\|m_S\\|` is the same, and the log-likelihood of
:math:`S` given :math:`y = m_{S_0} + z` is :math:`(\\mu/B)\\sum_{i\\in S} y_i` up to a
constant: the reference below needs only :math:`M` normals per draw and the
:math:`N\\times M` membership matrix, none of the Gram or inner-product machinery it checks.

Independent reference values, from their own draws (seeds far from the 40 checked):

- bits: the mean of the information density :math:`\\log_2 N + \\log_2\\pi_{S_0}(Y)`
  (Cover & Thomas, eq. 2.28: :math:`I = \\mathbb E\\log p(Y\\mid S)/p(Y)`), not the
  posterior-entropy form :math:`\\log_2 N - H(\\pi)` that the code averages;
- Bayes success: the frequency of :math:`\\arg\\max_S \\pi_S(Y) = S_0` (it equals
  :math:`\\mathbb E\\max_S\\pi_S(Y)`, which the code averages); for :math:`B = 1` also the
  quadrature :math:`\\int\\varphi(t)\\,\\Phi(t + \\mu)^{M-1}\\,dt` (MAP correct iff
  :math:`z_j < z_0 + \\mu` for every :math:`j`).

Each reference's standard error is checked to be below 1/20 of the smallest half-width an
empirical Bernstein interval can have here (its range term), so it cannot decide a count.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, special, stats

from pruneleak.bounds import leakage

M = 16
SEEDS = 40
SAMPLES = 256
CONFIDENCE = 0.95
# With coverage >= 95 % per seed, fewer covers than this happen with probability <= 1 %.
MIN_COVERED = int(stats.binom.ppf(0.01, SEEDS, CONFIDENCE))  # 34
REFERENCE_DRAWS = {1: 1 << 20, 2: 1 << 18}
_CHUNK = 1 << 14

# (B, mu, regime): "saturated" within 1e-3 bits of log2 N, "middle" near (log2 N) / 2
# (mu found by bisection by hand with the reference below: 4 - 3.99933 and 6.90689 - 6.90615
# bits short of the ceiling; 2.006 of 4 and 3.44 of 6.907 bits in the middle).
CASES = [(1, 6.0, "saturated"), (1, 1.9, "middle"), (2, 12.5, "saturated"), (2, 3.75, "middle")]


def _reference(b: int, mu: float, draws: int, seed: int):
    """(bits, its standard error, success, its standard error) by the routes of the module
    docstring; the true subset is {0, ..., b - 1} (every subset is alike by symmetry)."""
    members = np.array(list(itertools.combinations(range(M), b)))
    membership = np.zeros((len(members), M))
    np.put_along_axis(membership, members, 1.0, axis=1)
    rng = np.random.default_rng(seed)
    density, hits = [], []
    for _ in range(draws // _CHUNK):
        y = rng.standard_normal((_CHUNK, M))
        y[:, :b] += mu / b
        logits = (mu / b) * (y @ membership.T)
        log_post = logits[:, 0] - special.logsumexp(logits, axis=1)
        density.append(math.log2(len(members)) + log_post / math.log(2))
        hits.append(logits.argmax(axis=1) == 0)
    density, hits = np.concatenate(density), np.concatenate(hits)
    success = float(hits.mean())
    return (
        float(density.mean()),
        float(density.std()) / math.sqrt(draws),
        success,
        math.sqrt(success * (1 - success) / draws),
    )


def _runs(b: int, mu: float):
    releases = mu * np.eye(M)
    if b == 1:
        return [
            leakage.exact_leakage(releases, 1.0, samples=SAMPLES, seed=seed)
            for seed in range(SEEDS)
        ]
    runs = [
        leakage.batch_leakage(releases, 1.0, b, samples=SAMPLES, seed=seed) for seed in range(SEEDS)
    ]
    assert {r.method for r in runs} == {"enumerated"}
    return runs


@pytest.mark.parametrize(("b", "mu", "regime"), CASES)
def test_intervals_cover_at_least_as_often_as_stated(b, mu, regime):
    ceiling = math.log2(math.comb(M, b))
    bits, bits_se, success, success_se = _reference(b, mu, REFERENCE_DRAWS[b], seed=1000 + b)
    if regime == "saturated":
        assert ceiling - bits < 1e-3
    else:
        assert abs(bits - ceiling / 2) < 0.1 * ceiling
    if b == 1:  # the Monte Carlo reference against the quadrature, within 5 of its errors
        exact = integrate.quad(
            lambda t: stats.norm.pdf(t) * stats.norm.cdf(t + mu) ** (M - 1), -np.inf, np.inf
        )[0]
        assert abs(success - exact) < 5 * success_se
        success = exact
    # Smallest half-width of an interval here: the range term 7 R ln(2/delta) / (3 (n - 1)).
    range_term = 7 * math.log(4 / (1 - CONFIDENCE)) / (3 * (SAMPLES - 1))
    assert 20 * bits_se < range_term * ceiling
    assert 20 * success_se < range_term * (1 - 1 / math.comb(M, b))
    runs = _runs(b, mu)
    covered_bits = sum(r.ci_bits[0] <= bits <= r.ci_bits[1] for r in runs)
    covered_success = sum(r.bayes_success_ci[0] <= success <= r.bayes_success_ci[1] for r in runs)
    assert covered_bits >= MIN_COVERED, (covered_bits, bits)
    assert covered_success >= MIN_COVERED, (covered_success, success)
