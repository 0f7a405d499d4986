"""Readers of the standard on-disk formats of the FL image benchmarks.

* MNIST: LeCun's IDX files (``train-images-idx3-ubyte`` ...), optionally gzipped. An IDX
  file starts with a big-endian magic number ``0x000008nn`` (two zero bytes, the type
  code 0x08 = unsigned byte, the number of dimensions ``nn``), then ``nn`` big-endian
  uint32 sizes, then the data: ``0x00000803`` for images ``(N, 28, 28)``,
  ``0x00000801`` for labels ``(N,)`` (http://yann.lecun.com/exdb/mnist/).
* CIFAR-10: the "python version" batches (``data_batch_1`` ... ``data_batch_5``,
  ``test_batch``), each a pickled dict with ``b"data"`` (``N x 3072`` uint8, channel
  planes R, G, B of 32x32 row-major) and ``b"labels"`` (N ints in 0..9)
  (https://www.cs.toronto.edu/~kriz/cifar.html). Pickles run code on load, so they are
  read with an unpickler that resolves only the few numpy globals an array needs.
* FEMNIST: LEAF's JSON (Caldas et al. 2019, arXiv:1812.01097): ``{"users": [...],
  "num_samples": [...], "user_data": {user: {"x": [[784 floats]], "y": [...]}}}``,
  one list entry per writer; the writer is the natural FL client.

Each reader returns numpy arrays and raises ``ValueError`` naming the file and what is
wrong with it (``FileNotFoundError`` naming the missing file).
"""

from __future__ import annotations

import gzip
import json
import os
import pickle
from pathlib import Path

import numpy as np

IDX_IMAGES_MAGIC = 0x00000803
IDX_LABELS_MAGIC = 0x00000801
CIFAR10_SHAPE = (3, 32, 32)
FEMNIST_SHAPE = (1, 28, 28)
FEMNIST_CLASSES = 62

