"""``pruneleak demo``: exact leakage and bounds in bits, and SGI/GI's NMI, on the digits
(or ``--dataset faces``, ``patches``, or a file-based data set with ``--data-dir``).

Writes under ``--out``: ``demo.jsonl`` (one record per finished job: the attack jobs and
one per (p, s) of the leakage and estimator parts), the attacked images and their
reconstructions under ``reconstructions/`` (one ``.npz`` per attack job,
:mod:`sims.core.reconstructions`), the figure
``demo_leakage_bits.{png,pdf}`` (exact leakage, its bounds, Theorem 1 with its status, and
against the sample size behind it, the attacks' Fano bounds, identification success
beside the DP bound, the estimators against the exact value, in bits) and
the figure ``demo_bound_vs_nmi.{png,pdf}`` (Theorem 1 beside NMI and PSNR) and the figure
``demo_reconstructions.{png,pdf}`` (the targets on top, SGI's and GI's reconstructions per
p below, each with its PSNR). ``--quick`` starts from
:data:`sims.experiments.demo.QUICK` instead of the full defaults; options given explicitly
override either.
"""

from __future__ import annotations

from pruneleak.sims.cli import add_command, add_data_dir_argument, add_out_argument
from pruneleak.sims.cli.arguments import (
    finite_float,
    nonnegative_float,
    nonnegative_int,
    positive_int,
)
from pruneleak.sims.cli.options import declare_options
from pruneleak.sims.cli.summaries import SUMMARIES
from pruneleak.sims.core.outputs import output_dir
from pruneleak.sims.core.reconstructions import RECONSTRUCTIONS_DIR
from pruneleak.sims.core.store import ResultStore
from pruneleak.sims.experiments import leakage
from pruneleak.sims.experiments.demo import (
    PRUNING,
    QUICK,
    DemoConfig,
    format_table,
    plot_demo,
    reconstruction_rows,
    run_demo,
    run_demo_estimates,
    run_demo_leakage,
    summarize,
)
from pruneleak.sims.experiments.leakage import DATASET_SIZES
from pruneleak.sims.plots.figures import save_figure
from pruneleak.sims.plots.leakage import plot_leakage_bits
from pruneleak.sims.plots.reconstructions import plot_reconstruction_grid

FIGURE_NAME = "demo_bound_vs_nmi"
LEAKAGE_FIGURE_NAME = "demo_leakage_bits"
RECONSTRUCTIONS_FIGURE_NAME = "demo_reconstructions"
RESULTS_NAME = "demo.jsonl"


#: Command-line destination -> DemoConfig field, for every option of the configuration.
#: Their command-line defaults are None: an option not given takes the configuration's
#: default, or with --quick the value of QUICK.
OPTIONS = {
    "dataset": "dataset",
    "data_dir": "data_dir",
    "rates": "pruning_rates",
    "images": "num_images",
    "batch_size": "batch_size",
    "pruning": "pruning",
    "iterations": "attack_iterations",
    "stats_samples": "stats_samples",
    "seed": "seed",
    "device": "device",
    "leakage_rates": "leakage_rates",
    "noise": "noise_stds",
    "candidates": "candidates",
    "samples": "leakage_samples",
    "leakage_targets": "leakage_targets",
    "leakage_iterations": "leakage_iterations",
    "estimate_candidates": "estimate_candidates",
    "estimate_rates": "estimate_rates",
    "estimate_draws": "estimate_draws",
    "estimate_steps": "estimate_steps",
}


def _shown(value) -> str:
    return " ".join(f"{v:g}" for v in value) if isinstance(value, tuple) else str(value)


def _defaults(field: str) -> str:
    """The help text's note of a field's default, and of its --quick value if it has one."""
    default = DemoConfig.__dataclass_fields__[field].default
    note = f"default: {_shown(default)}"
    if field in QUICK:
        note += f"; --quick: {_shown(QUICK[field]) or 'none'}"
    return f" ({note})"


