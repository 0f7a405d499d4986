"""Helpers of the estimator tests for :class:`~estimators.estimate.MIWarning`."""

import warnings

from pruneleak.estimators.estimate import MIWarning


def estimate_quietly(estimator, x, y, **kwargs):
    """``estimator.estimate(x, y, **kwargs)`` with its MI warnings silenced (tests whose
    inputs trigger expected warnings: small n, heavy tails, few training steps)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MIWarning)
        return estimator.estimate(x, y, **kwargs)


def issued_mi_warnings(estimator, x, y):
    """The MI warnings issued by ``estimator.estimate(x, y)``, after checking that each
    message of the result was issued exactly once and nothing else was."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = estimator.estimate(x, y)
    issued = [str(w.message) for w in caught if issubclass(w.category, MIWarning)]
    assert issued == list(est.warnings)
    return issued
