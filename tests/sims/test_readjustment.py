"""PruneFL's and FedDST's re-adjustment schedules scaled to a run's rounds
(sims.pruning.readjustment), against hand-worked rounds, in the FL loop and in a sweep
job's record."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pruneleak.sims.data.datasets import load_digits_dataset
from pruneleak.sims.data.partition import partition_iid
from pruneleak.sims.fl.server import FedConfig, run_federated
from pruneleak.sims.models import conv_net
from pruneleak.sims.pruning.readjustment import readjust_rounds, scaled_interval
from pruneleak.sims.pruning.schemes import build_scheme
from pruneleak.sims.sweep.job import AttackJob, PruningSpec, job_key
from pruneleak.sims.sweep.runner import run_job


@pytest.mark.parametrize(
    ("scheme", "rounds", "interval"),
    [
        # floor(50 T / 20,000), at least 1
        ("prunefl", 20_000, 50),
        ("prunefl", 1_000, 2),  # 2.5 -> 2
        ("prunefl", 1_200, 3),
        ("prunefl", 399, 1),  # 0.9975 -> 0 -> 1
        ("prunefl", 40_000, 100),
        # floor(15 T / 20,000), at least 1
        ("feddst", 20_000, 15),
        ("feddst", 2_667, 2),  # 2.00025
        ("feddst", 2_666, 1),  # 1.9995
        ("feddst", 20, 1),
    ],
)
def test_the_scaled_interval_keeps_the_papers_pace(scheme, rounds, interval):
    assert scaled_interval(scheme, rounds) == interval


@pytest.mark.parametrize(
    ("bad", "name"),
    [
        ({"scheme": "snip", "rounds": 10}, "scheme"),
        ({"scheme": "prunefl", "rounds": 0}, "rounds"),
    ],
)
def test_scaled_interval_refuses_what_has_no_schedule(bad, name):
    with pytest.raises(ValueError, match=f"'{name}' parameter of scaled_interval"):
        scaled_interval(**bad)


def test_the_schemes_state_their_readjustment_rounds():
    """PruneFL every 3 rounds of 10: 3, 6, 9. FedDST every 3 rounds of 20 anneals to zero
    at decay_end = 10 (half the run): 3, 6, 9; every 4: 4, 8 (12 is past decay_end).
    One-shot schemes: none."""
    assert readjust_rounds(3, 10) == [3, 6, 9]
    assert build_scheme("prunefl", 0.3, readjust_every=3).readjust_rounds(10) == [3, 6, 9]
    feddst = build_scheme("feddst", 0.3, rounds=20, readjust_every=3)
    assert feddst.readjust_rounds(20) == [3, 6, 9]
    assert build_scheme("feddst", 0.3, rounds=20, readjust_every=4).readjust_rounds(20) == [4, 8]
    assert build_scheme("snip", 0.3).readjust_rounds(10) == []


def test_a_short_run_readjusts_every_round_on_the_paper_schedule():
    """T = 6: PruneFL's interval floor(50 * 6 / 20,000) = 0 -> 1, so it re-adjusts in
    rounds 1..6; FedDST (interval 1, decay_end 3) in rounds 1 and 2. An explicit interval
    overrides the schedule."""
    assert PruningSpec(scheme="prunefl").build(seed=0, rounds=6).readjust_rounds(6) == [
        1,
        2,
        3,
        4,
        5,
        6,
    ]
    assert PruningSpec(scheme="feddst").build(seed=0, rounds=6).readjust_rounds(6) == [1, 2]
    fixed = PruningSpec(scheme="prunefl", readjust_every=4).build(seed=0, rounds=6)
    assert fixed.readjust_rounds(6) == [4]
    assert PruningSpec(scheme="grasp").interval(6) is None


def test_paper_scaled_jobs_do_not_reuse_the_keys_of_the_authors_intervals():
    """Before the schedule, readjust_every=None meant the authors' interval (PruneFL 50):
    such records computed something else and must not be found under the new jobs' keys;
    one-shot schemes compute what they did and keep their keys."""
    scaled = AttackJob(pruning=PruningSpec(scheme="prunefl"))
    authors = AttackJob(pruning=PruningSpec(scheme="prunefl", readjust_every=50))
    assert job_key(scaled) != job_key(authors)
    assert job_key(AttackJob(pruning=PruningSpec(scheme="snip"))) == job_key(
        AttackJob.from_fields({"pruning.scheme": "snip"})
    )


@pytest.fixture(scope="module")
def digits():
    train, test = load_digits_dataset().train_test_split(0.2, seed=0)
    return train, test, partition_iid(len(train), 10, seed=0)


def test_prunefls_mask_changes_exactly_in_its_stated_rounds(digits):
    """Four rounds on the paper schedule (interval 1): the server's mask changes in each
    of rounds 1-4 (importance-driven regrowth of a 30 % sparse Conv-2), at constant
    density; with interval 2, in rounds 2 and 4 only."""
    train, test, clients = digits
    config = FedConfig(rounds=4, clients_per_round=3, batch_size=10, lr=0.3, eval_every=1)
    for spec, expected in (
        (PruningSpec(scheme="prunefl"), [1, 2, 3, 4]),
        (PruningSpec(scheme="prunefl", readjust_every=2), [2, 4]),
    ):
        torch.manual_seed(0)
        model = conv_net(2, in_channels=1, image_size=8, num_classes=10, width=8, hidden=64)
        scheme = spec.build(seed=0, rounds=config.rounds)
        history = run_federated(model, scheme, train, clients, test, config, device="cpu")
        assert scheme.readjust_rounds(config.rounds) == expected
        assert history.mask_changes == expected
        assert np.ptp(history.density) == 0


def test_the_job_record_states_the_schedule_and_what_changed():
    job = AttackJob.from_fields(
        {
            "dataset": "digits",
            "num_clients": 10,
            "targets": 1,
            "pruning.scheme": "prunefl",
            "fed.rounds": 3,
            "fed.clients_per_round": 2,
            "inversion.iterations": 2,
            "device": "cpu",
        }
    )
    record = run_job(job)
    assert record["readjust_every"] == 1
    assert record["readjust_rounds"] == [1, 2, 3]
    assert set(record["mask_change_rounds"]) <= {1, 2, 3} and record["mask_change_rounds"]
