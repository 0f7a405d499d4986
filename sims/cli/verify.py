"""``pruneleak verify``: run the registry of the papers' checkable claims and report verdicts.

Every claim of ``bounds.claims`` gets a verdict (holds, holds-on-domain, fails,
inconclusive) with its evidence. Options select a paper (``--paper priprune|huang|fedltp|
hmine``) or claims (``--claim ID``, repeatable), the output format (``table``, ``json``:
a JSON list with keys id, paper, location, statement, verdict, evidence; ``markdown``)
and the Monte Carlo size (quick by default, ``--thorough`` multiplies the samples).
The Markdown and JSON reports are written to ``verification_report.md`` (with the coverage
map of ``bounds.claims.coverage``: every numbered statement of the papers and the claims
that check it, or why none does), ``verification_report.json`` and ``coverage.json`` under
``--out`` (default ``pruneleak-out/verify``; the committed report in ``paper_figs/`` is
refreshed by ``make figures``); a closing note with the verdict counts and the rows checked
per paper goes to stdout (stderr with ``--format json``, so that stdout stays JSON).
"""

from __future__ import annotations

import json
import sys
import time

from pruneleak.sims.cli import add_command, add_out_argument
from pruneleak.sims.cli.arguments import nonnegative_int
from pruneleak.sims.cli.summaries import SUMMARIES
from pruneleak.sims.core.outputs import output_dir

REPORT_NAME = "verification_report"
COVERAGE_NAME = "coverage"


def register(subparsers) -> None:
    parser = add_command(
        subparsers,
        "verify",
        help=SUMMARIES["verify"],
        description=(
            "Run the symbolic, grid and Monte Carlo checks of every checkable claim of the "
            "source papers and report a verdict with evidence for each."
        ),
    )
    parser.add_argument(
        "--paper",
        help="only this paper: priprune, huang, fedltp or hmine, or its name (default: all)",
    )
    parser.add_argument(
        "--claim",
        action="append",
        metavar="ID",
        help="only this claim, repeatable (default: every claim of --paper)",
    )
    parser.add_argument(
        "--format",
        choices=("table", "json", "markdown"),
        default="table",
        help="output format",
    )
    parser.add_argument(
        "--thorough", action="store_true", help="10x the Monte Carlo samples of quick mode"
    )
    parser.add_argument(
        "--seed", type=nonnegative_int, default=0, help="seed of the Monte Carlo checks"
    )
    parser.add_argument("--list", action="store_true", help="list the claim ids and exit")
    add_out_argument(parser, "verify")
    parser.set_defaults(func=run, uses_torch=False)  # main leaves torch unimported


def run(args) -> int:
    from pruneleak.bounds import claims
    from pruneleak.bounds.claims import coverage

    selected = claims.select_claims(paper=args.paper, claim_ids=args.claim)
    if args.list:
        for claim in selected:
            print(f"{claim.id}\t{claim.paper_name}, {claim.location}")
        return 0
    mode = "thorough" if args.thorough else "quick"
    start = time.perf_counter()
    results = claims.run_claims(selected, seed=args.seed, thorough=args.thorough, progress=None)
    seconds = time.perf_counter() - start
    markdown = claims.render_markdown(
        results,
        seed=args.seed,
        mode=mode,
        seconds=seconds,
        findings=claims.FINDINGS,
        coverage=coverage.render_coverage_markdown(heading="##"),
    )
    directory = output_dir(args.out)
    (directory / f"{REPORT_NAME}.md").write_text(markdown)
    (directory / f"{REPORT_NAME}.json").write_text(claims.render_json(results) + "\n")
    records = coverage.coverage_records()
    (directory / f"{COVERAGE_NAME}.json").write_text(json.dumps(records, indent=2) + "\n")
    output = {
        "table": lambda: claims.render_table(results),
        "json": lambda: claims.render_json(results),
        "markdown": lambda: markdown,
    }[args.format]()
    print(output)
    note = (
        f"{claims.closing_note(results, seconds)}; {coverage.coverage_note()}; reports in "
        f"{directory / REPORT_NAME}.md and .json, {directory / COVERAGE_NAME}.json"
    )
    print(note, file=sys.stderr if args.format == "json" else sys.stdout)
    return 0
