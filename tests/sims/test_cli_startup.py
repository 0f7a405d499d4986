"""Commands that are pure math start without torch (issue 31, scope 6).

``pruneleak --help``, ``pruneleak bound ...`` and ``pruneleak verify`` never import torch
(seconds of start-up): only the chosen subcommand's module is imported
(:func:`sims.cli.build_parser` with ``argv``), and ``main`` sets torch's thread count
only for commands that use torch. Each case runs in a fresh interpreter, which reports
at exit whether torch was ever imported.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pruneleak.sims.cli import SUBCOMMANDS, build_parser, chosen_command

ROOT = Path(__file__).resolve().parents[2]

# Runs `pruneleak ARGS` and prints, last on stderr, whether torch is in sys.modules.
WRAPPER = (
    "import atexit, sys\n"
    "atexit.register(lambda: print('torch imported:', 'torch' in sys.modules, file=sys.stderr))\n"
    "from pruneleak.sims.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)

PRIPRUNE = ("bound", "priprune", "--p", "0.3", "--B", "20", "--d-star", "100", "--delta", "1")
FEDLTP = ("bound", "fedltp", "--q", "0.01", "--sigma", "1", "--lambda-val", "1", "--t", "3")


def run_pruneleak(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", WRAPPER, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--help",), "bound"),
        (("--version",), "pruneleak "),
        (
            ["bound", "priprune", "--p", "0.3", "--B", "20", "--d-star", "100", "--delta", "1"],
            "bits",
        ),
        (
            [
                "--threads",
                "2",
                "bound",
                "fedltp",
                "--q",
                "0.01",
                "--sigma",
                "1",
                "--lambda-val",
                "1",
                "--t",
                "3",
            ],
            "nats",
        ),
        (("verify", "--help"), "--thorough"),
        (("verify", "--claim", "huang.A5", "--format", "json"), '"huang.A5"'),
    ],
)
def test_pure_math_commands_start_without_torch(args, expected, tmp_path):
    if args[0] == "verify" and "--help" not in args:
        args = (*args, "--out", str(tmp_path))
    run = run_pruneleak(*args)
    assert run.returncode == 0, run.stderr
    assert expected in run.stdout
    assert run.stderr.rstrip().endswith("torch imported: False"), run.stderr


def test_the_top_level_help_lists_every_command_with_its_line():
    run = run_pruneleak("--help")
    for name in SUBCOMMANDS:
        assert f"    {name} " in run.stdout, name


def test_a_command_that_trains_still_imports_torch():
    # The wrapper's report is not vacuous: `demo --help` builds its parser from torch's
    # simulations.
    run = run_pruneleak("demo", "--help")
    assert run.returncode == 0, run.stderr
    assert run.stderr.rstrip().endswith("torch imported: True"), run.stderr


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], None),
        (["--help"], None),
        (["-v", "bound", "priprune"], "bound"),
        (["--threads", "2", "verify"], "verify"),
        (["--threads=2", "--debug", "demo", "--help"], "demo"),
        (["nonsense", "bound"], None),  # the first word names no command: argparse says so
    ],
)
def test_the_chosen_command_is_the_first_word_that_is_not_an_option(argv, expected):
    assert chosen_command(argv, SUBCOMMANDS) == expected


def test_a_parser_built_for_one_command_parses_it_as_the_full_parser_does():
    argv = list(PRIPRUNE)
    lazy = build_parser(argv=argv).parse_args(argv)
    full = build_parser().parse_args(argv)
    assert vars(lazy) == vars(full)
    assert lazy.uses_torch is False
