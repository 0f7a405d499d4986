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

Each reader returns numpy arrays and raises ``ValueError`` naming the file, the record
(writer, sample index, key) and what was expected; a missing file or folder raises
``FileNotFoundError`` and a file where a folder belongs ``NotADirectoryError``, both
naming the path. Nothing is cast, clipped or merged silently: a label must be a JSON
or pickled integer, a pixel a number in its range, a key unique.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import pickle
import reprlib
import zlib
from itertools import chain
from pathlib import Path

import numpy as np

from pruneleak.bounds.validation import check_choice

IDX_IMAGES_MAGIC = 0x00000803
IDX_LABELS_MAGIC = 0x00000801
MNIST_SHAPE = (28, 28)
CIFAR10_SHAPE = (3, 32, 32)
CIFAR10_CLASSES = 10
FEMNIST_SHAPE = (1, 28, 28)
FEMNIST_CLASSES = 62
SPLITS = ("train", "test")
# What each reader looks for in its data folder, for the messages of data_folder.
MNIST_CONTENTS = (
    "train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and "
    "t10k-labels-idx1-ubyte (or .gz)"
)
CIFAR10_CONTENTS = "data_batch_1 ... data_batch_5 and test_batch (the python version)"
FEMNIST_CONTENTS = "LEAF JSON files (train/*.json and test/*.json)"

