"""``pruneleak leakage``: exact leakage, valid bounds, Theorem 1 and attack lower bounds, in bits.

The release is one FedSGD step by default; ``--rounds``, ``--local-steps`` and
``--defense`` choose another release mechanism (:mod:`sims.releases`). One record per
(p, noise) in ``leakage.jsonl`` under ``--out``, resumable: a rerun with the same settings
reads finished (p, noise) back (:mod:`sims.experiments.leakage`).
Draws ``leakage_bits.{png,pdf}`` there (:func:`sims.plots.leakage.plot_leakage_bits`) and
``leakage_reconstructions.{png,pdf}``, the attacked targets above SGI's and GI's
reconstructions per (p, noise) (kept under ``reconstructions/``), and prints a table, or
with ``--json`` one JSON object per (p, noise) per line."""

from __future__ import annotations

import json

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
from pruneleak.sims.core.reconstructions import RECONSTRUCTIONS_DIR
from pruneleak.sims.core.store import ResultStore
from pruneleak.sims.defenses import DEFENSES, DefenseSpec
from pruneleak.sims.experiments.leakage import (
    DATASETS,
    MODELS,
    LeakageConfig,
    format_attacks_table,
    format_estimates_table,
    format_rounds_table,
    format_table,
    run_leakage,
)
from pruneleak.sims.plots.figures import save_figure
from pruneleak.sims.plots.leakage import leakage_reconstruction_rows, plot_leakage_bits
from pruneleak.sims.plots.reconstructions import plot_reconstruction_grid

RESULTS_NAME = "leakage.jsonl"

#: Command-line destination -> LeakageConfig field, for every option of the configuration.
OPTIONS = {
    "dataset": "dataset",
    "data_dir": "data_dir",
    "model": "model",
    "rounds": "rounds",
    "local_steps": "local_steps",
    "other_clients": "other_clients",
    "warmup_rounds": "warmup_rounds",
    "warmup_batch_size": "warmup_batch_size",
    "dp_noise": "dp_noise_multiplier",
    "dp_clip": "dp_clip",
    "randomness_draws": "randomness_draws",
    "rates": "rates",
    "noise": "noise_stds",
    "batch_size": "batch_size",
    "candidates": "candidates",
    "samples": "samples",
    "attack_targets": "attack_targets",
    "iterations": "attack_iterations",
    "stats_samples": "stats_samples",
    "theorem1_samples": "theorem1_sample_sizes",
    "estimate_draws": "estimate_draws",
    "estimate_steps": "estimate_steps",
    "lr": "client_lr",
    "seed": "seed",
    "device": "device",
}
#: Command-line destination -> DefenseSpec field.
DEFENSE_OPTIONS = {
    "defense": "name",
    "pseudo": "pseudo",
    "defense_rate": "rate",
    "lambda_acc": "lambda_acc",
    "lambda_pri": "lambda_pri",
    "lambda_sha": "lambda_sha",
    "alpha_lr": "alpha_lr",
}
FIGURE_NAME = "leakage_bits"
GRID_NAME = "leakage_reconstructions"


