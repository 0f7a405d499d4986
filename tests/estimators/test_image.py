"""estimators.image against scikit-image (test-only) and brute-force references."""

import itertools

import numpy as np
import pytest
import torch
from skimage.metrics import peak_signal_noise_ratio, structural_similarity
from sklearn.datasets import load_digits

from estimators.image import (
    inference_accuracy,
    match_reconstructions,
    phash,
    phash_similarity,
    psnr,
    score_reconstruction,
    ssim,
)
from estimators.nmi import nmi

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
