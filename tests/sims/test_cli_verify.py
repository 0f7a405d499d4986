"""``pruneleak verify``: formats, selection, written reports, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pruneleak.bounds import claims
from pruneleak.sims import cli
from pruneleak.sims.cli import main

KEYS = {"id", "paper", "location", "statement", "verdict", "evidence"}
VERDICTS = {"holds", "holds-on-domain", "fails", "inconclusive"}


@pytest.fixture(autouse=True)
def _in_a_temporary_folder(monkeypatch, tmp_path):
    # The parser with this subcommand alone (the others are written in parallel), run
    # from an empty folder so that every file it writes can be seen.
    assert "verify" in cli.SUBCOMMANDS
    monkeypatch.setattr(cli, "SUBCOMMANDS", ("verify",))
    monkeypatch.chdir(tmp_path)


def files_under(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def test_json_output_one_object_per_claim(capsys, tmp_path):
    """The whole registry (at least 60 claims); a failing claim carries its counterexample
    and corrected statement, one that holds on a domain its domain and corrected form."""
    assert main(["verify", "--format", "json", "--out", "reports"]) == 0
    out = capsys.readouterr()
    records = json.loads(out.out)  # stdout is pure JSON; the closing note is on stderr
    assert len(records) >= 60
    assert [r["id"] for r in records] == [c.id for c in claims.all_claims()]
    papers = {claim.paper_name for claim in claims.all_claims()}
    extra = {"fails": {"counterexample", "corrected"}, "holds-on-domain": {"domain", "corrected"}}
    for record in records:
        assert set(record) >= KEYS and record["verdict"] in VERDICTS
        assert extra.get(record["verdict"], set()) <= set(record)
        assert record["paper"] in papers and record["location"] and record["statement"]
        assert record["evidence"]["summary"]
    failing = [r for r in records if r["verdict"] == "fails"]
    assert failing and all(r["counterexample"]["text"] and r["corrected"] for r in failing)
    assert f"verified {len(records)} claims" in out.err
    assert files_under(tmp_path) == {
        "reports/coverage.json",
        "reports/verification_report.json",
        "reports/verification_report.md",
    }
    written = json.loads((tmp_path / "reports/verification_report.json").read_text())
    assert [r["id"] for r in written] == [r["id"] for r in records]
    report = (tmp_path / "reports/verification_report.md").read_text()
    assert "# pruneleak verification report" in report
    assert "## Findings about peer libraries" in report
    assert "## Coverage map of the papers' statements" in report  # every row, rendered
    rows = json.loads((tmp_path / "reports/coverage.json").read_text())
    assert {r["label"] for r in rows} >= {"Lemma C.3", "Theorem E.1", "eq. (9)"}
    assert "coverage map: rows checked per paper" in out.err


def test_reports_go_to_pruneleak_out_by_default(capsys, tmp_path):
    assert main(["verify", "--claim", "huang.A5"]) == 0
    assert files_under(tmp_path) == {
        "pruneleak-out/verify/coverage.json",
        "pruneleak-out/verify/verification_report.json",
        "pruneleak-out/verify/verification_report.md",
    }
    assert "pruneleak-out/verify/verification_report.md" in capsys.readouterr().out


def test_table_output_and_closing_note(capsys):
    argv = ["verify", "--claim", "huang.C4.small_a", "--claim", "huang.A5", "--format", "table"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["id", "location", "verdict"]
    assert any(line.startswith("huang.C4.small_a") and "fails" in line for line in lines)
    assert any(line.startswith("huang.A5") and "holds" in line for line in lines)
    assert "verified 2 claims" in lines[-1] and "1 holds" in lines[-1] and "1 fails" in lines[-1]


def test_markdown_output(capsys):
    assert main(["verify", "--claim", "huang.B5.mean", "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "| `huang.B5.mean` |" in out and "**holds-on-domain**" in out
    assert "a/sigma_A <= 0.8612" in out


def test_list(capsys):
    assert main(["verify", "--paper", "hmine", "--list"]) == 0
    assert capsys.readouterr().out.startswith("hmine.dv_bound\tH-MINE, Section 2.2")


def test_thorough_multiplies_the_samples(capsys):
    assert main(["verify", "--claim", "huang.B4", "--format", "json", "--thorough"]) == 0
    record = json.loads(capsys.readouterr().out)[0]
    quick = claims.get_claim("huang.B4").checks[0].samples
    samples = record["evidence"]["checks"][0]["samples_per_point"]
    assert samples == quick * claims.THOROUGH_EFFORT


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["verify", "--claim", "huang.Z9"], "Unknown claim id 'huang.Z9'"),
        (["verify", "--paper", "nature"], "'paper' parameter"),
        (["verify", "--claim", "huang.A5", "--out", "taken"], "cannot create the output folder"),
    ],
)
def test_errors_exit_2_with_one_line(capsys, tmp_path, argv, message):
    (tmp_path / "taken").write_text("a file where the output folder should go")
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
