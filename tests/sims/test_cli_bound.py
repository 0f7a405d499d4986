"""``pruneleak bound``: text, JSON and symbolic output, and errors."""

from __future__ import annotations

import json

import pytest

import sims.cli
from bounds import accounting, equivalence, priprune
from sims.cli import main

PRIPRUNE = ["bound", "priprune", "--p", "0.3", "--B", "20", "--d-star", "100", "--delta", "-50"]
EQUIVALENCE = [
    "bound",
    "equivalence",
    "--sigma",
    "100",
    "--sigma-a",
    "0.01",
    "--m",
    "100",
    "--d",
    "10",
    "--a",
    "0.5",
]
FEDLTP = ["bound", "fedltp", "--q", "0.0125", "--sigma", "1.4", "--lambda-val", "10", "--t", "9"]


@pytest.fixture(autouse=True)
def _only_bound_subcommand(monkeypatch):
    # Build the parser with this subcommand alone, so that the test does not depend on
    # the other subcommand modules (written in parallel) importing cleanly.
    assert "bound" in sims.cli.SUBCOMMANDS
    monkeypatch.setattr(sims.cli, "SUBCOMMANDS", ("bound",))


def _json(capsys, argv):
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_priprune_json(capsys):
    out = _json(capsys, [*PRIPRUNE, "--d", "1000", "--T", "5", "--unit", "nats"])
    assert out["unit"] == "nats"
    assert out["inputs"]["p"] == 0.3 and out["inputs"]["T"] == 5
    assert out["published"] == pytest.approx(
        priprune.multi_round_bound(0.3, 20, 100, -50.0, 5, unit="nats")
    )
    assert out["corrected"] == pytest.approx(
        priprune.multi_round_bound_corrected(0.3, 1000, 20, 100, -50.0, 5, unit="nats")
    )


def test_priprune_log_pdet_and_text(capsys):
    argv = ["bound", "priprune", "--p", "0.3", "--B", "20", "--d-star", "100", "--log-pdet", "100"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "published" in text and "corrected" in text and "bits" in text
    assert _json(capsys, argv)["inputs"]["delta_nats"] == -50.0


def test_priprune_symbolic_latex(capsys):
    assert main([*PRIPRUNE, "--symbolic", "--latex"]) == 0
    out = capsys.readouterr().out
    assert "\\frac" in out and "\\Delta" in out
    assert main([*PRIPRUNE, "--symbolic"]) == 0
    assert "Delta" in capsys.readouterr().out


def test_equivalence_json(capsys):
    out = _json(capsys, EQUIVALENCE)
    assert out["published"]["epsilon_dp"] == pytest.approx(
        equivalence.epsilon_dp_theorem_e2(100.0, 0.01, 100, 10, 0.1)
    )
    assert out["corrected"]["epsilon_dp"] == "inf"
    assert isinstance(out["published"]["required_width"], int)


def test_fedltp_json_has_optimal_order(capsys):
    out = _json(capsys, FEDLTP)
    eps, order = accounting.fedltp_epsilon_published_optimal(
        9, q=0.0125, noise_multiplier=1.4, lambda_val=10.0, delta=1e-3
    )
    assert out["published"] == pytest.approx(eps)
    assert out["optimal_order"]["published"] == order
    assert out["optimal_order"]["corrected"] > 1


def test_invalid_input_exits_with_message(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["bound", "priprune", "--p", "1.3", "--B", "20", "--d-star", "10", "--delta", "0"])
    assert exc.value.code == 2
    assert "'p' parameter" in capsys.readouterr().err
