r"""One round of the target under PriPrune's adaptive defense: a release with hidden randomness.

The client runs ``tau`` steps of Algorithm 3 (:func:`sims.defenses.adaptive.priprune_step`)
from its start, its current ``alpha`` and its ``w_tilde`` (the defense's state for that
client after earlier rounds), each step drawing Gumbel noise ``U`` for its
straight-through mask, then shares the base-kept weights whose ``alpha`` stayed at most
1/2 (line 12). Both the trained weights and the shared mask depend on the secret ``x``
and on ``U``; the server sees the mask and the sent values (with noise ``N(0, s^2)`` on
them), not ``U``. So :math:`p(y\mid x)` is an integral over ``U`` of many thousand
dimensions, and the leakage is bracketed from the outcomes of independent draws of ``U``
(:mod:`sims.releases.hidden`: :math:`I(X; Y, U)` above, Barber-Agakov with a smoothed
Monte Carlo likelihood below).

Every secret's round under one ``U`` is one vectorised computation (``torch.func.vmap``
of :func:`priprune_step` over the secrets, the noise shared: the client draws it from its
seed, not from its data).
"""

from __future__ import annotations

import torch
from torch.func import grad, vmap

from pruneleak.bounds.validation import check_int
from pruneleak.sims.core.functional import batch_loss
from pruneleak.sims.defenses import PriPruneDefense
from pruneleak.sims.defenses.adaptive import mixed_point, priprune_step, priprune_update
from pruneleak.sims.releases.hidden import CRITIC_DRAWS, hidden_randomness_leakage
from pruneleak.sims.releases.setting import MAX_SECRETS, ClientSetting, secret_data
from pruneleak.sims.releases.value import LeakageValue


class PriPruneRelease:
    """The target's one upload under :class:`sims.defenses.PriPruneDefense` (module docstring).

    Args:
        setting: the round as the server knows it; ``setting.params`` is where the client
            starts (:meth:`sims.defenses.Defense.start`).
        images, labels: the ``M`` candidates.
        defense: the defense, holding the client's state (``alpha``, and with
            Pseudo-Pruning its previous trained model) after its earlier rounds; it is not
            modified.
        client_id: the target's id in ``defense``.
        batch_size: ``B``; the secret is a uniform ``B``-subset (one world per subset).
        max_secrets: as in :class:`sims.releases.FederatedRelease`.
        critic_draws: ``L``, draws of the randomness behind the critic, >= 2.
    """

    randomness = "hidden"

    def __init__(
        self,
        setting: ClientSetting,
        images: torch.Tensor,
        labels: torch.Tensor,
        defense: PriPruneDefense,
        *,
        client_id: int = 0,
        batch_size: int = 1,
        max_secrets: int = MAX_SECRETS,
        critic_draws: int = CRITIC_DRAWS,
    ):
        func = "PriPruneRelease"
        if not isinstance(defense, PriPruneDefense):
            raise ValueError(
                f"The 'defense' parameter of {func} must be a sims.defenses.PriPruneDefense. "
                f"Got {type(defense).__name__} instead."
            )
        self.setting, self.defense = setting, defense
        self.critic_draws = check_int("critic_draws", critic_draws, func=func, low=2)
        client_id = check_int("client_id", client_id, func=func, low=0)
        self.images, self.labels = secret_data(
            setting, images, labels, batch_size, max_secrets=max_secrets, func=func
        )
        start = setting.params
        self.alpha = {
            n: a.to(setting.device, torch.float64)
            for n, a in defense.start_alpha(client_id, start).items()
        }
        tilde = defense.combination_weights(client_id, start)
        self.tilde = {n: t.to(torch.float64) for n, t in tilde.items()}

    @property
    def secrets(self) -> int:
        return self.images.shape[0]

    def outcomes(self, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Every secret's round under the Gumbel noise of ``seed``: ``(trained, shared)``,
        ``(N, k)`` on the kept coordinates: the trained weights (the upload sends them
        where ``shared`` and nothing elsewhere) and the shared mask. The noise is
        drawn as :meth:`sims.defenses.PriPruneDefense.local_update` draws it from a
        generator seeded by ``seed`` (per step, per prunable tensor in order)."""
        setting, defense = self.setting, self.defense
        options = defense.step_options(setting.lr, setting.gradient_at)
        device = setting.device
        generator = torch.Generator(device=device).manual_seed(seed)
        mask, model, tilde = setting.mask, setting.model, self.tilde
        temperature = defense.temperature

        def noise():
            return {
                k: defense.draw_noise(tuple(a.shape), generator, device).to(torch.float64)
                for k, a in self.alpha.items()
            }

        def update(v, g, alpha, slope):
            return priprune_update(v, g, alpha, slope, mask, **options)

        def step(w, alpha, draws, x, y):
            out = priprune_step(
                model, w, alpha, tilde, draws, x, y, mask, temperature=temperature, **options
            )
            return out[:2]

        # step 1 starts every secret from the same weights and alpha: the mix, and the
        # point v where the gradients are taken, are common (one computation); only the
        # gradients and what follows from them are per secret
        v, slope = mixed_point(
            setting.params,
            self.alpha,
            tilde,
            noise(),
            mask,
            temperature=temperature,
            gradient_at=setting.gradient_at,
        )
        g = vmap(grad(batch_loss, argnums=1), in_dims=(None, None, 0, 0))(
            model, v, self.images, self.labels
        )
        w, alpha = vmap(update, in_dims=(None, 0, None, None))(v, g, self.alpha, slope)
        for _ in range(setting.local_steps - 1):
            w, alpha = vmap(step, in_dims=(0, 0, None, 0, 0))(
                w, alpha, noise(), self.images, self.labels
            )
        keep = {k: torch.ones_like(v, dtype=torch.bool) for k, v in w.items()}
        for k, a in alpha.items():
            keep[k] = a <= 0.5
        return setting.kept_rows(w), setting.kept_rows(keep)

    def leakage(
        self, noise_std: float, *, samples: int, confidence: float, seed: int
    ) -> LeakageValue:
        """Certified bracket of ``I(X; Y)`` and of the Bayes success over ``samples``
        draws of (secret, Gumbel noise, Gaussian noise)
        (:func:`sims.releases.hidden.hidden_randomness_leakage`)."""
        return hidden_randomness_leakage(
            self.outcomes,
            noise_std,
            samples=samples,
            confidence=confidence,
            seed=seed,
            critic_draws=self.critic_draws,
        )
