"""A user's own candidate images from files: a folder of images by class, or an ``.npz``.

Both are read without executing code (``np.load(allow_pickle=False)``; images decoded by
matplotlib, which reads PNG itself and JPEG through Pillow).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

#: File endings of the images of a class folder.
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")


def _as_chw(image: np.ndarray, path: Path) -> np.ndarray:
    """``(C, H, W)`` float in [0, 1] from matplotlib's ``(H, W)`` / ``(H, W, 3|4)``."""
    if image.dtype == np.uint8:
        image = image.astype(np.float32) / 255
    if image.ndim == 2:
        return image[None].astype(np.float32)
    if image.ndim == 3 and image.shape[2] in (3, 4):
        return np.moveaxis(image[..., :3], 2, 0).astype(np.float32)
    raise ValueError(f"{path}: an image must be grey or RGB(A). Got shape {image.shape} instead.")


def read_image_folder(directory: str | os.PathLike) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """``(images, labels, classes)`` from ``directory/<class>/<image>.png|jpg``: one
    sub-folder per class (labels by sorted folder name), every image of one shape,
    ``images`` float32 ``(N, C, H, W)`` in [0, 1]."""
    import matplotlib.image

    root = Path(directory)
    classes = sorted(p.name for p in root.iterdir() if p.is_dir())
    if not classes:
        raise ValueError(f"{root}: a folder of images needs one sub-folder per class. Got none.")
    images, labels = [], []
    for label, name in enumerate(classes):
        files = sorted(p for p in (root / name).iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        for path in files:
            images.append(_as_chw(np.asarray(matplotlib.image.imread(path)), path))
            labels.append(label)
    if len(images) < 2:
        raise ValueError(f"{root}: at least 2 images are needed. Got {len(images)}.")
    shapes = {x.shape for x in images}
    if len(shapes) != 1:
        raise ValueError(f"{root}: every image must have one shape. Got {sorted(shapes)}.")
    return np.stack(images), np.asarray(labels, dtype=np.int64), classes


def read_npz_images(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """``(images, labels)``, the arrays named ``images`` and ``labels`` of an ``.npz``."""
    with np.load(path, allow_pickle=False) as data:
        missing = {"images", "labels"} - set(data.files)
        if missing:
            raise ValueError(
                f"{path}: an .npz of candidates needs arrays 'images' and 'labels'. Got "
                f"{sorted(data.files)} instead."
            )
        return data["images"], data["labels"]
