"""Release mechanisms (sims.releases) against slow, obviously correct loops.

Every mechanism computes all secrets' worlds at once (vmap over worlds, float64); each
test recomputes a few worlds one at a time with the FL building blocks the simulator uses
(client_update, a hand-written weighted mean, the defenses' own upload and local_update),
so a wrong world index, round order, aggregation weight, start, mask or noise stream
fails.
"""

from __future__ import annotations

import copy
import itertools

import numpy as np
import pytest
import torch

from pruneleak.sims.defenses import FixedDefense, PriPruneDefense
from pruneleak.sims.fl.client import client_update
from pruneleak.sims.pruning.mask import Mask, prunable_names, random_mask
from pruneleak.sims.pruning.schemes import derived_seed
from pruneleak.sims.releases import (
    ClientSetting,
    DPUploadRelease,
    FederatedRelease,
    FixedDefenseRelease,
    PriPruneRelease,
    ReleaseGeometry,
    dp_sgd_bits_bound,
    secret_batches,
)
from pruneleak.sims.releases.likelihood import consistent_withheld, shared_log_likelihoods

LR = 0.25


@pytest.fixture(scope="module")
def model64(model):
    return copy.deepcopy(model).double()


@pytest.fixture(scope="module")
def params64(model64):
    return {n: t.detach() for n, t in model64.named_parameters()}


def _kept(params: dict, mask: Mask) -> torch.Tensor:
    return torch.cat([t.reshape(-1) for t in params.values()])[mask.flatten()]


def _slow_rounds(model, params, mask, batch, others, *, rounds, steps):
    """The target's uploads of every round, one client_update per client and round, and
    the server's mean weighted by batch sizes written out."""
    w, uploads = dict(params), []
    for _ in range(rounds):
        sent = [(batch, client_update(model, w, mask, *batch, lr=LR, local_steps=steps))]
        sent += [(b, client_update(model, w, mask, *b, lr=LR, local_steps=steps)) for b in others]
        uploads.append(_kept(sent[0][1], mask))
        total = sum(len(b[1]) for b, _ in sent)
        w = {n: sum(len(b[1]) * u[n] for b, u in sent) / total for n in w}
    return torch.cat(uploads)


@pytest.mark.parametrize(("rounds", "steps", "batch_size"), [(3, 1, 1), (2, 2, 1), (2, 1, 2)])
def test_federated_uploads_equal_rounds_simulated_one_world_at_a_time(
    model64, params64, digits, rounds, steps, batch_size
):
    mask = random_mask(params64, 0.5, seed=1)
    images, labels = digits.images[:5].double(), digits.labels[:5]
    others = [
        (digits.images[10 + 3 * j : 13 + 3 * j].double(), digits.labels[10 + 3 * j : 13 + 3 * j])
        for j in range(2)
    ]
    setting = ClientSetting(model64, params64, mask, lr=LR, local_steps=steps)
    release = FederatedRelease(
        setting, images, labels, batch_size=batch_size, rounds=rounds, others=others, chunk=3
    )
    fast = torch.from_numpy(np.concatenate(list(release.uploads()), axis=1))
    secrets = release.secrets()
    assert secrets.tolist() == [list(c) for c in itertools.combinations(range(5), batch_size)]
    for i in (0, len(secrets) - 1):
        batch = (images[secrets[i]], labels[secrets[i]])
        slow = _slow_rounds(model64, params64, mask, batch, others, rounds=rounds, steps=steps)
        torch.testing.assert_close(fast[i], slow, rtol=1e-12, atol=1e-12)


def test_one_step_single_releases_are_the_first_uploads_of_the_worlds(model64, params64, digits):
    """Two routes to one step: per-sample gradients at the common start (single_releases)
    and one world per candidate trained by vmap(local_sgd) (uploads)."""
    mask = random_mask(params64, 0.9, seed=2)
    images, labels = digits.images[:6].double(), digits.labels[:6]
    release = FederatedRelease(ClientSetting(model64, params64, mask, lr=LR), images, labels)
    assert (
        release.linear
        and not FederatedRelease(
            ClientSetting(model64, params64, mask, lr=LR, local_steps=2), images, labels
        ).linear
    )
    (first,) = release.uploads()
    np.testing.assert_allclose(release.single_releases(), first, rtol=1e-12, atol=1e-14)


