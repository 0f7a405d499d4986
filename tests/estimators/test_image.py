"""estimators.image against scikit-image (test-only) and brute-force references."""

import itertools

import numpy as np
import pytest
import torch
from skimage.metrics import peak_signal_noise_ratio, structural_similarity
from sklearn.datasets import load_digits

from pruneleak.estimators.image import (
    inference_accuracy,
    match_reconstructions,
    phash,
    phash_similarity,
    psnr,
    score_reconstruction,
    ssim,
)
from pruneleak.estimators.nmi import nmi

# Acceptance (issue 5): equal to scikit-image to 1e-6; the same float64 filters and means
# are computed in the same order, so the agreement is in fact ~1e-15.
SKIMAGE_TOL = 1e-6


def _noisy(seed, shape, noise=0.2):
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=shape)
    return x, np.clip(x + noise * rng.normal(size=shape), 0.0, 1.0)


@pytest.mark.parametrize("shape", [(16, 16), (28, 28), (9, 31)])
@pytest.mark.parametrize("seed", [0, 1])
def test_psnr_and_ssim_equal_skimage_gray(shape, seed):
    x, y = _noisy(seed, shape)
    assert psnr(x, y) == pytest.approx(
        peak_signal_noise_ratio(x, y, data_range=1.0), abs=SKIMAGE_TOL
    )
    raw = structural_similarity(x, y, data_range=1.0)
    assert ssim(x, y, normalized=False) == pytest.approx(raw, abs=SKIMAGE_TOL)
    assert ssim(x, y) == pytest.approx((raw + 1) / 2, abs=SKIMAGE_TOL)


@pytest.mark.parametrize("win_size", [3, 7, 11])
def test_ssim_equals_skimage_color_and_window(win_size):
    x, y = _noisy(2, (3, 32, 32), noise=0.4)
    expected = structural_similarity(x, y, data_range=1.0, channel_axis=0, win_size=win_size)
    assert ssim(x, y, normalized=False, win_size=win_size) == pytest.approx(
        expected, abs=SKIMAGE_TOL
    )


def test_ssim_data_range_255():
    x, y = _noisy(3, (20, 20))
    expected = structural_similarity(255 * x, 255 * y, data_range=255.0)
    assert ssim(255 * x, 255 * y, data_range=255.0, normalized=False) == pytest.approx(
        expected, abs=SKIMAGE_TOL
    )


def test_per_image_equals_loop_over_images():
    x, y = _noisy(4, (5, 3, 12, 12))
    for metric in (psnr, ssim, phash_similarity):
        batched = metric(x, y, per_image=True)
        assert batched.shape == (5,)
        np.testing.assert_allclose(batched, [metric(a, b) for a, b in zip(x, y, strict=True)])


def test_torch_input_on_cpu_equals_numpy():
    x, y = _noisy(5, (2, 1, 10, 10))
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    np.testing.assert_allclose(psnr(tx, ty, per_image=True), psnr(x, y, per_image=True))
    np.testing.assert_allclose(ssim(tx, ty, per_image=True), ssim(x, y, per_image=True))


def test_phash_is_64_bits_and_identity_gives_one():
    x, _ = _noisy(6, (28, 28))
    assert phash(x).shape == (64,)
    assert phash(x).dtype == bool
    assert phash_similarity(x, x) == 1.0


def test_phash_similarity_falls_for_unrelated_images():
    digits = load_digits().images / 16.0
    same = phash_similarity(
        digits[:50],
        np.clip(digits[:50] + 0.05 * np.random.default_rng(0).normal(size=(50, 8, 8)), 0, 1),
        per_image=True,
    )
    other = phash_similarity(digits[:50], digits[50:100], per_image=True)
    # 64 bits with median thresholding: unrelated images agree on ~32 bits (similarity ~0.5,
    # sd 1/16 per pair); lightly perturbed images keep most bits.
    assert other.mean() < 0.65 < 0.8 < same.mean()


def test_inference_accuracy_with_module_and_callable():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, 3))
    images = torch.rand(10, 1, 4, 4)
    predicted = model(images).argmax(1).numpy()
    labels = predicted.copy()
    labels[:3] = (labels[:3] + 1) % 3
    assert inference_accuracy(model, images, labels) == pytest.approx(0.7)
    np.testing.assert_array_equal(
        inference_accuracy(model, images, labels, per_image=True), [0, 0, 0] + [1] * 7
    )
    scores = np.eye(3)[predicted]
    assert inference_accuracy(lambda batch: scores, images.numpy(), predicted) == 1.0


