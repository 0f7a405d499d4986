"""``pruneleak leakage``: exact leakage, valid bounds, Theorem 1 and attack lower bounds, in bits.

One record per (p, noise) in ``leakage.jsonl`` under ``--out``, resumable: a rerun with
the same settings reads finished (p, noise) back (:mod:`sims.experiments.leakage`).
Draws ``leakage_bits.{png,pdf}`` there (:func:`sims.plots.leakage.plot_leakage_bits`) and
``leakage_reconstructions.{png,pdf}``, the attacked targets above SGI's and GI's
reconstructions per (p, noise) (kept under ``reconstructions/``), and prints a table, or
with ``--json`` one JSON object per (p, noise) per line."""

from __future__ import annotations

import json

from sims.cli import add_command, add_data_dir_argument, add_out_argument
from sims.cli.arguments import (
    finite_float,
    nonnegative_float,
    nonnegative_int,
    positive_int,
)
from sims.core.outputs import output_dir
from sims.core.reconstructions import RECONSTRUCTIONS_DIR
from sims.core.store import ResultStore
from sims.experiments.leakage import (
    DATASETS,
    LeakageConfig,
    format_estimates_table,
    format_table,
    run_leakage,
)
from sims.plots.figures import save_figure
from sims.plots.leakage import leakage_reconstruction_rows, plot_leakage_bits
from sims.plots.reconstructions import plot_reconstruction_grid

RESULTS_NAME = "leakage.jsonl"
FIGURE_NAME = "leakage_bits"
GRID_NAME = "leakage_reconstructions"


def register(subparsers) -> None:
    defaults = LeakageConfig()
    parser = add_command(
        subparsers,
        "leakage",
        help="exact I(X; Y) of a pruned update beside its bounds and attacks, in bits",
        description=(
            "For each pruning rate p and Gaussian noise s on the kept coordinates of one "
            "FedSGD update of the demo's model (on the digits by default), compute the "
            "exact leakage I(X; Y) "
            "of a target batch drawn uniformly from M candidates (B of them), the ceiling, "
            "the Gaussian-channel bound, the DP bound on identification success, "
            "PriPrune's Theorem 1 (published, corrected) with its status and against the "
            "sample size behind it, and Fano lower bounds from SGI and GI. Resumable: "
            "(p, noise) already "
            f"in --out's {RESULTS_NAME} are read back."
        ),
    )
    add_out_argument(parser, "leakage")
    parser.add_argument(
        "--dataset", choices=DATASETS, default=defaults.dataset, help="candidate images"
    )
    add_data_dir_argument(parser)
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
        help="standard deviations of the Gaussian noise on the kept coordinates, in the "
        "units of the weights (0: plain FedSGD)",
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
        help="candidate images, at least 2 (default: the whole data set, 1797 digits)",
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
        help="targets attacked per (p, noise) by SGI and GI",
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
        "--seed", type=nonnegative_int, default=defaults.seed, help="seed of every draw"
    )
    parser.add_argument("--device", default=defaults.device, help="auto, cpu, cuda or cuda:N")
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object per (p, noise) per line"
    )
    parser.add_argument(
        "--no-figure", action="store_true", help=f"skip writing {FIGURE_NAME}.{{png,pdf}}"
    )
    parser.set_defaults(func=run)


def config_from_args(args) -> LeakageConfig:
    """The study's configuration from the parsed command line."""
    return LeakageConfig(
        dataset=args.dataset,
        data_dir=args.data_dir,
        rates=tuple(args.rates),
        noise_stds=tuple(args.noise),
        batch_size=args.batch_size,
        candidates=args.candidates,
        samples=args.samples,
        attack_targets=args.attack_targets,
        attack_iterations=args.iterations,
        stats_samples=args.stats_samples,
        theorem1_sample_sizes=None
        if args.theorem1_samples is None
        else tuple(args.theorem1_samples),
        estimate_draws=args.estimate_draws,
        estimate_steps=args.estimate_steps,
        seed=args.seed,
        device=args.device,
    )


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
