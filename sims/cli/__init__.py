"""The ``pruneleak`` command line.

Each subcommand lives in its own module of this package and exposes
``register(subparsers)``, which adds its parser and sets ``func`` to a callable taking
the parsed arguments and returning an exit code.

Commands that write files take ``--out DIR`` (:func:`add_out_argument`), by default
``pruneleak-out/<command>`` under the current directory, which ``.gitignore`` lists: a
command never overwrites a file tracked in git unless it is pointed there explicitly
(``make figures`` passes ``--out paper_figs``). A user error (a bad value, a folder that
cannot be created) ends the command with one line on stderr and exit status 2; any
other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from pathlib import Path

from sims.core.outputs import OUTPUT_ROOT
from sims.core.runtime import cpu_tuning

# Module names under sims.cli, one per subcommand, in the order `--help` lists them.
SUBCOMMANDS = ("demo", "bound", "train", "sweep", "verify", "figures", "leakage")


def add_out_argument(parser, command: str) -> None:
    """Add ``--out DIR`` (default ``pruneleak-out/<command>``) to a subcommand's parser.

    ``parser`` is an ``argparse`` parser or argument group.
    """
    parser.add_argument(
        "--out",
        type=Path,
        default=OUTPUT_ROOT / command,
        metavar="DIR",
        help="folder for this command's files, created if missing (default: %(default)s)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pruneleak",
        description="Privacy leakage in pruned federated learning: bounds, attacks, verification.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        metavar="N",
        help="torch intra-op CPU threads for this command (default 1: the toolkit's small "
        "models run fastest on one thread of a shared host; 0 keeps torch's own choice)",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in SUBCOMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if args.threads < 0:
        parser.error(f"--threads must be >= 0. Got {args.threads} instead.")
    try:
        with cpu_tuning(threads=args.threads or None):
            return int(args.func(args) or 0)
    except ValueError as err:
        parser.exit(2, f"pruneleak {args.command}: error: {err}\n")


if __name__ == "__main__":
    sys.exit(main())
