"""Each pruning scheme against its published definition on models small enough to do by hand.

The references here never call the saliency code: softmax regression has a closed-form
gradient and Hessian (written in numpy below), a two-layer linear net has a closed-form
synaptic flow, and FedDST's and PruneFL's mask updates are worked out on a handful of
weights with the expected masks written literally.

* SNIP (Lee, Ajanthan and Torr 2019, arXiv:1810.02340, eq. (6)): keep the largest |g ⊙ w|.
* GraSP (Wang, Zhang and Grosse 2020, arXiv:2002.07376, eq. (8) and Algorithm 1):
  S = -w ⊙ (H g); the weights with the *largest* S are removed.
* SynFlow (Tanaka et al. 2020, arXiv:2006.05467, Algorithm 1): all-ones input, |θ| as
  parameters, R = 1ᵀ(Π|W|)1, scores |dR/dθ ⊙ θ|, exponential schedule (1-p)^(k/n).
* FedDST (Bibikar et al. 2022) and PruneFL (Jiang et al. 2022): see sims.pruning.schemes.
"""

import math

import numpy as np
import pytest
import torch
from torch import nn

from pruneleak.sims.models import ConvNet, logistic_regression
from pruneleak.sims.pruning.mask import Mask
from pruneleak.sims.pruning.saliency import hessian_gradient_product
from pruneleak.sims.pruning.schemes import SNIP, FedDST, GraSP, PruneFL, SynFlow

W, B = "classifier.0.weight", "classifier.0.bias"


def _softmax_regression(seed):
    """Logistic regression, 4 features (2x2 images) and 3 classes (12 weights), float64,
    with a batch of 5."""
    torch.manual_seed(seed)
    model = logistic_regression(in_channels=1, image_size=2, num_classes=3).double()
    params = {n: p.detach().clone() for n, p in model.named_parameters()}
    generator = torch.Generator().manual_seed(seed + 100)
    images = torch.randn(5, 1, 2, 2, generator=generator, dtype=torch.float64)
    labels = torch.randint(0, 3, (5,), generator=generator)
    return model, params, images, labels


def _closed_form(params, images, labels, temperature=1.0):
    """Gradient (K, D) and Hessian (K*D, K*D, row-major over W) of the mean cross-entropy of
    softmax((W x + b) / T) in W: g = mean (p - y) xᵀ / T, H = mean (diag p - p pᵀ) ⊗ x xᵀ / T²."""
    w = params[W].numpy()
    b = params[B].numpy()
    x = images.reshape(images.shape[0], -1).numpy()
    y = np.eye(w.shape[0])[labels.numpy()]
    z = (x @ w.T + b) / temperature
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    g = (p - y).T @ x / (len(x) * temperature)
    h = sum(
        np.kron(np.diag(pi) - np.outer(pi, pi), np.outer(xi, xi))
        for pi, xi in zip(p, x, strict=True)
    )
    return g, h / (len(x) * temperature**2)


def _keep_largest(scores, n_keep):
    """Boolean mask keeping the n_keep largest entries (no ties in these tests)."""
    flat = np.asarray(scores).reshape(-1)
    keep = np.zeros(flat.size, dtype=bool)
    keep[np.argsort(flat)[flat.size - n_keep :]] = True
    return keep.reshape(np.shape(scores))


def _no_ties(values):
    flat = np.sort(np.asarray(values).reshape(-1))
    assert np.min(np.diff(flat)) > 1e-9, "a tie would make the expected mask ambiguous"


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("p", [0.25, 0.5, 0.75])
def test_snip_keeps_the_largest_gradient_times_weight(seed, p):
    model, params, images, labels = _softmax_regression(seed)
    g, _ = _closed_form(params, images, labels)
    score = np.abs(g * params[W].numpy())
    _no_ties(score)
    expected = _keep_largest(score, 12 - round(p * 12))
    mask = SNIP(p).initial_mask(model, params, images, labels)
    np.testing.assert_array_equal(mask.keep[W].numpy(), expected)
    assert bool(mask.keep[B].all())


