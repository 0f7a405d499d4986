"""Tests of the file loaders (sims.data.formats, sims.data): tiny files in each real
format, written here. Malformed files and invalid arguments are rows of
tests/invalid_inputs/invalid_cases_files.py; the tests here check what a row cannot (a
refused pickle did not run its command) and what valid edge cases return."""

import gzip
import json
import pickle

import numpy as np
import pytest
import torch

from pruneleak.sims.data.datasets import (
    available_datasets,
    load_cifar10,
    load_dataset,
    load_femnist,
    load_mnist,
    load_train_test,
)
from pruneleak.sims.data.formats import IDX_IMAGES_MAGIC, IDX_LABELS_MAGIC, read_femnist_split
from pruneleak.sims.data.partition import partition_by_client


def _idx_bytes(array: np.ndarray, magic: int) -> bytes:
    """IDX encoding written from the format description (big-endian magic and dims)."""
    header = magic.to_bytes(4, "big") + b"".join(d.to_bytes(4, "big") for d in array.shape)
    return header + array.astype(np.uint8).tobytes()


def _write_mnist(folder, rng, n_train=7, n_test=3, compress=False):
    folder.mkdir(parents=True, exist_ok=True)
    arrays = {}
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, size=n, dtype=np.uint8)
        for kind, array, magic in (
            ("images-idx3", images, IDX_IMAGES_MAGIC),
            ("labels-idx1", labels, IDX_LABELS_MAGIC),
        ):
            data = _idx_bytes(array, magic)
            name = f"{prefix}-{kind}-ubyte"
            if compress:
                (folder / f"{name}.gz").write_bytes(gzip.compress(data))
            else:
                (folder / name).write_bytes(data)
        arrays[prefix] = (images, labels)
    return arrays


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
def test_mnist_idx_round_trip(tmp_path, compress):
    arrays = _write_mnist(tmp_path, np.random.default_rng(0), compress=compress)
    for split, prefix in (("train", "train"), ("test", "t10k")):
        data = load_mnist(tmp_path, split)
        images, labels = arrays[prefix]
        assert data.image_shape == (1, 28, 28) and data.num_classes == 10
        np.testing.assert_array_equal(data.images[:, 0].numpy(), images / np.float32(255))
        np.testing.assert_array_equal(data.labels.numpy(), labels)


def test_mnist_torchvision_layout_and_official_test_split(tmp_path):
    arrays = _write_mnist(tmp_path / "MNIST" / "raw", np.random.default_rng(1))
    train, test = load_train_test("mnist", tmp_path)
    assert (len(train), len(test)) == (7, 3)
    np.testing.assert_array_equal(test.labels.numpy(), arrays["t10k"][1])
    assert {"digits", "mnist", "fashion_mnist", "cifar10", "femnist"} <= set(available_datasets())


def test_fashion_mnist_reads_its_own_torchvision_folder(tmp_path):
    """Fashion-MNIST has MNIST's file names: the loader looks in FashionMNIST/raw, and an
    MNIST folder beside it is not read."""
    fashion = _write_mnist(tmp_path / "FashionMNIST" / "raw", np.random.default_rng(2))
    _write_mnist(tmp_path / "MNIST" / "raw", np.random.default_rng(3), n_train=5)
    train, test = load_train_test("fashion_mnist", tmp_path)
    assert train.name == "fashion_mnist" and (len(train), len(test)) == (7, 3)
    np.testing.assert_array_equal(train.labels.numpy(), fashion["train"][1])
    np.testing.assert_array_equal(
        (train.images[:, 0].numpy() * 255).round().astype(np.uint8), fashion["train"][0]
    )


def _write_cifar(folder, rng, per_batch=4):
    folder.mkdir(parents=True, exist_ok=True)
    arrays = {}
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        data = rng.integers(0, 256, size=(per_batch, 3072), dtype=np.uint8)
        labels = rng.integers(0, 10, size=per_batch).tolist()
        batch = {b"batch_label": name.encode(), b"data": data, b"labels": labels}
        with open(folder / name, "wb") as fh:
            pickle.dump(batch, fh, protocol=2)  # the original batches are protocol-2 pickles
        arrays[name] = (data, labels)
    return arrays


def test_cifar10_batches_round_trip(tmp_path):
    arrays = _write_cifar(tmp_path / "cifar-10-batches-py", np.random.default_rng(4))
    train = load_cifar10(tmp_path)
    assert len(train) == 20 and train.image_shape == (3, 32, 32)
    first, labels = arrays["data_batch_1"]
    # Row layout: 1024 red, 1024 green, 1024 blue values, each 32x32 row-major.
    np.testing.assert_array_equal(
        train.images[0, 1, 2, 3].numpy(), first[0, 1024 + 2 * 32 + 3] / np.float32(255)
    )
    np.testing.assert_array_equal(train.labels[:4].numpy(), labels)
    test = load_dataset("cifar10", tmp_path)  # the registry loads the training split
    assert len(test) == 20
    _, official = load_train_test("cifar10", tmp_path)
    np.testing.assert_array_equal(official.labels.numpy(), arrays["test_batch"][1])


def _leaf_blob(rng, users, counts):
    return {
        "users": users,
        "num_samples": counts,
        "user_data": {
            u: {
                "x": rng.random((n, 784)).round(3).tolist(),
                "y": rng.integers(0, 62, size=n).tolist(),
            }
            for u, n in zip(users, counts, strict=True)
        },
    }


