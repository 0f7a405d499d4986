"""Invalid inputs of files: rows of test_invalid_inputs.

Every data loader of :mod:`sims.data` (MNIST IDX, CIFAR-10 python batches, LEAF FEMNIST
JSON), the data folder, and the data-set and partition functions. Each row writes one
tiny file in the real format with one thing wrong, then expects a refusal whose message
names the file (its basename) and the record (writer, image, pixel, label index, key) or
the parameter, and usually the offending value.
"""

from __future__ import annotations

import gzip
import json
import os
import pickle
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from invalid_case import ApiCase, CliCase

from pruneleak.sims.data import (
    ImageDataset,
    load_cifar10,
    load_dataset,
    load_femnist,
    load_mnist,
    partition_by_client,
    partition_dirichlet,
    partition_iid,
    resize_images,
)
from pruneleak.sims.data.formats import IDX_IMAGES_MAGIC, IDX_LABELS_MAGIC

# ---------------------------------------------------------------------------- FEMNIST


def _leaf_blob() -> dict:
    """A valid LEAF file: writers f0 (2 images) and f1 (1 image), 784 pixels each."""
    return {
        "users": ["f0", "f1"],
        "num_samples": [2, 1],
        "user_data": {
            "f0": {"x": [[0.5] * 784, [0.25] * 784], "y": [3, 61]},
            "f1": {"x": [[0.0] * 784], "y": [0]},
        },
    }


def _femnist_text(text: str | bytes) -> Callable[[Path], object]:
    """A call that writes ``text`` as ``bad.json`` and loads the folder as FEMNIST."""

    def call(tmp: Path):
        (tmp / "bad.json").write_bytes(text.encode() if isinstance(text, str) else text)
        return load_femnist(tmp)

    return call


def _leaf_with(*keys_and_value) -> str:
    """The valid LEAF file's JSON with the entry at ``keys`` (a path into the JSON)
    replaced by ``value``: ``_leaf_with("user_data", "f0", "y", [1.7, 2.9])``. NaN and
    infinity are written as JSON's NaN and Infinity, which Python's json reads back."""
    *keys, value = keys_and_value
    blob = _leaf_blob()
    target = blob
    for key in keys[:-1]:
        target = target[key]
    target[keys[-1]] = value
    return json.dumps(blob)


def _femnist(*keys_and_value) -> Callable[[Path], object]:
    """A call loading the valid LEAF file with one entry replaced (see :func:`_leaf_with`)."""
    return _femnist_text(_leaf_with(*keys_and_value))


def _femnist_pixel(value) -> Callable[[Path], object]:
    """Pixel 5 of writer f0's image 1 set to ``value``."""
    row = [0.25] * 784
    row[5] = value
    return _femnist("user_data", "f0", "x", [[0.5] * 784, row])


def _femnist_edit(old: str, new: str) -> Callable[[Path], object]:
    """The valid file's JSON text with its first ``old`` replaced by ``new``."""
    text = json.dumps(_leaf_blob())
    assert old in text
    return _femnist_text(text.replace(old, new, 1))


def _femnist_json_folder(tmp: Path):
    (tmp / "a.json").mkdir()
    return load_femnist(tmp)


def _femnist_test_split_of_flat_folder(tmp: Path):
    (tmp / "all.json").write_text(json.dumps(_leaf_blob()))
    return load_femnist(tmp, "test")


