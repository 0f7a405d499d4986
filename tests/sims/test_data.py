"""Tests of sims.data: the digits loader, ImageDataset and the client partitions."""

import numpy as np
import pytest
import torch
from sklearn.datasets import load_digits

from pruneleak.sims.data.datasets import (
    ImageDataset,
    available_datasets,
    load_dataset,
    load_digits_dataset,
    resize_images,
)
from pruneleak.sims.data.partition import partition_dirichlet, partition_iid


@pytest.fixture(scope="module")
def digits() -> ImageDataset:
    return load_digits_dataset()


def _mean_label_distance(labels: np.ndarray, parts: list[np.ndarray]) -> float:
    """Mean total-variation distance between each client's label histogram and the global one."""
    k = labels.max() + 1
    global_hist = np.bincount(labels, minlength=k) / labels.size
    return float(
        np.mean(
            [
                0.5 * np.abs(np.bincount(labels[p], minlength=k) / p.size - global_hist).sum()
                for p in parts
            ]
        )
    )


def _assert_exact_cover(parts: list[np.ndarray], n: int) -> None:
    joined = np.concatenate(parts)
    assert joined.dtype == np.int64
    np.testing.assert_array_equal(np.sort(joined), np.arange(n))


def test_digits_matches_sklearn(digits):
    bunch = load_digits()
    assert len(digits) == 1797 and digits.image_shape == (1, 8, 8)
    assert digits.images.dtype == torch.float32 and digits.labels.dtype == torch.int64
    assert digits.num_classes == 10 and digits.name == "digits"
    assert float(digits.images.min()) == 0.0 and float(digits.images.max()) == 1.0
    # sklearn stores integer pixels 0..16; x / 16 is exact in float32.
    np.testing.assert_array_equal(digits.images.reshape(-1, 64).numpy(), bunch.data / 16)
    np.testing.assert_array_equal(digits.labels.numpy(), bunch.target)
    assert set(digits.labels.tolist()) == set(range(10))


def test_load_dataset_registry(digits):
    assert "digits" in available_datasets()
    assert torch.equal(load_dataset("digits").images, digits.images)
    with pytest.raises(ValueError, match="'digits'"):
        load_dataset("imagenet")


def test_subset_and_stratified_split(digits):
    sub = digits.subset([5, 0, 7])
    assert torch.equal(sub.images, digits.images[[5, 0, 7]])
    assert torch.equal(sub.labels, digits.labels[[5, 0, 7]])
    # Negative positions count from the end and repeats are kept, as in numpy indexing;
    # unsigned and torch integer indices are positions too.
    again = digits.subset(np.array([-1, 0, 0], dtype=np.int32))
    assert torch.equal(again.labels, digits.labels[[len(digits) - 1, 0, 0]])
    assert torch.equal(digits.subset(torch.tensor([3])).images, digits.images[3:4])
    assert torch.equal(digits.subset(np.array([2], dtype=np.uint8)).labels, digits.labels[2:3])
    train, test = digits.train_test_split(0.25, seed=3)
    assert len(train) + len(test) == len(digits)
    counts = np.bincount(digits.labels.numpy())
    np.testing.assert_array_equal(np.bincount(test.labels.numpy()), np.round(0.25 * counts))
    again, _ = digits.train_test_split(0.25, seed=3)
    other, _ = digits.train_test_split(0.25, seed=4)
    assert torch.equal(again.images, train.images)
    assert not torch.equal(other.images, train.images)


_GOOD = dict(images=torch.zeros(4, 1, 2, 2), labels=torch.zeros(4, dtype=torch.int64))


@pytest.mark.parametrize(
    "override",
    [
        {"images": torch.zeros(4, 2, 2)},
        {"images": torch.zeros(4, 1, 2, 2, dtype=torch.float64)},
        {"images": torch.full((4, 1, 2, 2), 1.5)},
        {"images": torch.full((4, 1, 2, 2), float("nan"))},
        {"labels": torch.zeros(3, dtype=torch.int64)},
        {"labels": torch.zeros(4, dtype=torch.int32)},
        {"labels": torch.full((4,), 3, dtype=torch.int64)},
        {"client_ids": torch.zeros(5, dtype=torch.int64)},
        {"num_classes": 0},
    ],
)
def test_image_dataset_rejects_bad_fields(override):
    fields = {**_GOOD, "num_classes": 3, "name": "x", **override}
    with pytest.raises(ValueError):
        ImageDataset(**fields)


