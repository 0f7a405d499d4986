"""Fed-LTP's system (sims.fedltp): each piece against something independent of it.

References: a slow per-example autograd loop (clipping), Opacus' and dp_accounting's RDP
accountants (epsilon of the schedule), numpy closed forms (eq. 10, eq. 15, the Laplace
RDP of Mironov 2017 Prop. 6), Monte Carlo (the validation noise), bit-exact comparisons
(rewinding, resume).
"""

from __future__ import annotations

import math
from functools import partial

import dp_accounting as dpa
import numpy as np
import pytest
import torch
from dp_accounting.rdp import rdp_privacy_accountant as dp_rdp
from fedltp_helpers import logreg_factory, tiny_config
from opacus.accountants.analysis import rdp as opacus_rdp
from torch import nn

from pruneleak.bounds.accounting import DEFAULT_ORDERS
from pruneleak.sims.data.datasets import load_digits_dataset
from pruneleak.sims.fedltp import (
    DPLocalTrainer,
    FedLTPConfig,
    affordable_rounds,
    epsilon_after,
    find_ticket,
    iterative_client_masks,
    noisy_scores,
    prune_remaining,
    retention_rates,
    run_fedltp,
    select_ticket,
    selection_probabilities,
    split_fedltp_data,
    split_for_config,
)
from pruneleak.sims.fedltp.server_state import ServerState
from pruneleak.sims.fedltp.tickets import Ticket, load_params, train_masked
from pruneleak.sims.fedltp.training import RoundInputs, run_round
from pruneleak.sims.models import build_model
from pruneleak.sims.pruning.mask import Mask, magnitude_mask, prunable_names
from pruneleak.sims.store.results import ResultStore

INTEGER_ORDERS = [float(a) for a in range(2, 65)] + [128.0, 256.0]


@pytest.fixture(scope="module")
def digits():
    return load_digits_dataset()


def _tiny_net(seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3))


def _tiny_data(n: int = 9):
    gen = torch.Generator().manual_seed(1)
    return 3 * torch.randn(n, 6, generator=gen), torch.randint(3, (n,), generator=gen)


def _partial_mask(model: nn.Module) -> Mask:
    keep = {name: torch.ones_like(p, dtype=torch.bool) for name, p in model.named_parameters()}
    keep["0.weight"][0, :3] = False  # a few pruned weights: gradients restricted to the rest
    keep["2.weight"][1, 1] = False
    return Mask(keep)


def _trainer(model, *, clipping="per_example", clip=1.0, sigma=0.0, batch=3, momentum=0.0):
    return DPLocalTrainer(
        model,
        clipping=clipping,
        max_grad_norm=clip,
        noise_multiplier=sigma,
        batch_size=batch,
        momentum=momentum,
        device="cpu",
    )


# ---- DP-SGD: clipping against a slow per-example loop ---------------------------------


def test_per_example_clipping_matches_a_slow_per_example_loop():
    c, batch = 0.5, 9
    trainer = _trainer(_tiny_net(0), clip=c, batch=batch)
    reference = _tiny_net(0)
    mask = _partial_mask(reference)
    keep = mask.keep
    x, y = _tiny_data(batch)
    _, optimizer = trainer.optimizers(lr=0.1, seed=0)
    trainer.private_gradient(optimizer, keep, x, y)
    got = {n: p.grad.clone() for n, p in trainer.base.named_parameters()}

    names = [n for n, _ in reference.named_parameters()]
    total = {n: torch.zeros_like(p) for n, p in reference.named_parameters()}
    raw_norms, clipped_norms = [], []
    for i in range(batch):  # one example at a time, plain autograd
        loss = nn.functional.cross_entropy(reference(x[i : i + 1]), y[i : i + 1])
        grads = torch.autograd.grad(loss, list(reference.parameters()))
        grads = [g * keep[n] for g, n in zip(grads, names, strict=True)]
        norm = torch.sqrt(sum((g**2).sum() for g in grads))
        factor = min(1.0, c / (float(norm) + 1e-6))  # Opacus' 1e-6 guard
        raw_norms.append(float(norm))
        clipped_norms.append(float(norm) * factor)
        for g, n in zip(grads, names, strict=True):
            total[n] += g * factor
    assert max(raw_norms) > c  # the check exercises clipping
    assert max(clipped_norms) <= c
    for n in names:
        torch.testing.assert_close(got[n], total[n] / batch, rtol=1e-5, atol=1e-7)
        assert not bool(got[n][~keep[n]].any())  # pruned coordinates get nothing


