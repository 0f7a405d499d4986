"""The coverage map (``bounds.claims.coverage``) against the registry and the papers' text.

Every row names claims that exist or a reason; every registered claim is in some row; and a
scan of the papers' text files for statement labels at the start of a line ("Theorem 1",
"Lemma C.3", "Claim 3.4", "Definition 2", "Assumption 1", "Insight 2", ...) and for numbered
equations (a line ending in "(N)") finds a row for each label, at the line where the label
first occurs, so that the map cannot silently miss a statement.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from pruneleak.bounds import claims
from pruneleak.bounds.claims import coverage

ROOT = Path(__file__).resolve().parents[2]
PAPERS = Path(os.environ.get("PRUNELEAK_PAPERS", ROOT.parent / "shared" / "papers"))
STATEMENT = re.compile(
    r"^\W*(Theorem|Lemma|Corollary|Claim|Proposition|Remark|Definition|Assumption|Insight)"
    r"\s+((?:[A-Z]\.)?\d+(?:\.\d+)?)(?=[\s.:(])"
)
EQUATION = re.compile(r"\((\d{1,2})\)\s*$")


def _labels(text: str) -> dict[str, int]:
    """Each statement label and numbered equation of a paper, with its first line."""
    found = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if match := STATEMENT.match(line):
            found.setdefault(f"{match.group(1)} {match.group(2)}", number)
        if match := EQUATION.search(line):
            found.setdefault(f"eq. ({match.group(1)})", number)
    return found


def test_every_row_has_claims_or_a_reason_and_known_ids():
    ids = {c.id for c in claims.all_claims()}
    for row in coverage.ROWS:
        assert row.claims or (row.reason in coverage.REASONS and row.why), row
        assert set(row.claims) <= ids, (row.label, set(row.claims) - ids)


def test_every_registered_claim_is_in_a_row():
    named = {i for row in coverage.ROWS for i in row.claims}
    assert {c.id for c in claims.all_claims()} <= named


def test_rows_are_unique_per_paper():
    keys = [(r.source, r.label) for r in coverage.ROWS]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize("source", list(coverage.SOURCES))
def test_every_label_in_the_paper_has_a_row(source):
    path = PAPERS / coverage.SOURCES[source][1]
    if not path.exists():
        pytest.skip(f"the papers' text files are not at {PAPERS} (set PRUNELEAK_PAPERS)")
    rows = [r for r in coverage.ROWS if r.source == source]
    for label, line in _labels(path.read_text()).items():
        # the row's label is the printed one, possibly followed by what the row covers
        exact = [r for r in rows if r.label == label]
        row = next(iter(exact or [r for r in rows if r.label.startswith(label + " ")]), None)
        assert row is not None, f"{source}: {label} (line {line}) has no row"
        assert row.line == line, f"{source}: {label} is at line {line}, the row says {row.line}"


def test_row_needs_claims_or_a_reason():
    with pytest.raises(ValueError, match="needs claim ids or a reason"):
        coverage.Row("huang", "Lemma X", 1)
    with pytest.raises(ValueError, match="the reason must be one of"):
        coverage.Row("huang", "Lemma X", 1, reason="empirical")


def test_summary_counts_and_renderings_agree():
    summary = coverage.coverage_summary()
    assert sum(s["rows"] for s in summary.values()) == len(coverage.ROWS)
    for s in summary.values():
        assert s["checked"] + s["definition"] + s["empirical"] + s["out-of-scope"] == s["rows"]
    markdown = coverage.render_coverage_markdown()
    assert all(
        f"| {r.label.replace('|', chr(92) + '|')} | {r.line} |" in markdown for r in coverage.ROWS
    )
    records = json.loads(json.dumps(coverage.coverage_records()))
    assert len(records) == len(coverage.ROWS)


def test_docs_page_is_the_generated_map():
    page = (ROOT / "docs" / "findings" / "coverage.md").read_text()
    assert page == coverage.render_coverage_markdown(), "regenerate docs/findings/coverage.md"