def register(subparsers) -> None:
    defaults = LeakageConfig()
    parser = add_command(
        subparsers,
        "leakage",
        help=SUMMARIES["leakage"],
        description=(
            "For each pruning rate p and Gaussian noise s on every value the server sees, "
            "compute the exact leakage I(X; Y) in bits of a target batch drawn uniformly "
            "from M candidates (B of them) through a pruned FL release: one FedSGD update "
            "by default, or the target's uploads over --rounds rounds of --local-steps "
            "steps, one round under a --defense, or one round of DP-SGD (--dp-noise); each "
            "value names its method (exact, Monte Carlo, certified bracket). Beside it: "
            "the ceiling, the Gaussian-channel bound and the DP bound on identification "
            "success where they hold, PriPrune's Theorem 1 / Corollary 1 (published, "
            "corrected) with its status, and the attacks' success, Fano bounds, NMI with "
            "its chance level and PSNR. Resumable: (p, noise) already "
            f"in --out's {RESULTS_NAME} are read back."
        ),
    )
    add_out_argument(parser, "leakage")
    parser.add_argument(
        "--dataset", choices=DATASETS, default=defaults.dataset, help="candidate images"
    )
    add_data_dir_argument(parser)
    parser.add_argument(
        "--model",
        choices=MODELS,
        default=defaults.model,
        help="the attacked model: the demo's small sigmoid network, the defense study's "
        "tanh Conv-1, or PriPrune's Conv-2 (6.6 M weights; the images are resized to 28x28)",
    )
    parser.add_argument(
        "--p",
        dest="rates",
        type=finite_float,
        nargs="+",
        default=list(defaults.rates),
        metavar="P",
        help="pruning rates: fractions of the weights pruned, in [0, 1]",
    )
    parser.add_argument(
        "--noise",
        type=nonnegative_float,
        nargs="+",
        default=list(defaults.noise_stds),
        metavar="S",
        help="standard deviations of the Gaussian noise on every value the server sees, in "
        "the units of the weights (0: plain FL)",
    )
    parser.add_argument(
        "--batch-size",
        type=positive_int,
        default=defaults.batch_size,
        metavar="B",
        help="client batch size, in images: the secret is a uniform B-subset of the M candidates",
    )
    parser.add_argument(
        "--candidates",
        type=positive_int,
        metavar="M",
        help="candidate images, at least 2 (default: the whole data set, 1797 digits; at "
        "most 256 for a release other than one FedSGD step)",
    )
    release = parser.add_argument_group("release mechanism (default: one FedSGD step)")
    release.add_argument(
        "--rounds",
        type=positive_int,
        default=defaults.rounds,
        metavar="T",
        help="rounds in which the target takes part with its batch; the release is its T "
        "uploads, and the leakage after 1, 2, 4, ... rounds is printed beside PriPrune's "
        "Corollary 1",
    )
    release.add_argument(
        "--local-steps",
        type=positive_int,
        default=defaults.local_steps,
        metavar="TAU",
        help="full-batch local steps per round (FedAvg on the batch)",
    )
    release.add_argument(
        "--other-clients",
        type=nonnegative_int,
        default=defaults.other_clients,
        metavar="K",
        help="clients beside the target in every round (and warm-up round), each with a "
        "fixed batch of B training images",
    )
    release.add_argument(
        "--defense",
        choices=DEFENSES,
        default="none",
        help="the target's client-side defense on the released round (PriPrune's Largest, "
        "Random, Mix at --defense-rate, or its adaptive Gumbel defense)",
    )
    release.add_argument(
        "--pseudo", action="store_true", help="Pseudo-Pruning instead of real pruning"
    )
    release.add_argument(
        "--defense-rate",
        type=finite_float,
        default=None,
        metavar="RATE",
        help="fraction of the base-kept weights the fixed defenses withhold, in [0, 1] "
        "(default: 0.3)",
    )
    for name, what in (
        ("lambda-acc", "eq. (16)'s lambda_acc (default: 5.0)"),
        ("lambda-pri", "eq. (16)'s lambda_pri (default: 15.0)"),
        ("lambda-sha", "eq. (16)'s lambda_sha (default: 2e-05)"),
        ("alpha-lr", "step size of alpha (default: the client's lr)"),
    ):
        release.add_argument(
            f"--{name}",
            type=finite_float,
            default=None,
            help=f"only with --defense priprune: PriPrune's {what}",
        )
    release.add_argument(
        "--warmup-rounds",
        type=nonnegative_int,
        default=defaults.warmup_rounds,
        metavar="R",
        help="rounds of FL on training batches before the released round (they give "
        "Pseudo-Pruning and PriPrune their state, and set the model's accuracy)",
    )
    release.add_argument(
        "--warmup-batch-size",
        type=positive_int,
        default=None,
        metavar="B",
        help="the clients' batch size in the warm-up rounds (default: --batch-size)",
    )
    release.add_argument(
        "--dp-noise",
        type=nonnegative_float,
        default=None,
        metavar="SIGMA",
        help="train the target with Fed-LTP's DP-SGD at this noise multiplier "
        "(--local-steps steps, clipping --dp-clip) (default: none, plain SGD)",
    )
    release.add_argument(
        "--dp-clip",
        type=positive_float,
        default=defaults.dp_clip,
        metavar="C",
        help="DP-SGD's per-example clipping norm",
    )
    release.add_argument(
        "--randomness-draws",
        type=positive_int,
        default=defaults.randomness_draws,
        help="Monte Carlo draws of a release with hidden randomness (PriPrune, DP-SGD)",
    )
    parser.add_argument(
        "--samples",
        type=positive_int,
        default=defaults.samples,
        help="Monte Carlo draws of the exact leakage",
    )
    parser.add_argument(
        "--attack-targets",
        type=positive_int,
        default=defaults.attack_targets,
        help="targets attacked per (p, noise) by SGI and GI (with a defense: SGI and the "
        "defense-aware SGI)",
    )
    parser.add_argument(
        "--iterations",
        type=positive_int,
        default=defaults.attack_iterations,
        help="L-BFGS iterations per attack",
    )
    parser.add_argument(
        "--stats-samples",
        type=positive_int,
        default=None,
        help="per-sample gradients behind Theorem 1's d* and Delta (default: min(256, M))",
    )
    parser.add_argument(
        "--theorem1-samples",
        type=positive_int,
        nargs="+",
        default=None,
        metavar="N",
        help="sample sizes at which Theorem 1 is re-evaluated (default: powers of two "
        "from 8 below M, and M)",
    )
    parser.add_argument(
        "--estimate-draws",
        type=nonnegative_int,
        default=defaults.estimate_draws,
        help="(image, noisy release) pairs for KSG, MINE and H-MINE per (p, noise > 0), "
        "0 or at least 16; 0 skips them (use them with a small --candidates)",
    )
    parser.add_argument(
        "--estimate-steps",
        type=positive_int,
        default=defaults.estimate_steps,
        help="Adam steps of MINE and H-MINE",
    )
    parser.add_argument(
        "--lr",
        type=positive_float,
        default=defaults.client_lr,
        help="the clients' learning rate r of PriPrune eq. (1)",
    )
    parser.add_argument(
        "--seed", type=nonnegative_int, default=defaults.seed, help="seed of every draw"
    )
    parser.add_argument("--device", default=defaults.device, help="auto, cpu, cuda or cuda:N")
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object per (p, noise) per line"
    )
    parser.add_argument(
        "--no-figure", action="store_true", help=f"skip writing {FIGURE_NAME}.{{png,pdf}}"
    )
    dp_options = {"dp_noise": "noise_multiplier", "dp_clip": "max_grad_norm"}
    declare_options(
        parser,
        {
            "LeakageConfig": OPTIONS,
            "DefenseSpec": DEFENSE_OPTIONS,
            "FixedDefense": {"defense_rate": "rate"},
            "PriPruneDefense": {
                d: f for d, f in DEFENSE_OPTIONS.items() if d.startswith(("lambda", "alpha"))
            },
            "DPUploadRelease": dp_options,
        },
    )
    parser.set_defaults(func=run)


