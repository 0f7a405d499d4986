"""``pruneleak train``: pruned FL training (PriPrune Algorithm 1) with per-round accuracy.

Example::

    pruneleak train --dataset mnist --data-dir data/mnist --model conv2 \\
        --pruning prunefl --p 0.3 --rounds 200

Each run appends one record (the whole per-round curve) to ``train.jsonl`` under ``--out``
(default ``pruneleak-out/train``); rerunning a finished configuration prints the stored
curve without training.
"""

from __future__ import annotations

import argparse

from pruneleak.sims.cli import Parser, add_command, add_data_dir_argument, add_out_argument
from pruneleak.sims.cli.arguments import (
    finite_float,
    nonnegative_int,
    positive_float,
    positive_int,
)
from pruneleak.sims.cli.options import declare_options
from pruneleak.sims.cli.summaries import SUMMARIES
from pruneleak.sims.core.outputs import output_dir
from pruneleak.sims.core.store import ResultStore
from pruneleak.sims.data.datasets import available_datasets
from pruneleak.sims.experiments.train import PARTITIONS, TrainConfig, run_training
from pruneleak.sims.fl.server import ALGORITHMS, FedConfig
from pruneleak.sims.models import available_models
from pruneleak.sims.pruning.schemes import available_schemes

RESULTS_NAME = "train.jsonl"

#: Command-line destination -> TrainConfig field (the model's options and FedConfig aside).
OPTIONS = {
    "dataset": "dataset",
    "model": "model",
    "pruning": "pruning",
    "p": "p",
    "readjust_every": "readjust_every",
    "clients": "num_clients",
    "partition": "partition",
    "alpha": "alpha",
    "test_fraction": "test_fraction",
    "seed": "seed",
    "device": "device",
}
#: Command-line destination -> FedConfig field.
FED_OPTIONS = {
    "rounds": "rounds",
    "clients_per_round": "clients_per_round",
    "local_epochs": "local_epochs",
    "batch_size": "batch_size",
    "lr": "lr",
    "algorithm": "algorithm",
    "eval_every": "eval_every",
    "seed": "seed",
}


def register(subparsers) -> None:
    parser = add_command(
        subparsers,
        "train",
        help=SUMMARIES["train"],
        description=(
            "Pruned FL training (PriPrune Algorithm 1) with per-round test accuracy. Each "
            f"run appends one record (the whole per-round curve) to {RESULTS_NAME} under "
            "--out; rerunning a finished configuration prints the stored curve without "
            "training."
        ),
    )
    add_arguments(parser)
    parser.set_defaults(func=run)


