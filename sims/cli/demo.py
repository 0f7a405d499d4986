"""``pruneleak demo``: exact leakage and bounds in bits, and SGI/GI's NMI, on the digits.

Writes under ``--out``: ``demo.jsonl`` (one record per finished job: the attack jobs and
one per (p, s) of the leakage and estimator parts), the figure
``demo_leakage_bits.{png,pdf}`` (exact leakage, its bounds, Theorem 1 with its status, and
against the sample size behind it, the attacks' Fano bounds, identification success
beside the DP bound, the estimators against the exact value, in bits) and
the figure ``demo_bound_vs_nmi.{png,pdf}`` (Theorem 1 beside NMI and PSNR).
"""

from __future__ import annotations

from sims.cli import add_out_argument
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


def _floats(values) -> str:
    return ", ".join(f"{v:g}" for v in values)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
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
        type=float,
        nargs="+",
        default=list(DEFAULT_RATES),
        metavar="P",
        help="pruning rates of the attack jobs (default: 0, 0.1, ..., 0.9, 0.95, 0.99)",
    )
    parser.add_argument("--images", type=int, default=8, help="target images per p and attack")
    parser.add_argument("--batch-size", type=int, default=1, help="client batch size B")
    parser.add_argument("--pruning", choices=PRUNING, default="random")
    parser.add_argument(
        "--iterations",
        type=int,
        default=DemoConfig.attack_iterations,
        help="L-BFGS iterations per attack",
    )
    parser.add_argument(
        "--stats-samples",
        type=int,
        default=DemoConfig.stats_samples,
        help="per-sample gradients behind d* and Delta (default: %(default)s)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    group = parser.add_argument_group(
        "leakage part (B = 1, random pruning; sims.experiments.leakage)"
    )
    group.add_argument(
        "--leakage-rates",
        type=float,
        nargs="+",
        default=list(DEFAULT_LEAKAGE_RATES),
        metavar="P",
        help=f"pruning rates of the leakage part (default: {_floats(DEFAULT_LEAKAGE_RATES)})",
    )
    group.add_argument(
        "--noise",
        type=float,
        nargs="+",
        default=list(DEFAULT_NOISE_STDS),
        metavar="S",
        help="noise standard deviations on the kept coordinates, in the units of the "
        f"weights (default: {_floats(DEFAULT_NOISE_STDS)})",
    )
    group.add_argument(
        "--candidates",
        type=int,
        default=DemoConfig.candidates,
        metavar="M",
        help="candidate digits (default: %(default)s, all)",
    )
    group.add_argument(
        "--samples",
        type=int,
        default=DemoConfig.leakage_samples,
        help="Monte Carlo draws of the exact leakage per (p, s) (default: %(default)s)",
    )
    group.add_argument(
        "--leakage-targets",
        type=int,
        default=DemoConfig.leakage_targets,
        help="targets attacked per (p, s) for the Fano bounds (default: %(default)s)",
    )
    group.add_argument(
        "--leakage-iterations",
        type=int,
        default=DemoConfig.leakage_iterations,
        help="L-BFGS iterations of those attacks (default: %(default)s)",
    )
    group.add_argument(
        "--no-leakage", action="store_true", help="skip the leakage part and its figure"
    )
    group.add_argument(
        "--estimate-candidates",
        type=int,
        default=DemoConfig.estimate_candidates,
        metavar="M",
        help="candidates of the estimator part: KSG, MINE and H-MINE against the exact "
        "value at the positive noise levels (default: %(default)s)",
    )
    group.add_argument(
        "--estimate-rates",
        type=float,
        nargs="+",
        default=list(DemoConfig.estimate_rates),
        metavar="P",
        help=f"pruning rates of the estimator part (default: {_floats(DemoConfig.estimate_rates)})",
    )
    group.add_argument(
        "--estimate-draws",
        type=int,
        default=DemoConfig.estimate_draws,
        help="(image, noisy release) pairs per estimate (default: %(default)s)",
    )
    group.add_argument(
        "--estimate-steps",
        type=int,
        default=DemoConfig.estimate_steps,
        help="Adam steps of MINE and H-MINE (default: %(default)s)",
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
