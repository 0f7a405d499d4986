"""``pruneleak figures``: regenerate every figure by executing the project's notebooks.

The notebooks are not part of the installed package: they live in ``notebooks/`` of a
checkout. ``--notebooks DIR`` names their folder (default ``./notebooks`` when it
exists); without any, the command says so and exits with status 2. Figures go to
``--out`` (default ``pruneleak-out/figures``; ``make figures`` passes ``paper_figs``).

Each notebook may run for ``--timeout`` seconds in all (default
:data:`QUICK_TIMEOUT_S` with ``--scale quick``, no limit with ``--scale paper``, whose
cells run for hours; 0: no limit); no single cell has a limit of its own. A notebook
that fails does not stop the others: the command ends with one row per notebook (ok,
failed, timeout, or needs extra: an optional dependency is missing, with the ``pip
install 'pruneleak[EXTRA]'`` that adds it) and exits with status 1 when any failed, 0
otherwise. Off a terminal it writes a progress line per notebook on stderr, and one at
least every minute while a notebook runs, naming its cell
(:func:`bounds.progress.progress`).
"""

from __future__ import annotations

import sys
from pathlib import Path

from pruneleak.sims.cli import add_command, add_out_argument
from pruneleak.sims.cli.arguments import nonnegative_float
from pruneleak.sims.cli.summaries import SUMMARIES
from pruneleak.sims.core.outputs import output_dir
from pruneleak.sims.core.scale import SCALES
from pruneleak.sims.plots.figures import NotebookOutcome, notebook_paths, run_notebooks

DEFAULT_NOTEBOOK_DIR = Path("notebooks")
#: Seconds each notebook may run in all with ``--scale quick`` (the test suite's limit).
QUICK_TIMEOUT_S = 1800.0


def register(subparsers) -> None:
    parser = add_command(
        subparsers,
        "figures",
        help=SUMMARIES["figures"],
        description=(
            "Execute every notebook of a pruneleak checkout (in quick or paper scale) and "
            "write the figures they save under --out. A failing notebook does not stop "
            "the others; the command ends with a table of what failed and why, and exits "
            "with status 1 if any did."
        ),
    )
    parser.add_argument(
        "--notebooks",
        type=Path,
        default=DEFAULT_NOTEBOOK_DIR,
        metavar="DIR",
        help="folder of the project's notebooks",
    )
    parser.add_argument(
        "--scale",
        choices=SCALES,
        default="quick",
        help="quick (minutes on a laptop) or paper (paper-scale, GPU advised)",
    )
    parser.add_argument(
        "--only",
        metavar="NAME",
        action="append",
        default=None,
        help="run only notebooks whose file name contains NAME, repeatable (default: all)",
    )
    parser.add_argument(
        "--timeout",
        type=nonnegative_float,
        default=None,
        metavar="SECONDS",
        help=(
            "seconds each notebook may run in all, its kernel's start aside; 0: no limit "
            f"(default: {QUICK_TIMEOUT_S:g} with --scale quick, none with --scale paper)"
        ),
    )
    add_out_argument(parser, "figures")
    parser.set_defaults(func=run)


def notebook_timeout(timeout: float | None, scale: str) -> float | None:
    """The whole-notebook limit in seconds (None: none) for ``--timeout`` and ``--scale``."""
    if timeout is None:
        return QUICK_TIMEOUT_S if scale == "quick" else None
    return timeout or None


def summary(outcomes: list[NotebookOutcome]) -> str:
    """One row per notebook: its name, result, seconds and, when it failed, why."""
    rows = [("notebook", "result", "seconds", "reason")]
    rows += [(o.path.name, o.status, f"{o.seconds:.1f}", o.reason) for o in outcomes]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join(
        f"{name:<{widths[0]}}  {status:<{widths[1]}}  {seconds:>{widths[2]}}  {reason}".rstrip()
        for name, status, seconds, reason in rows
    )


def run(args) -> int:
    folder = args.notebooks
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"--notebooks {folder} is a file: it must name the notebooks' folder.")
    paths = notebook_paths(folder)
    if not paths:
        raise ValueError(
            f"no notebooks (*.ipynb) in {folder}/: this command runs the notebooks of a "
            "pruneleak checkout; run it from the checkout's root or pass --notebooks DIR."
        )
    if args.only:
        paths = [p for p in paths if any(name in p.name for name in args.only)]
        if not paths:
            raise ValueError(f"no notebook in {folder}/ matches --only {' '.join(args.only)}.")
    out = output_dir(args.out)
    outcomes = run_notebooks(
        paths,
        scale=args.scale,
        figure_dir=out,
        timeout=notebook_timeout(args.timeout, args.scale),
    )
    print(summary(outcomes))
    print(f"Figures written under {out}")
    failed = [o for o in outcomes if not o.ok]
    if failed:
        print(
            f"{args.command_prog}: {len(failed)} of {len(outcomes)} notebooks failed "
            "(listed above); the others' figures were written.",
            file=sys.stderr,
        )
        return 1
    return 0
