"""Shared by the claim-check tests: a MonteCarloCheck built from the parts a test varies.

A plain module rather than a fixture because the tests also build checks at import time,
inside ``pytest.mark.parametrize`` lists.
"""

from __future__ import annotations

from pruneleak.bounds.claims.checks import MonteCarloCheck


def monte_carlo_check(
    sampler, claimed, relation, points, statistic="probability", *, samples, **options
):
    """``MonteCarloCheck`` with placeholder labels (``"t"``, ``"c"``); ``options`` as there."""
    return MonteCarloCheck(
        sampler=sampler,
        claimed=claimed,
        points=points,
        relation=relation,
        statistic=statistic,
        samples=samples,
        true_label="t",
        claimed_label="c",
        **options,
    )
