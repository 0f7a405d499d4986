"""KSG, MINE and H-MINE estimates of the one-step leakage, beside its exact value."""

from __future__ import annotations

import math

import torch

from pruneleak.estimators.ksg import KSG
from pruneleak.estimators.neural import HMINE, MINE, TrainingConfig
from pruneleak.sims.experiments.leakage.config import CONFIDENCE
from pruneleak.sims.experiments.leakage.world import seed_of, subsets


def estimates(world, releases: torch.Tensor, p: float, s: float) -> dict:
    """KSG, MINE and H-MINE estimates of ``I(X; Y)`` in bits, each ``{"bits", "ci_bits"}``.

    ``config.estimate_draws`` pairs: ``X`` the batch's images (a uniform ``B``-subset of
    the candidates; ``(B, pixels)`` for H-MINE, a set, flattened for KSG and MINE), ``Y``
    the noisy release in an orthonormal basis of the centred releases' span (a batch's
    mean release lies in it too). The part
    of ``Y`` orthogonal to that span is noise independent of ``X``, and isotropic noise
    stays ``N(0, s^2 I)`` in an orthonormal basis, so the projection is a sufficient
    statistic and ``I(X; Y)`` is unchanged; it is drawn directly in the span. KSG gives
    no interval (``None``); MINE and H-MINE their cross-fitted interval
    (:mod:`estimators.neural.interval`). All ``None`` when
    the estimates are off or ``s = 0`` (a discrete release: these estimators assume a
    density).
    """
    config = world.config
    if config.estimate_draws == 0 or s == 0:
        return dict.fromkeys(("ksg", "mine", "hmine"))
    centred = releases - releases.mean(dim=0)
    _, singular, basis = torch.linalg.svd(centred, full_matrices=False)
    rank = int((singular > singular[0] * max(centred.shape) * 2.2e-16).sum())
    projected = centred @ basis[:rank].T
    generator = torch.Generator().manual_seed(seed_of(config.seed, p, s, "estimates"))
    draws = config.estimate_draws
    index = subsets(generator, config.candidates, config.batch_size, draws)
    noise = torch.randn((draws, rank), generator=generator, dtype=torch.float64)
    y = (projected[index].mean(dim=1) + s * noise).numpy()
    x = world.images[index.to(world.device)].reshape(draws, config.batch_size, -1).cpu().numpy()
    training = TrainingConfig(
        max_steps=config.estimate_steps,
        batch_size=min(64, draws // 2),
        confidence=CONFIDENCE,
    )
    options = {"training": training, "device": world.device}
    fits = {
        "mine": MINE(**options).estimate(x.reshape(draws, -1), y, seed=config.seed),
        "hmine": HMINE(**options).estimate(x, y, seed=config.seed),
    }
    ksg = KSG(interval="none").estimate(x.reshape(draws, -1), y).value / math.log(2)
    bits = {"ksg": {"bits": ksg, "ci_bits": None}}
    for name, fit in fits.items():
        ci = [fit.ci_low / math.log(2), fit.ci_high / math.log(2)]
        bits[name] = {"bits": fit.value / math.log(2), "ci_bits": ci}
    return bits
