"""Models of the experiments: PriPrune's Conv-k (FEMNIST) and VGG-k (CIFAR-10), Huang et
al.'s LeNet-5 (MNIST) and VGG-19 (CIFAR-10), logistic regression.

All models avoid BatchNorm and in-place operations so that
``torch.func.functional_call``, ``grad`` and ``vmap`` work on them, and record their
input shape (``model.input_shape = (C, H, W)``) and ``model.num_classes`` for input
validation elsewhere.

Every constructor first builds its model on torch's ``meta`` device (shapes only: no
memory, no random draws) and refuses, with a ValueError naming its arguments, a model
whose float32 parameters cannot fit :data:`sims.core.memory.TRAINING_COPIES` times in
the CPU's memory, where models are built (:func:`sims.core.memory.check_fits`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from pruneleak.bounds.validation import check_choice, check_int
from pruneleak.sims.core.memory import TRAINING_COPIES, check_fits

_ACTIVATIONS: dict[str, Callable[[], nn.Module]] = {
    "relu": nn.ReLU,
    "sigmoid": nn.Sigmoid,
    "tanh": nn.Tanh,
}
_POOLS: dict[str, Callable[[int], nn.Module]] = {"max": nn.MaxPool2d, "avg": nn.AvgPool2d}


#: Largest Conv-k depth: layer i has ``width * 2**i`` channels, so deeper nets cannot fit
#: in any memory even at width 1 (and listing their layers would take long).
MAX_CONV_LAYERS = 32
#: Bytes of one parameter: models are built in float32.
_PARAMETER_BYTES = 4


def _fitting(func: str, arguments: dict, build: Callable[[], ConvNet]) -> ConvNet:
    """``build()``, after a shapes-only build on the meta device showed that the model
    fits (module docstring); ``arguments`` name the constructor's size parameters."""
    with torch.device("meta"):
        probe = build()
    listed = ", ".join(f"{name}={value!r}" for name, value in arguments.items())
    check_fits(
        f"The model {func}({listed})",
        count_parameters(probe),
        unit="parameters",
        bytes_each=_PARAMETER_BYTES,
        copies=TRAINING_COPIES,
        device="cpu",
    )
    return build()


def _check_image_args(func: str, in_channels, image_size, num_classes) -> tuple[int, int, int]:
    """Validate the input ``(C, H)`` and the number of classes shared by every model."""
    return (
        check_int("in_channels", in_channels, func=func, low=1),
        check_int("image_size", image_size, func=func, low=1),
        check_int("num_classes", num_classes, func=func, low=2),
    )


class ConvNet(nn.Module):
    """Convolutional feature extractor followed by two linear layers (see :func:`conv_net`)."""

    def __init__(
        self,
        features: nn.Sequential,
        classifier: nn.Sequential,
        input_shape: tuple[int, int, int],
        num_classes: int,
    ):
        super().__init__()
        self.features = features
        self.classifier = classifier
        self.input_shape = input_shape
        self.num_classes = num_classes

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.features(x), 1))


@dataclass(frozen=True)
class _ConvSpec:
    out_channels: int
    kernel: int
    padding: int
    pool: bool


