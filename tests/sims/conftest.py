"""Fixtures shared by the attack tests: the digits and the digits attack model."""

import pytest

from pruneleak.sims.attacks import DIGITS_ATTACK_MODEL
from pruneleak.sims.core.runtime import seeded
from pruneleak.sims.data.datasets import load_digits_dataset
from pruneleak.sims.models import conv_net


@pytest.fixture(scope="module")
def digits():
    return load_digits_dataset()


@pytest.fixture(scope="module")
def model():
    with seeded(0):  # the same weights as torch.manual_seed(0), global RNG left as it was
        return conv_net(in_channels=1, image_size=8, num_classes=10, **DIGITS_ATTACK_MODEL)


@pytest.fixture(scope="module")
def weights(model):
    return {name: t.detach() for name, t in model.named_parameters()}
