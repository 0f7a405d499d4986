"""The dummy gradients of sims.attacks.objectives against torch.func's own.

Every way of computing the dummy gradient, one problem by a bound copy of the model
(:func:`single_gradient`) and N problems (:func:`stacked_gradient`: per-layer products at
a shared point, ``vmap(grad(...))`` otherwise), is compared with ``torch.func.grad`` of
``cross_entropy(functional_call(model, w, x), y)`` one problem at a time, in float64
(rtol 1e-12: the same operations, only the kernels' batching differs), at a masked
evaluation point unlike the model's own weights, and differentiated once more with
respect to the images.
"""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest
import torch
from torch import nn
from torch.func import functional_call, grad

from pruneleak.sims.attacks import AttackConfig, objectives
from pruneleak.sims.attacks.inversion import (
    invert_gradient,
    invert_gradient_batched,
    vmap_differentiates,
)
from pruneleak.sims.attacks.objectives import (
    attack_objective,
    grad_and_value,
    single_gradient,
    stacked_gradient,
)
from pruneleak.sims.pruning.mask import random_mask

RTOL, ATOL = 1e-12, 1e-14  # float64 round-off of the same operations, batched or not


def _probe(g, images):
    """d/d images of a fixed non-uniform linear function of the gradients ``g`` (a
    leading row dimension), so that every coordinate's second derivative counts."""
    probe = sum(
        (t * torch.cos(torch.arange(t[0].numel(), dtype=t.dtype)).reshape(t.shape[1:])).sum()
        for t in g.values()
    )
    return torch.autograd.grad(probe, images)[0]


def _reference(model, point, images, probs):
    """d CE / d point by torch.func.grad for one problem, and :func:`_probe` of it."""
    images = images.detach().requires_grad_()

    def cross_entropy(p):
        return nn.functional.cross_entropy(functional_call(model, p, (images,)), probs)

    g = grad(cross_entropy)(point)
    dx = _probe({n: t[None] for n, t in g.items()}, images)
    return {n: t.detach() for n, t in g.items()}, dx


@pytest.fixture(scope="module")
def model64(model):
    return copy.deepcopy(model).double()


@pytest.fixture(scope="module")
def problems(model64, digits):
    """Three one-image problems at two masked points (rows 0 and 2 share one)."""
    weights = {n: t.detach() for n, t in model64.named_parameters()}
    points = [random_mask(weights, 0.5, seed=s).apply(weights) for s in (1, 2, 1)]
    images = digits.images[:3].double().unsqueeze(1)  # (3, 1, 1, 8, 8)
    probs = nn.functional.one_hot(digits.labels[:3], 10).double().unsqueeze(1)
    return points, images, probs


def test_single_gradient_equals_torch_func_and_leaves_the_model_alone(model64, problems):
    points, images, probs = problems
    before = {n: (p, p.detach().clone()) for n, p in model64.named_parameters()}
    gradient = single_gradient(model64, points[0])
    x = images[:1].clone().requires_grad_()
    g = gradient({n: t[None] for n, t in points[0].items()}, x, probs[:1], 0)
    expected, expected_dx = _reference(model64, points[0], images[0], probs[0])
    for n, t in expected.items():
        torch.testing.assert_close(g[n], t, rtol=RTOL, atol=ATOL)
    dx = _probe({n: t[None] for n, t in g.items()}, x)
    torch.testing.assert_close(dx[0], expected_dx, rtol=RTOL, atol=ATOL)
    for n, p in model64.named_parameters():
        assert p is before[n][0] and torch.equal(p, before[n][1]) and p.grad is None


def test_single_gradient_at_a_later_local_step_uses_the_given_point(model64, problems):
    """From step 1 on the point is ``at`` (computed from the images), not the bound one."""
    points, images, probs = problems
    gradient = single_gradient(model64, points[0])
    x = images[:1].clone().requires_grad_()
    g = gradient({n: t[None] for n, t in points[1].items()}, x, probs[:1], 1)
    expected, _ = _reference(model64, points[1], images[0], probs[0])
    for n, t in expected.items():
        torch.testing.assert_close(g[n], t, rtol=RTOL, atol=ATOL)


def _rows_at(points, shared: bool):
    """The rows' evaluation points: ``points[0]`` expanded (shared) or all stacked."""
    if shared:
        return {n: t.expand(len(points), *t.shape) for n, t in points[0].items()}
    return {n: torch.stack([p[n] for p in points]) for n in points[0]}


def _no_vmap(*args, **kwargs):
    raise AssertionError("the layer path of stacked_gradient must not call vmap")


