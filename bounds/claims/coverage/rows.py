"""The record of one row of the coverage map and the two ways to fill it.

A :class:`Row` names a numbered or labelled statement of a source paper as printed (its
label and the line of the paper's text file in ``papers/``) and either the registry's claim
ids that check it or the reason it is not checkable, one of :data:`REASONS`.
"""

from __future__ import annotations

from dataclasses import dataclass

REASONS = {
    "definition": "a definition or notation: nothing to check",
    "empirical": "an empirical statement, covered by the named experiment",
    "out-of-scope": "out of scope, for the reason given",
}
"""Why a row has no claim; the text of each row says which experiment or why."""

SOURCES = {
    "priprune-aaai": ("PriPrune (AAAI/arXiv 2310.19958)", "priprune-aaai-arxiv2310.19958.txt"),
    "priprune-journal": ("PriPrune (journal version)", "priprune-journal-version.txt"),
    "huang": ("Huang et al. (arXiv 2003.01876)", "huang-pruning-as-dp-noise-arxiv2003.01876.txt"),
    "fedltp": ("Fed-LTP", "fed-ltp-lottery-ticket-zcdp.txt"),
    "hmine": ("H-MINE", "h-mine-quantitative-leakage-metric.txt"),
}
"""Source keys: the display name and the paper's text file (both PriPrune versions)."""


@dataclass(frozen=True)
class Row:
    """One statement of a paper: ``claims`` (ids) that check it, or a ``reason`` and ``why``."""

    source: str
    label: str
    line: int
    claims: tuple[str, ...] = ()
    reason: str = ""
    why: str = ""

    def __post_init__(self):
        if self.source not in SOURCES:
            raise ValueError(
                f"The 'source' parameter of Row must be one of {sorted(SOURCES)}. "
                f"Got {self.source!r} instead."
            )
        if bool(self.claims) == bool(self.reason):
            raise ValueError(
                f"Row {self.label!r} ({self.source}) needs claim ids or a reason, not both "
                "and not neither."
            )
        if self.reason and (self.reason not in REASONS or not self.why):
            raise ValueError(
                f"Row {self.label!r} ({self.source}): the reason must be one of "
                f"{sorted(REASONS)} with a text saying why. Got {self.reason!r}, {self.why!r}."
            )

    @property
    def checked(self) -> bool:
        return bool(self.claims)


def checked(source: str, label: str, line: int, *claim_ids: str, why: str = "") -> Row:
    """A row checked by ``claim_ids`` (``why``: an optional note, e.g. the same statement)."""
    return Row(source, label, line, claims=tuple(claim_ids), why=why)


def unchecked(source: str, label: str, line: int, reason: str, why: str) -> Row:
    """A row with no claim: ``reason`` one of :data:`REASONS`, ``why`` in words."""
    return Row(source, label, line, reason=reason, why=why)
