import json

import pytest

from sims.core.store import ResultStore


def test_append_then_read_back(tmp_path):
    store = ResultStore(tmp_path / "sub" / "r.jsonl")
    store.append({"key": "a", "value": 1.5})
    store.append({"key": "b", "value": 2})
    assert [r["key"] for r in store.records()] == ["a", "b"]
    assert store.done() == {"a", "b"}


def test_torn_last_line_is_dropped_and_overwritten(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"key": "a"}) + "\n" + '{"key": "b", "val')
    store = ResultStore(path)
    assert store.done() == {"a"}
    store.append({"key": "b"})
    assert [r["key"] for r in store.records()] == ["a", "b"]


@pytest.mark.parametrize("record", [{"value": 1}, {"key": 3}])
def test_record_needs_string_key(tmp_path, record):
    with pytest.raises(ValueError, match="needs a string 'key'"):
        ResultStore(tmp_path / "r.jsonl").append(record)


def test_nan_is_refused_not_written(tmp_path):
    store = ResultStore(tmp_path / "r.jsonl")
    with pytest.raises(ValueError):
        store.append({"key": "a", "value": float("nan")})
    assert list(store.records()) == []


def test_corrupt_middle_line_names_the_file_and_line(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"key": "a"}\nnot json\n{"key": "b"}\n')
    with pytest.raises(ValueError, match=r"r.jsonl:2 is not a JSON record"):
        ResultStore(path).done()
