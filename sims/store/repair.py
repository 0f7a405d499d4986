"""Checking and repairing a damaged results file (``pruneleak results check|repair FILE``).

:func:`check` lists the lines that are not records (:mod:`sims.store.records`), and why,
without changing anything. :func:`repair` keeps every valid record and the first of
repeated keys, drops the other lines, and saves the original as ``FILE.bak`` first. Both
hold the file's lock (:mod:`sims.store.locking`), so neither reads an append half-way
through.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pruneleak.sims.store.locking import locked
from pruneleak.sims.store.records import BadLine, parse_line
from pruneleak.sims.store.results import results_path


@dataclass(frozen=True)
class Problem:
    """A line of a results file that is not a record: its 1-based number and why."""

    line: int
    reason: str


@dataclass(frozen=True)
class Repair:
    """What :func:`repair` did: the records kept, the lines dropped (with why) and the
    backup of the original (None when nothing had to change)."""

    path: Path
    kept: int
    dropped: tuple[Problem, ...]
    backup: Path | None


def _classify(data: bytes) -> tuple[list[bytes], list[Problem]]:
    """The lines of a results file worth keeping (first of each key, newline included)
    and the problems of the others, by line number; blank lines are neither."""
    kept: list[bytes] = []
    problems: list[Problem] = []
    first: dict[str, int] = {}
    lines = data.split(b"\n")
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            key = parse_line(raw)["key"]
        except BadLine as err:
            torn = number == len(lines)  # the last line, without its newline
            problems.append(Problem(number, f"torn last line: {err}" if torn else str(err)))
            continue
        if key in first:
            problems.append(Problem(number, f"the key {key!r} is already on line {first[key]}"))
            continue
        first[key] = number
        kept.append(raw + b"\n")
    return kept, problems


def _existing(path, func: str) -> Path:
    path = results_path(path, func=func)
    if not path.exists():
        if path.is_symlink():
            raise ValueError(
                f"The results file {path} is a broken symbolic link (to {os.readlink(path)}, "
                "which does not exist)."
            )
        raise ValueError(f"The results file {path} does not exist.")
    return path


def check(path: str | os.PathLike, *, lock_timeout: float = 600.0) -> tuple[int, list[Problem]]:
    """The number of valid records of the results file ``path`` and the problems of its
    other lines (read under a shared lock, so not while a record is half written)."""
    path = _existing(path, "check")
    with locked(path, timeout=lock_timeout, exclusive=False) as fh:
        fh.seek(0)
        kept, problems = _classify(fh.read())
    return len(kept), problems


def repair(path: str | os.PathLike, *, lock_timeout: float = 600.0) -> Repair:
    """Keep every valid record of ``path`` (the first of repeated keys), drop the rest.

    Under the exclusive lock: the original is copied to ``path.bak`` (refused if that
    exists, so no earlier backup is overwritten), the kept records are written to a
    temporary file that then replaces ``path`` (a crash leaves the original or the
    repaired file, never half of one). Nothing changes when there is nothing to drop.
    A file in which no line is a record is refused: it is probably not a results file.
    """
    path = _existing(path, "repair")
    backup = path.with_name(path.name + ".bak")
    with locked(path, timeout=lock_timeout) as fh:
        fh.seek(0)
        data = fh.read()
        kept, problems = _classify(data)
        if not problems:
            return Repair(path, len(kept), (), None)
        if not kept:
            raise ValueError(
                f"The results file {path} holds no valid record ({len(problems)} damaged "
                f"lines, the first: line {problems[0].line}: {problems[0].reason}); is it a "
                f"results file? Nothing was changed."
            )
        if backup.exists():
            raise ValueError(
                f"The backup {backup} of the results file {path} exists already; move it "
                f"away and repair again. Nothing was changed."
            )
        _write_durably(backup, data)
        temporary = path.with_name(f".{path.name}.repair")
        _write_durably(temporary, b"".join(kept))
        os.replace(temporary, path)
    return Repair(path, len(kept), tuple(problems), backup)


def _write_durably(path: Path, data: bytes) -> None:
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
