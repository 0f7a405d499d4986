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
from pruneleak.sims.plots.style import wrap
from pruneleak.sims.store.reconstructions import load_reconstructions

#: Width and height of one tile, in inches (eight columns and their labels fit the
#: printed width, :data:`sims.plots.style.TEXT_WIDTH`).
TILE_INCHES = 0.7


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
    axes[0, 0].set_ylabel("original", rotation=0, ha="right", va="center", fontsize=9)
    for r, (label, images) in enumerate(rows.items(), start=1):
        scores = psnr(originals[:columns], images[:columns], per_image=True)
        for k in range(columns):
            _tile(axes[r, k], images[k])
            axes[r, k].set_xlabel(f"{scores[k]:.1f} dB", fontsize=8, labelpad=1)
        axes[r, 0].set_ylabel(label, rotation=0, ha="right", va="center", fontsize=8)
    if title:
        fig.suptitle(wrap(title, 80), fontsize=10)
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


#: Side of one tile of :func:`plot_reconstruction_table`, in inches (an 8x8 digit reads).
TABLE_TILE = 0.42
#: Short names of a sweep job's fields in the table's labels.
FIELD_NAMES = {
    "pruning.scheme": "scheme",
    "pruning.p": "p",
    "fed.batch_size": "B",
    "fed.rounds": "T",
    "fed.local_epochs": "E",
    "model.name": "model",
    "model.width": "width",
    "attack": "attack",
}


def _field_text(path: str, value) -> str:
    if path == "attack":
        return str(value).upper()
    return f"{FIELD_NAMES.get(path, path.rpartition('.')[2])}={value}"


def job_reconstruction_table(jobs: list, directory) -> list[tuple] | None:
    """The table of a sweep panel's ``jobs`` (:class:`sims.sweep.job.AttackJob`, in order)
    from the files :func:`sims.sweep.runner.run_job` kept in ``directory``, for
    :func:`plot_reconstruction_table`: one ``(row label, column label, originals,
    reconstructions)`` entry per job with its file. The row is the job's pruning scheme
    (or, when every job has the same one, the first field in which the jobs differ), the
    column the other fields in which they differ (``"B=2"``, ``"p=0.3, GI"``). Every job
    is kept, whatever images it attacked (a batch of B = 4, four rounds' uploads); None
    when no job kept its files."""
    from pruneleak.sims.sweep.job import job_key

    fields = [job.as_fields() for job in jobs]
    varying = [k for k in fields[0] if k != "data_dir" and len({repr(f[k]) for f in fields}) > 1]
    row_field = "pruning.scheme" if "pruning.scheme" in varying else (varying or [None])[0]
    column_fields = [k for k in varying if k != row_field]
    entries = []
    for job, values in zip(jobs, fields, strict=True):
        found = load_reconstructions(directory, job_key(job))
        if found is None:
            continue
        row = str(values[row_field]) if row_field else "job"
        column = ", ".join(_field_text(k, values[k]) for k in column_fields)
        entries.append((row, column, *found))
    return entries or None


def _pack(widths: list[float], capacity: float, gap: float) -> list[list[int]]:
    """Consecutive groups of ``widths`` whose width (with ``gap`` between them) stays
    within ``capacity`` where it can, as few groups as that allows and balanced: the
    fewest blocks of the greedy packing, then the smallest capacity giving that many."""

    def greedy(limit: float) -> list[list[int]]:
        blocks, used = [[]], 0.0
        for i, w in enumerate(widths):
            extra = w if not blocks[-1] else gap + w
            if blocks[-1] and used + extra > limit:
                blocks.append([i])
                used = w
            else:
                blocks[-1].append(i)
                used += extra
        return blocks

    count = len(greedy(capacity))
    limit = max(max(widths), (sum(widths) + gap * (len(widths) - count)) / count)
    while len(greedy(limit)) > count:
        limit += 0.05
    return greedy(limit)