@pytest.mark.parametrize("temperature", [1.0, 200.0])
def test_hessian_gradient_product_matches_the_closed_form_hessian(temperature):
    model, params, images, labels = _softmax_regression(3)
    g, h = _closed_form(params, images, labels, temperature)
    expected = (h @ g.reshape(-1)).reshape(g.shape)
    actual = hessian_gradient_product(model, params, images, labels, temperature=temperature)
    # float64 throughout; both sides sum a handful of O(1/T^3) terms, so agreement to
    # 1e-12 relative to the largest entry is all rounding.
    scale = float(np.abs(expected).max())
    np.testing.assert_allclose(actual[W].numpy(), expected, rtol=1e-9, atol=1e-12 * scale)


def test_hessian_gradient_product_matches_autograd_hessian_of_a_two_layer_net():
    """A two-layer net (tanh between the layers): H from torch.autograd.functional.hessian
    over both weight matrices flattened together, times the gradient."""
    torch.manual_seed(4)
    model = ConvNet(
        nn.Sequential(),
        nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2)),
        input_shape=(1, 2, 2),
        num_classes=2,
    ).double()
    params = {n: p.detach().clone() for n, p in model.named_parameters()}
    generator = torch.Generator().manual_seed(5)
    images = torch.randn(6, 1, 2, 2, generator=generator, dtype=torch.float64)
    labels = torch.randint(0, 2, (6,), generator=generator)
    names = ["classifier.0.weight", "classifier.2.weight"]
    sizes = [params[n].numel() for n in names]

    def loss(flat):
        parts = dict(zip(names, flat.split(sizes), strict=True))
        w1 = parts[names[0]].reshape(3, 4)
        w2 = parts[names[1]].reshape(2, 3)
        hidden = torch.tanh(images.reshape(6, 4) @ w1.T + params["classifier.0.bias"])
        logits = hidden @ w2.T + params["classifier.2.bias"]
        return nn.functional.cross_entropy(logits, labels)

    flat = torch.cat([params[n].reshape(-1) for n in names])
    g = torch.autograd.functional.jacobian(loss, flat)
    hg = torch.autograd.functional.hessian(loss, flat) @ g
    actual = hessian_gradient_product(model, params, images, labels)
    torch.testing.assert_close(
        torch.cat([actual[n].reshape(-1) for n in names]), hg, rtol=1e-9, atol=1e-12
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("p", [0.25, 0.5])
def test_grasp_removes_the_largest_minus_w_hg(seed, p):
    """Wang et al., Algorithm 1: S = -θ ⊙ Hg, keep S below the p-th percentile from the top."""
    model, params, images, labels = _softmax_regression(seed)
    g, h = _closed_form(params, images, labels, temperature=1.0)
    score = -params[W].numpy() * (h @ g.reshape(-1)).reshape(g.shape)
    _no_ties(score)
    expected = _keep_largest(-score, 12 - round(p * 12))  # the smallest S are kept
    mask = GraSP(p, temperature=1.0).initial_mask(model, params, images, labels)
    np.testing.assert_array_equal(mask.keep[W].numpy(), expected)
    # The pruned and kept sets are separated by S: every pruned score >= every kept one.
    kept = mask.keep[W].numpy()
    assert score[~kept].min() > score[kept].max()


# ---------------------------------------------------------------------------------------
# SynFlow
# ---------------------------------------------------------------------------------------


def _linear_net(seed):
    torch.manual_seed(seed)
    model = ConvNet(
        nn.Sequential(),
        nn.Sequential(nn.Linear(4, 3), nn.Linear(3, 2)),
        input_shape=(1, 2, 2),
        num_classes=2,
    )
    return model, {n: p.detach().clone() for n, p in model.named_parameters()}


def _synflow_by_hand(params, p, iterations, schedule):
    """Tanaka et al., Algorithm 1, on W2 W1 x + ...: with A = |W1| ⊙ m1, C = |W2| ⊙ m2 and
    R = 1ᵀ C (A 1 + |b1|) + 1ᵀ|b2|, dR/dA[j,i] = Σ_k C[k,j] and dR/dC[k,j] = Σ_i A[j,i] + |b1[j]|.
    Each iteration prunes globally the lowest scores (already pruned ones first)."""
    w1 = params["classifier.0.weight"].double().abs().numpy()
    w2 = params["classifier.1.weight"].double().abs().numpy()
    b1 = params["classifier.0.bias"].double().abs().numpy()
    m1, m2 = np.ones_like(w1, dtype=bool), np.ones_like(w2, dtype=bool)
    n = w1.size + w2.size
    for k in range(1, iterations + 1):
        a, c = w1 * m1, w2 * m2
        s1 = a * c.sum(axis=0)[:, None]
        s2 = c * (a.sum(axis=1) + b1)[None, :]
        scores = np.concatenate([np.where(m1, s1, -1).ravel(), np.where(m2, s2, -1).ravel()])
        rate = schedule(k, iterations) if k < iterations else p
        keep = np.ones(n, dtype=bool)
        keep[np.argsort(scores, kind="stable")[: round(rate * n)]] = False
        m1, m2 = keep[: w1.size].reshape(w1.shape), keep[w1.size :].reshape(w2.shape)
    return m1, m2


# (seed, p, iterations) where Algorithm 1, one-shot scoring and a linear schedule give three
# different masks on _linear_net(seed) (checked by the precondition test below).
SYNFLOW_CASES = [(1, 0.7, 10), (8, 0.8, 6), (7, 0.6, 4)]


def _exponential(p):
    return lambda k, n: 1 - (1 - p) ** (k / n)


def _linear(p):
    return lambda k, n: p * k / n


@pytest.mark.parametrize(("seed", "p", "iterations"), SYNFLOW_CASES)
def test_synflow_matches_the_iterative_algorithm_by_hand(seed, p, iterations):
    model, params = _linear_net(seed)
    expected = _synflow_by_hand(params, p, iterations, _exponential(p))
    mask = SynFlow(p, iterations=iterations).initial_mask(model, params)
    np.testing.assert_array_equal(mask.keep["classifier.0.weight"].numpy(), expected[0])
    np.testing.assert_array_equal(mask.keep["classifier.1.weight"].numpy(), expected[1])


@pytest.mark.parametrize(("seed", "p", "iterations"), SYNFLOW_CASES)
def test_synflow_iterations_and_schedule_change_the_mask(seed, p, iterations):
    """On these nets, one-shot scoring and a linear schedule give other masks than
    Algorithm 1, so the test above distinguishes them (a precondition, checked here)."""
    _, params = _linear_net(seed)
    exact = _synflow_by_hand(params, p, iterations, _exponential(p))
    one_shot = _synflow_by_hand(params, p, 1, _exponential(p))
    linear = _synflow_by_hand(params, p, iterations, _linear(p))
    assert not all(np.array_equal(a, b) for a, b in zip(exact, one_shot, strict=True))
    assert not all(np.array_equal(a, b) for a, b in zip(exact, linear, strict=True))


# ---------------------------------------------------------------------------------------
# FedDST: prune the smallest kept magnitudes, regrow the largest gradients at zero
# ---------------------------------------------------------------------------------------


def _two_class_regression(weight):
    model = logistic_regression(in_channels=1, image_size=2, num_classes=2).double()
    params = {W: torch.tensor(weight, dtype=torch.float64), B: torch.zeros(2, dtype=torch.float64)}
    return model, params


def test_feddst_readjustment_by_hand():
    weight = [[0.9, -0.05, 0.4, 0.0], [0.3, 0.0, -0.02, 0.7]]
    model, params = _two_class_regression(weight)
    keep = torch.tensor([[True, True, True, False], [True, False, True, True]])
    mask = Mask({W: keep, B: torch.ones(2, dtype=torch.bool)})
    # One sample whose second feature dominates: |g[k, i]| = |p_k - y_k| |x_i|, so column 1
    # has by far the largest gradients (both rows alike: two classes, p_0 - y_0 = y_1 - p_1).
    images = torch.tensor([[[[0.1, 3.0], [0.2, 0.15]]]], dtype=torch.float64)
    labels = torch.tensor([0])
    scheme = FedDST(0.25, decay_end=100, alpha=0.34, readjust_every=2, distribution="uniform")
    # alpha_2 = 0.34 / 2 (1 + cos(2 pi / 100)) = 0.3397; round(0.3397 * 6 kept) = 2 swaps.
    assert scheme.adjustment_rate(2) == pytest.approx(0.17 * (1 + math.cos(math.pi / 50)))
    out, new = scheme.readjust_client(2, 0, model, params, mask, images, labels)
    # Dropped: the two smallest kept magnitudes, 0.02 at (1, 2) and 0.05 at (0, 1).
    # Inactive then: (0, 1), (0, 3), (1, 1), (1, 2); largest |g| in column 1: (0, 1), (1, 1).
    # (0, 1) was dropped and regrown: it keeps its value; (1, 1) is regrown at zero.
    assert new.keep[W].tolist() == [[True, True, True, False], [True, True, False, True]]
    np.testing.assert_array_equal(
        out[W].numpy(), np.array([[0.9, -0.05, 0.4, 0.0], [0.3, 0.0, 0.0, 0.7]])
    )
    assert int(new.keep[W].sum()) == int(keep.sum())  # density unchanged


def test_feddst_regrows_where_the_gradient_is_largest_not_where_it_is_smallest():
    weight = [[0.9, -0.05, 0.4, 0.0], [0.3, 0.0, -0.02, 0.7]]
    model, params = _two_class_regression(weight)
    keep = torch.tensor([[True, True, True, False], [True, False, True, True]])
    mask = Mask({W: keep, B: torch.ones(2, dtype=torch.bool)})
    images = torch.tensor([[[[0.1, 0.5], [2.0, 4.0]]]], dtype=torch.float64)
    scheme = FedDST(0.25, decay_end=100, alpha=0.34, readjust_every=2, distribution="uniform")
    out, new = scheme.readjust_client(2, 0, model, params, mask, images, torch.tensor([1]))
    # Dropped as before: (1, 2) and (0, 1). |g| over the inactive (0, 1), (0, 3), (1, 1),
    # (1, 2) is |p - y| * (0.5, 4.0, 0.5, 2.0): (0, 3) and (1, 2) regrow; the smallest
    # gradients, column 1, stay out. (1, 2) was dropped and regrown: it keeps -0.02.
    assert new.keep[W].tolist() == [[True, False, True, True], [True, False, True, True]]
    np.testing.assert_array_equal(
        out[W].numpy(), np.array([[0.9, 0.0, 0.4, 0.0], [0.3, 0.0, -0.02, 0.7]])
    )


def test_feddst_server_cuts_the_union_by_aggregate_magnitude():
    weight = [[0.9, -0.05, 0.4, 0.1], [0.3, -0.6, -0.02, 0.7]]
    _, params = _two_class_regression(weight)
    scheme = FedDST(0.25, decay_end=10, distribution="uniform")
    scheme.initial_mask(None, params, None, None)  # budget: 8 - round(0.25 * 8) = 6
    union = Mask(
        {
            W: torch.tensor([[True, True, True, True], [True, True, True, False]]),
            B: torch.ones(2, dtype=torch.bool),
        }
    )
    cut = scheme.server_mask(1, params, union)
    # Union keeps 7; the smallest aggregate magnitude in it, 0.02 at (1, 2), goes. 0.7 at
    # (1, 3) is outside the union and stays out even though it is large.
    assert cut.keep[W].tolist() == [[True, True, True, True], [True, True, False, False]]


# ---------------------------------------------------------------------------------------
# PruneFL: the top (1 - max_decrease) of kept weights stay; the budget is filled by g^2 n / c
# ---------------------------------------------------------------------------------------


def _two_layers():
    model = ConvNet(
        nn.Sequential(),
        nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2)),
        input_shape=(1, 1, 2),
        num_classes=2,
    )
    a, b = "classifier.0.weight", "classifier.1.weight"
    params = {
        a: torch.tensor([[0.5, -0.1], [0.3, 0.05]]),
        "classifier.0.bias": torch.zeros(2),
        b: torch.tensor([[0.2, -0.8], [0.01, 0.4]]),
        "classifier.1.bias": torch.zeros(2),
    }
    keep = {n: torch.ones_like(t, dtype=torch.bool) for n, t in params.items()}
    keep[a] = torch.tensor([[True, True], [False, False]])
    keep[b] = torch.tensor([[False, True], [False, True]])
    return model, params, Mask(keep), a, b


