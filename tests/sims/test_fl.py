"""Tests of sims.fl: PriPrune eq. (1) client update, batch gradient."""

import copy

import pytest
import torch
from torch import nn

from pruneleak.sims.core.functional import batch_gradient, non_finite_names
from pruneleak.sims.fl.client import client_update
from pruneleak.sims.models import conv_net
from pruneleak.sims.pruning.mask import random_mask


@pytest.fixture(scope="module")
def setup():
    torch.manual_seed(0)
    model = conv_net(
        2, in_channels=1, image_size=8, num_classes=10, width=4, hidden=16, activation="sigmoid"
    )
    params = {k: v.detach().clone() for k, v in model.named_parameters()}
    images = torch.rand(5, 1, 8, 8)
    labels = torch.tensor([0, 3, 3, 9, 1])
    return model, params, images, labels


def _autograd_gradient(model, params, images, labels) -> dict[str, torch.Tensor]:
    """Reference: load ``params`` into a copy of the model and call backward()."""
    clone = copy.deepcopy(model)
    with torch.no_grad():
        for name, p in clone.named_parameters():
            p.copy_(params[name])
    clone.zero_grad()
    nn.functional.cross_entropy(clone(images), labels).backward()
    return {name: p.grad.detach().clone() for name, p in clone.named_parameters()}


def _hand_step(model, w, mask, images, labels, lr, at_masked=True):
    at = {k: w[k] * mask.keep[k] for k in w} if at_masked else w
    g = _autograd_gradient(model, at, images, labels)
    return {k: mask.keep[k] * (w[k] - lr * g[k]) for k in w}


def test_batch_gradient_matches_autograd(setup):
    model, params, images, labels = setup
    actual = batch_gradient(model, params, images, labels)
    torch.testing.assert_close(actual, _autograd_gradient(model, params, images, labels))


def test_client_update_is_eq1(setup):
    model, params, images, labels = setup
    mask = random_mask(params, 0.4, seed=0)
    state_before = {k: v.clone() for k, v in model.state_dict().items()}
    params_before = {k: v.clone() for k, v in params.items()}
    sent = client_update(model, params, mask, images, labels, lr=0.5)
    torch.testing.assert_close(sent, _hand_step(model, params, mask, images, labels, 0.5))
    for name, keep in mask.keep.items():
        assert bool((sent[name][~keep] == 0).all())
    torch.testing.assert_close(model.state_dict(), state_before, rtol=0, atol=0)
    torch.testing.assert_close(params, params_before, rtol=0, atol=0)


def test_client_update_several_steps_and_dense_gradient(setup):
    model, params, images, labels = setup
    mask = random_mask(params, 0.4, seed=1)
    expected = _hand_step(model, params, mask, images, labels, 0.3)
    expected = _hand_step(model, expected, mask, images, labels, 0.3)
    sent = client_update(model, params, mask, images, labels, lr=0.3, local_steps=2)
    torch.testing.assert_close(sent, expected)
    dense = client_update(model, params, mask, images, labels, lr=0.3, gradient_at="dense")
    torch.testing.assert_close(
        dense, _hand_step(model, params, mask, images, labels, 0.3, at_masked=False)
    )
    assert not torch.allclose(dense["features.0.weight"], sent["features.0.weight"])


def _with_nan(images):
    out = images.clone()
    out[0, 0, 0, 0] = float("nan")
    return out


@pytest.mark.parametrize(
    ("override", "match"),
    [
        (lambda x, y: {"images": x[:, :, :7]}, "images"),
        (lambda x, y: {"images": x[0]}, "images"),
        (lambda x, y: {"images": x[:0], "labels": y[:0]}, "images"),
        (lambda x, y: {"images": _with_nan(x)}, "images"),
        (lambda x, y: {"images": x.long()}, "images"),
        (lambda x, y: {"labels": y[:4]}, "labels"),
        (lambda x, y: {"labels": y.float()}, "labels"),
        (lambda x, y: {"labels": y + 10}, "labels"),
        (lambda x, y: {"lr": 0.0}, "lr"),
        (lambda x, y: {"lr": -1.0}, "lr"),
        (lambda x, y: {"local_steps": 0}, "local_steps"),
        (lambda x, y: {"gradient_at": "both"}, "gradient_at"),
    ],
    ids=[
        "wrong-size",
        "no-batch-dim",
        "empty-batch",
        "nan",
        "int-images",
        "short-labels",
        "float-labels",
        "label-out-of-range",
        "lr-zero",
        "lr-negative",
        "no-steps",
        "bad-mode",
    ],
)
def test_client_update_rejects_bad_input(setup, override, match):
    model, params, images, labels = setup
    args = {"images": images, "labels": labels, "lr": 0.1, **override(images, labels)}
    mask = random_mask(params, 0.5, seed=0)
    with pytest.raises(ValueError, match=match):
        client_update(model, params, mask, args.pop("images"), args.pop("labels"), **args)


def test_non_finite_names_agree_with_a_loop_over_isfinite():
    tensors = {
        "nan": torch.tensor([1.0, float("nan"), 2.0]),
        "fine": torch.randn(3, 4),
        "minus_inf": torch.tensor([[float("-inf"), 0.0]]),
        "empty": torch.zeros(0),
        "counts": torch.arange(3),
        "plus_inf": torch.tensor(float("inf"), dtype=torch.float64),
    }
    expected = [n for n, t in tensors.items() if not bool(torch.isfinite(t).all())]
    assert expected == ["nan", "minus_inf", "plus_inf"]
    assert non_finite_names(tensors) == expected
    assert non_finite_names({"fine": tensors["fine"]}) == []
