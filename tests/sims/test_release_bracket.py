"""The bracket of a release with hidden randomness against I(X; Y) by quadrature.

Tiny mechanisms (M = 3 secrets, k <= 2 coordinates, a fair coin U) whose I(X; Y) is a
one-dimensional integral of Gaussian mixtures (scipy.integrate.quad). The bracket of
sims.releases.hidden_randomness_leakage must contain it; a critic that used the draw's own
randomness (the planted error: I(X; Y, U) in place of a lower bound) would put the lower
end above it, and so would an upper end computed without the randomness.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import integrate, stats

from pruneleak.sims.releases import hidden_randomness_leakage

A, S = 2.0, 0.5
#: Release of each secret (rows) under U = 0 and U = 1: secrets 0 and 2 swap places.
TABLES = np.array([[0.0, A, 2 * A], [2 * A, A, 0.0]])


def _coin(seed: int) -> int:
    return int(torch.randint(2, (1,), generator=torch.Generator().manual_seed(seed)))


def hidden_coin(seed: int):
    """One coordinate, always sent: the server cannot tell U."""
    u = _coin(seed)
    table = torch.tensor(TABLES[u], dtype=torch.float64)[:, None]
    return table, torch.ones(3, 1, dtype=torch.bool)


def coin_in_the_mask(seed: int):
    """Two coordinates, U picks which one is sent: the mask shows U."""
    u = _coin(seed)
    table = torch.zeros(3, 2, dtype=torch.float64)
    table[:, u] = torch.tensor(TABLES[u])
    shared = torch.zeros(3, 2, dtype=torch.bool)
    shared[:, u] = True
    return table, shared


def _bits(densities) -> float:
    """I(X; Y) in bits for X uniform and the one-dimensional densities p(y | x)."""

    def term(x, y):
        px = densities[x](y)
        py = np.mean([d(y) for d in densities])
        return px * math.log2(px / py) if px > 0 else 0.0

    lo, hi = -6 * S, 2 * A + 6 * S
    return float(
        np.mean([integrate.quad(lambda y, x=x: term(x, y), lo, hi, limit=200)[0] for x in range(3)])
    )


def _mixture(x: int):
    return lambda y: 0.5 * (stats.norm.pdf(y, TABLES[0, x], S) + stats.norm.pdf(y, TABLES[1, x], S))


def test_hidden_coin_bracket_contains_the_quadrature_value():
    truth = _bits([_mixture(x) for x in range(3)])
    knowing_u = 0.5 * sum(
        _bits([lambda y, m=TABLES[u, x]: stats.norm.pdf(y, m, S) for x in range(3)]) for u in (0, 1)
    )
    assert truth < knowing_u - 0.3  # the randomness hides a lot: the test can tell
    value = hidden_randomness_leakage(
        hidden_coin, S, samples=3000, confidence=0.95, seed=1, critic_draws=16
    )
    assert value.method == "bracket"
    assert value.ci_bits[0] <= truth <= value.ci_bits[1]
    lower, upper = value.bracket_bits
    assert lower <= truth + 0.02 and upper == pytest.approx(knowing_u, abs=0.06)
    assert upper - truth > 0.3  # the upper end is I(X; Y, U), not I(X; Y)


def test_randomness_seen_in_the_mask_gives_the_exact_value_on_both_ends():
    """U is a function of Y: I(X; Y) = I(X; Y, U), the average of the two channels."""
    truth = 0.5 * sum(
        _bits([lambda y, m=TABLES[u, x]: stats.norm.pdf(y, m, S) for x in range(3)]) for u in (0, 1)
    )
    value = hidden_randomness_leakage(
        coin_in_the_mask, S, samples=3000, confidence=0.95, seed=2, critic_draws=16
    )
    assert value.ci_bits[0] <= truth <= value.ci_bits[1]
    # the critic keeps the draws whose mask is the seen one: both ends near the value
    assert value.bracket_bits == pytest.approx((truth, truth), abs=0.03)
