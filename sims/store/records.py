"""One record per line: how a line of a results file is written and read back.

A record is a JSON object on one line (UTF-8) with a non-empty string ``"key"``; its
values are what JSON reads back as themselves (objects with string field names, arrays,
strings, integers, finite floats, booleans, null). :func:`encode_record` refuses anything
else before it is written, naming the key and the field. Read back, every complete line
must be a record with a key no earlier line holds; anything else (invalid UTF-8, malformed
or non-finite JSON, no key, a key seen on an earlier line) is a ValueError naming the
file, the line number and the command that repairs it, ``pruneleak results repair FILE``
(:mod:`sims.store.repair`).
"""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType


class BadLine(ValueError):
    """What is wrong with one line of a results file (without file and line number)."""


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def parse_line(raw: bytes) -> dict:
    """The record on one line (bytes, newline excluded), or BadLine saying why not."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BadLine(
            f"invalid UTF-8 (byte 0x{raw[err.start]:02x} at byte {err.start + 1} of the line)"
        ) from None
    try:
        record = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise BadLine("JSON nested too deeply to read") from None
    except json.JSONDecodeError as err:
        raise BadLine(f"not JSON ({err.msg}, column {err.colno})") from None
    except ValueError as err:  # NaN/Infinity, or an integer too long to read
        raise BadLine(f"not JSON ({err})") from None
    if not isinstance(record, dict):
        kind = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
        raise BadLine(f"{kind.get(type(record), 'a number')}, not a JSON object")
    key = record.get("key")
    if not isinstance(key, str) or not key:
        raise BadLine(f"a record without a non-empty string 'key' (got {key!r})")
    return record


def numbered_records(data: bytes, path: Path, *, first_line: int = 1) -> Iterator[tuple[int, dict]]:
    """(line number, record) of each non-blank line of ``data`` (complete lines)."""
    for number, raw in enumerate(data.split(b"\n")[:-1], start=first_line):
        if raw.strip():
            try:
                yield number, parse_line(raw)
            except BadLine as err:
                raise _damaged(path, number, str(err)) from None


def each_key_once(lines, path: Path, known: Mapping[str, int] = MappingProxyType({})):
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
    """Raise BadLine unless ``value`` is JSON that reads back as itself: dicts with
    string field names, lists/tuples, str, int, finite float, bool, None."""
    if isinstance(value, dict):
        for name, item in value.items():
            if not isinstance(name, str):
                raise BadLine(
                    f"the field name {name!r} in {where} is of type {type(name).__name__}; "
                    f"JSON field names are strings (it would read back as {str(name)!r})"
                )
            _check_value(item, f"{where}[{name!r}]")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _check_value(item, f"{where}[{i}]")
    elif isinstance(value, float) and not math.isfinite(value):
        raise BadLine(f"{where} is {value!r}; JSON has no NaN or infinity (store None)")
    elif value is not None and not isinstance(value, str | int | float):
        raise BadLine(f"{where} is of type {type(value).__name__}, which JSON cannot hold")


def encode_record(record) -> bytes:
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
    except ValueError as err:  # BadLine, or an integer too long to write
        raise ValueError(f"The 'record' parameter of {func} (key {key!r}): {err}.") from None
    return (line + "\n").encode("utf-8")
