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
from pruneleak.sims.cli.config_options import (
    ConfigOption,
    add_config_options,
    config_values,
    fields_set_by,
)
from pruneleak.sims.cli.options import declare_options
from pruneleak.sims.cli.summaries import SUMMARIES
from pruneleak.sims.core.outputs import output_dir
from pruneleak.sims.defenses import DefenseSpec
from pruneleak.sims.experiments.leakage import (
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
from pruneleak.sims.store.reconstructions import RECONSTRUCTIONS_DIR
from pruneleak.sims.store.results import ResultStore

RESULTS_NAME = "leakage.jsonl"

#: The study's options, each setting a LeakageConfig field: the candidates and the grid,
OPTIONS = (
    ConfigOption("--dataset", "dataset"),
    ConfigOption("--model", "model"),
    ConfigOption("--p", "rates", metavar="P", dest="rates"),
    ConfigOption("--noise", "noise_stds", metavar="S"),
    ConfigOption("--batch-size", "batch_size", metavar="B"),
    ConfigOption("--candidates", "candidates", metavar="M"),
)
#: the release mechanism (beside its defense),
RELEASE_OPTIONS = (
    ConfigOption("--rounds", "rounds", metavar="T"),
    ConfigOption("--local-steps", "local_steps", metavar="TAU"),
    ConfigOption("--other-clients", "other_clients", metavar="K"),
    ConfigOption("--warmup-rounds", "warmup_rounds", metavar="R"),
    ConfigOption("--warmup-batch-size", "warmup_batch_size", metavar="B"),
    ConfigOption("--dp-noise", "dp_noise_multiplier", metavar="SIGMA"),
    ConfigOption("--dp-clip", "dp_clip", metavar="C"),
    ConfigOption("--randomness-draws", "randomness_draws"),
)
#: and the measurements.
STUDY_OPTIONS = (
    ConfigOption("--samples", "samples"),
    ConfigOption("--attack-targets", "attack_targets"),
    ConfigOption("--iterations", "attack_iterations"),
    ConfigOption("--stats-samples", "stats_samples"),
    ConfigOption("--theorem1-samples", "theorem1_sample_sizes", metavar="N"),
    ConfigOption("--estimate-draws", "estimate_draws"),
    ConfigOption("--estimate-steps", "estimate_steps"),
    ConfigOption("--lr", "client_lr"),
    ConfigOption("--seed", "seed"),
    ConfigOption("--device", "device"),
)
#: The target's defense, each option setting a DefenseSpec field (``--pseudo`` aside):
#: the fixed defenses',
FIXED_DEFENSE_OPTIONS = (
    ConfigOption("--defense", "name", dest="defense"),
    ConfigOption("--defense-rate", "rate", metavar="RATE"),
)
#: and PriPrune's adaptive defense's.
PRIPRUNE_OPTIONS = tuple(
    ConfigOption(f"--{name.replace('_', '-')}", name, note="(only with --defense priprune)")
    for name in ("lambda_acc", "lambda_pri", "lambda_sha", "alpha_lr")
)
FIGURE_NAME = "leakage_bits"
GRID_NAME = "leakage_reconstructions"


def register(subparsers) -> None:
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
    add_config_options(parser, LeakageConfig, OPTIONS)
    add_data_dir_argument(parser)
    release = parser.add_argument_group("release mechanism (default: one FedSGD step)")
    add_config_options(release, LeakageConfig, RELEASE_OPTIONS)
    add_config_options(release, DefenseSpec, FIXED_DEFENSE_OPTIONS)
    release.add_argument(
        "--pseudo", action="store_true", help="Pseudo-Pruning instead of real pruning"
    )
    add_config_options(release, DefenseSpec, PRIPRUNE_OPTIONS)
    add_config_options(parser, LeakageConfig, STUDY_OPTIONS)
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object per (p, noise) per line"
    )
    parser.add_argument(
        "--no-figure", action="store_true", help=f"skip writing {FIGURE_NAME}.{{png,pdf}}"
    )
    # the options whose values reach the configurations the study builds from its own
    declare_options(
        parser,
        {
            "LeakageConfig": {"data_dir": "data_dir"},
            "DefenseSpec": {"pseudo": "pseudo"},
            "FixedDefense": {"defense_rate": "rate"},
            "PriPruneDefense": fields_set_by(PRIPRUNE_OPTIONS),
            "DPUploadRelease": {"dp_noise": "noise_multiplier", "dp_clip": "max_grad_norm"},
        },
    )
    parser.set_defaults(func=run)


def _defense_from_args(args) -> DefenseSpec:
    """The defense's configuration from its options (a value the chosen defense does not
    read must stay at its default: :class:`DefenseSpec` refuses it otherwise)."""
    if args.defense == "none" and args.pseudo:
        raise ValueError("--pseudo needs a --defense (largest, random, mix or priprune).")
    options = config_values(args, (*FIXED_DEFENSE_OPTIONS, *PRIPRUNE_OPTIONS))
    if args.defense != "none":
        options["pseudo"] = args.pseudo
    return DefenseSpec(**options)


def config_from_args(args) -> LeakageConfig:
    """The study's configuration from the parsed command line."""
    values = config_values(args, (*OPTIONS, *RELEASE_OPTIONS, *STUDY_OPTIONS))
    return LeakageConfig(defense=_defense_from_args(args), data_dir=args.data_dir, **values)


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
