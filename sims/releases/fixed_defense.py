r"""One round of the target under PriPrune's fixed defenses: Largest, Random, Mix.

The client trains as without a defense (``tau`` steps of eq. (1) from its start: the
broadcast, or with Pseudo-Pruning the broadcast with its previously withheld weights
loaded back, :meth:`sims.defenses.Defense.start`), then withholds part of the base-kept
prunable weights (:func:`sims.defenses.defense_mask`) and sends the rest. The server sees
which coordinates were sent (the shared mask ``S``) and their values, with Gaussian noise
``N(0, s^2)`` on each sent value. Per prunable tensor the withheld set is ``L(x) ∪ R``:

* ``L(x)``: the ``round(p_L k)`` kept weights with the largest updates, a function of the
  secret ``x`` (Largest: ``p_L = rate``; Mix: ``rate * largest_fraction``; Random: none);
* ``R``: ``round(p_R k)`` weights drawn uniformly among the others, independent of ``x``
  (Random, Mix).

Given ``x``, ``R`` is a uniform subset of a set whose size does not depend on ``x``, so
the mask has probability :math:`1/\binom{k - |L|}{|R|}` (per tensor) when
:math:`L(x)\subseteq` the withheld set, and 0 otherwise. The trained weights
:math:`r_x` do not depend on the mask (it is chosen after training), so

.. math::

    p(y\mid x) \propto \mathbf 1[L(x)\cap S = \emptyset]\,
    \exp\!\Big(-\frac{\|(y - r_x)\odot S\|^2}{2 s^2}\Big),

the same constant for every ``x``: the exact likelihood, so the leakage is exact (Monte
Carlo over the secret, the random part and the noise:
:func:`bounds.leakage.posterior_leakage`). For Random the mask is independent of ``x``
and seen, so this is also :math:`E_U I(X; Y\mid U)`; for Largest the mask is a
deterministic function of ``x`` that the server reads off the upload.
"""

from __future__ import annotations

import torch

from pruneleak.bounds import leakage as bounds_leakage
from pruneleak.bounds.validation import check_int, check_real
from pruneleak.sims.core.runtime import check_seed
from pruneleak.sims.defenses import FixedDefense, defense_mask
from pruneleak.sims.pruning.mask import prunable_names
from pruneleak.sims.pruning.schemes import derived_seed
from pruneleak.sims.releases.likelihood import (
    MAX_NOISE_STD,
    consistent_withheld,
    observation_log_likelihoods,
)
from pruneleak.sims.releases.setting import MAX_SECRETS, ClientSetting, secret_data
from pruneleak.sims.releases.training import CHUNK, train_each
from pruneleak.sims.releases.value import LeakageValue

#: Monte Carlo draws whose uploads are held at once (each ``k`` values and flags).
DRAW_CHUNK = 256


