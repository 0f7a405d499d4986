"""Shared records of every check kind: the verdicts, parameters, curves and results.

The four verdicts (``holds``, ``holds-on-domain``, ``fails``, ``inconclusive``) and how a
conjunction of checks combines them; :class:`Param` (a swept parameter),
:class:`Curve` (true and claimed values along one parameter, for plots) and
:class:`CheckResult` (what every ``run`` returns); number formatting for summaries.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from pruneleak.bounds.validation import check_choice, check_real

# one assignment a name, which static readers of the module (griffe, for the API
# reference) see; a tuple unpacking would hide the four names from them
HOLDS = "holds"
HOLDS_ON_DOMAIN = "holds-on-domain"
FAILS = "fails"
INCONCLUSIVE = "inconclusive"
VERDICTS = (HOLDS, HOLDS_ON_DOMAIN, FAILS, INCONCLUSIVE)
RELATIONS = ("<=", ">=", "==")
_SWAPPED = {"<=": ">=", ">=": "<=", "==": "=="}


def fmt(value) -> str:
    """Short human-readable form of a number (4 significant digits)."""
    if isinstance(value, bool | str) or value is None:
        return str(value)
    if isinstance(value, int | np.integer):
        return str(int(value))
    value = float(value)
    if not math.isfinite(value):
        return str(value)
    return f"{value:.4g}"


def fmt_point(point: Mapping[str, float], labels: Mapping[str, str] | None = None) -> str:
    labels = labels or {}
    return ", ".join(f"{labels.get(k, k)}={fmt(v)}" for k, v in point.items())


def combine_verdicts(verdicts: Sequence[str]) -> str:
    """Verdict of a conjunction of checks: any fails -> fails, then holds-on-domain, ..."""
    for verdict in verdicts:
        check_choice("verdict", verdict, func="combine_verdicts", choices=VERDICTS)
    if not verdicts:
        return INCONCLUSIVE
    for verdict in (FAILS, HOLDS_ON_DOMAIN, INCONCLUSIVE):
        if verdict in verdicts:
            return verdict
    return HOLDS


# ---------------------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    """A parameter swept by a grid: ``points`` values in ``[low, high]``.

    ``scale="log"`` spaces them geometrically; ``integer=True`` rounds them (duplicates
    removed) and hands int64 arrays to the functions. ``label`` names it in reports.
    """

    name: str
    low: float
    high: float
    scale: str = "linear"
    integer: bool = False
    points: int = 41
    label: str | None = None

    def __post_init__(self):
        func = "Param"
        check_choice("scale", self.scale, func=func, choices=("linear", "log"))
        check_real(
            "low",
            self.low,
            func=func,
            low=0 if self.scale == "log" else None,
            low_inclusive=self.scale != "log",
        )
        check_real("high", self.high, func=func, low=self.low)
        if self.points < 1:
            raise ValueError(f"The 'points' parameter of Param must be >= 1. Got {self.points}.")

    @property
    def text(self) -> str:
        return self.label or self.name

    def grid(self, points: int | None = None) -> np.ndarray:
        n = points or self.points
        if n == 1 or self.low == self.high:
            values = np.array([self.low], dtype=float)
        elif self.scale == "log":
            values = np.geomspace(self.low, self.high, n)
        else:
            values = np.linspace(self.low, self.high, n)
        if self.integer:
            return np.unique(np.round(values)).astype(np.int64)
        return values

    def to_coordinate(self, value):
        return np.log(value) if self.scale == "log" else value

    def from_coordinate(self, u):
        return np.exp(u) if self.scale == "log" else u


@dataclass(frozen=True, eq=False)
class Curve:
    """Claimed and true values along one parameter (for plots of failing claims)."""

    x_label: str
    x: np.ndarray
    true: np.ndarray
    claimed: np.ndarray | None = None
    true_low: np.ndarray | None = None
    true_high: np.ndarray | None = None
    log_x: bool = False
    true_label: str = "true"
    claimed_label: str = "claimed"


@dataclass(frozen=True, eq=False)
class CheckResult:
    """Outcome of one check: ``kind``, ``verdict``, a one-line ``summary`` and ``numbers``."""

    kind: str
    verdict: str
    summary: str
    numbers: dict = field(default_factory=dict)
    curve: Curve | None = None

    def to_dict(self) -> dict:
        return {"kind": self.kind, "verdict": self.verdict, "summary": self.summary, **self.numbers}