FEMNIST = [
    ApiCase(
        "files-femnist-float-labels",
        _femnist("user_data", "f0", "y", [1.7, 2.9]),
        ["bad.json", "user 'f0'", "label 1.7 at index 0", "0..61"],
    ),
    ApiCase(
        "files-femnist-float-label-later",
        _femnist("user_data", "f0", "y", [2, 3.2]),
        ["bad.json", "user 'f0'", "label 3.2 at index 1"],
    ),
    ApiCase(
        "files-femnist-user-data-list",
        _femnist("user_data", [_leaf_blob()["user_data"]]),
        ["bad.json", "'user_data'", "object", "list"],
    ),
    ApiCase(
        "files-femnist-string-pixel",
        _femnist_pixel("abc"),
        ["bad.json", "user 'f0'", "image 1, pixel 5", "'abc'"],
    ),
    ApiCase(
        "files-femnist-numeric-string-pixel",
        _femnist_pixel("0.5"),
        ["bad.json", "user 'f0'", "image 1, pixel 5", "'0.5'"],
    ),
    ApiCase(
        "files-femnist-bool-pixel",
        _femnist_pixel(True),
        ["bad.json", "image 1, pixel 5", "True"],
    ),
    ApiCase(
        "files-femnist-null-pixel",
        _femnist_pixel(None),
        ["bad.json", "image 1, pixel 5", "None"],
    ),
    ApiCase(
        "files-femnist-pixel-above-one",
        _femnist_pixel(1.0000000001),  # float32 would round it to 1.0
        ["bad.json", "image 1, pixel 5", "1.0000000001", "[0, 1]"],
    ),
    ApiCase(
        "files-femnist-pixel-255",
        _femnist_pixel(255),
        ["bad.json", "image 1, pixel 5", "255", "[0, 1]"],
    ),
    ApiCase(
        "files-femnist-pixel-negative",
        _femnist_pixel(-0.1),
        ["bad.json", "image 1, pixel 5", "-0.1"],
    ),
    ApiCase(
        "files-femnist-pixel-nan",
        _femnist_pixel(float("nan")),
        ["bad.json", "image 1, pixel 5", "nan"],
    ),
    ApiCase(
        "files-femnist-pixel-overflow-float",
        _femnist_edit("0.25", "1e400"),  # json reads it as inf
        ["bad.json", "image 1, pixel 0", "inf"],
    ),
    ApiCase(
        "files-femnist-pixel-huge-integer",
        _femnist_pixel(10**400),  # too large for any float: numpy raises OverflowError
        ["bad.json", "image 1, pixel 5", "[0, 1]"],
    ),
    ApiCase(
        "files-femnist-ragged-pixel-rows",
        _femnist("user_data", "f0", "x", [[0.5] * 784, [0.5] * 783]),
        ["bad.json", "user 'f0'", "image 1 has 783 values, not 784"],
    ),
    ApiCase(
        "files-femnist-image-not-a-list",
        _femnist("user_data", "f1", "x", [0.5]),
        ["bad.json", "user 'f1'", "image 0 is a float"],
    ),
    ApiCase(
        "files-femnist-x-not-an-array",
        _femnist("user_data", "f0", "x", {"0": [0.5] * 784}),
        ["bad.json", "user 'f0'", "'x' and 'y'"],
    ),
    ApiCase(
        "files-femnist-string-label",
        _femnist("user_data", "f0", "y", [3, "3"]),
        ["bad.json", "user 'f0'", "label '3' at index 1"],
    ),
    ApiCase(
        "files-femnist-bool-label",
        _femnist("user_data", "f1", "y", [True]),
        ["bad.json", "user 'f1'", "label True at index 0"],
    ),
    ApiCase(
        "files-femnist-nested-label",
        _femnist("user_data", "f1", "y", [[0]]),
        ["bad.json", "user 'f1'", "label [0] at index 0"],
    ),
    ApiCase(
        "files-femnist-label-62",
        _femnist("user_data", "f0", "y", [3, 62]),
        ["bad.json", "user 'f0'", "label 62 at index 1", "0..61"],
    ),
    ApiCase(
        "files-femnist-label-negative",
        _femnist("user_data", "f1", "y", [-1]),
        ["bad.json", "user 'f1'", "label -1 at index 0"],
    ),
    ApiCase(
        "files-femnist-label-beyond-int64",
        _femnist("user_data", "f1", "y", [10**30]),
        ["bad.json", "user 'f1'", "at index 0", "0..61"],
    ),
    ApiCase(
        "files-femnist-missing-key",
        _femnist_edit('"num_samples"', '"samples"'),
        ["bad.json", "num_samples"],
    ),
    ApiCase("files-femnist-top-level-array", _femnist_text("[1, 2]"), ["bad.json", "users"]),
    ApiCase(
        "files-femnist-users-a-string",
        _femnist("users", "f0"),
        ["bad.json", "'users'", "array", "str"],
    ),
    ApiCase(
        "files-femnist-user-id-integer",
        _femnist("users", ["f0", 7]),
        ["bad.json", "users[1]", "7"],
    ),
    ApiCase(
        "files-femnist-num-samples-float",
        _femnist("num_samples", [2, 1.0]),
        ["bad.json", "num_samples[1]", "1.0"],
    ),
    ApiCase(
        "files-femnist-num-samples-negative",
        _femnist("num_samples", [-2, 1]),
        ["bad.json", "num_samples[0]", "-2"],
    ),
    ApiCase(
        "files-femnist-count-mismatch",
        _femnist("num_samples", [3, 1]),
        ["bad.json", "user 'f0'", "num_samples says 3"],
    ),
    ApiCase(
        "files-femnist-users-vs-num-samples",
        _femnist("num_samples", [2]),
        ["bad.json", "2 users but 1 entries in 'num_samples'"],
    ),
    ApiCase(
        "files-femnist-writer-listed-twice",
        _femnist("users", ["f0", "f0"]),
        ["bad.json", "'f0'", "twice"],
    ),
    ApiCase(
        "files-femnist-duplicate-json-key",
        _femnist_edit('"f1": {', '"f0": {"x": [], "y": []}, "f1": {'),
        ["bad.json", "'f0'", "twice"],
    ),
    ApiCase(
        "files-femnist-unlisted-writer",
        _femnist_edit(
            '"users": ["f0", "f1"], "num_samples": [2, 1]', '"users": ["f0"], "num_samples": [2]'
        ),
        ["bad.json", "'f1'", "not in 'users'"],
    ),
    ApiCase(
        "files-femnist-writer-without-record",
        _femnist("user_data", "f1", [0]),
        ["bad.json", "user 'f1'", "'x'/'y'"],
    ),
    ApiCase(
        "files-femnist-no-samples",
        _femnist_text(json.dumps({"users": [], "num_samples": [], "user_data": {}})),
        ["bad.json", "no samples"],
    ),
    ApiCase(
        "files-femnist-invalid-utf8",
        _femnist_text(b'{"users": ["f\xff"]}'),
        ["bad.json", "not a JSON file", "utf-8"],
    ),
    ApiCase(
        "files-femnist-utf8-bom",
        _femnist_text(b"\xef\xbb\xbf" + json.dumps(_leaf_blob()).encode()),
        ["bad.json", "not a JSON file", "BOM"],
    ),
    ApiCase("files-femnist-empty-file", _femnist_text(""), ["bad.json", "not a JSON file"]),
    ApiCase(
        "files-femnist-truncated-json",
        _femnist_text(json.dumps(_leaf_blob())[:-40]),
        ["bad.json", "not a JSON file"],
    ),
    ApiCase(
        "files-femnist-runaway-nesting",
        _femnist_text("[" * 100_000 + "]" * 100_000),
        ["bad.json", "not a JSON file", "RecursionError"],
    ),
    ApiCase(
        "files-femnist-json-name-is-a-folder",
        _femnist_json_folder,
        ["a.json", "not a JSON file"],
    ),
    ApiCase(
        "files-femnist-folder-without-json",
        lambda tmp: load_femnist(tmp),
        ["*.json"],
        error=FileNotFoundError,
    ),
    ApiCase(
        "files-femnist-test-split-missing",
        _femnist_test_split_of_flat_folder,
        ["test/"],
        error=FileNotFoundError,
    ),
]