def test_partition_iid_covers_and_is_seeded():
    parts = partition_iid(103, 10, seed=0)
    _assert_exact_cover(parts, 103)
    assert {p.size for p in parts} == {10, 11}
    again = partition_iid(103, 10, seed=0)
    other = partition_iid(103, 10, seed=1)
    assert all(np.array_equal(a, b) for a, b in zip(parts, again, strict=True))
    assert not all(np.array_equal(a, b) for a, b in zip(parts, other, strict=True))


def test_partition_dirichlet_covers_and_is_seeded(digits):
    labels = digits.labels.numpy()
    parts = partition_dirichlet(labels, 20, alpha=0.1, seed=0, min_size=5)
    _assert_exact_cover(parts, labels.size)
    assert min(p.size for p in parts) >= 5
    again = partition_dirichlet(labels, 20, alpha=0.1, seed=0, min_size=5)
    assert all(np.array_equal(a, b) for a, b in zip(parts, again, strict=True))


def test_dirichlet_skew_depends_on_alpha(digits):
    labels = digits.labels.numpy()
    skewed = _mean_label_distance(labels, partition_dirichlet(labels, 10, alpha=0.05, seed=0))
    flat = _mean_label_distance(labels, partition_dirichlet(labels, 10, alpha=1000.0, seed=0))
    iid = _mean_label_distance(labels, partition_iid(labels.size, 10, seed=0))
    # alpha = 0.05 puts each class on about one client: TV distance near 0.9 for 10
    # balanced classes; measured 0.79 here. Threshold 0.6 leaves a wide margin.
    assert skewed > 0.6
    # alpha = 1000 splits every class almost proportionally (measured 0.015), even closer
    # to the global histogram than IID sampling of ~180 images per client, whose TV
    # distance is sampling noise of order 0.07 (measured 0.069).
    assert flat < 0.05
    assert iid < 0.12


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"num_samples": 5, "num_clients": 6, "seed": 0}, "num_clients"),
        ({"num_samples": 5, "num_clients": 0, "seed": 0}, "num_clients"),
        ({"num_samples": 0, "num_clients": 1, "seed": 0}, "num_samples"),
        ({"num_samples": 5, "num_clients": 2, "seed": -1}, "seed"),
    ],
)
def test_partition_iid_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        partition_iid(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"alpha": 0.0}, "alpha"),
        ({"alpha": float("nan")}, "alpha"),
        ({"num_clients": 11}, "num_clients"),
        ({"min_size": 4}, "num_clients"),
        ({"min_size": 0}, "min_size"),
        ({"labels": np.array([0.5, 1.5])}, "labels"),
        ({"labels": np.zeros((2, 5), dtype=int)}, "labels"),
    ],
)
def test_partition_dirichlet_rejects_bad_arguments(kwargs, match):
    args = {"labels": np.arange(10) % 3, "num_clients": 3, "alpha": 1.0, "seed": 0, **kwargs}
    with pytest.raises(ValueError, match=match):
        partition_dirichlet(args.pop("labels"), args.pop("num_clients"), **args)


def test_resize_images_keeps_range_and_returns_same_size_input(digits):
    images = digits.images[:5]
    assert resize_images(images, 8) is images
    larger = resize_images(images, 16)
    assert larger.shape == (5, 1, 16, 16)
    assert float(larger.min()) >= 0.0 and float(larger.max()) <= 1.0
    # Bilinear resizing maps a constant image to the same constant (0.75 is exact in
    # float32, and the interpolation weights sum to 1).
    flat = resize_images(torch.full((2, 3, 8, 8), 0.75), 5)
    torch.testing.assert_close(flat, torch.full((2, 3, 5, 5), 0.75))