def test_batch_clipping_clips_the_mean_gradient():
    c, batch = 0.3, 9
    trainer = _trainer(_tiny_net(0), clipping="batch", clip=c, batch=batch)
    reference = _tiny_net(0)
    keep = _partial_mask(reference).keep
    x, y = _tiny_data(batch)
    _, optimizer = trainer.optimizers(lr=0.1, seed=0)
    trainer.private_gradient(optimizer, keep, x, y)
    names = [n for n, _ in reference.named_parameters()]
    grads = torch.autograd.grad(
        nn.functional.cross_entropy(reference(x), y), list(reference.parameters())
    )
    grads = [g * keep[n] for g, n in zip(grads, names, strict=True)]
    norm = float(torch.sqrt(sum((g**2).sum() for g in grads)))
    assert norm > c
    for g, (_, p) in zip(grads, trainer.base.named_parameters(), strict=True):
        torch.testing.assert_close(p.grad, g * c / (norm + 1e-6), rtol=1e-5, atol=1e-7)


def test_noise_has_std_sigma_c_over_the_batch_size():
    # zero data gradient: the empty batch leaves N(0, sigma^2 C^2) / B on every coordinate
    c, sigma, batch = 2.0, 1.5, 4
    trainer = _trainer(nn.Linear(200, 50), clip=c, sigma=sigma, batch=batch)
    keep = Mask.ones(trainer.base).keep
    _, optimizer = trainer.optimizers(lr=0.1, seed=3)
    trainer.private_gradient(optimizer, keep, torch.zeros(0, 200), torch.zeros(0, dtype=torch.long))
    noise = trainer.base.weight.grad.reshape(-1)
    # 10,000 draws: the sample std is within 3 % of the truth with probability > 0.999
    assert abs(float(noise.std()) / (sigma * c / batch) - 1) < 0.03


def test_batches_are_poisson_at_the_accounted_rate():
    # the accountant assumes each record joins each batch independently with q~ = B / n
    trainer = _trainer(nn.Linear(2, 2), sigma=1.0, batch=10)
    n, steps = 40, 4000
    q = trainer.sampling_rate(n)
    assert q == 0.25
    batches = trainer.draw_batches(n, steps=steps, seed=0)
    sizes = np.array([len(b) for b in batches])
    # Binomial(40, 1/4): mean 10, variance 7.5 (a fixed-size batch would have variance 0)
    assert abs(sizes.mean() - 10) < 5 * math.sqrt(7.5 / steps)
    assert abs(sizes.var() / 7.5 - 1) < 0.1
    counts = np.bincount(torch.cat(batches).numpy(), minlength=n)
    # every record about q * steps = 1000 times (sd 27.4): all within 5 sd
    assert np.abs(counts - q * steps).max() < 5 * math.sqrt(steps * q * (1 - q))
    assert all(len(torch.unique(b)) == len(b) for b in batches)  # no record twice in a batch


def test_local_training_keeps_pruned_weights_at_zero():
    trainer = _trainer(_tiny_net(0), sigma=1.0, momentum=0.5)
    mask = _partial_mask(trainer.base)
    start = {n: p.detach().clone() for n, p in _tiny_net(2).named_parameters()}
    x, y = _tiny_data(12)
    new = trainer.train(start, mask, x, y, steps=5, lr=0.1, seed=0)
    for name, value in new.items():
        assert not bool(value[~mask.keep[name]].any())
        assert not torch.equal(value[mask.keep[name]], start[name][mask.keep[name]])


def test_aggregation_averages_each_coordinate_over_the_clients_keeping_it():
    from pruneleak.sims.fedltp.training import _aggregate

    g = {"w": torch.zeros(2, 2)}
    masks = [
        Mask({"w": torch.tensor([[True, True], [False, False]])}),
        Mask({"w": torch.tensor([[True, False], [True, False]])}),
    ]
    deltas = [
        {"w": torch.tensor([[1.0, 2.0], [0.0, 0.0]])},
        {"w": torch.tensor([[3.0, 0.0], [5.0, 0.0]])},
    ]
    torch.testing.assert_close(
        _aggregate(g, deltas, masks)["w"], torch.tensor([[2.0, 2.0], [5.0, 0.0]])
    )


