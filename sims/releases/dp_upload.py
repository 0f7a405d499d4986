r"""One round of the target under Fed-LTP's DP local training: a release with hidden DP noise.

Fed-LTP (Algorithm 2, lines 12-19; :class:`sims.fedltp.dp_local.DPLocalTrainer`) trains
``tau`` DP-SGD steps from the broadcast under the client's mask and uploads the result.
Here the client's data are its secret batch of ``B`` candidates, so its Poisson batches
(inclusion ``min(1, B / n)`` with ``n = B``) hold all ``B`` records at every step. One
step, as Opacus' ``DPOptimizer`` takes it (per-example clipping):

.. math::

    \tilde g = \frac1B\Big(\sum_{i\le B} g_i \min\big(1, \tfrac{C}{\|g_i\| + 10^{-6}}\big)
               + \sigma C\,\xi\Big),\quad
    b \leftarrow \mu b + \tilde g,\quad w \leftarrow m\odot(w - \eta b),

with ``g_i`` the per-example gradients at ``m ⊙ w`` restricted to the kept coordinates,
``xi ~ N(0, I)`` drawn afresh each step (the hidden randomness ``U``) and momentum ``mu``
(PyTorch's SGD: the buffer starts at the first gradient). The server sees the kept
coordinates of the final weights (plus observer noise ``s``, if any).

Leakage (:func:`sims.releases.hidden.hidden_randomness_leakage`): Barber-Agakov below;
above, the smaller of :math:`I(X; Y, U)` and the DP bound :func:`dp_sgd_bits_bound`, which
holds for any data: the trajectory's noisy gradients determine every iterate, each step
is a Gaussian channel whose input (the mean of clipped gradients) has norm at most
``C``, so its information is at most the capacity
:math:`\tfrac12\log(1 + P/\nu^2) \le P/(2\nu^2)` with power :math:`P \le C^2` and noise
:math:`\nu = \sigma C / B` per coordinate (Cover & Thomas, 2nd ed., eq. 9.162), and
the ``tau`` steps add (chain rule): :math:`I(X; Y) \le \tau B^2 / (2\sigma^2)` nats.
"""

from __future__ import annotations

import math

import torch
from torch.func import grad, vmap

from pruneleak.bounds.validation import check_int, check_real
from pruneleak.sims.core.functional import batch_loss
from pruneleak.sims.releases.hidden import CRITIC_DRAWS, hidden_randomness_leakage
from pruneleak.sims.releases.setting import MAX_SECRETS, ClientSetting, secret_data
from pruneleak.sims.releases.value import LeakageValue

#: Opacus' stabiliser of the per-example clip factor ``C / (||g|| + 1e-6)``.
CLIP_EPS = 1e-6


def dp_sgd_bits_bound(steps: int, noise_multiplier: float, batch_size: int) -> float:
    r"""Upper bound on :math:`I(X; Y)` in bits of ``steps`` DP-SGD steps (module docstring):
    :math:`\tau B^2 / (2\sigma^2 \ln 2)`, infinite for :math:`\sigma = 0`.

    Examples
    --------
    >>> round(dp_sgd_bits_bound(1, 1.0, 1), 6)  # 1 / (2 ln 2)
    0.721348
    """
    func = "dp_sgd_bits_bound"
    tau = check_int("steps", steps, func=func, low=1)
    sigma = check_real("noise_multiplier", noise_multiplier, func=func, low=0)
    b = check_int("batch_size", batch_size, func=func, low=1)
    if sigma == 0:
        return math.inf
    return tau * b * b / (2 * sigma * sigma * math.log(2))


#: Largest standard deviation ``lr * sigma * C / B`` of the noise on an upload: the
#: likelihoods sum squared distances over up to ~1e8 coordinates divided by its square,
#: which stays a finite float64 only well below sqrt(1.8e308) ~ 1e154.
MAX_UPLOAD_NOISE_STD = 1e100


