"""The shared result record: units, the interval invariant, the warnings it issues."""

from __future__ import annotations

import math
import warnings

import pytest

from pruneleak.estimators.estimate import MIEstimate, MIWarning, make_estimate


def _quiet(**kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MIWarning)
        return make_estimate(**kwargs)


def test_bits_are_nats_over_log_two():
    est = MIEstimate(2.0, 1.0, 3.0, 0.9, "x", 10)
    assert est.bits == pytest.approx(2.0 / math.log(2))
    assert est.interval_bits == pytest.approx((math.log2(math.e), 3 * math.log2(math.e)))


def test_negative_estimate_is_kept_and_warned():
    with pytest.warns(MIWarning, match="negative estimate"):
        est = make_estimate("ksg", -0.2, (-0.3, -0.1), confidence=0.95, n_samples=5)
    assert est.value == -0.2  # reported, not clipped
    assert len(est.warnings) == 1


def test_positive_estimate_has_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", MIWarning)
        est = make_estimate("ksg", 0.2, (0.1, 0.3), confidence=0.95, n_samples=5)
    assert est.warnings == ()


def test_every_message_is_issued_once():
    with pytest.warns(MIWarning) as caught:
        est = make_estimate(
            "m", 0.5, (0.4, 0.6), confidence=0.9, n_samples=5, warnings_found=["a", "b"]
        )
    assert [str(w.message) for w in caught] == ["a", "b"] == list(est.warnings)


def test_interval_is_widened_to_contain_the_value():
    est = _quiet(method="m", value=1.0, interval=(1.2, 1.5), confidence=0.9, n_samples=5)
    assert (est.ci_low, est.ci_high) == (1.0, 1.5)
    assert est.covers(1.0) and not est.covers(1.6)


@pytest.mark.parametrize("value, interval", [(math.nan, (0, 1)), (0.5, (0, math.inf))])
def test_non_finite_results_are_refused(value, interval):
    with pytest.raises(ValueError, match="non-finite"):
        make_estimate("m", value, interval, confidence=0.9, n_samples=5)
