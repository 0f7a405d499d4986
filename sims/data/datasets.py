"""Image data sets: the embedded digits and loaders of the standard file formats.

An :class:`ImageDataset` holds the whole data set on CPU as float32 images in [0, 1]
(shape ``(N, C, H, W)``) and int64 labels. Loaders are registered by name in
``_LOADERS``; a new data set is one loader function plus one registry line. Built in:
the embedded scikit-learn ``digits`` and, from files in their standard formats
(:mod:`sims.data.formats`), ``mnist`` (IDX), ``cifar10`` (python batches) and ``femnist``
(LEAF JSON, with its writers as ``client_ids``); :func:`load_train_test` uses the
official test split where one exists. Client splits are in :mod:`sims.data.partition`;
:func:`resize_images` is the one resize every study uses.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import torch

from pruneleak.bounds.validation import check_choice, check_int, check_real
from pruneleak.sims.core.extras import require
from pruneleak.sims.core.memory import device_memory_bytes
from pruneleak.sims.data import formats

logger = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class ImageDataset:
    """A labelled image data set held in memory on CPU.

    Attributes:
        images: float32 tensor ``(N, C, H, W)`` with values in [0, 1].
        labels: int64 tensor ``(N,)`` with values in ``[0, num_classes)``.
        num_classes: number of classes.
        name: registry name of the data set (e.g. ``"digits"``).
        client_ids: optional int64 tensor ``(N,)``, the natural partition by writer
            (FEMNIST); ``None`` when the data set has none.
    """

    images: torch.Tensor
    labels: torch.Tensor
    num_classes: int
    name: str
    client_ids: torch.Tensor | None = None

    def __post_init__(self) -> None:
        func = "ImageDataset"
        check_int("num_classes", self.num_classes, func=func, low=1)
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(
                f"The 'name' parameter of {func} must be a non-empty string. "
                f"Got {self.name!r} instead."
            )
        images, labels = self.images, self.labels
        if not isinstance(images, torch.Tensor) or images.dtype != torch.float32:
            raise ValueError(
                f"The 'images' parameter of {func} must be a float32 torch.Tensor. "
                f"Got {type(images).__name__} {getattr(images, 'dtype', '')} instead."
            )
        if images.ndim != 4 or min(images.shape) < 1:
            raise ValueError(
                f"The 'images' parameter of {func} must have shape (N, C, H, W), every size "
                f">= 1. "
                f"Got shape {tuple(images.shape)} instead."
            )
        if images.device.type != "cpu":
            raise ValueError(
                f"The 'images' parameter of {func} must live on CPU. Got {images.device} instead."
            )
        if not bool(torch.isfinite(images).all()) or images.min() < 0 or images.max() > 1:
            raise ValueError(
                f"The 'images' parameter of {func} must have finite values in [0, 1]. "
                f"Got range [{float(images.min())}, {float(images.max())}] instead."
            )
        n = images.shape[0]
        self._check_index_vector("labels", labels, n)
        if labels.min() < 0 or labels.max() >= self.num_classes:
            raise ValueError(
                f"The 'labels' parameter of {func} must be in [0, {self.num_classes - 1}]. "
                f"Got range [{int(labels.min())}, {int(labels.max())}] instead."
            )
        if self.client_ids is not None:
            self._check_index_vector("client_ids", self.client_ids, n)
            if self.client_ids.min() < 0:
                raise ValueError(
                    f"The 'client_ids' parameter of {func} must be >= 0. "
                    f"Got {int(self.client_ids.min())} instead."
                )

    @staticmethod
    def _check_index_vector(name: str, value, n: int) -> None:
        if not isinstance(value, torch.Tensor) or value.dtype != torch.int64:
            raise ValueError(
                f"The '{name}' parameter of ImageDataset must be an int64 torch.Tensor. "
                f"Got {type(value).__name__} {getattr(value, 'dtype', '')} instead."
            )
        if tuple(value.shape) != (n,):
            raise ValueError(
                f"The '{name}' parameter of ImageDataset must have shape ({n},). "
                f"Got shape {tuple(value.shape)} instead."
            )

    def __len__(self) -> int:
        return int(self.images.shape[0])

    @property
    def image_shape(self) -> tuple[int, int, int]:
        """``(C, H, W)`` of one image."""
        c, h, w = self.images.shape[1:]
        return int(c), int(h), int(w)

    def subset(self, indices) -> ImageDataset:
        """The samples at ``indices`` (a non-empty 1-D integer sequence in ``[-N, N)``,
        order and repeats kept). Floats and booleans are refused, not cast to positions."""
        func = "ImageDataset.subset"
        idx = np.asarray(indices)
        if idx.ndim != 1 or idx.size == 0 or not np.issubdtype(idx.dtype, np.integer):
            raise ValueError(
                f"The 'indices' parameter of {func} must be a non-empty 1-D integer sequence. "
                f"Got shape {idx.shape} and dtype {idx.dtype} instead."
            )
        n = len(self)
        if idx.min() < -n or idx.max() >= n:
            raise ValueError(
                f"The 'indices' parameter of {func} must be in [{-n}, {n - 1}] for {n} "
                f"samples. Got range [{int(idx.min())}, {int(idx.max())}] instead."
            )
        idx = torch.from_numpy(idx.astype(np.int64))
        return ImageDataset(
            images=self.images[idx],
            labels=self.labels[idx],
            num_classes=self.num_classes,
            name=self.name,
            client_ids=None if self.client_ids is None else self.client_ids[idx],
        )

    def resized(self, size: int) -> ImageDataset:
        """The same samples with images resized to ``size x size``
        (:func:`resize_images`: bilinear, antialiased); itself when they have that size."""
        images = resize_images(self.images, size)
        if images is self.images:
            return self
        return replace(self, images=images)

    def train_test_split(
        self, test_fraction: float, seed: int
    ) -> tuple[ImageDataset, ImageDataset]:
        """Stratified split: in each class ``round(test_fraction * n_class)`` samples go to test.

        Raises ValueError when either side would be empty.
        """
        func = "ImageDataset.train_test_split"
        test_fraction = check_real(
            "test_fraction",
            test_fraction,
            func=func,
            low=0,
            high=1,
            low_inclusive=False,
            high_inclusive=False,
        )
        rng = np.random.default_rng(check_int("seed", seed, func=func, low=0))
        labels = self.labels.numpy()
        test_parts = []
        for k in np.unique(labels):
            members = rng.permutation(np.flatnonzero(labels == k))
            test_parts.append(members[: round(test_fraction * members.size)])
        test_idx = np.sort(np.concatenate(test_parts))
        train_idx = np.setdiff1d(np.arange(len(self)), test_idx)
        if test_idx.size == 0 or train_idx.size == 0:
            raise ValueError(
                f"The 'test_fraction' parameter of {func} leaves an empty split for "
                f"{len(self)} samples. Got {test_fraction} instead."
            )
        return self.subset(train_idx), self.subset(test_idx)


def load_digits_dataset() -> ImageDataset:
    """scikit-learn's 8x8 handwritten digits (1,797 images, 10 classes) as 1x8x8 in [0, 1].

    The pixels are integers 0..16 in sklearn; they are divided by 16. The data ship with
    scikit-learn, so no download happens.
    """
    from sklearn.datasets import load_digits

    bunch = load_digits()
    images = torch.as_tensor(bunch.data, dtype=torch.float32).reshape(-1, 1, 8, 8) / 16.0
    labels = torch.as_tensor(bunch.target, dtype=torch.int64)
    return ImageDataset(images=images, labels=labels, num_classes=10, name="digits")


def _skimage_data(func: str):
    """``skimage.data``, or a :class:`~sims.core.extras.MissingExtraError` (one line on the
    command line) naming the extra to install: the faces and patches ship inside
    scikit-image's wheel, which the plain install of pruneleak does not require (it is the
    ``faces`` extra)."""
    require("skimage", purpose=f"{func} (the images shipped with scikit-image)")
    return importlib.import_module("skimage.data")


def load_faces() -> ImageDataset:
    """scikit-image's 200-image subset of Labeled Faces in the Wild
    (``skimage.data.lfw_subset``, shipped inside its wheel: no download) as 1x25x25 grey
    images in [0, 1]: the first 100 are faces (label 1), the other 100 non-face crops of
    the same photographs (label 0)."""
    faces = _skimage_data("load_faces").lfw_subset()
    images = torch.as_tensor(faces, dtype=torch.float32).unsqueeze(1)
    labels = torch.cat([torch.ones(100, dtype=torch.int64), torch.zeros(100, dtype=torch.int64)])
    return ImageDataset(images=images, labels=labels, num_classes=2, name="faces")


#: The RGB photographs shipped inside scikit-image's wheel that :func:`load_patches` cuts,
#: in label order.
PATCH_PHOTOGRAPHS = ("astronaut", "chelsea", "coffee", "rocket")
PATCH_SIZE = 32


def load_patches(seed: int = 0) -> ImageDataset:
    """CIFAR-like 3x32x32 colour patches of scikit-image's bundled photographs (no download).

    Photograph ``k`` of :data:`PATCH_PHOTOGRAPHS` (label ``k``) is cut into the
    non-overlapping 32x32 tiles of a grid whose origin ``(row, column)``, each in
    ``[0, 31]``, is drawn from ``numpy.random.default_rng([seed, k])``; every tile that
    fits entirely in the photograph is kept, row by row. Pixels in [0, 1] (/255).
    """
    check_int("seed", seed, func="load_patches", low=0)
    data = _skimage_data("load_patches")
    images, labels = [], []
    for label, name in enumerate(PATCH_PHOTOGRAPHS):
        photo = getattr(data, name)()
        top, left = np.random.default_rng([seed, label]).integers(0, PATCH_SIZE, size=2)
        rows = (photo.shape[0] - top) // PATCH_SIZE
        columns = (photo.shape[1] - left) // PATCH_SIZE
        grid = photo[top : top + rows * PATCH_SIZE, left : left + columns * PATCH_SIZE]
        tiles = grid.reshape(rows, PATCH_SIZE, columns, PATCH_SIZE, 3).transpose(0, 2, 4, 1, 3)
        images.append(tiles.reshape(rows * columns, 3, PATCH_SIZE, PATCH_SIZE))
        labels.append(np.full(rows * columns, label, dtype=np.int64))
    return ImageDataset(
        images=_uint8_images(np.concatenate(images)),
        labels=torch.from_numpy(np.concatenate(labels)),
        num_classes=len(PATCH_PHOTOGRAPHS),
        name="patches",
    )


def _uint8_images(images: np.ndarray) -> torch.Tensor:
    """uint8 ``(N, [C,] H, W)`` -> float32 ``(N, C, H, W)`` in [0, 1] (divided by 255)."""
    tensor = torch.from_numpy(images.astype(np.float32) / np.float32(255))
    return tensor.unsqueeze(1) if tensor.ndim == 3 else tensor


def _load_idx_images(name: str, layout: str, data_dir, split: str, func: str) -> ImageDataset:
    check_choice("split", split, func=func, choices=formats.SPLITS)
    formats.data_folder(data_dir, func=func, contents=formats.MNIST_CONTENTS)
    images, labels = formats.read_mnist_split(data_dir, split, layout=layout)
    return ImageDataset(
        images=_uint8_images(images),
        labels=torch.from_numpy(labels),
        num_classes=10,
        name=name,
    )


def load_mnist(data_dir: str | os.PathLike, split: str = "train") -> ImageDataset:
    """MNIST from its IDX files in ``data_dir`` (see :func:`sims.data.formats.read_mnist_split`):
    1x28x28 images scaled to [0, 1] by /255, 10 classes; ``split`` is "train" (60,000) or
    "test" (10,000)."""
    return _load_idx_images("mnist", "MNIST", data_dir, split, "load_mnist")


def load_fashion_mnist(data_dir: str | os.PathLike, split: str = "train") -> ImageDataset:
    """Fashion-MNIST (Xiao et al. 2017; Fed-LTP's private data) from its IDX files in
    ``data_dir`` or ``data_dir/FashionMNIST/raw``: MNIST's names, format and shapes, 10
    classes of clothing; ``split`` is "train" (60,000) or "test" (10,000)."""
    return _load_idx_images("fashion_mnist", "FashionMNIST", data_dir, split, "load_fashion_mnist")


def load_cifar10(data_dir: str | os.PathLike, split: str = "train") -> ImageDataset:
    """CIFAR-10 from its python batches in ``data_dir`` (see
    :func:`sims.data.formats.read_cifar10_split`): 3x32x32 images scaled to [0, 1] by /255,
    10 classes; ``split`` is "train" (50,000) or "test" (10,000)."""
    check_choice("split", split, func="load_cifar10", choices=formats.SPLITS)
    formats.data_folder(data_dir, func="load_cifar10", contents=formats.CIFAR10_CONTENTS)
    images, labels = formats.read_cifar10_split(data_dir, split)
    return ImageDataset(
        images=_uint8_images(images),
        labels=torch.from_numpy(labels),
        num_classes=10,
        name="cifar10",
    )


def load_femnist(data_dir: str | os.PathLike, split: str = "train") -> ImageDataset:
    """LEAF FEMNIST from its JSON files (see :func:`sims.data.formats.read_femnist_split`):
    1x28x28 images as stored by LEAF (values in [0, 1]), 62 classes, and ``client_ids``
    keeping LEAF's writer-to-client partition (PriPrune uses LEAF's 193-writer sample,
    Experimental Setup)."""
    check_choice("split", split, func="load_femnist", choices=formats.SPLITS)
    formats.data_folder(data_dir, func="load_femnist", contents=formats.FEMNIST_CONTENTS)
    users, images, labels, client_ids = formats.read_femnist_split(data_dir, split)
    logger.info("FEMNIST %s: %d samples from %d writers", split, len(labels), len(users))
    return ImageDataset(
        images=torch.from_numpy(images),
        labels=torch.from_numpy(labels),
        num_classes=formats.FEMNIST_CLASSES,
        name="femnist",
        client_ids=torch.from_numpy(client_ids),
    )


def _file_loader(
    name: str, loader: Callable[[str | os.PathLike, str], ImageDataset], split: str
) -> Callable[[str | os.PathLike | None], ImageDataset]:
    def load(data_dir: str | os.PathLike | None) -> ImageDataset:
        if data_dir is None:
            raise ValueError(f"The data set {name!r} is read from files: pass its data_dir.")
        return loader(data_dir, split)

    return load


_FILE_LOADERS = {
    "mnist": load_mnist,
    "fashion_mnist": load_fashion_mnist,
    "cifar10": load_cifar10,
    "femnist": load_femnist,
}

# name -> loader(data_dir) of the training data. Loaders that need no files ignore data_dir.
_LOADERS: dict[str, Callable[[str | os.PathLike | None], ImageDataset]] = {
    "digits": lambda data_dir: load_digits_dataset(),
    "faces": lambda data_dir: load_faces(),
    "patches": lambda data_dir: load_patches(),
    **{name: _file_loader(name, f, "train") for name, f in _FILE_LOADERS.items()},
}
# name -> loader(data_dir) of the official test split, for the data sets that have one.
_TEST_LOADERS: dict[str, Callable[[str | os.PathLike | None], ImageDataset]] = {
    name: _file_loader(name, f, "test") for name, f in _FILE_LOADERS.items()
}


def file_datasets() -> tuple[str, ...]:
    """Names of :func:`available_datasets` read from files (they need a ``data_dir``)."""
    return tuple(_FILE_LOADERS)


def available_datasets() -> tuple[str, ...]:
    """Names accepted by :func:`load_dataset`."""
    return tuple(_LOADERS)


def load_dataset(name: str, data_dir: str | os.PathLike | None = None) -> ImageDataset:
    """Load the (training) data set registered as ``name`` (see :func:`available_datasets`)."""
    check_choice("name", name, func="load_dataset", choices=available_datasets())
    return _LOADERS[name](data_dir)


def load_train_test(
    name: str,
    data_dir: str | os.PathLike | None = None,
    *,
    test_fraction: float = 0.2,
    seed: int = 0,
) -> tuple[ImageDataset, ImageDataset]:
    """Training and test data of ``name``: the official test split when the data set has
    one (MNIST, CIFAR-10, LEAF FEMNIST), else a stratified
    :meth:`ImageDataset.train_test_split` with ``test_fraction`` and ``seed`` (digits)."""
    train = load_dataset(name, data_dir)
    if name in _TEST_LOADERS:
        return train, _TEST_LOADERS[name](data_dir)
    return train.train_test_split(test_fraction, seed)


def resize_images(images: torch.Tensor, size: int) -> torch.Tensor:
    """``(N, C, H, W)`` float images in [0, 1] resized to ``(N, C, size, size)``: bilinear
    with antialiasing (which only matters when shrinking), clamped back to [0, 1] (the
    interpolation overshoots by rounding only; inputs outside [0, 1] are refused, not
    clipped). Returns the input itself when it already has that size. A result larger
    than the machine's memory is refused before it is allocated."""
    func = "resize_images"
    size = check_int("size", size, func=func, low=1)
    if not isinstance(images, torch.Tensor) or not images.is_floating_point() or images.ndim != 4:
        raise ValueError(
            f"The 'images' parameter of {func} must be a floating-point torch.Tensor of shape "
            f"(N, C, H, W). Got {type(images).__name__} {getattr(images, 'dtype', '')} "
            f"{tuple(getattr(images, 'shape', ()))} instead."
        )
    outside = int((~((images >= 0) & (images <= 1))).sum())  # NaN counts as outside
    if outside:
        raise ValueError(
            f"The 'images' parameter of {func} must have values in [0, 1]. Got {outside} "
            f"values outside it (NaN included) instead."
        )
    if tuple(images.shape[-2:]) == (size, size):
        return images
    needed = images.shape[0] * images.shape[1] * size * size * images.element_size()
    available = device_memory_bytes(images.device)
    if available is not None and needed > available:
        raise ValueError(
            f"The 'size' parameter of {func} asks for {needed / 2**30:.3g} GiB of images "
            f"({images.shape[0]} x {images.shape[1]} x {size} x {size}), more than the "
            f"{available / 2**30:.3g} GiB of memory of this machine. Got {size} instead."
        )
    resized = torch.nn.functional.interpolate(
        images, size=(size, size), mode="bilinear", antialias=True, align_corners=False
    )
    return resized.clamp(0.0, 1.0)