def test_round_step_equals_a_slow_per_coordinate_aggregation_of_the_clients_weights(
    digits, monkeypatch
):
    """One fed-iterative round (clients under different nested masks): the new global
    weight of every coordinate is the old one plus the mean, over the clients whose mask
    keeps it, of (trained - masked start), written as a plain loop over the coordinates
    from the weights each client's training returned; the best model follows eq. 19, the
    bytes count the masks, and the old state is left as it was."""
    config = tiny_config(pruning="iterative", further_prune=0.3, client_rate=0.5)  # K = 3
    data = split_for_config(digits, config)
    torch.manual_seed(0)
    w0 = {n: p.detach().clone() for n, p in logreg_factory().named_parameters()}
    state = ServerState.initial(w0, magnitude_mask(w0, 0.5), ticket_index=0, ticket_scores=[7])
    inputs = RoundInputs.build(
        config, data, logreg_factory(), run="r", variant="fedltp", upload_keep=None, device="cpu"
    )
    trained = []  # (mask, weights) of each client, as its local training returned them
    train = inputs.trainer.train

    def spy_train(params, mask, *args, **kwargs):
        trained.append((mask, train(params, mask, *args, **kwargs)))
        return trained[-1][1]

    monkeypatch.setattr(inputs.trainer, "train", spy_train)
    new, record = run_round(inputs, state, 4, epsilon=0.5, bytes_before=100)

    assert len(trained) == 3 and not trained[0][0].equals(trained[1][0])  # masks differ
    for name, old in w0.items():
        assert torch.equal(state.global_params[name], old)  # the old state is unchanged
        want = old.clone()
        for index in np.ndindex(*old.shape):
            steps = [
                float(weights[name][index]) - float(old[index])
                for mask, weights in trained
                if mask.keep[name][index]
            ]
            if steps:
                want[index] = float(old[index]) + sum(steps) / len(steps)
        torch.testing.assert_close(new.global_params[name], want, rtol=1e-5, atol=1e-6)
        assert torch.equal(new.best_params[name], new.global_params[name])  # beats -inf
    assert new.best_round == record["best_round"] == 4 and state.best_round == 0
    assert new.best_score == record["validation_score"]
    kept = sum(int(m.keep[n].sum()) for m, _ in trained for n in m.keep)
    assert record["bytes_down"] == record["bytes_up"] == 4 * kept
    assert record["bytes_cumulative"] == 100 + 8 * kept
    assert record["epsilon"] == 0.5 and record["round"] == 4
    # a round scoring below the best so far moves the global model only
    held = ServerState(**{**vars(state), "best_score": math.inf})
    after, _ = run_round(inputs, held, 4, epsilon=0.5, bytes_before=100)
    assert after.best_round == 0 and after.best_score == math.inf
    for name, value in new.global_params.items():
        assert torch.equal(after.global_params[name], value)  # same seeds, same round
        assert torch.equal(after.best_params[name], state.best_params[name])


# ---- accounting against Opacus and dp_accounting ----------------------------------------


def _laplace_rdp(orders, b):
    """Mironov 2017 (arXiv 1702.07476) Prop. 6, sensitivity 1, written out directly."""
    a = np.asarray(orders)
    return np.log(
        a / (2 * a - 1) * np.exp((a - 1) / b) + (a - 1) / (2 * a - 1) * np.exp(-a / b)
    ) / (a - 1)


def _opacus_epsilon(q, sigma, steps, lam, rounds, delta, orders):
    rdp = np.asarray(
        opacus_rdp.compute_rdp(q=q, noise_multiplier=sigma, steps=steps, orders=orders)
    )
    rdp = rdp + rounds * _laplace_rdp(orders, lam)
    eps, _ = opacus_rdp.get_privacy_spent(orders=orders, rdp=rdp, delta=delta)
    return float(eps)


@pytest.mark.filterwarnings("ignore:Optimal order is the smallest alpha")
@pytest.mark.parametrize("clipping", ["per_example", "batch"])
@pytest.mark.parametrize("rounds", [1, 7])
def test_schedule_epsilon_equals_opacus_rdp_accountant(clipping, rounds):
    config = FedLTPConfig(clipping=clipping, lambda_val=20.0, local_steps=300)
    q = 10 / 240
    sigma = 1.4 if clipping == "per_example" else 0.7  # batch clipping: sensitivity 2C
    got = epsilon_after(config, rounds, sampling_rate=q, orders=INTEGER_ORDERS)
    want = _opacus_epsilon(q, sigma, rounds * 300, 20.0, rounds, 1e-3, INTEGER_ORDERS)
    assert got == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("rounds", [1, 5])
