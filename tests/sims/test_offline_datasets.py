"""The offline data sets shipped with scikit-image: LFW faces and colour photo patches,
against the source arrays read here directly (slow loops over the documented grid)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from skimage import data as skdata

from pruneleak.sims.data import load_dataset, load_faces, load_patches, load_train_test
from pruneleak.sims.data.datasets import PATCH_PHOTOGRAPHS, PATCH_SIZE
from pruneleak.sims.sweep.job import DATASET_SHAPES


def test_faces_are_the_lfw_subset_with_face_labels():
    faces = load_faces()
    source = skdata.lfw_subset()
    assert faces.images.shape == (200, 1, 25, 25) and faces.num_classes == 2
    np.testing.assert_array_equal(faces.images[:, 0].numpy(), source.astype(np.float32))
    assert faces.labels[:100].eq(1).all() and faces.labels[100:].eq(0).all()


@pytest.mark.parametrize("seed", [0, 3])
def test_patches_are_the_tiles_of_the_seeded_grid(seed):
    patches = load_patches(seed)
    expected_images, expected_labels = [], []
    for label, name in enumerate(PATCH_PHOTOGRAPHS):  # one tile at a time
        photo = getattr(skdata, name)()
        top, left = np.random.default_rng([seed, label]).integers(0, PATCH_SIZE, size=2)
        row = top
        while row + PATCH_SIZE <= photo.shape[0]:
            column = left
            while column + PATCH_SIZE <= photo.shape[1]:
                tile = photo[row : row + PATCH_SIZE, column : column + PATCH_SIZE]
                expected_images.append(np.moveaxis(tile, -1, 0) / 255.0)
                expected_labels.append(label)
                column += PATCH_SIZE
            row += PATCH_SIZE
    assert patches.images.shape == (len(expected_images), 3, 32, 32)
    np.testing.assert_allclose(patches.images.numpy(), np.stack(expected_images), atol=1e-7)
    assert patches.labels.tolist() == expected_labels
    assert patches.num_classes == len(PATCH_PHOTOGRAPHS)


def test_patch_grids_differ_between_seeds_and_repeat_within_one():
    assert torch.equal(load_patches(1).images, load_patches(1).images)
    a, b = load_patches(0), load_patches(1)
    assert a.images.shape != b.images.shape or not torch.equal(a.images, b.images)


@pytest.mark.parametrize("name", ["faces", "patches"])
def test_offline_sets_load_by_name_split_and_match_the_job_shapes(name):
    train, test = load_train_test(name)
    full = load_dataset(name)
    assert len(train) + len(test) == len(full)
    shape, classes = DATASET_SHAPES[name]
    assert tuple(full.images.shape[1:]) == shape and full.num_classes == classes


def test_patches_reject_a_negative_seed():
    with pytest.raises(ValueError, match="'seed' parameter of load_patches"):
        load_patches(-1)
