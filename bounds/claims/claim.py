"""A checkable claim of a paper, and the verdict its checks reach together.

A :class:`Claim` names where a paper makes a statement (``location`` as the paper numbers
it, e.g. ``"Claim C.4"``), states it in words, and carries the checks that test it
(``bounds.claims.checks``). Its verdict is that of the conjunction of its checks
(``combine_verdicts``: any ``fails`` -> ``fails``, else any ``holds-on-domain``, else any
``inconclusive``, else ``holds``). Every claim's random numbers come from
``SeedSequence([seed, crc32(id)])``, so one claim run alone gives the same numbers as in a
full run.
"""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass

import numpy as np

from pruneleak.bounds.claims.checks import (
    CHECK_TYPES,
    FAILS,
    HOLDS,
    HOLDS_ON_DOMAIN,
    INCONCLUSIVE,
    CheckResult,
    combine_verdicts,
)
from pruneleak.bounds.validation import check_int, check_real

PAPERS = {
    "priprune": "PriPrune",
    "huang": "Huang et al.",
    "fedltp": "Fed-LTP",
    "hmine": "H-MINE",
}
"""Short keys (``--paper``) and the names used in reports."""


@dataclass(frozen=True, eq=False)
class Claim:
    """One statement of a paper and the checks that test it (all must hold).

    ``corrected`` is the statement that holds instead, for a claim whose verdict is
    ``fails`` (it is reported with the counterexample) or ``holds-on-domain``.
    """

    id: str
    paper: str
    location: str
    statement: str
    checks: tuple
    notes: str = ""
    corrected: str = ""

    def __post_init__(self):
        if self.paper not in PAPERS:
            raise ValueError(
                f"The 'paper' parameter of Claim must be one of {sorted(PAPERS)}. "
                f"Got {self.paper!r} instead."
            )
        if not self.checks or not all(isinstance(c, CHECK_TYPES) for c in self.checks):
            raise ValueError(f"Claim {self.id!r} needs at least one check of a known kind.")

    @property
    def paper_name(self) -> str:
        return PAPERS[self.paper]


@dataclass(frozen=True, eq=False)
class ClaimResult:
    """A claim with its verdict, the per-check results and the wall time (seconds)."""

    claim: Claim
    verdict: str
    checks: tuple[CheckResult, ...]
    seconds: float

    @property
    def summary(self) -> str:
        """The summary of the check that decided the verdict (first one with that verdict)."""
        deciding = next(c for c in self.checks if c.verdict == self.verdict)
        return deciding.summary

    @property
    def curves(self):
        return [c.curve for c in self.checks if c.curve is not None]

    @property
    def curve(self):
        """The curve of the check that decided the verdict (else the first curve, or None)."""
        deciding = [c.curve for c in self.checks if c.verdict == self.verdict and c.curve]
        return (deciding or self.curves or [None])[0]

    def evidence(self) -> dict:
        """Summary, the domain found (holds-on-domain), the claim's notes, every check's numbers.

        JSON-able after ``bounds.claims.report.jsonable`` (numpy scalars, non-finite floats).
        """
        evidence = {"summary": self.summary}
        domains = [
            c.numbers["domain"]["text"]
            for c in self.checks
            if c.verdict == HOLDS_ON_DOMAIN and "domain" in c.numbers
        ]
        if domains:
            evidence["domain"] = "; ".join(domains)
        if self.claim.notes:
            evidence["notes"] = self.claim.notes
        evidence["checks"] = [c.to_dict() for c in self.checks]
        evidence["seconds"] = round(self.seconds, 3)
        return evidence

    def to_record(self) -> dict:
        """The report record: ``id, paper, location, statement, verdict, evidence``; for a
        claim that fails or holds on a domain also ``counterexample`` (the smallest one the
        deciding checks found: point, true and claimed values) and ``corrected``, and for
        one that holds on a domain its ``domain`` (with its ends as functions of the other
        parameters where the check has them)."""
        c = self.claim
        record = {
            "id": c.id,
            "paper": c.paper_name,
            "location": c.location,
            "statement": c.statement,
            "verdict": self.verdict,
            "evidence": self.evidence(),
        }
        if self.verdict not in (FAILS, HOLDS_ON_DOMAIN):
            return record
        deciding = [r for r in self.checks if r.verdict == self.verdict]
        found = [r.numbers["counterexample"] for r in deciding if "counterexample" in r.numbers]
        if found:
            record["counterexample"] = found[0]
        if self.verdict == HOLDS_ON_DOMAIN:
            record["domain"] = [r.numbers["domain"] for r in deciding if "domain" in r.numbers]
        record["corrected"] = c.corrected
        return record


def claim_seed(seed: int, claim_id: str) -> np.random.SeedSequence:
    """The seed sequence of one claim: ``SeedSequence([seed, crc32(claim_id)])``."""
    seed = check_int("seed", seed, func="claim_seed", low=0)
    return np.random.SeedSequence([seed, zlib.crc32(claim_id.encode())])


# Largest ``effort``: 100 times the thorough mode's 10 (Monte Carlo sizes grow linearly).
MAX_EFFORT = 1000.0


def run_claim(claim: Claim, *, seed: int = 0, effort: float = 1.0) -> ClaimResult:
    """Run every check of ``claim``; ``effort`` in (0, 1000] multiplies the Monte Carlo
    sample sizes."""
    func = "run_claim"
    if not isinstance(claim, Claim):
        raise ValueError(
            f"The 'claim' parameter of {func} must be a Claim (see get_claim). "
            f"Got {claim!r} instead."
        )
    seed = check_int("seed", seed, func=func, low=0)
    effort = check_real("effort", effort, func=func, low=0, high=MAX_EFFORT, low_inclusive=False)
    start = time.perf_counter()
    rngs = claim_seed(seed, claim.id).spawn(len(claim.checks))
    results = tuple(
        check.run(rng=np.random.default_rng(r), effort=effort)
        for check, r in zip(claim.checks, rngs, strict=True)
    )
    verdict = combine_verdicts([r.verdict for r in results])
    return ClaimResult(claim, verdict, results, time.perf_counter() - start)


__all__ = [
    "FAILS",
    "HOLDS",
    "HOLDS_ON_DOMAIN",
    "INCONCLUSIVE",
    "PAPERS",
    "Claim",
    "ClaimResult",
    "claim_seed",
    "run_claim",
]
