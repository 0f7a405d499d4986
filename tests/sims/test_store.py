"""sims.store: records read back, torn and damaged lines, a key at most once, the
index shared with other writers, the lock, and check/repair."""

import fcntl
import json
import logging
import os
import threading
import time

import pytest

from pruneleak.sims.store.repair import check, repair
from pruneleak.sims.store.results import ResultStore


def lines(*records) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def test_append_then_read_back(tmp_path):
    store = ResultStore(tmp_path / "sub" / "r.jsonl")
    assert store.append({"key": "a", "value": 1.5}) is True
    assert store.append({"key": "b", "value": 2, "nested": {"x": [1, None]}}) is True
    assert list(store.records()) == [
        {"key": "a", "value": 1.5},
        {"key": "b", "value": 2, "nested": {"x": [1, None]}},
    ]
    assert store.done() == {"a", "b"}
    assert "a" in store and "c" not in store


def test_torn_last_line_is_dropped_and_overwritten(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(lines({"key": "a"}) + '{"key": "b", "val')
    store = ResultStore(path)
    assert store.done() == {"a"}
    store.append({"key": "b"})
    assert [r["key"] for r in store.records()] == ["a", "b"]


def test_complete_last_record_without_newline_is_kept(tmp_path):
    """A hand-written file may lack its last newline: the record is not torn, keep it."""
    path = tmp_path / "r.jsonl"
    path.write_text(lines({"key": "a"}) + json.dumps({"key": "b"}))
    store = ResultStore(path)
    assert store.done() == {"a", "b"}
    store.append({"key": "c"})
    assert path.read_text() == lines({"key": "a"}, {"key": "b"}, {"key": "c"})


def test_a_line_torn_after_the_store_was_opened_is_ignored_then_dropped(tmp_path):
    path = tmp_path / "r.jsonl"
    store = ResultStore(path)
    store.append({"key": "a"})
    with open(path, "ab") as fh:  # a writer killed in mid-line
        fh.write(b'{"key": "b", "v": [1, 2')
    assert store.done() == {"a"} and [r["key"] for r in store.records()] == ["a"]
    store.append({"key": "c"})
    assert path.read_text() == lines({"key": "a"}, {"key": "c"})


@pytest.mark.parametrize(
    ("record", "shown"),
    [({"value": 1}, "None"), ({"key": 3}, "3"), ({"key": ""}, "''")],
)
def test_record_needs_a_non_empty_string_key(tmp_path, record, shown):
    with pytest.raises(ValueError, match=f"needs a non-empty string 'key'. Got {shown} instead"):
        ResultStore(tmp_path / "r.jsonl").append(record)


@pytest.mark.parametrize(
    ("record", "match"),
    [
        ({"key": "k", "v": [1.0, float("nan")]}, r"record\['v'\]\[1\] is nan"),
        ({"key": "k", "v": {"w": float("-inf")}}, r"record\['v'\]\['w'\] is -inf"),
        ({"key": "k", "v": {1: 2.0}}, r"the field name 1 in record\['v'\] is of type int"),
        ({"key": "k", "v": {1, 2}}, r"record\['v'\] is of type set"),
    ],
)
def test_a_record_json_cannot_hold_is_refused_naming_key_and_field(tmp_path, record, match):
    store = ResultStore(tmp_path / "r.jsonl")
    with pytest.raises(ValueError, match=r"\(key 'k'\): " + match):
        store.append(record)
    assert list(store.records()) == [] and not store.path.exists()


def test_appending_a_recorded_key_again_writes_nothing_and_warns(tmp_path, caplog):
    store = ResultStore(tmp_path / "r.jsonl")
    store.append({"key": "a", "v": 1})
    before = store.path.read_bytes()
    with caplog.at_level(logging.WARNING, logger="pruneleak.sims.store.results"):
        assert store.append({"key": "a", "v": 2}) is False
    assert store.path.read_bytes() == before
    assert "already holds 'a' (line 1)" in caplog.text


def test_the_index_sees_what_another_writer_appended(tmp_path):
    path = tmp_path / "r.jsonl"
    mine, other = ResultStore(path), ResultStore(path)
    mine.append({"key": "a"})
    assert other.done() == {"a"}
    other.append({"key": "b"})
    assert "b" in mine and mine.done() == {"a", "b"}
    assert mine.append({"key": "b", "v": "mine"}) is False
    assert [r["key"] for r in ResultStore(path).records()] == ["a", "b"]


def test_an_append_refuses_a_key_another_writer_appended_after_its_last_look(tmp_path):
    """Catches a disabled incremental index: A has read the file (its index is built), B
    appends k, then A.append(k) must read B's bytes under the lock and refuse, with no
    ``k in A`` or new ResultStore in between, and A's next look must see k."""
    path = tmp_path / "r.jsonl"
    a, b = ResultStore(path), ResultStore(path)
    a.append({"key": "first"})
    assert a.done() == {"first"} and "k" not in a  # A's index is built, and stale below
    assert b.append({"key": "k", "by": "B"}) is True
    size = path.stat().st_size
    assert a.append({"key": "k", "by": "A"}) is False
    assert path.stat().st_size == size
    assert list(ResultStore(path).records()) == [{"key": "first"}, {"key": "k", "by": "B"}]
    assert "k" in a and a.done() == {"first", "k"}
    # And the other way round, A's own append read back by B incrementally:
    assert a.append({"key": "later"}) is True
    assert "later" in b and b.append({"key": "later"}) is False
    assert [r["key"] for r in ResultStore(path).records()] == ["first", "k", "later"]


def test_a_repeated_key_written_after_the_last_look_is_damage(tmp_path):
    """Catches an incremental read that checks the new lines among themselves only: a
    line repeating an indexed key, written after the index was built (by a writer that
    ignored the lock, or an edit), is the same damage a fresh read reports."""
    path = tmp_path / "r.jsonl"
    store = ResultStore(path)
    store.append({"key": "a"})
    store.append({"key": "b"})
    assert store.done() == {"a", "b"}
    with open(path, "a") as fh:  # appended in place: same file, the index keeps its offset
        fh.write(lines({"key": "c"}, {"key": "a", "v": 2}))
    message = r"r\.jsonl.*line 4.*the key 'a' is already on line 1"
    with pytest.raises(ValueError, match=message):
        ResultStore(path).done()
    with pytest.raises(ValueError, match=message):
        _ = "c" in store


def test_the_index_starts_over_when_the_file_is_replaced(tmp_path):
    """An index that kept its byte offset across a replaced file would read from the
    middle of a line (an error) or skip records (a wrong answer)."""
    path = tmp_path / "r.jsonl"
    store = ResultStore(path)
    for key in "abc":
        store.append({"key": key})
    assert store.done() == {"a", "b", "c"}
    replacement = tmp_path / "new.jsonl"
    replacement.write_text(lines(*({"key": f"z{i}", "pad": "x" * i} for i in range(5))))
    os.replace(replacement, path)
    assert store.done() == {f"z{i}" for i in range(5)}
    path.write_text(lines({"key": "y"}))  # truncated in place, then rewritten
    assert store.done() == {"y"}


@pytest.mark.parametrize(
    ("content", "line", "reason"),
    [
        (b'{"key": "a"}\nnot json\n{"key": "b"}\n', 2, "not JSON"),
        (b'{"key": "a"}\n{"key": "b", "v\n{"key": "c"}\n', 2, "not JSON"),
        (b'{"key": "a"}\n\n{"key": "\xff"}\n', 3, "invalid UTF-8 (byte 0xff"),
        (b'{"key": "a", "v": NaN}\n', 1, "NaN is not a JSON number"),
        (b'[{"key": "a"}]\n', 1, "an array, not a JSON object"),
        (b'{"value": 1}\n', 1, "without a non-empty string 'key' (got None)"),
        (b'{"key": "a"}\n{"key": "b"}\n{"key": "a"}\n', 3, "the key 'a' is already on line 1"),
        (b'{"key": "a", "v": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n", 1, "too deeply"),
    ],
)
def test_a_damaged_line_names_the_file_the_line_and_the_repair(tmp_path, content, line, reason):
    path = tmp_path / "r.jsonl"
    path.write_bytes(content)
    store = ResultStore(path)
    for read in (store.done, lambda: list(store.records())):
        with pytest.raises(ValueError) as info:
            read()
        message = str(info.value)
        assert f"{path}, line {line}: " in message and reason in message, message
        assert f"pruneleak results repair {path}" in message
    with pytest.raises(ValueError, match=f"line {line}: "):
        store.append({"key": "new"})  # nothing is added to a damaged file
    assert path.read_bytes() == content


@pytest.mark.parametrize("bad", [None, 3, b"r.jsonl", ""])
def test_a_path_that_is_not_a_file_name_is_refused(bad):
    with pytest.raises(ValueError, match="The 'path' parameter of ResultStore"):
        ResultStore(bad)


def test_a_directory_or_a_file_in_the_way_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match=f"{tmp_path} is a directory"):
        ResultStore(tmp_path)
    (tmp_path / "f").write_text("")
    with pytest.raises(ValueError, match="Cannot create the folder of the results file"):
        ResultStore(tmp_path / "f" / "r.jsonl")


def _hold_lock(path):
    fh = open(path, "a+b")  # noqa: SIM115 -- released by the caller
    fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
    return fh


def test_a_second_writer_waits_for_the_lock(tmp_path):
    store = ResultStore(tmp_path / "r.jsonl")
    store.append({"key": "a"})
    holder = _hold_lock(store.path)
    finished = []
    writer = threading.Thread(target=lambda: finished.append(store.append({"key": "b"})))
    writer.start()
    time.sleep(0.3)
    assert finished == [] and store.done() == {"a"}  # waiting, nothing written
    holder.close()
    writer.join(timeout=10)
    assert finished == [True] and store.done() == {"a", "b"}


def test_a_lock_held_too_long_is_a_timeout_naming_the_file(tmp_path):
    store = ResultStore(tmp_path / "r.jsonl", lock_timeout=0.1)
    holder = _hold_lock(store.path)
    try:
        with pytest.raises(TimeoutError, match=f"{store.path} stayed locked .* for 0.1 s"):
            store.append({"key": "a"})
    finally:
        holder.close()
    assert store.path.read_bytes() == b""


def test_the_lock_covers_the_look_for_the_key_and_the_write(tmp_path):
    """A writer that has looked for its key and not yet written must keep a second writer
    of the same key out; else both find the key missing and both write it."""
    path = tmp_path / "r.jsonl"
    first, second = ResultStore(path), ResultStore(path)
    looked, second_done = threading.Event(), threading.Event()
    refresh = first._refresh

    def look_then_pause():
        refresh()
        if not looked.is_set():  # the look before the write, not the one after it
            looked.set()
            second_done.wait(timeout=0.5)  # a second writer gets this long to slip in

    first._refresh = look_then_pause
    writer = threading.Thread(target=first.append, args=({"key": "k", "by": "first"},))
    writer.start()
    looked.wait(timeout=10)
    second.append({"key": "k", "by": "second"})
    second_done.set()
    writer.join(timeout=10)
    assert list(ResultStore(path).records()) == [{"key": "k", "by": "first"}]


@pytest.mark.parametrize("bad", [-1, float("nan"), "10"])
def test_lock_timeout_must_be_a_non_negative_number(tmp_path, bad):
    with pytest.raises(ValueError, match="The 'lock_timeout' parameter of ResultStore"):
        ResultStore(tmp_path / "r.jsonl", lock_timeout=bad)


def test_a_writer_waiting_while_the_file_is_replaced_appends_to_the_new_file(tmp_path):
    """repair replaces the file under the lock; a writer that waited on the old file must
    not append to the unlinked old one (its record would be lost)."""
    path = tmp_path / "r.jsonl"
    store = ResultStore(path)
    store.append({"key": "a"})
    holder = _hold_lock(path)
    writer = threading.Thread(target=store.append, args=({"key": "b"},))
    writer.start()
    time.sleep(0.2)
    replacement = tmp_path / "new.jsonl"
    replacement.write_text(lines({"key": "a"}, {"key": "z"}))
    os.replace(replacement, path)
    holder.close()
    writer.join(timeout=10)
    assert [r["key"] for r in ResultStore(path).records()] == ["a", "z", "b"]


DAMAGED = (
    lines({"key": "a", "v": 1}).encode()
    + b"not json\n"
    + lines({"key": "b"}).encode()
    + b'{"key": "\xff"}\n'
    + lines({"key": "a", "v": 2}, {"key": "c"}).encode()
    + b'{"key": "d", "v'
)


def test_check_lists_every_problem_and_changes_nothing(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_bytes(DAMAGED)
    records, problems = check(path)
    assert records == 3
    assert [(p.line, p.reason) for p in problems] == [
        (2, "not JSON (Expecting value, column 1)"),
        (4, "invalid UTF-8 (byte 0xff at byte 10 of the line)"),
        (5, "the key 'a' is already on line 1"),
        (7, "torn last line: not JSON (Unterminated string starting at, column 14)"),
    ]
    assert path.read_bytes() == DAMAGED


def test_repair_keeps_every_valid_record_and_backs_up_the_original(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_bytes(DAMAGED)
    done = repair(path)
    assert done.kept == 3 and [p.line for p in done.dropped] == [2, 4, 5, 7]
    assert done.backup == tmp_path / "r.jsonl.bak"
    assert done.backup.read_bytes() == DAMAGED
    assert path.read_text() == lines({"key": "a", "v": 1}, {"key": "b"}, {"key": "c"})
    again = repair(path)  # nothing left to drop: no second backup
    assert (again.kept, again.dropped, again.backup) == (3, (), None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.jsonl", "r.jsonl.bak"]


def test_repair_refuses_to_overwrite_a_backup(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_bytes(DAMAGED)
    (tmp_path / "r.jsonl.bak").write_text("earlier backup")
    with pytest.raises(ValueError, match=r"backup .*r.jsonl.bak .* exists already"):
        repair(path)
    assert path.read_bytes() == DAMAGED
    assert (tmp_path / "r.jsonl.bak").read_text() == "earlier backup"


def test_repair_refuses_a_file_without_any_record(tmp_path):
    path = tmp_path / "image.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\n")
    with pytest.raises(ValueError, match=r"image.png holds no valid record .* line 1"):
        repair(path)
    assert not (tmp_path / "image.png.bak").exists()


@pytest.mark.parametrize("func", [check, repair])
def test_check_and_repair_name_a_missing_file_or_a_directory(tmp_path, func):
    with pytest.raises(ValueError, match=f"{tmp_path / 'none.jsonl'} does not exist"):
        func(tmp_path / "none.jsonl")
    with pytest.raises(ValueError, match=f"{tmp_path} is a directory"):
        func(tmp_path)
