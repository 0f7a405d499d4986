"""The digits attack model the demo and the leakage study share, built one way."""

from __future__ import annotations

import torch
from torch import nn

from sims.attacks import DIGITS_ATTACK_MODEL
from sims.core.runtime import seeded
from sims.models import conv_net


def digits_attack_model(
    num_classes: int, *, seed: int, device: torch.device
) -> tuple[nn.Module, dict[str, torch.Tensor]]:
    """:data:`sims.attacks.DIGITS_ATTACK_MODEL` on 8x8 grey digits, with the weights that
    ``torch.manual_seed(seed)`` gives (the global RNG is left as it was), on ``device``;
    returned with its detached parameters, the global weights ``w`` of an FL round."""
    with seeded(seed):
        model = conv_net(
            in_channels=1, image_size=8, num_classes=num_classes, **DIGITS_ATTACK_MODEL
        ).to(device)
    return model, {name: t.detach() for name, t in model.named_parameters()}
