"""Resumable JSON-lines results store: one record per finished job, each key once.

A results file holds one JSON object per line (UTF-8), each with a non-empty string
``"key"`` that no other line of the file holds. A sweep asks :meth:`ResultStore.done`
(or ``key in store``) and skips finished jobs, so a rerun resumes; each record is written
with append + flush + fsync, so a killed sweep loses at most the job in flight.

Writers and the lock. :meth:`ResultStore.append` holds an exclusive ``fcntl.flock`` on
the results file itself (POSIX) for the length of one append: it reads what other
writers appended since its last look, refuses a key the file already holds (it logs a
warning and returns False), drops a torn last line left by a killed writer, then writes
the line. A second writer *waits* for the lock (up to ``lock_timeout`` seconds, then a
TimeoutError names the file) rather than failing, so two sweeps on one file share the
work: each skips jobs the other recorded, and a job both happened to run is recorded
once. The lock is on the data file, not on a sidecar, so no extra file is left behind;
:func:`repair` replaces the file under that lock, and a writer that was waiting notices
the replacement and locks the new file instead.

Readers take no lock: :meth:`ResultStore.records` and :meth:`ResultStore.done` read
complete lines only (a line is complete once its newline is written); a last line without
its newline is a write in flight, or torn, and is skipped. ``done()`` and ``key in store``
keep an index of the keys and read only the bytes appended since the previous call, so
they stay cheap for stores of thousands of records.

Damage. Every complete line must be a record as above; anything else (invalid UTF-8,
malformed or non-finite JSON, no key, a key seen on an earlier line) is a ValueError naming
the file, the line number and the command that repairs it, ``pruneleak results repair
FILE`` (:func:`repair`): it keeps every valid record and the first of repeated keys, and
saves the original as ``FILE.bak`` first. :func:`check` lists the problems without
changing anything.
"""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import math
import os
import shlex
import stat
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from pruneleak.bounds.validation import check_real

logger = logging.getLogger(__name__)

#: Seconds between two tries of a lock another writer holds.
_LOCK_POLL_S = 0.01


def key_number(value: float) -> str:
    """``value`` as written in a record key: the short ``{:g}`` form where it reads back
    as the same float (the keys written before, ``p=0.5``), else the exact ``repr``, so
    that two distinct grid values (0.5 and 0.5000001) never share one key.

    >>> key_number(0.5), key_number(0.5000001), key_number(1e-07), key_number(123456789.0)
    ('0.5', '0.5000001', '1e-07', '123456789.0')
    """
    short = f"{value:g}"
    return short if float(short) == value else repr(float(value))


class _BadLine(ValueError):
    """What is wrong with one line of a results file (without file and line number)."""


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


