"""Client splits of the studies (sims.data.split_clients) and a sweep job split by writer
(FEMNIST's LEAF writers as clients, PriPrune's set-up, on a tiny LEAF file); images
resized for a job (``image_size``); the paper-scale configurations' networks."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from pruneleak.sims.data import (
    ImageDataset,
    load_faces,
    partition_by_client,
    partition_iid,
    resize_images,
    split_clients,
)
from pruneleak.sims.store.reconstructions import load_reconstructions
from pruneleak.sims.sweep import AttackJob, job_key, load_config, read_config, run_job

# Training samples per writer, deliberately all different, and the test split's.
TRAIN_WRITERS = {"w0": 4, "w1": 2, "w2": 3}
TEST_WRITERS = {"w0": 1, "w2": 1}


def _write_leaf(folder, writers, seed):
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    blob = {
        "users": list(writers),
        "num_samples": list(writers.values()),
        "user_data": {
            user: {"x": rng.random((n, 784)).round(3).tolist(), "y": [0] * n}
            for user, n in writers.items()
        },
    }
    (folder / "all_data_0.json").write_text(json.dumps(blob))


@pytest.fixture
def femnist_dir(tmp_path):
    _write_leaf(tmp_path / "train", TRAIN_WRITERS, seed=0)
    _write_leaf(tmp_path / "test", TEST_WRITERS, seed=1)
    return tmp_path


def _data(client_ids=None, n=12):
    labels = torch.arange(n) % 3
    return ImageDataset(
        images=torch.zeros(n, 1, 2, 2),
        labels=labels,
        num_classes=3,
        name="toy",
        client_ids=client_ids,
    )


def test_split_clients_dispatches_to_the_named_partition():
    ids = torch.tensor([2, 0, 1, 1, 0, 2, 2, 0, 1, 0, 2, 1])
    natural = split_clients(_data(ids), "natural", num_clients=99, seed=0, func="f")
    assert [p.tolist() for p in natural] == [p.tolist() for p in partition_by_client(ids.numpy())]
    assert [p.tolist() for p in natural] == [[1, 4, 7, 9], [2, 3, 8, 11], [0, 5, 6, 10]]
    iid = split_clients(_data(), "iid", num_clients=4, seed=3, func="f")
    assert [p.tolist() for p in iid] == [p.tolist() for p in partition_iid(12, 4, seed=3)]
    skewed = split_clients(_data(), "dirichlet", num_clients=2, seed=0, alpha=0.1, func="f")
    assert sorted(np.concatenate(skewed).tolist()) == list(range(12))


def test_split_clients_errors_name_the_caller_and_the_value():
    with pytest.raises(ValueError, match=r"'partition' parameter of Caller.*no client ids"):
        split_clients(_data(), "natural", num_clients=2, seed=0, func="Caller")
    with pytest.raises(ValueError, match=r"'partition'.*'writers'"):
        split_clients(_data(), "writers", num_clients=2, seed=0, func="Caller")


def test_a_natural_job_attacks_writers_with_their_own_samples(femnist_dir):
    """Each target's secret is a batch of its writer's samples: log2 |D_i| bits for
    B = 1, with |D_i| the writer's count in the file (a split ignoring the writers would
    give 3 clients of 3 samples each)."""
    job = AttackJob.from_fields(
        {
            "dataset": "femnist",
            "data_dir": str(femnist_dir),
            "partition": "natural",
            "num_clients": 3,
            "targets": 3,
            "fed.clients_per_round": 3,
            "model.width": 4,
            "model.hidden": 8,
            "inversion.iterations": 2,
            "stats_samples": 2,
            "device": "cpu",
        }
    )
    record = run_job(job)
    assert record["job"]["partition"] == "natural"
    targets = sorted(set(record["clients"]))
    by_target = dict(zip(targets, record["leakage_secrets_log2"], strict=True))
    counts = list(TRAIN_WRITERS.values())
    assert by_target == pytest.approx({k: math.log2(n) for k, n in enumerate(counts)})


def test_a_natural_job_needs_as_many_clients_as_writers(femnist_dir):
    job = AttackJob.from_fields(
        {
            "dataset": "femnist",
            "data_dir": str(femnist_dir),
            "partition": "natural",
            "num_clients": 4,
            "targets": 1,
            "fed.clients_per_round": 4,
            "model.width": 4,
            "model.hidden": 8,
            "device": "cpu",
        }
    )
    with pytest.raises(ValueError, match=r"'num_clients'.*writers of 'femnist' \(3\).*Got 4"):
        run_job(job)


ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("config", "partition", "network", "image_size"),
    [
        ("paper_femnist", "natural", ("relu", "max"), None),
        ("paper_cifar10", "iid", ("relu", "avg"), None),  # VGG has no pooling option
        ("benchmarks/sweeps/paper_faces_conv2.toml", "iid", ("relu", "max"), 28),
        ("benchmarks/sweeps/paper_patches_vgg11.toml", "iid", ("relu", "avg"), None),
    ],
)
def test_paper_configs_run_the_papers_networks(config, partition, network, image_size):
    """The paper-scale grids use the paper's ReLU networks (and FEMNIST's writers; the
    faces at FEMNIST's 28x28); only the "activation" panel swaps in sigmoid for
    comparison."""
    loaded = read_config(ROOT / config) if config.endswith(".toml") else load_config(config)
    panels = loaded.panels()
    for panel, jobs in panels.items():
        for job in jobs:
            assert (job.partition, job.image_size) == (partition, image_size)
            if panel != "activation":
                assert (job.model.activation, job.model.pooling) == network
            else:
                assert job.model.activation == "sigmoid"
    assert len(panels["activation"]) == len(panels["p"])
    assert loaded.resources.gpus == 1


def test_resized_dataset_holds_resized_images_and_the_same_labels():
    faces = load_faces()
    bigger = faces.resized(28)
    assert bigger.image_shape == (1, 28, 28) and bigger.name == "faces"
    torch.testing.assert_close(bigger.images, resize_images(faces.images, 28), rtol=0, atol=0)
    assert torch.equal(bigger.labels, faces.labels)
    assert faces.resized(25) is faces


def test_a_job_resizes_its_images_before_the_attack(tmp_path):
    """Faces at 28x28, FEMNIST's side (the offline stand-in for PriPrune's Conv-2): the
    attacked images kept by the job are resized faces, and the model is built for them."""
    fields = {
        "dataset": "faces",
        "image_size": 28,
        "num_clients": 4,
        "targets": 1,
        "fed.clients_per_round": 4,
        "model.width": 4,
        "model.hidden": 8,
        "inversion.iterations": 2,
        "stats_samples": 2,
        "device": "cpu",
    }
    job = AttackJob.from_fields(fields)
    record = run_job(job, reconstructions_dir=tmp_path)
    originals, _ = load_reconstructions(tmp_path, job_key(job))
    assert originals.shape[1:] == (1, 28, 28)
    resized = resize_images(load_faces().images, 28).numpy()
    for image in originals:
        assert np.abs(resized - image).reshape(len(resized), -1).max(axis=1).min() < 1e-3
    native = run_job(AttackJob.from_fields({**fields, "image_size": None}))
    # the conv layers' weights do not depend on the side; the first dense layer's do
    assert record["d"] > native["d"]
