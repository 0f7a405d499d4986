"""Shared properties of every similarity metric in estimators.image.METRICS.

Adding a metric to the registry tests it here (after scikit-learn's metric tests).
"""

import math

import numpy as np
import pytest

from pruneleak.estimators.image import METRICS

NAMES = sorted(METRICS)


def _images(seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(16, 16))
    return x, np.clip(x + 0.3 * rng.normal(size=x.shape), 0.0, 1.0)


@pytest.mark.parametrize("name", NAMES)
def test_returns_python_float_in_range(name):
    metric, (low, high), _ = METRICS[name]
    value = metric(*_images(0))
    assert type(value) is float
    assert low <= value <= high


@pytest.mark.parametrize("name", NAMES)
def test_identity_gives_the_maximum(name):
    metric, (_, high), _ = METRICS[name]
    x, y = _images(1)
    top = metric(x, x)
    assert top == high or (math.isinf(high) and math.isinf(top))
    assert metric(x, y) < top


@pytest.mark.parametrize("name", NAMES)
def test_symmetry(name):
    metric, _, symmetric = METRICS[name]
    x, y = _images(2)
    if symmetric:
        # same sums in a different order: ulp-level differences only
        assert metric(x, y) == pytest.approx(metric(y, x), abs=1e-12)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("where", [0, 1])
def test_nan_is_rejected(name, where):
    metric, _, _ = METRICS[name]
    pair = list(_images(3))
    pair[where][3, 4] = np.nan
    with pytest.raises(ValueError, match="finite"):
        metric(*pair)


@pytest.mark.parametrize("name", NAMES)
def test_shape_mismatch_is_rejected(name):
    metric, _, _ = METRICS[name]
    x, _ = _images(4)
    with pytest.raises(ValueError, match="same shape"):
        metric(x, x[:, :-1])