@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("shared", [True, False])
def test_stacked_gradient_rows_equal_one_problem_each(
    model64, problems, digits, shared, batch, monkeypatch
):
    """Rows at one shared point (the layer path: vmap is forbidden) or at their own points
    (stacked; vmap), one or two images per row with soft labels; each row is its own
    problem, images gradient included."""
    points, _, _ = problems
    rows = [points[0]] * 3 if shared else points
    images = digits.images[: 3 * batch].double().reshape(3, batch, 1, 8, 8)
    logits = torch.randn(3, batch, 10, generator=torch.Generator().manual_seed(5))
    probs = torch.softmax(logits.double(), dim=-1)
    if shared:
        monkeypatch.setattr(objectives, "vmap", _no_vmap)
    x = images.clone().requires_grad_()
    g = stacked_gradient(model64, _rows_at(points, shared))(_rows_at(points, shared), x, probs, 0)
    dx = _probe(g, x)
    for k in range(3):
        expected, expected_dx = _reference(model64, rows[k], images[k], probs[k])
        for n, t in expected.items():
            torch.testing.assert_close(g[n][k], t, rtol=RTOL, atol=ATOL)
        torch.testing.assert_close(dx[k], expected_dx, rtol=RTOL, atol=ATOL)


def _normalised_model(norm: nn.Module) -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(1, 4, 3), nn.Tanh(), norm, nn.Flatten(), nn.Linear(144, 10)
    ).double()


def _rows_match_reference(model, point, images, probs, g, dx) -> bool:
    """Whether every row's gradient and image derivative equal the per-problem reference."""
    for k in range(images.shape[0]):
        expected, expected_dx = _reference(model, point, images[k], probs[k])
        close = [torch.allclose(g[n][k], t, rtol=RTOL, atol=ATOL) for n, t in expected.items()]
        if not all(close) or not torch.allclose(dx[k], expected_dx, rtol=RTOL, atol=ATOL):
            return False
    return True


def test_stacked_gradient_falls_back_to_vmap_for_other_layers(problems):
    """A normalisation layer's parameters are not a linear map's: the rows' gradients
    come from vmap and still equal one problem each."""
    _, images, probs = problems
    model = _normalised_model(nn.GroupNorm(2, 4))
    point = {n: t.detach() + 0.1 for n, t in model.named_parameters()}
    at = _rows_at([point] * 3, shared=True)
    x = images.clone().requires_grad_()
    g = stacked_gradient(model, at)(at, x, probs, 0)
    assert _rows_match_reference(model, point, images, probs, g, _probe(g, x))


def test_vmap_second_derivative_of_affine_layer_norm_is_wrong_so_attacks_run_alone(
    problems, digits
):
    """The torch bug that :func:`sims.attacks.inversion.vmap_differentiates` works
    around: with an affine LayerNorm the vmap gradients are right but their image
    derivatives are not (if torch fixes it, this test says so). Batched attacks on such
    a model equal sequential ones exactly: they run one at a time."""
    _, images, probs = problems
    model = _normalised_model(nn.LayerNorm([4, 6, 6]))
    assert not vmap_differentiates(model)
    assert vmap_differentiates(_normalised_model(nn.LayerNorm([4, 6, 6], elementwise_affine=False)))
    point = {n: t.detach() + 0.1 for n, t in model.named_parameters()}
    at = _rows_at([point] * 3, shared=True)
    x = images.clone().requires_grad_()
    g = stacked_gradient(model, at)(at, x, probs, 0)
    assert not _rows_match_reference(model, point, images, probs, g, _probe(g, x))

    labels = [digits.labels[k : k + 1] for k in range(2)]
    targets = [_reference(model, point, images[k], probs[k])[0] for k in range(2)]
    config = AttackConfig(optimizer="adam", iterations=5, lr=0.1)
    common = {"batch_shape": (1, 1, 8, 8), "num_classes": 10}
    batched = invert_gradient_batched(
        model, point, targets, labels=labels, seeds=[0, 1], config=config, **common
    )
    for k, found in enumerate(batched):
        alone = invert_gradient(
            model, point, targets[k], labels=labels[k], config=replace(config, seed=k), **common
        )
        assert torch.equal(found.images, alone.images)


