"""Invalid inputs of store: rows of test_invalid_inputs.

The results store (:mod:`sims.store`: paths, records, damaged files, check/repair),
sweep grids (:mod:`sims.sweep.grid`) and the sweep runner's arguments; on the command
line, the results files of ``sweep``, ``demo``, ``train`` and ``leakage``. Sweep rows pass
``--max-jobs 0`` so that a regression fails fast instead of running a sweep.
"""

import fcntl
import json

from invalid_case import ApiCase, CliCase

from pruneleak.sims.store.repair import check, repair
from pruneleak.sims.store.results import ResultStore
from pruneleak.sims.sweep import SweepConfig, read_config, run_sweep, sweep_records


def _write(path, content):
    """Write ``content`` (str or bytes) to ``path`` and return the path."""
    if isinstance(content, str):
        content = content.encode()
    path.write_bytes(content)
    return path


def _mkdir(path):
    path.mkdir(parents=True)
    return path


def _read(tmp, content):
    """done() of a store holding ``content``."""
    return ResultStore(_write(tmp / "r.jsonl", content)).done()


def _append(tmp, record):
    return ResultStore(tmp / "r.jsonl").append(record)


def _deep(levels):
    value = []
    for _ in range(levels):
        value = [value]
    return value


def _append_while_locked(tmp):
    """An append that finds the file locked by another writer for longer than it waits."""
    store = ResultStore(tmp / "r.jsonl", lock_timeout=0)
    with open(store.path, "a+b") as holder:
        fcntl.flock(holder.fileno(), fcntl.LOCK_EX)
        store.append({"key": "a"})


def _sweep(p_values):
    return SweepConfig(name="s", grids=({"pruning.p": p_values},))


A = json.dumps({"key": "a"}) + "\n"
B = json.dumps({"key": "b"}) + "\n"
DUP_TOML = 'name = "dup"\n[[grid]]\npanel = "p"\npruning.p = [0.3, 0.6, 0.3]\n'
SWEEP = ["sweep", "quick_digits", "--max-jobs", "0", "--no-table", "--results"]

