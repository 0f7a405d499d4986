"""The coverage map: every numbered statement of the five papers and what checks it.

One row per numbered theorem, lemma, corollary, claim, definition, assumption, remark,
insight and numbered equation of each paper (both PriPrune versions), and per labelled
proof step, with the line of the paper's text file in ``papers/``: the claim ids of the
registry that check it, or the reason it is not checkable (:data:`REASONS`: a definition,
an empirical statement covered by a named experiment, or out of scope with why). Modules:
:mod:`.rows` (the record), one module per paper with its ``ROWS``. ``tests/bounds/
test_claims_coverage.py`` scans the papers' text for labels and fails when one has no row,
when a row names an unknown claim, or when a registered claim is in no row.

Example::

    >>> from pruneleak.bounds.claims import coverage
    >>> next(r for r in coverage.ROWS if r.label == "Lemma C.3").claims
    ('huang.C3',)
"""

from __future__ import annotations

from pruneleak.bounds.claims.coverage import fedltp, hmine, huang, priprune_aaai, priprune_journal
from pruneleak.bounds.claims.coverage.rows import REASONS, SOURCES, Row

ROWS = priprune_aaai.ROWS + priprune_journal.ROWS + huang.ROWS + fedltp.ROWS + hmine.ROWS
"""Every row, by paper (the order of :data:`SOURCES`) and line."""


def coverage_summary(rows=ROWS) -> dict[str, dict]:
    """Per source key: ``rows``, ``checked`` (rows with claims), ``share`` and the count of
    each reason."""
    summary = {}
    for source in SOURCES:
        group = [r for r in rows if r.source == source]
        n_checked = sum(r.checked for r in group)
        summary[source] = {
            "rows": len(group),
            "checked": n_checked,
            "share": n_checked / len(group) if group else 0.0,
            **{reason: sum(r.reason == reason for r in group) for reason in REASONS},
        }
    return summary


def coverage_note(rows=ROWS) -> str:
    """One line: rows and share checked per paper."""
    parts = [
        f"{SOURCES[k][0]} {s['checked']}/{s['rows']}" for k, s in coverage_summary(rows).items()
    ]
    return "coverage map: rows checked per paper: " + ", ".join(parts)


def coverage_records(rows=ROWS) -> list[dict]:
    """The rows as JSON-able records: source, paper, label, line, claims, reason, why."""
    return [
        {
            "source": r.source,
            "paper": SOURCES[r.source][0],
            "file": SOURCES[r.source][1],
            "label": r.label,
            "line": r.line,
            "claims": list(r.claims),
            "reason": r.reason,
            "why": r.why,
        }
        for r in rows
    ]


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|")


def render_coverage_markdown(rows=ROWS, *, heading: str = "#") -> str:
    """The coverage map as Markdown: a summary table, then one table per paper."""
    summary = coverage_summary(rows)
    lines = [
        f"{heading} Coverage map of the papers' statements",
        "",
        "Every numbered theorem, lemma, corollary, claim, definition, assumption, remark, "
        "insight and numbered equation of the five papers, and every labelled proof step: "
        "the claims that check it, or why none does (generated from "
        "`pruneleak.bounds.claims.coverage`).",
        "",
        "| paper | rows | checked | share | definition | empirical | out of scope |",
        "|---|---|---|---|---|---|---|",
    ]
    for key, s in summary.items():
        lines.append(
            f"| {SOURCES[key][0]} | {s['rows']} | {s['checked']} | {100 * s['share']:.0f} % | "
            f"{s['definition']} | {s['empirical']} | {s['out-of-scope']} |"
        )
    for key, (name, file) in SOURCES.items():
        lines += [
            "",
            f"{heading}# {name}",
            "",
            f"`papers/{file}`",
            "",
            "| statement | line | claims | reason |",
            "|---|---|---|---|",
        ]
        for r in (r for r in rows if r.source == key):
            ids = ", ".join(f"`{i}`" for i in r.claims)
            reason = f"{r.reason}: {r.why}" if r.reason else r.why
            lines.append(f"| {_cell(r.label)} | {r.line} | {ids} | {_cell(reason)} |")
    return "\n".join(lines) + "\n"


__all__ = [
    "REASONS",
    "ROWS",
    "SOURCES",
    "Row",
    "coverage_note",
    "coverage_records",
    "coverage_summary",
    "render_coverage_markdown",
]