# ------------------------------------------------------------------------------ MNIST


def _idx(magic: int, dims: tuple[int, ...], payload: bytes) -> bytes:
    """IDX bytes: big-endian magic, big-endian uint32 dims, then the payload."""
    return magic.to_bytes(4, "big") + b"".join(d.to_bytes(4, "big") for d in dims) + payload


GOOD_IMAGES = _idx(IDX_IMAGES_MAGIC, (3, 28, 28), bytes(3 * 784))
GOOD_LABELS = _idx(IDX_LABELS_MAGIC, (3,), bytes([0, 7, 9]))


def _mnist(images: bytes = GOOD_IMAGES, labels: bytes = GOOD_LABELS, *, gz: bool = False):
    """A call writing the MNIST training pair (images gzipped as ``.gz`` if ``gz``)."""

    def call(tmp: Path):
        name = "train-images-idx3-ubyte" + (".gz" if gz else "")
        (tmp / name).write_bytes(images)
        (tmp / "train-labels-idx1-ubyte").write_bytes(labels)
        return load_mnist(tmp)

    return call


def _mnist_images_folder(tmp: Path):
    (tmp / "train-images-idx3-ubyte").mkdir()
    (tmp / "train-labels-idx1-ubyte").write_bytes(GOOD_LABELS)
    return load_mnist(tmp)


