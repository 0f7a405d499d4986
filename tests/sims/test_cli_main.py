"""``pruneleak`` itself: the error handler, exit statuses, the command list, option help.

A user error (``ValueError``, ``OSError``) is one line on stderr and exit status 2; any
other exception is a bug and keeps its traceback (exit 1); Ctrl-C is 130. Every option
of every subcommand says what it is and, in ``--help``, what its default is.
"""

from __future__ import annotations

import argparse
import doctest
import logging
import re
import subprocess
import sys
import types

import pytest

from pruneleak.sims import cli
from pruneleak.sims.cli import add_command, build_parser, main

LOG = logging.getLogger("pruneleak.sims.cli.test")


@pytest.fixture
def command_raising(monkeypatch):
    """Install a subcommand ``boom`` whose run raises the given exception (after logging
    one DEBUG line); return the ``main`` arguments that run it alone."""

    def install(error: BaseException) -> dict:
        def run(args):
            LOG.debug("boom is about to raise")
            raise error

        def register(subparsers):
            parser = add_command(subparsers, "boom", help="raise", description="raise")
            parser.set_defaults(func=run)

        module = types.ModuleType("pruneleak.sims.cli.boom")
        module.register = register
        monkeypatch.setitem(sys.modules, "pruneleak.sims.cli.boom", module)
        return {"commands": ("boom",)}

    yield install
    logging.getLogger().setLevel(logging.WARNING)  # main sets the root level


def _exit(argv, **kwargs) -> int:
    with pytest.raises(SystemExit) as info:
        main(argv, **kwargs)
    return info.value.code


def test_no_command_lists_every_subcommand_with_its_description_and_exits_2(capsys):
    assert _exit([]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # stdout stays for results
    err = captured.err
    parser = build_parser()
    (subparsers,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    listed = {choice.dest: " ".join(choice.help.split()) for choice in subparsers._choices_actions}
    assert set(listed) == set(cli.SUBCOMMANDS)
    flat = " ".join(err.split())
    for name, help_text in listed.items():
        assert f"{name} {help_text}" in flat, name
    assert err.splitlines()[-1] == "pruneleak: error: choose a COMMAND (listed above)."


def test_a_group_of_subcommands_without_one_lists_them(capsys):
    assert _exit(["bound"], commands=("bound",)) == 2
    err = capsys.readouterr().err
    for kind in ("priprune", "equivalence", "fedltp"):
        assert re.search(rf"^\s+{kind}\s+\S", err, re.MULTILINE), kind
    assert err.splitlines()[-1] == "pruneleak bound: error: choose a BOUND (listed above)."


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (ValueError("The 'x' parameter\n   of f must be > 0.\nGot -1 instead."),
         "The 'x' parameter of f must be > 0. Got -1 instead."),
        (FileNotFoundError(2, "No such file or directory", "/no/such.toml"),
         "/no/such.toml: No such file or directory"),
        (IsADirectoryError(21, "Is a directory", "/tmp/results"), "/tmp/results: Is a directory"),
        (PermissionError("plain message"), "plain message"),
    ],
)  # fmt: skip
def test_a_user_error_is_one_line_and_exit_2(command_raising, capsys, error, line):
    assert _exit(["boom"], **command_raising(error)) == 2
    assert capsys.readouterr().err == f"pruneleak boom: error: {line}\n"


def test_a_bug_keeps_its_traceback_then_asks_for_a_report(command_raising, capsys):
    assert _exit(["boom"], **command_raising(KeyError("missing"))) == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "KeyError: 'missing'" in err
    last = err.splitlines()[-1]
    assert last.startswith("pruneleak boom: internal error") and "--debug" in last
    assert "report" in last


@pytest.mark.parametrize("error", [ValueError("bad value"), ZeroDivisionError("bug")])
def test_debug_raises_every_error_and_logs_debug_lines(command_raising, caplog, error):
    kwargs = command_raising(error)
    with pytest.raises(type(error)):
        main(["--debug", "boom"], **kwargs)
    assert "boom is about to raise" in caplog.messages


def test_without_debug_no_debug_line_is_logged(command_raising, caplog, capsys):
    assert _exit(["boom"], **command_raising(ValueError("bad value"))) == 2
    assert "boom is about to raise" not in caplog.messages


def test_ctrl_c_exits_130_with_one_line(command_raising, capsys):
    assert _exit(["boom"], **command_raising(KeyboardInterrupt())) == 130
    assert capsys.readouterr().err == "pruneleak boom: interrupted.\n"


def test_negative_numbers_in_scientific_notation_are_values(capsys):
    argv = ["bound", "priprune", "--p", "0.3", "--B", "20", "--d-star", "100", "--json"]
    assert main([*argv, "--delta", "-1e3"], commands=("bound",)) == 0
    assert '"delta_nats": -1000.0' in capsys.readouterr().out
    assert _exit([*argv, "--delta", "-inf"], commands=("bound",)) == 2
    last = capsys.readouterr().err.splitlines()[-1]
    assert "argument --delta: must be a finite number" in last and "Got -inf" in last


