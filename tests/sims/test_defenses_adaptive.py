"""PriPrune's adaptive defense (sims.defenses.adaptive) against Bernoulli frequencies, a
slow loop over eq. (17), a joint step recomputed with torch.autograd from the full loss
(16), the direction of alpha's steps, and the FL loop."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from pruneleak.sims.data.datasets import load_digits_dataset
from pruneleak.sims.data.partition import partition_iid
from pruneleak.sims.defenses import (
    ALPHA_EPS,
    PriPruneDefense,
    gumbel_noise,
    gumbel_share_mask,
    privacy_weights,
    withheld_fraction,
)
from pruneleak.sims.fl.server import FedConfig, run_federated
from pruneleak.sims.models import conv_net
from pruneleak.sims.pruning.mask import Mask
from pruneleak.sims.pruning.schemes import RandomPruning

# --------------------------------------------------------------------------------------
# eq. (18): hard samples and straight-through gradients
# --------------------------------------------------------------------------------------

_ALPHAS = (0.05, 0.3, 0.5, 0.8)
_TEMPERATURES = (0.5, 2.0)
_DRAWS = 20_000


@pytest.mark.parametrize("temperature", _TEMPERATURES)
def test_hard_samples_are_withheld_with_probability_alpha(temperature):
    # The withheld count of each alpha is Binomial(20000, alpha): sd = sqrt(n a (1 - a)),
    # at most 70.7. A 5-sd band fails by chance with probability 5.7e-7 per case; the
    # union bound over the 8 cases (4 alphas x 2 temperatures) is < 5e-6.
    generator = torch.Generator().manual_seed(0)
    alpha = torch.tensor(_ALPHAS).repeat_interleave(_DRAWS)
    mask = gumbel_share_mask(alpha, gumbel_noise(alpha.shape, generator=generator), temperature)
    assert set(mask.unique().tolist()) <= {0.0, 1.0}  # exactly hard in the forward pass
    withheld = (mask == 0).reshape(len(_ALPHAS), _DRAWS).sum(1).double()
    for a, count in zip(_ALPHAS, withheld.tolist(), strict=True):
        sd = math.sqrt(_DRAWS * a * (1 - a))
        assert abs(count - _DRAWS * a) < 5 * sd, (a, temperature, count)


@pytest.mark.parametrize("temperature", _TEMPERATURES)
def test_straight_through_gradient_is_the_soft_samples_and_finite(temperature):
    """The gradient of the hard mask w.r.t. alpha is that of eq. (18)'s soft v(1), written
    out here with exp, including alpha at the clamp ends ALPHA_EPS and 1 - ALPHA_EPS."""
    generator = torch.Generator().manual_seed(1)
    values = [ALPHA_EPS, 1e-3, 0.3, 0.5, 0.9, 1 - ALPHA_EPS]
    alpha = torch.tensor(values * 50, dtype=torch.float64).requires_grad_()
    noise = gumbel_noise(alpha.shape, generator=generator).double()
    (actual,) = torch.autograd.grad(gumbel_share_mask(alpha, noise, temperature).sum(), alpha)

    reference = alpha.detach().clone().requires_grad_()
    e0 = torch.exp((torch.log(reference) + noise[0]) / temperature)
    e1 = torch.exp((torch.log(1 - reference) + noise[1]) / temperature)
    (expected,) = torch.autograd.grad((e1 / (e0 + e1)).sum(), reference)
    assert torch.isfinite(actual).all()
    torch.testing.assert_close(actual, expected, rtol=1e-9, atol=1e-12)
    assert (actual <= 0).all()  # more alpha, less sharing


# --------------------------------------------------------------------------------------
# eq. (17): the privacy weights
# --------------------------------------------------------------------------------------


def test_privacy_weights_match_a_slow_loop_and_sum_as_the_paper_says():
    generator = torch.Generator().manual_seed(2)
    grads = {
        "conv.weight": torch.randn(4, 3, 2, 2, generator=generator),
        "conv.bias": torch.randn(4, generator=generator),
        "fc.weight": torch.randn(5, 6, generator=generator),
    }
    grads["fc.weight"][0] = 0.0  # zero gradients get zero weight
    actual = privacy_weights(grads)
    assert set(actual) == {"conv.weight", "fc.weight"}  # biases have no alpha

    sizes = {"conv.weight": 48, "fc.weight": 30}
    total = sum(sizes.values())
    for name, size in sizes.items():
        flat = grads[name].reshape(-1).tolist()
        layer_sum = sum(abs(x) for x in flat)
        expected = [size / total * abs(x) / layer_sum for x in flat]
        torch.testing.assert_close(
            actual[name].reshape(-1), torch.tensor(expected), rtol=1e-6, atol=0
        )
        assert float(actual[name].sum()) == pytest.approx(size / total, rel=1e-6)
    assert float(sum(w.sum() for w in actual.values())) == pytest.approx(1.0, rel=1e-6)

    grads["fc.weight"].zero_()  # a layer with no gradient: weight 0, not NaN
    weights = privacy_weights(grads)
    assert torch.equal(weights["fc.weight"], torch.zeros(5, 6))
    assert float(weights["conv.weight"].sum()) == pytest.approx(48 / 78, rel=1e-6)


# --------------------------------------------------------------------------------------
# One joint step of Algorithm 3 (lines 5-10)
# --------------------------------------------------------------------------------------


class _FixedNoise(PriPruneDefense):
    """The defense with the Gumbel noise of each step taken from a list."""

    def __init__(self, noises, **kwargs):
        super().__init__(**kwargs)
        self.noises = list(noises)

    def draw_noise(self, shape, generator, device):
        noise = self.noises.pop(0)
        assert tuple(noise.shape) == (2, *shape)
        return noise


def _tiny_model():
    torch.manual_seed(3)
    return nn.Sequential(nn.Flatten(), nn.Linear(4, 3))


def _tiny_base():
    keep = torch.ones(3, 4, dtype=torch.bool)
    keep[1, 2] = False
    return Mask({"1.weight": keep, "1.bias": torch.ones(3, dtype=torch.bool)})


def _reference_step(a, w, bias, tilde, noise, keep, images, labels, constants):
    """Algorithm 3 lines 5-10 with L_local of eq. (16) in one expression, differentiated
    by torch.autograd: the new (weight, bias, alpha)."""
    lam_acc, lam_pri, lam_sha, tau, lr, alpha_lr = constants
    a = a.clone().requires_grad_()
    e0 = torch.exp((torch.log(a) + noise[0]) / tau)
    e1 = torch.exp((torch.log(1 - a) + noise[1]) / tau)
    soft = e1 / (e0 + e1)
    hard = (e1 > e0).float()
    m_hat = hard - soft.detach() + soft  # the hard sample trick as the paper writes it
    w_in = m_hat * w + (1 - m_hat) * tilde
    bias = bias.clone().requires_grad_()
    logits = images.reshape(len(images), -1) @ (w_in * keep).T + bias
    l_acc = nn.functional.cross_entropy(logits, labels)
    (g,) = torch.autograd.grad(l_acc, w_in, retain_graph=True)
    weight_term = (g.abs() / g.abs().sum()).detach()  # N_l / sum N = 1: one weight tensor
    l_pri = -(weight_term * torch.log(a)).sum()
    l_local = lam_acc * l_acc + lam_pri * l_pri + lam_sha * a.sum()
    g_w, g_b, g_a = torch.autograd.grad(l_local, [w_in, bias, a])
    return (
        ((w_in - lr * g_w) * keep).detach(),
        (bias - lr * g_b).detach(),
        (a - alpha_lr * g_a).clamp(ALPHA_EPS, 1 - ALPHA_EPS).detach(),
        hard,
    )


@pytest.mark.parametrize("steps", [1, 2])
@pytest.mark.parametrize("pseudo", [True, False])
def test_joint_steps_match_autograd_on_the_full_loss(pseudo, steps):
    """Round 2 of a client: alpha and the saved weights come from round 1; each step is
    recomputed from eq. (16)-(18) written out; the second continues from the first's
    weights and alpha, combined with the same saved weights."""
    constants = lam_acc, lam_pri, lam_sha, tau, lr, alpha_lr = 2.0, 3.0, 0.1, 0.5, 0.1, 0.7
    generator = torch.Generator().manual_seed(4)
    model, base = _tiny_model(), _tiny_base()
    batches = [
        (torch.randn(5, 1, 2, 2, generator=generator), torch.tensor([0, 2, 1, 2, 0])),
        (torch.randn(4, 1, 2, 2, generator=generator), torch.tensor([1, 1, 0, 2])),
    ][:steps]
    noises = [gumbel_noise((3, 4), generator=generator) for _ in range(steps)]
    alpha0 = torch.rand(3, 4, generator=generator) * 0.9 + 0.05
    defense = _FixedNoise(
        noises,
        lambda_acc=lam_acc,
        lambda_pri=lam_pri,
        lambda_sha=lam_sha,
        temperature=tau,
        alpha_lr=alpha_lr,
        pseudo=pseudo,
    )
    defense.alpha[7] = {"1.weight": alpha0.clone()}
    round1_start = {"1.weight": torch.zeros(3, 4), "1.bias": torch.zeros(3)}
    previous = {  # the client's trained model of round 1
        "1.weight": torch.randn(3, 4, generator=generator) * base.keep["1.weight"],
        "1.bias": torch.randn(3, generator=generator),
    }
    defense.upload(1, 7, round1_start, previous, base)
    broadcast = {
        "1.weight": torch.randn(3, 4, generator=generator) * base.keep["1.weight"],
        "1.bias": torch.randn(3, generator=generator),
    }
    start = defense.start(7, broadcast)
    actual = defense.local_update(2, 7, model, start, base, batches, lr=lr, gradient_at="masked")

    keep = base.keep["1.weight"].float()
    tilde = previous["1.weight"] if pseudo else torch.zeros(3, 4)
    w, bias, a = start["1.weight"], start["1.bias"], alpha0
    for k, ((images, labels), noise) in enumerate(zip(batches, noises, strict=True)):
        before = w
        w, bias, a, hard = _reference_step(
            a, w, bias, tilde, noise, keep, images, labels, constants
        )
        # Each step exercises both samples and a combination that changes the weights.
        assert 0 < hard.sum() < 12, k
        assert (hard == 0).logical_and((before - tilde).abs() > 0).any(), k
    torch.testing.assert_close(actual["1.weight"], w)
    torch.testing.assert_close(actual["1.bias"], bias)
    torch.testing.assert_close(defense.alpha[7]["1.weight"], a)
    assert not torch.equal(a, alpha0)


# --------------------------------------------------------------------------------------
# The direction of alpha's steps
# --------------------------------------------------------------------------------------


def _linear_setup(seed=5):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Flatten(), nn.Linear(16, 10))
    generator = torch.Generator().manual_seed(seed)
    images = torch.randn(40, 1, 4, 4, generator=generator)
    labels = torch.randint(0, 10, (40,), generator=generator)
    params = {n: p.detach().clone() for n, p in model.named_parameters()}
    base = Mask({n: torch.ones_like(p, dtype=torch.bool) for n, p in params.items()})
    return model, params, base, images, labels


def test_large_privacy_weight_raises_alpha_of_large_gradients_more():
    model, params, base, images, labels = _linear_setup()
    # |g| at the start, from torch.autograd on the model (not the code under test).
    model.zero_grad()
    nn.functional.cross_entropy(model(images), labels).backward()
    magnitude = model[1].weight.grad.abs().reshape(-1)

    defense = PriPruneDefense(lambda_pri=1.0, alpha_lr=0.1)
    defense.local_update(
        1, 0, model, params, base, [(images, labels)], lr=0.1, gradient_at="masked"
    )
    step = (defense.alpha[0]["1.weight"] - 0.3).reshape(-1)
    # First round: nothing saved, so the sample leaves the weights and alpha moves by
    # alpha_lr * (lambda_pri * weight / alpha - lambda_sha) only: increasing in |g|
    # (non-strictly at float32 resolution, strictly when |g| differs by 5% of its max).
    assert float(step.max()) < 0.5  # far from the clamp
    larger = magnitude[:, None] > magnitude[None, :]
    clearly = magnitude[:, None] > magnitude[None, :] + 0.05 * magnitude.max()
    assert clearly.any()
    assert (step[:, None] >= step[None, :])[larger].all()
    assert (step[:, None] > step[None, :])[clearly].all()
    assert (step[magnitude > 1e-3 * magnitude.max()] > 0).all()

    # Over several FedSGD-style steps with the accuracy term on: still the large
    # gradients' alpha grows faster (top decile against bottom decile of |g| at start).
    defense = PriPruneDefense(lambda_pri=1.0, alpha_lr=0.1)
    defense.local_update(
        1, 0, model, params, base, [(images, labels)] * 5, lr=0.1, gradient_at="masked"
    )
    step = (defense.alpha[0]["1.weight"] - 0.3).reshape(-1)
    order = magnitude.argsort()
    decile = len(order) // 10
    assert step[order[-decile:]].mean() > 2 * step[order[:decile]].mean()


def test_without_privacy_loss_the_sharing_penalty_lowers_alpha():
    model, params, base, images, labels = _linear_setup()
    defense = PriPruneDefense(lambda_pri=0.0, lambda_acc=0.0, lambda_sha=0.01, alpha_lr=2.0)
    defense.local_update(
        1, 0, model, params, base, [(images, labels)] * 3, lr=0.1, gradient_at="masked"
    )
    # d(lambda_sha sum alpha)/d alpha = lambda_sha: three steps of alpha_lr * 0.01.
    torch.testing.assert_close(
        defense.alpha[0]["1.weight"], torch.full((10, 16), 0.3 - 3 * 2.0 * 0.01)
    )
    defense = PriPruneDefense(lambda_pri=0.0, lambda_sha=0.01, alpha_lr=2.0)  # lambda_acc = 5
    defense.local_update(
        1, 0, model, params, base, [(images, labels)], lr=0.1, gradient_at="masked"
    )
    torch.testing.assert_close(  # first round: the sample does not move the weights
        defense.alpha[0]["1.weight"], torch.full((10, 16), 0.3 - 2.0 * 0.01)
    )


def test_alpha_stays_inside_the_clamp():
    model, params, base, images, labels = _linear_setup()
    defense = PriPruneDefense(lambda_pri=1e6, alpha_lr=1.0)
    defense.local_update(
        1, 0, model, params, base, [(images, labels)], lr=0.1, gradient_at="masked"
    )
    alpha = defense.alpha[0]["1.weight"]
    assert float(alpha.max()) == pytest.approx(1 - ALPHA_EPS)
    defense = PriPruneDefense(lambda_pri=0.0, lambda_sha=10.0, alpha_lr=1.0)
    defense.local_update(
        1, 0, model, params, base, [(images, labels)], lr=0.1, gradient_at="masked"
    )
    assert torch.equal(defense.alpha[0]["1.weight"], torch.full((10, 16), ALPHA_EPS))


# --------------------------------------------------------------------------------------
# Line 12 and the FL loop
# --------------------------------------------------------------------------------------


def test_shared_mask_withholds_alpha_above_one_half_among_base_kept():
    base = _tiny_base()
    defense = PriPruneDefense()
    alpha = torch.full((3, 4), 0.2)
    alpha[0, 0] = alpha[1, 2] = alpha[2, 3] = 0.9  # (1, 2) is base-pruned
    alpha[0, 1] = 0.5  # withheld only where alpha > 1/2: a tie is shared
    defense.alpha[3] = {"1.weight": alpha}
    shared = defense.shared_mask(1, 3, None, None, base)
    expected = base.keep["1.weight"].clone()
    expected[0, 0] = expected[2, 3] = False
    assert torch.equal(shared.keep["1.weight"], expected)
    assert shared.keep["1.bias"].all()
    assert withheld_fraction(base, shared) == pytest.approx(2 / 11)
    fresh = PriPruneDefense(alpha_init=0.7).shared_mask(1, 0, None, None, base)
    assert not fresh.keep["1.weight"].any()  # an untrained client at alpha_init > 1/2


@pytest.fixture(scope="module")
def federation():
    train, test = load_digits_dataset().train_test_split(0.2, seed=0)
    return train, test, partition_iid(len(train), 6, seed=0)


class _Snapshots(PriPruneDefense):
    """Records the alpha each local update starts from (as the update reads it) and the
    alpha it ends with."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.snapshots = []
        self._before = None

    def start_alpha(self, client_id, start):
        known = client_id in self.alpha
        alpha = super().start_alpha(client_id, start)
        self._before = {n: a.clone() for n, a in alpha.items()} if known else {}
        return alpha

    def local_update(self, t, client_id, *args, **kwargs):
        out = super().local_update(t, client_id, *args, **kwargs)
        after = {n: a.clone() for n, a in self.alpha[client_id].items()}
        self.snapshots.append((t, client_id, self._before, after, args[2]))
        return out


