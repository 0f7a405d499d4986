"""Originals against reconstructions, one row per setting (PriPrune, arXiv:2310.19958,
appendix Figs. 6-9: the client's images on top, the attack's reconstruction at each
pruning rate below), every reconstructed tile annotated with its PSNR.

The images come from the files a study keeps beside its results
(:mod:`sims.store.reconstructions`); :func:`shared_original_rows` picks the settings that
attacked the same images, so that every column shows one original and its
reconstructions.
"""

from __future__ import annotations

import numpy as np

from pruneleak.bounds.validation import check_int
from pruneleak.estimators.image import psnr
from pruneleak.sims.store.reconstructions import load_reconstructions

#: Width and height of one tile, in inches.
TILE_INCHES = 0.9


def _check_images(name: str, images, shape=None) -> np.ndarray:
    array = np.asarray(images, dtype=np.float32)
    if array.ndim != 4 or array.shape[1] not in (1, 3) or array.shape[0] < 1:
        raise ValueError(
            f"The '{name}' parameter of plot_reconstruction_grid must have shape (N, C, H, W) "
            f"with N >= 1 and C in {{1, 3}}. Got shape {array.shape} instead."
        )
    if shape is not None and array.shape != shape:
        raise ValueError(
            f"The '{name}' parameter of plot_reconstruction_grid must have the originals' "
            f"shape {shape}. Got {array.shape} instead."
        )
    return array


def _tile(ax, image: np.ndarray) -> None:
    """One ``(C, H, W)`` image in [0, 1]: grey (C = 1) or RGB (C = 3), without axes."""
    if image.shape[0] == 1:
        ax.imshow(image[0], cmap="gray", vmin=0.0, vmax=1.0)
    else:
        ax.imshow(np.clip(image.transpose(1, 2, 0), 0.0, 1.0))
    ax.set_xticks([])
    ax.set_yticks([])


def plot_reconstruction_grid(
    originals, reconstructions_by_setting: dict, *, max_images: int = 8, title: str | None = None
):
    """A grid of images: the top row ``originals`` (``(N, C, H, W)`` in [0, 1], C = 1 grey
    or 3 RGB), then one row per setting of ``reconstructions_by_setting`` (label ->
    reconstructions of the originals' shape, reconstruction ``k`` of original ``k``), in
    its order, labelled on the left; under each reconstruction its PSNR against the
    original above it (:func:`estimators.image.psnr`, dB on [0, 1]). At most
    ``max_images`` columns (the first originals). Returns the matplotlib figure."""
    import matplotlib.pyplot as plt

    max_images = check_int("max_images", max_images, func="plot_reconstruction_grid", low=1)
    originals = _check_images("originals", originals)
    if not reconstructions_by_setting:
        raise ValueError(
            "The 'reconstructions_by_setting' parameter of plot_reconstruction_grid must "
            "hold at least one setting. Got none instead."
        )
    rows = {
        str(label): _check_images("reconstructions_by_setting", images, originals.shape)
        for label, images in reconstructions_by_setting.items()
    }
    columns = min(len(originals), max_images)
    fig, axes = plt.subplots(
        1 + len(rows),
        columns,
        figsize=(TILE_INCHES * (columns + 1.5), TILE_INCHES * 1.25 * (1 + len(rows))),
        squeeze=False,
        layout="constrained",  # keeps the title clear of the top row at any height
    )
    for k in range(columns):
        _tile(axes[0, k], originals[k])
    axes[0, 0].set_ylabel("original", rotation=0, ha="right", va="center")
    for r, (label, images) in enumerate(rows.items(), start=1):
        scores = psnr(originals[:columns], images[:columns], per_image=True)
        for k in range(columns):
            _tile(axes[r, k], images[k])
            axes[r, k].set_xlabel(f"{scores[k]:.1f} dB", fontsize="x-small", labelpad=1)
        axes[r, 0].set_ylabel(label, rotation=0, ha="right", va="center", fontsize="small")
    if title:
        fig.suptitle(title, fontsize="medium")
    return fig


def shared_original_rows(
    entries: list[tuple[str, np.ndarray, np.ndarray]],
) -> tuple[np.ndarray, dict[str, np.ndarray]] | None:
    """From ``(label, originals, reconstructions)`` entries in figure order, the first
    entry's originals and the reconstructions of every entry that attacked exactly those
    images (same shape and values; others, e.g. another batch size, are left out), by
    label; None without entries."""
    if not entries:
        return None
    originals = entries[0][1]
    rows = {
        label: reconstructions
        for label, images, reconstructions in entries
        if images.shape == originals.shape and np.array_equal(images, originals)
    }
    return originals, rows


def job_reconstruction_rows(
    jobs: list, directory
) -> tuple[np.ndarray, dict[str, np.ndarray]] | None:
    """The grid of a sweep panel's ``jobs`` (:class:`sims.sweep.job.AttackJob`, in
    order) from the files :func:`sims.sweep.runner.run_job` kept in ``directory``: the
    first kept job's attacked images and the reconstructions of every job that attacked
    the same ones (:func:`shared_original_rows`), each labelled by the fields in which
    the panel's jobs differ (``"scheme=snip, p=0.9"``); None when no job kept its files."""
    from pruneleak.sims.sweep.job import job_key

    fields = [job.as_fields() for job in jobs]
    varying = [k for k in fields[0] if k != "data_dir" and len({repr(f[k]) for f in fields}) > 1]
    labelled = [
        (", ".join(f"{k.rpartition('.')[2]}={values[k]}" for k in varying) or "job", job_key(job))
        for job, values in zip(jobs, fields, strict=True)
    ]
    return kept_rows(directory, labelled)


def kept_rows(directory, labelled_keys) -> tuple[np.ndarray, dict[str, np.ndarray]] | None:
    """The grid of a study's kept files (:mod:`sims.store.reconstructions`): for each
    ``(label, key)`` of ``labelled_keys`` in order, the file under ``key`` in
    ``directory`` if there is one, reduced to the settings that attacked the first one's
    images (:func:`shared_original_rows`); None when none was kept."""
    entries = []
    for label, key in labelled_keys:
        found = load_reconstructions(directory, key)
        if found is not None:
            entries.append((label, *found))
    return shared_original_rows(entries)
