"""Resumable JSON-lines results store: one record per finished job.

Each record is written with append + flush + fsync, so a killed sweep loses at most the
job in flight. A record carries the job's ``key``; a rerun asks :meth:`ResultStore.done`
and skips finished jobs. A torn last line (the process died mid-write) is ignored on read
and overwritten by the next append.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path

logger = logging.getLogger(__name__)


class ResultStore:
    """Append-only JSON-lines file of job records keyed by ``record["key"]``."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._repair_torn_tail()

    def _repair_torn_tail(self) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            cut = data.rfind(b"\n") + 1
            logger.warning("Dropping a partially written record at the end of %s", self.path)
            with open(self.path, "r+b") as fh:
                fh.truncate(cut)

    def records(self) -> Iterator[dict]:
        """Yield every complete record in file order."""
        if not self.path.exists():
            return
        with open(self.path, encoding="utf-8") as fh:
            for line_number, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as err:
                    raise ValueError(
                        f"{self.path}:{line_number} is not a JSON record ({err.msg})."
                    ) from err

    def done(self) -> set[str]:
        """Keys of the jobs already recorded."""
        return {record["key"] for record in self.records() if "key" in record}

    def append(self, record: dict) -> None:
        """Durably append one record (must contain a string ``key``)."""
        if not isinstance(record.get("key"), str):
            raise ValueError(f"A result record needs a string 'key'. Got {record.get('key')!r}.")
        line = json.dumps(record, sort_keys=True, allow_nan=False) + "\n"
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())