@pytest.mark.parametrize(
    ("parse", "text", "value"),
    [
        (cli.arguments.positive_int, "3", 3),
        (cli.arguments.positive_int, "1e4", 10_000),
        (cli.arguments.nonnegative_int, "0", 0),
        (cli.arguments.finite_float, "-1e-3", -0.001),
        (cli.arguments.nonnegative_float, "0", 0.0),
        (cli.arguments.positive_float, "1e-300", 1e-300),
        (cli.arguments.real(0, 1), "1", 1.0),
    ],
)
def test_argument_types_accept(parse, text, value):
    assert parse(text) == value and type(parse(text)) is type(value)


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [
        (cli.arguments.positive_int, "0", "an integer in [1, inf). Got 0 instead."),
        (cli.arguments.positive_int, "1.5", "Got '1.5' instead."),
        (cli.arguments.positive_int, "1e400", "Got '1e400' instead."),
        (cli.arguments.positive_int, "nan", "Got 'nan' instead."),
        (cli.arguments.nonnegative_int, "-1", "an integer in [0, inf). Got -1 instead."),
        (cli.arguments.integer(high=4), "5", "an integer in (-inf, 4]. Got 5 instead."),
        (cli.arguments.finite_float, "nan", "a finite number in (-inf, inf). Got nan"),
        (cli.arguments.finite_float, "-inf", "Got -inf instead."),
        (cli.arguments.finite_float, "1e309", "Got 1e309 instead."),
        (cli.arguments.finite_float, "x", "Got 'x' instead."),
        (cli.arguments.positive_float, "0", "a finite number in (0, inf). Got 0 instead."),
        (cli.arguments.nonnegative_float, "-0.5", "in [0, inf). Got -0.5 instead."),
        (cli.arguments.real(0, 1, high_open=True), "1", "in [0, 1). Got 1 instead."),
    ],
)
def test_argument_types_refuse_naming_the_range_and_the_value(parse, text, message):
    with pytest.raises(argparse.ArgumentTypeError, match=re.escape(message)):
        parse(text)


def test_argument_types_examples():
    assert doctest.testmod(cli.arguments).failed == 0


def _parsers(parser: argparse.ArgumentParser):
    """``parser`` and every parser below it (subcommands and their subcommands)."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                yield from _parsers(child)


PARSERS = list(_parsers(build_parser()))


def test_the_walk_reaches_nested_subcommands():
    progs = {parser.prog for parser in PARSERS}
    assert {"pruneleak", "pruneleak bound priprune", "pruneleak bound fedltp"} <= progs
    assert {f"pruneleak {name}" for name in cli.SUBCOMMANDS} <= progs


@pytest.mark.parametrize("parser", PARSERS, ids=lambda parser: parser.prog)
def test_every_option_has_help_and_shows_its_default(parser, monkeypatch):
    monkeypatch.setenv("COLUMNS", "10000")  # one line per option: no wrapping to undo
    text = parser.format_help()
    required = {
        action.dest
        for group in parser._mutually_exclusive_groups
        if group.required
        for action in group._group_actions
    }
    for action in parser._actions:
        if not action.option_strings or action.dest == "help":
            continue
        name = action.option_strings[-1]
        assert action.help and action.help.strip(), f"{name} has no help"
        if action.nargs == 0 or action.required or action.dest in required:
            continue  # a flag (off unless given) or an option that must be given
        if action.default is None:
            # computed or absent defaults are said in words, never as "None"
            assert "(default: " in action.help, f"{name}: say what its default is"
            assert "(default: None)" not in text
            continue
        shown = re.search(re.escape(action.help) + r" \(default: (.*)\)$", text, re.MULTILINE)
        assert shown, f"{name}: default missing from {parser.prog} --help"
        # The shown default, typed back on the command line, is the default.
        typed = shown.group(1).split(" ") if isinstance(action.default, list) else shown.group(1)
        convert = action.type or str
        back = [convert(t) for t in typed] if isinstance(typed, list) else convert(typed)
        assert back == action.default, f"{name}: --help shows {shown.group(1)!r}"


def test_a_reader_that_closes_the_pipe_ends_the_command_quietly():
    """``pruneleak verify --list | head``: the reader gone before the first write is no
    error of the input. Status 141 (128 + SIGPIPE, as a shell reports a process the
    signal ended) and nothing on stderr (before: "error: [Errno 32] Broken pipe")."""
    process = subprocess.Popen(
        [sys.executable, "-m", "pruneleak", "verify", "--list"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    process.stdout.close()  # the reader leaves before anything is written
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 141
    assert stderr.decode() == ""
