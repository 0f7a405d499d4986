r"""The leakage of a release with hidden randomness, bracketed from its outcomes.

A mechanism whose output depends on the secret :math:`x` and on randomness :math:`U` the
server does not see (PriPrune's Gumbel noise, :mod:`sims.releases.priprune`) provides
``outcomes(seed)``: every secret's release under one draw of :math:`U`, as
``(table, shared)``, ``(N, k)`` values on all coordinates and the bool mask of the
coordinates the upload sends (seen by the server). The server sees
:math:`y = r_x(U)\odot S_x(U) + N(0, s^2)` on the sent coordinates. Then
(:func:`bounds.leakage.posterior_bracket`):

* **upper**, :math:`I(X; Y, U)`: draw ``d`` takes its own :math:`U_d`, the exact
  likelihood of :math:`y_d` under every secret given :math:`U_d` (the secret's mask must
  equal the seen one; Gaussian on the sent values, :mod:`sims.releases.likelihood`);
* **lower**, Barber-Agakov with the critic
  :math:`f(x, y) = \log\frac1L\sum_l \exp(-\|(y - r_x(U'_l))\odot S_y\|^2 / (2(s^2 + h^2)))`
  over ``L`` draws :math:`U'_l` made once, independently of the evaluation draws: a
  smoothed Monte Carlo estimate of :math:`p(y\mid x)`, over the draws in which the
  secret's mask is the seen one when there are any, else over all draws (a mask rarely
  repeats exactly across draws of a high-dimensional :math:`U`), plus the
  log-probability of the seen mask with each coordinate sent independently at its
  frequency among the secret's critic draws (a mask that depends on the secret
  identifies it even when it never repeats exactly). Any
  critic gives a valid lower bound, so :math:`h^2` is chosen to make it tight, from the
  critic's own draws only (never an evaluation draw): among ``(0, 1/16, 1/4, 1)`` times the
  mean per-coordinate variance of the releases across those draws (the spread :math:`U`
  adds), the value whose critic, built from the other draws, best identifies a secret
  released under each draw in turn (leave one draw out, every secret once). With
  ``s = 0`` and no spread the critic counts exact matches.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from pruneleak.bounds import leakage as bounds_leakage
from pruneleak.bounds.validation import check_int, check_real
from pruneleak.sims.core.runtime import check_seed
from pruneleak.sims.pruning.schemes import derived_seed
from pruneleak.sims.releases.likelihood import (
    MAX_NOISE_STD,
    observation_log_likelihoods,
    shared_log_likelihoods,
)
from pruneleak.sims.releases.value import LeakageValue

#: Draws of the hidden randomness behind the lower bound's critic.
CRITIC_DRAWS = 32

Outcomes = Callable[[int], tuple[torch.Tensor, torch.Tensor]]


def hidden_randomness_leakage(
    outcomes: Outcomes,
    noise_std: float,
    *,
    samples: int,
    confidence: float,
    seed: int,
    critic_draws: int = CRITIC_DRAWS,
) -> LeakageValue:
    """A certified bracket of ``I(X; Y)`` and of the Bayes success (module docstring).

    Args:
        outcomes: ``seed -> (table, shared)``, every secret's release under the
            randomness drawn from ``seed`` (a deterministic function of it).
        noise_std: ``s >= 0`` on every sent value.
        samples: evaluation draws of (secret, randomness, noise), >= 2; each calls
            ``outcomes`` once.
        confidence: level of the intervals.
        seed: seeds the secrets, the noise and the randomness (evaluation draws
            ``derived_seed(seed, 1, d)``, critic draws ``derived_seed(seed, 2, l)``).
        critic_draws: ``L >= 2``.
    """
    func = "hidden_randomness_leakage"
    s = check_real("noise_std", noise_std, func=func, low=0, high=MAX_NOISE_STD)
    n = check_int("samples", samples, func=func, low=2)
    draws = check_int("critic_draws", critic_draws, func=func, low=2)
    seed = check_seed(seed, func=func)
    critic = [outcomes(derived_seed(seed, 2, j)) for j in range(draws)]
    secrets = critic[0][0].shape[0]
    generator = torch.Generator().manual_seed(derived_seed(seed, 0))
    truth = torch.randint(secrets, (n,), generator=generator)
    scorer = _Critic(critic, _critic_width(critic, s))
    upper, scores = [], []
    for d, x in enumerate(truth.tolist()):
        table, shared = outcomes(derived_seed(seed, 1, d))
        seen = shared[x]
        noise = torch.randn(seen.shape, generator=generator, dtype=torch.float64)
        y = torch.where(seen, table[x] + s * noise.to(seen.device), 0.0)[None]
        same_mask = (shared == seen).all(dim=1)
        exact = observation_log_likelihoods(y, seen[None], table, s)[0]
        upper.append(torch.where(same_mask, exact, -torch.inf))
        scores.append(scorer.scores(y, seen))
    result = bounds_leakage.posterior_bracket(
        torch.stack(upper).cpu().numpy(),
        torch.stack(scores).cpu().numpy(),
        truth.numpy(),
        confidence=confidence,
    )
    return LeakageValue.of(result)


#: Multiples of the critic draws' spread tried as the smoothing h^2 (module docstring).
SMOOTHING = (0.0, 1 / 16, 1 / 4, 1.0)
#: Left-out critic draws, and secrets per draw, behind the choice of h^2.
_CHOICE_DRAWS = 2
_CHOICE_SECRETS = 32


def _critic_width(critic, noise_std: float) -> float:
    """``sqrt(s^2 + h^2)`` with ``h^2`` chosen by leaving critic draws out (module
    docstring): the summed log critic posterior of the true secret for noiseless releases
    of the left-out draw (the first draws, up to 32 evenly spaced secrets)."""
    spread = float(torch.stack([table for table, _ in critic]).var(dim=0).mean())
    widths = sorted({math.sqrt(noise_std**2 + f * spread) for f in SMOOTHING} - {0.0})
    if len(widths) < 2:
        return widths[0] if widths else 0.0
    n = critic[0][0].shape[0]
    rows = torch.linspace(0, n - 1, min(n, _CHOICE_SECRETS)).round().long().unique()
    best, score = widths[0], -math.inf
    for width in widths:
        total = 0.0
        for j in range(min(_CHOICE_DRAWS, len(critic))):
            table, shared = critic[j]
            y, seen = table[rows], shared[rows]
            terms = torch.stack(
                [
                    shared_log_likelihoods(y, seen, other, width)
                    for k, (other, _) in enumerate(critic)
                    if k != j
                ]
            )
            scores = torch.logsumexp(terms, dim=0)
            total += float((scores[torch.arange(len(rows)), rows] - scores.logsumexp(1)).sum())
        if total > score:
            best, score = width, total
    return best


class _Critic:
    """The lower bound's critic (module docstring), built once from the critic draws."""

    def __init__(self, critic, width: float):
        self.critic, self.width = critic, width
        # per secret and coordinate, the Laplace-smoothed frequency of being sent
        sent = torch.stack([shared for _, shared in critic]).to(torch.float64).sum(dim=0)
        frequency = (sent + 1) / (len(critic) + 2)
        self.log_sent, self.log_held = torch.log(frequency), torch.log1p(-frequency)

    def scores(self, y: torch.Tensor, seen: torch.Tensor) -> torch.Tensor:
        """``(N,)`` at observation ``y`` (``(1, k)``, sent coordinates ``seen``): the log
        mean over the critic draws of the Gaussian likelihood of width ``width`` on the
        sent coordinates (only the draws whose mask for the secret is the seen one, when
        any draw has it; exact matches when ``width = 0``), plus the log-probability of the
        seen mask with each coordinate sent independently at its frequency among the
        secret's draws: a mask that depends on the secret identifies it even when it never
        repeats exactly."""
        terms, masks = [], []
        for table, shared in self.critic:
            terms.append(observation_log_likelihoods(y, seen[None], table, self.width)[0])
            masks.append((shared == seen).all(dim=1))
        terms, masks = torch.stack(terms), torch.stack(masks)
        if masks.any():
            terms = torch.where(masks, terms, -torch.inf)
        flags = seen.to(torch.float64)
        mask_term = self.log_sent @ flags + self.log_held @ (1 - flags)
        return torch.logsumexp(terms, dim=0) - math.log(len(self.critic)) + mask_term
