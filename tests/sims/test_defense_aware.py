"""The defense-aware SGI (sims.attacks.defense_aware): its masks against a slow loop and
the defense's own state in an FL run, and constructed cases where the answer is known
(a linear model, whose gradient on clean coordinates determines the image) in which it
recovers the image and PriPrune's defense-unaware SGI does not."""

from __future__ import annotations

from itertools import pairwise

import pytest
import torch
from torch import nn

from pruneleak.estimators.image import psnr
from pruneleak.sims.attacks import AttackConfig, sgi_attack_batched
from pruneleak.sims.attacks.defense_aware import (
    DefenseAwareObserver,
    attack_mask,
    defense_aware_attack,
)
from pruneleak.sims.data.datasets import load_digits_dataset
from pruneleak.sims.data.partition import partition_iid
from pruneleak.sims.defenses import FixedDefense
from pruneleak.sims.fl.client import local_sgd
from pruneleak.sims.fl.server import FedConfig, run_federated
from pruneleak.sims.models import conv_net
from pruneleak.sims.pruning.mask import Mask
from pruneleak.sims.pruning.schemes import RandomPruning

LR = 0.25
# Known labels, float64, 4 restarts: the inversion of a linear layer is non-convex in
# the image (softmax), and one of the first seeds tried stalls in a local minimum.
CONFIG = AttackConfig(
    optimizer="lbfgs_backtracking", iterations=100, restarts=4, label_mode="known", device="cpu"
)


def _linear():
    torch.manual_seed(0)
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 10)).double()


def _two_rounds(images, labels, *, pseudo=True):
    """One client, no base pruning, Largest at 0.3: two FedSGD rounds on one image each,
    as :func:`sims.fl.server.run_federated` runs them (with one client the aggregate is
    its upload); returns the model and the aware observer that saw both uploads."""
    model = _linear()
    w = {n: p.detach().clone() for n, p in model.named_parameters()}
    base = Mask.ones(w)
    defense = FixedDefense("largest", 0.3, pseudo=pseudo)
    observer = DefenseAwareObserver(pseudo=pseudo)
    for t, (x, y) in enumerate(zip(images, labels, strict=True), 1):
        start = defense.start(0, w)
        trained = local_sgd(model, start, base, [(x, y)], lr=LR)
        sent, _ = defense.upload(t, 0, start, trained, base)
        observer(t, 0, w, sent, base, (x, y))
        w = sent
    return model, observer


def _psnrs(model, records, attack, **options):
    kwargs = {
        "lr": LR,
        "batch_shape": (1, 1, 8, 8),
        "num_classes": 10,
        "labels": [r["batch"][1] for r in records],
        "config": CONFIG,
        "seeds": list(range(len(records))),
    }
    if attack == "aware":
        results = defense_aware_attack(model, records, **kwargs, **options)
    else:
        sent = [r["sent"] for r in records]
        results = sgi_attack_batched(model, [r["w"] for r in records], sent, **kwargs)
    return [float(psnr(r["batch"][0], res.images)) for r, res in zip(records, results, strict=True)]


def _images(left: bool, right: bool, generator):
    x = torch.zeros(1, 1, 8, 8, dtype=torch.float64)
    columns = slice(0 if left else 4, 8 if right else 4)
    x[..., columns] = 0.5 + 0.5 * torch.rand(x[..., columns].shape, generator=generator).double()
    return x


LABELS = [torch.tensor([3]), torch.tensor([7])]


def test_aware_attacker_recovers_what_the_masks_make_clean_and_the_unaware_one_cannot():
    """Round 1 shows the left half of the image, round 2 the right half. Largest withholds
    only coordinates of the pixel columns the image covers (elsewhere the gradient is
    0), so in round 2 the stale coordinates (Pseudo: the client started from w_tilde)
    sit in columns where the image is 0: the client's forward pass is the broadcast's,
    and the clean coordinates determine the image exactly. The aware attacker recovers
    both images (measured: 156 and 147 dB, float64 round-off); PriPrune's SGI reads the
    stale coordinates as a gradient and drops the withheld weights from the forward
    pass (measured: 28 and 15 dB)."""
    generator = torch.Generator().manual_seed(1)
    images = [_images(True, False, generator), _images(False, True, generator)]
    model, observer = _two_rounds(images, LABELS)
    stale = observer.records[1]["stale"]["1.weight"]
    assert stale.any() and not stale.reshape(10, 8, 8)[..., 4:].any()  # left columns only
    aware = _psnrs(model, observer.records, "aware")
    unaware = _psnrs(model, observer.records, "unaware")
    assert min(aware) > 100, aware
    assert max(unaware) < 40, unaware


def test_replaying_the_previous_round_gives_back_the_clients_forward_pass():
    """Both images cover every pixel: in round 2 the client's forward pass runs its
    private w_tilde at the stale coordinates. Replaying round 1 on the attacker's own
    (exact) reconstruction gives w_tilde back and the image (measured: 88 dB); with the
    broadcast there instead (replay=False) the inversion fails (2.7 dB), and so does
    PriPrune's SGI (21 and 5.7 dB)."""
    generator = torch.Generator().manual_seed(1)
    images = [_images(True, True, generator), _images(True, True, generator)]
    model, observer = _two_rounds(images, LABELS)
    replayed = _psnrs(model, observer.records, "aware")
    broadcast = _psnrs(model, observer.records, "aware", replay=False)
    unaware = _psnrs(model, observer.records, "unaware")
    assert min(replayed) > 60, replayed
    assert broadcast[1] < 20, broadcast
    assert all(a >= u for a, u in zip(replayed, unaware, strict=True)), (replayed, unaware)
    assert max(unaware) < 40, unaware


