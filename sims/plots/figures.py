"""Where figures go and how notebooks are executed (``pruneleak figures``).

Figures are written as PNG and PDF under ``paper_figs/`` of the checkout (or under
``$PRUNELEAK_FIG_DIR`` when set, which the test suite uses to keep the tree clean).
Notebooks read their scale from ``$PRUNELEAK_SCALE`` (``quick`` or ``paper``).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from bounds.validation import check_choice
from sims.core.scale import SCALES

logger = logging.getLogger(__name__)

_REPO_ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = _REPO_ROOT / "notebooks"


def figures_dir() -> Path:
    """``$PRUNELEAK_FIG_DIR`` if set, else ``paper_figs/`` at the root of the checkout."""
    override = os.environ.get("PRUNELEAK_FIG_DIR")
    directory = Path(override) if override else _REPO_ROOT / "paper_figs"
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def save_figure(fig, name: str, *, directory: str | os.PathLike | None = None) -> list[Path]:
    """Save a matplotlib figure as ``<name>.png`` and ``<name>.pdf`` under ``directory``
    (created if needed; None: :func:`figures_dir`); return both paths."""
    if directory is not None:
        Path(directory).mkdir(parents=True, exist_ok=True)
    folder = figures_dir() if directory is None else Path(directory)
    paths = [folder / f"{name}.{ext}" for ext in ("png", "pdf")]
    for path in paths:
        fig.savefig(path, dpi=150, bbox_inches="tight")
    logger.info("Wrote %s", ", ".join(str(p) for p in paths))
    return paths


def notebook_paths() -> list[Path]:
    """Every notebook of the project, sorted by name."""
    return sorted(NOTEBOOK_DIR.glob("*.ipynb"))


def run_notebook(path: str | os.PathLike, *, scale: str = "quick", timeout: int = 600) -> None:
    """Execute a notebook in place of a kernel (outputs are not written back).

    Raises ``nbclient.exceptions.CellExecutionError`` naming the failing cell.
    """
    import nbclient
    import nbformat

    check_choice("scale", scale, func="run_notebook", choices=SCALES)
    path = Path(path)
    notebook = nbformat.read(path, as_version=4)
    previous = os.environ.get("PRUNELEAK_SCALE")
    os.environ["PRUNELEAK_SCALE"] = scale
    try:
        nbclient.NotebookClient(
            notebook, timeout=timeout, kernel_name="python3",
            resources={"metadata": {"path": str(path.parent)}},
        ).execute()
    finally:
        if previous is None:
            os.environ.pop("PRUNELEAK_SCALE", None)
        else:
            os.environ["PRUNELEAK_SCALE"] = previous
