"""The registry of every checkable claim, selection by paper or id, and the run loop.

Order: PriPrune, Huang et al., Fed-LTP, H-MINE (``bounds.claims.priprune``, ``.huang``,
``.fedltp``, ``.mine``). ``run_claims`` runs a selection with the claims' own seeds
(``bounds.claims.claim.claim_seed``), so a claim gives the same numbers alone or in a full
run; ``thorough=True`` multiplies every Monte Carlo sample size by ``THOROUGH_EFFORT``.
"""

from __future__ import annotations

import logging

from tqdm.auto import tqdm

from bounds.claims import fedltp, huang, mine, priprune
from bounds.claims.claim import PAPERS, Claim, ClaimResult, run_claim

logger = logging.getLogger(__name__)

THOROUGH_EFFORT = 10.0
_CLAIMS = priprune.CLAIMS + huang.CLAIMS + fedltp.CLAIMS + mine.CLAIMS
_BY_ID = {c.id: c for c in _CLAIMS}
if len(_BY_ID) != len(_CLAIMS):
    raise RuntimeError("claim ids must be unique")


def all_claims() -> tuple[Claim, ...]:
    """Every registered claim, in report order."""
    return _CLAIMS


def get_claim(claim_id: str) -> Claim:
    """The claim with this id; ValueError listing the ids with the same prefix otherwise."""
    try:
        return _BY_ID[claim_id]
    except KeyError:
        prefix = claim_id.split(".")[0]
        near = [c for c in _BY_ID if c.startswith(prefix)] or list(_BY_ID)
        raise ValueError(
            f"Unknown claim id {claim_id!r}. Known ids include: {', '.join(near)}."
        ) from None


def paper_key(name: str) -> str:
    """The paper key for a key or display name, case-insensitive (``"Huang et al."`` -> huang)."""
    lookup = {k.lower(): k for k in PAPERS} | {v.lower(): k for k, v in PAPERS.items()}
    key = lookup.get(str(name).strip().lower())
    if key is None:
        allowed = ", ".join(f"{k!r} ({v})" for k, v in PAPERS.items())
        raise ValueError(
            f"The 'paper' parameter of select_claims must be one of {allowed}. "
            f"Got {name!r} instead."
        )
    return key


def select_claims(*, paper: str | None = None, claim_ids=None) -> tuple[Claim, ...]:
    """Claims of one paper and/or with the given ids (all claims when both are None)."""
    claims = _CLAIMS
    if paper is not None:
        key = paper_key(paper)
        claims = tuple(c for c in claims if c.paper == key)
    if claim_ids:
        wanted = [get_claim(i) for i in claim_ids]
        claims = tuple(c for c in claims if c in wanted)
        if not claims:
            raise ValueError(f"None of the claims {list(claim_ids)} belongs to paper {paper!r}.")
    return claims


def run_claims(
    claims=None, *, seed: int = 0, thorough: bool = False, progress: bool | None = False
) -> list[ClaimResult]:
    """Run ``claims`` (default: all) and return one :class:`ClaimResult` each.

    ``progress``: True shows a tqdm bar, False hides it, None shows it on a terminal only.
    """
    claims = _CLAIMS if claims is None else tuple(claims)
    effort = THOROUGH_EFFORT if thorough else 1.0
    results = []
    bar = tqdm(
        claims, desc="verify", unit="claim", disable=None if progress is None else not progress
    )
    for claim in bar:
        bar.set_postfix_str(claim.id, refresh=False)
        result = run_claim(claim, seed=seed, effort=effort)
        logger.info("%s: %s (%.2f s)", claim.id, result.verdict, result.seconds)
        results.append(result)
    return results
