r"""The inversion attack of Huang et al. (arXiv:2003.01876), Section 4.2, after Mahendran
and Vedaldi (2015), and the similarity of its reconstructions to the originals.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from pruneleak.bounds.validation import check_int, check_real
from pruneleak.estimators.image import inference_accuracy, phash_similarity, score_reconstruction
from pruneleak.estimators.sift import sift_similarity
from pruneleak.sims.attacks.priors import total_variation
from pruneleak.sims.core.functional import check_lr
from pruneleak.sims.core.runtime import check_seed

# name -> label; the first four are Figure 6's panels (a)-(d).
METRICS = {
    "ssim": "SSIM (normalised)",
    "sift": "SIFT similarity",
    "phash": "pHash similarity",
    "infe": "INFE",
    "psnr": "PSNR (dB)",
    "nmi": "NMI",
}


def invert_representation(
    phi: Callable[[torch.Tensor], torch.Tensor],
    target: torch.Tensor,
    image_shape: tuple[int, int, int],
    *,
    iterations: int = 200,
    lr: float = 0.1,
    tv_weight: float = 0.1,
    seed: int = 0,
) -> torch.Tensor:
    r"""Representation inversion (Huang et al., Section 4.2; Mahendran and Vedaldi 2015):

    .. math:: x^* = \arg\min_{x \in [0,1]^d} \|\Phi(x) - \Phi'_0\|_2^2
        + \lambda\,\mathcal R(x),

    with :func:`sims.attacks.priors.total_variation` (``"isotropic_sum"``) as
    :math:`\mathcal R`. Adam (learning rate ``lr``, cosine
    annealed to 0 over ``iterations``) from a seeded uniform :math:`[0, 1]` start; after
    every step the images are clamped to :math:`[0, 1]` (projected Adam). A batch is one
    optimisation of the *sum* of the per-image objectives; since Adam is coordinate-wise,
    each image follows exactly the trajectory it would follow alone.

    Args:
        phi: the attacker's representation function (a module or any differentiable
            callable), mapping ``(B, C, H, W)`` to ``(B, ...)``.
        target: :math:`\Phi'_0 = \Phi'(x_0)`, shape ``(B, ...)``, on the device to use.
        image_shape: ``(C, H, W)`` of one image.
        iterations: Adam steps, >= 1.
        lr: Adam's initial learning rate, > 0.
        tv_weight: :math:`\lambda \ge 0`.
        seed: seeds the starting images.

    Returns:
        The reconstructions ``(B, C, H, W)`` in [0, 1], detached.
    """
    func = "invert_representation"
    iterations = check_int("iterations", iterations, func=func, low=1)
    lr = check_lr("lr", lr, func=func)
    tv_weight = check_real("tv_weight", tv_weight, func=func, low=0)
    seed = check_seed(seed, func=func)
    shape_ok = isinstance(image_shape, tuple | list) and len(image_shape) == 3
    if not shape_ok or not all(isinstance(s, int) and s >= 1 for s in image_shape):
        raise ValueError(
            f"The 'image_shape' parameter of {func} must be (C, H, W) of positive integers. "
            f"Got {image_shape!r} instead."
        )
    if not isinstance(target, torch.Tensor) or target.ndim < 2 or target.shape[0] < 1:
        raise ValueError(
            f"The 'target' parameter of {func} must be a tensor (B, ...) with B >= 1. "
            f"Got {getattr(target, 'shape', type(target).__name__)} instead."
        )
    target = target.detach()
    generator = torch.Generator().manual_seed(seed)
    start = torch.rand((target.shape[0], *image_shape), generator=generator)
    images = start.to(target.device).requires_grad_(True)
    optimizer = torch.optim.Adam([images], lr=lr)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=iterations)
    for _ in range(iterations):
        matching = ((phi(images) - target) ** 2).sum()
        loss = matching + tv_weight * total_variation(images, "isotropic_sum").sum()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        schedule.step()
        with torch.no_grad():
            images.clamp_(0.0, 1.0)
    return images.detach()


def score_inversions(originals, reconstructions, labels, classifier: nn.Module) -> dict:
    """Per-image similarity of reconstructions to their originals (no re-matching: the
    attack inverts each image separately), keys :data:`METRICS` plus ``"nmi_chance"``.

    ``"ssim"`` (normalised to [0, 1]), ``"psnr"`` (dB), ``"nmi"`` and ``"nmi_chance"`` come
    from :func:`estimators.image.score_reconstruction`, ``"phash"`` from
    :func:`estimators.image.phash_similarity`, ``"infe"`` (0/1 per image) from
    :func:`estimators.image.inference_accuracy` with ``classifier``, and ``"sift"`` from
    :func:`estimators.sift.sift_similarity` (Lowe's ratio 0.8) as a masked array: an image
    whose original or reconstruction has no SIFT keypoint has no value and is masked.
    """
    scores = score_reconstruction(originals, reconstructions, match=None)
    sift = sift_similarity(originals, reconstructions, per_image=True)
    return {
        "ssim": scores["ssim"],
        "sift": np.ma.masked_array(
            [r.value if r.defined else 0.0 for r in sift], mask=[not r.defined for r in sift]
        ),
        "phash": phash_similarity(originals, reconstructions, per_image=True),
        "infe": inference_accuracy(classifier, reconstructions, labels, per_image=True),
        "psnr": scores["psnr"],
        "nmi": scores["nmi"],
        "nmi_chance": scores["nmi_chance"],
    }
