"""Invalid inputs of releases: rows of test_invalid_inputs (issue 30, the library API).

The release mechanisms (``sims.releases``: ClientSetting, FederatedRelease,
FixedDefenseRelease, PriPruneRelease and their leakage draws), the posterior leakage of
``bounds.leakage`` and PriPrune's step (``sims.defenses.adaptive.mixed_point``). Before
these rows, each call returned NaN or a value computed from nonsense, accepted a value it
should refuse, or raised a deep exception. Every row names the parameter and the value or
the allowed range the message must show. The setting is a 4x4 logistic regression with
four candidates, so each row runs in milliseconds.
"""

import math

import numpy as np
import torch
from invalid_case import ApiCase

from pruneleak.bounds.leakage import posterior_bracket, posterior_leakage
from pruneleak.sims.defenses import FixedDefense, PriPruneDefense
from pruneleak.sims.defenses.adaptive import mixed_point
from pruneleak.sims.models import logistic_regression
from pruneleak.sims.pruning.mask import Mask
from pruneleak.sims.releases import (
    ClientSetting,
    FederatedRelease,
    FixedDefenseRelease,
    PriPruneRelease,
)

NAN = math.nan
MODEL = logistic_regression(in_channels=1, image_size=4, num_classes=3)
WEIGHTS = {name: t.detach() for name, t in MODEL.named_parameters()}
IMAGES, LABELS = (
    torch.rand(4, 1, 4, 4, generator=torch.Generator().manual_seed(0)),
    torch.tensor([0, 1, 2, 0]),
)
ZEROS = np.zeros((2, 2))
# mixed_point on one 2x2 tensor: weights, alpha, tilde, Gumbel noise and the base mask.
W = {"w": torch.ones(2, 2)}
ALPHA = {"w": torch.full((2, 2), 0.3)}
NOISE = {"w": torch.zeros(2, 2, 2)}
MASK = Mask({"w": torch.ones(2, 2, dtype=torch.bool)})


def _api(case_id, call, *names, error=ValueError):
    """A row whose call ignores the temporary folder."""
    return ApiCase(f"releases-{case_id}", lambda _tmp: call(), names, error)


def _setting(**override) -> ClientSetting:
    """The logistic regression's round at lr 0.25 under an all-ones mask, some fields
    replaced."""
    fields = {"model": MODEL, "params": WEIGHTS, "mask": Mask.ones(WEIGHTS), "lr": 0.25}
    return ClientSetting(**(fields | override))


def _weights(**tensors):
    return WEIGHTS | tensors


def _fixed_leakage(seed):
    release = FixedDefenseRelease(_setting(), IMAGES, LABELS, FixedDefense("mix"))
    return release.leakage(0.1, samples=4, confidence=0.9, seed=seed)


def _priprune_leakage(seed):
    release = PriPruneRelease(_setting(), IMAGES, LABELS, PriPruneDefense(), critic_draws=2)
    return release.leakage(0.1, samples=2, confidence=0.9, seed=seed)


def _mixed(**override):
    args = {"w": W, "alpha": ALPHA, "tilde": W, "noise": NOISE, "mask": MASK} | override
    options = {"temperature": 1.0, "gradient_at": "masked"}
    for key in options:
        options[key] = args.pop(key, options[key])
    return mixed_point(**args, **options)


