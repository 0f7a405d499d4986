"""The ``pruneleak`` command line.

Each subcommand lives in its own module of this package and exposes
``register(subparsers)``, which adds its parser with :func:`add_command` (so that every
option's help ends with its default) and sets ``func`` to a callable taking the parsed
arguments and returning an exit code. An option that sets a field of a configuration is
built from that field (:mod:`sims.cli.config_options`: its type, range, unit, default and
help). Numeric options use the types of :mod:`sims.cli.arguments`, so a NaN, a negative
count or a non-number is refused before any work starts.

Commands that write files take ``--out DIR`` (:func:`add_out_argument`), by default
``pruneleak-out/<command>`` under the current directory, which ``.gitignore`` lists: a
command never overwrites a file tracked in git unless it is pointed there explicitly
(``make figures`` passes ``--out paper_figs``).

Exit status (:func:`main`): 0 on success; 2 for a usage or user error (a bad value, a
missing or unreadable file: ``ValueError`` or ``OSError``), reported in one line
``pruneleak <command>: error: <message>`` on stderr; 1 for any other exception, which is
a bug: its traceback is printed, then a line asking to rerun with ``--debug`` and report
it; 130 on Ctrl-C. A command may end with 1 of its own accord: ``figures`` when one of
its notebooks failed (it says which, and why). With ``--debug`` every error is raised
with its full traceback and logging is at DEBUG level.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import re
import sys
import traceback
from pathlib import Path

from pruneleak.sims.cli.arguments import nonnegative_int
from pruneleak.sims.cli.options import name_options
from pruneleak.sims.cli.summaries import SUMMARIES
from pruneleak.sims.core.outputs import OUTPUT_ROOT
from pruneleak.sims.core.runtime import torch_threads, tune_process_heap

# Module names under sims.cli, one per subcommand, in the order `--help` lists them.
SUBCOMMANDS = (
    "demo",
    "bound",
    "train",
    "sweep",
    "fedltp",
    "verify",
    "figures",
    "leakage",
    "results",
    "audit",
)


def as_typed(value) -> str:
    """``value`` written as one would type it on the command line."""
    if isinstance(value, list | tuple):
        return " ".join(as_typed(v) for v in value)
    if isinstance(value, float):
        return f"{value:.15g}"
    return str(value)


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Ends every option's help with ``(default: ...)``, the default as one would type it.

    Left as written: flags (``store_true``: off unless given), required options, options
    whose help already states its default in words (``(default: d*)`` where the default
    is computed; a default of ``None`` must be said so), and positional arguments.
    """

    def _get_help_string(self, action):
        text = action.help or ""
        if (
            action.nargs == 0
            or action.required
            or action.default in (None, argparse.SUPPRESS)
            or "(default" in text
            or not action.option_strings
        ):
            return text
        return f"{text} (default: {as_typed(action.default).replace('%', '%%')})"


_NEGATIVE_NUMBER = re.compile(r"^-((\d+\.?\d*|\.\d+)(e[+-]?\d+)?|inf|infinity|nan)$", re.I)


class Parser(argparse.ArgumentParser):
    """``ArgumentParser`` with :class:`HelpFormatter`, reading ``-1e-3`` as a number.

    Its subcommands' parsers are of this class too (argparse makes them of the parent's).
    """

    def __init__(self, *args, formatter_class=HelpFormatter, **kwargs):
        super().__init__(*args, formatter_class=formatter_class, **kwargs)
        # Before Python 3.13 argparse took "-1e-3" (and "-inf") for an option, and said
        # "--delta: expected one argument": its pattern had no exponent. With this one
        # the value reaches the option's type, which accepts it or says what is wrong.
        self._negative_number_matcher = _NEGATIVE_NUMBER


def add_command(subparsers, name: str, *, help: str, description: str):
    """Add and return the parser of subcommand ``name`` (a :class:`Parser`).

    ``help`` is its line in the parent's list of commands, ``description`` the text of
    its own ``--help``.
    """
    parser = subparsers.add_parser(name, help=help, description=description)
    parser.set_defaults(command_prog=parser.prog)
    return parser


def add_subcommands(parser: argparse.ArgumentParser, *, dest: str, metavar: str):
    """Add the subcommands' action to ``parser``; given none, the parser prints its help
    (which lists them, one line each) to stderr and exits with status 2."""

    def choose(args) -> int:
        parser.print_help(sys.stderr)
        parser.exit(2, f"\n{parser.prog}: error: choose a {metavar} (listed above).\n")

    parser.set_defaults(func=choose, command_prog=parser.prog)
    return parser.add_subparsers(dest=dest, metavar=metavar)


def add_out_argument(parser, command: str) -> None:
    """Add ``--out DIR`` (default ``pruneleak-out/<command>``) to a subcommand's parser.

    ``parser`` is an ``argparse`` parser or argument group.
    """
    parser.add_argument(
        "--out",
        type=Path,
        default=OUTPUT_ROOT / command,
        metavar="DIR",
        help="folder for this command's files, created if missing",
    )


