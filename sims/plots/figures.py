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
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pruneleak.bounds.progress import progress as show_progress
from pruneleak.bounds.validation import check_choice
from pruneleak.sims.core.extras import EXTRAS
from pruneleak.sims.core.outputs import OUTPUT_ROOT, output_dir
from pruneleak.sims.core.scale import SCALES

logger = logging.getLogger(__name__)


class _WithoutTimeoutNoise(logging.Filter):
    """Drops nbclient's "Timeout waiting for execute reply (1s)": it gives the cell's
    share of the whole-notebook limit, and :func:`run_notebooks` reports the timeout."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Timeout waiting for execute reply")


# nbclient's own messages (a dead kernel, a timeout), under this module's logger
_NBCLIENT_LOG = logger.getChild("nbclient")
_NBCLIENT_LOG.addFilter(_WithoutTimeoutNoise())

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
    on_cell: Callable[[int, int], None] | None = None,
) -> None:
    """Execute a notebook in a fresh kernel (outputs are not written back).

    The kernel runs in the notebook's folder with ``$PRUNELEAK_SCALE=scale`` and, when
    ``figure_dir`` is given, ``$PRUNELEAK_FIG_DIR`` set to it (made absolute, since the
    kernel's working directory is the notebook's). This process's environment is left
    as it was. Raises ``nbclient.exceptions.CellExecutionError`` naming the failing cell.

    ``timeout``: seconds allowed to the whole notebook (kernel start aside), else
    :class:`NotebookTimeoutError`; None (default) sets no limit. No cell has a limit of
    its own (nbclient's per-cell ``timeout`` is off), since a loaded host slows cells
    unevenly and a paper-scale cell runs for hours: each cell may use what the notebook
    has left. ``on_cell(number, count)`` is called as each code cell starts (``number``
    from 1 of the notebook's ``count`` code cells).
    """
    check_choice("scale", scale, func="run_notebook", choices=SCALES)
    path = Path(path)
    env = {**os.environ, "PRUNELEAK_SCALE": scale}
    if figure_dir is not None:
        env["PRUNELEAK_FIG_DIR"] = str(Path(figure_dir).resolve())
    from nbclient.exceptions import CellTimeoutError

    client = notebook_client(path, timeout=timeout, on_cell=on_cell)
    try:
        client.execute(env=env)
    except CellTimeoutError as err:  # only the whole-notebook limit sets one
        if timeout is None:
            raise
        raise NotebookTimeoutError(
            f"ran past the whole-notebook limit of {timeout:g} s", timeout=timeout
        ) from err


class NotebookTimeoutError(TimeoutError):
    """A notebook ran past the whole-notebook limit of :func:`run_notebook`."""

    def __init__(self, message: str, *, timeout: float):
        super().__init__(message)
        self.timeout = timeout


def notebook_client(
    path: str | os.PathLike,
    *,
    timeout: float | None = None,
    on_cell: Callable[[int, int], None] | None = None,
):
    """The ``nbclient.NotebookClient`` that :func:`run_notebook` runs ``path`` with.

    nbclient bounds each cell by its ``timeout`` (here None: off); the whole-notebook
    ``timeout`` is its ``timeout_func``, which gives each cell what is left of it when
    the cell starts (never 0 or less, which nbclient reads as "no limit"). The clock
    starts with the first cell: the kernel's start has nbclient's own limit
    (``startup_timeout``, 60 s).
    """
    import nbclient
    import nbformat

    path = Path(path)
    notebook = nbformat.read(path, as_version=4)
    code = [i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code"]
    deadline: list[float] = []  # set as the first cell starts

    def cell_timeout(cell) -> float | None:
        if timeout is None:
            return None
        if not deadline:
            deadline.append(time.monotonic() + timeout)
        return max(deadline[0] - time.monotonic(), 1e-3)

    def cell_started(cell, cell_index: int, **_) -> None:
        if on_cell is not None and cell_index in code:
            on_cell(code.index(cell_index) + 1, len(code))

    return nbclient.NotebookClient(
        notebook,
        timeout=None,
        timeout_func=cell_timeout,
        kernel_name="python3",
        # a timed-out cell is still running: kill its kernel rather than wait for it to
        # answer a shutdown request (the notebook's files are written by then)
        shutdown_kernel="immediate",
        on_cell_start=cell_started,
        log=_NBCLIENT_LOG,
        resources={"metadata": {"path": str(path.parent)}},
    )


#: The missing module of a ModuleNotFoundError: ``No module named 'skimage.data'``, or
#: ``import of skimage halted; None in sys.modules`` (an import blocked on purpose).
_MISSING_MODULE = re.compile(r"No module named '([^']+)'|import of (\S+) halted")
#: ``pip install 'pruneleak[faces]'``: the extra a MissingExtraError names.
_INSTALL_EXTRA = re.compile(r"pip install 'pruneleak\[([\w-]+)\]'")


@dataclass(frozen=True)
class NotebookOutcome:
    """How one notebook of :func:`run_notebooks` ended.

    ``status``: ``"ok"``; ``"timeout"`` (past the whole-notebook limit); ``"needs
    extra"`` (an optional dependency is missing: ``extra`` names the extra of
    pruneleak that installs it); ``"failed"`` (a cell raised, the kernel died, the
    file is not a notebook). ``reason``: one line saying why (empty when ok), starting
    with the code cell that was running when there was one. ``traceback``: the failing
    cell's traceback, as nbclient reports it (empty when there is none).
    """

    path: Path
    status: str
    seconds: float
    reason: str = ""
    extra: str | None = None
    traceback: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def notebook_outcome(
    path: Path, err: BaseException | None, *, seconds: float, cell: int | None = None
) -> NotebookOutcome:
    """The :class:`NotebookOutcome` of ``path`` after :func:`run_notebook` raised ``err``
    (None: it ran to the end), ``cell`` (from 1) being the code cell that was running."""
    if err is None:
        return NotebookOutcome(path, "ok", seconds)
    where = "" if cell is None else f"cell {cell}: "
    if isinstance(err, NotebookTimeoutError):
        return NotebookOutcome(path, "timeout", seconds, f"{where}{err}")
    ename = getattr(err, "ename", None) or type(err).__name__
    evalue = getattr(err, "evalue", None) if hasattr(err, "ename") else str(err)
    message = f"{ename}: {_first_line(evalue)}" if evalue else ename
    traceback = str(getattr(err, "traceback", "") or "")
    extra = missing_extra(ename, evalue or "")
    if extra is not None:
        reason = f"{where}needs extra {extra}: pip install 'pruneleak[{extra}]' ({message})"
        return NotebookOutcome(path, "needs extra", seconds, reason, extra, traceback)
    return NotebookOutcome(path, "failed", seconds, f"{where}{message}", None, traceback)


def missing_extra(ename: str, evalue: str) -> str | None:
    """The extra of pruneleak (:data:`sims.core.extras.EXTRAS`) whose absence an error
    named ``ename`` with message ``evalue`` reports, or None: a MissingExtraError names
    it; a ModuleNotFoundError (or ImportError) names a module, which an extra installs or
    not.

    >>> missing_extra("ModuleNotFoundError", "No module named 'skimage'")
    'faces'
    >>> missing_extra("ModuleNotFoundError", "No module named 'numpyy'") is None
    True
    """
    found = _INSTALL_EXTRA.search(evalue)
    if found:
        return found[1]
    if ename in ("ModuleNotFoundError", "ImportError"):
        found = _MISSING_MODULE.search(evalue)
        top = (found[1] or found[2]).split(".")[0] if found else None
        if top in EXTRAS:
            return EXTRAS[top][1]
    return None


def run_notebooks(
    paths,
    *,
    scale: str = "quick",
    figure_dir: str | os.PathLike | None = None,
    timeout: float | None = None,
    progress: bool | None = None,
) -> list[NotebookOutcome]:
    """Run each of ``paths`` with :func:`run_notebook` (same ``scale``, ``figure_dir`` and
    whole-notebook ``timeout``), carrying on past a failing one; one
    :class:`NotebookOutcome` per notebook, in order. A failure is logged (WARNING) as it
    happens. ``progress``: False nothing, True or None a bar over the notebooks on a
    terminal, else a line per notebook on stderr with a heartbeat naming the running
    cell (:func:`bounds.progress.progress`). Ctrl-C is not caught.
    """
    paths = [Path(p) for p in paths]
    outcomes = []
    with show_progress(paths, desc="figures", unit="notebook", enabled=progress) as bar:
        for path in bar:
            running: dict[str, int | None] = {"cell": None}

            def on_cell(number: int, count: int, name=path.name, running=running) -> None:
                running["cell"] = number
                bar.set_postfix_str(f"{name}, cell {number}/{count}", refresh=False)

            bar.set_postfix_str(path.name, refresh=False)
            started = time.monotonic()
            try:
                run_notebook(
                    path, scale=scale, figure_dir=figure_dir, timeout=timeout, on_cell=on_cell
                )
                error = None
            except Exception as err:
                error = err
            outcome = notebook_outcome(
                path, error, seconds=time.monotonic() - started, cell=running["cell"]
            )
            if not outcome.ok:
                logger.warning("%s: %s: %s", path.name, outcome.status, outcome.reason)
                if outcome.traceback:
                    logger.debug("%s:\n%s", path.name, outcome.traceback)
            outcomes.append(outcome)
    return outcomes


def _first_line(text: str, limit: int = 300) -> str:
    """``text``'s first non-empty line, cut to ``limit`` characters."""
    line = next((t.strip() for t in str(text).splitlines() if t.strip()), "")
    return line if len(line) <= limit else line[: limit - 3] + "..."