class ResultStore:
    """Append-only JSON-lines file of job records keyed by ``record["key"]`` (see the
    module docstring for the lock, the index and the checks).

    Args:
        path: the results file (created with its folder on the first append).
        lock_timeout: seconds an append waits for another writer's lock before it raises
            TimeoutError (>= 0).
    """

    def __init__(self, path: str | os.PathLike, *, lock_timeout: float = 600.0):
        self.path = _results_path(path, func="ResultStore")
        self.lock_timeout = check_real("lock_timeout", lock_timeout, func="ResultStore", low=0)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise ValueError(
                f"Cannot create the folder of the results file {self.path}: {err.strerror}."
            ) from err
        self._forget()
        if not _ends_with_newline(self.path):
            with _lock(self.path, timeout=self.lock_timeout) as fh:
                _end_cleanly(fh, self.path)

    def _forget(self) -> None:
        """Empty the index (keys by line number, lines and bytes indexed, file identity)."""
        self._keys: dict[str, int] = {}
        self._lines = 0
        self._offset = 0
        self._identity: tuple[int, int] | None = None

    def _refresh(self) -> None:
        """Index the complete lines written since the last call, by any writer; start over
        when the file was replaced (repaired, edited) or truncated since."""
        try:
            with open(self.path, "rb") as fh:
                stat = os.fstat(fh.fileno())
                identity = (stat.st_dev, stat.st_ino)
                if identity != self._identity or stat.st_size < self._offset:
                    self._forget()
                    self._identity = identity
                fh.seek(self._offset)
                data = fh.read()
        except FileNotFoundError:
            self._forget()
            return
        end = data.rfind(b"\n") + 1
        lines = _records(data[:end], self.path, first_line=self._lines + 1)
        self._keys.update(
            {r["key"]: number for number, r in _each_key_once(lines, self.path, self._keys)}
        )
        self._lines += data.count(b"\n", 0, end)
        self._offset += end

    def __contains__(self, key: object) -> bool:
        """Whether the file holds a record of ``key`` now (written by any process)."""
        self._refresh()
        return key in self._keys

    def done(self) -> set[str]:
        """Keys of the jobs already recorded."""
        self._refresh()
        return set(self._keys)

    def records(self) -> Iterator[dict]:
        """Yield every complete record in file order (ValueError at a damaged line)."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return
        lines = _records(data[: data.rfind(b"\n") + 1], self.path)
        for _, record in _each_key_once(lines, self.path):
            yield record

    def append(self, record: dict) -> bool:
        """Durably append ``record`` (a JSON-able dict with a non-empty string ``key``).

        Returns True when written, False when the file already holds the key (written by
        this or another process); then nothing is written and a warning is logged, so
        that a key is recorded at most once.
        """
        line = _encode(record)
        with _lock(self.path, timeout=self.lock_timeout) as fh:
            _end_cleanly(fh, self.path)
            self._refresh()
            first = self._keys.get(record["key"])
            if first is not None:
                logger.warning(
                    "%s already holds %r (line %d); the new record is not written.",
                    self.path,
                    record["key"],
                    first,
                )
                return False
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())
            self._refresh()
        return True


def _results_path(path, *, func: str) -> Path:
    """``path`` as a Path to a results file, or ValueError (no path, empty, a folder)."""
    if isinstance(path, bytes) or not isinstance(path, str | os.PathLike):
        raise ValueError(
            f"The 'path' parameter of {func} must be a file path (str or os.PathLike). "
            f"Got {path!r} instead."
        )
    if not os.fspath(path):
        raise ValueError(f"The 'path' parameter of {func} must name a file. Got '' instead.")
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise ValueError(f"The results file {path} is a symbolic link loop.") from None
        return path  # not there yet (a writer creates it); other errors where it is opened
    if stat.S_ISDIR(mode):
        raise ValueError(
            f"The results file {path} is a directory; name a file in it, such as "
            f"{path / 'results.jsonl'}."
        )
    if not stat.S_ISREG(mode):  # reading a FIFO or a device would block or never end
        kind = (
            "a FIFO"
            if stat.S_ISFIFO(mode)
            else "a device"
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket or other special file"
        )
        raise ValueError(
            f"The results file {path} is {kind}, not a regular file; name a JSON-lines file."
        )
    return path


def _ends_with_newline(path: Path) -> bool:
    """Whether ``path`` is missing, empty or ends with a newline (read without a lock)."""
    try:
        with open(path, "rb") as fh:
            if fh.seek(0, os.SEEK_END) == 0:
                return True
            fh.seek(-1, os.SEEK_END)
            return fh.read(1) == b"\n"
    except FileNotFoundError:
        return True


@contextmanager
def _lock(path: Path, *, timeout: float, exclusive: bool = True):
    """Hold a flock on ``path``: exclusive for a writer (the file opened for appending,
    created if missing), shared for a reader that needs a still view. Waits up to
    ``timeout`` seconds for another holder; if the file was replaced while this one
    waited (:func:`repair`), locks the new file instead."""
    deadline = time.monotonic() + timeout
    while True:
        with open(path, "a+b" if exclusive else "rb") as fh:
            _acquire(fh, path, exclusive=exclusive, deadline=deadline, timeout=timeout)
            if os.path.samestat(os.fstat(fh.fileno()), os.stat(path)):
                yield fh
                return
        # replaced while this one waited: lock the file that is there now


def _acquire(fh, path: Path, *, exclusive: bool, deadline: float, timeout: float) -> None:
    operation = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
    while True:
        try:
            fcntl.flock(fh.fileno(), operation)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    f"The results file {path} stayed locked by another process for "
                    f"{timeout:g} s (another sweep writing to it, or one that hangs)."
                ) from None
            time.sleep(_LOCK_POLL_S)


def _end_cleanly(fh, path: Path) -> None:
    """Under the exclusive lock, make the file end with a newline: a last line without
    one is the torn write of a killed writer (dropped, with a warning), or a complete
    record whose newline is missing (kept; the newline is added)."""
    size = fh.seek(0, os.SEEK_END)
    if size == 0:
        return
    fh.seek(max(0, size - 1))
    if fh.read(1) == b"\n":
        return
    fh.seek(0)
    data = fh.read()
    cut = data.rfind(b"\n") + 1
    try:
        _parse_line(data[cut:])
    except _BadLine:
        logger.warning(
            "Dropping a partially written record (%d bytes) at the end of %s",
            len(data) - cut,
            path,
        )
        fh.truncate(cut)
    else:
        fh.write(b"\n")
    fh.flush()
    os.fsync(fh.fileno())


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _parse_line(raw: bytes) -> dict:
    """The record on one line (bytes, newline excluded), or _BadLine saying why not."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise _BadLine(
            f"invalid UTF-8 (byte 0x{raw[err.start]:02x} at byte {err.start + 1} of the line)"
        ) from None
    try:
        record = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise _BadLine("JSON nested too deeply to read") from None
    except json.JSONDecodeError as err:
        raise _BadLine(f"not JSON ({err.msg}, column {err.colno})") from None
    except ValueError as err:  # NaN/Infinity, or an integer too long to read
        raise _BadLine(f"not JSON ({err})") from None
    if not isinstance(record, dict):
        kind = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
        raise _BadLine(f"{kind.get(type(record), 'a number')}, not a JSON object")
    key = record.get("key")
    if not isinstance(key, str) or not key:
        raise _BadLine(f"a record without a non-empty string 'key' (got {key!r})")
    return record


