"""``pruneleak demo``: exact leakage and bounds in bits, and SGI/GI's NMI, on the digits
(or ``--dataset faces``, ``patches``, or a file-based data set with ``--data-dir``).

Writes under ``--out``: ``demo.jsonl`` (one record per finished job: the attack jobs and
one per (p, s) of the leakage and estimator parts), the attacked images and their
reconstructions under ``reconstructions/`` (one ``.npz`` per attack job,
:mod:`sims.store.reconstructions`), the figure
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
from pruneleak.sims.cli.config_options import ConfigOption, add_config_options, config_values
from pruneleak.sims.cli.options import declare_options
from pruneleak.sims.cli.summaries import SUMMARIES
from pruneleak.sims.core.outputs import output_dir
from pruneleak.sims.experiments import leakage
from pruneleak.sims.experiments.demo import (
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
from pruneleak.sims.plots.figures import save_figure
from pruneleak.sims.plots.leakage import plot_leakage_bits
from pruneleak.sims.plots.reconstructions import plot_reconstruction_grid
from pruneleak.sims.store.reconstructions import RECONSTRUCTIONS_DIR
from pruneleak.sims.store.results import ResultStore

FIGURE_NAME = "demo_bound_vs_nmi"
LEAKAGE_FIGURE_NAME = "demo_leakage_bits"
RECONSTRUCTIONS_FIGURE_NAME = "demo_reconstructions"
RESULTS_NAME = "demo.jsonl"


#: The demo's options, each setting a DemoConfig field: the attack jobs',
OPTIONS = (
    ConfigOption("--dataset", "dataset"),
    ConfigOption("--rates", "pruning_rates", metavar="P"),
    ConfigOption("--images", "num_images"),
    ConfigOption("--batch-size", "batch_size", metavar="B", note="(B > 1 needs --no-leakage)"),
    ConfigOption("--pruning", "pruning"),
    ConfigOption("--iterations", "attack_iterations"),
    ConfigOption("--stats-samples", "stats_samples"),
    ConfigOption("--seed", "seed"),
    ConfigOption("--device", "device"),
)
#: the leakage part's,
LEAKAGE_OPTIONS = (
    ConfigOption("--leakage-rates", "leakage_rates", metavar="P"),
    ConfigOption("--noise", "noise_stds", metavar="S"),
    ConfigOption("--candidates", "candidates", metavar="M"),
    ConfigOption("--samples", "leakage_samples"),
    ConfigOption("--leakage-targets", "leakage_targets"),
    ConfigOption("--leakage-iterations", "leakage_iterations"),
)
#: and the estimator part's. Each is None unless given: the configuration's default
#: applies, or with --quick the value of QUICK.
ESTIMATE_OPTIONS = (
    ConfigOption("--estimate-candidates", "estimate_candidates", metavar="M"),
    ConfigOption("--estimate-rates", "estimate_rates", metavar="P"),
    ConfigOption("--estimate-draws", "estimate_draws"),
    ConfigOption("--estimate-steps", "estimate_steps"),
)


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
    quick = ("--quick", QUICK)
    add_config_options(parser, DemoConfig, OPTIONS, preset=quick)
    add_data_dir_argument(parser)
    group = parser.add_argument_group(
        "leakage part (B = 1, random pruning; sims.experiments.leakage)"
    )
    add_config_options(group, DemoConfig, LEAKAGE_OPTIONS, preset=quick)
    group.add_argument(
        "--no-leakage", action="store_true", help="skip the leakage part and its figure"
    )
    add_config_options(group, DemoConfig, ESTIMATE_OPTIONS, preset=quick)
    group.add_argument("--no-estimates", action="store_true", help="skip the estimator part")
    parser.add_argument("--no-figure", action="store_true", help="skip writing the figures")
    # data_dir is the demo's too; its leakage part is a LeakageConfig of its noise levels
    declare_options(
        parser,
        {"DemoConfig": {"data_dir": "data_dir"}, "LeakageConfig": {"noise": "noise_stds"}},
    )
    parser.set_defaults(func=run)


def config_from_args(args) -> DemoConfig:
    """The demo's configuration: :data:`QUICK` with ``--quick``, then every option given;
    ``--no-leakage`` and ``--no-estimates`` empty those rates."""
    options = (*OPTIONS, *LEAKAGE_OPTIONS, *ESTIMATE_OPTIONS)
    given = config_values(args, options, given_only=True)
    if args.data_dir is not None:
        given["data_dir"] = args.data_dir
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
