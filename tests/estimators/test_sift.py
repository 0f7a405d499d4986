"""estimators.sift against a brute-force count of Lowe's ratio test on scikit-image's SIFT
descriptors, on images with known answers, and on images without keypoints."""

import math

import numpy as np
import pytest
import torch
from scipy.ndimage import gaussian_filter
from skimage.feature import SIFT

from pruneleak.estimators.sift import SIFT_RATIO, SiftSimilarity, sift_similarity


def _smooth_noise(seed, side=64, blur=2.0):
    """Blurred uniform noise rescaled to [0, 1]: blobs at many scales, so SIFT finds about 80
    keypoints on 64x64 (measured 77-89 for seeds 0-1)."""
    x = gaussian_filter(np.random.default_rng(seed).uniform(size=(side, side)), blur)
    return (x - x.min()) / (x.max() - x.min())


def _bar(side=28):
    """A bright bar on black: a digit-like image with a handful of keypoints."""
    x = np.zeros((side, side))
    x[6:22, 10:18] = 1.0
    return x


def _descriptors(image):
    """The independent route's descriptors: scikit-image's SIFT called directly (default
    upsampling 2) on an image already in [0, 1]; an empty set when it finds none."""
    sift = SIFT()
    try:
        sift.detect_and_extract(image)
    except RuntimeError:
        return []
    return [np.asarray(d, dtype=float) for d in sift.descriptors]


def _brute_force_counts(original, reconstruction, ratio=SIFT_RATIO):
    """(good, matched) by hand: for each descriptor of the reconstruction, the Euclidean
    distance to every descriptor of the original, one at a time; the pair with the nearest
    is good when d1 < ratio * d2 (d2 = inf with one candidate, and 0 counts as eps, the
    tie rules the module documents)."""
    theirs, ours = _descriptors(original), _descriptors(reconstruction)
    if not theirs:
        return 0, 0
    good = 0
    for query in ours:
        distances = sorted(
            math.sqrt(sum((q - t) ** 2 for q, t in zip(query, d, strict=True))) for d in theirs
        )
        second = distances[1] if len(distances) > 1 else math.inf
        good += distances[0] < ratio * max(second, np.finfo(np.float64).eps)
    return good, len(ours)


# --------------------------------------------------------------------------- known answers


@pytest.mark.parametrize("image", [_bar(), _smooth_noise(0)], ids=["bar", "smooth"])
def test_identical_images_match_every_keypoint(image):
    result = sift_similarity(image, image)
    assert result.matched == result.keypoints_reconstruction == result.keypoints_original > 0
    assert result.good == result.matched and result.value == 1.0 and result.reason == ""


@pytest.mark.parametrize(
    ("name", "transform", "floor"),
    [
        # an exact 90-degree rotation keeps the pixel grid: SIFT is rotation invariant and
        # 77 of 83 matches pass (0.93); a shift by (3, 5) moves keypoints off the border:
        # 59 of 76 (0.78)
        ("rot90", lambda x: np.rot90(x).copy(), 0.85),
        ("shift", lambda x: np.roll(x, (3, 5), axis=(0, 1)), 0.7),
    ],
)
def test_a_moved_copy_matches_and_agrees_with_the_brute_force_count(name, transform, floor):
    original = _smooth_noise(0)
    moved = transform(original)
    result = sift_similarity(original, moved)
    good, matched = _brute_force_counts(original, moved)
    # integer counts: exact agreement
    assert (result.good, result.matched) == (good, matched)
    assert result.value > floor


def test_unrelated_images_hardly_match_and_agree_with_the_brute_force_count():
    original, other = _smooth_noise(0), _smooth_noise(1)
    result = sift_similarity(original, other)
    assert (result.good, result.matched) == _brute_force_counts(original, other)
    # measured 2 of 89 (0.02); a matcher without the ratio test would give 1.0
    assert result.matched > 50 and result.value < 0.1


@pytest.mark.parametrize("ratio", [0.5, 0.95])
def test_the_ratio_is_the_threshold_of_the_brute_force_count(ratio):
    original, noisy = _smooth_noise(0), _smooth_noise(0)
    noisy = np.clip(noisy + 0.05 * np.random.default_rng(3).normal(size=noisy.shape), 0, 1)
    result = sift_similarity(original, noisy, ratio=ratio)
    assert (result.good, result.matched) == _brute_force_counts(original, noisy, ratio)


def test_a_larger_ratio_accepts_more_pairs():
    original, other = _smooth_noise(0), _smooth_noise(1)
    goods = [sift_similarity(original, other, ratio=r).good for r in (0.3, 0.6, 0.8, 0.99)]
    assert goods == sorted(goods) and goods[-1] > goods[0]