def _defense_from_args(args) -> DefenseSpec:
    """The defense's configuration: the options given, the rest at their defaults (a
    value the chosen defense does not read is refused by :class:`DefenseSpec`)."""
    options = {
        field: value
        for dest, field in DEFENSE_OPTIONS.items()
        if (value := getattr(args, dest)) is not None and field not in ("name", "pseudo")
    }
    if args.defense == "none" and args.pseudo:
        raise ValueError("--pseudo needs a --defense (largest, random, mix or priprune).")
    if args.defense != "none":
        options["pseudo"] = args.pseudo
    return DefenseSpec(name=args.defense, **options)


def config_from_args(args) -> LeakageConfig:
    """The study's configuration from the parsed command line (lists as tuples)."""
    given = {}
    for dest, field in OPTIONS.items():
        value = getattr(args, dest)
        given[field] = tuple(value) if isinstance(value, list) else value
    return LeakageConfig(defense=_defense_from_args(args), **given)


def run(args) -> int:
    config = config_from_args(args)
    results = output_dir(args.out) / RESULTS_NAME
    kept = results.parent / RECONSTRUCTIONS_DIR
    records = run_leakage(config, ResultStore(results), reconstructions_dir=kept)
    figures = []
    if not args.no_figure:
        figures = save_figure(plot_leakage_bits(records), FIGURE_NAME, directory=results.parent)
        grid = leakage_reconstruction_rows(config, kept)
        if grid is not None:
            figure = plot_reconstruction_grid(
                *grid, title=f"{config.dataset}: targets and SGI / GI reconstructions (PSNR)"
            )
            figures += save_figure(figure, GRID_NAME, directory=results.parent)
    if args.json:
        for record in records:
            print(json.dumps(_public(record), sort_keys=True))
        return 0
    print(format_table(records))
    print()
    print(format_attacks_table(records))
    if any("by_rounds" in r for r in records):
        print()
        print(format_rounds_table(records))
    if any(any((r.get("estimates_bits") or {}).values()) for r in records):
        print()
        print(format_estimates_table(records))
    if figures:
        print("Figures: " + ", ".join(str(p) for p in figures))
    print(f"Results: {results}")
    return 0


def _public(record: dict) -> dict:
    """The record without the store's bookkeeping (``key``, ``config``)."""
    return {k: v for k, v in record.items() if k not in ("key", "config")}