def test_schedule_epsilon_agrees_with_dp_accounting(rounds):
    config = FedLTPConfig(lambda_val=15.0, local_steps=50)
    q = 0.05
    got = epsilon_after(config, rounds, sampling_rate=q, orders=INTEGER_ORDERS)
    accountant = dp_rdp.RdpAccountant(orders=INTEGER_ORDERS)
    accountant.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(1.4)), count=rounds * 50)
    accountant.compose(dpa.LaplaceDpEvent(15.0), count=rounds)
    assert got == pytest.approx(accountant.get_epsilon(1e-3), rel=1e-6)


# ---- the stop rule ------------------------------------------------------------------------


def test_training_stops_at_the_round_that_would_exceed_the_budget(digits):
    base = tiny_config(rounds=10, noise_multiplier=3.0)
    data = split_fedltp_data(digits, num_clients=6, seed=5)
    q = 5 / min(len(c) for c in data.clients_train)
    eps = [  # independent: Opacus' accountant on the same grid, plus the Laplace RDP
        _opacus_epsilon(q, 3.0, t * 3, 5.0, t, 1e-3, list(DEFAULT_ORDERS)) for t in range(1, 11)
    ]
    budget = (eps[2] + eps[3]) / 2  # rounds 1-3 fit, round 4 would exceed it
    first_over = next(t for t in range(1, 11) if eps[t - 1] > budget)
    assert first_over == 4
    config = FedLTPConfig(**{**base.as_dict(), "epsilon": budget})
    result = run_fedltp(config, data, logreg_factory, device="cpu")
    assert result.stopped_by_budget
    assert result.rounds_run == first_over - 1
    assert [r["round"] for r in result.records] == [1, 2, 3]
    assert result.epsilon <= budget
    np.testing.assert_allclose([r["epsilon"] for r in result.records], eps[:3], rtol=1e-6)


def test_no_noise_means_no_round_is_run(digits):
    config = tiny_config(noise_multiplier=0.0)  # infinite epsilon
    result = run_fedltp(config, split_for_config(digits, config), logreg_factory, device="cpu")
    assert result.stopped_by_budget and result.rounds_run == 0 and result.records == []
    assert result.best_round == 0  # the ticket itself is all there is


def test_budget_stop_record_counts_the_rounds_that_ran(digits, tmp_path):
    """Catches the budget-stop record saying 4 rounds when 3 ran (issue 32): the stop
    record's rounds_run, the result's and the stored round records agree, fresh and resumed."""
    base = tiny_config(rounds=10, noise_multiplier=3.0)
    data = split_for_config(digits, base)
    rate = min(1.0, base.batch_size / min(len(c) for c in data.clients_train))
    eps = [epsilon_after(base, t, sampling_rate=rate) for t in (3, 4)]
    config = FedLTPConfig(**{**base.as_dict(), "epsilon": (eps[0] + eps[1]) / 2})
    assert affordable_rounds(config, sampling_rate=rate) == 3  # rounds 1-3 fit, 4 would not

    def stop_and_rounds(path):
        records = list(ResultStore(path).records())
        stops = [r for r in records if r["key"].endswith("/stop")]
        assert len(stops) == 1  # written once, not again on a rerun
        return stops[0], sorted(r["round"] for r in records if "round" in r)

    def kill_after_round_2(record):
        if record["round"] == 2:
            raise _Killed

    with pytest.raises(_Killed):  # killed, then resumed: the stop is written by the rerun
        run_fedltp(
            config,
            data,
            logreg_factory,
            store=ResultStore(tmp_path / "a.jsonl"),
            device="cpu",
            on_round=kill_after_round_2,
        )
    for _ in range(2):  # the resumed run, then a rerun of the finished run
        result = run_fedltp(
            config, data, logreg_factory, store=ResultStore(tmp_path / "a.jsonl"), device="cpu"
        )
        stop, rounds = stop_and_rounds(tmp_path / "a.jsonl")
        assert rounds == [1, 2, 3]
        assert stop["reason"] == "budget" and result.stopped_by_budget
        assert stop["rounds_run"] == result.rounds_run == len(rounds) == 3
    # uninterrupted, in a fresh store
    result = run_fedltp(
        config, data, logreg_factory, store=ResultStore(tmp_path / "b.jsonl"), device="cpu"
    )
    stop, rounds = stop_and_rounds(tmp_path / "b.jsonl")
    assert rounds == [1, 2, 3] and result.stopped_by_budget
    assert stop["rounds_run"] == result.rounds_run == len(rounds) == 3


