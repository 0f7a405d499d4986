"""When PruneFL and FedDST re-adjust their masks: the papers' schedules, scaled to a run.

PriPrune evaluates the iterative schemes over 20,000 FL rounds (journal version,
"Implementation details"), each with its authors' re-adjustment interval: PruneFL every
50 rounds (its FEMNIST configuration), FedDST every 15 (its README's CIFAR-10 example).
A run here has far fewer rounds; with the authors' intervals unchanged, a 20-round run
re-adjusts PruneFL never and FedDST once, so the schemes act as one-shot masks.
:func:`scaled_interval` keeps the *paper's pace*, the fraction of the horizon between two
re-adjustments:

.. math:: R_{\\text{run}} = \\max\\left(1, \\left\\lfloor R_{\\text{paper}}
          \\frac{T_{\\text{run}}}{T_{\\text{paper}}} \\right\\rfloor\\right)

and the scheme re-adjusts in rounds :math:`R, 2R, \\dots \\le T` (:func:`readjust_rounds`;
:mod:`sims.pruning.schemes` counts rounds from 1). Every run shorter than
:math:`T_{\\text{paper}} / R_{\\text{paper}}` rounds (400 for PruneFL, 1,333 for FedDST)
therefore re-adjusts in every round, as many times as it has rounds: the closest a short
run comes to the paper's 400 (PruneFL) and 1,333 (FedDST) re-adjustments. FedDST's
annealing ends at half the run (``decay_end``, its code's default), also scaled.
"""

from __future__ import annotations

from dataclasses import dataclass

from pruneleak.bounds.validation import check_choice, check_int


@dataclass(frozen=True)
class ReadjustmentSchedule:
    """An iterative scheme's re-adjustment interval in its paper's run.

    Attributes:
        interval: rounds between two re-adjustments in the paper's run.
        horizon: rounds of the paper's run (PriPrune's 20,000).
        source: where the two numbers come from.
    """

    interval: int
    horizon: int
    source: str


#: PriPrune's horizon (journal version, "Implementation details": 20,000 iterations).
PRIPRUNE_ROUNDS = 20_000

#: The schedules PriPrune ran the iterative schemes with, by scheme name.
PAPER_SCHEDULES = {
    "prunefl": ReadjustmentSchedule(
        50, PRIPRUNE_ROUNDS, "PruneFL's FEMNIST configuration, over PriPrune's 20,000 rounds"
    ),
    "feddst": ReadjustmentSchedule(
        15, PRIPRUNE_ROUNDS, "FedDST's README (CIFAR-10), over PriPrune's 20,000 rounds"
    ),
}


def scaled_interval(scheme: str, rounds: int) -> int:
    """The re-adjustment interval of ``scheme`` (a key of :data:`PAPER_SCHEDULES`) in a
    run of ``rounds`` rounds at its paper's pace (module docstring).

    Examples
    --------
    >>> scaled_interval("prunefl", 20_000), scaled_interval("prunefl", 1_000)
    (50, 2)
    >>> scaled_interval("feddst", 20)
    1
    """
    func = "scaled_interval"
    check_choice("scheme", scheme, func=func, choices=tuple(PAPER_SCHEDULES))
    rounds = check_int("rounds", rounds, func=func, low=1)
    schedule = PAPER_SCHEDULES[scheme]
    return max(1, schedule.interval * rounds // schedule.horizon)


def readjust_rounds(interval: int, rounds: int) -> list[int]:
    """The rounds ``interval, 2 interval, ... <= rounds`` in which a scheme with that
    interval re-adjusts (:meth:`sims.pruning.schemes.PruningScheme._is_readjust_round`).

    Examples
    --------
    >>> readjust_rounds(3, 10)
    [3, 6, 9]
    """
    interval = check_int("interval", interval, func="readjust_rounds", low=1)
    rounds = check_int("rounds", rounds, func="readjust_rounds", low=0)
    return list(range(interval, rounds + 1, interval))
