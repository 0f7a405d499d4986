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
from pruneleak.sims.cli.arguments import positive_int
from pruneleak.sims.cli.config_options import (
    ConfigOption,
    add_config_options,
    config_values,
    fields_set_by,
)
from pruneleak.sims.cli.options import declare_options
from pruneleak.sims.cli.summaries import SUMMARIES
from pruneleak.sims.core.outputs import output_dir
from pruneleak.sims.experiments.train import TrainConfig, run_training
from pruneleak.sims.fl.server import FedConfig
from pruneleak.sims.store.results import ResultStore

RESULTS_NAME = "train.jsonl"

#: The run's options, each setting a TrainConfig field (the model's options aside): the
#: data's,
DATA_OPTIONS = (
    ConfigOption("--dataset", "dataset"),
    ConfigOption("--partition", "partition"),
    ConfigOption("--clients", "num_clients", metavar="N"),
    ConfigOption("--alpha", "alpha"),
    ConfigOption("--test-fraction", "test_fraction"),
)
#: the model's and the pruning's,
MODEL_OPTIONS = (
    ConfigOption("--model", "model"),
    ConfigOption("--pruning", "pruning"),
    ConfigOption("--p", "p"),
    ConfigOption("--readjust-every", "readjust_every", metavar="ROUNDS"),
)
#: and the run's.
RUN_OPTIONS = (ConfigOption("--seed", "seed"), ConfigOption("--device", "device"))
#: The FL loop's options, each setting a FedConfig field (its seed is --seed).
FED_OPTIONS = (
    ConfigOption("--rounds", "rounds"),
    ConfigOption("--clients-per-round", "clients_per_round", note="(at most --clients)"),
    ConfigOption("--local-epochs", "local_epochs"),
    ConfigOption("--batch-size", "batch_size", metavar="B"),
    ConfigOption("--lr", "lr"),
    ConfigOption("--algorithm", "algorithm"),
    ConfigOption("--eval-every", "eval_every", metavar="ROUNDS"),
)
#: Options of the model's architecture (TrainConfig.model_options); None: the model's own.
ARCHITECTURE_OPTIONS = ("width", "hidden", "activation")


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
    """Add the run's options to ``parser`` (the subcommand's, or :func:`build_parser`'s)."""
    data = parser.add_argument_group("data")
    add_config_options(data, TrainConfig, DATA_OPTIONS)
    add_data_dir_argument(data)
    model = parser.add_argument_group("model and pruning")
    add_config_options(model, TrainConfig, MODEL_OPTIONS)
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
    add_config_options(parser.add_argument_group("federated learning"), FedConfig, FED_OPTIONS)
    run_group = parser.add_argument_group("run")
    add_config_options(run_group, TrainConfig, RUN_OPTIONS)
    add_out_argument(run_group, "train")
    run_group.add_argument(
        "--no-progress",
        action="store_true",
        help="hide the progress bar (or, off a terminal, the progress lines on stderr)",
    )
    fed = {**fields_set_by(FED_OPTIONS), "seed": "seed"}
    clients = {"clients": "num_clients"}  # checked against the data set when it is split
    declare_options(
        parser,
        {  # TrainConfig's checks of its FedConfig name the field 'fed.<name>'
            "TrainConfig": {d: f"fed.{f}" for d, f in fed.items()},
            "FedConfig": {"seed": "seed"},
            "run_federated": {"batch_size": "config.batch_size"},
            "partition_iid": clients,
            "partition_dirichlet": clients,
        },
    )


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    """The :class:`TrainConfig` the parsed arguments describe."""
    options = {
        name: getattr(args, name)
        for name in ARCHITECTURE_OPTIONS
        if getattr(args, name) is not None
    }
    fed = FedConfig(seed=args.seed, **config_values(args, FED_OPTIONS))
    return TrainConfig(
        model_options=tuple(options.items()),
        fed=fed,
        **config_values(args, (*DATA_OPTIONS, *MODEL_OPTIONS, *RUN_OPTIONS)),
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