# Globals a pickled numpy array may reference (numpy 1.x spelled _core as core).
_PICKLE_GLOBALS = {
    ("_codecs", "encode"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy._core.numeric", "_frombuffer"),
}


def _shown(value) -> str:
    """``repr(value)`` shortened for a message (a 400-digit integer, a long list)."""
    return reprlib.repr(value)


def data_folder(directory, *, func: str, contents: str) -> Path:
    """``directory`` as a Path to an existing folder: ValueError when it is not a path,
    FileNotFoundError when nothing is there, NotADirectoryError when it is a file. The
    messages say what ``func`` reads from the folder (``contents``)."""
    if not isinstance(directory, str | os.PathLike):
        raise ValueError(
            f"The 'data_dir' parameter of {func} must be a path to a folder. "
            f"Got {_shown(directory)} instead."
        )
    directory = Path(directory)
    if not directory.exists():
        raise FileNotFoundError(
            f"The data folder {directory} does not exist; {func} reads {contents} from it."
        )
    if not directory.is_dir():
        raise NotADirectoryError(
            f"{directory} is not a folder; {func} reads {contents} from a folder."
        )
    return directory


def find_file(directory: str | os.PathLike, names: list[str]) -> Path:
    """The first of ``names`` that exists in ``directory``; FileNotFoundError listing all,
    ValueError when the first one present is not a regular file (a folder, say)."""
    directory = Path(directory)
    for name in names:
        path = directory / name
        if path.is_file():
            return path
        if path.exists():
            kind = "a folder" if path.is_dir() else "not a regular file"
            raise ValueError(f"{path}: expected the data file {name}, found {kind}.")
    raise FileNotFoundError(f"None of {', '.join(names)} was found in {directory}.")


def _read_bytes(path: Path) -> bytes:
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as fh:
                return fh.read()
        return path.read_bytes()
    except FileNotFoundError:
        raise
    except (OSError, EOFError, zlib.error) as err:
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
    expected = math.prod(dims)  # exact: numpy's int64 product wraps for 2**32-sized dims
    payload = len(data) - header
    if payload != expected:
        state = "truncated" if payload < expected else "longer than its header says"
        raise ValueError(
            f"{path}: IDX data {state}: dims {dims} need {expected} bytes, found {payload}."
        )
    return np.frombuffer(data, dtype=np.uint8, offset=header).reshape(dims)


def _check_labels(labels, *, where: str, count: int, num_classes: int) -> np.ndarray:
    """``labels`` (a list of Python ints or a 1-D integer array) as int64 ``(count,)``.

    ``where`` starts every message (the file and the record). A label that is not an
    integer (1.7, "3", true) or lies outside ``0..num_classes - 1`` is refused with its
    index and value, never cast or truncated.
    """
    allowed = f"an integer in 0..{num_classes - 1}"
    if isinstance(labels, np.ndarray):
        if labels.ndim != 1 or not np.issubdtype(labels.dtype, np.integer):
            raise ValueError(
                f"{where}: labels must be a 1-D integer array; found dtype {labels.dtype} "
                f"and shape {labels.shape}."
            )
        labels = labels.tolist()
    if not isinstance(labels, list):
        raise ValueError(f"{where}: labels must be a list; found {type(labels).__name__}.")
    if len(labels) != count:
        raise ValueError(f"{where}: {len(labels)} labels for {count} images.")
    if not set(map(type, labels)) <= {int}:
        index = next(i for i, v in enumerate(labels) if type(v) is not int)
        raise ValueError(
            f"{where}: label {_shown(labels[index])} at index {index} is not {allowed}."
        )
    if count and (min(labels) < 0 or max(labels) >= num_classes):
        index = next(i for i, v in enumerate(labels) if not 0 <= v < num_classes)
        raise ValueError(
            f"{where}: label {_shown(labels[index])} at index {index} is not {allowed}."
        )
    return np.asarray(labels, dtype=np.int64)


def read_mnist_split(
    directory: str | os.PathLike, split: str, *, layout: str = "MNIST"
) -> tuple[np.ndarray, np.ndarray]:
    """MNIST images ``(N, 28, 28)`` uint8 and labels ``(N,)`` of ``split`` (train / test).

    Looks in ``directory`` and in ``directory/<layout>/raw`` (torchvision's layout:
    ``"MNIST"``, or ``"FashionMNIST"`` for Fashion-MNIST, which has MNIST's file names,
    format and shapes) for the standard names, plain or ``.gz``.
    """
    check_choice("split", split, func="read_mnist_split", choices=SPLITS)
    directory = data_folder(directory, func="read_mnist_split", contents=MNIST_CONTENTS)
    prefix = {"train": "train", "test": "t10k"}[split]
    if not any(directory.glob(f"{prefix}-*")) and (directory / layout / "raw").is_dir():
        directory = directory / layout / "raw"
    images_path = find_file(
        directory, [f"{prefix}-images-idx3-ubyte", f"{prefix}-images-idx3-ubyte.gz"]
    )
    labels_path = find_file(
        directory, [f"{prefix}-labels-idx1-ubyte", f"{prefix}-labels-idx1-ubyte.gz"]
    )
    images = read_idx(images_path, magic=IDX_IMAGES_MAGIC)
    labels = read_idx(labels_path, magic=IDX_LABELS_MAGIC)
    if images.shape[1:] != MNIST_SHAPE:
        raise ValueError(
            f"{images_path}: images of {images.shape[1]}x{images.shape[2]} pixels; "
            f"MNIST images are {MNIST_SHAPE[0]}x{MNIST_SHAPE[1]}."
        )
    if images.shape[0] == 0:
        raise ValueError(f"{images_path}: the file holds no images.")
    if images.shape[0] != labels.shape[0]:
        raise ValueError(
            f"{labels_path}: {labels.shape[0]} labels for {images.shape[0]} images in "
            f"{images_path.name}; they must match."
        )
    return images, _check_labels(labels, where=str(labels_path), count=len(images), num_classes=10)


class _ArrayUnpickler(pickle.Unpickler):
    """Unpickler that builds numpy arrays, dicts, lists and scalars, and nothing else."""

    def find_class(self, module: str, name: str):
        canonical = module.replace("numpy.core.", "numpy._core.", 1)
        if (canonical, name) not in _PICKLE_GLOBALS:
            raise pickle.UnpicklingError(f"global {module}.{name} is not allowed in a data batch")
        return super().find_class(canonical, name)


def _batch_entries(path: Path, batch: dict) -> dict:
    """The batch with keys as text (``b"data"`` -> ``"data"``); a key present both as
    bytes and as text is refused rather than one copy silently dropped."""
    entries = {}
    for key, value in batch.items():
        text = key.decode("latin-1") if isinstance(key, bytes) else key
        if text in entries:
            raise ValueError(f"{path}: the batch holds the key {text!r} twice (bytes and text).")
        entries[text] = value
    return entries


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
    batch = _batch_entries(path, batch)
    for key in ("data", "labels"):
        if key not in batch:
            keys = ", ".join(sorted(map(repr, batch)))
            raise ValueError(f"{path}: the batch has no {key!r} entry (keys: {keys}).")
    data = batch["data"]
    width = math.prod(CIFAR10_SHAPE)
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
    if data.shape[0] == 0:
        raise ValueError(f"{path}: the batch holds no images.")
    labels = _check_labels(
        batch["labels"],
        where=f"{path}: 'labels'",
        count=data.shape[0],
        num_classes=CIFAR10_CLASSES,
    )
    return data.reshape(-1, *CIFAR10_SHAPE), labels


def read_cifar10_split(directory: str | os.PathLike, split: str) -> tuple[np.ndarray, np.ndarray]:
    """CIFAR-10 ``split`` (train = ``data_batch_1..5``, test = ``test_batch``), looking in
    ``directory`` or its ``cifar-10-batches-py`` subfolder (the archive's layout)."""
    check_choice("split", split, func="read_cifar10_split", choices=SPLITS)
    directory = data_folder(directory, func="read_cifar10_split", contents=CIFAR10_CONTENTS)
    if (directory / "cifar-10-batches-py").is_dir():
        directory = directory / "cifar-10-batches-py"
    names = [f"data_batch_{i}" for i in range(1, 6)] if split == "train" else ["test_batch"]
    parts = [read_cifar10_batch(find_file(directory, [name])) for name in names]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _load_json(path: Path):
    """The parsed JSON of ``path``; ValueError naming the file for anything that is not
    one JSON document of unique keys (bad UTF-8, a syntax error, runaway nesting)."""

    def unique_keys(pairs: list[tuple[str, object]]) -> dict:
        mapping = {}
        for key, value in pairs:
            if key in mapping:
                raise ValueError(f"{path}: the key {key!r} appears twice in one JSON object.")
            mapping[key] = value
        return mapping

    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh, object_pairs_hook=unique_keys)
    except FileNotFoundError:
        raise
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise ValueError(f"{path}: not a JSON file ({type(err).__name__}: {err}).") from err