def build_parser() -> argparse.ArgumentParser:
    """A stand-alone parser with the same arguments (for tests and scripts)."""
    parser = Parser(prog="pruneleak train")
    add_arguments(parser)
    parser.set_defaults(func=run)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    data = parser.add_argument_group("data")
    data.add_argument(
        "--dataset", choices=available_datasets(), default=TrainConfig.dataset, help="data set"
    )
    add_data_dir_argument(data)
    data.add_argument(
        "--partition",
        choices=PARTITIONS,
        default=TrainConfig.partition,
        help="client split; 'natural' = FEMNIST writers",
    )
    data.add_argument(
        "--clients",
        type=positive_int,
        default=TrainConfig.num_clients,
        metavar="N",
        help="number of clients N for iid/dirichlet",
    )
    data.add_argument(
        "--alpha",
        type=positive_float,
        default=TrainConfig.alpha,
        help="Dirichlet concentration of the dirichlet split, > 0 (small: more label skew)",
    )
    data.add_argument(
        "--test-fraction",
        type=finite_float,
        default=TrainConfig.test_fraction,
        help="held-out fraction of the images when there is no official test split, in (0, 1)",
    )
    model = parser.add_argument_group("model and pruning")
    model.add_argument(
        "--model", choices=available_models(), default=TrainConfig.model, help="model"
    )
    model.add_argument(
        "--width",
        type=positive_int,
        help="Conv-k: channels of the first conv layer (default: the model's)",
    )
    model.add_argument(
        "--hidden",
        type=positive_int,
        help="Conv-k: units of the hidden linear layer (default: the model's)",
    )
    model.add_argument(
        "--activation",
        choices=("relu", "sigmoid", "tanh"),
        help="activation, all models but logreg (default: the model's)",
    )
    model.add_argument(
        "--pruning", choices=available_schemes(), default=TrainConfig.pruning, help="pruning scheme"
    )
    model.add_argument(
        "--p",
        type=finite_float,
        default=TrainConfig.p,
        help="base pruning rate: fraction of the weights pruned, in [0, 1]",
    )
    model.add_argument(
        "--readjust-every",
        type=positive_int,
        metavar="ROUNDS",
        help="FedDST/PruneFL re-adjustment interval, in rounds (default: the scheme's)",
    )
    fl = parser.add_argument_group("federated learning")
    fl.add_argument("--rounds", type=positive_int, default=FedConfig.rounds, help="global rounds T")
    fl.add_argument(
        "--clients-per-round",
        type=positive_int,
        default=FedConfig.clients_per_round,
        help="clients sampled per round, at most --clients",
    )
    fl.add_argument(
        "--local-epochs",
        type=positive_int,
        default=FedConfig.local_epochs,
        help="local steps on the batch (fedsgd) or passes over the client's data (fedavg)",
    )
    fl.add_argument(
        "--batch-size",
        type=positive_int,
        default=FedConfig.batch_size,
        metavar="B",
        help="local batch size B, in images",
    )
    fl.add_argument(
        "--lr",
        type=positive_float,
        default=FedConfig.lr,
        help="client learning rate r of eq. (1), > 0",
    )
    fl.add_argument(
        "--algorithm", choices=ALGORITHMS, default=FedConfig.algorithm, help="federated algorithm"
    )
    fl.add_argument(
        "--eval-every",
        type=positive_int,
        default=FedConfig.eval_every,
        metavar="ROUNDS",
        help="evaluate the global model every this many rounds",
    )
    run_group = parser.add_argument_group("run")
    run_group.add_argument(
        "--seed", type=nonnegative_int, default=TrainConfig.seed, help="seed of every draw"
    )
    run_group.add_argument("--device", default=TrainConfig.device, help="auto, cpu, cuda or cuda:N")
    add_out_argument(run_group, "train")
    run_group.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    nested = {dest: f"fed.{field}" for dest, field in FED_OPTIONS.items()}
    clients = {"clients": "num_clients"}  # checked against the data set when it is split
    declare_options(
        parser,
        {
            "TrainConfig": {**nested, **OPTIONS},
            "FedConfig": FED_OPTIONS,
            "run_federated": {"batch_size": "config.batch_size"},
            "partition_iid": clients,
            "partition_dirichlet": clients,
        },
    )


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    """The :class:`TrainConfig` the parsed arguments describe."""
    options = {
        name: getattr(args, name)
        for name in ("width", "hidden", "activation")
        if getattr(args, name) is not None
    }
    fed = FedConfig(**{field: getattr(args, dest) for dest, field in FED_OPTIONS.items()})
    return TrainConfig(
        model_options=tuple(options.items()),
        fed=fed,
        **{field: getattr(args, dest) for dest, field in OPTIONS.items()},
    )


def run(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    results = output_dir(args.out) / RESULTS_NAME
    try:
        record = run_training(
            config,
            data_dir=args.data_dir,
            store=ResultStore(results),
            progress=False if args.no_progress else None,
        )
    except FileNotFoundError as err:
        raise ValueError(str(err)) from err
    print(f"{'round':>6}  {'accuracy':>8}  {'loss':>8}  {'density':>7}")
    for row in zip(
        record["rounds"], record["accuracy"], record["loss"], record["density"], strict=True
    ):
        print(f"{row[0]:>6}  {row[1]:>8.4f}  {row[2]:>8.4f}  {row[3]:>7.4f}")
    print(
        f"{config.pruning} p={config.p:g} on {config.dataset}/{config.model}: final accuracy "
        f"{record['final_accuracy']:.4f} after {config.fed.rounds} rounds "
        f"({record['num_clients']} clients, {record['seconds']:.1f} s)"
    )
    print(f"Results: {results} (key {record['key']})")
    return 0
