"""Rendering of verification results: JSON records, a text table and a Markdown report.

Functions return strings; writing files is the caller's business (``pruneleak verify``
writes ``verification_report.md`` and ``.json`` under the figures directory). JSON
records have exactly the keys ``id, paper, location, statement, verdict, evidence``;
non-finite numbers become the strings ``"inf"``, ``"-inf"`` and ``"nan"``.
"""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np

from pruneleak.bounds.claims.checks import VERDICTS, fmt
from pruneleak.bounds.validation import check_int


def jsonable(value):
    """``value`` with numpy scalars/arrays as Python objects and non-finite floats as strings."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def to_records(results) -> list[dict]:
    """One JSON-able record per claim result."""
    return [jsonable(r.to_record()) for r in results]


def render_json(results) -> str:
    """The JSON list of records (indented)."""
    return json.dumps(to_records(results), indent=2)


def verdict_counts(results) -> dict[str, int]:
    counts = Counter(r.verdict for r in results)
    return {v: counts.get(v, 0) for v in VERDICTS}


def closing_note(results, seconds: float) -> str:
    """One line: number of claims, the count of each verdict, and the wall time."""
    counts = ", ".join(f"{n} {v}" for v, n in verdict_counts(results).items())
    return f"verified {len(results)} claims in {seconds:.1f} s: {counts}"


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def render_table(results, *, width: int = 110) -> str:
    """Plain-text table: id, location, verdict, one-line evidence (truncated to ``width``,
    at least 4 characters)."""
    width = check_int("width", width, func="render_table", low=4)
    rows = [(r.claim.id, r.claim.location, r.verdict, r.summary) for r in results]
    w_id = max([2, *(len(a) for a, *_ in rows)])
    w_loc = min(45, max([8, *(len(b) for _, b, *_ in rows)]))
    w_ver = max(len(v) for v in VERDICTS)
    head = f"{'id':<{w_id}}  {'location':<{w_loc}}  {'verdict':<{w_ver}}  evidence"
    lines = [head, "-" * len(head)]
    for claim_id, location, verdict, summary in rows:
        lines.append(
            f"{claim_id:<{w_id}}  {_shorten(location, w_loc):<{w_loc}}  {verdict:<{w_ver}}  "
            f"{_shorten(summary, width)}"
        )
    return "\n".join(lines)


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _fixed(record: dict) -> str:
    """The counterexample (fails) or domain (holds-on-domain) of a record, in words."""
    parts = []
    for domain in record.get("domain", []):
        text = domain["text"]
        for boundary in domain.get("boundaries", []):
            text += f"; edge vs {boundary['param']}: {_edge_table(domain, boundary)}"
        parts.append(text)
    if record["verdict"] == "fails" and "counterexample" in record:
        parts.append(record["counterexample"]["text"])
    return "; ".join(parts)


def _edge_table(domain: dict, boundary: dict, most: int = 5) -> str:
    """Up to ``most`` evenly spaced ``value: edge`` pairs of one boundary: the end of the
    domain that lies inside the grid (``domain["edge"]``: low, high or both)."""
    edge = domain.get("edge", "both")

    def shown(low, high) -> str:
        if low is None:
            return "nowhere"
        return {"low": fmt(low), "high": fmt(high)}.get(edge, f"[{fmt(low)}, {fmt(high)}]")

    rows = list(zip(boundary["values"], boundary["low"], boundary["high"], strict=True))
    step = max(1, -(-(len(rows) - 1) // (most - 1)))
    return ", ".join(f"{fmt(v)}: {shown(lo, hi)}" for v, lo, hi in rows[::step])


def render_markdown(
    results,
    *,
    seed: int = 0,
    mode: str = "quick",
    seconds: float | None = None,
    findings=(),
    coverage: str = "",
) -> str:
    """The Markdown report: verdict counts; per paper a table of every claim (location,
    statement, verdict, counterexample or domain, corrected form, the command that
    re-runs it); the ``findings`` about peer libraries (``bounds.claims.findings``);
    the ``coverage`` map (Markdown of ``bounds.claims.coverage.render_coverage_markdown``
    with ``heading="##"``, when given); then one section per claim with every check's
    evidence."""
    counts = verdict_counts(results)
    timing = f", wall time {seconds:.1f} s" if seconds is not None else ""
    lines = [
        "# pruneleak verification report",
        "",
        f"{len(results)} claims, seed {seed}, {mode} mode{timing}. Verdicts: "
        + ", ".join(f"**{v}** {n}" for v, n in counts.items())
        + ".",
        "",
        "Verdicts: *holds* (proved symbolically, no violation on a dense grid after "
        "optimisation, or every Monte Carlo interval agrees), *holds-on-domain* (holds on "
        "the reported sub-domain only; its edge is given as a function of the other "
        "parameters where the claim has any), *fails* (the smallest counterexample found, "
        "or an interval excluding the claimed value), *inconclusive*. Each claim re-runs "
        "alone with `pruneleak verify --claim ID --format markdown`.",
    ]
    records = {r.claim.id: jsonable(r.to_record()) for r in results}
    for paper in dict.fromkeys(r.claim.paper_name for r in results):
        group = [r for r in results if r.claim.paper_name == paper]
        tally = ", ".join(f"{n} {v}" for v, n in verdict_counts(group).items() if n)
        lines += [
            "",
            f"## {paper} ({len(group)} claims: {tally})",
            "",
            "| id | location | statement | verdict | counterexample or domain | corrected |",
            "|---|---|---|---|---|---|",
        ]
        for r in group:
            c, record = r.claim, records[r.claim.id]
            lines.append(
                f"| `{c.id}` | {_cell(c.location)} | {_cell(c.statement)} | **{r.verdict}** | "
                f"{_cell(_fixed(record))} | {_cell(record.get('corrected', ''))} |"
            )
    if findings:
        lines += ["", "## Findings about peer libraries", ""]
        for finding in findings:
            lines.append(
                f"- **{finding.library}** ({finding.where}): {finding.statement} "
                f"Evidence: `{finding.evidence}`."
            )
    if coverage:
        lines += ["", coverage.rstrip("\n")]
    lines += ["", "## Evidence, claim by claim"]
    for r in results:
        c = r.claim
        lines += [
            "",
            f"### `{c.id}` ({c.paper_name}, {c.location}): {r.verdict}",
            "",
            f"**Claim.** {c.statement}",
            "",
        ]
        for i, check in enumerate(r.checks, start=1):
            comparison = check.numbers.get("comparison")
            lines.append(
                f"{i}. *{check.kind}*, **{check.verdict}**"
                + (f" ({_cell(comparison)})" if comparison else "")
                + f": {check.summary}"
            )
        if c.corrected:
            lines += ["", f"*Corrected.* {c.corrected}"]
        lines += ["", f"*Re-run:* `pruneleak verify --claim {c.id} --format markdown`"]
        if c.notes:
            lines += ["", f"*Note.* {c.notes}"]
        lines.append(f"\n*Time:* {r.seconds:.2f} s")
    return "\n".join(lines) + "\n"
