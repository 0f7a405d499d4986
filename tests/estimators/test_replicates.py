"""Intervals over seeds and paired tests (estimators.replicates) against closed forms and
a Monte Carlo coverage check of a random-effects model."""

import math

import numpy as np
import pytest

from pruneleak.estimators.replicates import (
    NOT_RESOLVED,
    claim_verdict,
    paired_seed_comparison,
    seed_interval,
)

#: t_{2, 0.975}: the 0.975 quantile of Student's t with 2 degrees of freedom in closed
#: form, t = (2q - 1) sqrt(2 / (1 - (2q - 1)^2)) for the CDF 1/2 + t / (2 sqrt(2 + t^2)).
T2_975 = 0.95 * math.sqrt(2 / (1 - 0.95**2))


def test_interval_is_the_t_interval_of_the_seed_means_in_closed_form():
    # seed means 1, 2, 3 whatever the number of targets: sd 1, se 1/sqrt(3)
    r = seed_interval({0: [0.0, 2.0], 1: [2.0], 2: [1.0, 5.0, 3.0]}, confidence=0.95)
    assert r.mean == pytest.approx(2.0)
    assert (r.low, r.high) == pytest.approx((2 - T2_975 / math.sqrt(3), 2 + T2_975 / math.sqrt(3)))
    assert (r.seeds, r.values) == (3, 6)


def test_one_seed_has_no_interval_and_its_verdict_is_not_resolved():
    r = seed_interval({7: [0.2, 0.4]})
    assert r.mean == pytest.approx(0.3) and r.low is None and r.high is None
    assert claim_verdict(r.low, r.high, 0.0, direction="greater") == NOT_RESOLVED


def test_paired_difference_pairs_by_target_id_not_by_position():
    a = {0: {3: 5.0, 1: 1.0, 9: 100.0}, 1: {1: 2.0, 3: 4.0}}
    b = {0: {1: 0.0, 3: 3.0}, 1: {3: 2.0, 1: 1.0}, 2: {1: 0.0}}  # target 9 and seed 2: unpaired
    r = paired_seed_comparison(a, b)
    # seed 0: ((1 - 0) + (5 - 3)) / 2 = 1.5; seed 1: ((2 - 1) + (4 - 2)) / 2 = 1.5
    assert r.interval.mean == pytest.approx(1.5) and r.pairs == 4 and r.interval.seeds == 2
    assert r.p_value == 0.0  # the same shift in both runs


def test_paired_t_test_p_value_in_closed_form():
    # seed differences 1, 2, 3: t = 2 / (1 / sqrt 3); with 2 df, p = 1 - t / sqrt(2 + t^2)
    a = {s: [float(s + 1) + 10.0] for s in range(3)}
    b = {s: [10.0] for s in range(3)}
    r = paired_seed_comparison(a, b)
    t = 2 * math.sqrt(3)
    assert r.p_value == pytest.approx(1 - t / math.sqrt(2 + t**2))
    assert r.interval.low == pytest.approx(2 - T2_975 / math.sqrt(3))


def test_relative_change_is_per_seed_percent_of_arm_a():
    a = {0: [0.8, 1.2], 1: [0.5], 2: [2.0]}
    b = {0: [0.4, 0.6], 1: [0.4], 2: [1.0]}
    r = paired_seed_comparison(a, b, relative=True)
    assert r.interval.mean == pytest.approx((50 + 20 + 50) / 3)
    assert r.relative


def test_interval_covers_the_mean_of_a_random_effects_model_at_its_level():
    """3 seeds of 8 targets, run effects sd 1 and target noise sd 2: the t interval on the
    run means covers the mean in 95 % of 4,000 experiments (binomial sd 0.0034: tolerance
    0.015). Pooling the 24 values as independent covers far less, so a pooling bug fails."""
    rng = np.random.default_rng(0)
    hits = pooled_hits = 0
    trials = 4000
    for _ in range(trials):
        runs = rng.normal(0.0, 1.0, size=3)
        values = runs[:, None] + rng.normal(0.0, 2.0, size=(3, 8))
        r = seed_interval({s: list(v) for s, v in enumerate(values)})
        hits += r.low <= 0.0 <= r.high
        flat = values.ravel()
        half = 2.0687 * flat.std(ddof=1) / math.sqrt(flat.size)  # t_{23, 0.975}
        pooled_hits += abs(flat.mean()) <= half
    assert abs(hits / trials - 0.95) < 0.015
    assert pooled_hits / trials < 0.85


@pytest.mark.parametrize(
    ("low", "high", "claim", "direction", "expected"),
    [
        (30.0, 60.0, 45.5, "value", NOT_RESOLVED),
        (50.0, 60.0, 45.5, "value", "above the claim"),
        (10.0, 40.0, 45.5, "value", "below the claim"),
        (0.1, 0.3, 0.0, "greater", "holds"),
        (-0.3, -0.1, 0.0, "greater", "fails"),
        (-0.3, -0.1, 0.0, "less", "holds"),
        (-0.3, 0.1, 0.0, "less", NOT_RESOLVED),
        (0.0, 0.0, 0.0, "less", "fails"),  # no change in any run: "it falls" is refuted
        (0.0, 0.0, 0.0, "greater", "fails"),
        (0.0, 0.2, 0.0, "at_least", "holds"),
        (-0.2, 0.0, 0.0, "at_most", "holds"),
        (-0.2, -0.1, 0.0, "at_least", "fails"),
        (0.1, 0.2, 0.0, "at_most", "fails"),
        (-0.1, 0.2, 0.0, "at_least", NOT_RESOLVED),
        (None, None, 0.0, "value", NOT_RESOLVED),
    ],
)
def test_claim_verdicts(low, high, claim, direction, expected):
    assert claim_verdict(low, high, claim, direction=direction) == expected


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: seed_interval({}), "by_seed"),
        (lambda: seed_interval({0: []}), "at least one value"),
        (lambda: seed_interval({0: [float("nan")]}), r"by_seed\[0\]"),
        (lambda: seed_interval({0: [1.0]}, confidence=1.0), "confidence"),
        (lambda: paired_seed_comparison({0: {1: 1.0}}, {0: {2: 1.0}}), "share at least one"),
        (lambda: paired_seed_comparison({0: [0.0]}, {0: [1.0]}, relative=True), "nonzero"),
        (lambda: claim_verdict(0.0, 1.0, 0.5, direction="up"), "direction"),
        (lambda: claim_verdict(1.0, 0.0, 0.5), "high"),
    ],
)
def test_bad_input_names_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()
