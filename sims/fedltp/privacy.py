"""The privacy loss of a Fed-LTP schedule, and the round at which the budget stops it.

Accounting (:func:`bounds.accounting.fedltp_epsilon_corrected`, in nats): per round, every
one of the ``tau`` local DP-SGD iterations is a Poisson-sampled Gaussian step at rate
``q~`` and noise multiplier ``sigma`` (``sigma / 2`` with batch clipping, sensitivity 2C),
plus one Laplace release of scale ``lambda_val`` (sensitivity 1, exact RDP of Mironov
2017 Prop. 6) for the validation score; ``t`` rounds compose ``t * (tau + 1)`` such
mechanisms, converted to (epsilon, delta) by the tight conversion (Canonne et al. 2020)
optimised over ``bounds.accounting.DEFAULT_ORDERS`` (dp-accounting's grid).

Conservative choices, stated: (i) a record's client is counted as taking part in every
round (no amplification by client sampling q); (ii) ``q~ = min(1, B / n_min)`` with the
smallest client's ``n``, the worst record; (iii) training and validation records are
counted as if they could be the same record (sequential rather than parallel
composition). The paper's eq. 20-21 count one step per round and put the sampling rate in
twice (see ``bounds.accounting``); :mod:`bounds.claims.fedltp` records both defects.

An :class:`sims.fedltp.ablation.Ablation` changes the accounting in two ways: without
validation (Fig. 7) no Laplace release is counted, and ``accounting="composition"``
(Fig. 9) composes each mechanism's (epsilon, delta) by the basic composition theorem
(:func:`bounds.accounting.fedltp_epsilon_composition`) instead.
"""

from __future__ import annotations

from pruneleak.bounds.accounting import (
    DEFAULT_ORDERS,
    fedltp_epsilon_composition,
    fedltp_epsilon_corrected,
)
from pruneleak.bounds.validation import check_int, check_real
from pruneleak.sims.fedltp.ablation import FULL, Ablation
from pruneleak.sims.fedltp.config import FedLTPConfig


def epsilon_after(
    config: FedLTPConfig,
    rounds: int,
    *,
    sampling_rate: float,
    orders=DEFAULT_ORDERS,
    ablation: Ablation = FULL,
) -> float:
    """Epsilon (nats, at ``config.delta``) after ``rounds >= 1`` rounds of the schedule;
    ``sampling_rate`` is q~ in (0, 1]; ``ablation`` as in the module docstring."""
    func = "epsilon_after"
    rounds = check_int("rounds", rounds, func=func, low=1)
    return _epsilon(config, rounds, _sampling_rate(sampling_rate, func), orders, ablation)


def _sampling_rate(value, func: str) -> float:
    return check_real("sampling_rate", value, func=func, low=0, high=1, low_inclusive=False)


def _epsilon(
    config: FedLTPConfig, rounds: int, sampling_rate: float, orders, ablation: Ablation
) -> float:
    accountant = (
        fedltp_epsilon_composition
        if ablation.accounting == "composition"
        else fedltp_epsilon_corrected
    )
    eps, _ = accountant(
        rounds - 1,
        q=sampling_rate,
        noise_multiplier=config.accounted_noise_multiplier,
        lambda_val=config.lambda_val,
        delta=config.delta,
        steps_per_round=config.local_steps,
        orders=orders,
        validation=ablation.validation_release,
    )
    return eps


def affordable_rounds(
    config: FedLTPConfig, *, sampling_rate: float, orders=DEFAULT_ORDERS, ablation: Ablation = FULL
) -> int:
    """The most rounds (<= ``config.rounds``) whose epsilon stays within ``config.epsilon``:
    the loop stops before the first round that would exceed it (0 if the first does).

    Epsilon grows with the rounds (the RDP of each order is linear in them and the
    conversion is increasing in the RDP; under basic composition more steps share delta,
    so each step's epsilon grows too), so a bisection finds the answer in
    ``log2(config.rounds) + 1`` accounting calls (about 15 for 10,000 rounds, not one per
    round).
    """
    rate = _sampling_rate(sampling_rate, "affordable_rounds")
    low, high = 0, config.rounds  # epsilon_after(low) fits (or low = 0); find the last fit
    while low < high:
        middle = (low + high + 1) // 2
        if _epsilon(config, middle, rate, orders, ablation) <= config.epsilon:
            low = middle
        else:
            high = middle - 1
    return low
