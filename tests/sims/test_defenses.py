"""PriPrune's fixed defense masks and Pseudo-Pruning (sims.defenses) against hand-computed
cases and a slow loop, and the FL loop with a defense."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pruneleak.sims.data.datasets import load_digits_dataset
from pruneleak.sims.data.partition import partition_iid
from pruneleak.sims.defenses import FixedDefense, defense_mask, withheld_fraction
from pruneleak.sims.fl.client import local_sgd
from pruneleak.sims.fl.server import FedConfig, run_federated
from pruneleak.sims.models import conv_net
from pruneleak.sims.pruning.mask import Mask
from pruneleak.sims.pruning.schemes import RandomPruning, build_scheme


def _base():
    """A 2x4 weight with one pruned entry, and a bias."""
    keep = torch.ones(2, 4, dtype=torch.bool)
    keep[0, 3] = False
    return Mask({"w": keep, "b": torch.ones(2, dtype=torch.bool)})


def test_largest_withholds_exactly_the_top_k_kept_gradients():
    # Kept |update| per row: row 0 = 5, -1, 3 (entry 3 pruned, though largest); row 1 =
    # 2, -7, 0.5, 4. Rate 3/7 of the 7 kept weights: round(3/7 * 7) = 3 -> 7, 5, 4.
    update = {
        "w": torch.tensor([[5.0, -1.0, 3.0, 100.0], [2.0, -7.0, 0.5, 4.0]]),
        "b": torch.tensor([50.0, 60.0]),
    }
    shared = defense_mask("largest", _base(), update, rate=3 / 7)
    expected = torch.tensor([[False, True, True, False], [True, False, True, False]])
    assert torch.equal(shared.keep["w"], expected)
    assert shared.keep["b"].all()  # biases are always shared
    assert withheld_fraction(_base(), shared) == pytest.approx(3 / 7)


@pytest.mark.parametrize(("strategy", "rate"), [("random", 0.3), ("mix", 0.3), ("mix", 0.6)])
def test_random_and_mix_withhold_round_rate_k_of_the_kept_weights(strategy, rate):
    generator = torch.Generator().manual_seed(0)
    torch.manual_seed(1)
    shape = (64, 50)
    base = Mask({"w": torch.rand(shape) > 0.3})
    update = {"w": torch.randn(shape)}
    shared = defense_mask(strategy, base, update, rate=rate, generator=generator)
    kept = int(base.keep["w"].sum())
    withheld = base.keep["w"] & ~shared.keep["w"]
    half = round(rate / 2 * kept)
    assert int(withheld.sum()) == half + round(rate / 2 * kept) if strategy == "mix" else True
    assert int(withheld.sum()) == (2 * half if strategy == "mix" else round(rate * kept))
    assert not (shared.keep["w"] & ~base.keep["w"]).any()  # never shares a pruned weight
    if strategy == "mix":  # the largest half of the withheld ones are the top-k by |update|
        magnitude = torch.where(base.keep["w"], update["w"].abs(), -1.0).reshape(-1)
        top = magnitude.topk(half).indices
        assert withheld.reshape(-1)[top].all()


def test_random_defense_is_uniform_over_the_kept_weights():
    # Each of the 40 kept weights is withheld with probability 12/40 = 0.3; over 2000
    # draws the counts are Binomial(2000, 0.3): mean 600, sd 20.5, and every count
    # within 5 sd of the mean (a union bound puts the chance of a false alarm < 1e-4).
    base = Mask({"w": torch.ones(5, 8, dtype=torch.bool)})
    counts = torch.zeros(5, 8)
    generator = torch.Generator().manual_seed(0)
    for _ in range(2000):
        shared = defense_mask(
            "random", base, {"w": torch.zeros(5, 8)}, rate=0.3, generator=generator
        )
        counts += (~shared.keep["w"]).float()
    assert (counts - 600).abs().max() < 5 * 20.5


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"strategy": "biggest"}, "'strategy' parameter of defense_mask"),
        ({"rate": 1.5}, "'rate' parameter of defense_mask"),
        ({"strategy": "mix", "generator": None}, "'generator' parameter of defense_mask"),
    ],
)
def test_defense_mask_rejects_bad_input(kwargs, message):
    args = {"strategy": "random", "rate": 0.3, "generator": torch.Generator()} | kwargs
    strategy = args.pop("strategy")
    with pytest.raises(ValueError, match=message):
        defense_mask(strategy, _base(), {"w": torch.zeros(2, 4), "b": torch.zeros(2)}, **args)


def test_pseudo_pruning_restores_the_withheld_weights_exactly():
    """Round t withholds w_tilde; in the client's next round its start is w^{t+1} on the
    shared weights and w_tilde, bit for bit, on the withheld ones; real pruning starts
    from w^{t+1}."""
    base = _base()
    start = {"w": torch.zeros(2, 4), "b": torch.zeros(2)}
    trained = {"w": torch.arange(8.0).reshape(2, 4) / 7, "b": torch.tensor([0.5, -0.5])}
    for pseudo in (True, False):
        defense = FixedDefense("largest", 3 / 7, pseudo=pseudo)
        sent, uploaded = defense.upload(1, 4, start, trained, base)
        shared = defense_mask(
            "largest", base, {n: start[n] - trained[n] for n in start}, rate=3 / 7
        )
        assert torch.equal(sent["w"], trained["w"] * shared.keep["w"])
        assert uploaded.equals(shared)
        new_global = {"w": torch.full((2, 4), -3.0), "b": torch.tensor([9.0, 9.0])}
        again = defense.start(4, new_global)
        withheld = base.keep["w"] & ~shared.keep["w"]
        expected = (
            torch.where(withheld, trained["w"], new_global["w"]) if pseudo else new_global["w"]
        )
        assert torch.equal(again["w"], expected)
        assert torch.equal(again["b"], new_global["b"])
        assert torch.equal(defense.start(5, new_global)["w"], new_global["w"])  # other client
    assert defense.records == [{"round": 1, "client": 4, "rate": pytest.approx(3 / 7)}]


@pytest.fixture(scope="module")
def federation():
    train, test = load_digits_dataset().train_test_split(0.2, seed=0)
    return train, test, partition_iid(len(train), 6, seed=0)


def _model():
    torch.manual_seed(0)
    return conv_net(1, in_channels=1, image_size=8, num_classes=10, width=64, hidden=64)


class _Recorder:
    def __init__(self):
        self.calls = []

    def __call__(self, t, client_id, global_params, sent_params, mask, batch):
        self.calls.append((t, client_id, global_params, sent_params, mask, batch))


def test_fl_loop_uploads_the_shared_weights_trained_from_the_defense_start(federation):
    """Every upload equals eq. (1) from the defense's start (Pseudo: the withheld weights
    of the client's previous round loaded back) followed by the defense mask, recomputed
    here step by step; the server aggregates them under the base mask."""
    train, test, clients = federation
    defense = FixedDefense("largest", 0.3, pseudo=True)
    recorder = _Recorder()
    config = FedConfig(rounds=4, clients_per_round=3, batch_size=10, lr=0.2, seed=1)
    run_federated(
        _model(),
        RandomPruning(0.3, seed=0),
        train,
        clients,
        test,
        config,
        device="cpu",
        on_target_update=recorder,
        defense=defense,
    )
    model = _model()
    last: dict[int, tuple] = {}
    for _, client, broadcast, sent, mask, (images, labels) in recorder.calls:
        start = dict(broadcast)
        if client in last:
            withheld, trained = last[client]
            start = {n: torch.where(withheld[n], trained[n], broadcast[n]) for n in broadcast}
        trained = local_sgd(model, start, mask, [(images, labels)], lr=0.2)
        update = {n: start[n] - trained[n] for n in start}
        shared = defense_mask("largest", mask, update, rate=0.3)
        torch.testing.assert_close(sent, shared.apply(trained), rtol=1e-5, atol=1e-6)
        last[client] = ({n: mask.keep[n] & ~shared.keep[n] for n in mask.keep}, trained)
    rates = [r["rate"] for r in defense.records]
    assert len(rates) == 12 and np.allclose(rates, 0.3, atol=2e-3)


def test_server_averages_each_weight_over_the_clients_that_sent_it(federation):
    """One round, three clients under Largest at 0.5: each coordinate of the new global
    model is the size-weighted mean of the uploads that hold it (recomputed here from the
    recorded uploads, a coordinate held where the upload is non-zero on the base mask);
    one that every client withheld keeps the broadcast value."""
    train, test, clients = federation
    recorder = _Recorder()
    history = run_federated(
        _model(),
        RandomPruning(0.3, seed=0),
        train,
        clients,
        test,
        FedConfig(rounds=1, clients_per_round=3, batch_size=10, lr=0.2, seed=2),
        device="cpu",
        on_target_update=recorder,
        defense=FixedDefense("largest", 0.5, pseudo=True),
    )
    sizes = {i: len(clients[i]) for i in range(len(clients))}
    broadcast = recorder.calls[0][2]
    withheld_by_all = 0
    for name, value in history.params.items():
        held = [
            (c, sent[name], (sent[name] != 0) & mask.keep[name])
            for _, c, _, sent, mask, _ in recorder.calls
        ]
        weight = sum(sizes[c] * h.double() for c, _, h in held)
        total = sum(sizes[c] * h.double() * v.double() for c, v, h in held)
        kept = recorder.calls[0][4].keep[name]
        expected = torch.where(weight > 0, total / weight.clamp(min=1), broadcast[name].double())
        expected = torch.where(kept, expected, 0.0)
        withheld_by_all += int(((weight == 0) & kept).sum())
        torch.testing.assert_close(value.double(), expected, rtol=1e-5, atol=1e-7)
    assert withheld_by_all > 0  # the case is exercised


def test_fl_loop_refuses_a_defense_of_the_wrong_type(federation):
    train, test, clients = federation
    with pytest.raises(ValueError, match="'defense' parameter of run_federated"):
        run_federated(
            _model(),
            build_scheme("snip", 0.3),
            train,
            clients,
            test,
            FedConfig(rounds=1, clients_per_round=2),
            device="cpu",
            defense="largest",
        )