# ---- Laplace validation ---------------------------------------------------------------------


def test_validation_noise_has_the_stated_laplace_scale():
    lam, n = 2.5, 400_000
    noise = noisy_scores(np.zeros(n), lambda_val=lam, rng=np.random.default_rng(0))
    # |Laplace(b)| is exponential with mean b and std b: the mean absolute deviation is
    # lam within 5 standard errors (lam / sqrt(n) = 0.004) with overwhelming probability
    assert abs(np.mean(np.abs(noise)) - lam) < 5 * lam / math.sqrt(n)
    assert abs(np.median(noise)) < 0.02


# ---- Algorithm 1 ----------------------------------------------------------------------------


@pytest.mark.parametrize("iterations", [1, 2])
def test_ticket_has_the_requested_sparsity_and_rewinds_to_w0(digits, iterations):
    data = split_fedltp_data(digits, num_clients=4, seed=0)
    factory = partial(build_model, "conv1", image_shape=(1, 8, 8), num_classes=10)
    pr = 0.3
    options = {"prune_degree": pr, "iterations": iterations, "steps": 20, "lr": 1e-2}
    options |= {"batch_size": 32, "seed": 3}
    ticket = find_ticket(factory, data.public, data.public_val, **options)
    for name in prunable_names(ticket.init):
        n = ticket.init[name].numel()
        kept = n
        for _ in range(iterations):
            kept -= round(pr * kept)
        assert int(ticket.mask.keep[name].sum()) == kept
    for name, w0 in ticket.init.items():
        keep = ticket.mask.keep[name]
        assert torch.equal(ticket.params[name][keep], w0[keep])  # bit for bit
        assert not bool(ticket.params[name][~keep].any())
        assert not torch.equal(ticket.trained[name], w0)  # w_j was trained
    assert 0 <= ticket.score <= len(data.public_val)
    # the seed fixes w0: a second call gives the same ticket
    again = find_ticket(factory, data.public, data.public_val, **options)
    assert again.mask.equals(ticket.mask)


def test_second_pruning_iteration_trains_from_w0_not_from_the_first_iterations_weights(digits):
    """Catches Fed-LTP's ticket search without rewinding to w0 (issue 32): iteration 2
    must train ``mask_1 ⊙ w0``, not continue from iteration 1's trained weights."""
    data = split_fedltp_data(digits, num_clients=4, seed=0)
    options = {"prune_degree": 0.3, "steps": 15, "lr": 1e-2, "batch_size": 32, "seed": 3}
    first = find_ticket(logreg_factory, data.public, data.public_val, iterations=1, **options)
    ticket = find_ticket(logreg_factory, data.public, data.public_val, iterations=2, **options)
    for name, w0 in first.init.items():
        assert torch.equal(ticket.init[name], w0)  # same seed, same w0 and first iteration

    def second_iteration(start):  # train_masked as find_ticket's iteration 1 calls it
        module = logreg_factory()
        load_params(module, first.mask.apply(start))
        train_masked(
            module,
            first.mask,
            data.public,
            seed=options["seed"] * 1000 + 1,  # find_ticket: seed * 1000 + iteration
            device="cpu",
            **{k: options[k] for k in ("steps", "lr", "batch_size")},
        )
        return {n: p.detach().clone() for n, p in module.named_parameters()}

    rewound = second_iteration(first.init)
    continued = second_iteration(first.trained)  # the bug: no rewind to w0
    for name, value in rewound.items():
        assert not torch.equal(continued[name], value)  # the two differ: the test can tell
        assert torch.equal(ticket.trained[name], value), name  # bit for bit
    assert ticket.mask.equals(prune_remaining(rewound, first.mask, options["prune_degree"]))