def _brute_force_match(a, b, cost):
    best = min(
        itertools.permutations(range(len(a))),
        key=lambda p: sum(cost(a[i], b[j]) for i, j in enumerate(p)),
    )
    return np.array(best)


@pytest.mark.parametrize("score", ["mse", "psnr"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matching_equals_brute_force(score, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(size=(5, 1, 6, 6)), rng.uniform(size=(5, 1, 6, 6))
    if score == "mse":

        def cost(u, v):
            return np.mean((u - v) ** 2)
    else:

        def cost(u, v):
            return -psnr(u, v)

    np.testing.assert_array_equal(
        match_reconstructions(a, b, score=score), _brute_force_match(a, b, cost)
    )


def test_score_reconstruction_undoes_a_shuffle():
    x, y = _noisy(7, (4, 1, 8, 8), noise=0.05)
    perm = np.array([2, 0, 3, 1])
    shuffled = y[np.argsort(perm)]  # shuffled[perm[i]] == y[i]
    result = score_reconstruction(torch.from_numpy(x), shuffled, levels=16)
    np.testing.assert_array_equal(result["assignment"], perm)
    np.testing.assert_allclose(result["psnr"], psnr(x, y, per_image=True))
    np.testing.assert_allclose(result["ssim"], ssim(x, y, per_image=True))
    np.testing.assert_allclose(
        result["nmi"], [nmi(a, b, levels=16) for a, b in zip(x, y, strict=True)]
    )
    assert result["nmi_chance"].shape == (4,)
    assert np.all(result["nmi_chance"] < result["nmi"])


@pytest.mark.parametrize(
    ("func", "args", "kwargs", "match"),
    [
        (psnr, (np.zeros((4, 4)), np.zeros((4, 5))), {}, "same shape"),
        (psnr, (np.zeros(3), np.zeros(3)), {"data_range": 0.0}, "data_range"),
        (psnr, (np.zeros(3), np.zeros(3)), {"per_image": True}, "per_image"),
        (ssim, (np.zeros((5, 5)), np.zeros((5, 5))), {}, "win_size"),
        (ssim, (np.zeros((9, 9)), np.zeros((9, 9))), {"win_size": 4}, "odd"),
        (ssim, (np.zeros(9), np.zeros(9)), {}, "images"),
        (phash, (np.zeros(9),), {}, "image"),
        (match_reconstructions, (np.zeros((2, 3, 3)), np.zeros((3, 3, 3))), {}, "same shape"),
        (match_reconstructions, (np.zeros((2, 3)), np.zeros((2, 3))), {"score": "l1"}, "score"),
        (score_reconstruction, (np.zeros((2, 3)), np.zeros((2, 3))), {"chance_draws": 0}, "draws"),
        (inference_accuracy, (lambda b: b, np.zeros((2, 3)), [0, 1, 2]), {}, "same B"),
        (inference_accuracy, (lambda b: b[:, 0], np.zeros((2, 3)), [0, 1]), {}, "n_classes"),
    ],
)
def test_image_metrics_reject_bad_input(func, args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        func(*args, **kwargs)


@pytest.mark.parametrize("scale", [1e-300, 1e300])
def test_psnr_and_ssim_at_extreme_scales_equal_skimage_at_unit_scale(scale):
    # Both metrics are invariant to scaling the images and data_range together; at 1e300
    # the old squares overflowed (ssim nan, psnr OverflowError) and at 1e-300 they
    # underflowed to 0 / 0. Reference: scikit-image on the unit-scale images.
    x, y = _noisy(8, (3, 16, 16))
    assert psnr(scale * x, scale * y, data_range=scale) == pytest.approx(
        peak_signal_noise_ratio(x, y, data_range=1.0), abs=SKIMAGE_TOL
    )
    expected = structural_similarity(x, y, data_range=1.0, channel_axis=0)
    assert ssim(scale * x, scale * y, data_range=scale, normalized=False) == pytest.approx(
        expected, abs=SKIMAGE_TOL
    )


def test_ssim_near_the_float_maximum_equals_skimage_at_unit_scale():
    # Issue 13: an image of 1e308 gave nan. Values in [0.5e308, 1e308] with
    # data_range=0.5e308 are the unit-scale pair (0.5 + x / 2, 0.5 + y / 2), data_range 0.5,
    # scaled by 1e308; skimage computes the latter without overflow.
    x, y = _noisy(9, (12, 12))
    u, v = 0.5 + x / 2, 0.5 + y / 2
    expected = structural_similarity(u, v, data_range=0.5)
    assert ssim(1e308 * u, 1e308 * v, data_range=0.5e308, normalized=False) == pytest.approx(
        expected, abs=SKIMAGE_TOL
    )
    constant = np.full((12, 12), 1e308)
    assert ssim(constant, constant) == 1.0


def test_per_image_ssim_needs_a_batch_axis():
    # Issue 13: one 8x8 image with per_image=True returned two values (its rows were read
    # as images); now (H, W) is refused and (1, H, W) gives the single skimage value.
    x, y = _noisy(10, (8, 8))
    with pytest.raises(ValueError, match=r"\(B, \[C,\] H, W\).*\(8, 8\)"):
        ssim(x, y, per_image=True)
    single = ssim(x[None], y[None], per_image=True, normalized=False)
    assert single.shape == (1,)
    assert single[0] == pytest.approx(structural_similarity(x, y, data_range=1.0), abs=1e-12)


@pytest.mark.parametrize("metric", [psnr, ssim])
def test_8bit_images_need_their_data_range(metric):
    # a 0-255 image scored with the default data_range=1 was scored on the wrong scale;
    # now refused with the observed values, and equal to skimage with data_range=255
    x, y = _noisy(11, (16, 16))
    x8, y8 = np.round(255 * x), np.round(255 * y)
    with pytest.raises(ValueError, match=r"data_range=1 .*Got values in \[0, 255\]"):
        metric(x8, y8)
    reference = {psnr: peak_signal_noise_ratio, ssim: structural_similarity}[metric]
    expected = reference(x8, y8, data_range=255.0)
    kwargs = {"normalized": False} if metric is ssim else {}
    assert metric(x8, y8, data_range=255.0, **kwargs) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("score", ["mse", "psnr"])
def test_matching_at_extreme_scales_equals_brute_force_at_unit_scale(score):
    # 1e308-sized originals against negated reconstructions: differences reach 2e308 and
    # overflowed the cost matrix ("cost matrix is infeasible"); the assignment is
    # invariant to a common scaling
    rng = np.random.default_rng(3)
    a, b = rng.uniform(size=(5, 1, 4, 4)), -rng.uniform(size=(5, 1, 4, 4))

    def cost(u, v):
        return np.mean((u - v) ** 2) if score == "mse" else np.log(np.mean((u - v) ** 2))

    expected = _brute_force_match(a, b, cost)
    np.testing.assert_array_equal(
        match_reconstructions(1e308 * a, 1e308 * b, score=score), expected
    )
    tiny = match_reconstructions(1e-300 * a, 1e-300 * b, score=score)
    np.testing.assert_array_equal(tiny, expected)


def test_psnr_matching_prefers_exact_matches():
    # an exact match has PSNR +inf: the assignment with the most exact matches wins
    rng = np.random.default_rng(4)
    a = rng.uniform(size=(3, 4, 4))
    b = a[[2, 0, 1]].copy()
    b[2] += 0.3  # a[1] has no exact partner
    np.testing.assert_array_equal(match_reconstructions(a, b, score="psnr")[[0, 2]], [1, 0])


def test_score_reconstruction_refuses_8bit_images_on_the_unit_range():
    # Issue 13: NMI 1.0 against chance 1.4e-17 for two independent 0-255 images
    x8, y8 = (np.round(255 * _noisy(seed, (2, 1, 8, 8))[0]) for seed in (12, 13))
    with pytest.raises(ValueError, match=r"'originals'.*value_range=\[0, 1\].*Got values in \["):
        score_reconstruction(x8, y8)
    scores = score_reconstruction(x8, y8, value_range=(0, 255), levels=16, chance_draws=4)
    # independent images: NMI near its chance level, far from 1 (plug-in bias on 64 pixels
    # with 16 levels puts both near 0.3)
    assert np.all(scores["nmi"] < 0.6)
    np.testing.assert_allclose(
        scores["nmi"],
        [
            nmi(a, b, levels=16, value_range=(0, 255))
            for a, b in zip(x8, y8[scores["assignment"]], strict=True)
        ],
    )
