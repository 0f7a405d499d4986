"""``pruneleak sweep CONFIG``: run (or resume) an attack-study sweep of sims.sweep."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from pruneleak.sims import cli
from pruneleak.sims.cli import add_command, add_out_argument
from pruneleak.sims.cli.arguments import nonnegative_int
from pruneleak.sims.cli.options import declare_options
from pruneleak.sims.cli.summaries import SUMMARIES
from pruneleak.sims.core.outputs import output_dir
from pruneleak.sims.experiments.consistency import consistency_rows, format_table
from pruneleak.sims.experiments.pruning_rate_trend import format_trend_table, trend_rows
from pruneleak.sims.plots.defense import (
    defense_figures,
    is_defense_sweep,
)
from pruneleak.sims.plots.defense_arms import format_table2_beside_paper
from pruneleak.sims.plots.figures import save_figure
from pruneleak.sims.plots.reconstructions import (
    job_reconstruction_table,
    plot_reconstruction_table,
)
from pruneleak.sims.plots.sweep import plot_consistency, plot_panels, plot_trend
from pruneleak.sims.store.reconstructions import RECONSTRUCTIONS_DIR
from pruneleak.sims.store.results import ResultStore
from pruneleak.sims.sweep import job_key, load_config, packaged_configs, run_sweep
from pruneleak.sims.sweep.runner import EXECUTORS

STUDY_PANELS = ("p", "B", "d", "T")


def register(subparsers) -> None:
    parser = add_command(
        subparsers,
        "sweep",
        help=SUMMARIES["sweep"],
        description=(
            "Expand the grid of CONFIG (a packaged configuration: "
            f"{', '.join(packaged_configs())}; or a TOML file with name, [base], [[grid]] "
            "laid out like them), run every job not yet in the results store (one JSON "
            "line per finished job, so a killed sweep resumes), then print the "
            "bound-versus-attack consistency table of the panels p, B, d, T it has "
            "(leakage as NMI, PSNR, exact bits and Fano bits), and for a p panel Fig. 2's "
            "claim with intervals over the seeds. A sweep of PriPrune's defenses prints "
            "Table 2 and draws Fig. 4 and 5a-5d. With --executor "
            "ray each job is a Ray task reserving the configuration's [resources] (cpus, "
            "gpus) on this machine or a cluster; this process still writes the store."
        ),
    )
    parser.add_argument("config", help="packaged configuration name or TOML path")
    add_out_argument(parser, "sweep")
    parser.add_argument(
        "--results",
        type=Path,
        metavar="FILE",
        help="JSON-lines results store (default: OUT/<sweep name>.jsonl)",
    )
    parser.add_argument(
        "--device",
        help="override the jobs' device: auto, cpu, cuda or cuda:N (default: the configuration's)",
    )
    parser.add_argument(
        "--data-dir",
        metavar="DIR",
        help="override the jobs' folder of data files (default: $PRUNELEAK_DATA_DIR, else "
        "the configuration's)",
    )
    parser.add_argument(
        "--max-jobs",
        type=nonnegative_int,
        metavar="N",
        help="stop after N new jobs (default: run every job)",
    )
    parser.add_argument(
        "--executor",
        choices=EXECUTORS,
        default="local",
        help="run the jobs one after the other in this process, or as Ray tasks "
        "(needs pip install 'pruneleak[ray]')",
    )
    parser.add_argument(
        "--address",
        metavar="ADDR",
        help="with --executor ray: the Ray cluster, 'auto' (started by `ray start` on this "
        "machine) or ray://HOST:10001 (default: start a local Ray for this sweep)",
    )
    parser.add_argument(
        "--figures",
        action="store_true",
        help="write the figures to OUT, with one table of originals against reconstructions "
        "per panel (<name>_reconstructions_<panel>) from the images kept under "
        f"OUT/{RECONSTRUCTIONS_DIR}",
    )
    parser.add_argument("--no-table", action="store_true", help="skip the consistency table")
    parser.set_defaults(func=run)
    options = {"executor": "executor", "address": "address", "max_jobs": "max_jobs"}
    declare_options(parser, {"run_sweep": options, "run_on_ray": options})


def _figures(config, records, panels, rows):
    """(name, drawing function) of each figure: NMI per panel and its consistency (as
    before the bits were recorded), then the same for the exact and Fano bits where some
    record holds them."""
    out = [
        (f"{config.name}_panels_nmi", lambda: plot_panels(config, records, panels)),
        (f"{config.name}_consistency", lambda: plot_consistency(rows)),
    ]
    for metric in ("exact_bits", "fano_bits"):
        if any(v is not None for r in records for v in r.get(f"{metric}_per_target") or []):
            out += [
                (
                    f"{config.name}_panels_{metric}",
                    lambda m=metric: plot_panels(config, records, panels, metric=m),
                ),
                (
                    f"{config.name}_consistency_{metric}",
                    lambda m=metric: plot_consistency(rows, metric=m),
                ),
            ]
    return out


def run(args) -> int:
    config = load_config(args.config)
    data_dir = args.data_dir or os.environ.get("PRUNELEAK_DATA_DIR") or None
    overrides = {"device": args.device, "data_dir": data_dir}
    config = config.with_base(**{k: v for k, v in overrides.items() if v is not None})
    results = args.results or output_dir(args.out) / f"{config.name}.jsonl"
    reconstructions = output_dir(args.out) / RECONSTRUCTIONS_DIR
    records = run_sweep(
        config,
        ResultStore(results),
        max_jobs=args.max_jobs,
        executor=args.executor,
        address=args.address,
        reconstructions_dir=reconstructions,
    )
    print(f"{config.name}: {len(records)} of {len(config.jobs())} jobs recorded in {results}")
    by_panel = config.panels()
    panels = [p for p in STUDY_PANELS if p in by_panel]
    if len(records) == len(config.jobs()) and panels and (args.figures or not args.no_table):
        rows = consistency_rows(config, records, panels=panels)
        if not args.no_table:
            print(format_table(rows, schemes=False))
        if args.figures:
            for name, draw in _figures(config, records, panels, rows):
                paths = save_figure(draw(), name, directory=args.out)
                print("Figure: " + ", ".join(str(p) for p in paths))
    if args.figures:
        for panel, jobs in by_panel.items():
            table = job_reconstruction_table(jobs, reconstructions)
            if table is not None:
                title = (
                    f"{config.name}, panel {panel}: originals and reconstructions "
                    "(PSNR in dB under each)"
                )
                figure = plot_reconstruction_table(table, title=title)
                name = f"{config.name}_reconstructions_{panel}"
                paths = save_figure(figure, name, directory=args.out)
                print("Figure: " + ", ".join(str(p) for p in paths))
    if len(records) == len(config.jobs()) and "p" in panels:
        trend = trend_rows(config, records)
        if not args.no_table:
            print(format_trend_table(trend))
        if args.figures:
            paths = save_figure(
                plot_trend(trend), f"{config.name}_fig2_intervals", directory=args.out
            )
            print("Figure: " + ", ".join(str(p) for p in paths))
    # Table 2 and the defense figures read the jobs outside the study panels
    study = {job_key(job) for panel in panels for job in by_panel[panel]}
    defended = [r for r in records if r["key"] not in study]
    if len(records) == len(config.jobs()) and is_defense_sweep(defended):
        if not args.no_table:
            print(format_table2_beside_paper(defended))
        if args.figures:
            for name, draw in defense_figures(defended, config.name):
                paths = save_figure(draw(), name, directory=args.out)
                print("Figure: " + ", ".join(str(p) for p in paths))
    return 0


def main(argv: list[str] | None = None) -> int:
    """This subcommand alone (``python -m sims.cli.sweep CONFIG ...``), as ``pruneleak sweep``."""
    return cli.main(["sweep", *(sys.argv[1:] if argv is None else argv)], commands=("sweep",))


if __name__ == "__main__":
    sys.exit(main())
