"""The attacked models the demo and the leakage study share, each built one way for any data
set: the demo's small sigmoid network, the defense study's Conv-1 and PriPrune's Conv-2."""

from __future__ import annotations

import torch
from torch import nn

from pruneleak.sims.attacks import DIGITS_ATTACK_MODEL
from pruneleak.sims.core.runtime import seeded
from pruneleak.sims.data import ImageDataset
from pruneleak.sims.models import conv_net

#: The attacked models: ``"digits"``, the demo's small sigmoid network
#: (:data:`sims.attacks.DIGITS_ATTACK_MODEL`, 26,474 weights on 8x8 digits); ``"conv1"``,
#: the defense study's Conv-1 (``sims/sweep/configs/priprune_defense.toml``:
#: :func:`sims.models.conv_net` with width 32, hidden 64, tanh, average pooling; 13,594
#: weights on the digits); and ``"conv2"``, PriPrune's Conv-2 (ReLU and max pooling as
#: published, 6,603,710 weights on 28x28 FEMNIST), on the data set's images resized to
#: 28x28 (:data:`CONV2_IMAGE_SIZE`).
MODELS = ("digits", "conv1", "conv2")
CONV2_IMAGE_SIZE = 28
#: :func:`sims.models.conv_net`'s options of each model of :data:`MODELS`.
_CONV_NET_OPTIONS = {
    "digits": DIGITS_ATTACK_MODEL,
    "conv1": {"num_conv": 1, "width": 32, "hidden": 64, "activation": "tanh", "pooling": "avg"},
    "conv2": {"num_conv": 2},
}


def model_images(model: str, data: ImageDataset) -> ImageDataset:
    """``data`` as the model ``model`` of :data:`MODELS` takes it: resized to
    :data:`CONV2_IMAGE_SIZE` for Conv-2 (PriPrune's 28x28 FEMNIST input), as it is else."""
    return data.resized(CONV2_IMAGE_SIZE) if model == "conv2" else data


def attack_model(
    image_shape: tuple[int, int, int],
    num_classes: int,
    *,
    seed: int,
    device: torch.device,
    model: str = "digits",
) -> tuple[nn.Module, dict[str, torch.Tensor]]:
    """The model ``model`` of :data:`MODELS` (default the demo's
    :data:`sims.attacks.DIGITS_ATTACK_MODEL`: small and sigmoid, twice differentiable, as
    gradient inversion needs) on square ``(C, H, H)`` images, with the weights that
    ``torch.manual_seed(seed)`` gives (the global RNG is left as it was), on ``device``;
    returned with its detached parameters, the global weights ``w`` of an FL round.

    On the 8x8 grey digits (``image_shape=(1, 8, 8)``) the default is the demo's original
    model, weight for weight; other shapes change only the input channels and the size of
    the first fully connected layer (:func:`sims.models.conv_net` checks the shape).
    """
    channels, height, width = image_shape
    if height != width:
        raise ValueError(
            f"The 'image_shape' parameter of attack_model must be square (C, H, H). "
            f"Got {tuple(image_shape)} instead."
        )
    with seeded(seed):
        network = conv_net(
            in_channels=channels,
            image_size=height,
            num_classes=num_classes,
            **_CONV_NET_OPTIONS[model],
        ).to(device)
    return network, {name: t.detach() for name, t in network.named_parameters()}
