"""Tests of sims.models: Conv-k, VGG-k, LeNet-5, logistic regression and the registry."""

import itertools

import pytest
import torch
from torch import nn
from torch.func import functional_call, grad

from pruneleak.sims.models import (
    available_models,
    build_model,
    conv_net,
    count_parameters,
    lenet5,
    logistic_regression,
    vgg,
)

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
    ("name", "shape"), [("resnet18", (3, 32, 32)), ("conv2", (1, 28, 27)), ("conv2", (28, 28))]
)
def test_build_model_rejects_bad_arguments(name, shape):
    with pytest.raises(ValueError):
        build_model(name, image_shape=shape, num_classes=10)


# PriPrune appendix "Impact of Model Size" (CIFAR-10, 32x32x3, 10 classes; the journal
# version, Sec. 4.3, repeats them).
PAPER_VGG_COUNTS = {4: 1_125_642, 6: 1_814_538, 9: 6_436_106, 11: 9_385_994}


def _conv_count(c_in, c_out, k=3):
    return c_in * c_out * k * k + c_out


def _linear_count(n_in, n_out):
    return n_in * n_out + n_out


@pytest.mark.parametrize("depth", [4, 6, 9, 11])
def test_vgg_matches_paper_counts(depth):
    model = vgg(depth)
    assert count_parameters(model) == PAPER_VGG_COUNTS[depth]
    convs = [m for m in model.modules() if isinstance(m, nn.Conv2d)]
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    # Layer counts: VGG-k has k weight layers (4 = 2 conv + 2 linear, see vgg's docstring).
    assert len(convs) + len(linears) == depth
    assert model(torch.rand(2, 3, 32, 32)).shape == (2, 10)


def test_vgg11_by_hand():
    # VGG-A features (Simonyan & Zisserman 2014, Table 1 column A) + 512-256-128-10.
    widths = [3, 64, 128, 256, 256, 512, 512, 512, 512]
    features = sum(_conv_count(a, b) for a, b in itertools.pairwise(widths))
    head = _linear_count(512, 256) + _linear_count(256, 128) + _linear_count(128, 10)
    assert features + head == PAPER_VGG_COUNTS[11]


def test_vgg19_by_hand_and_its_slim_version():
    # configuration E (Simonyan & Zisserman 2014, Table 1 column E) + 512-512-10
    widths = [3, 64, 64, 128, 128, *[256] * 4, *[512] * 8]
    features = sum(_conv_count(a, b) for a, b in itertools.pairwise(widths))
    assert features == 20_024_384  # VGG-19's conv layers, as in torchvision's vgg19
    head = _linear_count(512, 512) + _linear_count(512, 512) + _linear_count(512, 10)
    model = vgg(19)
    assert count_parameters(model) == features + head == 20_554_826
    assert sum(isinstance(m, nn.Conv2d) for m in model.modules()) == 16
    slim = vgg(19, width=8)  # every conv width / 8, the classifier kept
    slim_widths = [3, *(w // 8 for w in widths[1:])]
    slim_features = sum(_conv_count(a, b) for a, b in itertools.pairwise(slim_widths))
    assert count_parameters(slim) == slim_features + _linear_count(64, 512) + head - (
        _linear_count(512, 512)
    )
    assert slim(torch.rand(2, 3, 32, 32)).shape == (2, 10)
    assert count_parameters(vgg(11, width=64)) == PAPER_VGG_COUNTS[11]


def test_lenet5_and_logistic_regression_counts():
    # LeNet-5 on MNIST: 156 + 2,416 + 48,120 + 10,164 + 850 = 61,706 (LeCun et al. 1998).
    mnist = lenet5(in_channels=1, image_size=28, num_classes=10)
    assert count_parameters(mnist) == 156 + 2_416 + 48_120 + 10_164 + 850
    assert count_parameters(lenet5(in_channels=1, image_size=32)) == count_parameters(mnist)
    assert mnist(torch.rand(3, 1, 28, 28)).shape == (3, 10)
    logreg = logistic_regression(in_channels=3, image_size=32, num_classes=10)
    assert count_parameters(logreg) == 3 * 32 * 32 * 10 + 10


@pytest.mark.parametrize("name", ["vgg4", "vgg6", "vgg9", "vgg11", "vgg19", "lenet5", "logreg"])
@pytest.mark.parametrize("shape", [(1, 8, 8), (1, 28, 28), (3, 32, 32)])
def test_new_models_in_registry_run_on_every_image_size(name, shape):
    model = build_model(name, image_shape=shape, num_classes=10)
    assert model.input_shape == shape and model.num_classes == 10
    assert model(torch.rand(2, *shape)).shape == (2, 10)


@pytest.mark.parametrize(
    ("factory", "kwargs", "match"),
    [
        (vgg, {"depth": 13}, "depth"),
        (vgg, {"depth": 11, "activation": "gelu"}, "activation"),
        (vgg, {"depth": 19, "width": 0}, "'width' parameter of vgg"),
        (lenet5, {"num_classes": 1}, "num_classes"),
        (lenet5, {"pooling": "lp"}, "pooling"),
        (logistic_regression, {"in_channels": 0, "image_size": 8, "num_classes": 10}, "in_"),
    ],
)
def test_new_models_reject_bad_arguments(factory, kwargs, match):
    with pytest.raises(ValueError, match=match):
        factory(**kwargs)