def plot_reconstruction_table(
    entries: list[tuple],
    *,
    max_images: int = 8,
    title: str | None = None,
    width: float | None = None,
):
    """Originals and reconstructions as a table: one row per row label of ``entries``
    (``(row label, column label, originals, reconstructions)``, e.g. from
    :func:`job_reconstruction_table`), one column group per column label, each with its
    own originals on top (so settings that attacked other images, a larger batch or more
    rounds, have their place) and the PSNR (dB) of each reconstruction under it. At most
    ``max_images`` images per group. Groups that do not fit ``width`` inches (default
    :data:`sims.plots.style.TEXT_WIDTH`) wrap into further blocks below, each repeating
    the row labels. Entries of one column label that attacked other images than its
    first entry get a column group of their own. Each tile's axes has the gid
    ``"original/<column>/<k>"`` or ``"reconstruction/<row>/<column>/<k>"``. Returns the
    figure."""
    import matplotlib.pyplot as plt

    from pruneleak.sims.plots.style import TEXT_WIDTH, use_style

    max_images = check_int("max_images", max_images, func="plot_reconstruction_table", low=1)
    if not entries:
        raise ValueError(
            "The 'entries' parameter of plot_reconstruction_table must hold at least one "
            "entry. Got none instead."
        )
    width = TEXT_WIDTH if width is None else width
    groups: dict[str, dict] = {}  # column label -> originals, {row: reconstructions}
    rows: list[str] = []
    for row, column, originals, reconstructions in entries:
        originals = _check_images("originals", originals)
        reconstructions = _check_images("reconstructions", reconstructions, originals.shape)
        label, n = column, 1
        while label in groups and not (
            groups[label]["originals"].shape == originals.shape
            and np.array_equal(groups[label]["originals"], originals)
        ):
            n += 1
            label = f"{column} (images {n})"
        group = groups.setdefault(label, {"originals": originals, "rows": {}})
        group["rows"][row] = reconstructions
        if row not in rows:
            rows.append(row)
    use_style()
    tile, pitch, gap = TABLE_TILE, TABLE_TILE + 0.05, 0.2
    label_width = max(0.6, 0.075 * max(len(r) for r in [*rows, "original"]) + 0.15)
    labels = list(groups)
    sizes = [min(len(groups[g]["originals"]), max_images) for g in labels]
    blocks = _pack([n * pitch for n in sizes], width - label_width - 0.05, gap)
    header, row_height, block_gap, title_height = 0.3, tile + 0.22, 0.25, 0.45 if title else 0.1
    block_height = header + (tile + 0.12) + len(rows) * row_height
    height = title_height + len(blocks) * block_height + (len(blocks) - 1) * block_gap
    fig = plt.figure(figsize=(width, height))

    def tile_axes(x: float, y: float, gid: str):
        ax = fig.add_axes((x / width, 1 - (y + tile) / height, tile / width, tile / height))
        ax.set_gid(gid)
        return ax

    top = title_height
    for block in blocks:
        x = label_width
        y_originals = top + header
        fig.text((label_width - 0.1) / width, 1 - (y_originals + tile / 2) / height,
                 "original", ha="right", va="center", fontsize=9)  # fmt: skip
        for r, row in enumerate(rows):
            y = y_originals + tile + 0.12 + r * row_height
            fig.text((label_width - 0.1) / width, 1 - (y + tile / 2) / height, row,
                     ha="right", va="center", fontsize=9)  # fmt: skip
        for g in block:
            label, n = labels[g], sizes[g]
            group = groups[label]
            fig.text((x + n * pitch / 2) / width, 1 - (top + header - 0.06) / height, label,
                     ha="center", va="bottom", fontsize=9)  # fmt: skip
            for k in range(n):
                _tile(tile_axes(x + k * pitch, y_originals, f"original/{label}/{k}"),
                      group["originals"][k])  # fmt: skip
            for r, row in enumerate(rows):
                images = group["rows"].get(row)
                if images is None:
                    continue
                y = y_originals + tile + 0.12 + r * row_height
                scores = psnr(group["originals"][:n], images[:n], per_image=True)
                for k in range(n):
                    ax = tile_axes(x + k * pitch, y, f"reconstruction/{row}/{label}/{k}")
                    _tile(ax, images[k])
                    ax.set_xlabel(f"{scores[k]:.1f}", fontsize=8, labelpad=1)
            x += n * pitch + gap
        top += block_height + block_gap
    if title:
        fig.text(0.5, 1 - 0.12 / height, title, ha="center", va="top", fontsize=10)
    return fig