def _mnist_without_labels(tmp: Path):
    (tmp / "train-images-idx3-ubyte").write_bytes(GOOD_IMAGES)
    return load_mnist(tmp)


_GZ = gzip.compress(GOOD_IMAGES)

MNIST = [
    ApiCase(
        "files-mnist-truncated-idx",
        _mnist(GOOD_IMAGES[:-5]),
        ["train-images-idx3-ubyte", "truncated", "2352 bytes, found 2347"],
    ),
    ApiCase(
        "files-mnist-trailing-bytes",
        _mnist(GOOD_IMAGES + b"\x00"),
        ["train-images-idx3-ubyte", "longer than its header"],
    ),
    ApiCase(
        "files-mnist-wrong-magic",
        _mnist(GOOD_LABELS),
        ["train-images-idx3-ubyte", "0x00000801", "expected 0x00000803"],
    ),
    ApiCase(
        "files-mnist-labels-with-image-magic",
        _mnist(labels=GOOD_IMAGES),
        ["train-labels-idx1-ubyte", "0x00000803", "expected 0x00000801"],
    ),
    ApiCase(
        "files-mnist-short-header",
        _mnist(GOOD_IMAGES[:10]),
        ["train-images-idx3-ubyte", "truncated IDX header"],
    ),
    ApiCase(
        "files-mnist-empty-file",
        _mnist(b""),
        ["train-images-idx3-ubyte", "too short for an IDX header"],
    ),
    ApiCase(
        "files-mnist-dims-not-28x28",
        _mnist(_idx(IDX_IMAGES_MAGIC, (3, 14, 56), bytes(3 * 784))),  # same byte count
        ["train-images-idx3-ubyte", "14x56", "28x28"],
    ),
    ApiCase(
        "files-mnist-huge-dims",
        _mnist(_idx(IDX_IMAGES_MAGIC, (2**32 - 1,) * 3, b"")),
        ["train-images-idx3-ubyte", "truncated", str((2**32 - 1) ** 3)],
    ),
    ApiCase(
        "files-mnist-zero-images",
        _mnist(_idx(IDX_IMAGES_MAGIC, (0, 28, 28), b""), _idx(IDX_LABELS_MAGIC, (0,), b"")),
        ["train-images-idx3-ubyte", "no images"],
    ),
    ApiCase(
        "files-mnist-label-count-mismatch",
        _mnist(labels=_idx(IDX_LABELS_MAGIC, (2,), bytes([0, 1]))),
        ["train-labels-idx1-ubyte", "2 labels for 3 images"],
    ),
    ApiCase(
        "files-mnist-label-10",
        _mnist(labels=_idx(IDX_LABELS_MAGIC, (3,), bytes([0, 10, 1]))),
        ["train-labels-idx1-ubyte", "label 10 at index 1", "0..9"],
    ),
    ApiCase(
        "files-mnist-gzip-corrupt-stream",
        _mnist(_GZ[:20] + bytes(b ^ 0x55 for b in _GZ[20:-8]) + _GZ[-8:], gz=True),
        ["train-images-idx3-ubyte.gz", "cannot be read as gzip"],
    ),
    ApiCase(
        "files-mnist-gzip-bad-crc",
        _mnist(_GZ[:-8] + bytes(8), gz=True),
        ["train-images-idx3-ubyte.gz", "CRC"],
    ),
    ApiCase(
        "files-mnist-gzip-truncated",
        _mnist(_GZ[:-30], gz=True),
        ["train-images-idx3-ubyte.gz", "cannot be read as gzip"],
    ),
    ApiCase(
        "files-mnist-gz-not-gzip",
        _mnist(GOOD_IMAGES, gz=True),
        ["train-images-idx3-ubyte.gz", "cannot be read as gzip"],
    ),
    ApiCase(
        "files-mnist-image-file-is-a-folder",
        _mnist_images_folder,
        ["train-images-idx3-ubyte", "found a folder"],
    ),
    ApiCase(
        "files-mnist-labels-missing",
        _mnist_without_labels,
        ["train-labels-idx1-ubyte"],
        error=FileNotFoundError,
    ),
]

