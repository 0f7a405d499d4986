"""Tests of sims.experiments.train and the ``pruneleak train`` command."""

import json

import pytest

from pruneleak.sims import cli
from pruneleak.sims.cli import train as train_cli
from pruneleak.sims.experiments import train as train_module
from pruneleak.sims.experiments.train import TrainConfig, run_training
from pruneleak.sims.fl.server import FedConfig
from pruneleak.sims.store.results import ResultStore

SMALL = {
    "model_options": (("width", 4), ("hidden", 16)),
    "pruning": "prunefl",
    "readjust_every": 2,
    "num_clients": 4,
    "fed": FedConfig(rounds=3, clients_per_round=2, batch_size=10, lr=0.3),
    "device": "cpu",
}


def test_run_training_records_the_curve_and_resumes(tmp_path, monkeypatch):
    store = ResultStore(tmp_path / "train.jsonl")
    config = TrainConfig(**SMALL)
    record = run_training(config, store=store, progress=False)
    assert record["key"] == f"train/{config.fingerprint()}"
    assert record["rounds"] == [0, 1, 2, 3] and len(record["accuracy"]) == 4
    assert all(0 <= a <= 1 for a in record["accuracy"])
    assert record["density"] == pytest.approx([0.7] * 4, abs=1e-3)
    assert record["mask_changes"] == [2] and record["num_clients"] == 4
    assert [r["key"] for r in store.records()] == [record["key"]]
    json.dumps(record)  # JSON-serialisable as stored

    def must_not_train(*args, **kwargs):
        raise AssertionError("a finished run was trained again")

    monkeypatch.setattr(train_module, "run_federated", must_not_train)
    again = run_training(TrainConfig(**{**SMALL, "device": "auto"}), store=store)
    assert again == json.loads(json.dumps(record))
    assert len(list(store.records())) == 1


def test_a_killed_run_leaves_no_record(tmp_path, monkeypatch):
    store = ResultStore(tmp_path / "train.jsonl")
    config = TrainConfig(**SMALL)

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(train_module, "run_federated", killed)
        with pytest.raises(KeyboardInterrupt):
            run_training(config, store=store)
    assert list(store.records()) == []
    run_training(config, store=store)
    run_training(config, store=store)
    assert len(list(store.records())) == 1


def test_fingerprint_tracks_numbers_not_device():
    base = TrainConfig(**SMALL)
    assert base.fingerprint() == TrainConfig(**{**SMALL, "device": "auto"}).fingerprint()
    assert base.fingerprint() != TrainConfig(**{**SMALL, "p": 0.5}).fingerprint()
    reordered = TrainConfig(**{**SMALL, "model_options": (("hidden", 16), ("width", 4))})
    assert reordered.fingerprint() == base.fingerprint()


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ({"dataset": "imagenet"}, "dataset"),
        ({"model": "resnet18"}, "model"),
        ({"pruning": "lottery"}, "pruning"),
        ({"p": 1.5}, "p"),
        ({"readjust_every": 0}, "readjust_every"),
        ({"num_clients": 0}, "num_clients"),
        ({"partition": "shards"}, "partition"),
        ({"alpha": 0.0}, "alpha"),
        ({"test_fraction": 1.0}, "test_fraction"),
        ({"fed": {"rounds": 3}}, "fed"),
        ({"seed": -1}, "seed"),
    ],
)
def test_train_config_rejects_bad_fields(override, field):
    with pytest.raises(ValueError, match=f"'{field}' parameter of TrainConfig"):
        TrainConfig(**{**SMALL, **override})


def test_run_training_rejects_natural_split_without_writers_and_bad_options():
    with pytest.raises(ValueError, match="natural"):
        run_training(TrainConfig(**{**SMALL, "partition": "natural"}))
    with pytest.raises(ValueError, match="model_options"):
        run_training(TrainConfig(**{**SMALL, "model": "vgg4"}))


ARGS = [
    "--dataset", "digits", "--model", "conv2", "--width", "4", "--hidden", "16",
    "--pruning", "random", "--p", "0.3", "--rounds", "2", "--clients", "4",
    "--clients-per-round", "2", "--batch-size", "10", "--lr", "0.3", "--device", "cpu",
    "--no-progress",
]  # fmt: skip


def test_train_command(tmp_path, capsys):
    argv = [*ARGS, "--out", str(tmp_path)]
    args = train_cli.build_parser().parse_args(argv)
    assert args.func(args) == 0
    out = capsys.readouterr().out
    results = tmp_path / "train.jsonl"
    assert "final accuracy" in out and f"Results: {results}" in out
    [record] = ResultStore(results).records()
    assert record["rounds"] == [0, 1, 2]
    config = train_cli.config_from_args(args)
    assert record["key"] == config.key()
    assert config.model_options == (("hidden", 16), ("width", 4))


def test_pruneleak_train_writes_under_pruneleak_out_by_default(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["train", *ARGS]) == 0
    assert "final accuracy" in capsys.readouterr().out
    written = [p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()]
    assert written == ["pruneleak-out/train/train.jsonl"]
    assert len(list(ResultStore(tmp_path / written[0]).records())) == 1


def test_train_command_reports_a_missing_data_folder(tmp_path):
    args = train_cli.build_parser().parse_args(
        ["--dataset", "mnist", "--data-dir", str(tmp_path / "none"), "--out",
         str(tmp_path), "--device", "cpu"]
    )  # fmt: skip
    with pytest.raises(ValueError, match="train-images-idx3-ubyte"):
        args.func(args)
