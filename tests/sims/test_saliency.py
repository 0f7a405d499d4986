"""Tests of sims.saliency: SNIP, SynFlow and GraSP scores against independent references."""

import copy

import pytest
import torch
from torch import nn

from pruneleak.sims.models import ConvNet, conv_net
from pruneleak.sims.pruning.saliency import (
    grasp_scores,
    hessian_gradient_product,
    snip_scores,
    synflow_scores,
)


@pytest.fixture(scope="module")
def relu_model():
    torch.manual_seed(0)
    return conv_net(2, in_channels=1, image_size=8, num_classes=10, width=4, hidden=16)


@pytest.fixture(scope="module")
def batch():
    generator = torch.Generator().manual_seed(1)
    images = torch.rand(6, 1, 8, 8, generator=generator)
    labels = torch.randint(0, 10, (6,), generator=generator)
    return images, labels


def _params(model):
    return {n: p.detach().clone() for n, p in model.named_parameters()}


def test_snip_scores_are_abs_gradient_times_weight(relu_model, batch):
    images, labels = batch
    clone = copy.deepcopy(relu_model)
    nn.functional.cross_entropy(clone(images), labels).backward()
    expected = {n: (p.grad * p.detach()).abs() for n, p in clone.named_parameters() if p.ndim >= 2}
    actual = snip_scores(relu_model, _params(relu_model), images, labels)
    assert list(actual) == list(expected)
    torch.testing.assert_close(actual, expected)


def _two_layer():
    torch.manual_seed(2)
    model = ConvNet(
        nn.Sequential(),
        nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2)),
        input_shape=(1, 2, 2),
        num_classes=2,
    )
    return model, _params(model)


def test_synflow_scores_match_the_path_sum_by_hand():
    """R = 1ᵀ|W2|(|W1| 1 + |b1|) + 1ᵀ|b2| on the all-ones input (every unit active), so
    score(W1[j, i]) = |W1[j, i]| * sum_k |W2[k, j]| and
    score(W2[k, j]) = |W2[k, j]| * (sum_i |W1[j, i]| + |b1[j]|)."""
    model, params = _two_layer()
    keep = {n: torch.ones_like(t, dtype=torch.bool) for n, t in params.items()}
    w1, b1 = params["classifier.0.weight"].abs(), params["classifier.0.bias"].abs()
    w2 = params["classifier.2.weight"].abs()
    expected = {
        "classifier.0.weight": w1 * w2.sum(dim=0)[:, None],
        "classifier.2.weight": w2 * (w1.sum(dim=1) + b1)[None, :],
    }
    torch.testing.assert_close(synflow_scores(model, params, keep), expected)
    # A pruned weight scores zero and removes its paths from the other layer's scores.
    keep["classifier.2.weight"] = torch.tensor([[True, True, False], [True, True, False]])
    scores = synflow_scores(model, params, keep)
    assert bool((scores["classifier.2.weight"][:, 2] == 0).all())
    assert bool((scores["classifier.0.weight"][2] == 0).all())


def _smooth_model():
    torch.manual_seed(3)
    model = conv_net(
        2,
        in_channels=1,
        image_size=8,
        num_classes=10,
        width=2,
        hidden=8,
        activation="tanh",
        pooling="avg",
    ).double()
    return model, _params(model)


@pytest.mark.parametrize("temperature", [1.0, 200.0])
def test_hessian_gradient_product_matches_finite_differences(batch, temperature):
    model, params = _smooth_model()
    images, labels = batch[0].double(), batch[1]
    weights = [n for n in params if params[n].ndim >= 2]

    def weight_gradient(shifted):
        clone = copy.deepcopy(model)
        with torch.no_grad():
            for name, p in clone.named_parameters():
                p.copy_(shifted[name])
        loss = nn.functional.cross_entropy(clone(images) / temperature, labels)
        grads = torch.autograd.grad(loss, [dict(clone.named_parameters())[n] for n in weights])
        return dict(zip(weights, grads, strict=True))

    g = weight_gradient(params)
    # Central difference of the gradient along g: (grad(w + h g) - grad(w - h g)) / 2h,
    # error O(h^2 |g|^3 L''''); in float64 h = 1e-4 / |g| leaves ~1e-8 relative error.
    h = 1e-4 / float(torch.sqrt(sum((v**2).sum() for v in g.values())))
    plus = weight_gradient({n: t + h * g[n] if n in g else t for n, t in params.items()})
    minus = weight_gradient({n: t - h * g[n] if n in g else t for n, t in params.items()})
    expected = {n: (plus[n] - minus[n]) / (2 * h) for n in weights}
    actual = hessian_gradient_product(model, params, images, labels, temperature=temperature)
    scale = max(float(v.abs().max()) for v in expected.values())
    torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-6 * scale)
    scores = grasp_scores(model, params, images, labels, temperature=temperature)
    torch.testing.assert_close(scores, {n: -params[n] * actual[n] for n in weights})


@pytest.mark.parametrize("temperature", [0.0, -1.0, float("inf")])
def test_hessian_gradient_product_rejects_bad_temperature(relu_model, batch, temperature):
    with pytest.raises(ValueError, match="temperature"):
        hessian_gradient_product(relu_model, _params(relu_model), *batch, temperature=temperature)
