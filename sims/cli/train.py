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
from pathlib import Path

from sims.cli import add_out_argument
from sims.core.outputs import output_dir
from sims.core.store import ResultStore
from sims.data.datasets import available_datasets
from sims.experiments.train import PARTITIONS, TrainConfig, run_training
from sims.fl.server import ALGORITHMS, FedConfig
from sims.models import available_models
from sims.pruning.schemes import available_schemes

RESULTS_NAME = "train.jsonl"


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "train",
        help="train a pruned FL model and record its per-round test accuracy",
        description=__doc__.split("\n\n")[0],
    )
    add_arguments(parser)
    parser.set_defaults(func=run)


def build_parser() -> argparse.ArgumentParser:
    """A stand-alone parser with the same arguments (for tests and scripts)."""
    parser = argparse.ArgumentParser(prog="pruneleak train")
    add_arguments(parser)
    parser.set_defaults(func=run)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    defaults = FedConfig()
    data = parser.add_argument_group("data")
    data.add_argument("--dataset", choices=available_datasets(), default="digits")
    data.add_argument("--data-dir", type=Path, help="folder of the data set's files")
    data.add_argument(
        "--partition",
        choices=PARTITIONS,
        default="iid",
        help="client split; 'natural' = FEMNIST writers (default: %(default)s)",
    )
    data.add_argument(
        "--clients",
        type=int,
        default=10,
        help="number of clients N for iid/dirichlet (default: %(default)s)",
    )
    data.add_argument("--alpha", type=float, default=0.5, help="Dirichlet concentration")
    data.add_argument(
        "--test-fraction",
        type=float,
        default=0.2,
        help="held-out fraction when there is no official test split",
    )
    model = parser.add_argument_group("model and pruning")
    model.add_argument("--model", choices=available_models(), default="conv2")
    model.add_argument("--width", type=int, help="Conv-k: channels of the first conv layer")
    model.add_argument("--hidden", type=int, help="Conv-k: units of the hidden linear layer")
    model.add_argument(
        "--activation",
        choices=("relu", "sigmoid", "tanh"),
        help="activation (all models but logreg)",
    )
    model.add_argument("--pruning", choices=available_schemes(), default="random")
    model.add_argument("--p", type=float, default=0.3, help="base pruning rate (default: 0.3)")
    model.add_argument(
        "--readjust-every", type=int, help="FedDST/PruneFL re-adjustment interval in rounds"
    )
    fl = parser.add_argument_group("federated learning")
    fl.add_argument("--rounds", type=int, default=defaults.rounds)
    fl.add_argument("--clients-per-round", type=int, default=defaults.clients_per_round)
    fl.add_argument("--local-epochs", type=int, default=defaults.local_epochs)
    fl.add_argument("--batch-size", type=int, default=defaults.batch_size)
    fl.add_argument("--lr", type=float, default=defaults.lr)
    fl.add_argument("--algorithm", choices=ALGORITHMS, default=defaults.algorithm)
    fl.add_argument("--eval-every", type=int, default=defaults.eval_every)
    run_group = parser.add_argument_group("run")
    run_group.add_argument("--seed", type=int, default=0)
    run_group.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    add_out_argument(run_group, "train")
    run_group.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    """The :class:`TrainConfig` the parsed arguments describe."""
    options = {
        name: getattr(args, name)
        for name in ("width", "hidden", "activation")
        if getattr(args, name) is not None
    }
    fed = FedConfig(
        rounds=args.rounds,
        clients_per_round=args.clients_per_round,
        local_epochs=args.local_epochs,
        batch_size=args.batch_size,
        lr=args.lr,
        algorithm=args.algorithm,
        eval_every=args.eval_every,
        seed=args.seed,
    )
    return TrainConfig(
        dataset=args.dataset,
        model=args.model,
        model_options=tuple(options.items()),
        pruning=args.pruning,
        p=args.p,
        readjust_every=args.readjust_every,
        num_clients=args.clients,
        partition=args.partition,
        alpha=args.alpha,
        test_fraction=args.test_fraction,
        fed=fed,
        seed=args.seed,
        device=args.device,
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