def _write_leaf(folder, rng):
    for split, files in (
        ("train", {"a.json": (["f0", "f1"], [3, 2]), "b.json": (["f2", "f1"], [1, 4])}),
        ("test", {"a.json": (["f0", "f2"], [1, 1])}),
    ):
        (folder / split).mkdir(parents=True, exist_ok=True)
        for name, (users, counts) in files.items():
            (folder / split / name).write_text(json.dumps(_leaf_blob(rng, users, counts)))


def test_femnist_keeps_the_writer_partition(tmp_path):
    _write_leaf(tmp_path, np.random.default_rng(7))
    train = load_femnist(tmp_path)
    assert len(train) == 10 and train.num_classes == 62 and train.image_shape == (1, 28, 28)
    # Writers in order of first appearance over a.json then b.json: f0, f1, f2; f1's
    # samples in b.json keep f1's id.
    np.testing.assert_array_equal(train.client_ids.numpy(), [0, 0, 0, 1, 1, 2, 1, 1, 1, 1])
    blob = json.loads((tmp_path / "train" / "b.json").read_text())
    np.testing.assert_array_equal(
        train.images[6, 0].numpy().reshape(-1),
        np.asarray(blob["user_data"]["f1"]["x"][0], dtype=np.float32),
    )
    parts = partition_by_client(train.client_ids.numpy())
    assert [p.tolist() for p in parts] == [[0, 1, 2], [3, 4, 6, 7, 8, 9], [5]]
    _, test = load_train_test("femnist", tmp_path)
    assert len(test) == 2


def test_femnist_flat_folder_is_the_training_split(tmp_path):
    rng = np.random.default_rng(8)
    (tmp_path / "all.json").write_text(json.dumps(_leaf_blob(rng, ["w"], [2])))
    assert len(load_femnist(tmp_path)) == 2
    with pytest.raises(FileNotFoundError, match="test/"):
        load_femnist(tmp_path, "test")


@pytest.mark.parametrize(
    "ids", [np.array([0, 2, 2]), np.array([[0, 1]]), np.array([-1, 0]), np.array([0.0, 1.0])]
)
def test_partition_by_client_rejects_bad_ids(ids):
    with pytest.raises(ValueError, match="client_ids"):
        partition_by_client(ids)


def test_loaded_tensors_are_valid_image_datasets(tmp_path):
    _write_mnist(tmp_path, np.random.default_rng(10))
    data = load_mnist(tmp_path)
    assert data.images.dtype == torch.float32 and data.labels.dtype == torch.int64
    assert float(data.images.max()) <= 1.0


class _RunsCommand:
    """Pickles as ``os.system(command)``: what a hostile batch would carry."""

    def __init__(self, command: str):
        self.command = command

    def __reduce__(self):
        import os

        return (os.system, (self.command,))


def test_cifar_pickle_that_runs_a_command_is_refused_before_running(tmp_path):
    _write_cifar(tmp_path, np.random.default_rng(11))
    marker = tmp_path / "ran"
    batch = {b"data": _RunsCommand(f"touch {marker}"), b"labels": [1, 2]}
    (tmp_path / "data_batch_4").write_bytes(pickle.dumps(batch, protocol=2))
    with pytest.raises(ValueError, match=r"data_batch_4.*not allowed"):
        load_cifar10(tmp_path)
    assert not marker.exists()


def test_femnist_writer_without_samples_gets_no_client_id(tmp_path):
    # LEAF may list a writer with 0 samples in a split; every client id must hold data,
    # or partition_by_client (and the "natural" split) would refuse the data set.
    blob = _leaf_blob(np.random.default_rng(12), ["a", "empty", "b"], [1, 0, 2])
    (tmp_path / "x.json").write_text(json.dumps(blob))
    users, _, _, client_ids = read_femnist_split(tmp_path, "train")
    assert users == ["a", "b"]
    np.testing.assert_array_equal(client_ids, [0, 1, 1])
    assert [p.tolist() for p in partition_by_client(client_ids)] == [[0], [1, 2]]


def test_femnist_pixels_at_the_bounds_and_integer_pixels_are_kept_exactly(tmp_path):
    row = [0, 1, 0.0, 1.0, 0.5] + [0.25] * 779  # JSON integers 0 and 1 are valid pixels
    blob = {"users": ["w"], "num_samples": [1], "user_data": {"w": {"x": [row], "y": [61]}}}
    (tmp_path / "x.json").write_text(json.dumps(blob))
    data = load_femnist(tmp_path)
    np.testing.assert_array_equal(data.images.reshape(-1).numpy(), np.float32(row))
    assert data.labels.tolist() == [61]


def test_huge_values_are_shortened_in_messages(tmp_path):
    # A 400-digit label must not flood the one-line CLI error.
    blob = _leaf_blob(np.random.default_rng(13), ["w"], [1])
    blob["user_data"]["w"]["y"] = [10**400]
    (tmp_path / "x.json").write_text(json.dumps(blob))
    with pytest.raises(ValueError, match=r"user 'w': label 1000+\.\.\.0+ at index 0") as info:
        load_femnist(tmp_path)
    assert len(str(info.value)) < len(str(tmp_path)) + 120
