"""MonteCarloCheck's decision rule at its stated family-wise level (Bonferroni over points).

The intervals are recomputed here from the normal quantile of ``statistics.NormalDist``
and the Wilson formula, and the family-wise error of a *true* claim is measured by
repeating seeded checks: without the Bonferroni correction over k points a true claim
would be reported as failing in about 1 - (1 - alpha)^k of the runs instead of <= alpha.
"""

from __future__ import annotations

import math
from functools import partial
from statistics import NormalDist

import numpy as np
import pytest
from montecarlo_helpers import monte_carlo_check

from pruneleak.bounds.claims.checks import FAILS, HOLDS, HOLDS_ON_DOMAIN, MonteCarloCheck

_check = partial(monte_carlo_check, samples=100)


def _z(confidence, k):
    """Two-sided normal quantile at family-wise ``confidence`` split over ``k`` points."""
    return NormalDist().inv_cdf(1 - (1 - confidence) / (2 * k))


@pytest.mark.parametrize(("k", "confidence"), [(1, 0.99), (20, 0.99), (50, 0.95)])
def test_estimate_intervals_are_bonferroni_over_the_points(k, confidence):
    """Each point's interval is estimate +- z_{1 - alpha/(2k)} se; an estimate 3 se from the
    claimed value holds exactly when that z exceeds 3 (k = 20 at 99 %: z = 3.48, while the
    uncorrected z = 2.58 would report a failure)."""
    se = 0.1
    check = _check(
        lambda rng, n, i: (1.0 + 3.0 * se, se),
        lambda i: 1.0,
        "==",
        tuple({"i": i} for i in range(k)),
        "estimate",
        confidence=confidence,
    )
    result = check.run(rng=0)
    z = _z(confidence, k)
    for row in result.numbers["points"]:
        assert row["ci"] == pytest.approx([1.3 - z * se, 1.3 + z * se], rel=1e-12)
    assert result.verdict == (HOLDS if z >= 3.0 else FAILS)


def test_wilson_intervals_are_bonferroni_over_the_points():
    k, n, hits, confidence = 25, 400, 120, 0.99
    check = _check(
        lambda rng, n, i: np.arange(n) < hits,
        lambda i: 0.37,
        "<=",
        tuple({"i": i} for i in range(k)),
        "probability",
        samples=n,
        confidence=confidence,
    )
    z = _z(confidence, k)
    phat = hits / n
    # Wilson (1927): (phat + z^2/2n +- z sqrt(phat(1-phat)/n + z^2/4n^2)) / (1 + z^2/n).
    centre = (phat + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z * math.sqrt(phat * (1 - phat) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
    result = check.run(rng=0)
    for row in result.numbers["points"]:
        assert row["ci"] == pytest.approx([centre - half, centre + half], rel=1e-12)
    # The upper end 0.3862 at z = 3.54 is above 0.37 (not shown to hold); the uncorrected
    # z = 2.58 gives 0.3619 and would report holds.
    assert result.verdict != HOLDS


def _family_wise_failures(check, repetitions, seed):
    seeds = np.random.SeedSequence(seed).spawn(repetitions)
    return sum(check.run(rng=np.random.default_rng(s)).verdict == FAILS for s in seeds)


def test_true_identity_fails_at_most_at_the_family_wise_level():
    """50 points of a true identity (the estimate is N(claimed, se)): at 99 % family-wise,
    a run fails with probability <= 1 %; 300 seeded runs expect <= 3 failures (we allow 9,
    P[Binomial(300, 0.01) > 9] = 0.001). Without Bonferroni each run fails with
    probability 1 - 0.99^50 = 0.39, about 118 of 300."""

    def estimate(rng, n, i):
        return 2.0 + 0.05 * rng.standard_normal(), 0.05

    check = _check(estimate, lambda i: 2.0, "==", tuple({"i": i} for i in range(50)), "estimate")
    assert _family_wise_failures(check, 300, seed=11) <= 9


def test_true_probability_bound_fails_at_most_at_the_family_wise_level():
    """30 points where Pr[event] = 0.3 = the claimed upper bound (true, at equality): a run
    fails only if some lower Wilson end exceeds 0.3, probability <= 0.5 % family-wise. 100
    seeded runs of 400 draws per point allow 4 failures (P[Binomial(100, 0.005) > 4] < 2e-4);
    uncorrected, each run fails with probability about 1 - 0.995^30 = 0.14 (~14 of 100)."""

    def coin(rng, n, i):
        return rng.random(n) < 0.3

    check = _check(
        coin, lambda i: 0.3, "<=", tuple({"i": i} for i in range(30)), "probability", samples=400
    )
    assert _family_wise_failures(check, 100, seed=12) <= 4


def test_mean_statistic_uses_the_sample_standard_error():
    """statistic='mean': interval mean +- z s / sqrt(n), s with ddof=1 (4 values, so the
    ddof matters by sqrt(4/3))."""
    values = np.array([1.0, 2.0, 4.0, 7.0])
    check = _check(lambda rng, n, i: values, lambda i: 3.5, "==", ({"i": 0},), "mean", samples=4)
    row = check.run(rng=0).numbers["points"][0]
    se = float(np.std(values, ddof=1)) / 2.0
    z = _z(0.99, 1)
    assert row["std_error"] == pytest.approx(se, rel=1e-12)
    assert row["ci"] == pytest.approx([3.5 - z * se, 3.5 + z * se], rel=1e-12)


@pytest.mark.parametrize(
    ("relation", "claimed", "expected"),
    [
        # The interval is [1 - z se, 1 + z se] = [0.742, 1.258] (z = 2.576, se = 0.1).
        (">=", 0.70, HOLDS),  # lower end above the claimed lower bound
        (">=", 1.05, "inconclusive"),  # claimed inside: neither shown
        (">=", 1.30, FAILS),  # upper end below it
        ("<=", 1.30, HOLDS),
        ("<=", 0.95, "inconclusive"),
        ("<=", 0.70, FAILS),
    ],
)
def test_one_sided_decisions_use_the_far_end_of_the_interval(relation, claimed, expected):
    check = _check(
        lambda rng, n, i: (1.0, 0.1), lambda i: claimed, relation, ({"i": 0},), "estimate"
    )
    assert check.run(rng=0).verdict == expected


def test_a_domain_needs_more_than_one_holding_point():
    """Holding at a single tested value of the domain parameter is no interval: the claim
    fails (holding at two adjacent values gives holds-on-domain between them)."""

    def make(holding):
        return MonteCarloCheck(
            sampler=lambda rng, n, t: (0.0 if t in holding else 1.0, 0.01),
            claimed=lambda t: 0.5,
            points=tuple({"t": t} for t in (1, 2, 3, 4, 5)),
            relation="<=",
            statistic="estimate",
            samples=10,
            true_label="t",
            claimed_label="c",
            domain_param="t",
        )

    assert make({3}).run(rng=0).verdict == FAILS
    result = make({3, 4}).run(rng=0)
    assert result.verdict == HOLDS_ON_DOMAIN
    assert (result.numbers["domain"]["low"], result.numbers["domain"]["high"]) == (3, 4)