# --------------------------------------------------------------------------- undefined values


def test_a_blank_reconstruction_is_undefined_with_the_reason():
    result = sift_similarity(_bar(), np.zeros((28, 28)))
    assert result.value is None and not result.defined
    assert result.matched == result.good == result.keypoints_reconstruction == 0
    assert result.keypoints_original > 0
    assert result.reason.startswith("no SIFT keypoint in the reconstruction:")


def test_a_blank_original_is_undefined_even_when_the_reconstruction_has_keypoints():
    result = sift_similarity(np.full((28, 28), 0.5), _bar())
    assert result.value is None and result.keypoints_reconstruction > 0
    assert result.reason.startswith("no SIFT keypoint in the original:")
    both = sift_similarity(np.zeros((28, 28)), np.zeros((28, 28)))
    assert both.reason.startswith("no SIFT keypoint in the original nor the reconstruction")


def test_eight_pixel_digits_are_scored_or_undefined_never_an_error():
    from sklearn.datasets import load_digits

    digits = load_digits().images[:20] / 16.0
    results = sift_similarity(digits, digits, per_image=True)
    # scikit-image finds no keypoint on most 8x8 digits (measured: 6 of the first 20 have
    # some); those have a reason and no value, the others match themselves
    undefined = [r for r in results if not r.defined]
    assert undefined and all(r.value is None and r.reason for r in undefined)
    assert all(r.value == 1.0 for r in results if r.defined)


def test_the_record_holds_only_what_was_counted():
    record = SiftSimilarity(good=3, matched=4, keypoints_original=5, keypoints_reconstruction=4)
    assert record.value == 0.75 and record.defined and record.reason == ""


# --------------------------------------------------------------------------- input handling


def test_batches_colour_and_tensors_give_the_per_image_results():
    rng = np.random.default_rng(5)
    originals = np.stack([_smooth_noise(s, side=32) for s in range(3)])
    colour = np.stack([originals] * 3, axis=1)  # (B, 3, H, W), equal channels
    reconstructions = np.clip(originals + 0.1 * rng.normal(size=originals.shape), 0, 1)
    batch = sift_similarity(originals, reconstructions, per_image=True)
    assert batch == [sift_similarity(x, y) for x, y in zip(originals, reconstructions, strict=True)]
    colour_batch = sift_similarity(
        torch.from_numpy(colour), np.stack([reconstructions] * 3, axis=1), per_image=True
    )
    assert colour_batch == batch  # the channel mean of equal channels is the grey image


def test_the_data_range_maps_8_bit_images_to_the_same_result():
    original, other = _smooth_noise(0), np.rot90(_smooth_noise(0)).copy()
    unit = sift_similarity(original, other)
    assert sift_similarity(255 * original, 255 * other, data_range=255) == unit
    # a common shift does not move a keypoint either
    assert sift_similarity(original + 7, other + 7) == unit
    with pytest.raises(ValueError, match="data_range=1"):
        sift_similarity(255 * original, 255 * other)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"ratio": 0.0}, r"'ratio' parameter of sift_similarity must be in \(0, 1\)"),
        ({"ratio": 1.0}, r"'ratio' .* \(0, 1\)\. Got 1\.0"),
        ({"ratio": float("nan")}, "'ratio'"),
        ({"upsampling": 4}, r"'upsampling' .* one of 1, 2\. Got 4"),
        ({"data_range": 0.0}, "'data_range'"),
        ({"per_image": 1}, "'per_image'"),
    ],
)
def test_bad_parameters_are_refused_naming_them(kwargs, match):
    with pytest.raises(ValueError, match=match):
        sift_similarity(_bar(), _bar(), **kwargs)


@pytest.mark.parametrize(
    ("original", "reconstruction", "kwargs", "match"),
    [
        (np.zeros((28, 28)), np.zeros((28, 27)), {}, "same shape"),
        (np.zeros(28), np.zeros(28), {}, r"must be images \(\[C,\] H, W\)"),
        (np.zeros((8, 8)), np.zeros((8, 8)), {"upsampling": 1}, r"min\(H, W\) \* upsampling >= 12"),
        (np.zeros((5, 40)), np.zeros((5, 40)), {}, r"Got shape \(5, 40\) with upsampling=2"),
        (np.zeros((28, 28)), np.zeros((28, 28)), {"per_image": True}, r"\(B, \[C,\] H, W\)"),
        (np.full((28, 28), np.nan), np.zeros((28, 28)), {}, "finite"),
    ],
)
def test_bad_images_are_refused(original, reconstruction, kwargs, match):
    with pytest.raises(ValueError, match=match):
        sift_similarity(original, reconstruction, **kwargs)