# --------------------------------------------------------------------------- CIFAR-10

_ROWS = np.zeros((2, 3072), np.uint8)


class _RunsCommand:
    """Pickles as a call of os.system: loading it must not run the command."""

    def __reduce__(self):
        return (os.system, ("echo this must never run",))


def _cifar(content=None, *, raw: bytes | None = None, split: str = "train"):
    """A call writing five valid training batches and a test batch, then replacing
    ``data_batch_2`` by ``content`` pickled (or by the bytes ``raw``)."""

    def call(tmp: Path):
        for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
            batch = {b"batch_label": name.encode(), b"data": _ROWS, b"labels": [1, 2]}
            (tmp / name).write_bytes(pickle.dumps(batch, protocol=2))
        bad = tmp / "data_batch_2"
        bad.write_bytes(raw if raw is not None else pickle.dumps(content, protocol=2))
        return load_cifar10(tmp, split)

    return call


def _cifar_test_batch_folder(tmp: Path):
    (tmp / "test_batch").mkdir()
    return load_cifar10(tmp, "test")


def _cifar_missing_batch(tmp: Path):
    (tmp / "test_batch").write_bytes(pickle.dumps({b"data": _ROWS, b"labels": [1, 2]}))
    return load_cifar10(tmp, "train")


CIFAR = [
    ApiCase(
        "files-cifar-no-data-key",
        _cifar({b"labels": [1, 2]}),
        ["data_batch_2", "no 'data' entry", "'labels'"],
    ),
    ApiCase(
        "files-cifar-no-labels-key",
        _cifar({b"data": _ROWS}),
        ["data_batch_2", "no 'labels' entry"],
    ),
    ApiCase(
        "files-cifar-non-text-keys",
        _cifar({1: _ROWS, b"labels": [1, 2]}),  # sorting int and str keys used to fail
        ["data_batch_2", "no 'data' entry", "1"],
    ),
    ApiCase(
        "files-cifar-key-as-bytes-and-text",
        _cifar({b"data": _ROWS, "data": _ROWS, b"labels": [1, 2]}),
        ["data_batch_2", "'data'", "twice"],
    ),
    ApiCase(
        "files-cifar-wrong-width",
        _cifar({b"data": np.zeros((2, 1024), np.uint8), b"labels": [1, 2]}),
        ["data_batch_2", "(N, 3072)", "(2, 1024)"],
    ),
    ApiCase(
        "files-cifar-float-pixels",
        _cifar({b"data": np.zeros((2, 3072), np.float32), b"labels": [1, 2]}),
        ["data_batch_2", "uint8", "float32"],
    ),
    ApiCase(
        "files-cifar-data-a-list",
        _cifar({b"data": _ROWS.tolist(), b"labels": [1, 2]}),
        ["data_batch_2", "'data'", "list"],
    ),
    ApiCase(
        "files-cifar-label-10",
        _cifar({b"data": _ROWS, b"labels": [1, 10]}),
        ["data_batch_2", "label 10 at index 1", "0..9"],
    ),
    ApiCase(
        "files-cifar-float-labels",
        _cifar({b"data": _ROWS, b"labels": [1.0, 2.5]}),
        ["data_batch_2", "label 1.0 at index 0"],
    ),
    ApiCase(
        "files-cifar-bool-label",
        _cifar({b"data": _ROWS, b"labels": [1, True]}),
        ["data_batch_2", "label True at index 1"],
    ),
    ApiCase(
        "files-cifar-ragged-labels",
        _cifar({b"data": _ROWS, b"labels": [[1], [2, 3]]}),
        ["data_batch_2", "label [1] at index 0"],
    ),
    ApiCase(
        "files-cifar-label-count",
        _cifar({b"data": _ROWS, b"labels": [1]}),
        ["data_batch_2", "1 labels for 2 images"],
    ),
    ApiCase(
        "files-cifar-labels-none",
        _cifar({b"data": _ROWS, b"labels": None}),
        ["data_batch_2", "labels must be a list", "NoneType"],
    ),
    ApiCase("files-cifar-not-a-dict", _cifar([1, 2, 3]), ["data_batch_2", "dict", "list"]),
    ApiCase(
        "files-cifar-pickle-runs-a-command",
        _cifar({b"data": _RunsCommand(), b"labels": [1, 2]}),
        ["data_batch_2", "system", "not allowed"],
    ),
    ApiCase(
        "files-cifar-truncated-pickle",
        _cifar(raw=pickle.dumps({b"data": _ROWS, b"labels": [1, 2]}, protocol=2)[:100]),
        ["data_batch_2", "not a CIFAR-10 python batch"],
    ),
    ApiCase(
        "files-cifar-empty-file",
        _cifar(raw=b""),
        ["data_batch_2", "not a CIFAR-10 python batch", "EOFError"],
    ),
    ApiCase(
        "files-cifar-json-instead-of-pickle",
        _cifar(raw=b'{"data": []}'),
        ["data_batch_2", "not a CIFAR-10 python batch"],
    ),
    ApiCase(
        "files-cifar-batch-is-a-folder",
        _cifar_test_batch_folder,
        ["test_batch", "found a folder"],
    ),
    ApiCase(
        "files-cifar-missing-batch",
        _cifar_missing_batch,
        ["data_batch_1"],
        error=FileNotFoundError,
    ),
]

