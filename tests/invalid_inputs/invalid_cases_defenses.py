"""Invalid inputs of defenses: rows of test_invalid_inputs (issue 30, the library API).

PriPrune's defenses (``sims.defenses``: the Gumbel mask, eq. (17)'s weights, the fixed
masks and the ``pseudo`` flag), the attacks' model check and label recovery
(``sims.attacks``), NMI's levels (``estimators.nmi``), Theorem 1's status
(``bounds.leakage``) and the scikit-image data sets (``sims.data``). Before these rows,
each call returned NaN, a wrong answer or a deep exception, or ran for hours. Every row
names the parameter and the value or the allowed range the message must show.
"""

import math
import sys
from unittest import mock

import numpy as np
import torch
from invalid_case import ApiCase

from pruneleak.bounds.leakage import theorem1_status
from pruneleak.estimators.nmi import nmi, nmi_chance_level, nmi_permutation_null
from pruneleak.sims.attacks import AttackConfig, invert_gradient, recover_labels, sgi_attack
from pruneleak.sims.data.datasets import load_faces, load_patches
from pruneleak.sims.defenses import (
    Defense,
    FixedDefense,
    PriPruneDefense,
    defense_mask,
    gumbel_share_mask,
    privacy_weights,
    withheld_fraction,
)
from pruneleak.sims.models import logistic_regression
from pruneleak.sims.pruning.mask import Mask

NAN, INF = math.nan, math.inf
ALPHA = torch.full((3,), 0.3)
NOISE = torch.zeros(2, 3)
BASE = Mask({"w": torch.ones(2, 2, dtype=torch.bool), "b": torch.ones(2, dtype=torch.bool)})
UPDATE = {"w": torch.ones(2, 2), "b": torch.ones(2)}
# Two independent uniform 8x8 images: 64 pixels, so at most max(256, 64) = 256 levels.
IMAGE, OTHER = (np.random.default_rng(seed).random((8, 8)) for seed in (0, 1))


def _api(case_id, call, *names, error=ValueError):
    """A row whose call ignores the temporary folder."""
    return ApiCase(f"defenses-{case_id}", lambda _tmp: call(), names, error)


def _gumbel(alpha=ALPHA, noise=NOISE, temperature=1.0):
    return gumbel_share_mask(alpha, noise, temperature)


def _shared(**keep):
    """``BASE`` with some tensors replaced (None drops one)."""
    flags = dict(BASE.keep) | keep
    return Mask({name: value for name, value in flags.items() if value is not None})


def _update(**tensors):
    """``UPDATE`` with some tensors replaced (None drops one)."""
    return {name: value for name, value in (UPDATE | tensors).items() if value is not None}


def _sgi(global_params):
    """SGI of a one-image update of a 4x4 logistic regression, told ``global_params`` for
    the broadcast (and a matching, consistent upload: only the model disagrees)."""
    model = logistic_regression(in_channels=1, image_size=4, num_classes=3)
    other = logistic_regression(in_channels=1, image_size=4, num_classes=3)
    weights = {name: t.detach() for name, t in other.named_parameters()} | global_params
    sent = {name: 0.5 * t for name, t in weights.items()}
    return sgi_attack(
        model,
        weights,
        sent,
        batch_shape=(1, 1, 4, 4),
        num_classes=3,
        lr=0.25,
        labels=torch.tensor([1]),
        config=AttackConfig.dlg(iterations=1),
    )


def _invert_with_params(params):
    """invert_gradient of a logistic regression told weights of another layout."""
    model = logistic_regression(in_channels=1, image_size=4, num_classes=3)
    target = {name: torch.ones_like(t) for name, t in params.items()}
    return invert_gradient(
        model,
        params,
        target,
        batch_shape=(1, 1, 4, 4),
        num_classes=3,
        labels=torch.tensor([1]),
        config=AttackConfig.dlg(iterations=1),
    )