def test_float32_weights_are_computed_in_float64(model, weights, digits):
    """The setting holds float64 copies: the uploads equal the float64 loop, not float32."""
    mask = random_mask(weights, 0.5, seed=0)
    setting = ClientSetting(model, weights, mask, lr=LR)
    assert all(t.dtype == torch.float64 for t in setting.params.values())
    rows = FederatedRelease(setting, digits.images[:2], digits.labels[:2]).single_releases()
    model64 = copy.deepcopy(model).double()
    w64 = {n: t.double() for n, t in weights.items()}
    slow = client_update(model64, w64, mask, digits.images[:1].double(), digits.labels[:1], lr=LR)
    torch.testing.assert_close(torch.from_numpy(rows[0]), _kept(slow, mask), rtol=1e-13, atol=1e-13)


def test_secret_batches_refuse_too_many_worlds():
    with pytest.raises(ValueError, match=r"'batch_size' parameter of secret_batches.*C\(100, 3\)"):
        secret_batches(100, 3, max_secrets=1000)


# --- geometry -------------------------------------------------------------------------


def test_geometry_blocks_give_the_gram_and_the_classes_of_the_concatenation():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(6, 4)), rng.normal(size=(6, 3))
    a[4] = a[1]  # equal in the first block only: distinct overall
    b[4] = b[1]
    b[5] = b[2]  # equal in the second only
    geometry = ReleaseGeometry(6)
    geometry.add(a)
    geometry.add(b)
    both = np.concatenate([a, b], axis=1)
    centred = both - both.mean(axis=0)
    np.testing.assert_allclose(geometry.gram, centred @ centred.T, rtol=1e-12, atol=1e-12)
    same = [[bool(np.array_equal(both[i], both[j])) for j in range(6)] for i in range(6)]
    groups = geometry.groups
    assert [[groups[i] == groups[j] for j in range(6)] for i in range(6)] == same
    value = geometry.leakage(0.0, samples=2, confidence=0.95, seed=0)
    # rows 1 and 4 are equal: 5 groups of sizes 1, 2, 1, 1, 1 out of 6
    expected = np.log2(6) - 2 / 6
    assert value.method == "exact" and value.bits == pytest.approx(expected, abs=1e-12)
    assert value.bayes_success == pytest.approx(5 / 6)


# --- fixed defenses -------------------------------------------------------------------


@pytest.fixture(scope="module")
def defended(model64, params64, digits):
    mask = random_mask(params64, 0.5, seed=4)
    return (
        ClientSetting(model64, params64, mask, lr=LR),
        digits.images[:6].double(),
        digits.labels[:6],
    )


@pytest.mark.parametrize("strategy", ["largest", "random", "mix"])
def test_fixed_defense_upload_is_the_defense_upload_after_client_update(
    model64, defended, strategy
):
    setting, images, labels = defended
    defense = FixedDefense(strategy, 0.3, seed=7)
    release = FixedDefenseRelease(setting, images, labels, defense)
    base = setting.mask
    for i in (0, 5):
        trained = client_update(
            model64, setting.params, base, images[i : i + 1], labels[i : i + 1], lr=LR
        )
        sent, shared = defense.upload(3, 2, setting.params, trained, base)
        generator = torch.Generator().manual_seed(derived_seed(7, 3, 2))
        values, flags = release.upload(i, generator)
        torch.testing.assert_close(flags, shared.flatten()[base.flatten()])
        torch.testing.assert_close(values, _kept(sent, base), rtol=1e-12, atol=1e-12)


def test_largest_withheld_set_is_the_top_updates_per_tensor(model64, defended):
    """L(x) from its definition: per prunable tensor, the round(rate * kept) kept weights of
    largest |w_start - w_trained| (numpy argsort, independent of defense_mask's topk)."""
    setting, images, labels = defended
    release = FixedDefenseRelease(setting, images, labels, FixedDefense("largest", 0.3))
    base = setting.mask
    trained = client_update(model64, setting.params, base, images[2:3], labels[2:3], lr=LR)
    withheld = {}
    for name, flags in base.keep.items():
        chosen = np.zeros(flags.numel(), dtype=bool)
        if name in prunable_names(base.keep):
            update = (setting.params[name] - trained[name]).abs().reshape(-1).numpy()
            kept = np.flatnonzero(flags.reshape(-1).numpy())
            count = round(0.3 * kept.size)
            chosen[kept[np.argsort(-update[kept], kind="stable")[:count]]] = True
        withheld[name] = chosen
    expected = np.concatenate(list(withheld.values()))[base.flatten().numpy()]
    np.testing.assert_array_equal(release.forced[2].numpy(), expected)