# ---------------------------------------------------- data folder, names, partitions


def _file_as_folder(tmp: Path):
    (tmp / "data.bin").write_bytes(b"")
    return load_mnist(tmp / "data.bin")


_IMAGES = torch.zeros(4, 1, 2, 2)
_LABELS = torch.zeros(4, dtype=torch.int64)


def _four_images() -> ImageDataset:
    return ImageDataset(images=_IMAGES, labels=_LABELS, num_classes=2, name="tiny")


ARGUMENTS = [
    ApiCase(
        "files-data-dir-missing",
        lambda tmp: load_femnist(tmp / "nowhere"),
        ["nowhere", "does not exist"],
        error=FileNotFoundError,
    ),
    ApiCase(
        "files-data-dir-is-a-file",
        _file_as_folder,
        ["data.bin", "not a folder"],
        error=NotADirectoryError,
    ),
    ApiCase(
        "files-data-dir-not-a-path",
        lambda tmp: load_cifar10(5),
        ["'data_dir'", "load_cifar10", "5"],
    ),
    ApiCase(
        "files-split-unknown",
        lambda tmp: load_mnist(tmp, "validation"),
        ["'split'", "load_mnist", "'validation'"],
    ),
    ApiCase(
        "files-file-data-set-without-folder",
        lambda tmp: load_dataset("femnist"),
        ["'femnist'", "data_dir"],
    ),
    ApiCase(
        "files-data-set-unknown",
        lambda tmp: load_dataset("imagenet", tmp),
        ["'name'", "'imagenet'", "'mnist'"],
    ),
    ApiCase(
        "files-partition-iid-more-clients-than-samples",
        lambda tmp: partition_iid(5, 6, seed=0),
        ["'num_clients'", "[1, 5]", "6"],
    ),
    ApiCase(
        "files-partition-dirichlet-alpha-zero",
        lambda tmp: partition_dirichlet([0, 1, 0, 1], 2, alpha=0.0, seed=0),
        ["'alpha'", "(0, inf)", "0.0"],
    ),
    ApiCase(
        "files-partition-dirichlet-alpha-negative",
        lambda tmp: partition_dirichlet([0, 1, 0, 1], 2, alpha=-1.0, seed=0),
        ["'alpha'", "-1.0"],
    ),
    ApiCase(
        "files-partition-dirichlet-alpha-inf",
        lambda tmp: partition_dirichlet([0, 1, 0, 1], 2, alpha=float("inf"), seed=0),
        ["'alpha'", "inf"],
    ),
    ApiCase(
        "files-partition-dirichlet-more-clients-than-samples",
        lambda tmp: partition_dirichlet([0, 1, 0, 1], 5, alpha=1.0, seed=0),
        ["'num_clients'", "[1, 4]", "5"],
    ),
    ApiCase(
        "files-partition-dirichlet-min-size-above-samples",
        lambda tmp: partition_dirichlet([0, 1, 0, 1], 1, alpha=1.0, seed=0, min_size=5),
        ["'min_size'", "[1, 4]", "5"],
    ),
    ApiCase(
        "files-partition-dirichlet-float-labels",
        lambda tmp: partition_dirichlet([0.0, 1.7, 2.9, 3.2], 2, alpha=1.0, seed=0),
        ["'labels'", "float64"],
    ),
    ApiCase(
        "files-partition-dirichlet-infeasible",
        # Every client must get one of 20 samples from classes that alpha = 0.01 puts
        # on a single client each: no draw in 1000 succeeds.
        lambda tmp: partition_dirichlet(np.arange(20) % 2, 20, alpha=0.01, seed=0),
        ["'alpha'", "20 clients", "0.01"],
    ),
    ApiCase(
        "files-partition-by-client-gap",
        lambda tmp: partition_by_client([0, 2, 2]),
        ["'client_ids'", "id 1"],
    ),
    ApiCase(
        "files-partition-by-client-huge-id",
        lambda tmp: partition_by_client([0, 10**12]),  # bincount would ask for 7 TiB
        ["'client_ids'", "1000000000000"],
    ),
    ApiCase(
        "files-partition-by-client-negative",
        lambda tmp: partition_by_client([-1, 0]),
        ["'client_ids'", "non-negative"],
    ),
    ApiCase(
        "files-subset-float-indices",
        lambda tmp: _four_images().subset([0.5, 1.7]),
        ["'indices'", "ImageDataset.subset", "float64"],
    ),
    ApiCase(
        "files-subset-boolean-mask",
        lambda tmp: _four_images().subset([True, False, True, False]),
        ["'indices'", "bool"],
    ),
    ApiCase(
        "files-subset-out-of-range",
        lambda tmp: _four_images().subset([0, 4]),
        ["'indices'", "[-4, 3]", "4"],
    ),
    ApiCase(
        "files-subset-empty",
        lambda tmp: _four_images().subset([]),
        ["'indices'", "non-empty"],
    ),
    ApiCase(
        "files-dataset-zero-height",
        lambda tmp: ImageDataset(
            images=torch.zeros(4, 1, 0, 2), labels=_LABELS, num_classes=2, name="tiny"
        ),
        ["'images'", "(4, 1, 0, 2)"],
    ),
    ApiCase(
        "files-dataset-negative-client-id",
        lambda tmp: ImageDataset(
            images=_IMAGES,
            labels=_LABELS,
            num_classes=2,
            name="tiny",
            client_ids=torch.tensor([0, 1, -1, 0]),
        ),
        ["'client_ids'", "-1"],
    ),
    ApiCase(
        "files-train-test-split-empty-side",
        lambda tmp: _four_images().train_test_split(0.1, seed=0),
        ["'test_fraction'", "empty split", "0.1"],
    ),
    ApiCase(
        "files-resize-values-0-255",
        lambda tmp: resize_images(torch.full((1, 1, 4, 4), 255.0), 2),
        ["'images'", "resize_images", "[0, 1]", "16 values"],
    ),
    ApiCase(
        "files-resize-numpy-array",
        lambda tmp: resize_images(np.zeros((1, 1, 4, 4), np.float32), 2),
        ["'images'", "resize_images", "ndarray"],
    ),
    ApiCase(
        "files-resize-larger-than-memory",
        lambda tmp: resize_images(torch.zeros(1, 1, 4, 4), 10**7),  # 400 TB of float32
        ["'size'", "resize_images", "GiB", "10000000"],
    ),
]