# --------------------------------------------------------------------------- the masks


@pytest.fixture(scope="module")
def federation():
    train, test = load_digits_dataset().train_test_split(0.2, seed=0)
    return train, test, partition_iid(len(train), 6, seed=0)


def _slow_masks(calls, pseudo):
    """Per upload, the aware mask's flags computed coordinate by coordinate: kept by the
    base mask, sent non-zero and (Pseudo) not withheld at the client's previous upload."""
    last: dict[int, dict[str, list[bool]]] = {}
    out = []
    for client, sent, base in calls:
        masks = {}
        withheld = {}
        for name, value in sent.items():
            if value.ndim < 2:
                masks[name] = [True] * value.numel()
                continue
            flat, keep = value.reshape(-1).tolist(), base.keep[name].reshape(-1).tolist()
            stale = last.get(client, {}).get(name, [False] * len(flat))
            withheld[name] = [k and v == 0 for k, v in zip(keep, flat, strict=True)]
            masks[name] = [
                k and v != 0 and not (pseudo and s)
                for k, v, s in zip(keep, flat, stale, strict=True)
            ]
        last[client] = withheld
        out.append(masks)
    return out


@pytest.mark.parametrize(("strategy", "pseudo"), [("largest", True), ("mix", False)])
def test_masks_are_base_minus_zeros_minus_last_withheld(federation, strategy, pseudo):
    """In an FL run (6 clients, 3 per round, 4 rounds, so clients skip rounds), every
    record's mask equals the slow loop, its point is the base-masked broadcast, and the
    observer's last withheld flags are the defense's own (Defense._withheld) up to shared
    weights that are exactly 0."""
    train, test, clients = federation
    torch.manual_seed(0)
    model = conv_net(1, in_channels=1, image_size=8, num_classes=10, width=4, hidden=8)
    defense = FixedDefense(strategy, 0.3, pseudo=pseudo, seed=2)
    observer = DefenseAwareObserver(pseudo=pseudo)
    config = FedConfig(rounds=4, clients_per_round=3, batch_size=4, lr=0.2, seed=1)
    scheme = RandomPruning(0.3, seed=0)
    run_federated(
        model, scheme, train, clients, test, config,
        device="cpu", on_target_update=observer, defense=defense,
    )  # fmt: skip
    records = observer.records
    calls = [(r["client"], r["sent"], r["mask"]) for r in records]
    rounds_of = {c: [r["round"] for r in records if r["client"] == c] for c, _, _ in calls}
    assert len(records) == 12  # 3 clients x 4 rounds, every one observed
    assert any(b - a > 1 for rounds in rounds_of.values() for a, b in pairwise(rounds))
    for record, slow in zip(records, _slow_masks(calls, pseudo), strict=True):
        for name, flags in slow.items():
            assert record["attack_mask"].keep[name].reshape(-1).tolist() == flags, name
        for name, value in record["point"].items():
            assert torch.equal(value, record["mask"].apply(record["w"])[name])
    if pseudo:
        assert any(r["stale"]["features.0.weight"].any() for r in records)  # the case is exercised
        for client, saved in defense._withheld.items():
            for name, (withheld, trained) in saved.items():
                read = observer._last_withheld[client][name]
                assert not (withheld & ~read).any()  # every withheld weight is seen
                # and the only others are shared weights that are exactly 0 (the
                # aggregate is 0 where all sampled clients withheld, and a dead ReLU's
                # zero gradient keeps it there): dropped, never misused
                assert (trained[read & ~withheld] == 0).all()
    else:
        assert all(r["stale"] is None for r in records)


def test_attack_mask_of_a_hand_made_upload():
    keep = torch.tensor([[True, True, False], [True, True, True]])
    base = Mask({"w": keep, "b": torch.ones(2, dtype=torch.bool)})
    sent = {"w": torch.tensor([[0.5, 0.0, 0.0], [1.0, -2.0, 0.0]]), "b": torch.zeros(2)}
    stale = {"w": torch.tensor([[False, False, False], [True, False, False]])}
    mask = attack_mask(base, sent, stale)
    assert mask.keep["w"].tolist() == [[True, False, False], [False, True, False]]
    assert mask.keep["b"].all()  # biases: always matched, even when 0
    assert attack_mask(base, sent, None).keep["w"].tolist() == [
        [True, False, False],
        [True, True, False],
    ]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"pseudo": 1}, "'pseudo' parameter of DefenseAwareObserver.*1"),
        ({"pseudo": True, "gradient_at": "sent"}, "'gradient_at'.*sent"),
    ],
)
def test_observer_rejects_bad_settings(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DefenseAwareObserver(**kwargs)


def test_attack_rejects_a_non_bool_replay():
    with pytest.raises(ValueError, match=r"'replay' parameter of defense_aware_attack.*yes"):
        defense_aware_attack(_linear(), [], lr=LR, replay="yes", config=CONFIG)
