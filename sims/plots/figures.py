"""Where figures go and how notebooks are executed (``pruneleak figures``).

Figures are written as PNG and PDF into a directory the caller names; without one, into
``$PRUNELEAK_FIG_DIR`` when set, else ``pruneleak-out/figures`` under the current
directory. Nothing here points into a checkout: the committed ``paper_figs/`` is written
only when a caller asks for it (``make figures`` sets ``--out paper_figs``), so running a
notebook or a command never overwrites a tracked file. Notebooks read their scale from
``$PRUNELEAK_SCALE`` (``quick`` or ``paper``).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from pruneleak.bounds.validation import check_choice
from pruneleak.sims.core.outputs import OUTPUT_ROOT, output_dir
from pruneleak.sims.core.scale import SCALES

logger = logging.getLogger(__name__)

DEFAULT_FIGURES_DIR = OUTPUT_ROOT / "figures"


def figures_dir() -> Path:
    """``$PRUNELEAK_FIG_DIR`` if set, else ``pruneleak-out/figures``; created if missing."""
    return output_dir(os.environ.get("PRUNELEAK_FIG_DIR") or DEFAULT_FIGURES_DIR)


def save_figure(fig, name: str, *, directory: str | os.PathLike | None = None) -> list[Path]:
    """Save a matplotlib figure as ``<name>.png`` and ``<name>.pdf``; return both paths.

    ``directory`` defaults to :func:`figures_dir` (which is how notebooks, run by
    :func:`run_notebook`, write into the folder their caller chose).
    """
    directory = figures_dir() if directory is None else output_dir(directory)
    paths = [directory / f"{name}.{ext}" for ext in ("png", "pdf")]
    for path in paths:
        fig.savefig(path, dpi=150, bbox_inches="tight")
    logger.info("Wrote %s", ", ".join(str(p) for p in paths))
    return paths


def notebook_paths(directory: str | os.PathLike) -> list[Path]:
    """The notebooks (``*.ipynb``) directly in ``directory``, sorted by name."""
    return sorted(Path(directory).glob("*.ipynb"))


def run_notebook(
    path: str | os.PathLike,
    *,
    scale: str = "quick",
    figure_dir: str | os.PathLike | None = None,
    timeout: float | None = None,
) -> None:
    """Execute a notebook in a fresh kernel (outputs are not written back).

    The kernel runs in the notebook's folder with ``$PRUNELEAK_SCALE=scale`` and, when
    ``figure_dir`` is given, ``$PRUNELEAK_FIG_DIR`` set to it (made absolute, since the
    kernel's working directory is the notebook's). This process's environment is left
    as it was. Raises ``nbclient.exceptions.CellExecutionError`` naming the failing cell.

    ``timeout``: seconds allowed to each cell; None (default) sets no per-cell limit,
    since a loaded host can slow one cell past any fixed limit (a paper-scale cell runs
    for hours): whoever runs the notebook bounds the whole run if it must.
    """
    import nbclient
    import nbformat

    check_choice("scale", scale, func="run_notebook", choices=SCALES)
    path = Path(path)
    env = {**os.environ, "PRUNELEAK_SCALE": scale}
    if figure_dir is not None:
        env["PRUNELEAK_FIG_DIR"] = str(Path(figure_dir).resolve())
    notebook = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    ).execute(env=env)