class FixedDefenseRelease:
    """The target's one defended upload (module docstring).

    Args:
        setting: the round as the server knows it; ``setting.params`` are the weights the
            client starts from (:meth:`sims.defenses.Defense.start` of the defense's
            state: with Pseudo-Pruning, the broadcast with the weights it withheld last
            time loaded back).
        images, labels: the ``M`` candidates.
        defense: the :class:`sims.defenses.FixedDefense` (strategy, rate, Mix's split);
            its seed is not used: the random part is drawn afresh for every Monte Carlo
            draw (:meth:`upload`).
        batch_size: ``B``; the secret is a uniform ``B``-subset (one world per subset).
        max_secrets, chunk: as in :class:`sims.releases.FederatedRelease`.
    """

    def __init__(
        self,
        setting: ClientSetting,
        images: torch.Tensor,
        labels: torch.Tensor,
        defense: FixedDefense,
        *,
        batch_size: int = 1,
        max_secrets: int = MAX_SECRETS,
        chunk: int = CHUNK,
    ):
        func = "FixedDefenseRelease"
        if not isinstance(defense, FixedDefense):
            raise ValueError(
                f"The 'defense' parameter of {func} must be a sims.defenses.FixedDefense. "
                f"Got {type(defense).__name__} instead."
            )
        self.setting, self.defense = setting, defense
        x, y = secret_data(setting, images, labels, batch_size, max_secrets=max_secrets, func=func)
        self.trained = train_each(
            setting, setting.params, x, y, start_per_row=False, data_per_row=True, chunk=chunk
        )
        self.table = setting.kept_rows(self.trained)
        self.forced = self._forced_withheld()

    @property
    def randomness(self) -> str:
        """``"none"`` (Largest), ``"observed"`` (Random: the mask is independent of the
        secret and seen), ``"hidden"`` (Mix: which withheld weights were random is not
        seen; the likelihood is still exact, module docstring)."""
        return {"largest": "none", "random": "observed", "mix": "hidden"}[self.defense.strategy]

    @property
    def secrets(self) -> int:
        return self.table.shape[0]

    def _largest_rate(self) -> float:
        d = self.defense
        return {"largest": d.rate, "random": 0.0, "mix": d.rate * d.largest_fraction}[d.strategy]

    def _update(self, i: int) -> dict[str, torch.Tensor]:
        start = self.setting.params
        return {n: start[n] - self.trained[n][i] for n in prunable_names(self.setting.mask.keep)}

    def _forced_withheld(self) -> torch.Tensor:
        """``(N, k)`` bool: each secret's forced withheld set ``L(x)`` on the kept
        coordinates (:func:`sims.defenses.defense_mask`'s Largest rule at the Largest
        part of the rate)."""
        base, rate = self.setting.mask, self._largest_rate()
        rows = []
        for i in range(self.secrets):
            shared = defense_mask("largest", base, self._update(i), rate=rate)
            rows.append(~shared.flatten()[base.flatten()])
        return torch.stack(rows)

    def upload(self, i: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """Secret ``i``'s upload with the random part drawn by ``generator`` (CPU):
        ``(values, shared)`` on the kept coordinates, ``values`` 0 where not sent (as
        :meth:`sims.defenses.Defense.upload` sends it)."""
        d, base = self.defense, self.setting.mask
        mask = defense_mask(
            d.strategy,
            base,
            self._update(i),
            rate=d.rate,
            largest_fraction=d.largest_fraction,
            generator=generator,
        )
        shared = mask.flatten()[base.flatten()]
        return torch.where(shared, self.table[i], 0.0), shared

    def leakage(
        self, noise_std: float, *, samples: int, confidence: float, seed: int
    ) -> LeakageValue:
        """Exact ``I(X; Y)`` and Bayes success by Monte Carlo over ``samples`` draws of
        (secret, random part, noise) (module docstring)."""
        func = "FixedDefenseRelease.leakage"
        s = check_real("noise_std", noise_std, func=func, low=0, high=MAX_NOISE_STD)
        n = check_int("samples", samples, func=func, low=2)
        seed = check_seed(seed, func=func)
        generator = torch.Generator().manual_seed(derived_seed(seed, 0))
        truth = torch.randint(self.secrets, (n,), generator=generator)
        scores = []
        for lo in range(0, n, DRAW_CHUNK):  # memory: DRAW_CHUNK x k values at a time
            draws = range(lo, min(n, lo + DRAW_CHUNK))
            uploads = [
                self.upload(int(truth[d]), torch.Generator().manual_seed(derived_seed(seed, 1, d)))
                for d in draws
            ]
            observed = torch.stack([values for values, _ in uploads])
            shared = torch.stack([flags for _, flags in uploads])
            noise = torch.randn(observed.shape, generator=generator, dtype=torch.float64)
            observed = observed + s * noise.to(observed.device) * shared
            possible = consistent_withheld(self.forced, shared)
            chunk = observation_log_likelihoods(observed, shared, self.table, s)
            scores.append(torch.where(possible, chunk, -torch.inf))
        scores = torch.cat(scores)
        result = bounds_leakage.posterior_leakage(
            scores.cpu().numpy(), truth.numpy(), confidence=confidence
        )
        return LeakageValue.of(result)