CASES: list[ApiCase] = [
    # --- ClientSetting: weights and mask the model cannot use were stored silently
    _api(
        "setting-params-nan",
        lambda: _setting(params={n: torch.full_like(t, NAN) for n, t in WEIGHTS.items()}),
        "'params'",
        "ClientSetting",
        "finite",
        "'classifier.0.weight'",
    ),
    _api(
        "setting-params-of-another-image-size",
        lambda: _setting(params=_weights(**{"classifier.0.weight": torch.zeros(3, 1)})),
        "'params'",
        "'classifier.0.weight'",
        "(3, 16)",
        "(3, 1)",
    ),
    _api(
        "setting-params-integer",
        lambda: _setting(params={n: t.long() for n, t in WEIGHTS.items()}),
        "'params'",
        "floating-point",
        "torch.int64",
    ),
    _api(
        "setting-mask-shape",
        lambda: _setting(mask=Mask({n: torch.ones(2, dtype=torch.bool) for n in WEIGHTS})),
        "'mask'",
        "'classifier.0.weight'",
        "(3, 16)",
        "(2,)",
    ),
    _api(
        "setting-mask-a-dict",
        lambda: _setting(
            mask={n: torch.ones_like(t, dtype=torch.bool) for n, t in WEIGHTS.items()}
        ),
        "'mask'",
        "Mask",
        "dict",
    ),
    _api("setting-model-a-string", lambda: _setting(model="logreg"), "'model'", "Module", "str"),
    # --- FederatedRelease: other clients' batches that are not (images, labels) pairs
    _api(
        "federated-others-images-only",
        lambda: FederatedRelease(_setting(), IMAGES, LABELS, others=[IMAGES]),
        "'others'",
        "(images, labels)",
        "Tensor",
        "index 0",
    ),
    _api(
        "federated-others-triple",
        lambda: FederatedRelease(_setting(), IMAGES, LABELS, others=[(IMAGES, LABELS, LABELS)]),
        "'others'",
        "(images, labels)",
        "tuple",
    ),
    # --- the leakage draws' seed: -1 was "expected non-negative integer", 1.5 and "0" ran
    _api(
        "fixed-leakage-seed-negative",
        lambda: _fixed_leakage(-1),
        "'seed'",
        "FixedDefenseRelease.leakage",
        "[0, 9223372036854775807]",
        "-1",
    ),
    _api("fixed-leakage-seed-float", lambda: _fixed_leakage(1.5), "'seed'", "integer", "1.5"),
    _api(
        "priprune-leakage-seed-negative",
        lambda: _priprune_leakage(-1),
        "'seed'",
        "hidden_randomness_leakage",
        "-1",
    ),
    _api("priprune-leakage-seed-string", lambda: _priprune_leakage("0"), "'seed'", "'0'"),
    # --- PriPruneRelease: a client the defense does not know was read as a fresh one
    _api(
        "priprune-client-negative",
        lambda: PriPruneRelease(_setting(), IMAGES, LABELS, PriPruneDefense(), client_id=-1),
        "'client_id'",
        "[0, inf)",
        "-1",
    ),
    _api(
        "priprune-client-string",
        lambda: PriPruneRelease(_setting(), IMAGES, LABELS, PriPruneDefense(), client_id="a"),
        "'client_id'",
        "integer",
        "'a'",
    ),
    # --- posterior leakage: strings were a deep conversion error, complex numbers cut
    _api(
        "posterior-strings",
        lambda: posterior_leakage([["a", "b"], ["c", "d"]], [0, 1]),
        "'log_likelihoods'",
        "posterior_leakage",
        "real numbers",
        "<U1",
    ),
    _api(
        "posterior-complex",
        lambda: posterior_leakage(ZEROS + 1j, [0, 1]),
        "'log_likelihoods'",
        "real numbers",
        "complex128",
    ),
    _api(
        "bracket-critic-strings",
        lambda: posterior_bracket(ZEROS, [["a", "b"], ["c", "d"]], [0, 1]),
        "'critic'",
        "posterior_bracket",
        "real numbers",
    ),
    # --- mixed_point (Algorithm 3 lines 5-7): NaN slopes, silent broadcasting, KeyError
    _api(
        "mixed-temperature-0", lambda: _mixed(temperature=0.0), "'temperature'", "(0, inf)", "0.0"
    ),
    _api(
        "mixed-gradient-at-unknown",
        lambda: _mixed(gradient_at="sent"),
        "'gradient_at'",
        "'masked', 'dense'",
        "'sent'",
    ),
    _api(
        "mixed-noise-one-row",
        lambda: _mixed(noise={"w": torch.zeros(2, 2)}),
        "'noise'",
        "(2, 2, 2)",
        "(2, 2)",
    ),
    _api(
        "mixed-alpha-of-another-name",
        lambda: _mixed(alpha={"v": torch.full((2, 2), 0.3)}),
        "'w'",
        "'v'",
        "none",
    ),
]