def _conv_plan(num_conv: int, width: int) -> list[_ConvSpec]:
    """Layer plan of Conv-k before the spatial rules of :func:`conv_net` are applied."""
    if num_conv == 1:
        return [_ConvSpec(max(1, width // 4), kernel=3, padding=2, pool=True)]
    plan = [_ConvSpec(width, 5, 2, True), _ConvSpec(2 * width, 5, 2, True)]
    plan += [_ConvSpec(width * 2**i, 3, 0 if i % 2 == 0 else 1, False) for i in range(2, num_conv)]
    return plan


def conv_net(
    num_conv: int,
    *,
    in_channels: int,
    image_size: int,
    num_classes: int,
    width: int = 32,
    hidden: int = 2048,
    activation: str = "relu",
    pooling: str = "max",
) -> ConvNet:
    """PriPrune's Conv-k: ``num_conv`` conv layers, then ``fc(hidden)`` and ``fc(num_classes)``.

    PriPrune (arXiv:2310.19958, "Impact of Model Size"; journal version Sec. 4.3) uses
    Conv-1/2/4/6 on FEMNIST with 3,815,566 / 6,603,710 / 13,657,406 / 25,324,350
    parameters but publishes only Conv-2, the LEAF FEMNIST CNN (Caldas et al. 2019). We
    reconstructed the others from the counts; with the defaults (``width=32``,
    ``hidden=2048``) on 28x28x1 images and 62 classes all four counts are matched
    *exactly*:

    ======  =============================================================  ============
    model   conv layers (out channels, kernel, padding) -> map             parameters
    ======  =============================================================  ============
    Conv-1  (8, 3x3, 2) pool -> 8x15x15                                    3,815,566
    Conv-2  (32, 5x5, 2) pool, (64, 5x5, 2) pool -> 64x7x7  [LEAF]          6,603,710
    Conv-4  Conv-2 + (128, 3x3, 0), (256, 3x3, 1) -> 256x5x5               13,657,406
    Conv-6  Conv-4 + (512, 3x3, 0), (1024, 3x3, 1) -> 1024x3x3             25,324,350
    ======  =============================================================  ============

    i.e. channels double from ``width`` (layer i has ``width * 2**i``), the two LEAF
    layers are 5x5 'same' + 2x2 max-pool, and later layers come in 3x3 pairs
    (unpadded, then 'same') that shrink the map by 2 pixels per pair. An exhaustive
    search (kernels 1/3/5/7, non-decreasing power-of-two channels 8..1024,
    ``hidden=2048``, square final map) finds LEAF's layout as the only Conv-2, this
    layout as the only Conv-4, and eight Conv-6 layouts, of which ours is the one that
    extends Conv-4 with another 3x3 pair. Conv-1 is the odd one: its only solution with
    ``hidden=2048`` is a single 3x3 conv with 8 channels (``width // 4``) and a 15x15
    map, which we realise with padding 2 (28 -> 30) and a 2x2 pool; the natural "first
    LEAF block" (32 5x5 channels, 14x14 map) would have 12,974,974 parameters. The
    Conv-1/4/6 layouts are thus inferred from their counts, not published.

    Spatial rules, so that the same constructor works from 8x8 (digits) to 32x32
    (CIFAR-10): a 2x2 pool is applied only when the map is at least 4 pixels wide (a map
    never pools below 2x2), and an unpadded 3x3 conv only when the map is at least 5
    pixels wide (otherwise it is 'same', padding 1). On 28x28 none of the rules binds.
    On 8x8: Conv-2 maps 8 -> 4 -> 2, Conv-4/6 stay at 2x2.

    Digits attacks: use :data:`sims.attacks.DIGITS_ATTACK_MODEL` (Conv-1 with
    ``width=64``, i.e. 16 conv channels, sigmoid, average pooling; 26,474 parameters),
    which is twice differentiable and inverts well; a ReLU/max-pool Conv-2 does not (the
    measured comparison is on the results page).

    Args:
        num_conv: number of conv layers k (1, 2, 4, 6 are the paper's; any k >= 1 works).
        in_channels: image channels C.
        image_size: image height = width H.
        num_classes: number of classes (output units).
        width: channels of the first conv layer of Conv-2/4/6 (Conv-1 uses ``width // 4``).
        hidden: units of the first linear layer.
        activation: ``"relu"`` (as in the paper), or the twice differentiable
            ``"sigmoid"`` / ``"tanh"`` that DLG-style attacks need.
        pooling: ``"max"`` (as in the paper) or ``"avg"``.
    """
    func = "conv_net"
    num_conv = check_int("num_conv", num_conv, func=func, low=1, high=MAX_CONV_LAYERS)
    in_channels, image_size, num_classes = _check_image_args(
        func, in_channels, image_size, num_classes
    )
    width = check_int("width", width, func=func, low=1)
    hidden = check_int("hidden", hidden, func=func, low=1)
    check_choice("activation", activation, func=func, choices=tuple(_ACTIVATIONS))
    check_choice("pooling", pooling, func=func, choices=tuple(_POOLS))
    sizes = {
        "num_conv": num_conv,
        "in_channels": in_channels,
        "image_size": image_size,
        "num_classes": num_classes,
        "width": width,
        "hidden": hidden,
    }
    return _fitting(
        func,
        sizes,
        lambda: _conv_net(
            num_conv, in_channels, image_size, num_classes, width, hidden, activation, pooling
        ),
    )


def _conv_net(
    num_conv, in_channels, image_size, num_classes, width, hidden, activation, pooling
) -> ConvNet:
    layers: list[nn.Module] = []
    channels, size = in_channels, image_size
    for spec in _conv_plan(num_conv, width):
        padding = spec.padding if spec.padding or size >= 5 else 1
        layers += [
            nn.Conv2d(channels, spec.out_channels, spec.kernel, padding=padding),
            _ACTIVATIONS[activation](),
        ]
        channels, size = spec.out_channels, size + 2 * padding - spec.kernel + 1
        if spec.pool and size >= 4:
            layers.append(_POOLS[pooling](2))
            size //= 2
    classifier = nn.Sequential(
        nn.Linear(channels * size * size, hidden),
        _ACTIVATIONS[activation](),
        nn.Linear(hidden, num_classes),
    )
    return ConvNet(
        nn.Sequential(*layers), classifier, (in_channels, image_size, image_size), num_classes
    )


# PriPrune's VGG-k for CIFAR-10 (appendix "Impact of Model Size") and Huang et al.'s
# VGG-19: conv widths ("M" = 2x2 max-pool) and hidden linear widths. See :func:`vgg`.
VGG_CONFIGS: dict[int, tuple[tuple[int | str, ...], tuple[int, ...]]] = {
    4: ((64, "M", 128, "M"), (128,)),
    6: ((64, "M", 128, "M", 256, "M", 512, "M"), (128,)),
    9: ((64, "M", 128, "M", 256, "M", 512, "M", 512, 512, "M"), (256, 128)),
    11: ((64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"), (256, 128)),
    19: (
        (64, 64, "M", 128, 128, "M", *(256,) * 4, "M", *(512,) * 4, "M", *(512,) * 4, "M"),
        (512, 512),
    ),
}
#: Channels of the first conv block of every VGG in :data:`VGG_CONFIGS` (Simonyan and
#: Zisserman's 64); :func:`vgg`'s ``width`` scales all conv widths by ``width / 64``.
VGG_BASE_WIDTH = 64


def _mlp(in_features: int, hidden: tuple[int, ...], num_classes: int, activation: str):
    layers: list[nn.Module] = []
    for width in hidden:
        layers += [nn.Linear(in_features, width), _ACTIVATIONS[activation]()]
        in_features = width
    return nn.Sequential(*layers, nn.Linear(in_features, num_classes))


def vgg(
    depth: int,
    *,
    in_channels: int = 3,
    image_size: int = 32,
    num_classes: int = 10,
    activation: str = "relu",
    width: int = VGG_BASE_WIDTH,
) -> ConvNet:
    """PriPrune's VGG-4/6/9/11 (arXiv:2310.19958 appendix and journal Sec. 4.3, "Impact of
    Model Size") and Huang et al.'s VGG-19 (arXiv:2003.01876, Section 4.1 and Table 2):
    3x3 'same' convolutions, 2x2 max-pools, no BatchNorm, no dropout.

    The paper gives only the layer counts and the parameter counts on 32x32x3 with 10
    classes; the layouts below reproduce all four counts *exactly*:

    ======  ==================================================  ==========  ==========
    model   conv widths ("M" = pool) -> linear widths            paper       ours
    ======  ==================================================  ==========  ==========
    VGG-4   64 M 128 M -> 8192, 128, 10                           1,125,642   1,125,642
    VGG-6   64 M 128 M 256 M 512 M -> 2048, 128, 10               1,814,538   1,814,538
    VGG-9   64 M 128 M 256 M 512 M 512 512 M -> 512, 256, 128, 10 6,436,106   6,436,106
    VGG-11  VGG-A features (Simonyan & Zisserman 2014) -> 512,    9,385,994   9,385,994
            256, 128, 10
    ======  ==================================================  ==========  ==========

    VGG-11 is the classic configuration A (64 M 128 M 256 256 M 512 512 M 512 512 M)
    with a 512-256-128-10 classifier (PruneFL's VGG-11 has 512-512-10 instead and
    9,750,922 parameters). A search over power-of-two widths (non-decreasing conv
    widths 16-512, hidden widths 64-4096) finds exactly these layouts for VGG-6 and
    VGG-9 and, for VGG-4, the only one whose hidden width is a power of two. Pool
    positions do not change a count; for VGG-9 we took VGG-A without the second conv of
    its 256 block and of its first 512 block. The paper describes VGG-4 as "1
    convolutional layer and 2 linear layers", but no such network with power-of-two
    widths has 1,125,642 parameters, while 2 conv + 2 linear (4 weight layers, matching
    the name as VGG-6/9/11 match theirs) does: we follow the count and the name.

    VGG-19 is Simonyan and Zisserman's configuration E (64 64 M 128 128 M 256 x4 M 512 x4
    M 512 x4 M: 16 conv layers) with the 512-512-10 classifier of the common CIFAR-10
    adaptation (Huang et al. give neither its classifier nor whether it has BatchNorm):
    20,554,826 parameters on 32x32x3 with 10 classes.

    On other image sizes a pool is applied only while the map is at least 2 pixels wide
    (a map never pools below 1x1), so the models also run on 8x8 digits.

    Args:
        depth: 4, 6, 9, 11 or 19.
        in_channels, image_size: input ``(C, H, H)``.
        num_classes: output units.
        activation: ``"relu"`` (as in VGG) or ``"sigmoid"`` / ``"tanh"`` for attacks.
        width: channels of the first conv block, >= 1; every conv width is scaled by
            ``width / 64`` (at least 1 channel), the hidden linear widths are kept. The
            papers' models have 64; a slimmer VGG-19 (``width=8``) trains on a CPU.
    """
    func = "vgg"
    check_choice("depth", depth, func=func, choices=tuple(VGG_CONFIGS))
    in_channels, image_size, num_classes = _check_image_args(
        func, in_channels, image_size, num_classes
    )
    check_choice("activation", activation, func=func, choices=tuple(_ACTIVATIONS))
    width = check_int("width", width, func=func, low=1)
    sizes = {
        "depth": depth,
        "in_channels": in_channels,
        "image_size": image_size,
        "num_classes": num_classes,
        "width": width,
    }
    return _fitting(
        func, sizes, lambda: _vgg(depth, in_channels, image_size, num_classes, activation, width)
    )


def _vgg(depth, in_channels, image_size, num_classes, activation, width) -> ConvNet:
    plan, hidden = VGG_CONFIGS[depth]
    plan = [item if item == "M" else max(1, item * width // VGG_BASE_WIDTH) for item in plan]
    layers: list[nn.Module] = []
    channels, size = in_channels, image_size
    for item in plan:
        if item == "M":
            if size >= 2:
                layers.append(nn.MaxPool2d(2))
                size //= 2
            continue
        layers += [nn.Conv2d(channels, item, 3, padding=1), _ACTIVATIONS[activation]()]
        channels = item
    return ConvNet(
        nn.Sequential(*layers),
        _mlp(channels * size * size, hidden, num_classes, activation),
        (in_channels, image_size, image_size),
        num_classes,
    )


def lenet5(
    *,
    in_channels: int = 1,
    image_size: int = 28,
    num_classes: int = 10,
    activation: str = "relu",
    pooling: str = "max",
) -> ConvNet:
    """LeNet-5 (LeCun et al. 1998): conv 6@5x5, pool, conv 16@5x5, pool, fc 120, fc 84, fc.

    LeCun's network reads 32x32 images (MNIST padded by 2); here the first conv pads by 2
    when the image is smaller than 32, so 28x28 and 32x32 inputs both reach 16x5x5 and
    MNIST has the classic 61,706 parameters. The second conv pads by 2 only when its
    input is narrower than 9 pixels, and a pool only happens on maps at least 4 wide,
    so 8x8 digits give 16x2x2. The 1998 model used scaled tanh and trainable average
    subsampling; ReLU and max-pooling (the common modern variant) are the defaults, and
    ``activation="tanh", pooling="avg"`` is the closer original.
    """
    func = "lenet5"
    in_channels, image_size, num_classes = _check_image_args(
        func, in_channels, image_size, num_classes
    )
    check_choice("activation", activation, func=func, choices=tuple(_ACTIVATIONS))
    check_choice("pooling", pooling, func=func, choices=tuple(_POOLS))
    sizes = {"in_channels": in_channels, "image_size": image_size, "num_classes": num_classes}
    return _fitting(
        func, sizes, lambda: _lenet5(in_channels, image_size, num_classes, activation, pooling)
    )


def _lenet5(in_channels, image_size, num_classes, activation, pooling) -> ConvNet:
    layers: list[nn.Module] = []
    channels, size = in_channels, image_size
    for out_channels, pad in ((6, 2 if size < 32 else 0), (16, None)):
        padding = pad if pad is not None else (2 if size < 9 else 0)
        layers += [
            nn.Conv2d(channels, out_channels, 5, padding=padding),
            _ACTIVATIONS[activation](),
        ]
        channels, size = out_channels, size + 2 * padding - 4
        if size >= 4:
            layers.append(_POOLS[pooling](2))
            size //= 2
    return ConvNet(
        nn.Sequential(*layers),
        _mlp(channels * size * size, (120, 84), num_classes, activation),
        (in_channels, image_size, image_size),
        num_classes,
    )


def logistic_regression(*, in_channels: int, image_size: int, num_classes: int) -> ConvNet:
    """Multinomial logistic regression: flatten, one linear layer (softmax in the loss)."""
    func = "logistic_regression"
    in_channels, image_size, num_classes = _check_image_args(
        func, in_channels, image_size, num_classes
    )
    sizes = {"in_channels": in_channels, "image_size": image_size, "num_classes": num_classes}
    return _fitting(
        func,
        sizes,
        lambda: ConvNet(
            nn.Sequential(),
            nn.Sequential(nn.Linear(in_channels * image_size * image_size, num_classes)),
            (in_channels, image_size, image_size),
            num_classes,
        ),
    )


@dataclass(frozen=True)
class _Registered:
    """A registered model: its constructor, the arguments the name fixes, and the
    ``options`` :func:`build_model` passes on."""

    factory: Callable[..., ConvNet]
    fixed: dict
    options: tuple[str, ...]


_CONV_OPTIONS = ("width", "hidden", "activation", "pooling")
# name -> registered model; a new model is one line here.
_MODELS: dict[str, _Registered] = {
    **{f"conv{k}": _Registered(conv_net, {"num_conv": k}, _CONV_OPTIONS) for k in (1, 2, 4, 6)},
    **{f"vgg{k}": _Registered(vgg, {"depth": k}, ("activation", "width")) for k in VGG_CONFIGS},
    "lenet5": _Registered(lenet5, {}, ("activation", "pooling")),
    "logreg": _Registered(logistic_regression, {}, ()),
}


def available_models() -> tuple[str, ...]:
    """Names accepted by :func:`build_model`."""
    return tuple(_MODELS)


def model_options(name: str) -> tuple[str, ...]:
    """The ``options`` :func:`build_model` accepts for the model ``name``."""
    check_choice("name", name, func="model_options", choices=available_models())
    return _MODELS[name].options


def build_model(
    name: str, *, image_shape: tuple[int, int, int], num_classes: int, **options
) -> nn.Module:
    """Build the model registered as ``name`` for square images of shape ``(C, H, H)``.

    ``"conv1"``, ``"conv2"``, ``"conv4"``, ``"conv6"``: PriPrune's Conv-k, ``options``
    go to :func:`conv_net` (``width``, ``hidden``, ``activation``, ``pooling``);
    ``"vgg4"``, ``"vgg6"``, ``"vgg9"``, ``"vgg11"``, ``"vgg19"``: :func:`vgg`
    (``activation``, ``width``);
    ``"lenet5"``: :func:`lenet5` (``activation``, ``pooling``); ``"logreg"``:
    :func:`logistic_regression` (no options). An option the model does not take is
    refused (:func:`model_options`).
    """
    func = "build_model"
    check_choice("name", name, func=func, choices=available_models())
    if (
        not isinstance(image_shape, tuple | list)
        or len(image_shape) != 3
        or image_shape[1] != image_shape[2]
    ):
        raise ValueError(
            f"The 'image_shape' parameter of {func} must be a square (C, H, H). "
            f"Got {image_shape!r} instead."
        )
    registered = _MODELS[name]
    unknown = sorted(set(options) - set(registered.options))
    if unknown:
        allowed = ", ".join(registered.options) or "none"
        raise ValueError(
            f"The 'options' parameter of {func} must name options of model {name!r} "
            f"({allowed}). Got {unknown} instead."
        )
    c, h, _ = image_shape
    return registered.factory(
        **registered.fixed, in_channels=c, image_size=h, num_classes=num_classes, **options
    )


def count_parameters(model: nn.Module) -> int:
    """Number of scalar parameters of ``model`` (weights and biases)."""
    return int(sum(p.numel() for p in model.parameters()))
