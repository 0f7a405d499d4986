"""Reconstructed images kept beside a study's results, one ``.npz`` file per job.

A study's records (:class:`sims.store.results.ResultStore`) hold numbers only; the images an
attack produced are written next to them, under ``<out>/reconstructions/<key>.npz`` (the
job's store key, whose ``/`` become sub-folders), so that the figures of originals against
reconstructions (:mod:`sims.plots.reconstructions`) can be redrawn without rerunning the
attacks, and a resumed study finds the images of its finished jobs. Each file holds
``originals`` and ``reconstructions``, both ``(N, C, H, W)`` in [0, 1], reconstruction
``k`` matched to original ``k``, as float16: half the bytes of float32, and its rounding
error (at most 2**-12 on [0, 1]) moves a PSNR of 40 dB by less than 0.01 dB. Files are
written atomically (a temporary file renamed over the target), so a killed study leaves
either the whole file or none.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch

#: Sub-folder of a study's output folder that holds the files.
RECONSTRUCTIONS_DIR = "reconstructions"


def reconstruction_path(directory: str | os.PathLike, key: str) -> Path:
    """``directory / (key + ".npz")`` for a store key; ValueError for a key that is
    empty, absolute, has an empty or "." part or climbs out of ``directory`` (``..``)."""
    parts = key.split("/") if isinstance(key, str) else [""]
    if any(part in ("", ".", "..") for part in parts):
        raise ValueError(
            "The 'key' parameter of reconstruction_path must be a relative store key "
            f"without '.' or '..' parts. Got {key!r} instead."
        )
    return Path(directory, *parts[:-1], f"{parts[-1]}.npz")


def _images(name: str, value) -> np.ndarray:
    array = value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
    if array.ndim != 4 or array.shape[1] not in (1, 3) or array.shape[0] < 1:
        raise ValueError(
            f"The '{name}' parameter of save_reconstructions must have shape (N, C, H, W) "
            f"with N >= 1 and C in {{1, 3}}. Got shape {array.shape} instead."
        )
    if not np.issubdtype(array.dtype, np.floating) or not ((array >= 0) & (array <= 1)).all():
        raise ValueError(
            f"The '{name}' parameter of save_reconstructions must hold floats in [0, 1]. "
            f"Got dtype {array.dtype}, range [{array.min()}, {array.max()}] instead."
        )
    return array.astype(np.float16)


def save_reconstructions(
    directory: str | os.PathLike, key: str, originals, reconstructions
) -> Path:
    """Write ``originals`` and ``reconstructions`` (arrays or tensors of one shape ``(N, C,
    H, W)``, C 1 or 3, values in [0, 1]) to :func:`reconstruction_path` atomically; return
    the path."""
    first, second = _images("originals", originals), _images("reconstructions", reconstructions)
    if first.shape != second.shape:
        raise ValueError(
            "The 'reconstructions' parameter of save_reconstructions must have the shape of "
            f"'originals', {first.shape}. Got {second.shape} instead."
        )
    path = reconstruction_path(directory, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temporary, "wb") as fh:
        np.savez(fh, originals=first, reconstructions=second)
    os.replace(temporary, path)
    return path


def load_reconstructions(
    directory: str | os.PathLike, key: str
) -> tuple[np.ndarray, np.ndarray] | None:
    """``(originals, reconstructions)`` as float32 from :func:`reconstruction_path`, or
    None when the job wrote no file there (it ran before images were kept, or elsewhere).

    The file is read with ``allow_pickle=False``: an object array (whose unpickling could
    run code) is refused unread. A file that is not a regular file, not an ``.npz``
    archive, or does not hold the two arrays :func:`save_reconstructions` writes is a
    ValueError naming the file.
    """
    path = reconstruction_path(directory, key)
    if not os.path.lexists(path):
        return None
    if not path.is_file():  # a folder, a FIFO or device open() would block on, a bad link
        raise _damaged(path, "it is not a regular file")
    try:
        with np.load(path, allow_pickle=False) as data:
            members = {name: data[name] for name in data.files}
    except Exception as err:  # not a zip, truncated, an object array: numpy and zipfile
        # raise BadZipFile, EOFError, OSError, ValueError...; report them all alike
        raise _damaged(path, f"it cannot be read ({type(err).__name__}: {err})") from None
    if sorted(members) != ["originals", "reconstructions"]:
        raise _damaged(path, f"it holds {sorted(members)}, not ['originals', 'reconstructions']")
    arrays = members["originals"], members["reconstructions"]
    for name, array in zip(("originals", "reconstructions"), arrays, strict=True):
        if array.dtype != np.float16 or array.ndim != 4 or array.shape[0] < 1:
            raise _damaged(
                path, f"its {name} are {array.dtype} {array.shape}, not float16 (N, C, H, W)"
            )
        if not ((array >= 0) & (array <= 1)).all():
            raise _damaged(path, f"its {name} hold values outside [0, 1] (or NaN)")
    if arrays[0].shape != arrays[1].shape:
        raise _damaged(path, f"its arrays differ in shape: {arrays[0].shape}, {arrays[1].shape}")
    return arrays[0].astype(np.float32), arrays[1].astype(np.float32)


def _damaged(path: Path, why: str) -> ValueError:
    return ValueError(f"The reconstructions file {path} is damaged: {why}.")