@pytest.mark.parametrize("loss", ["l2", "cosine_tv"])
def test_matching_loss_is_the_same_in_one_piece_or_one_piece_per_tensor(
    model64, problems, monkeypatch, loss
):
    """The pieces only regroup the sum: every tensor alone (a 1-byte limit) and all in one
    piece (no limit) give the same objective and image gradient, on masked rows with
    their own targets."""
    points, images, probs = problems
    point = {n: t.expand(3, *t.shape) for n, t in points[0].items()}
    generator = torch.Generator().manual_seed(3)
    width = sum(t.numel() for t in points[0].values())
    target = torch.randn(3, width, generator=generator, dtype=torch.float64)
    keep = (torch.rand(width, generator=generator) > 0.5).double().expand(3, width)
    target = target * keep
    energy = (target * target).sum(1)
    config = AttackConfig(loss=loss, optimizer="adam", tv_weight=1e-2)
    objective = attack_objective(
        stacked_gradient(model64, point), config, local_steps=1, client_lr=0.1
    )
    results = []
    for limit in (1, 2**40):
        monkeypatch.setattr(objectives, "CONCAT_BYTES", limit)
        grads, (value, matching) = grad_and_value(objective)(
            [images], point, target, energy, keep, probs
        )
        results.append((grads[0], value, matching))
    for one, many in zip(*results, strict=True):
        torch.testing.assert_close(one, many, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("keep_kind", ["none", "shared", "per_row"])
@pytest.mark.parametrize("batch", [1, 2])
def test_outer_products_match_the_formed_gradient(keep_kind, batch):
    """<g, T> and ||M ⊙ g||^2 from the factors equal those of the formed g = sum_b
    delta_b a_b^T (float64), and so do their derivatives with respect to the factors."""
    generator = torch.Generator().manual_seed(7)
    rows, out, fan_in = 3, 5, 4

    def draw(*shape):
        return torch.randn(*shape, generator=generator, dtype=torch.float64)

    delta = draw(rows, batch, out).requires_grad_()
    a = draw(rows, batch, fan_in).requires_grad_()
    target = draw(rows, out * fan_in)
    flags = (torch.rand(rows, out * fan_in, generator=generator) > 0.5).double()
    keep = {"none": None, "shared": flags[:1].expand(rows, -1), "per_row": flags}[keep_kind]
    factors = objectives.OuterProducts(delta, a)
    formed = torch.einsum("nbo,nbi->noi", delta, a).reshape(rows, -1)
    masked = formed if keep is None else formed * keep
    for fast, slow in (
        (factors.dot(target), (formed * target).sum(1)),
        (factors.energy(keep), (masked * masked).sum(1)),
    ):
        torch.testing.assert_close(fast, slow, rtol=RTOL, atol=ATOL)
        weights = torch.arange(1.0, rows + 1, dtype=torch.float64)
        fast_grads = torch.autograd.grad((fast * weights).sum(), [delta, a])
        slow_grads = torch.autograd.grad((slow * weights).sum(), [delta, a], retain_graph=True)
        for f, s in zip(fast_grads, slow_grads, strict=True):
            torch.testing.assert_close(f, s, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("shared_keep", [True, False])
def test_factored_cosine_objective_equals_the_formed_one(model64, problems, digits, shared_keep):
    """The cosine objective of one local step through the linear layers' factors equals
    the one on formed gradients (single_gradient, one row at a time): value and image
    gradient, two images per row, masked rows with their own targets."""
    points, _, _ = problems
    point = {n: t.expand(3, *t.shape) for n, t in points[0].items()}
    images = digits.images[:6].double().reshape(3, 2, 1, 8, 8)
    probs = nn.functional.one_hot(digits.labels[:6], 10).double().reshape(3, 2, 10)
    generator = torch.Generator().manual_seed(3)
    width = sum(t.numel() for t in points[0].values())
    keep = (torch.rand(3, width, generator=generator) > 0.5).double()
    keep = keep[:1].expand(3, width) if shared_keep else keep
    target = torch.randn(3, width, generator=generator, dtype=torch.float64) * keep
    energy = (target * target).sum(1)
    config = AttackConfig(loss="cosine_tv", optimizer="adam", tv_weight=1e-2)
    assert objectives.factored_matching(config, local_steps=1)
    factored = grad_and_value(
        attack_objective(stacked_gradient(model64, point), config, local_steps=1, client_lr=0.1)
    )([images], point, target, energy, keep, probs)
    for k in range(3):
        row = (slice(k, k + 1),)
        one = {n: t[row] for n, t in point.items()}
        formed = grad_and_value(
            attack_objective(
                single_gradient(model64, points[0]), config, local_steps=1, client_lr=0.1
            )
        )([images[row]], one, target[row], energy[row], keep[row], probs[row])
        torch.testing.assert_close(factored[0][0][k], formed[0][0][0], rtol=1e-10, atol=1e-12)
        for fast, slow in zip(factored[1], formed[1], strict=True):
            torch.testing.assert_close(fast[k], slow[0], rtol=1e-10, atol=1e-12)