@pytest.mark.parametrize(
    ("costs", "expected_a", "expected_b"),
    [
        # Unit costs: the largest importances, b[0,0] = 2.25 and a[1,0] = 2, fill the budget.
        (None, [[True, False], [True, False]], [[True, True], [False, False]]),
        # Cost 10 on layer a: a[1,0] falls to 0.2 per unit time, below b[1,0] (1.0).
        (
            {"classifier.0.weight": 10.0},
            [[True, False], [False, False]],
            [[True, True], [True, False]],
        ),
    ],
)
def test_prunefl_readjustment_by_hand(costs, expected_a, expected_b):
    _, params, mask, a, b = _two_layers()
    scheme = PruneFL(0.5, readjust_every=2, max_decrease=0.5, layer_costs=costs)
    zeros = {n: torch.zeros_like(t) for n, t in params.items()}
    first = {**zeros, a: torch.tensor([[0.0, 0], [1, 0]]), b: torch.tensor([[1.5, 0], [0, 0]])}
    second = {**zeros, a: torch.tensor([[0.0, 0], [-1, 0]]), b: torch.tensor([[0.0, 0], [1, 0]])}
    # Importance after both: a[1,0] = 1*1 + 1*1 = 2, b[0,0] = 2.25 * 1 = 2.25,
    # b[1,0] = 1 * 1 = 1; everything else 0 (summed, squared, times samples: 1 each).
    scheme.observe_client(1, 0, first, num_samples=1)
    scheme.observe_client(2, 1, second, num_samples=1)
    assert scheme.server_mask(1, params, mask) is mask  # not a readjustment round
    new = scheme.server_mask(2, params, mask)
    # Budget 8 - round(0.5 * 8) = 4. Each layer keeps 2, so 2 - int(0.5 * 2) = 1 stays: the
    # larger kept magnitude, a[0,0] = 0.5 and b[0,1] = -0.8. The other 2 slots go to the
    # largest importance / cost among the rest.
    assert new.keep[a].tolist() == expected_a
    assert new.keep[b].tolist() == expected_b


