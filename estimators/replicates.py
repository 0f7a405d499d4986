r"""Intervals and paired tests for a metric measured on several targets in several seeded
runs, and the verdict they give on a stated claim.

An experiment of the toolkit (a sweep job) trains one FL run per seed and attacks
several targets in it. The targets of one run share its model, mask and training, so
their values are not independent: pooling every (seed, target) value into one sample and
reporting ``mean +- t sd / sqrt(n)`` treats ``S`` runs of ``K`` targets as ``S K``
independent draws and gives intervals that are too short when the runs differ. Here
the run is the unit. With ``x_{sk}`` the value of target ``k`` in seed ``s`` and
``m_s`` the mean over the ``K_s`` targets of seed ``s``,

.. math::

    \bar m = \frac1S \sum_s m_s, \qquad
    \bar m \pm t_{S-1,\,(1+c)/2}\, \frac{\operatorname{sd}(m_1..m_S)}{\sqrt S}

(Student's t interval on the run means: exact when the run means are normal with a
common variance, which holds for a normal random-effects model with the same ``K`` per
seed; the spread of the ``m_s`` contains both the between-run and the within-run,
between-target variation). With three seeds the interval is wide (``t_{2, 0.975} =
4.30``): that is what three runs can say. A bootstrap over three seeds has ten distinct
resamples, and one over the targets ignores the shared run, so neither is used.

Two arms compared on the same runs and targets (a defense and no defense on the same
seed, the same client; the same image at two pruning rates) are compared by the paired
difference: ``d_s`` is the mean over the targets present in both arms of seed ``s`` of
``a - b`` (or the relative change ``100 (mean a - mean b) / mean a`` of the run, in
percent), and the interval and the two-sided one-sample t test of ``d_1..d_S`` against 0
are those above (a paired t test on the runs).

A claim is then set against the interval (:func:`claim_verdict`): the interval lies
above it, below it, or straddles it, and a straddling interval is "not resolved at this
scale", whatever the point estimate says.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from pruneleak.bounds.validation import check_choice, check_open_unit, check_real

__all__ = [
    "METHOD",
    "NOT_RESOLVED",
    "PairedComparison",
    "SeedInterval",
    "claim_verdict",
    "mean_interval_text",
    "paired_seed_comparison",
    "seed_interval",
]

#: The verdict of an interval that contains the claimed value, or of a single run.
NOT_RESOLVED = "not resolved at this scale"
#: The kinds of claim :func:`claim_verdict` reads.
DIRECTIONS = ("value", "greater", "at_least", "less", "at_most")
#: How :func:`seed_interval` computes its interval, in words (printed with tables).
METHOD = "Student t over the seeds' means (each seed's targets averaged first)"


@dataclass(frozen=True)
class SeedInterval:
    """A metric's mean over seeds and its interval (module docstring).

    Attributes:
        mean: the mean of the seeds' means.
        low, high: the interval's ends; None with a single seed (no spread to measure).
        seeds: the number of seeds S; values: the number of (seed, target) values.
        confidence: the interval's confidence level.
        method: how the interval was computed, in words.
    """

    mean: float
    low: float | None
    high: float | None
    seeds: int
    values: int
    confidence: float
    method: str = METHOD


@dataclass(frozen=True)
class PairedComparison:
    """The paired difference of arm ``a`` minus arm ``b`` (or the relative change, in
    percent of ``a``) over the targets both arms share, per seed, and its test.

    Attributes:
        interval: the :class:`SeedInterval` of the seeds' paired differences.
        p_value: the two-sided p value of the paired t test (``d_s`` against 0); None with
            a single seed.
        pairs: the number of (seed, target) pairs behind the differences.
        relative: whether the difference is the relative change in percent.
    """

    interval: SeedInterval
    p_value: float | None
    pairs: int
    relative: bool


def _t_interval(means: Sequence[float], values: int, confidence: float) -> SeedInterval:
    means = np.asarray(means, dtype=float)
    mean = float(means.mean())
    if len(means) < 2:
        return SeedInterval(mean, None, None, len(means), values, confidence)
    half = float(stats.t.ppf((1 + confidence) / 2, len(means) - 1) * means.std(ddof=1))
    half /= math.sqrt(len(means))
    return SeedInterval(mean, mean - half, mean + half, len(means), values, confidence)


def _check_values(name: str, by_seed, func: str) -> dict:
    if not isinstance(by_seed, Mapping) or not by_seed:
        raise ValueError(
            f"The '{name}' parameter of {func} must be a non-empty mapping of seed to the "
            f"seed's per-target values. Got {by_seed!r} instead."
        )
    out = {}
    for seed, values in by_seed.items():
        items = values.items() if isinstance(values, Mapping) else enumerate(values)
        checked = {t: check_real(f"{name}[{seed!r}]", v, func=func) for t, v in items}
        if not checked:
            raise ValueError(
                f"The '{name}' parameter of {func} must hold at least one value per seed. "
                f"Got none for seed {seed!r} instead."
            )
        out[seed] = checked
    return out


def seed_interval(by_seed: Mapping, *, confidence: float = 0.95) -> SeedInterval:
    """The mean of a metric over seeds and its t interval over the seeds' means.

    Args:
        by_seed: seed -> that seed's per-target values (a sequence, or a mapping of
            target to value), each finite; at least one value per seed.
        confidence: the interval's level, in (0, 1).

    Examples
    --------
    >>> r = seed_interval({0: [1.0, 1.0], 1: [2.0], 2: [3.0, 3.0, 3.0]})
    >>> r.mean, round(r.high - r.mean, 4), r.seeds, r.values
    (2.0, 2.4841, 3, 6)
    """
    func = "seed_interval"
    confidence = check_open_unit("confidence", confidence, func=func)
    values = _check_values("by_seed", by_seed, func)
    means = [float(np.mean(list(v.values()))) for v in values.values()]
    return _t_interval(means, sum(len(v) for v in values.values()), confidence)


def paired_seed_comparison(
    a_by_seed: Mapping,
    b_by_seed: Mapping,
    *,
    relative: bool = False,
    confidence: float = 0.95,
) -> PairedComparison:
    """Arm ``a`` minus arm ``b`` on the same seeds and targets, with its interval and
    paired t test (module docstring).

    Args:
        a_by_seed, b_by_seed: seed -> {target: value} (or a sequence, its index the
            target) of each arm. Only the seeds both hold, and in each only the targets
            both hold, are compared; at least one such pair is required.
        relative: compare ``100 (mean a - mean b) / mean a`` per seed (a change in percent
            of ``a``; every seed's mean of ``a`` must then be nonzero) instead of the mean
            difference.
        confidence: the interval's level, in (0, 1).

    Examples
    --------
    >>> r = paired_seed_comparison({0: [4.0, 2.0], 1: [3.0]}, {0: [2.0, 1.0], 1: [2.5]})
    >>> r.interval.mean, r.pairs
    (1.0, 3)
    """
    func = "paired_seed_comparison"
    confidence = check_open_unit("confidence", confidence, func=func)
    a = _check_values("a_by_seed", a_by_seed, func)
    b = _check_values("b_by_seed", b_by_seed, func)
    diffs, pairs = [], 0
    for seed in (s for s in a if s in b):
        common = [t for t in a[seed] if t in b[seed]]
        if not common:
            continue
        mean_a = float(np.mean([a[seed][t] for t in common]))
        mean_b = float(np.mean([b[seed][t] for t in common]))
        if relative and mean_a == 0:
            raise ValueError(
                f"The 'a_by_seed' parameter of {func} must have a nonzero mean in every seed "
                f"when relative=True. Got mean 0 for seed {seed!r} instead."
            )
        diffs.append(100 * (mean_a - mean_b) / mean_a if relative else mean_a - mean_b)
        pairs += len(common)
    if not diffs:
        raise ValueError(
            f"The 'a_by_seed' and 'b_by_seed' parameters of {func} must share at least one "
            f"(seed, target). Got seeds {sorted(map(repr, a))} and {sorted(map(repr, b))} "
            "with no target in common instead."
        )
    interval = _t_interval(diffs, pairs, confidence)
    p_value = None
    if len(diffs) >= 2:
        # every run moved by the same amount (up to rounding): certain unless it is 0
        if np.ptp(diffs) <= 1e-12 * float(np.max(np.abs(diffs))):
            p_value = 1.0 if diffs[0] == 0 else 0.0
        else:
            p_value = float(stats.ttest_1samp(diffs, 0.0).pvalue)
    return PairedComparison(interval, p_value, pairs, relative)


def claim_verdict(low, high, claim: float, *, direction: str = "value") -> str:
    """The verdict of an interval ``[low, high]`` on a claim about the quantity it covers.

    Args:
        low, high: the interval (None: a single run, no interval).
        claim: the claimed value or threshold, in the interval's unit.
        direction: what is claimed. ``"value"``: the quantity equals ``claim``; the verdict
            is ``"above the claim"`` or ``"below the claim"`` when the interval lies
            entirely on one side, else :data:`NOT_RESOLVED`. ``"greater"`` / ``"less"``:
            the quantity is strictly above / below ``claim``; ``"at_least"`` /
            ``"at_most"``: it is not below / not above it. These give ``"holds"`` when
            every value of the interval satisfies the claim, ``"fails"`` when none does
            (an interval [0, 0] fails "the change is negative": every run measured no
            change), else :data:`NOT_RESOLVED`.

    Examples
    --------
    >>> claim_verdict(30.0, 60.0, 45.5)
    'not resolved at this scale'
    >>> claim_verdict(0.1, 0.4, 0.0, direction="greater")
    'holds'
    >>> claim_verdict(0.0, 0.0, 0.0, direction="less")
    'fails'
    """
    func = "claim_verdict"
    direction = check_choice("direction", direction, func=func, choices=DIRECTIONS)
    claim = check_real("claim", claim, func=func)
    if low is None or high is None:
        return NOT_RESOLVED
    low = check_real("low", low, func=func)
    high = check_real("high", high, func=func, low=low)
    if direction == "value":
        side = "above" if low > claim else "below" if high < claim else None
        return NOT_RESOLVED if side is None else f"{side} the claim"
    holds, fails = {
        "greater": (low > claim, high <= claim),
        "at_least": (low >= claim, high < claim),
        "less": (high < claim, low >= claim),
        "at_most": (high <= claim, low > claim),
    }[direction]
    return "holds" if holds else "fails" if fails else NOT_RESOLVED


def mean_interval_text(mean, interval, digits: int = 3) -> str:
    """``"mean [low, high]"`` with ``digits`` decimals, ``"mean (1 seed)"`` without an
    interval, ``"-"`` without a mean: how the tables print a :class:`SeedInterval`.

    Examples
    --------
    >>> mean_interval_text(0.5, (0.25, 0.75)), mean_interval_text(52.4, (None, None), 1)
    ('0.500 [0.250, 0.750]', '52.4 (1 seed)')
    """
    if mean is None:
        return "-"
    if interval is None or interval[0] is None:
        return f"{mean:.{digits}f} (1 seed)"
    return f"{mean:.{digits}f} [{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]"
