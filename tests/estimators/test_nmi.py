"""estimators.nmi against scikit-learn's clustering metrics on the same quantised values."""

import re

import numpy as np
import pytest
import torch
from sklearn.metrics import adjusted_mutual_info_score, mutual_info_score
from sklearn.metrics import normalized_mutual_info_score as sk_nmi

from pruneleak.estimators.nmi import (
    adjusted_nmi,
    nmi,
    nmi_chance_level,
    nmi_permutation_null,
    quantize,
    quantized_mutual_information,
)

# Both sides compute the same sums of logs in float64 in a different order: agreement to a
# few ulps of values of order 1 is expected, 1e-12 leaves room for summation order.
TOL = 1e-12


def _pair(seed, shape=(28, 28), noise=0.1):
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=shape)
    return x, np.clip(x + noise * rng.normal(size=shape), 0.0, 1.0)


def test_quantize_bins_and_top_edge():
    np.testing.assert_array_equal(
        quantize([0.0, 0.249, 0.25, 0.5, 0.999, 1.0], levels=4), [0, 0, 1, 2, 3, 3]
    )


@pytest.mark.parametrize(
    ("values", "shown"), [([-0.5, 0.5], "[-0.5, 0.5]"), ([0.2, 3.0], "[0.2, 3]")]
)
def test_quantize_refuses_values_outside_the_range_instead_of_clipping(values, shown):
    with pytest.raises(
        ValueError, match=r"value_range=\[0, 1\]\. Got values in " + re.escape(shown)
    ):
        quantize(values, levels=4)


def test_quantize_maps_8bit_images_back_to_their_codes():
    codes = np.arange(256)
    np.testing.assert_array_equal(quantize(codes / 255.0), codes)


# 784: the most levels allowed for the 28x28 images of _pair, one per pixel.
@pytest.mark.parametrize("levels", [2, 16, 256, 784])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("average", ["arithmetic", "geometric", "min", "max"])
def test_nmi_equals_sklearn(levels, seed, average):
    x, y = _pair(seed)
    expected = sk_nmi(
        quantize(x, levels).ravel(), quantize(y, levels).ravel(), average_method=average
    )
    assert nmi(x, y, levels=levels, average=average) == pytest.approx(expected, abs=TOL)


@pytest.mark.parametrize("levels", [4, 256])
@pytest.mark.parametrize("seed", [0, 1])
def test_mutual_information_equals_sklearn(levels, seed):
    x, y = _pair(seed, noise=0.3)
    expected = mutual_info_score(quantize(x, levels).ravel(), quantize(y, levels).ravel())
    assert quantized_mutual_information(x, y, levels=levels) == pytest.approx(expected, abs=TOL)


@pytest.mark.parametrize(
    ("levels", "noise", "sparse"), [(256, 0.1, False), (16, 1.0, False), (32, 0.1, True)]
)
def test_adjusted_nmi_equals_sklearn(levels, noise, sparse):
    x, y = _pair(3, noise=noise)
    if sparse:  # MNIST-like: most pixels in one level, which stresses E[MI]'s long sums
        x = np.where(x > 0.8, x, 0.0)
    expected = adjusted_mutual_info_score(quantize(x, levels).ravel(), quantize(y, levels).ravel())
    # E[MI] is a sum of ~1e5 terms with exp(gammaln) weights: 1e-9 absolute
    assert adjusted_nmi(x, y, levels=levels) == pytest.approx(expected, abs=1e-9)


def test_value_range_rescales():
    x, y = _pair(4)
    assert nmi(255 * x, 255 * y, value_range=(0, 255)) == pytest.approx(nmi(x, y), abs=TOL)


def test_torch_input_equals_numpy_input():
    x, y = _pair(5)
    assert nmi(torch.from_numpy(x).float(), torch.from_numpy(y).float()) == pytest.approx(
        nmi(x.astype(np.float32), y.astype(np.float32)), abs=TOL
    )


def test_constant_images_follow_sklearn_conventions():
    x = np.full((8, 8), 0.3)
    assert nmi(x, x) == 1.0
    assert nmi(x, np.linspace(0, 1, 64).reshape(8, 8)) == 0.0


def test_chance_level_equals_mean_nmi_against_uniform_noise():
    x, _ = _pair(6)
    rng = np.random.default_rng(11)
    expected = np.mean([nmi(x, rng.uniform(size=x.shape)) for _ in range(5)])
    assert nmi_chance_level(x, n_draws=5, seed=11) == pytest.approx(expected, abs=TOL)


def test_chance_level_is_the_floor_of_a_noisy_reconstruction():
    # With few pixels per level the plug-in NMI of unrelated images is far above 0: for a
    # 784-pixel image with 256 levels the floor is ~0.77 (measured). With 8 levels the
    # Miller-Madow bias 49 / 1568 nats over H ~ log 8 puts it near 0.015, and a
    # reconstruction with 0.1 noise stays far above it.
    x, y = _pair(7)
    assert nmi_chance_level(x, levels=256) > 0.6
    assert nmi_chance_level(x, levels=8) < 0.02 < 0.3 < nmi(x, y, levels=8)


def test_permutation_null_separates_leak_from_floor():
    x, y = _pair(8, noise=0.05)
    res = nmi_permutation_null(x, y, levels=16, n_permutations=50, seed=0)
    assert res.observed == pytest.approx(nmi(x, y, levels=16), abs=TOL)
    assert res.p_value == pytest.approx(1 / 51)
    # Miller-Madow bias (L-1)^2 / (2N) = 225 / 1568 nats over H ~ log 16 gives null ~0.05
    assert res.null_mean < 0.1 < 0.4 < res.observed
    unrelated = nmi_permutation_null(x, _pair(9)[0], levels=16, n_permutations=50, seed=0)
    assert unrelated.p_value > 0.05


def test_adjusted_nmi_is_near_zero_for_unrelated_images():
    x, _ = _pair(10)
    z, _ = _pair(11)
    # sd of AMI under independence for 784 pixels is ~0.01 (sklearn's AMI on 200 draws)
    assert abs(adjusted_nmi(x, z)) < 0.05
    assert adjusted_nmi(x, x) == pytest.approx(1.0, abs=TOL)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"original": np.zeros(4), "reconstruction": np.zeros(5)}, "same shape"),
        ({"original": [0.1, np.nan], "reconstruction": [0.1, 0.2]}, "finite"),
        ({"original": [0.1, 0.2], "reconstruction": [np.inf, 0.2]}, "finite"),
        ({"original": [], "reconstruction": []}, "empty"),
        ({"original": [0.1], "reconstruction": [0.1], "levels": 1}, "levels"),
        ({"original": [0.1], "reconstruction": [0.1], "levels": 2.5}, "levels"),
        ({"original": [0.1], "reconstruction": [0.1], "value_range": (1, 0)}, "value_range"),
        ({"original": [0.1], "reconstruction": [0.1], "value_range": 1.0}, "value_range"),
        ({"original": [0.1], "reconstruction": [0.1], "average": "mean"}, "average"),
    ],
)
def test_nmi_rejects_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        nmi(**kwargs)


@pytest.mark.parametrize("n_draws", [0, -1, 1.5])
def test_chance_level_rejects_bad_draws(n_draws):
    with pytest.raises(ValueError, match="n_draws"):
        nmi_chance_level(np.zeros(4), n_draws=n_draws)


def test_nmi_permutation_null_rejects_nan():
    with pytest.raises(ValueError, match="finite"):
        nmi_permutation_null([0.1, np.nan], [0.1, 0.2])
