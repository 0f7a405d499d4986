"""``pruneleak results check|repair FILE``: inspect and repair a JSON-lines results store.

``check`` lists every line of FILE that is not a record (torn or malformed JSON, invalid
UTF-8, no key, a key already on an earlier line) and exits with status 1 if there is one,
0 if not; it changes nothing. ``repair`` keeps every valid record (the first of repeated
keys), drops the other lines, says which it dropped and why, and saves the original as
``FILE.bak`` first (:func:`sims.store.repair.repair`). Both wait for a sweep that is
writing to FILE to finish its current append.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path

from pruneleak.sims.cli import add_command, add_subcommands
from pruneleak.sims.cli.summaries import SUMMARIES
from pruneleak.sims.store.repair import Problem, check, repair


def register(subparsers) -> None:
    parser = add_command(
        subparsers,
        "results",
        help=SUMMARIES["results"],
        description=(
            "Inspect or repair a results store written by demo, sweep, train or leakage: "
            "one JSON record per line, each with a key no other line holds."
        ),
    )
    actions = add_subcommands(parser, dest="action", metavar="ACTION")
    for name, func, text in (
        ("check", run_check, "list the damaged lines; exit status 1 if there is one"),
        (
            "repair",
            run_repair,
            "keep every valid record (the first of repeated keys), drop the other lines; "
            "the original is saved as FILE.bak first",
        ),
    ):
        action = add_command(actions, name, help=text, description=text)
        action.add_argument("file", type=Path, metavar="FILE", help="the results file")
        action.set_defaults(func=func)


def _print_problems(path: Path, problems: Sequence[Problem]) -> None:
    for problem in problems:
        print(f"{path}:{problem.line}: {problem.reason}")


def run_check(args) -> int:
    records, problems = check(args.file)
    _print_problems(args.file, problems)
    summary = f"{args.file}: {records} records, {len(problems)} damaged lines"
    if problems:
        command = f"pruneleak results repair {shlex.quote(str(args.file))}"
        print(f"{summary}; run `{command}` to drop them.")
        return 1
    print(f"{summary}.")
    return 0


def run_repair(args) -> int:
    done = repair(args.file)
    if done.backup is None:
        print(f"{args.file}: {done.kept} records, nothing to repair.")
        return 0
    _print_problems(args.file, done.dropped)
    print(
        f"{args.file}: kept {done.kept} records, dropped {len(done.dropped)} lines; "
        f"the original is saved as {done.backup}."
    )
    return 0
