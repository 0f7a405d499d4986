"""Resumable JSON-lines results store: one record per finished job, each key once.

A results file holds one JSON object per line (UTF-8), each with a non-empty string
``"key"`` that no other line of the file holds (:mod:`sims.store.records`). A sweep asks
:meth:`ResultStore.done` (or ``key in store``) and skips finished jobs, so a rerun resumes;
each record is written with append + flush + fsync, so a killed sweep loses at most the job
in flight.

Writers. :meth:`ResultStore.append` holds the file's exclusive lock
(:mod:`sims.store.locking`) for the length of one append: it reads what other writers
appended since its last look, refuses a key the file already holds (it logs a warning and
returns False), drops a torn last line left by a killed writer, then writes the line.

Readers take no lock: :meth:`ResultStore.records` and :meth:`ResultStore.done` read
complete lines only (a line is complete once its newline is written); a last line without
its newline is a write in flight, or torn, and is skipped. ``done()`` and ``key in store``
keep an index of the keys and read only the bytes appended since the previous call, so
they stay cheap for stores of thousands of records.

Damage. A complete line that is not a record is a ValueError naming the file, the line
and the command that repairs it; :mod:`sims.store.repair` checks and repairs the file.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from pruneleak.bounds.validation import check_real
from pruneleak.sims.store.locking import locked
from pruneleak.sims.store.records import (
    BadLine,
    each_key_once,
    encode_record,
    numbered_records,
    parse_line,
)

logger = logging.getLogger(__name__)


class ResultStore:
    """Append-only JSON-lines file of job records keyed by ``record["key"]`` (see the
    module docstring for the index and the checks, :mod:`sims.store.locking` for the lock).

    Args:
        path: the results file (created with its folder on the first append).
        lock_timeout: seconds an append waits for another writer's lock before it raises
            TimeoutError (>= 0).
    """

    def __init__(self, path: str | os.PathLike, *, lock_timeout: float = 600.0):
        self.path = results_path(path, func="ResultStore")
        self.lock_timeout = check_real("lock_timeout", lock_timeout, func="ResultStore", low=0)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise ValueError(
                f"Cannot create the folder of the results file {self.path}: {err.strerror}."
            ) from err
        self._forget()
        if not _ends_with_newline(self.path):
            with locked(self.path, timeout=self.lock_timeout) as fh:
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
        lines = numbered_records(data[:end], self.path, first_line=self._lines + 1)
        self._keys.update(
            {r["key"]: number for number, r in each_key_once(lines, self.path, self._keys)}
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
        lines = numbered_records(data[: data.rfind(b"\n") + 1], self.path)
        for _, record in each_key_once(lines, self.path):
            yield record

    def append(self, record: dict) -> bool:
        """Durably append ``record`` (a JSON-able dict with a non-empty string ``key``).

        Returns True when written, False when the file already holds the key (written by
        this or another process); then nothing is written and a warning is logged, so
        that a key is recorded at most once.
        """
        line = encode_record(record)
        with locked(self.path, timeout=self.lock_timeout) as fh:
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


def results_path(path, *, func: str) -> Path:
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
        parse_line(data[cut:])
    except BadLine:
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