class DPUploadRelease:
    """The target's upload after ``tau`` DP-SGD steps (module docstring).

    Args:
        setting: the round as the server knows it (``setting.local_steps`` is ``tau``,
            ``setting.lr`` the step size eta; the gradient is taken at ``m ⊙ w``).
        images, labels: the ``M`` candidates.
        max_grad_norm: ``C > 0``. noise_multiplier: ``sigma >= 0``.
        momentum: ``mu`` in [0, 1).
        batch_size: ``B``; the secret is a uniform ``B``-subset, the client's whole data.
        max_secrets: as in :class:`sims.releases.FederatedRelease`.
        critic_draws: draws of the noise behind the lower bound's critic, >= 2.
    """

    randomness = "hidden"

    def __init__(
        self,
        setting: ClientSetting,
        images: torch.Tensor,
        labels: torch.Tensor,
        *,
        max_grad_norm: float,
        noise_multiplier: float,
        momentum: float = 0.0,
        batch_size: int = 1,
        max_secrets: int = MAX_SECRETS,
        critic_draws: int = CRITIC_DRAWS,
    ):
        func = "DPUploadRelease"
        self.setting = setting
        self.clip = check_real(
            "max_grad_norm", max_grad_norm, func=func, low=0, low_inclusive=False
        )
        self.sigma = check_real("noise_multiplier", noise_multiplier, func=func, low=0)
        self.momentum = check_real(
            "momentum", momentum, func=func, low=0, high=1, high_inclusive=False
        )
        self.critic_draws = check_int("critic_draws", critic_draws, func=func, low=2)
        noise_std = setting.lr * self.sigma * self.clip / batch_size
        if noise_std > MAX_UPLOAD_NOISE_STD:
            raise ValueError(
                f"The 'noise_multiplier' parameter of {func}, times 'max_grad_norm' and the "
                f"client's lr over B, gives the upload noise of standard deviation "
                f"{noise_std:.3g}; at most MAX_UPLOAD_NOISE_STD = {MAX_UPLOAD_NOISE_STD:g} "
                f"is allowed (the likelihoods square it). Got noise_multiplier={self.sigma!r} "
                f"and max_grad_norm={self.clip!r} instead."
            )
        self.images, self.labels = secret_data(
            setting, images, labels, batch_size, max_secrets=max_secrets, func=func
        )
        self.batch_size = self.images.shape[1]

    @property
    def secrets(self) -> int:
        return self.images.shape[0]

    def noise(self, seed: int) -> list[dict[str, torch.Tensor]]:
        """The standard normal ``xi`` of every step (``tau`` dicts on the kept weights'
        shapes), drawn on the device by a generator seeded by ``seed``."""
        setting = self.setting
        generator = torch.Generator(device=setting.device).manual_seed(seed)
        return [
            {
                name: torch.randn(
                    t.shape, generator=generator, device=setting.device, dtype=torch.float64
                )
                for name, t in setting.params.items()
            }
            for _ in range(setting.local_steps)
        ]

    def outcomes(self, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Every secret's upload under the DP noise of ``seed``: ``(values, shared)`` on the
        kept coordinates (everything kept is sent)."""
        setting = self.setting
        mask, model, lr = setting.mask, setting.model, setting.lr
        keep = {name: flags.to(torch.float64) for name, flags in mask.keep.items()}
        steps = self.noise(seed)

        def sample_loss(w, x, y):
            return batch_loss(model, w, x[None], y[None])

        per_example = vmap(grad(sample_loss), in_dims=(None, 0, 0))

        def train(x, y):
            w, buffer = dict(setting.params), None
            for xi in steps:
                g = per_example(mask.apply(w), x, y)  # (B, *shape) per name
                g = {name: value * keep[name] for name, value in g.items()}
                norms = torch.sqrt(sum((v.flatten(1) ** 2).sum(dim=1) for v in g.values()))
                factor = (self.clip / (norms + CLIP_EPS)).clamp(max=1.0)
                noisy = {
                    name: (
                        torch.einsum("b,b...->...", factor, v) + self.sigma * self.clip * xi[name]
                    )
                    * keep[name]
                    / len(y)
                    for name, v in g.items()
                }
                buffer = (
                    noisy
                    if buffer is None
                    else {name: self.momentum * buffer[name] + noisy[name] for name in noisy}
                )
                w = mask.apply({name: w[name] - lr * buffer[name] for name in w})
            return w

        trained = vmap(train)(self.images, self.labels)
        values = setting.kept_rows(trained)
        return values, torch.ones_like(values, dtype=torch.bool)

    def leakage(
        self, noise_std: float, *, samples: int, confidence: float, seed: int
    ) -> LeakageValue:
        """Bracket of ``I(X; Y)`` (module docstring): the hidden-randomness bracket with
        its upper end lowered to :func:`dp_sgd_bits_bound` where that is smaller."""
        value = hidden_randomness_leakage(
            self.outcomes,
            noise_std,
            samples=samples,
            confidence=confidence,
            seed=seed,
            critic_draws=self.critic_draws,
        )
        cap = dp_sgd_bits_bound(self.setting.local_steps, self.sigma, self.batch_size)
        lower, upper = value.bracket_bits
        low, high = value.ci_bits
        upper, high = min(upper, cap), min(high, cap)
        lower, low = min(lower, upper), min(low, high)
        return LeakageValue(
            bits=0.5 * (lower + upper),
            ci_bits=(low, high),
            bayes_success=value.bayes_success,
            bayes_success_ci=value.bayes_success_ci,
            secrets=value.secrets,
            method="bracket",
            samples=value.samples,
            bracket_bits=(lower, upper),
        )
