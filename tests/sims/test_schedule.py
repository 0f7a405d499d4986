"""Tests of sims.pruning.schedule: Zhu and Gupta's cubic schedule and SGD under it."""

import numpy as np
import pytest
import torch
from torch import nn

from pruneleak.sims.core.runtime import seeded
from pruneleak.sims.data.datasets import load_digits_dataset
from pruneleak.sims.models import lenet5
from pruneleak.sims.pruning.mask import magnitude_mask, prunable_names
from pruneleak.sims.pruning.schedule import CubicSchedule, train_sgd


@pytest.fixture(scope="module")
def digits8():
    data = load_digits_dataset()
    return data.images[:256], data.labels[:256]


def _tiny_lenet(seed=0):
    with seeded(seed):
        return lenet5(image_size=8)


def _closed_form(t, *, initial, final, start, interval, n):
    """Zhu and Gupta eq. (1) at an update step t = start + j * interval, written out."""
    j = (t - start) // interval
    return final + (initial - final) * (1 - j * interval / (n * interval)) ** 3


# --------------------------------------------------------------------------- schedule

SCHEDULES = [
    {"initial": 0.0, "final": 0.9, "start": 0, "interval": 1, "n": 10},
    {"initial": 0.0, "final": 0.5, "start": 7, "interval": 3, "n": 4},
    {"initial": 0.2, "final": 0.99, "start": 2, "interval": 5, "n": 8},
]


def _schedule(s):
    return CubicSchedule(
        final=s["final"],
        initial=s["initial"],
        start=s["start"],
        interval=s["interval"],
        num_updates=s["n"],
    )


@pytest.mark.parametrize("s", SCHEDULES)
def test_cubic_schedule_matches_its_closed_form_at_every_update(s):
    schedule = _schedule(s)
    updates = [s["start"] + j * s["interval"] for j in range(s["n"] + 1)]
    assert [t for t in range(schedule.end + 10) if schedule.is_update(t)] == updates
    for t in updates:
        # 1e-12: the same float expression evaluated in a different order
        assert schedule.sparsity(t) == pytest.approx(_closed_form(t, **s), abs=1e-12)


@pytest.mark.parametrize("s", SCHEDULES)
def test_cubic_schedule_starts_at_initial_ends_at_final_and_is_monotone(s):
    schedule = _schedule(s)
    assert schedule.sparsity(0) == s["initial"]
    assert schedule.sparsity(s["start"]) == s["initial"]
    assert schedule.sparsity(schedule.end) == s["final"]
    assert schedule.sparsity(schedule.end + 100) == s["final"]
    values = np.array([schedule.sparsity(t) for t in range(schedule.end + 5)])
    assert np.all(np.diff(values) >= 0)
    # between two updates the last update's sparsity holds
    for t in range(schedule.end):
        if not schedule.is_update(t + 1):
            assert values[t + 1] == values[t]


def test_cubic_schedule_midpoint_is_one_eighth_of_the_way_back():
    # (1 - 1/2)^3 = 1/8: half-way through the updates, k_t = k_T - (k_T - k_0) / 8
    schedule = CubicSchedule(final=0.8, num_updates=10, interval=2)
    assert schedule.sparsity(10) == pytest.approx(0.8 - 0.8 / 8, abs=1e-15)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"final": 1.0},
        {"final": -0.1},
        {"final": 0.5, "initial": 0.6},
        {"final": 0.5, "start": -1},
        {"final": 0.5, "interval": 0},
        {"final": 0.5, "num_updates": 0},
    ],
)
def test_cubic_schedule_rejects_bad_values(kwargs):
    with pytest.raises(ValueError, match="CubicSchedule"):
        CubicSchedule(**kwargs)


# --------------------------------------------------------------------------- pruning stage


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
@pytest.mark.parametrize("final", [0.5, 0.9, 0.95])
def test_gradual_pruning_ends_at_exactly_the_target_sparsity_per_layer(digits8, final, optimizer):
    images, labels = digits8
    model = _tiny_lenet()
    schedule = CubicSchedule(final=final, interval=2, num_updates=3)
    mask = train_sgd(
        model, images, labels, epochs=2, batch_size=64, schedule=schedule, optimizer=optimizer
    )
    params = dict(model.named_parameters())
    for name in prunable_names(params):
        n = params[name].numel()
        assert int((~mask.keep[name]).sum()) == round(final * n)
        assert int((params[name] == 0).sum()) == round(final * n)
    for name in set(params) - set(prunable_names(params)):
        assert bool(mask.keep[name].all())
    # the final mask is THPRUNE of the final weights (pruned weights are exactly 0)
    assert mask.equals(magnitude_mask(params, final))


def test_gradual_pruning_holds_pruned_weights_at_zero_between_updates(digits8):
    images, labels = digits8
    model = _tiny_lenet()
    # one update at t0 = 0 to k = 0.7, then 7 steps with the mask held, no further update
    # before the final THPRUNE at 0.9 (n = 1, interval = 100 > 8 steps)
    schedule = CubicSchedule(final=0.9, initial=0.7, interval=100, num_updates=1)
    initial_mask = magnitude_mask(dict(model.named_parameters()), 0.7)
    train_sgd(model, images, labels, epochs=2, batch_size=64, schedule=schedule, anneal=False)
    for name, param in model.named_parameters():
        assert bool((param[~initial_mask.keep[name]] == 0).all())


def test_dense_training_is_seeded_and_prunes_nothing(digits8):
    images, labels = digits8
    a, b = _tiny_lenet(), _tiny_lenet()
    mask_a = train_sgd(a, images, labels, epochs=1, seed=3)
    train_sgd(b, images, labels, epochs=1, seed=3)
    assert mask_a.sparsity() == 0.0
    for pa, pb in zip(a.parameters(), b.parameters(), strict=True):
        torch.testing.assert_close(pa, pb, rtol=0, atol=0)


def test_adam_takes_torchs_adam_step(digits8):
    images, labels = digits8
    model, reference = _tiny_lenet(), _tiny_lenet()
    # one full-batch step without annealing: the minibatch order only permutes the mean
    train_sgd(
        model,
        images,
        labels,
        epochs=1,
        batch_size=len(images),
        lr=1e-3,
        anneal=False,
        optimizer="adam",
    )
    adam = torch.optim.Adam(reference.parameters(), lr=1e-3)
    nn.functional.cross_entropy(reference(images), labels).backward()
    adam.step()
    for a, b in zip(model.parameters(), reference.parameters(), strict=True):
        # Adam's first step moves each weight by about lr; the permuted float32 mean
        # changes the gradients in the last bits only
        torch.testing.assert_close(a, b, rtol=0, atol=1e-6)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"epochs": 0},
        {"batch_size": 0},
        {"lr": 0.0},
        {"momentum": 1.0},
        {"seed": -1},
        {"optimizer": "rmsprop"},
    ],
)
def test_train_sgd_rejects_bad_values(digits8, kwargs):
    images, labels = digits8
    with pytest.raises(ValueError, match="train_sgd"):
        train_sgd(_tiny_lenet(), images, labels, **{"epochs": 1, **kwargs})