def test_selection_probabilities_match_eq_10():
    v = np.array([3.0, 1.0, 0.0, 2.0])
    np.testing.assert_allclose(selection_probabilities(v), np.exp(v) / np.exp(v).sum(), rtol=1e-12)
    np.testing.assert_allclose(
        selection_probabilities(v, temperature=2.0),
        np.exp(v / 2) / np.exp(v / 2).sum(),
        rtol=1e-12,
    )
    big = selection_probabilities([700.0, 699.0])  # exp(700) overflows in the naive form
    np.testing.assert_allclose(big, [1 / (1 + math.exp(-1)), 1 / (1 + math.e)], rtol=1e-12)


def test_select_ticket_follows_eq_10_frequencies():
    tickets = [
        Ticket(init={}, mask=None, trained={}, score=s)  # only the score is read
        for s in (1, 2, 0)
    ]
    picks = np.bincount([select_ticket(tickets, seed=s) for s in range(3000)], minlength=3)
    p = selection_probabilities([1, 2, 0])
    # binomial standard error at 3000 draws is at most 0.0092; 4.5 of them
    np.testing.assert_allclose(picks / 3000, p, atol=0.042)


# ---- fed-iterative pruning (eq. 12-16) ------------------------------------------------------


def test_iterative_masks_are_nested_with_eq_15_densities():
    torch.manual_seed(0)
    params = {"w": torch.randn(100, 100), "b": torch.randn(100)}
    base = Mask({"w": torch.rand(100, 100) > 0.4, "b": torch.ones(100, dtype=torch.bool)})
    masks = iterative_client_masks(params, base, further_prune=0.1, count=5)
    kept = int(base.keep["w"].sum())
    for i, m in enumerate(masks, start=1):
        assert bool((m.keep["w"] <= (masks[i - 2] if i > 1 else base).keep["w"]).all())
        kept -= round(0.1 * kept)
        assert int(m.keep["w"].sum()) == kept
    densities = [m.density() for m in masks]
    rates = retention_rates(1 - base.density(), 0.1, 5)
    np.testing.assert_allclose(densities, rates, atol=5e-4)  # per-step rounding only
    np.testing.assert_allclose(rates, 0.9 ** np.arange(1, 6) * base.density())


# ---- end to end and resume ------------------------------------------------------------------


class _Killed(RuntimeError):
    pass


@pytest.mark.parametrize(
    ("pruning", "partition"), [("one_shot", "iid"), ("iterative", "dirichlet")]
)
def test_end_to_end_run_records_rounds_and_resumes_after_a_kill(
    digits, tmp_path, pruning, partition
):
    config = tiny_config(pruning=pruning, partition=partition)
    data = split_for_config(digits, config)
    whole = run_fedltp(
        config, data, logreg_factory, store=ResultStore(tmp_path / "a.jsonl"), device="cpu"
    )
    assert [r["round"] for r in whole.records] == [1, 2, 3]
    for r in whole.records:
        assert 0 <= r["test_accuracy"] <= 1 and r["epsilon"] > 0
        assert r["bytes_up"] > 0 and r["bytes_cumulative"] > 0
    assert whole.records[0]["epsilon"] < whole.records[-1]["epsilon"]

    def kill_after_round_2(record):
        if record["round"] == 2:
            raise _Killed

    store = ResultStore(tmp_path / "b.jsonl")
    with pytest.raises(_Killed):
        run_fedltp(
            config, data, logreg_factory, store=store, device="cpu", on_round=kill_after_round_2
        )
    assert sorted(r["round"] for r in store.records() if "round" in r) == [1, 2]
    resumed = run_fedltp(
        config, data, logreg_factory, store=ResultStore(tmp_path / "b.jsonl"), device="cpu"
    )
    rounds = [r["round"] for r in ResultStore(tmp_path / "b.jsonl").records() if "round" in r]
    assert rounds == [1, 2, 3]  # nothing recorded twice
    assert [r for r in resumed.records] == [r for r in whole.records]
    for name, value in whole.final_params.items():
        assert torch.equal(resumed.final_params[name], value)
        assert torch.equal(resumed.best_params[name], whole.best_params[name])
    # a finished run is not run again
    again = run_fedltp(
        config, data, logreg_factory, store=ResultStore(tmp_path / "b.jsonl"), device="cpu"
    )
    assert again.records == whole.records


