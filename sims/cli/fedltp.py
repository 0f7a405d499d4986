"""``pruneleak fedltp``: Fed-LTP (or its baselines DP-Fed, Fed-SPA) to a privacy budget.

Example (the quick study's setting, about 2 s on one CPU thread)::

    pruneleak fedltp --variant fedltp --pruning iterative --clients 10 --client-rate 0.3 \\
        --local-steps 10 --clip 1 --lr 0.5 --tickets 2 --ticket-steps 100 --epsilon 9.71

Runs :func:`sims.fedltp.run_fedltp` (``--variant``: :mod:`sims.fedltp.baselines`) on the
public/private split of ``--dataset``; every finished round is one record in
``fedltp.jsonl`` under ``--out`` (default ``pruneleak-out/fedltp``), with a checkpoint,
so a killed run resumes at the next round and a finished one is not rerun. Ends with one
line: final test accuracy, epsilon spent, rounds run and MiB communicated (all clients,
download plus upload, 4 bytes per transmitted value).
"""

from __future__ import annotations

import argparse
import sys
from functools import partial

from tqdm.auto import tqdm

from pruneleak.sims.cli import add_command, add_data_dir_argument, add_out_argument
from pruneleak.sims.cli.arguments import (
    finite_float,
    nonnegative_float,
    nonnegative_int,
    positive_float,
    positive_int,
)
from pruneleak.sims.cli.options import declare_options
from pruneleak.sims.cli.summaries import SUMMARIES
from pruneleak.sims.core.outputs import output_dir
from pruneleak.sims.core.store import ResultStore
from pruneleak.sims.data.datasets import available_datasets, load_dataset
from pruneleak.sims.fedltp.baselines import MIB, VARIANTS, run_variant
from pruneleak.sims.fedltp.config import CLIPPING, PARTITIONS, FedLTPConfig
from pruneleak.sims.fedltp.data import split_for_config
from pruneleak.sims.fedltp.privacy import affordable_rounds
from pruneleak.sims.fedltp.training import run_key
from pruneleak.sims.models import available_models, build_model

RESULTS_NAME = "fedltp.jsonl"
PRUNING = {"one-shot": "one_shot", "iterative": "iterative"}
DEFAULT_KEEP = 0.6  # Fed-SPA's p in the paper's Fig. 4 (Sec. 6.2 3))
_D = FedLTPConfig()


def register(subparsers) -> None:
    parser = add_command(
        subparsers,
        "fedltp",
        help=SUMMARIES["fedltp"],
        description=(
            "Fed-LTP (Shi et al.: lottery tickets on public data, DP local training, "
            "Laplace-noised validation) or its baselines DP-Fed and Fed-SPA, run until the "
            f"next round would exceed --epsilon. One record per round in {RESULTS_NAME} "
            "under --out; a rerun resumes. Defaults are the paper's values (Sec. 6.1)."
        ),
    )
    add_arguments(parser)
    parser.set_defaults(func=run)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    method = parser.add_argument_group("method")
    method.add_argument("--variant", choices=VARIANTS, default="fedltp", help="method")
    method.add_argument(
        "--pruning", choices=tuple(PRUNING), default="one-shot", help="Fed-LTP's pruning scheme"
    )
    method.add_argument(
        "--keep",
        type=positive_float,
        help=f"Fed-SPA: kept fraction p of each upload's weights, in (0, 1] "
        f"(default: {DEFAULT_KEEP} with --variant fed-spa, refused otherwise)",
    )
    method.add_argument(
        "--prune-degree",
        type=nonnegative_float,
        default=_D.prune_degree,
        help="Pr: fraction of the weights the ticket prunes, in [0, 1)",
    )
    method.add_argument(
        "--further-prune",
        type=nonnegative_float,
        default=_D.further_prune,
        help="P2 of fed-iterative pruning: further fraction pruned per client, in [0, 1)",
    )
    method.add_argument(
        "--tickets",
        type=positive_int,
        default=_D.num_tickets,
        help="M, the number of tickets drawn from",
    )
    method.add_argument(
        "--ticket-steps",
        type=positive_int,
        default=_D.ticket_steps,
        help="k, public-data training steps per ticket",
    )
    data = parser.add_argument_group("data and model")
    data.add_argument(
        "--dataset",
        choices=available_datasets(),
        default="digits",
        help="data set (split into public and private halves)",
    )
    add_data_dir_argument(data)
    data.add_argument(
        "--model",
        choices=available_models(),
        default="logreg",
        help="model (conv models stay near chance under DP noise on 8x8 digits)",
    )
    data.add_argument(
        "--partition",
        choices=PARTITIONS,
        default=_D.partition,
        help="split of the private data over the clients",
    )
    data.add_argument(
        "--alpha",
        type=positive_float,
        default=_D.dirichlet_alpha,
        help="Dirichlet concentration of --partition dirichlet, > 0",
    )
    fl = parser.add_argument_group("federated DP training")
    fl.add_argument(
        "--clients", type=positive_int, default=_D.num_clients, help="U, the number of clients"
    )
    fl.add_argument(
        "--client-rate",
        type=positive_float,
        default=_D.client_rate,
        help="q, fraction of the clients selected per round, in (0, 1]",
    )
    fl.add_argument(
        "--local-steps",
        type=positive_int,
        default=_D.local_steps,
        help="tau, DP-SGD steps per selected client and round (each one counted)",
    )
    fl.add_argument(
        "--batch-size",
        type=positive_int,
        default=_D.batch_size,
        help="B, expected Poisson batch size",
    )
    fl.add_argument(
        "--clip", type=positive_float, default=_D.max_grad_norm, help="C, clipping threshold"
    )
    fl.add_argument(
        "--sigma",
        type=nonnegative_float,
        default=_D.noise_multiplier,
        help="sigma, noise multiplier (noise std sigma C)",
    )
    fl.add_argument(
        "--clipping",
        choices=CLIPPING,
        default=_D.clipping,
        help="per-example (DP-SGD) or batch (Algorithm 2 line 15 as printed)",
    )
    fl.add_argument("--lr", type=positive_float, default=_D.lr, help="eta, local learning rate")
    fl.add_argument(
        "--lr-decay",
        type=positive_float,
        default=_D.lr_decay,
        help="learning-rate decay per round, in (0, 1]",
    )
    fl.add_argument(
        "--momentum",
        type=nonnegative_float,
        default=_D.momentum,
        help="local SGD momentum, in [0, 1)",
    )
    fl.add_argument(
        "--lambda-val",
        type=positive_float,
        default=_D.lambda_val,
        help="lambda_val, Laplace scale of each validation score",
    )
    fl.add_argument(
        "--epsilon", type=positive_float, default=_D.epsilon, help="privacy budget epsilon, nats"
    )
    fl.add_argument(
        "--delta", type=finite_float, default=_D.delta, help="delta of the budget, in (0, 1)"
    )
    fl.add_argument("--rounds", type=positive_int, default=_D.rounds, help="T, the most rounds")
    run_group = parser.add_argument_group("run")
    run_group.add_argument(
        "--seed", type=nonnegative_int, default=_D.seed, help="seed of every draw"
    )
    run_group.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    add_out_argument(run_group, "fedltp")
    run_group.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    declare_options(
        parser,
        {"FedLTPConfig": OPTIONS, "run_fedltp": {"keep": "upload_keep"}},
        bare="FedLTPConfig",
    )


