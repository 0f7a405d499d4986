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

from pruneleak.bounds.progress import progress as show_progress
from pruneleak.sims.cli import add_command, add_data_dir_argument, add_out_argument
from pruneleak.sims.cli.arguments import positive_float
from pruneleak.sims.cli.config_options import ConfigOption, add_config_options, config_values
from pruneleak.sims.cli.options import declare_options
from pruneleak.sims.cli.summaries import SUMMARIES
from pruneleak.sims.core.outputs import output_dir
from pruneleak.sims.data.datasets import available_datasets, load_dataset
from pruneleak.sims.fedltp.baselines import MIB, VARIANTS, run_variant
from pruneleak.sims.fedltp.config import FedLTPConfig
from pruneleak.sims.fedltp.data import split_for_config
from pruneleak.sims.fedltp.privacy import affordable_rounds
from pruneleak.sims.fedltp.training import run_key
from pruneleak.sims.models import available_models, build_model
from pruneleak.sims.store.results import ResultStore

RESULTS_NAME = "fedltp.jsonl"
PRUNING = {"one-shot": "one_shot", "iterative": "iterative"}
DEFAULT_KEEP = 0.6  # Fed-SPA's p in the paper's Fig. 4 (Sec. 6.2 3))

#: The run's options, each setting a FedLTPConfig field (``--pruning`` aside, read
#: through :data:`PRUNING`): the ticket search's,
METHOD_OPTIONS = (
    ConfigOption("--prune-degree", "prune_degree"),
    ConfigOption("--further-prune", "further_prune"),
    ConfigOption("--tickets", "num_tickets"),
    ConfigOption("--ticket-steps", "ticket_steps"),
)
#: the private data's split,
DATA_OPTIONS = (
    ConfigOption("--partition", "partition"),
    ConfigOption("--alpha", "dirichlet_alpha"),
)
#: the federated DP training's,
FL_OPTIONS = (
    ConfigOption("--clients", "num_clients"),
    ConfigOption("--client-rate", "client_rate"),
    ConfigOption("--local-steps", "local_steps"),
    ConfigOption("--batch-size", "batch_size"),
    ConfigOption("--clip", "max_grad_norm"),
    ConfigOption("--sigma", "noise_multiplier"),
    ConfigOption("--clipping", "clipping"),
    ConfigOption("--lr", "lr"),
    ConfigOption("--lr-decay", "lr_decay"),
    ConfigOption("--momentum", "momentum"),
    ConfigOption("--lambda-val", "lambda_val"),
    ConfigOption("--epsilon", "epsilon"),
    ConfigOption("--delta", "delta"),
    ConfigOption("--rounds", "rounds"),
)
#: and the seed.
RUN_OPTIONS = (ConfigOption("--seed", "seed"),)
CONFIG_OPTIONS = (*METHOD_OPTIONS, *DATA_OPTIONS, *FL_OPTIONS, *RUN_OPTIONS)


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
    """Add the run's options to ``parser``, in four groups."""
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
    add_config_options(method, FedLTPConfig, METHOD_OPTIONS)
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
    add_config_options(data, FedLTPConfig, DATA_OPTIONS)
    add_config_options(parser.add_argument_group("federated DP training"), FedLTPConfig, FL_OPTIONS)
    run_group = parser.add_argument_group("run")
    add_config_options(run_group, FedLTPConfig, RUN_OPTIONS)
    run_group.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    add_out_argument(run_group, "fedltp")
    run_group.add_argument(
        "--no-progress",
        action="store_true",
        help="hide the progress bar (or, off a terminal, the progress lines on stderr)",
    )
    declare_options(
        parser,
        {"FedLTPConfig": {"pruning": "pruning"}, "run_fedltp": {"keep": "upload_keep"}},
        bare="FedLTPConfig",
    )


def config_from_args(args: argparse.Namespace) -> FedLTPConfig:
    """The :class:`FedLTPConfig` the parsed arguments describe (ValueError if invalid)."""
    return FedLTPConfig(**config_values(args, CONFIG_OPTIONS), pruning=PRUNING[args.pruning])


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
    bar = show_progress(
        total=affordable_rounds(config, sampling_rate=rate),
        initial=done,  # rounds recorded by an earlier, interrupted run
        desc=args.variant,
        unit="round",
        enabled=not args.no_progress,
    )

    def step(record: dict) -> None:
        bar.set_postfix(acc=f"{record['test_accuracy']:.3f}", eps=f"{record['epsilon']:.2f}")
        bar.update(1)

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
