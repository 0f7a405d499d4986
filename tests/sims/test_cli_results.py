"""``pruneleak results check|repair``: what is printed, the exit status and the files."""

from __future__ import annotations

import json

import pytest

from pruneleak.sims.cli import main
from pruneleak.sims.store.results import ResultStore

GOOD = '{"key": "a", "v": 1}\n{"key": "b"}\n'
DAMAGED = GOOD + '{"key": "a", "v": 2}\n{"key": "c", "v\n{"key": "d"}\n'


def test_check_of_a_sound_file_exits_0(tmp_path, capsys):
    path = tmp_path / "r.jsonl"
    path.write_text(GOOD)
    assert main(["results", "check", str(path)]) == 0
    assert capsys.readouterr().out == f"{path}: 2 records, 0 damaged lines.\n"


def test_check_of_a_damaged_file_lists_the_lines_and_exits_1(tmp_path, capsys):
    path = tmp_path / "r.jsonl"
    path.write_text(DAMAGED)
    assert main(["results", "check", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{path}:3: the key 'a' is already on line 1"
    assert out[1].startswith(f"{path}:4: not JSON (")
    assert out[2] == (
        f"{path}: 3 records, 2 damaged lines; run `pruneleak results repair {path}` to drop them."
    )
    assert path.read_text() == DAMAGED


def test_repair_prints_what_it_dropped_and_keeps_the_rest(tmp_path, capsys):
    path = tmp_path / "r.jsonl"
    path.write_text(DAMAGED)
    assert main(["results", "repair", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split(": ")[0] for line in out[:2]] == [f"{path}:3", f"{path}:4"]
    assert out[2] == (
        f"{path}: kept 3 records, dropped 2 lines; the original is saved as {path}.bak."
    )
    assert (tmp_path / "r.jsonl.bak").read_text() == DAMAGED
    assert [json.loads(line) for line in path.read_text().splitlines()] == [
        {"key": "a", "v": 1},
        {"key": "b"},
        {"key": "d"},
    ]
    assert ResultStore(path).done() == {"a", "b", "d"}
    assert main(["results", "repair", str(path)]) == 0
    assert capsys.readouterr().out == f"{path}: 3 records, nothing to repair.\n"


@pytest.mark.parametrize("action", ["check", "repair"])
def test_a_missing_file_or_a_directory_exits_2_naming_it(tmp_path, capsys, action):
    for target, says in ((tmp_path / "none.jsonl", "does not exist"), (tmp_path, "directory")):
        with pytest.raises(SystemExit) as info:
            main(["results", action, str(target)])
        assert info.value.code == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err
        assert f"{target}" in err.splitlines()[-1] and says in err.splitlines()[-1]


def test_an_action_is_required(capsys):
    with pytest.raises(SystemExit) as info:
        main(["results"])
    assert info.value.code == 2
    assert "ACTION" in capsys.readouterr().err