# ------------------------------------------------------------------ command line


def _write(files: dict[str, bytes | str]) -> Callable[[Path], None]:
    """A setup writing each file ``name: content`` into the test's folder."""

    def setup(tmp: Path) -> None:
        for name, content in files.items():
            (tmp / name).write_bytes(content.encode() if isinstance(content, str) else content)

    return setup


def _write_cifar_exploit(tmp: Path) -> None:
    for i in range(1, 6):
        content = {b"data": _RunsCommand() if i == 3 else _ROWS, b"labels": [1, 2]}
        (tmp / f"data_batch_{i}").write_bytes(pickle.dumps(content, protocol=2))


def _train(dataset: str, *extra: str) -> list[str]:
    """``pruneleak train`` on ``dataset`` read from the test's folder, results under it."""
    return ["train", "--dataset", dataset, "--data-dir", "{tmp}", "--out", "{tmp}/out", *extra]


COMMAND_LINE = [
    CliCase(
        "files-cli-train-femnist-float-labels",
        _train("femnist", "--partition", "natural"),
        ["bad.json", "user 'f0'", "label 1.7 at index 0"],
        setup=_write({"bad.json": _leaf_with("user_data", "f0", "y", [1.7, 2.9])}),
    ),
    CliCase(
        "files-cli-train-femnist-user-data-list",
        _train("femnist"),
        ["bad.json", "'user_data'", "list"],
        setup=_write({"bad.json": _leaf_with("user_data", [])}),
    ),
    CliCase(
        "files-cli-train-femnist-string-pixel",
        _train("femnist"),
        ["bad.json", "image 0, pixel 0", "'abc'"],
        setup=_write({"bad.json": _leaf_with("user_data", "f1", "x", [["abc"] + [0.0] * 783])}),
    ),
    CliCase(
        "files-cli-train-mnist-wrong-magic",
        _train("mnist"),
        ["train-images-idx3-ubyte", "magic"],
        setup=_write(
            {"train-images-idx3-ubyte": GOOD_LABELS, "train-labels-idx1-ubyte": GOOD_LABELS}
        ),
    ),
    CliCase(
        "files-cli-train-cifar-pickle-runs-a-command",
        _train("cifar10"),
        ["data_batch_3", "not allowed"],
        setup=_write_cifar_exploit,
    ),
    CliCase(
        "files-cli-train-data-dir-missing",
        ["train", "--dataset", "mnist", "--data-dir", "{tmp}/nowhere", "--out", "{tmp}/out"],
        ["{tmp}/nowhere", "does not exist"],
    ),
    CliCase(  # a NotADirectoryError: the command line's OSError branch
        "files-cli-train-data-dir-is-a-file",
        ["train", "--dataset", "mnist", "--data-dir", "{tmp}/a_file", "--out", "{tmp}/out"],
        ["{tmp}/a_file", "is not a folder"],
        setup=_write({"a_file": "not a folder"}),
    ),
]

CASES: list[ApiCase | CliCase] = [*FEMNIST, *MNIST, *CIFAR, *ARGUMENTS, *COMMAND_LINE]