def test_prunefl_importance_is_summed_squares_times_samples():
    _, params, mask, a, b = _two_layers()
    scheme = PruneFL(0.5, readjust_every=1, max_decrease=0.5)
    zeros = {n: torch.zeros_like(t) for n, t in params.items()}
    # g^2 n: b[1,0] = 1.8^2 * 1 = 3.24, a[1,1] = 0.5^2 * 10 = 2.5, a[1,0] = 1^2 * 2 = 2: the
    # two slots go to b[1,0] and a[1,1]. Without the sample weighting a[1,0] (1) would beat
    # a[1,1] (0.25); with |g| n instead of g^2 n, a[1,1] (5) and a[1,0] (2) would win.
    grads = {**zeros, a: torch.tensor([[0.0, 0.0], [0.0, -0.5]])}
    scheme.observe_client(1, 0, grads, num_samples=10)
    grads = {**zeros, a: torch.tensor([[0.0, 0.0], [1.0, 0.0]])}
    scheme.observe_client(1, 1, grads, num_samples=2)
    grads = {**zeros, b: torch.tensor([[0.0, 0.0], [1.8, 0.0]])}
    scheme.observe_client(1, 2, grads, num_samples=1)
    new = scheme.server_mask(1, params, mask)
    assert new.keep[a].tolist() == [[True, False], [False, True]]
    assert new.keep[b].tolist() == [[False, True], [True, False]]
