"""The registry of every checkable claim, selection by paper or id, and the run loop.

Order: PriPrune, Huang et al., Fed-LTP, H-MINE (``bounds.claims.priprune``,
``.priprune_steps`` and ``.priprune_statements``, ``.huang``, ``.fedltp``, ``.mine``).
``run_claims`` runs a selection with the claims' own seeds
(``bounds.claims.claim.claim_seed``), so a claim gives the same numbers alone or in a full
run; ``thorough=True`` multiplies every Monte Carlo sample size by ``THOROUGH_EFFORT``.
"""

from __future__ import annotations

import logging

from pruneleak.bounds.claims import (
    fedltp,
    huang,
    mine,
    priprune,
    priprune_statements,
    priprune_steps,
)
from pruneleak.bounds.claims.claim import PAPERS, Claim, ClaimResult, run_claim
from pruneleak.bounds.progress import progress as show_progress
from pruneleak.bounds.validation import check_bool, check_int

logger = logging.getLogger(__name__)

THOROUGH_EFFORT = 10.0
_CLAIMS = (
    priprune.CLAIMS
    + priprune_steps.CLAIMS
    + priprune_statements.CLAIMS
    + huang.CLAIMS
    + fedltp.CLAIMS
    + mine.CLAIMS
)
_BY_ID = {c.id: c for c in _CLAIMS}
if len(_BY_ID) != len(_CLAIMS):
    raise RuntimeError("claim ids must be unique")


def _iterable(value) -> bool:
    try:
        iter(value)
    except TypeError:
        return False
    return True


def _as_claim(item, func: str) -> Claim:
    """A :class:`Claim` as is, a claim id through :func:`get_claim`, else ValueError."""
    if isinstance(item, Claim):
        return item
    if isinstance(item, str):
        return get_claim(item)
    raise ValueError(
        f"The 'claims' parameter of {func} must hold Claim objects or claim ids. "
        f"Got {item!r} instead."
    )


def all_claims() -> tuple[Claim, ...]:
    """Every registered claim, in report order."""
    return _CLAIMS


def get_claim(claim_id: str) -> Claim:
    """The claim with this id; ValueError listing the ids with the same prefix otherwise."""
    if not isinstance(claim_id, str):
        raise ValueError(
            f"The 'claim_id' parameter of get_claim must be a claim id (a string such as "
            f"{_CLAIMS[0].id!r}). Got {claim_id!r} instead."
        )
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
    if claim_ids is not None and (isinstance(claim_ids, str) or not _iterable(claim_ids)):
        raise ValueError(
            "The 'claim_ids' parameter of select_claims must be a list of claim ids. "
            f"Got {claim_ids!r} instead."
        )
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

    ``claims`` holds :class:`Claim` objects or claim ids (unknown ids raise ValueError, as
    in :func:`get_claim`). ``progress``: False shows nothing; True or None a bar on a
    terminal, else one line per claim on stderr, rate-limited, with a heartbeat during a
    long claim (:func:`bounds.progress.progress`).
    """
    func = "run_claims"
    if claims is not None and (isinstance(claims, str) or not _iterable(claims)):
        raise ValueError(
            f"The 'claims' parameter of {func} must be a list of claims or claim ids. "
            f"Got {claims!r} instead."
        )
    claims = _CLAIMS if claims is None else tuple(_as_claim(c, func) for c in claims)
    seed = check_int("seed", seed, func=func, low=0)
    effort = THOROUGH_EFFORT if check_bool("thorough", thorough, func=func) else 1.0
    if progress is not None:
        check_bool("progress", progress, func=func)
    results = []
    with show_progress(claims, desc="verify", unit="claim", enabled=progress) as bar:
        for claim in bar:
            bar.set_postfix_str(claim.id, refresh=False)
            result = run_claim(claim, seed=seed, effort=effort)
            logger.info("%s: %s (%.2f s)", claim.id, result.verdict, result.seconds)
            results.append(result)
    return results
