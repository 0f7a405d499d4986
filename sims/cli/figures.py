"""``pruneleak figures``: regenerate every figure by executing the project's notebooks.

The notebooks are not part of the installed package: they live in ``notebooks/`` of a
checkout. ``--notebooks DIR`` names their folder (default ``./notebooks`` when it
exists); without any, the command says so and exits with status 2. Figures go to
``--out`` (default ``pruneleak-out/figures``; ``make figures`` passes ``paper_figs``).
"""

from __future__ import annotations

from pathlib import Path

from tqdm.auto import tqdm

from pruneleak.sims.cli import add_command, add_out_argument
from pruneleak.sims.cli.summaries import SUMMARIES
from pruneleak.sims.core.outputs import output_dir
from pruneleak.sims.core.scale import SCALES
from pruneleak.sims.plots.figures import notebook_paths, run_notebook

DEFAULT_NOTEBOOK_DIR = Path("notebooks")


def register(subparsers) -> None:
    parser = add_command(
        subparsers,
        "figures",
        help=SUMMARIES["figures"],
        description=(
            "Execute every notebook of a pruneleak checkout (in quick or paper scale) and "
            "write the figures they save under --out."
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
    add_out_argument(parser, "figures")
    parser.set_defaults(func=run)


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
    for path in tqdm(paths, desc="notebooks", unit="nb", disable=None):
        run_notebook(path, scale=args.scale, figure_dir=out)
    print(f"Figures written under {out}")
    return 0
