"""``pruneleak demo``: exact leakage and bounds in bits, and SGI/GI's NMI, on the digits.

Writes under ``--out``: ``demo.jsonl`` (one record per finished job: the attack jobs and
one per (p, s) of the leakage and estimator parts), the figure
``demo_leakage_bits.{png,pdf}`` (exact leakage, its bounds, Theorem 1 with its status, and
against the sample size behind it, the attacks' Fano bounds, identification success
beside the DP bound, the estimators against the exact value, in bits) and
the figure ``demo_bound_vs_nmi.{png,pdf}`` (Theorem 1 beside NMI and PSNR).
"""

from __future__ import annotations

from sims.cli import add_command, add_out_argument
from sims.cli.arguments import (
    finite_float,
    nonnegative_float,
    nonnegative_int,
    positive_int,
)
from sims.core.outputs import output_dir
from sims.core.store import ResultStore
from sims.experiments import leakage
from sims.experiments.demo import (
    DEFAULT_LEAKAGE_RATES,
    DEFAULT_NOISE_STDS,
    DEFAULT_RATES,
    PRUNING,
    DemoConfig,
    format_table,
    plot_demo,
    run_demo,
    run_demo_estimates,
    run_demo_leakage,
    summarize,
)
from sims.plots.figures import save_figure
from sims.plots.leakage import plot_leakage_bits

FIGURE_NAME = "demo_bound_vs_nmi"
LEAKAGE_FIGURE_NAME = "demo_leakage_bits"
RESULTS_NAME = "demo.jsonl"


def register(subparsers) -> None:
    parser = add_command(
        subparsers,
        "demo",
        help="exact leakage and bounds in bits, and SGI/GI's NMI, versus p on digits",
        description=(
            "Sweep the base pruning rate p on one FedSGD update of a small digits model: "
            "the exact leakage I(X; Y) of a target drawn from M candidates beside its "
            "ceiling, the Gaussian-channel bound, PriPrune's Theorem 1 (with its status) "
            "and the Fano lower bounds of SGI and GI, in bits, for several noise levels s; "
            "then SGI's and GI's reconstructions scored by NMI and PSNR beside Theorem 1. "
            f"Writes {RESULTS_NAME} and both figures under --out. Resumable: jobs already "
            f"in --out's {RESULTS_NAME} are skipped."
        ),
    )
    add_out_argument(parser, "demo")
    parser.add_argument(
        "--rates",
        type=finite_float,
        nargs="+",
        default=list(DEFAULT_RATES),
        metavar="P",
        help="pruning rates of the attack jobs: fractions of the weights pruned, in [0, 1]",
    )
    parser.add_argument(
        "--images",
        type=positive_int,
        default=DemoConfig.num_images,
        help="target images per p and attack",
    )
    parser.add_argument(
        "--batch-size",
        type=positive_int,
        default=DemoConfig.batch_size,
        metavar="B",
        help="client batch size B, in images (B > 1 needs --no-leakage)",
    )
    parser.add_argument(
        "--pruning", choices=PRUNING, default=DemoConfig.pruning, help="base pruning scheme"
    )
    parser.add_argument(
        "--iterations",
        type=positive_int,
        default=DemoConfig.attack_iterations,
        help="L-BFGS iterations per attack",
    )
    parser.add_argument(
        "--stats-samples",
        type=positive_int,
        default=DemoConfig.stats_samples,
        help="per-sample gradients behind Theorem 1's d* and Delta",
    )
    parser.add_argument(
        "--seed", type=nonnegative_int, default=DemoConfig.seed, help="seed of every draw"
    )
    parser.add_argument("--device", default=DemoConfig.device, help="auto, cpu, cuda or cuda:N")
    group = parser.add_argument_group(
        "leakage part (B = 1, random pruning; sims.experiments.leakage)"
    )
    group.add_argument(
        "--leakage-rates",
        type=finite_float,
        nargs="+",
        default=list(DEFAULT_LEAKAGE_RATES),
        metavar="P",
        help="pruning rates of the leakage part, fractions in [0, 1]",
    )
    group.add_argument(
        "--noise",
        type=nonnegative_float,
        nargs="+",
        default=list(DEFAULT_NOISE_STDS),
        metavar="S",
        help="standard deviations of the Gaussian noise on the kept coordinates, in the "
        "units of the weights (0: plain FedSGD)",
    )
    group.add_argument(
        "--candidates",
        type=positive_int,
        default=DemoConfig.candidates,
        metavar="M",
        help="candidate digits the target is drawn from, in [2, 1797] (1797: all)",
    )
    group.add_argument(
        "--samples",
        type=positive_int,
        default=DemoConfig.leakage_samples,
        help="Monte Carlo draws of the exact leakage per (p, s)",
    )
    group.add_argument(
        "--leakage-targets",
        type=positive_int,
        default=DemoConfig.leakage_targets,
        help="targets attacked per (p, s) for the Fano bounds",
    )
    group.add_argument(
        "--leakage-iterations",
        type=positive_int,
        default=DemoConfig.leakage_iterations,
        help="L-BFGS iterations of those attacks",
    )
    group.add_argument(
        "--no-leakage", action="store_true", help="skip the leakage part and its figure"
    )
    group.add_argument(
        "--estimate-candidates",
        type=positive_int,
        default=DemoConfig.estimate_candidates,
        metavar="M",
        help="candidates of the estimator part: KSG, MINE and H-MINE against the exact "
        "value at the positive noise levels",
    )
    group.add_argument(
        "--estimate-rates",
        type=finite_float,
        nargs="+",
        default=list(DemoConfig.estimate_rates),
        metavar="P",
        help="pruning rates of the estimator part, fractions in [0, 1]",
    )
    group.add_argument(
        "--estimate-draws",
        type=positive_int,
        default=DemoConfig.estimate_draws,
        help="(image, noisy release) pairs per estimate, at least 16",
    )
    group.add_argument(
        "--estimate-steps",
        type=positive_int,
        default=DemoConfig.estimate_steps,
        help="Adam steps of MINE and H-MINE",
    )
    group.add_argument("--no-estimates", action="store_true", help="skip the estimator part")
    parser.add_argument("--no-figure", action="store_true", help="skip writing the figures")
    parser.set_defaults(func=run)


def run(args) -> int:
    config = DemoConfig(
        pruning_rates=tuple(args.rates),
        num_images=args.images,
        batch_size=args.batch_size,
        pruning=args.pruning,
        attack_iterations=args.iterations,
        stats_samples=args.stats_samples,
        seed=args.seed,
        device=args.device,
        leakage_rates=() if args.no_leakage else tuple(args.leakage_rates),
        noise_stds=tuple(args.noise),
        candidates=args.candidates,
        leakage_samples=args.samples,
        leakage_targets=args.leakage_targets,
        leakage_iterations=args.leakage_iterations,
        estimate_candidates=args.estimate_candidates,
        estimate_rates=() if args.no_estimates else tuple(args.estimate_rates),
        estimate_draws=args.estimate_draws,
        estimate_steps=args.estimate_steps,
    )
    out = output_dir(args.out)
    results = out / RESULTS_NAME
    store = ResultStore(results)
    summary = summarize(run_demo(config, store))
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
        print("Figures: " + ", ".join(str(p) for p in paths))
    print(f"Results: {results}")
    return 0
