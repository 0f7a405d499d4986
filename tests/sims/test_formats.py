"""Tests of the file loaders (sims.formats, sims.data): tiny files in each real format,
written here, and malformed ones."""

import gzip
import json
import pickle

import numpy as np
import pytest
import torch

from sims.data.datasets import (
    available_datasets,
    load_cifar10,
    load_dataset,
    load_femnist,
    load_mnist,
    load_train_test,
)
from sims.data.formats import IDX_IMAGES_MAGIC, IDX_LABELS_MAGIC, read_idx
from sims.data.partition import partition_by_client


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
    assert {"digits", "mnist", "cifar10", "femnist"} <= set(available_datasets())


def _corrupt(path, how):
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[:-5])
    elif how == "wrong-magic":
        path.write_bytes(IDX_LABELS_MAGIC.to_bytes(4, "big") + data[4:])
    elif how == "short-header":
        path.write_bytes(data[:10])
    elif how == "trailing":
        path.write_bytes(data + b"\x00")


@pytest.mark.parametrize(
    ("how", "match"),
    [
        ("truncated", "truncated"),
        ("wrong-magic", "magic number 0x00000801, expected 0x00000803"),
        ("short-header", "truncated IDX header"),
        ("trailing", "longer than its header"),
    ],
)
def test_malformed_idx_names_file_and_problem(tmp_path, how, match):
    _write_mnist(tmp_path, np.random.default_rng(2))
    path = tmp_path / "train-images-idx3-ubyte"
    _corrupt(path, how)
    with pytest.raises(ValueError, match=match) as info:
        load_mnist(tmp_path)
    assert str(path) in str(info.value)


def test_mnist_label_count_mismatch_and_missing_and_bad_gzip(tmp_path):
    rng = np.random.default_rng(3)
    _write_mnist(tmp_path, rng)
    labels = rng.integers(0, 10, size=6, dtype=np.uint8)  # 6 labels for 7 images
    (tmp_path / "train-labels-idx1-ubyte").write_bytes(_idx_bytes(labels, IDX_LABELS_MAGIC))
    with pytest.raises(ValueError, match="6 labels for 7 images"):
        load_mnist(tmp_path)
    (tmp_path / "train-images-idx3-ubyte").unlink()
    with pytest.raises(FileNotFoundError, match="train-images-idx3-ubyte"):
        load_mnist(tmp_path)
    bad = tmp_path / "bad.gz"
    bad.write_bytes(b"not gzip at all")
    with pytest.raises(ValueError, match=r"bad\.gz"):
        read_idx(bad, magic=IDX_IMAGES_MAGIC)


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


class _Exploit:
    def __reduce__(self):
        import os

        return (os.system, ("echo exploited",))


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ({b"labels": [1, 2]}, "no 'data' entry"),
        ({b"data": np.zeros((2, 3072), np.uint8)}, "no 'labels' entry"),
        ({b"data": np.zeros((2, 100), np.uint8), b"labels": [1, 2]}, r"shape \(N, 3072\)"),
        ({b"data": np.zeros((2, 3072), np.float32), b"labels": [1, 2]}, "uint8"),
        ({b"data": np.zeros((2, 3072), np.uint8), b"labels": [1]}, "1 labels for 2 images"),
        ({b"data": np.zeros((2, 3072), np.uint8), b"labels": [1, 10]}, "label 10 at index 1"),
        ([1, 2, 3], "is a dict"),
        ({b"data": _Exploit()}, "not allowed"),
    ],
    ids=[
        "no-data",
        "no-labels",
        "bad-width",
        "float",
        "short-labels",
        "label-10",
        "list",
        "exploit",
    ],
)
def test_malformed_cifar_batch_names_file_and_problem(tmp_path, content, match):
    _write_cifar(tmp_path, np.random.default_rng(5))
    path = tmp_path / "data_batch_3"
    with open(path, "wb") as fh:
        pickle.dump(content, fh, protocol=2)
    with pytest.raises(ValueError, match=match) as info:
        load_cifar10(tmp_path)
    assert str(path) in str(info.value)


def test_truncated_cifar_pickle_and_missing_batch(tmp_path):
    _write_cifar(tmp_path, np.random.default_rng(6))
    (tmp_path / "data_batch_5").unlink()
    with pytest.raises(FileNotFoundError, match="data_batch_5"):
        load_cifar10(tmp_path, "train")
    path = tmp_path / "data_batch_2"
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(ValueError, match="data_batch_2: not a CIFAR-10 python batch"):
        load_cifar10(tmp_path)


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


def _mismatched(blob):
    blob["num_samples"][0] += 1


def _users_vs_counts(blob):
    blob["num_samples"].append(5)


def _no_user_data(blob):
    del blob["user_data"]


def _short_image(blob):
    blob["user_data"]["f0"]["x"] = [x[:783] for x in blob["user_data"]["f0"]["x"]]


def _pixel_range(blob):
    blob["user_data"]["f0"]["x"][0][0] = 255.0


def _label_range(blob):
    blob["user_data"]["f0"]["y"][0] = 62


def _unknown_user(blob):
    blob["users"].append("ghost")
    blob["num_samples"].append(1)


@pytest.mark.parametrize(
    ("corrupt", "match"),
    [
        (_mismatched, "has 3 x and 3 y but num_samples says 4"),
        (_users_vs_counts, "2 users but 3 entries"),
        (_no_user_data, "keys users, num_samples, user_data"),
        (_short_image, "783 values, not 784"),
        (_pixel_range, r"\[0, 1\]"),
        (_label_range, "0..61"),
        (_unknown_user, "'ghost' has no 'x'/'y'"),
    ],
    ids=lambda v: getattr(v, "__name__", "")[1:] or None,
)
def test_malformed_leaf_json_names_file_and_problem(tmp_path, corrupt, match):
    rng = np.random.default_rng(9)
    blob = _leaf_blob(rng, ["f0", "f1"], [3, 2])
    corrupt(blob)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(blob))
    with pytest.raises(ValueError, match=match) as info:
        load_femnist(tmp_path)
    assert str(path) in str(info.value)


def test_leaf_not_json(tmp_path):
    (tmp_path / "x.json").write_text("{ not json")
    with pytest.raises(ValueError, match=r"x\.json"):
        load_femnist(tmp_path)


def test_file_data_sets_need_a_folder():
    with pytest.raises(ValueError, match="pass its data_dir"):
        load_dataset("mnist")


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