def _leaf_index(path: Path, blob) -> tuple[list[str], list[int], dict]:
    """``users``, ``num_samples`` and ``user_data`` of a LEAF file, checked to agree."""
    keys = ("users", "num_samples", "user_data")
    if not isinstance(blob, dict) or not set(keys) <= set(blob):
        raise ValueError(f"{path}: a LEAF file is a JSON object with keys {', '.join(keys)}.")
    users, counts, user_data = (blob[key] for key in keys)
    for key, value, kind in (
        (keys[0], users, list),
        (keys[1], counts, list),
        (keys[2], user_data, dict),
    ):
        if not isinstance(value, kind):
            raise ValueError(
                f"{path}: {key!r} must be a JSON {'array' if kind is list else 'object'}; "
                f"found {type(value).__name__}."
            )
    for index, user in enumerate(users):
        if not isinstance(user, str):
            raise ValueError(f"{path}: users[{index}] is {_shown(user)}; writer ids are strings.")
    if len(set(users)) != len(users):
        duplicate = next(u for i, u in enumerate(users) if u in users[:i])
        raise ValueError(f"{path}: the writer {duplicate!r} is listed twice in 'users'.")
    if len(users) != len(counts):
        raise ValueError(f"{path}: {len(users)} users but {len(counts)} entries in 'num_samples'.")
    for index, count in enumerate(counts):
        if type(count) is not int or count < 0:
            raise ValueError(
                f"{path}: num_samples[{index}] is {_shown(count)}; it must be an integer >= 0."
            )
    unlisted = sorted(set(user_data) - set(users))
    if unlisted:
        raise ValueError(f"{path}: 'user_data' holds the writer {unlisted[0]!r}, not in 'users'.")
    return users, counts, user_data