def _logreg_weights():
    model = logistic_regression(in_channels=1, image_size=4, num_classes=3)
    return {name: t.detach() for name, t in model.named_parameters()}


def _without_skimage(load):
    """``load()`` with scikit-image not importable (None in sys.modules makes ``import``
    raise ModuleNotFoundError, as when it is not installed)."""
    with mock.patch.dict(sys.modules, {"skimage": None, "skimage.data": None}):
        return load()


CASES: list[ApiCase] = [
    # --- gumbel_share_mask: NaN before (log of alpha outside (0, 1), division by tau = 0)
    _api(
        "gumbel-alpha-above-1",
        lambda: _gumbel(alpha=torch.full((3,), 1.5)),
        "'alpha'",
        "(0, 1)",
        "1.5",
    ),
    _api("gumbel-alpha-0", lambda: _gumbel(alpha=torch.zeros(3)), "'alpha'", "(0, 1)", "0.0"),
    _api(
        "gumbel-alpha-nan", lambda: _gumbel(alpha=torch.full((3,), NAN)), "'alpha'", "(0, 1)", "nan"
    ),
    _api("gumbel-alpha-list", lambda: _gumbel(alpha=[0.3]), "'alpha'", "tensor", "list"),
    _api(
        "gumbel-temperature-0", lambda: _gumbel(temperature=0.0), "'temperature'", "(0, inf)", "0.0"
    ),
    _api(
        "gumbel-temperature-negative",
        lambda: _gumbel(temperature=-1.0),
        "'temperature'",
        "(0, inf)",
        "-1.0",
    ),
    _api("gumbel-temperature-nan", lambda: _gumbel(temperature=NAN), "'temperature'", "nan"),
    _api(
        "gumbel-noise-shape",
        lambda: _gumbel(noise=torch.zeros(2, 4)),
        "'noise'",
        "(2, 3)",
        "(2, 4)",
    ),
    _api(
        "gumbel-noise-one-row", lambda: _gumbel(noise=torch.zeros(3)), "'noise'", "(2, 3)", "(3,)"
    ),
    _api("gumbel-noise-nan", lambda: _gumbel(noise=torch.full((2, 3), NAN)), "'noise'", "finite"),
    # --- privacy_weights: a NaN or an infinite gradient made the layer's weights NaN
    _api(
        "privacy-weights-nan",
        lambda: privacy_weights({"w": torch.full((2, 2), NAN)}),
        "'grads'",
        "finite",
        "'w'",
    ),
    _api(
        "privacy-weights-inf",
        lambda: privacy_weights({"w": torch.tensor([[INF, 1.0]])}),
        "'grads'",
        "finite",
        "'w'",
    ),
    _api(
        "privacy-weights-not-a-dict", lambda: privacy_weights([torch.ones(2, 2)]), "'grads'", "list"
    ),
    # --- withheld_fraction and defense_mask: a missing or misshapen tensor
    _api(
        "withheld-fraction-shape",
        lambda: withheld_fraction(BASE, _shared(w=torch.ones(3, 3, dtype=torch.bool))),
        "'shared'",
        "'w'",
        "(2, 2)",
        "(3, 3)",
    ),
    _api(
        "withheld-fraction-missing",
        lambda: withheld_fraction(BASE, _shared(w=None)),
        "'shared'",
        "'w'",
        "none",
    ),
    _api(
        "defense-mask-update-shape",
        lambda: defense_mask("largest", BASE, _update(w=torch.ones(3, 3)), rate=0.3),
        "'update'",
        "'w'",
        "(2, 2)",
        "(3, 3)",
    ),
    _api(
        "defense-mask-update-missing",
        lambda: defense_mask("largest", BASE, _update(w=None), rate=0.3),
        "'update'",
        "'w'",
        "NoneType",
    ),
    _api(
        "defense-mask-update-nan",
        lambda: defense_mask("largest", BASE, _update(w=torch.full((2, 2), NAN)), rate=0.3),
        "'update'",
        "finite",
        "'w'",
    ),
    _api(
        "defense-mask-generator-int",
        lambda: defense_mask("random", BASE, UPDATE, rate=0.3, generator=3),
        "'generator'",
        "torch.Generator",
        "int",
    ),
    # --- pseudo: a string was taken as True
    _api(
        "fixed-pseudo-yes",
        lambda: FixedDefense("largest", pseudo="yes"),
        "'pseudo'",
        "FixedDefense",
        "'yes'",
    ),
    _api(
        "fixed-pseudo-no",
        lambda: FixedDefense("mix", pseudo="no"),
        "'pseudo'",
        "True or False",
        "'no'",
    ),
    _api(
        "fixed-pseudo-int",
        lambda: FixedDefense("random", pseudo=1),
        "'pseudo'",
        "True or False",
        "1",
    ),
    _api("base-defense-pseudo-no", lambda: Defense(pseudo="no"), "'pseudo'", "Defense", "'no'"),
    _api(
        "priprune-pseudo-none",
        lambda: PriPruneDefense(pseudo=None),
        "'pseudo'",
        "PriPruneDefense",
        "None",
    ),
    # --- the attacks: weights of another layout than the model's parameters
    _api(
        "sgi-bias-broadcasts",
        lambda: _sgi({"classifier.0.bias": torch.zeros(1)}),
        "'global_params'",
        "'classifier.0.bias'",
        "(3,)",
        "(1,)",
    ),
    _api(
        "sgi-weight-of-another-image-size",
        lambda: _sgi({"classifier.0.weight": torch.zeros(3, 4)}),
        "'global_params'",
        "'classifier.0.weight'",
        "(3, 16)",
        "(3, 4)",
    ),
    _api(
        "invert-extra-tensor",
        lambda: _invert_with_params(_logreg_weights() | {"extra.weight": torch.zeros(2, 2)}),
        "'params'",
        "'extra.weight'",
    ),
    # --- recover_labels: 10**6 labels took a pass each (hours for 10**9)
    _api(
        "recover-labels-batch-10-6",
        lambda: recover_labels({"w": torch.randn(10, 3)}, num_classes=10, batch_size=10**6),
        "'batch_size'",
        "[1, 65536]",
        "1000000",
    ),
    # --- nmi: levels so fine that every pixel is its own bin gave 1.0 for independent images
    _api(
        "nmi-levels-10-9",
        lambda: nmi(IMAGE, OTHER, levels=10**9),
        "'levels'",
        "[2, 256]",
        "64 pixels",
        "1000000000",
    ),
    _api(
        "nmi-levels-just-beyond",
        lambda: nmi(IMAGE, OTHER, levels=257),
        "'levels'",
        "[2, 256]",
        "257",
    ),
    _api(
        "nmi-chance-levels-10-9",
        lambda: nmi_chance_level(np.random.default_rng(0).random(1000), levels=10**9),
        "'levels'",
        "[2, 1000]",
        "1000000000",
    ),
    _api(
        "nmi-null-levels-2-20",
        lambda: nmi_permutation_null(IMAGE, OTHER, levels=2**20),
        "'levels'",
        "nmi_permutation_null",
        "1048576",
    ),
    # --- theorem1_status: NaN was "violated"
    _api(
        "theorem1-status-nan",
        lambda: theorem1_status(NAN, ceiling_bits=3.0),
        "'bound_bits'",
        "NaN",
        "nan",
    ),
    _api(
        "theorem1-status-nan-float32",
        lambda: theorem1_status(np.float32(NAN), ceiling_bits=3.0, lower_bound_bits=1.0),
        "'bound_bits'",
        "nan",
    ),
    # --- scikit-image missing: a ModuleNotFoundError traceback before
    _api(
        "faces-without-skimage",
        lambda: _without_skimage(load_faces),
        "load_faces",
        "pip install scikit-image",
    ),
    _api(
        "patches-without-skimage",
        lambda: _without_skimage(load_patches),
        "load_patches",
        "pip install scikit-image",
    ),
]
