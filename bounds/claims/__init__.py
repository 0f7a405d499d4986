"""Every checkable claim of the source papers, with the checks that decide whether it holds.

``run_claims()`` runs the registry (:mod:`bounds.claims.registry`) and returns one
:class:`ClaimResult` per claim with a verdict (``holds``, ``holds-on-domain``, ``fails``,
``inconclusive``) and its evidence; :mod:`bounds.claims.report` renders them. The check
kinds and how each reaches a verdict are in :mod:`bounds.claims.checks`; the claims are in
:mod:`bounds.claims.priprune` (PriPrune's proof of Theorem 1),
:mod:`bounds.claims.priprune_statements` (PriPrune's monotonicity statements, NMI footnote
and defense equations), :mod:`bounds.claims.huang`
(Huang et al., appendices A-E), :mod:`bounds.claims.fedltp` (Fed-LTP, Lemma 1 and
Theorem 1) and :mod:`bounds.claims.mine` (the Donsker-Varadhan bound behind H-MINE, its
minibatch estimate and the input layer).

Example::

    >>> from pruneleak.bounds import claims
    >>> result = claims.run_claims([claims.get_claim("huang.C4.small_a")])[0]
    >>> result.verdict
    'fails'
"""

from pruneleak.bounds.claims.checks import (
    VERDICTS,
    CheckResult,
    Curve,
    GridCheck,
    LimitCheck,
    MonteCarloCheck,
    Param,
    SeriesCheck,
    SymbolicCheck,
)
from pruneleak.bounds.claims.claim import PAPERS, Claim, ClaimResult, run_claim
from pruneleak.bounds.claims.findings import FINDINGS, Finding
from pruneleak.bounds.claims.registry import (
    THOROUGH_EFFORT,
    all_claims,
    get_claim,
    paper_key,
    run_claims,
    select_claims,
)
from pruneleak.bounds.claims.report import (
    closing_note,
    render_json,
    render_markdown,
    render_table,
    to_records,
    verdict_counts,
)

__all__ = [
    "FINDINGS",
    "PAPERS",
    "THOROUGH_EFFORT",
    "VERDICTS",
    "CheckResult",
    "Claim",
    "ClaimResult",
    "Curve",
    "Finding",
    "GridCheck",
    "LimitCheck",
    "MonteCarloCheck",
    "Param",
    "SeriesCheck",
    "SymbolicCheck",
    "all_claims",
    "closing_note",
    "get_claim",
    "paper_key",
    "render_json",
    "render_markdown",
    "render_table",
    "run_claim",
    "run_claims",
    "select_claims",
    "to_records",
    "verdict_counts",
]