CASES: list[ApiCase | CliCase] = [
    # --------------------------------------------------------------- the store's path
    ApiCase("store-path-none", lambda tmp: ResultStore(None), ["'path'", "ResultStore", "None"]),
    ApiCase("store-path-int", lambda tmp: ResultStore(3), ["'path'", "os.PathLike", "3"]),
    ApiCase("store-path-bytes", lambda tmp: ResultStore(b"r.jsonl"), ["'path'", "b'r.jsonl'"]),
    ApiCase("store-path-empty", lambda tmp: ResultStore(""), ["'path'", "name a file", "''"]),
    ApiCase(
        "store-path-directory",
        lambda tmp: ResultStore(_mkdir(tmp / "results.jsonl")),
        ["results.jsonl", "is a directory"],
    ),
    ApiCase(
        "store-path-parent-is-a-file",
        lambda tmp: ResultStore(_write(tmp / "blocker", "") / "r.jsonl"),
        ["Cannot create the folder", "blocker/r.jsonl", "File exists"],
    ),
    ApiCase(
        "store-lock-timeout-negative",
        lambda tmp: ResultStore(tmp / "r.jsonl", lock_timeout=-1),
        ["'lock_timeout'", "[0, inf)", "-1"],
    ),
    ApiCase(
        "store-lock-timeout-nan",
        lambda tmp: ResultStore(tmp / "r.jsonl", lock_timeout=float("nan")),
        ["'lock_timeout'", "nan"],
    ),
    ApiCase(
        "store-lock-held-past-timeout",
        _append_while_locked,
        ["r.jsonl", "stayed locked", "0 s"],
        error=TimeoutError,
    ),
    # --------------------------------------------------------------- records to append
    ApiCase(
        "store-append-none",
        lambda tmp: _append(tmp, None),
        ["'record'", "ResultStore.append", "dict", "NoneType"],
    ),
    ApiCase(
        "store-append-list",
        lambda tmp: _append(tmp, [("key", "a")]),
        ["'record'", "dict", "list"],
    ),
    ApiCase(
        "store-append-key-int",
        lambda tmp: _append(tmp, {"key": 3}),
        ["'record'", "non-empty string 'key'", "Got 3"],
    ),
    ApiCase(
        "store-append-key-empty",
        lambda tmp: _append(tmp, {"key": ""}),
        ["non-empty string 'key'", "Got ''"],
    ),
    ApiCase(
        "store-append-no-key",
        lambda tmp: _append(tmp, {"value": 1.0}),
        ["non-empty string 'key'", "Got None"],
    ),
    ApiCase(
        "store-append-nan",
        lambda tmp: _append(tmp, {"key": "k", "v": [1.0, float("nan")]}),
        ["key 'k'", "record['v'][1]", "nan"],
    ),
    ApiCase(
        "store-append-inf",
        lambda tmp: _append(tmp, {"key": "k", "lr": {"max": float("inf")}}),
        ["key 'k'", "record['lr']['max']", "inf"],
    ),
    ApiCase(
        "store-append-set",
        lambda tmp: _append(tmp, {"key": "k", "v": {1, 2}}),
        ["key 'k'", "record['v']", "set"],
    ),
    ApiCase(
        "store-append-int-field-name",
        lambda tmp: _append(tmp, {"key": "k", "per_client": {0: 1.0, "1": 2.0}}),
        ["key 'k'", "field name 0", "record['per_client']"],
    ),
    ApiCase(
        "store-append-nested-too-deeply",
        lambda tmp: _append(tmp, {"key": "k", "v": _deep(10_000)}),
        ["key 'k'", "nested too deeply"],
    ),
    ApiCase(
        "store-append-to-a-damaged-file",
        lambda tmp: ResultStore(_write(tmp / "r.jsonl", A + "garbage\n")).append({"key": "b"}),
        ["r.jsonl, line 2", "not JSON", "pruneleak results repair"],
    ),
    # --------------------------------------------------------------- damaged results files
    ApiCase(
        "store-read-torn-middle-line",
        lambda tmp: _read(tmp, A + '{"key": "b", "v\n' + B),
        ["r.jsonl, line 2", "not JSON", "pruneleak results repair", "r.jsonl.bak"],
    ),
    ApiCase(
        "store-read-invalid-utf8",
        lambda tmp: _read(tmp, A.encode() + b"\n" + b'{"key": "\xff"}\n'),
        ["r.jsonl, line 3", "invalid UTF-8", "0xff"],
    ),
    ApiCase(
        "store-read-array",
        lambda tmp: _read(tmp, A + '["key", "b"]\n'),
        ["r.jsonl, line 2", "an array, not a JSON object"],
    ),
    ApiCase(
        "store-read-number",
        lambda tmp: _read(tmp, "3\n"),
        ["r.jsonl, line 1", "a number, not a JSON object"],
    ),
    ApiCase(
        "store-read-no-key",
        lambda tmp: _read(tmp, A + '{"value": 1}\n'),
        ["r.jsonl, line 2", "'key'", "got None"],
    ),
    ApiCase(
        "store-read-int-key",
        lambda tmp: _read(tmp, '{"key": 7}\n'),
        ["r.jsonl, line 1", "'key'", "got 7"],
    ),
    ApiCase(
        "store-read-nan",
        lambda tmp: _read(tmp, '{"key": "a", "nmi": NaN}\n'),
        ["r.jsonl, line 1", "NaN is not a JSON number"],
    ),
    ApiCase(
        "store-read-duplicate-key",
        lambda tmp: _read(tmp, A + B + A),
        ["r.jsonl, line 3", "'a' is already on line 1"],
    ),
    ApiCase(
        "store-records-duplicate-key",
        lambda tmp: list(ResultStore(_write(tmp / "r.jsonl", A + A)).records()),
        ["r.jsonl, line 2", "'a' is already on line 1"],
    ),
    ApiCase(
        "store-read-nested-too-deeply",
        lambda tmp: _read(tmp, '{"key": "a", "v": ' + "[" * 100_000 + "]" * 100_000 + "}\n"),
        ["r.jsonl, line 1", "nested too deeply"],
    ),
    ApiCase(
        "store-read-byte-order-mark",
        lambda tmp: _read(tmp, "\ufeff" + A),
        ["r.jsonl, line 1", "BOM"],
    ),
    # --------------------------------------------------------------- check and repair
    ApiCase(
        "store-check-missing-file",
        lambda tmp: check(tmp / "none.jsonl"),
        ["none.jsonl", "does not exist"],
    ),
    ApiCase(
        "store-repair-missing-file",
        lambda tmp: repair(tmp / "none.jsonl"),
        ["none.jsonl", "does not exist"],
    ),
    ApiCase(
        "store-repair-directory",
        lambda tmp: repair(_mkdir(tmp / "out")),
        ["out", "is a directory"],
    ),
    ApiCase(
        "store-repair-not-a-results-file",
        lambda tmp: repair(_write(tmp / "figure.png", b"\x89PNG\r\n\x1a\n\x00\x00IHDR\n")),
        ["figure.png", "holds no valid record", "line 1", "Nothing was changed"],
    ),
    ApiCase(
        "store-repair-backup-exists",
        lambda tmp: (_write(tmp / "r.jsonl.bak", "old"), repair(_write(tmp / "r.jsonl", A + A))),
        ["r.jsonl.bak", "exists already", "Nothing was changed"],
    ),
    # --------------------------------------------------------------- grids and the runner
    ApiCase(
        "store-grid-duplicate-value",
        lambda tmp: _sweep([0.5, 0.5]),
        ["'grids[0].pruning.p'", "SweepConfig", "0.5 twice", "[0.5, 0.5]"],
    ),
    ApiCase(
        "store-grid-duplicate-int-value",
        lambda tmp: SweepConfig(name="s", grids=({"fed.rounds": [1, 2, 1]},)),
        ["'grids[0].fed.rounds'", "1 twice"],
    ),
    ApiCase(
        "store-grid-duplicate-value-in-toml",
        lambda tmp: read_config(_write(tmp / "dup.toml", DUP_TOML)),
        ["dup.toml", "'grids[0].pruning.p'", "0.3 twice"],
    ),
    ApiCase(
        "store-grids-not-a-sequence",
        lambda tmp: SweepConfig(name="s", grids=5),
        ["'grids'", "SweepConfig", "sequence", "5"],
    ),
    ApiCase(
        "store-grids-a-single-table",
        lambda tmp: SweepConfig(name="s", grids={"pruning.p": [0.5]}),
        ["'grids'", "sequence", "{'pruning.p': [0.5]}"],
    ),
    ApiCase(
        "store-grid-panel-not-a-string",
        lambda tmp: SweepConfig(name="s", grids=({"panel": ["p"], "pruning.p": 0.5},)),
        ["'grids[0].panel'", "non-empty string", "['p']"],
    ),
    ApiCase(
        "store-run-sweep-store-none",
        lambda tmp: run_sweep(_sweep([0.5]), None),
        ["'store'", "run_sweep", "ResultStore", "NoneType"],
    ),
    ApiCase(
        "store-sweep-records-store-path",
        lambda tmp: sweep_records(_sweep([0.5]), str(tmp / "r.jsonl")),
        ["'store'", "sweep_records", "ResultStore", "str"],
    ),
    # --------------------------------------------------------------- the command line
    CliCase(
        "store-cli-sweep-results-directory",
        [*SWEEP, "{tmp}"],
        ["{tmp}", "is a directory"],
    ),
    CliCase(
        "store-cli-sweep-results-parent-is-a-file",
        [*SWEEP, "{tmp}/blocker/r.jsonl"],
        ["Cannot create the folder", "{tmp}/blocker/r.jsonl"],
        setup=lambda tmp: _write(tmp / "blocker", ""),
    ),
    CliCase(
        "store-cli-sweep-torn-middle-line",
        [*SWEEP, "{tmp}/r.jsonl"],
        ["{tmp}/r.jsonl, line 2", "pruneleak results repair {tmp}/r.jsonl"],
        setup=lambda tmp: _write(tmp / "r.jsonl", A + '{"key": "b", "v\n' + B),
    ),
    CliCase(
        "store-cli-sweep-invalid-utf8",
        [*SWEEP, "{tmp}/r.jsonl"],
        ["{tmp}/r.jsonl, line 2", "invalid UTF-8"],
        setup=lambda tmp: _write(tmp / "r.jsonl", A.encode() + b'{"key": "b\xfe"}\n' + B.encode()),
    ),
    CliCase(
        "store-cli-sweep-duplicate-key",
        [*SWEEP, "{tmp}/r.jsonl"],
        ["{tmp}/r.jsonl, line 3", "already on line 1"],
        setup=lambda tmp: _write(tmp / "r.jsonl", A + B + A),
    ),
    CliCase(
        "store-cli-sweep-duplicate-grid-value",
        ["sweep", "{tmp}/dup.toml", "--max-jobs", "0", "--results", "{tmp}/r.jsonl"],
        ["dup.toml", "'grids[0].pruning.p'", "0.3 twice"],
        setup=lambda tmp: _write(tmp / "dup.toml", DUP_TOML),
    ),
    CliCase(
        "store-cli-demo-results-directory",
        ["demo", "--out", "{tmp}", "--images", "1", "--no-figure"],
        ["{tmp}/demo.jsonl", "is a directory"],
        setup=lambda tmp: _mkdir(tmp / "demo.jsonl"),
    ),
    CliCase(
        "store-cli-demo-damaged-results",
        ["demo", "--out", "{tmp}", "--images", "1", "--no-figure"],
        ["{tmp}/demo.jsonl, line 1", "pruneleak results repair"],
        setup=lambda tmp: _write(tmp / "demo.jsonl", "{oops}\n" + A),
    ),
    CliCase(
        "store-cli-train-results-directory",
        ["train", "--out", "{tmp}"],
        ["{tmp}/train.jsonl", "is a directory"],
        setup=lambda tmp: _mkdir(tmp / "train.jsonl"),
    ),
    CliCase(
        "store-cli-leakage-results-directory",
        ["leakage", "--out", "{tmp}", "--no-figure"],
        ["{tmp}/leakage.jsonl", "is a directory"],
        setup=lambda tmp: _mkdir(tmp / "leakage.jsonl"),
    ),
]
