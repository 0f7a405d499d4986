"""Tests of sims.models: the Conv-k family and its registry."""

import pytest
import torch
from torch import nn
from torch.func import functional_call, grad

from sims.models import available_models, build_model, conv_net, count_parameters

# LEAF FEMNIST CNN (Caldas et al. 2019), counted by hand:
# conv 1->32 5x5: 32*25 + 32 = 832; conv 32->64 5x5: 32*64*25 + 64 = 51,264;
# fc 3136->2048: 3136*2048 + 2048 = 6,424,576; fc 2048->62: 2048*62 + 62 = 127,038.
LEAF_CONV2_COUNT = 832 + 51_264 + 6_424_576 + 127_038

# PriPrune (arXiv:2310.19958, "Impact of Model Size"; journal version, same numbers).
PAPER_COUNTS = {1: 3_815_566, 2: 6_603_710, 4: 13_657_406, 6: 25_324_350}


def test_conv2_is_the_leaf_femnist_cnn():
    model = conv_net(2, in_channels=1, image_size=28, num_classes=62)
    assert LEAF_CONV2_COUNT == 6_603_710
    assert count_parameters(model) == LEAF_CONV2_COUNT
    shapes = [tuple(p.shape) for p in model.parameters()]
    assert shapes == [
        (32, 1, 5, 5),
        (32,),
        (64, 32, 5, 5),
        (64,),
        (2048, 3136),
        (2048,),
        (62, 2048),
        (62,),
    ]


@pytest.mark.parametrize("num_conv", [1, 4, 6])
def test_conv_k_matches_paper_counts(num_conv):
    model = conv_net(num_conv, in_channels=1, image_size=28, num_classes=62)
    assert count_parameters(model) == PAPER_COUNTS[num_conv]


@pytest.mark.parametrize("num_conv", [1, 2, 4, 6])
@pytest.mark.parametrize(("channels", "size", "classes"), [(1, 8, 10), (1, 28, 62), (3, 32, 10)])
def test_forward_shapes(num_conv, channels, size, classes):
    model = conv_net(
        num_conv, in_channels=channels, image_size=size, num_classes=classes, width=4, hidden=16
    )
    out = model(torch.rand(3, channels, size, size))
    assert out.shape == (3, classes)
    assert model.input_shape == (channels, size, size) and model.num_classes == classes


@pytest.mark.parametrize(("num_conv", "side"), [(1, 5), (2, 2), (4, 2), (6, 2)])
def test_spatial_rules_on_digits(num_conv, side):
    """8x8: Conv-1 pads to 10 and pools to 5; pools stop at 2x2; 3x3 convs keep 2x2."""
    model = conv_net(num_conv, in_channels=1, image_size=8, num_classes=10, width=8)
    assert model.features(torch.rand(1, 1, 8, 8)).shape[-2:] == (side, side)


def test_recommended_digits_attack_model_is_small_and_smooth():
    model = conv_net(
        2, in_channels=1, image_size=8, num_classes=10, width=8, hidden=64, activation="sigmoid"
    )
    assert count_parameters(model) == 8_234  # 208 + 3,216 + 4,160 + 650
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = torch.rand(1, 1, 8, 8)
    y = torch.tensor([3])

    def grad_norm(image):
        def loss(p):
            return nn.functional.cross_entropy(functional_call(model, p, (image,)), y)

        return sum((g**2).sum() for g in grad(loss)(params).values())

    # DLG needs d ||grad_w||^2 / d x: second derivatives through the whole model.
    second = grad(grad_norm)(x)
    assert second.shape == x.shape and bool(torch.isfinite(second).all())
    assert float(second.abs().max()) > 0


@pytest.mark.parametrize("activation", ["relu", "sigmoid", "tanh"])
@pytest.mark.parametrize("pooling", ["max", "avg"])
def test_no_batchnorm_no_inplace(activation, pooling):
    model = conv_net(
        4,
        in_channels=3,
        image_size=32,
        num_classes=10,
        width=4,
        hidden=8,
        activation=activation,
        pooling=pooling,
    )
    for module in model.modules():
        assert not isinstance(module, nn.modules.batchnorm._BatchNorm)
        assert not getattr(module, "inplace", False)


def test_build_model_registry():
    assert set(available_models()) >= {"conv1", "conv2", "conv4", "conv6"}
    model = build_model("conv2", image_shape=(1, 28, 28), num_classes=62)
    assert count_parameters(model) == LEAF_CONV2_COUNT
    small = build_model("conv4", image_shape=(3, 32, 32), num_classes=10, width=4, hidden=8)
    assert small(torch.rand(2, 3, 32, 32)).shape == (2, 10)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"num_conv": 0},
        {"in_channels": 0},
        {"image_size": 0},
        {"num_classes": 1},
        {"width": 0},
        {"hidden": 0},
        {"activation": "gelu"},
        {"pooling": "lp"},
    ],
)
def test_conv_net_rejects_bad_arguments(kwargs):
    args = {"num_conv": 2, "in_channels": 1, "image_size": 8, "num_classes": 10, **kwargs}
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        conv_net(args.pop("num_conv"), **args)


@pytest.mark.parametrize(
    ("name", "shape"), [("vgg11", (3, 32, 32)), ("conv2", (1, 28, 27)), ("conv2", (28, 28))]
)
def test_build_model_rejects_bad_arguments(name, shape):
    with pytest.raises(ValueError):
        build_model(name, image_shape=shape, num_classes=10)
