"""The attack model the demo and the leakage study share, built one way for any data set."""

from __future__ import annotations

import torch
from torch import nn

from pruneleak.sims.attacks import DIGITS_ATTACK_MODEL
from pruneleak.sims.core.runtime import seeded
from pruneleak.sims.models import conv_net


def attack_model(
    image_shape: tuple[int, int, int], num_classes: int, *, seed: int, device: torch.device
) -> tuple[nn.Module, dict[str, torch.Tensor]]:
    """:data:`sims.attacks.DIGITS_ATTACK_MODEL` (small and sigmoid: twice differentiable,
    as gradient inversion needs) on square ``(C, H, H)`` images, with the weights that
    ``torch.manual_seed(seed)`` gives (the global RNG is left as it was), on ``device``;
    returned with its detached parameters, the global weights ``w`` of an FL round.

    On the 8x8 grey digits (``image_shape=(1, 8, 8)``) this is the demo's original model,
    weight for weight; other shapes change only the input channels and the size of the
    first fully connected layer (:func:`sims.models.conv_net` checks the shape).
    """
    channels, height, width = image_shape
    if height != width:
        raise ValueError(
            f"The 'image_shape' parameter of attack_model must be square (C, H, H). "
            f"Got {tuple(image_shape)} instead."
        )
    with seeded(seed):
        model = conv_net(
            in_channels=channels,
            image_size=height,
            num_classes=num_classes,
            **DIGITS_ATTACK_MODEL,
        ).to(device)
    return model, {name: t.detach() for name, t in model.named_parameters()}
