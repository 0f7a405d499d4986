"""The lock the writers of a results file share: a ``fcntl.flock`` on the file itself.

:meth:`~sims.store.results.ResultStore.append` holds the exclusive lock (POSIX) for the
length of one append. A second writer *waits* for the lock (up to ``timeout`` seconds,
then a TimeoutError names the file) rather than failing, so two sweeps on one file share
the work: each skips jobs the other recorded, and a job both happened to run is recorded
once. The lock is on the data file, not on a sidecar, so no extra file is left behind;
:func:`~sims.store.repair.repair` replaces the file under that lock, and a writer that
was waiting notices the replacement and locks the new file instead.
:func:`~sims.store.repair.check` takes the lock shared, to read a file no writer is
half-way through.
"""

from __future__ import annotations

import fcntl
import os
import time
from contextlib import contextmanager
from pathlib import Path

#: Seconds between two tries of a lock another writer holds.
_LOCK_POLL_S = 0.01


@contextmanager
def locked(path: Path, *, timeout: float, exclusive: bool = True):
    """Hold a flock on ``path``: exclusive for a writer (the file opened for appending,
    created if missing), shared for a reader that needs a still view. Waits up to
    ``timeout`` seconds for another holder; if the file was replaced while this one
    waited (:func:`~sims.store.repair.repair`), locks the new file instead."""
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
