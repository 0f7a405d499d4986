"""Every invalid input of the table is refused with a clear message (issue 13).

The tables live next to this module, one per area (``invalid_cases_<area>.py``, each a
list ``CASES`` of :class:`ApiCase` and :class:`CliCase` rows). Each row says which
exception the call must raise (for the command line: exit status 2, no traceback, and a
last stderr line that says it all; argparse's own errors put the usage line before it)
and which names the message must contain: the parameter, the file, the value or the
allowed range.
"""

from __future__ import annotations

import importlib

import pytest
from invalid_case import ApiCase, CliCase

from pruneleak.sims.cli import main

TABLES = (
    "accounting",
    "priprune",
    "estimators",
    "store",
    "cli",
    "sims",
    "files",
    "defenses",
    "releases",
    "checkpoints",
    "fedltp",
    "leakage",
    "sweep",
)
ALL_CASES = [
    case for table in TABLES for case in importlib.import_module(f"invalid_cases_{table}").CASES
]
API_CASES = [case for case in ALL_CASES if isinstance(case, ApiCase)]
CLI_CASES = [case for case in ALL_CASES if isinstance(case, CliCase)]


def test_table_is_large_and_ids_are_unique():
    assert len(ALL_CASES) >= 150
    assert len(API_CASES) + len(CLI_CASES) == len(ALL_CASES)
    ids = [case.id for case in ALL_CASES]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


@pytest.mark.parametrize("case", API_CASES, ids=lambda case: case.id)
def test_api_refuses_with_a_named_error(case, tmp_path):
    with pytest.raises(case.error) as info:
        case.call(tmp_path)
    message = str(info.value)
    for name in case.names:
        assert name in message, f"{name!r} missing from: {message}"


@pytest.mark.parametrize("case", CLI_CASES, ids=lambda case: case.id)
def test_cli_exits_2_with_a_named_line(case, tmp_path, capsys):
    if case.setup is not None:
        case.setup(tmp_path)
    argv = [arg.replace("{tmp}", str(tmp_path)) for arg in case.argv]
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    for name in case.names:
        assert name.replace("{tmp}", str(tmp_path)) in last, f"{name!r} missing: {last}"