def add_data_dir_argument(parser) -> None:
    """Add ``--data-dir DIR`` (default none) to a subcommand's parser or argument group:
    the folder of a file-based data set's files (MNIST, Fashion-MNIST, CIFAR-10, FEMNIST);
    the embedded digits and scikit-image's faces and patches need none."""
    parser.add_argument(
        "--data-dir",
        metavar="DIR",
        help="folder of the data set's files (default: none; only mnist, fashion_mnist, "
        "cifar10 and femnist need one)",
    )


def chosen_command(argv: list[str], commands: tuple[str, ...]) -> str | None:
    """The subcommand ``argv`` names (its first word that is not an option or the value
    of ``--threads``), or None if it names none of ``commands``."""
    words = iter(argv)
    for word in words:
        if word == "--threads":
            next(words, None)
        elif not word.startswith("-"):
            return word if word in commands else None
    return None


def build_parser(
    commands: tuple[str, ...] | None = None, *, argv: list[str] | None = None
) -> argparse.ArgumentParser:
    """The ``pruneleak`` parser with ``commands`` (default: :data:`SUBCOMMANDS`).

    Given the ``argv`` it will parse, only the subcommand that ``argv`` names is built in
    full (its module imported, its options added); the others are listed by their line
    of :data:`sims.cli.summaries.SUMMARIES`, so that ``pruneleak --help`` and ``pruneleak
    bound ...`` import neither torch nor the simulations. Without ``argv``, every
    subcommand is built in full.
    """
    parser = Parser(
        prog="pruneleak",
        description="Privacy leakage in pruned federated learning: bounds, attacks, verification.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    parser.add_argument(
        "--debug",
        action="store_true",
        help="log at DEBUG level and show the full traceback of every error",
    )
    parser.add_argument(
        "--threads",
        type=nonnegative_int,
        default=1,
        metavar="N",
        help="torch intra-op CPU threads for this command (1: the toolkit's small models "
        "run fastest on one thread of a shared host; 0 keeps torch's own choice; bound and "
        "verify do not use torch)",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    subparsers = add_subcommands(parser, dest="command", metavar="COMMAND")
    commands = SUBCOMMANDS if commands is None else commands
    chosen = None if argv is None else chosen_command(argv, commands)
    for name in commands:
        if argv is not None and name != chosen and name in SUMMARIES:
            add_command(subparsers, name, help=SUMMARIES[name], description=SUMMARIES[name])
        else:
            importlib.import_module(f"{__name__}.{name}").register(subparsers)
    return parser


def _version() -> str:
    """The installed distribution's version (pyproject's), or "unknown" when running
    from a checkout that was never installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pruneleak")
    except PackageNotFoundError:
        return "unknown"


def _one_line(err: BaseException) -> str:
    """The message of a user error in one line; an OSError names its file first."""
    if isinstance(err, OSError) and err.filename is not None and err.strerror:
        text = f"{err.filename}: {err.strerror}"
    else:
        text = str(err) or type(err).__name__
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


def main(argv: list[str] | None = None, *, commands: tuple[str, ...] | None = None) -> int:
    """Run ``pruneleak`` with ``argv`` (default ``sys.argv[1:]``); see the module's exit statuses.

    Returns the command's exit status on success; errors end in ``SystemExit``.

    ``main`` is the process's entry point (the ``pruneleak`` script, ``python -m
    pruneleak.sims.cli``), and the process ends with the command, so it, and no library
    code, tunes glibc's heap for the rest of the process
    (:func:`sims.core.runtime.tune_process_heap`: glibc keeps freed blocks, which the
    attacks' iterations reuse). A caller that runs ``main`` inside its own long-lived
    process (the tests) gets that setting too. torch's thread count is set for the
    command only (``--threads``).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(commands, argv=argv)
    args = parser.parse_args(argv)
    logging.basicConfig(format="%(levelname)s %(name)s: %(message)s")
    # on the root logger even where handlers exist already (basicConfig then does nothing)
    logging.getLogger().setLevel(
        logging.DEBUG if args.debug else logging.INFO if args.verbose else logging.WARNING
    )
    prog = args.command_prog
    tune_process_heap()
    try:
        # torch's thread count is set only for commands that use torch: setting it would
        # import torch (seconds) into `bound` and `verify`, which are pure math.
        threads = args.threads if getattr(args, "uses_torch", True) else 0
        with torch_threads(threads or None):
            status = int(args.func(args) or 0)
        sys.stdout.flush()  # a reader gone (``| head``) shows here, not at exit
        return status
    except BrokenPipeError:
        # The reader closed the pipe: not an error of the input. Quiet, with the status of a
        # process SIGPIPE ended (128 + 13); stdout to /dev/null so that the flush at exit
        # does not raise again (the Python documentation's recipe, "Note on SIGPIPE").
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        if args.debug:
            raise
        parser.exit(130, f"{prog}: interrupted.\n")
    except (ValueError, OSError) as err:
        if args.debug:
            raise
        parser.exit(2, f"{prog}: error: {name_options(_one_line(err), args)}\n")
    except Exception:
        if args.debug:
            raise
        traceback.print_exc()
        parser.exit(
            1,
            f"{prog}: internal error (a bug, not a problem with the input): rerun with "
            "--debug for the full log and report it with the command line.\n",
        )


if __name__ == "__main__":
    sys.exit(main())
