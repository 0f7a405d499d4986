"""The estimator protocol, property-tested through the registry for every registered name.

For any paired samples in the domain, every estimator built by name returns an
``MIEstimate`` whose method is its name, whose value is finite and inside its interval,
which counts the samples it was given, which issued each of its warnings as an
``MIWarning``, which is reproducible from its seed, identical for numpy and torch input,
and (with ``transform="rank"``) identical for any strictly increasing map of the features,
since such a map leaves both the ranks and the mutual information unchanged.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from pruneleak.estimators.estimate import MIEstimate, MIWarning
from pruneleak.estimators.neural import TrainingConfig
from pruneleak.estimators.registry import ESTIMATORS, MIEstimator, estimate_mi, get_estimator

_TRAINING = TrainingConfig(max_steps=20, batch_size=16, eval_every=10, patience=1, n_fits=2)
#: Settings small enough for a property test (the values are not accurate, only valid).
TINY = {
    "gaussian": {"n_resamples": 20},
    "ksg": {"n_resamples": 4},
    "mine": {"hidden": (4,), "training": _TRAINING, "device": "cpu"},
    "nwj": {"hidden": (4,), "training": _TRAINING, "device": "cpu"},
    "infonce": {"hidden": (4,), "training": _TRAINING, "device": "cpu"},
    "smile": {"hidden": (4,), "training": _TRAINING, "device": "cpu"},
    "hmine": {"block_hidden": (4,), "mix_hidden": (4,), "training": _TRAINING, "device": "cpu"},
}


def test_every_registered_estimator_has_tiny_settings():
    assert set(TINY) == set(ESTIMATORS)


def _pair(n: int, dim: int, rho: float, seed: int, batch: bool):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 2, dim) if batch else (n, dim))
    signal = x.mean(axis=1) if batch else x
    y = rho * signal + math.sqrt(1 - rho**2) * rng.standard_normal((n, dim))
    return x, y


def _estimate(name: str, x, y, seed: int, **extra) -> tuple[MIEstimate, list]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = get_estimator(name, **{**TINY[name], **extra}).estimate(x, y, seed=seed)
    return est, [w for w in caught if issubclass(w.category, MIWarning)]


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
@settings(max_examples=4, deadline=None)
@given(
    n=st.integers(100, 160),
    dim=st.integers(1, 3),
    rho=st.floats(0.0, 0.95),
    seed=st.integers(0, 2**31),
)
def test_protocol_holds_for_every_estimator(name, n, dim, rho, seed):
    x, y = _pair(n, dim, rho, seed, batch=name == "hmine")
    est, caught = _estimate(name, x, y, seed)
    assert isinstance(est, MIEstimate) and est.method == name
    assert math.isfinite(est.value) and est.ci_low <= est.value <= est.ci_high
    assert est.n_samples == n and 0 < est.confidence < 1
    assert [str(w.message) for w in caught] == list(est.warnings)
    again, _ = _estimate(name, torch.from_numpy(x), torch.from_numpy(y), seed)
    assert again.value == est.value and (again.ci_low, again.ci_high) == (est.ci_low, est.ci_high)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_rank_transform_makes_estimates_invariant_to_monotone_maps(name):
    x, y = _pair(120, 2, 0.8, 3, batch=name == "hmine")
    plain, _ = _estimate(name, x, y, 5, transform="rank")
    mapped, _ = _estimate(name, np.exp(x), y**3 + y, 5, transform="rank")
    assert mapped.value == plain.value


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_registry_builds_the_named_class(name):
    estimator = get_estimator(name)
    assert estimator.name == name and isinstance(estimator, MIEstimator)


def test_unknown_name_lists_the_registry():
    with pytest.raises(ValueError, match=r"'name'.*'ksg'.*'mine'.*Got 'kgs'"):
        get_estimator("kgs")


def test_unknown_setting_is_named():
    with pytest.raises(ValueError, match=r"get_estimator\('ksg'\).*'neighbours'"):
        get_estimator("ksg", neighbours=3)


def test_estimate_mi_is_the_named_estimator():
    x, y = _pair(200, 1, 0.6, 1, batch=False)
    direct = get_estimator("ksg", k=4).estimate(x, y, seed=2)
    assert estimate_mi(x, y, "ksg", seed=2, k=4).value == direct.value