#: Command-line destination -> FedLTPConfig field, for every option of the configuration
#: (``--pruning`` is read through :data:`PRUNING`).
OPTIONS = {
    "clients": "num_clients",
    "client_rate": "client_rate",
    "local_steps": "local_steps",
    "clip": "max_grad_norm",
    "sigma": "noise_multiplier",
    "batch_size": "batch_size",
    "clipping": "clipping",
    "lr": "lr",
    "lr_decay": "lr_decay",
    "momentum": "momentum",
    "lambda_val": "lambda_val",
    "epsilon": "epsilon",
    "delta": "delta",
    "rounds": "rounds",
    "prune_degree": "prune_degree",
    "tickets": "num_tickets",
    "ticket_steps": "ticket_steps",
    "pruning": "pruning",
    "further_prune": "further_prune",
    "partition": "partition",
    "alpha": "dirichlet_alpha",
    "seed": "seed",
}


def config_from_args(args: argparse.Namespace) -> FedLTPConfig:
    """The :class:`FedLTPConfig` the parsed arguments describe (ValueError if invalid)."""
    given = {field: getattr(args, dest) for dest, field in OPTIONS.items()}
    return FedLTPConfig(**{**given, "pruning": PRUNING[args.pruning]})


def run(args: argparse.Namespace) -> int:
    if args.keep is not None and args.variant != "fed-spa":
        raise ValueError(f"--keep applies to --variant fed-spa only. Got --variant {args.variant}.")
    keep = (args.keep or DEFAULT_KEEP) if args.variant == "fed-spa" else None
    if keep is not None and keep > 1:
        raise ValueError(f"--keep must be in (0, 1]. Got {keep}.")
    config = config_from_args(args)
    dataset = load_dataset(args.dataset, args.data_dir)
    data = split_for_config(dataset, config)
    factory = partial(
        build_model, args.model, image_shape=tuple(dataset.images.shape[1:]), num_classes=10
    )
    out = output_dir(args.out)
    store = ResultStore(out / RESULTS_NAME)
    rate = min(1.0, config.batch_size / min(len(c) for c in data.clients_train))
    run_id = run_key(config, variant=args.variant, upload_keep=keep)
    done = sum(1 for r in store.records() if r.get("run") == run_id and "round" in r)
    bar = tqdm(
        total=affordable_rounds(config, sampling_rate=rate),
        initial=done,  # rounds recorded by an earlier, interrupted run
        desc=args.variant,
        unit="round",
        disable=True if args.no_progress else None,
    )

    def step(record: dict) -> None:
        bar.update(1)
        bar.set_postfix(acc=f"{record['test_accuracy']:.3f}", eps=f"{record['epsilon']:.2f}")

    with bar:
        result = run_variant(
            args.variant,
            config,
            data,
            factory,
            keep=keep,
            store=store,
            device=args.device,
            on_round=step,
        )
    last = result.records[-1] if result.records else None
    accuracy = (
        f"{last['test_accuracy']:.4f}"
        if last
        else "n/a (no round fits the budget: raise --epsilon or --sigma, or lower "
        "--local-steps or --batch-size)"
    )
    mib = (last["bytes_cumulative"] if last else 0) / MIB
    why = "the budget" if result.stopped_by_budget else "--rounds"
    print(
        f"{args.variant}: final test accuracy {accuracy}, epsilon {result.epsilon:.4g} of "
        f"{config.epsilon:g} (delta {config.delta:g}), {result.rounds_run} rounds (stopped by "
        f"{why}), {mib:.4f} MiB communicated; records in {store.path}",
        file=sys.stdout,
    )
    return 0
