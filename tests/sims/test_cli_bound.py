"""``pruneleak bound``: text, JSON and symbolic output, and errors."""

from __future__ import annotations

import json
import math

import pytest

from pruneleak.bounds import accounting, equivalence, priprune
from pruneleak.sims.cli import main

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


@pytest.mark.parametrize("value", [math.inf, -math.inf])
def test_a_bound_outside_floating_point_is_refused_not_printed(capsys, monkeypatch, value):
    # Theorem 1 of finite inputs is finite; an overflow (2 Delta / ln 2 with Delta = 1e308
    # nats is past the largest float) is no answer, neither as inf nor as -inf.
    monkeypatch.setattr(priprune, "multi_round_bound_corrected", lambda *a, **kw: value)
    for extra in ([], ["--json"]):
        with pytest.raises(SystemExit) as exc:
            main([*PRIPRUNE, *extra])
        assert exc.value.code == 2
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.count("\n") == 1
        assert f"corrected value of the priprune bound is {value}" in captured.err
        assert "p=0.3, B=20.0, d_star=100, delta_nats=-50.0" in captured.err
        assert "outside the floating-point range" in captured.err


def test_an_infinite_epsilon_is_printed_with_its_meaning(capsys):
    # The corrected epsilon_dp of Theorem E.2 is inf by construction (no finite pure
    # epsilon): the text says what inf means, the JSON keeps the string "inf".
    assert main(EQUIVALENCE) == 0
    corrected = next(line for line in capsys.readouterr().out.splitlines() if "corrected" in line)
    assert "epsilon_dp=inf (no privacy guarantee)" in corrected
    assert _json(capsys, EQUIVALENCE)["corrected"]["epsilon_dp"] == "inf"


def test_fedltp_epsilon_inf_is_no_guarantee(capsys, monkeypatch):
    monkeypatch.setattr(
        accounting, "fedltp_epsilon_published_optimal", lambda t, **kw: (float("inf"), 2.0)
    )
    assert main(FEDLTP) == 0
    published = next(line for line in capsys.readouterr().out.splitlines() if "published" in line)
    assert published.split() == ["published", "inf", "nats", "(no", "privacy", "guarantee)"]


def test_a_nan_bound_is_a_bug_with_a_traceback(capsys, monkeypatch):
    # Inputs that pass validation must not give NaN: if one does, the code is wrong,
    # and the command says so (exit 1, traceback, a request to report) instead of
    # printing nan (or, as before, the JSON string "-inf").
    monkeypatch.setattr(accounting, "fedltp_epsilon_corrected", lambda t, **kw: (float("nan"), 2.0))
    for extra in ([], ["--json"]):
        with pytest.raises(SystemExit) as exc:
            main([*FEDLTP, *extra])
        assert exc.value.code == 1
        captured = capsys.readouterr()
        assert captured.out == ""
        assert "FloatingPointError" in captured.err and "corrected value" in captured.err
        assert "--debug" in captured.err.splitlines()[-1]