def _records(data: bytes, path: Path, *, first_line: int = 1) -> Iterator[tuple[int, dict]]:
    """(line number, record) of each non-blank line of ``data`` (complete lines)."""
    for number, raw in enumerate(data.split(b"\n")[:-1], start=first_line):
        if raw.strip():
            try:
                yield number, _parse_line(raw)
            except _BadLine as err:
                raise _damaged(path, number, str(err)) from None


def _each_key_once(lines, path: Path, known: Mapping[str, int] = MappingProxyType({})):
    """Pass on (line number, record) pairs; ValueError at a key seen on an earlier line
    (of ``lines``, or in ``known``: key -> line number)."""
    seen: dict[str, int] = {}
    for number, record in lines:
        key = record["key"]
        first = known.get(key, seen.get(key))
        if first is not None:
            raise _damaged(path, number, f"the key {key!r} is already on line {first}")
        seen[key] = number
        yield number, record


def _damaged(path: Path, line: int, reason: str) -> ValueError:
    command = f"pruneleak results repair {shlex.quote(str(path))}"
    return ValueError(
        f"The results file {path}, line {line}: {reason}. Run `{command}` to keep every "
        f"valid record (the original is saved as {path}.bak first)."
    )


def _check_value(value, where: str) -> None:
    """Raise _BadLine unless ``value`` is JSON that reads back as itself: dicts with
    string field names, lists/tuples, str, int, finite float, bool, None."""
    if isinstance(value, dict):
        for name, item in value.items():
            if not isinstance(name, str):
                raise _BadLine(
                    f"the field name {name!r} in {where} is of type {type(name).__name__}; "
                    f"JSON field names are strings (it would read back as {str(name)!r})"
                )
            _check_value(item, f"{where}[{name!r}]")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _check_value(item, f"{where}[{i}]")
    elif isinstance(value, float) and not math.isfinite(value):
        raise _BadLine(f"{where} is {value!r}; JSON has no NaN or infinity (store None)")
    elif value is not None and not isinstance(value, str | int | float):
        raise _BadLine(f"{where} is of type {type(value).__name__}, which JSON cannot hold")


def _encode(record) -> bytes:
    """``record`` as one JSON line, or ValueError naming the key and the bad field."""
    func = "ResultStore.append"
    if not isinstance(record, dict):
        raise ValueError(
            f"The 'record' parameter of {func} must be a dict. Got {type(record).__name__} instead."
        )
    key = record.get("key")
    if not isinstance(key, str) or not key:
        raise ValueError(
            f"The 'record' parameter of {func} needs a non-empty string 'key'. Got {key!r} instead."
        )
    try:
        _check_value(record, "record")
        line = json.dumps(record, sort_keys=True, allow_nan=False)
    except RecursionError:
        raise ValueError(
            f"The 'record' parameter of {func} (key {key!r}) is nested too deeply for JSON."
        ) from None
    except ValueError as err:  # _BadLine, or an integer too long to write
        raise ValueError(f"The 'record' parameter of {func} (key {key!r}): {err}.") from None
    return (line + "\n").encode("utf-8")


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
            key = _parse_line(raw)["key"]
        except _BadLine as err:
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
    path = _results_path(path, func=func)
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
    with _lock(path, timeout=lock_timeout, exclusive=False) as fh:
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
    with _lock(path, timeout=lock_timeout) as fh:
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