def _leaf_pixels(where: str, rows: list) -> np.ndarray:
    """The images ``x`` of one writer (lists of 784 numbers in [0, 1]) as float32
    ``(len(rows), 784)``; the range is checked before the cast to float32, which could
    round a value just above 1 down to 1."""
    pixels = math.prod(FEMNIST_SHAPE)
    if set(map(type, rows)) - {list}:
        index = next(i for i, row in enumerate(rows) if type(row) is not list)
        raise ValueError(
            f"{where}: image {index} is a {type(rows[index]).__name__}, not a list of "
            f"{pixels} pixels."
        )
    if set(map(len, rows)) - {pixels}:
        index = next(i for i, row in enumerate(rows) if len(row) != pixels)
        raise ValueError(f"{where}: image {index} has {len(rows[index])} values, not {pixels}.")
    images = None
    try:
        if set(map(type, chain.from_iterable(rows))) <= {float, int}:
            images = np.array(rows, dtype=np.float64).reshape(len(rows), pixels)
    except OverflowError:  # an integer pixel beyond the float range
        pass
    if images is not None and ((images >= 0) & (images <= 1)).all():  # NaN fails both
        return images.astype(np.float32)
    index, column = next(
        (i, j) for i, row in enumerate(rows) for j, value in enumerate(row) if not _is_pixel(value)
    )
    raise ValueError(
        f"{where}: image {index}, pixel {column} is {_shown(rows[index][column])}; pixels "
        f"must be numbers in [0, 1]."
    )


def _is_pixel(value) -> bool:
    """A JSON number in [0, 1] (not a string, a boolean or null; NaN fails the range)."""
    return type(value) in (float, int) and 0 <= value <= 1


def read_leaf_json(path: str | os.PathLike) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """One LEAF FEMNIST JSON file.

    Returns ``(users, images, labels, writer)``: the writers in file order, float32
    images ``(N, 1, 28, 28)`` in [0, 1], int64 labels ``(N,)`` in 0..61, and int64
    ``writer`` ``(N,)`` indexing ``users``. Raises ValueError naming the file, the writer
    and the sample when the structure differs from LEAF's (a missing or mistyped key, a
    writer listed twice or absent from ``users``, ``x``/``y`` counts that differ from
    ``num_samples``), a pixel is not a number in [0, 1] or a label not an integer in
    0..61 (1.7 is refused, not truncated).
    """
    path = Path(path)
    users, counts, user_data = _leaf_index(path, _load_json(path))
    images, labels, writer = [], [], []
    for index, (user, count) in enumerate(zip(users, counts, strict=True)):
        where = f"{path}: user {_shown(user)}"
        record = user_data.get(user)
        if not isinstance(record, dict) or "x" not in record or "y" not in record:
            raise ValueError(f"{where} has no 'x'/'y' entry in 'user_data'.")
        x, y = record["x"], record["y"]
        if not isinstance(x, list) or not isinstance(y, list):
            raise ValueError(f"{where}: 'x' and 'y' must be JSON arrays.")
        if not len(x) == len(y) == count:
            raise ValueError(f"{where} has {len(x)} x and {len(y)} y but num_samples says {count}.")
        images.append(_leaf_pixels(where, x))
        labels.append(_check_labels(y, where=where, count=count, num_classes=FEMNIST_CLASSES))
        writer.append(np.full(count, index, dtype=np.int64))
    if sum(counts) == 0:
        raise ValueError(f"{path}: the file holds no samples.")
    images_arr = np.concatenate(images).reshape(-1, *FEMNIST_SHAPE)
    return list(users), images_arr, np.concatenate(labels), np.concatenate(writer)


def read_femnist_split(
    directory: str | os.PathLike, split: str
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """All LEAF JSON files of ``split``: ``directory/<split>/*.json`` when that folder
    exists (LEAF's ``data/train`` / ``data/test``), else ``directory/*.json`` (train only).

    Writers keep one client id across files (first appearance, files in name order); a
    writer with no sample in the split gets none, so every id ``0..len(users) - 1`` has
    samples. Returns ``(users, images, labels, client_ids)`` as :func:`read_leaf_json`.
    """
    check_choice("split", split, func="read_femnist_split", choices=SPLITS)
    directory = data_folder(directory, func="read_femnist_split", contents=FEMNIST_CONTENTS)
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
        sizes = np.bincount(writer, minlength=len(file_users))
        for user, size in zip(file_users, sizes, strict=True):
            if size and user not in ids:
                ids[user] = len(users)
                users.append(user)
        remap = np.array([ids.get(u, -1) for u in file_users], dtype=np.int64)  # -1: no sample
        images.append(x)
        labels.append(y)
        clients.append(remap[writer])
    return users, np.concatenate(images), np.concatenate(labels), np.concatenate(clients)
