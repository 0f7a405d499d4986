"""``pruneleak figures``: regenerate every figure by executing the notebooks."""

from __future__ import annotations

from tqdm.auto import tqdm

from sims.core.scale import SCALES
from sims.plots.figures import figures_dir, notebook_paths, run_notebook


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "figures", help="execute every notebook and write its figures under paper_figs/"
    )
    parser.add_argument("--scale", choices=SCALES, default="quick",
                        help="quick (minutes on a laptop) or paper (paper-scale, GPU advised)")
    parser.add_argument("--only", metavar="NAME", action="append", default=None,
                        help="run only notebooks whose file name contains NAME (repeatable)")
    parser.set_defaults(func=run)


def run(args) -> int:
    paths = notebook_paths()
    if args.only:
        paths = [p for p in paths if any(name in p.name for name in args.only)]
    if not paths:
        raise ValueError(f"No notebook matches --only {args.only}.")
    for path in tqdm(paths, desc="notebooks", unit="nb", disable=None):
        run_notebook(path, scale=args.scale)
    print(f"Figures written under {figures_dir()}")
    return 0