# Globals a pickled numpy array may reference (numpy 1.x spelled _core as core).
_PICKLE_GLOBALS = {
    ("_codecs", "encode"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy._core.numeric", "_frombuffer"),
}


def find_file(directory: str | os.PathLike, names: list[str]) -> Path:
    """The first of ``names`` that exists in ``directory``; FileNotFoundError listing all."""
    directory = Path(directory)
    for name in names:
        if (directory / name).is_file():
            return directory / name
    raise FileNotFoundError(f"None of {', '.join(names)} was found in {directory}.")


def _read_bytes(path: Path) -> bytes:
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as fh:
                return fh.read()
        return path.read_bytes()
    except (OSError, EOFError) as err:
        if isinstance(err, FileNotFoundError):
            raise
        raise ValueError(
            f"{path}: cannot be read as {'gzip' if path.suffix == '.gz' else 'a file'} ({err})."
        ) from err


def read_idx(path: str | os.PathLike, *, magic: int) -> np.ndarray:
    """Read an unsigned-byte IDX file (``.gz`` is decompressed) whose magic must be ``magic``.

    Returns a uint8 array with the dimensions of the header. Raises ValueError for a
    wrong magic number, a header shorter than it announces, or a payload that is not
    exactly ``prod(dims)`` bytes (truncated or with trailing bytes).
    """
    path = Path(path)
    data = _read_bytes(path)
    if len(data) < 4:
        raise ValueError(f"{path}: too short for an IDX header ({len(data)} bytes).")
    found = int.from_bytes(data[:4], "big")
    if found != magic:
        raise ValueError(f"{path}: wrong IDX magic number 0x{found:08x}, expected 0x{magic:08x}.")
    ndim = magic & 0xFF
    header = 4 + 4 * ndim
    if len(data) < header:
        raise ValueError(
            f"{path}: truncated IDX header ({len(data)} bytes, {header} needed for {ndim} dims)."
        )
    dims = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    expected = int(np.prod(dims))
    payload = len(data) - header
    if payload != expected:
        state = "truncated" if payload < expected else "longer than its header says"
        raise ValueError(
            f"{path}: IDX data {state}: dims {dims} need {expected} bytes, found {payload}."
        )
    return np.frombuffer(data, dtype=np.uint8, offset=header).reshape(dims)


def read_mnist_split(directory: str | os.PathLike, split: str) -> tuple[np.ndarray, np.ndarray]:
    """MNIST images ``(N, 28, 28)`` uint8 and labels ``(N,)`` of ``split`` (train / test).

    Looks in ``directory`` and in ``directory/MNIST/raw`` (torchvision's layout) for the
    standard names, plain or ``.gz``.
    """
    prefix = {"train": "train", "test": "t10k"}[split]
    directory = Path(directory)
    if not any(directory.glob(f"{prefix}-*")) and (directory / "MNIST" / "raw").is_dir():
        directory = directory / "MNIST" / "raw"
    images_path = find_file(
        directory, [f"{prefix}-images-idx3-ubyte", f"{prefix}-images-idx3-ubyte.gz"]
    )
    labels_path = find_file(
        directory, [f"{prefix}-labels-idx1-ubyte", f"{prefix}-labels-idx1-ubyte.gz"]
    )
    images = read_idx(images_path, magic=IDX_IMAGES_MAGIC)
    labels = read_idx(labels_path, magic=IDX_LABELS_MAGIC)
    if images.shape[0] != labels.shape[0] or images.shape[0] == 0:
        raise ValueError(
            f"{labels_path}: {labels.shape[0]} labels for {images.shape[0]} images in "
            f"{images_path.name}; they must match and be non-zero."
        )
    if labels.max() > 9:
        raise ValueError(f"{labels_path}: label {int(labels.max())} outside 0..9.")
    return images, labels


class _ArrayUnpickler(pickle.Unpickler):
    """Unpickler that builds numpy arrays, dicts, lists and scalars, and nothing else."""

    def find_class(self, module: str, name: str):
        canonical = module.replace("numpy.core.", "numpy._core.", 1)
        if (canonical, name) not in _PICKLE_GLOBALS:
            raise pickle.UnpicklingError(f"global {module}.{name} is not allowed in a data batch")
        return super().find_class(canonical, name)


def read_cifar10_batch(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """One CIFAR-10 python batch: images ``(N, 3, 32, 32)`` uint8 and labels ``(N,)`` int64."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            batch = _ArrayUnpickler(fh, encoding="bytes").load()
    except FileNotFoundError:
        raise
    except Exception as err:  # a damaged pickle can fail in many ways; report them all alike
        raise ValueError(
            f"{path}: not a CIFAR-10 python batch ({type(err).__name__}: {err})."
        ) from err
    if not isinstance(batch, dict):
        raise ValueError(f"{path}: a CIFAR-10 batch is a dict; found {type(batch).__name__}.")
    batch = {k.decode() if isinstance(k, bytes) else k: v for k, v in batch.items()}
    for key in ("data", "labels"):
        if key not in batch:
            raise ValueError(f"{path}: the batch has no {key!r} entry (keys: {sorted(batch)}).")
    data, labels = batch["data"], np.asarray(batch["labels"])
    width = int(np.prod(CIFAR10_SHAPE))
    if (
        not isinstance(data, np.ndarray)
        or data.dtype != np.uint8
        or data.ndim != 2
        or data.shape[1] != width
    ):
        raise ValueError(
            f"{path}: 'data' must be a uint8 array of shape (N, {width}); found "
            f"{type(data).__name__} {getattr(data, 'dtype', '')} {getattr(data, 'shape', '')}."
        )
    if labels.shape != (data.shape[0],) or not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(
            f"{path}: 'labels' must hold {data.shape[0]} integers; found shape {labels.shape}."
        )
    if data.shape[0] == 0 or labels.min() < 0 or labels.max() > 9:
        raise ValueError(f"{path}: empty batch or labels outside 0..9.")
    return data.reshape(-1, *CIFAR10_SHAPE), labels.astype(np.int64)


def read_cifar10_split(directory: str | os.PathLike, split: str) -> tuple[np.ndarray, np.ndarray]:
    """CIFAR-10 ``split`` (train = ``data_batch_1..5``, test = ``test_batch``), looking in
    ``directory`` or its ``cifar-10-batches-py`` subfolder (the archive's layout)."""
    directory = Path(directory)
    if (directory / "cifar-10-batches-py").is_dir():
        directory = directory / "cifar-10-batches-py"
    names = [f"data_batch_{i}" for i in range(1, 6)] if split == "train" else ["test_batch"]
    parts = [read_cifar10_batch(find_file(directory, [name])) for name in names]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def read_leaf_json(path: str | os.PathLike) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """One LEAF FEMNIST JSON file.

    Returns ``(users, images, labels, writer)``: the writers in file order, float32
    images ``(N, 1, 28, 28)`` in [0, 1], int64 labels ``(N,)`` in 0..61, and int64
    ``writer`` ``(N,)`` indexing ``users``. Raises ValueError when a key is missing,
    ``users`` and ``num_samples`` differ in length, a writer's ``x``/``y`` counts differ
    from ``num_samples``, or a value is out of range.
    """
    path = Path(path)
    try:
        with open(path, encoding="utf-8") as fh:
            blob = json.load(fh)
    except FileNotFoundError:
        raise
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{path}: not a JSON file ({err}).") from err
    if not isinstance(blob, dict) or not {"users", "num_samples", "user_data"} <= set(blob):
        raise ValueError(f"{path}: a LEAF file needs 'users', 'num_samples' and 'user_data'.")
    users, counts, user_data = blob["users"], blob["num_samples"], blob["user_data"]
    if len(users) != len(counts):
        raise ValueError(f"{path}: {len(users)} users but {len(counts)} entries in 'num_samples'.")
    pixels = int(np.prod(FEMNIST_SHAPE))
    images, labels, writer = [], [], []
    for index, (user, count) in enumerate(zip(users, counts, strict=True)):
        record = user_data.get(user)
        if not isinstance(record, dict) or "x" not in record or "y" not in record:
            raise ValueError(f"{path}: user {user!r} has no 'x'/'y' entry in 'user_data'.")
        if not len(record["x"]) == len(record["y"]) == count:
            raise ValueError(
                f"{path}: user {user!r} has {len(record['x'])} x and {len(record['y'])} y "
                f"but num_samples says {count}."
            )
        x = np.asarray(record["x"], dtype=np.float32).reshape(count, -1)
        if count and x.shape[1] != pixels:
            raise ValueError(
                f"{path}: user {user!r} has images of {x.shape[1]} values, not {pixels}."
            )
        images.append(x)
        labels.append(np.asarray(record["y"], dtype=np.int64).reshape(count))
        writer.append(np.full(count, index, dtype=np.int64))
    images_arr = np.concatenate(images) if images else np.zeros((0, pixels), np.float32)
    labels_arr = np.concatenate(labels) if labels else np.zeros(0, np.int64)
    if images_arr.shape[0] == 0:
        raise ValueError(f"{path}: the file holds no samples.")
    if not np.isfinite(images_arr).all() or images_arr.min() < 0 or images_arr.max() > 1:
        raise ValueError(f"{path}: pixel values must lie in [0, 1].")
    if labels_arr.min() < 0 or labels_arr.max() >= FEMNIST_CLASSES:
        raise ValueError(f"{path}: labels must lie in 0..{FEMNIST_CLASSES - 1}.")
    return list(users), images_arr.reshape(-1, *FEMNIST_SHAPE), labels_arr, np.concatenate(writer)


def read_femnist_split(
    directory: str | os.PathLike, split: str
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """All LEAF JSON files of ``split``: ``directory/<split>/*.json`` when that folder
    exists (LEAF's ``data/train`` / ``data/test``), else ``directory/*.json`` (train only).

    Writers keep one client id across files (first appearance, files in name order).
    Returns ``(users, images, labels, client_ids)`` as :func:`read_leaf_json`.
    """
    directory = Path(directory)
    folder = directory / split if (directory / split).is_dir() else directory
    if folder == directory and split != "train":
        raise FileNotFoundError(f"No {split}/ folder of LEAF JSON files in {directory}.")
    files = sorted(folder.glob("*.json"))
    if not files:
        raise FileNotFoundError(f"No LEAF JSON file (*.json) in {folder}.")
    users: list[str] = []
    ids: dict[str, int] = {}
    images, labels, clients = [], [], []
    for path in files:
        file_users, x, y, writer = read_leaf_json(path)
        for user in file_users:
            if user not in ids:
                ids[user] = len(users)
                users.append(user)
        remap = np.array([ids[u] for u in file_users], dtype=np.int64)
        images.append(x)
        labels.append(y)
        clients.append(remap[writer])
    return users, np.concatenate(images), np.concatenate(labels), np.concatenate(clients)
