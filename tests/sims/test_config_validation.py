"""Hardening of sims (issue 13): limits at their boundaries, the memory checks, divergence.

The invalid-input table (tests/invalid_inputs/invalid_cases_sims.py) shows one refusal
per kind of input; these tests pin what the table cannot: the exact boundaries (the
largest valid value passes), that the checks allocate and draw nothing, and where in a
run a divergence is caught.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from pruneleak.bounds.validation import check_distinct
from pruneleak.sims.core import memory
from pruneleak.sims.data.datasets import ImageDataset, load_dataset, load_digits_dataset
from pruneleak.sims.experiments.demo import DemoConfig
from pruneleak.sims.experiments.train import TrainConfig
from pruneleak.sims.fl.server import FedConfig, run_federated
from pruneleak.sims.gradients.per_sample import per_sample_gradients
from pruneleak.sims.models import (
    _conv_net,
    build_model,
    conv_net,
    count_parameters,
    logistic_regression,
)
from pruneleak.sims.pruning.schemes import RandomPruning
from pruneleak.sims.sweep.job import DATASET_SHAPES, AttackJob


def _limit(monkeypatch, limit_bytes: int | None) -> None:
    monkeypatch.setattr(memory, "device_memory_bytes", lambda device: limit_bytes)


# ----------------------------------------------------------------------------- distinct


def test_check_distinct_finds_a_repeat_anywhere_and_counts_it():
    assert check_distinct("p", [0.1, 0.5], func="f") == (0.1, 0.5)
    assert check_distinct("p", np.array([1, 2]), func="f") == (1, 2)
    with pytest.raises(ValueError, match=r"Got 0.1 twice in \(0.1, 0.5, 0.1\)"):
        check_distinct("p", (0.1, 0.5, 0.1), func="f")
    with pytest.raises(ValueError, match="Got 2 3 times"):
        check_distinct("p", [2, 1, 2, 2], func="f")
    with pytest.raises(ValueError, match="must be a list or tuple"):
        check_distinct("p", "ab", func="f")


# ---------------------------------------------------------------------- demo: the data pool


@pytest.mark.parametrize("name", ["digits", "faces", "patches"])
def test_the_demo_pool_is_the_loaded_data_set(name):
    assert DemoConfig(dataset=name, leakage_rates=()).pool_size == len(load_dataset(name))


def test_demo_defaults_fit_the_200_faces():
    # 8 targets leave 192 faces for the statistics (256 on the digits) and all 200 are
    # candidates of the leakage part
    config = DemoConfig(dataset="faces")
    assert (config.stats_samples, config.candidates) == (192, 200)
    assert (DemoConfig().stats_samples, DemoConfig().candidates) == (256, 1797)
    with pytest.raises(ValueError, match=r"'candidates' .* \[2, 200\]. Got 201"):
        DemoConfig(dataset="faces", candidates=201)
    with pytest.raises(ValueError, match="faces candidate pool has 200 images"):
        DemoConfig(dataset="faces", num_images=10, stats_samples=191)


def test_demo_targets_and_statistics_may_fill_the_pool_exactly():
    no_leakage = {"leakage_rates": (), "stats_samples": 97}
    DemoConfig(num_images=425, batch_size=4, **no_leakage)  # 1700 + 97 = 1797
    with pytest.raises(ValueError, match="Got 1798 instead"):
        DemoConfig(num_images=567, batch_size=3, **no_leakage)  # 1701 + 97


def test_demo_lists_become_tuples_so_fingerprints_do_not_depend_on_the_type():
    listed = DemoConfig(pruning_rates=[0.1, 0.5], noise_stds=[0.0, 0.01])
    assert listed.pruning_rates == (0.1, 0.5)
    assert listed.fingerprint() == DemoConfig(pruning_rates=(0.1, 0.5)).fingerprint()


# -------------------------------------------------------------------- train: model options


def test_model_options_as_a_mapping_are_the_same_configuration_as_pairs():
    pairs = TrainConfig(model_options=(("width", 4), ("hidden", 16)))
    mapping = TrainConfig(model_options={"hidden": 16, "width": 4})
    assert mapping.model_options == (("hidden", 16), ("width", 4)) == pairs.model_options
    assert mapping.fingerprint() == pairs.fingerprint()


def test_readjust_every_is_taken_by_the_readjusting_schemes():
    for scheme in ("feddst", "prunefl"):
        assert TrainConfig(pruning=scheme, readjust_every=3).readjust_every == 3


# ----------------------------------------------------------------------- model memory check


def test_a_model_is_refused_exactly_when_four_copies_exceed_the_memory(monkeypatch):
    options = {"in_channels": 1, "image_size": 8, "num_classes": 10}
    n = count_parameters(logistic_regression(**options))  # 650
    need = memory.TRAINING_COPIES * 4 * n
    _limit(monkeypatch, need)
    assert count_parameters(logistic_regression(**options)) == n
    _limit(monkeypatch, need - 1)
    with pytest.raises(ValueError, match=rf"has {n:,} parameters .* 4 copies"):
        logistic_regression(**options)


def test_the_refusal_counts_the_parameters_of_the_model_it_would_build(monkeypatch):
    options = {"image_shape": (3, 32, 32), "num_classes": 10}
    n = count_parameters(build_model("vgg6", **options))
    assert n == 1_814_538  # PriPrune's VGG-6 count (sims.models.vgg docstring)
    _limit(monkeypatch, 1)
    with pytest.raises(ValueError, match=f"vgg.*depth=6.* has {n:,} parameters"):
        build_model("vgg6", **options)


def test_without_a_reported_memory_size_nothing_is_refused(monkeypatch):
    _limit(monkeypatch, None)
    model = conv_net(1, in_channels=1, image_size=8, num_classes=10, width=4, hidden=8)
    assert count_parameters(model) > 0


def test_the_size_check_draws_no_random_numbers():
    arguments = (2, 1, 8, 10, 4, 16, "relu", "max")
    torch.manual_seed(3)
    checked = conv_net(2, in_channels=1, image_size=8, num_classes=10, width=4, hidden=16)
    after_checked = torch.rand(3)
    torch.manual_seed(3)
    unchecked = _conv_net(*arguments)
    after_unchecked = torch.rand(3)
    for a, b in zip(checked.parameters(), unchecked.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    torch.testing.assert_close(after_checked, after_unchecked, rtol=0, atol=0)


def test_memory_sizes_are_written_in_binary_units():
    assert memory.format_bytes(512) == "512.0 B"
    assert memory.format_bytes(3 * 2**30) == "3.0 GiB"
    assert memory.format_bytes(2**60) == "1024.0 PiB"


def test_the_job_shapes_of_the_digits_are_the_loaded_ones():
    digits = load_digits_dataset()
    assert DATASET_SHAPES["digits"] == (digits.image_shape, digits.num_classes)


def test_a_job_model_is_checked_on_its_data_set_images(monkeypatch):
    conv2 = {"model.name": "conv2", "model.width": 32, "model.hidden": 2048}
    n_digits = count_parameters(  # a 2x2 map: 64 * 4 inputs to the hidden layer
        conv_net(2, in_channels=1, image_size=8, num_classes=10, width=32, hidden=2048)
    )
    n_femnist = 6_603_710  # PriPrune's Conv-2 on FEMNIST (sims.models.conv_net docstring)
    _limit(monkeypatch, memory.TRAINING_COPIES * 4 * (n_digits + n_femnist) // 2)
    assert AttackJob.from_fields(conv2).model.name == "conv2"
    with pytest.raises(ValueError, match=f"'femnist' images.* has {n_femnist:,} parameters"):
        AttackJob.from_fields({**conv2, "dataset": "femnist"})


# ------------------------------------------------------------------------- the FL loop


def _toy(n: int = 12) -> ImageDataset:
    generator = torch.Generator().manual_seed(0)
    return ImageDataset(
        images=torch.rand(n, 1, 4, 4, generator=generator),
        labels=torch.arange(n) % 3,
        num_classes=3,
        name="toy",
    )


def _model():
    return logistic_regression(in_channels=1, image_size=4, num_classes=3)  # 51 parameters


def _federate(config: FedConfig, model=None):
    """Clients of 3 and 9 toy images."""
    data = _toy()
    model = _model() if model is None else model
    clients = [np.arange(0, 3), np.arange(3, 12)]
    return run_federated(model, RandomPruning(0.5), data, clients, data, config, device="cpu")


def test_fedsgd_batches_may_be_as_large_as_the_smallest_client():
    history = _federate(FedConfig(rounds=1, clients_per_round=2, batch_size=3))
    assert history.rounds == [0, 1]


def test_fedavg_takes_batches_larger_than_a_client_as_one_pass():
    config = FedConfig(rounds=1, clients_per_round=2, batch_size=5, algorithm="fedavg")
    assert _federate(config).rounds == [0, 1]


def test_divergence_is_caught_in_the_round_it_happens_not_at_the_next_evaluation():
    # Round 1 moves the weights by lr * |g| ~ 1e38 (|g| < 1 for logistic regression on
    # [0, 1] pixels): huge but finite. Round 2's logits overflow, so its training loss is
    # not finite; the test loss is evaluated only after round 6.
    config = FedConfig(rounds=6, clients_per_round=2, batch_size=3, lr=3e38, eval_every=6)
    with pytest.raises(ValueError, match=r"diverged in round 2 .*training loss .*lr=3e\+38"):
        _federate(config)


def test_the_fl_loop_refuses_a_model_too_large_for_its_device(monkeypatch):
    config = FedConfig(rounds=1, clients_per_round=2, batch_size=3)
    model = _model()
    _limit(monkeypatch, memory.TRAINING_COPIES * 4 * 51 - 1)
    with pytest.raises(ValueError, match=r"'model' parameter of run_federated .* 51 parameters"):
        _federate(config, model)


def test_a_finite_run_reports_finite_losses():
    history = _federate(FedConfig(rounds=2, clients_per_round=2, batch_size=3, lr=0.5))
    assert all(math.isfinite(loss) for loss in history.loss)


def test_per_sample_gradients_refuse_a_matrix_too_large_for_the_device(monkeypatch):
    model = _model()
    params = dict(model.named_parameters())
    images, labels = torch.rand(5, 1, 4, 4), torch.arange(5) % 3
    assert per_sample_gradients(model, params, images, labels).shape == (5, 51)
    _limit(monkeypatch, 4 * 5 * 51 - 1)  # one float32 (5, 51) matrix, less a byte
    with pytest.raises(ValueError, match=r"n = 5 samples .* d = 51 parameters.* 255 values"):
        per_sample_gradients(model, params, images, labels)
