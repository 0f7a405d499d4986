"""``pruneleak fedltp``: a tiny run per variant, the closing line against the records,
resuming, and one-line errors with exit status 2."""

from __future__ import annotations

import json

import pytest

from pruneleak.sims import cli
from pruneleak.sims.cli import build_parser, main
from pruneleak.sims.cli.fedltp import config_from_args
from pruneleak.sims.fedltp.training import run_key

TINY = [
    "--clients", "6", "--client-rate", "0.34", "--local-steps", "3", "--batch-size", "5",
    "--rounds", "3", "--tickets", "2", "--ticket-steps", "15", "--lr", "0.2",
    "--lambda-val", "5", "--epsilon", "1e9", "--seed", "5", "--device", "cpu", "--no-progress",
]  # fmt: skip


@pytest.fixture(autouse=True)
def _in_a_temporary_folder(monkeypatch, tmp_path):
    assert "fedltp" in cli.SUBCOMMANDS
    monkeypatch.setattr(cli, "SUBCOMMANDS", ("fedltp",))
    monkeypatch.chdir(tmp_path)


def _records(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize(
    "extra",
    [["--variant", "fedltp", "--pruning", "iterative"], ["--variant", "dp-fed"],
     ["--variant", "fed-spa", "--keep", "0.3", "--partition", "dirichlet", "--alpha", "0.5"]],
    ids=["fedltp-iterative", "dp-fed", "fed-spa-dirichlet"],
)  # fmt: skip
def test_tiny_run_writes_records_and_a_closing_line(capsys, tmp_path, extra):
    assert main(["fedltp", *TINY, *extra]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    store = tmp_path / "pruneleak-out/fedltp/fedltp.jsonl"  # the default --out
    rounds = [r for r in _records(store) if "round" in r]
    assert [r["round"] for r in rounds] == [1, 2, 3]
    assert {r["variant"] for r in rounds} == {extra[1]}
    # the key the progress bar resumes from
    args = build_parser(("fedltp",)).parse_args(["fedltp", *TINY, *extra])
    keep = 0.3 if extra[1] == "fed-spa" else None
    assert {r["run"] for r in rounds} == {
        run_key(config_from_args(args), variant=extra[1], upload_keep=keep)
    }
    last = rounds[-1]
    mib = last["bytes_cumulative"] / 2**20
    assert line.startswith(f"{extra[1]}: final test accuracy {last['test_accuracy']:.4f}, ")
    assert f"epsilon {last['epsilon']:.4g} of 1e+09" in line
    assert "3 rounds (stopped by --rounds)" in line and f"{mib:.4f} MiB communicated" in line
    # a rerun resumes: nothing new is trained or written, the same closing line
    assert main(["fedltp", *TINY, *extra]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == line
    assert len(_records(store)) == len(rounds) + 1  # the rounds and one stop record


def test_budget_stop_is_reported(capsys, tmp_path):
    args = [a if a != "1e9" else "0.5" for a in TINY]
    assert main(["fedltp", *args, "--variant", "dp-fed", "--out", "o"]) == 0
    line = capsys.readouterr().out
    assert "0 rounds (stopped by the budget)" in line and "no round fits the budget" in line
    assert (tmp_path / "o/fedltp.jsonl").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--keep", "0.5"], "--keep applies to --variant fed-spa only"),
        (["--variant", "fed-spa", "--keep", "1.5"], "--keep must be in (0, 1]"),
        (
            ["--client-rate", "1.5"],
            "--client-rate option ('client_rate' of FedLTPConfig) must be in (0, 1]",
        ),
        (
            ["--further-prune", "1"],
            "--further-prune option ('further_prune' of FedLTPConfig) must be in [0, 1)",
        ),
        (["--dataset", "mnist", "--data-dir", "nowhere"], "nowhere"),
        (["--sigma", "-1"], "--sigma"),
        (["--variant", "fedavg"], "--variant"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    with pytest.raises(SystemExit) as err:
        main(["fedltp", *TINY, *argv])
    assert err.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert message in lines[-1]
    assert lines[-1].startswith("pruneleak fedltp: error:") or "usage" in lines[0]