@pytest.mark.parametrize("pseudo", [True, False])
def test_fl_loop_records_rates_and_keeps_alpha_per_client(federation, pseudo):
    train, test, clients = federation
    torch.manual_seed(0)
    model = conv_net(1, in_channels=1, image_size=8, num_classes=10, width=16, hidden=32)
    # lambda_pri = 1000 moves the alpha of the largest gradients past 1/2 within a round
    # (at 15 and this model's 3556 weights, no rate leaves 0 in 4 rounds).
    defense = _Snapshots(lambda_pri=1000.0, pseudo=pseudo, seed=2)
    config = FedConfig(rounds=4, clients_per_round=3, batch_size=10, lr=0.05, seed=1)
    result = run_federated(
        model,
        RandomPruning(0.3, seed=0),
        train,
        clients,
        test,
        config,
        device="cpu",
        defense=defense,
    )
    assert result is not None
    rates = [r["rate"] for r in defense.records]
    assert len(rates) == 12 and all(0.0 <= r <= 1.0 for r in rates)
    assert any(0.0 < r < 1.0 for r in rates)
    assert [(r["round"], r["client"]) for r in defense.records] == [
        (t, i) for t, i, *_ in defense.snapshots
    ]
    last: dict[int, dict] = {}
    repeated = 0
    for record, (_, client, before, after, mask) in zip(
        defense.records, defense.snapshots, strict=True
    ):
        kept = sum(int(mask.keep[n].sum()) for n in after)  # the rate, counted here
        withheld = sum(int((mask.keep[n] & (after[n] > 0.5)).sum()) for n in after)
        assert record["rate"] == pytest.approx(withheld / kept)
        if client in last:  # Algorithm 3 line 3: alpha^t = alpha^{t-1}
            repeated += 1
            assert before.keys() == last[client].keys()
            assert all(torch.equal(before[n], last[client][n]) for n in before)
        else:
            assert before == {}
        assert any(not torch.equal(a, torch.full_like(a, 0.3)) for a in after.values())
        last[client] = after
    assert repeated > 0
    assert set(defense.alpha) == set(last)


# --------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"lambda_acc": -1.0}, "lambda_acc"),
        ({"lambda_pri": float("nan")}, "lambda_pri"),
        ({"lambda_sha": "0.1"}, "lambda_sha"),
        ({"temperature": 0.0}, "temperature"),
        ({"alpha_init": 1.0}, "alpha_init"),
        ({"alpha_init": 0.0}, "alpha_init"),
        ({"alpha_lr": 0.0}, "alpha_lr"),
        ({"alpha_lr": np.inf}, "alpha_lr"),
        ({"pseudo": "yes"}, "pseudo"),
        ({"seed": -1}, "seed"),
    ],
)
def test_bad_arguments_raise_naming_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=f"'{name}' parameter of PriPruneDefense"):
        PriPruneDefense(**kwargs)