def register(subparsers) -> None:
    parser = add_command(
        subparsers,
        "demo",
        help=SUMMARIES["demo"],
        description=(
            "Sweep the base pruning rate p on one FedSGD update of a small model of the "
            "data set (the 8x8 digits by default): "
            "the exact leakage I(X; Y) of a target drawn from M candidates beside its "
            "ceiling, the Gaussian-channel bound, PriPrune's Theorem 1 (with its status) "
            "and the Fano lower bounds of SGI and GI, in bits, for several noise levels s; "
            "then SGI's and GI's reconstructions scored by NMI and PSNR beside Theorem 1, "
            "and drawn against the targets. "
            f"Writes {RESULTS_NAME}, the reconstructions and the figures under --out. "
            f"Resumable: jobs already in --out's {RESULTS_NAME} are skipped."
        ),
    )
    add_out_argument(parser, "demo")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="start from the minutes-on-a-CPU settings (sims.experiments.demo.QUICK) "
        "instead of the full defaults; options given explicitly override them",
    )
    parser.add_argument(
        "--dataset",
        choices=tuple(DATASET_SIZES),
        help="the images (faces: 25x25 grey LFW, patches: 32x32 RGB photograph tiles; "
        "mnist, fashion_mnist, cifar10 need --data-dir)" + _defaults("dataset"),
    )
    add_data_dir_argument(parser)
    parser.add_argument(
        "--rates",
        type=finite_float,
        nargs="+",
        metavar="P",
        help="pruning rates of the attack jobs: fractions of the weights pruned, in [0, 1]"
        + _defaults("pruning_rates"),
    )
    parser.add_argument(
        "--images",
        type=positive_int,
        help="target images per p and attack" + _defaults("num_images"),
    )
    parser.add_argument(
        "--batch-size",
        type=positive_int,
        metavar="B",
        help="client batch size B, in images (B > 1 needs --no-leakage)" + _defaults("batch_size"),
    )
    parser.add_argument(
        "--pruning", choices=PRUNING, help="base pruning scheme" + _defaults("pruning")
    )
    parser.add_argument(
        "--iterations",
        type=positive_int,
        help="L-BFGS iterations per attack" + _defaults("attack_iterations"),
    )
    parser.add_argument(
        "--stats-samples",
        type=positive_int,
        help="per-sample gradients behind Theorem 1's d* and Delta (default: 256, or the "
        f"images left beside the targets; --quick: {QUICK['stats_samples']})",
    )
    parser.add_argument(
        "--seed", type=nonnegative_int, help="seed of every draw" + _defaults("seed")
    )
    parser.add_argument("--device", help="auto, cpu, cuda or cuda:N" + _defaults("device"))
    group = parser.add_argument_group(
        "leakage part (B = 1, random pruning; sims.experiments.leakage)"
    )
    group.add_argument(
        "--leakage-rates",
        type=finite_float,
        nargs="+",
        metavar="P",
        help="pruning rates of the leakage part, fractions in [0, 1]" + _defaults("leakage_rates"),
    )
    group.add_argument(
        "--noise",
        type=nonnegative_float,
        nargs="+",
        metavar="S",
        help="standard deviations of the Gaussian noise on the kept coordinates, in the "
        "units of the weights (0: plain FedSGD)" + _defaults("noise_stds"),
    )
    group.add_argument(
        "--candidates",
        type=positive_int,
        metavar="M",
        help="candidate images the target is drawn from, in [2, the data set's size] "
        f"(default: all of them; --quick: {QUICK['candidates']})",
    )
    group.add_argument(
        "--samples",
        type=positive_int,
        help="Monte Carlo draws of the exact leakage per (p, s)" + _defaults("leakage_samples"),
    )
    group.add_argument(
        "--leakage-targets",
        type=positive_int,
        help="targets attacked per (p, s) for the Fano bounds" + _defaults("leakage_targets"),
    )
    group.add_argument(
        "--leakage-iterations",
        type=positive_int,
        help="L-BFGS iterations of those attacks" + _defaults("leakage_iterations"),
    )
    group.add_argument(
        "--no-leakage", action="store_true", help="skip the leakage part and its figure"
    )
    group.add_argument(
        "--estimate-candidates",
        type=positive_int,
        metavar="M",
        help="candidates of the estimator part: KSG, MINE and H-MINE against the exact "
        "value at the positive noise levels" + _defaults("estimate_candidates"),
    )
    group.add_argument(
        "--estimate-rates",
        type=finite_float,
        nargs="+",
        metavar="P",
        help="pruning rates of the estimator part, fractions in [0, 1]"
        + _defaults("estimate_rates"),
    )
    group.add_argument(
        "--estimate-draws",
        type=positive_int,
        help="(image, noisy release) pairs per estimate, at least 16" + _defaults("estimate_draws"),
    )
    group.add_argument(
        "--estimate-steps",
        type=positive_int,
        help="Adam steps of MINE and H-MINE" + _defaults("estimate_steps"),
    )
    group.add_argument("--no-estimates", action="store_true", help="skip the estimator part")
    parser.add_argument("--no-figure", action="store_true", help="skip writing the figures")
    # the demo's leakage part is a LeakageConfig of the demo's noise levels
    declare_options(parser, {"DemoConfig": OPTIONS, "LeakageConfig": {"noise": "noise_stds"}})
    parser.set_defaults(func=run)


def config_from_args(args) -> DemoConfig:
    """The demo's configuration: :data:`QUICK` with ``--quick``, then every option given
    (lists as tuples); ``--no-leakage`` and ``--no-estimates`` empty those rates."""
    given = {
        field: tuple(value) if isinstance(value, list) else value
        for dest, field in OPTIONS.items()
        if (value := getattr(args, dest)) is not None
    }
    if args.no_leakage:
        given["leakage_rates"] = ()
    if args.no_estimates:
        given["estimate_rates"] = ()
    return DemoConfig(**{**(QUICK if args.quick else {}), **given})


def run(args) -> int:
    config = config_from_args(args)
    out = output_dir(args.out)
    results = out / RESULTS_NAME
    store = ResultStore(results)
    reconstructions = out / RECONSTRUCTIONS_DIR
    summary = summarize(run_demo(config, store, reconstructions_dir=reconstructions))
    leakage_records = run_demo_leakage(config, store)
    estimate_records = run_demo_estimates(config, store)
    print(format_table(summary))
    if leakage_records:
        print()
        print(leakage.format_table(leakage_records))
    if estimate_records:
        print()
        print(leakage.format_estimates_table(estimate_records))
    if not args.no_figure:
        paths = []
        if leakage_records:
            figure = plot_leakage_bits(leakage_records, estimate_records)
            paths += save_figure(figure, LEAKAGE_FIGURE_NAME, directory=out)
        paths += save_figure(plot_demo(summary), FIGURE_NAME, directory=out)
        grid = reconstruction_rows(config, reconstructions)
        if grid is not None:
            title = f"{config.dataset}: targets and SGI / GI reconstructions (PSNR)"
            figure = plot_reconstruction_grid(*grid, title=title)
            paths += save_figure(figure, RECONSTRUCTIONS_FIGURE_NAME, directory=out)
        print("Figures: " + ", ".join(str(p) for p in paths))
    print(f"Results: {results}")
    return 0
