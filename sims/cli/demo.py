"""``pruneleak demo``: Theorem 1 bound versus SGI/GI leakage on the embedded digits.

Writes ``demo.jsonl`` (one record per finished job) and the figure
``demo_bound_vs_nmi.{png,pdf}`` under ``--out``.
"""

from __future__ import annotations

from sims.cli import add_out_argument
from sims.core.outputs import output_dir
from sims.core.store import ResultStore
from sims.experiments.demo import (
    DEFAULT_RATES,
    PRUNING,
    DemoConfig,
    format_table,
    plot_demo,
    run_demo,
    summarize,
)
from sims.plots.figures import save_figure

FIGURE_NAME = "demo_bound_vs_nmi"
RESULTS_NAME = "demo.jsonl"


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="sweep the pruning rate with SGI and GI on digits; plot bound vs NMI",
        description=(
            "Sweep the base pruning rate p, attack one FedSGD update per target image with "
            "SGI and GI, and plot PriPrune's Theorem 1 bound beside the measured NMI. "
            f"Writes {RESULTS_NAME} and the figure under --out. Resumable: jobs already "
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
        help="pruning rates (default: 0, 0.1, ..., 0.9, 0.95, 0.99)",
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
    parser.add_argument("--no-figure", action="store_true", help="skip writing the figure")
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
    )
    out = output_dir(args.out)
    results = out / RESULTS_NAME
    records = run_demo(config, ResultStore(results))
    summary = summarize(records)
    print(format_table(summary))
    if not args.no_figure:
        paths = save_figure(plot_demo(summary), FIGURE_NAME, directory=out)
        print("Figure: " + ", ".join(str(p) for p in paths))
    print(f"Results: {results}")
    return 0