def test_mix_mask_likelihood_is_consistency_up_to_a_constant():
    """Brute force over every random part: P(mask | x) for Mix with L(x) forced and one
    of the remaining coordinates drawn uniformly equals consistency / C(k - |L|, 1)."""
    k = 6
    forced = torch.zeros(4, k, dtype=torch.bool)
    for x, j in enumerate((0, 1, 1, 3)):
        forced[x, j] = True
    masks = []
    for x in range(4):
        for extra in range(k):
            if not forced[x, extra]:
                withheld = forced[x].clone()
                withheld[extra] = True
                masks.append(~withheld)
    shared = torch.stack(masks).unique(dim=0)
    brute = torch.zeros(len(shared), 4, dtype=torch.float64)
    for d, seen in enumerate(shared):
        for x in range(4):
            for extra in range(k):
                if not forced[x, extra]:
                    withheld = forced[x].clone()
                    withheld[extra] = True
                    brute[d, x] += float(torch.equal(~withheld, seen)) / (k - 1)
    consistent = consistent_withheld(forced, shared).double() / (k - 1)
    torch.testing.assert_close(consistent, brute)


def test_shared_log_likelihoods_differ_by_the_direct_gaussian_terms():
    rng = np.random.default_rng(3)
    table = torch.from_numpy(rng.normal(size=(5, 7)) + 40.0)  # large common offset
    shared = torch.from_numpy(rng.random((3, 7)) < 0.6)
    observed = torch.from_numpy(rng.normal(size=(3, 7)) + 40.0)
    s = 0.3
    fast = shared_log_likelihoods(observed, shared, table, s)
    direct = -(((observed[:, None] - table[None]) * shared[:, None]) ** 2).sum(-1) / (2 * s**2)
    torch.testing.assert_close(fast - fast[:, :1], direct - direct[:, :1], rtol=1e-10, atol=1e-10)


def test_largest_leaks_the_ceiling_without_noise(defended):
    setting, images, labels = defended
    release = FixedDefenseRelease(setting, images, labels, FixedDefense("largest", 0.3))
    value = release.leakage(0.0, samples=64, confidence=0.95, seed=0)
    assert value.bits == pytest.approx(np.log2(6)) and value.bayes_success == 1.0


# --- PriPrune's adaptive defense ------------------------------------------------------


@pytest.mark.parametrize("pseudo", [True, False])
def test_priprune_outcomes_are_the_defense_local_update_per_secret(model64, defended, pseudo):
    setting, images, labels = defended
    defense = PriPruneDefense(alpha_lr=50.0, lambda_pri=30.0, pseudo=pseudo, seed=5)
    # an earlier round gives the client alpha and (Pseudo) a previous trained model
    earlier = client_update(model64, setting.params, setting.mask, images[:2], labels[:2], lr=LR)
    defense.local_update(
        1,
        0,
        model64,
        setting.params,
        setting.mask,
        [(images[:2], labels[:2])],
        lr=LR,
        gradient_at="masked",
    )
    defense.upload(1, 0, setting.params, earlier, setting.mask)
    start = defense.start(0, setting.params)
    round_setting = ClientSetting(model64, start, setting.mask, lr=LR, local_steps=2)
    release = PriPruneRelease(round_setting, images, labels, defense, client_id=0)
    trained, shared = release.outcomes(derived_seed(5, 2, 0))
    for i in (1, 4):
        copy_ = copy.deepcopy(defense)
        batch = [(images[i : i + 1], labels[i : i + 1])] * 2
        w = copy_.local_update(
            2, 0, model64, start, setting.mask, batch, lr=LR, gradient_at="masked"
        )
        mask = copy_.shared_mask(2, 0, start, w, setting.mask)
        torch.testing.assert_close(shared[i], mask.flatten()[setting.mask.flatten()])
        torch.testing.assert_close(trained[i], _kept(w, setting.mask), rtol=1e-12, atol=1e-12)
    assert not bool(shared.all()), "the defense withheld nothing: the test would not see masks"


# --- Fed-LTP's DP upload --------------------------------------------------------------


def test_dp_upload_without_noise_is_opacus_dp_sgd(model64, defended):
    """sigma = 0: Opacus' DPOptimizer (per-example clipping, momentum SGD) on the secret's
    whole batch (Poisson inclusion 1) gives the same weights (the peer library)."""
    from pruneleak.sims.fedltp.dp_local import DPLocalTrainer

    setting, images, labels = defended
    setting = ClientSetting(model64, setting.params, setting.mask, lr=0.3, local_steps=3)
    release = DPUploadRelease(
        setting, images, labels, max_grad_norm=0.05, noise_multiplier=0.0, momentum=0.5,
        batch_size=2,
    )  # fmt: skip
    values, shared = release.outcomes(0)
    assert bool(shared.all())
    trainer = DPLocalTrainer(
        copy.deepcopy(model64), clipping="per_example", max_grad_norm=0.05,
        noise_multiplier=0.0, batch_size=2, momentum=0.5, device="cpu",
    )  # fmt: skip
    secrets = secret_batches(6, 2)
    for i in (0, 7, len(secrets) - 1):
        x, y = images[secrets[i]], labels[secrets[i]]
        w = trainer.train(setting.params, setting.mask, x, y, steps=3, lr=0.3, seed=1)
        torch.testing.assert_close(values[i], _kept(w, setting.mask), rtol=1e-10, atol=1e-12)


