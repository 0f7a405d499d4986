"""One row of the invalid-input table: what is tried, and what a clear refusal looks like.

An :class:`ApiCase` calls the Python API; a :class:`CliCase` runs ``pruneleak`` in-process.
Both receive the test's temporary folder, so a case can write a tiny file in a real format
(a corrupt IDX file, a FEMNIST JSON with a list where a dict belongs) before it is tried.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class ApiCase:
    """``call(tmp_path)`` must raise ``error`` with every string of ``names`` in its message.

    ``names`` holds the parameter's name (or the file's name) and, where the message
    should show it, the offending value or the allowed range.
    """

    id: str
    call: Callable[[Path], object]
    names: Sequence[str]
    error: type[BaseException] = ValueError


@dataclass(frozen=True)
class CliCase:
    """``pruneleak *argv`` must exit with status 2, no traceback, and a last stderr line
    naming ``names``.

    ``argv`` items may contain ``{tmp}``, replaced by the temporary folder; ``setup``
    writes the files the command reads.
    """

    id: str
    argv: Sequence[str]
    names: Sequence[str]
    setup: Callable[[Path], None] | None = field(default=None)