def test_a_kill_between_checkpoint_and_record_loses_only_that_round(digits, tmp_path, monkeypatch):
    config = tiny_config()
    data = split_fedltp_data(digits, num_clients=6, seed=5)
    whole = run_fedltp(config, data, logreg_factory, device="cpu")  # no store: nothing written
    append = ResultStore.append

    def killed_at_round_2(self, record):
        if record.get("round") == 2:
            raise _Killed
        return append(self, record)

    monkeypatch.setattr(ResultStore, "append", killed_at_round_2)
    with pytest.raises(_Killed):
        run_fedltp(
            config, data, logreg_factory, store=ResultStore(tmp_path / "c.jsonl"), device="cpu"
        )
    monkeypatch.setattr(ResultStore, "append", append)
    resumed = run_fedltp(
        config, data, logreg_factory, store=ResultStore(tmp_path / "c.jsonl"), device="cpu"
    )
    assert resumed.records == whole.records
    for name, value in whole.final_params.items():
        assert torch.equal(resumed.final_params[name], value)


def test_split_is_disjoint_and_covers_the_data(digits):
    data = split_fedltp_data(
        digits, num_clients=5, partition="dirichlet", dirichlet_alpha=0.3, seed=1
    )
    parts = [data.public, data.public_val, data.test, *data.clients_train, *data.clients_val]
    assert sum(len(p) for p in parts) == len(digits)
    # with labels appended, the parts together are the data set as a multiset of rows
    rows = torch.cat(
        [torch.cat([p.images.reshape(len(p), -1), p.labels[:, None].float()], 1) for p in parts]
    )
    whole = torch.cat([digits.images.reshape(len(digits), -1), digits.labels[:, None].float()], 1)
    got, got_counts = torch.unique(rows, dim=0, return_counts=True)
    want, want_counts = torch.unique(whole, dim=0, return_counts=True)
    assert torch.equal(got, want) and torch.equal(got_counts, want_counts)
    sizes = [np.bincount(c.labels.numpy(), minlength=10) for c in data.clients_train]
    assert min((s > 0).sum() for s in sizes) < 10  # alpha = 0.3: some client lacks a class
    assert abs(len(data.public) + len(data.public_val) - len(digits) / 2) < 10


# ---- bad arguments ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("num_clients", 0),
        ("client_rate", 0.0),
        ("client_rate", 1.5),
        ("local_steps", 0),
        ("max_grad_norm", 0.0),
        ("noise_multiplier", -1.0),
        ("batch_size", 0),
        ("clipping", "layer"),
        ("lambda_val", 0.0),
        ("epsilon", -1.0),
        ("delta", 1.0),
        ("prune_degree", 1.0),
        ("further_prune", -0.1),
        ("pruning", "random"),
        ("partition", "shards"),
        ("temperature", 0.0),
        ("momentum", 1.0),
        ("num_tickets", 0),
        ("rounds", 0),
    ],
)
def test_bad_config_values_raise_value_error_naming_the_field(field, value):
    with pytest.raises(ValueError, match=f"'{field}'"):
        FedLTPConfig(**{field: value})


def test_bad_function_arguments_raise_value_error_naming_the_parameter(digits):
    with pytest.raises(ValueError, match="'scores'"):
        selection_probabilities([])
    with pytest.raises(ValueError, match="'lambda_val'"):
        noisy_scores([1.0], lambda_val=0.0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="'num_clients'"):
        split_fedltp_data(digits, num_clients=2000)
    with pytest.raises(ValueError, match="'rounds'"):
        epsilon_after(FedLTPConfig(), 0, sampling_rate=0.1)
    with pytest.raises(ValueError, match="'clipping'"):
        DPLocalTrainer(
            nn.Linear(2, 2),
            clipping="none",
            max_grad_norm=1.0,
            noise_multiplier=1.0,
            batch_size=2,
            momentum=0.0,
            device="cpu",
        )
    data = split_fedltp_data(digits, num_clients=4, seed=0)
    with pytest.raises(ValueError, match="'data'"):
        run_fedltp(FedLTPConfig(), data, logreg_factory, device="cpu")


def test_load_params_round_trip():
    net = _tiny_net(0)
    other = _tiny_net(1)
    load_params(other, dict(net.named_parameters()))
    for (_, a), (_, b) in zip(net.named_parameters(), other.named_parameters(), strict=True):
        assert torch.equal(a, b)