def test_dp_upload_with_noise_is_the_hand_written_loop(model64, defended):
    setting, images, labels = defended
    setting = ClientSetting(model64, setting.params, setting.mask, lr=0.3, local_steps=2)
    release = DPUploadRelease(
        setting, images, labels, max_grad_norm=0.05, noise_multiplier=1.3, momentum=0.9
    )
    values, _ = release.outcomes(11)
    noise = release.noise(11)
    mask, keep = setting.mask, setting.mask.keep
    for i in (2, 5):
        w, buffer = dict(setting.params), None
        for xi in noise:
            point = {n: t.clone().requires_grad_() for n, t in mask.apply(w).items()}
            loss = torch.nn.functional.cross_entropy(
                torch.func.functional_call(model64, point, (images[i : i + 1],)), labels[i : i + 1]
            )
            g = dict(zip(point, torch.autograd.grad(loss, list(point.values())), strict=True))
            g = {n: v * keep[n] for n, v in g.items()}
            norm = float(torch.sqrt(sum((v**2).sum() for v in g.values())))
            factor = min(1.0, 0.05 / (norm + 1e-6))
            step = {n: (factor * g[n] + 1.3 * 0.05 * xi[n]) * keep[n] for n in g}
            buffer = step if buffer is None else {n: 0.9 * buffer[n] + step[n] for n in step}
            w = {n: (w[n] - 0.3 * buffer[n]) * keep[n] for n in w}
        torch.testing.assert_close(values[i], _kept(w, mask), rtol=1e-10, atol=1e-12)


def test_dp_bound_is_the_binary_channel_capacity_at_low_snr():
    """Two secrets whose clipped gradients are antipodal (distance 2C) through noise sigma C:
    the exact binary-channel bits never exceed the bound, which they reach as sigma grows."""
    from pruneleak.bounds.leakage import binary_channel_bits

    for sigma in (0.5, 1.0, 3.0, 30.0):
        exact = binary_channel_bits(2.0, sigma)
        assert exact <= dp_sgd_bits_bound(1, sigma, 1)
    assert binary_channel_bits(2.0, 30.0) / dp_sgd_bits_bound(1, 30.0, 1) > 0.99
    assert dp_sgd_bits_bound(4, 2.0, 3) == pytest.approx(4 * 9 / (8 * np.log(2)))
    assert dp_sgd_bits_bound(1, 0.0, 1) == float("inf")


def test_dp_upload_bracket_is_capped_by_the_dp_bound(model64, defended):
    setting, images, labels = defended
    release = DPUploadRelease(
        ClientSetting(model64, setting.params, setting.mask, lr=0.3),
        images, labels, max_grad_norm=0.05, noise_multiplier=4.0, critic_draws=4,
    )  # fmt: skip
    value = release.leakage(0.0, samples=32, confidence=0.95, seed=0)
    cap = dp_sgd_bits_bound(1, 4.0, 1)
    assert value.method == "bracket" and value.ci_bits[1] <= cap < np.log2(6)
    assert 0 <= value.ci_bits[0] <= value.bracket_bits[0] <= value.bracket_bits[1] <= cap


def test_worlds_that_cannot_fit_are_refused_before_training(model64, params64, digits, monkeypatch):
    from pruneleak.sims.core import memory

    monkeypatch.setattr(memory, "device_memory_bytes", lambda device: 1 << 20)  # 1 MiB
    setting = ClientSetting(model64, params64, random_mask(params64, 0.5, seed=0), lr=LR)
    release = FederatedRelease(setting, digits.images[:8], digits.labels[:8], rounds=2)
    with pytest.raises(ValueError, match=r"The release of FederatedRelease.uploads: 8 secrets"):
        next(release.uploads())
    with pytest.raises(ValueError, match=r"The release of FixedDefenseRelease: 8 secrets"):
        FixedDefenseRelease(setting, digits.images[:8], digits.labels[:8], FixedDefense("random"))
