"""PriPrune's paper-model p panels on one GPU, sized to fit the minutes a GPU is lent.

The campaign (arXiv:2310.19958, Fig. 2's p panel, with the paper's networks on offline
data; every job as ``pruneleak sweep`` runs it, :func:`sims.sweep.runner.run_job`):

* ``faces_conv2``: Conv-2 (LEAF's FEMNIST CNN, ReLU, max pooling, 6,480,770 weights) at
  28x28 on scikit-image's LFW faces (``benchmarks/sweeps/paper_faces_conv2.toml``), the six
  pruning schemes x p in {0.1, 0.3, 0.5, 0.7, 0.9}, B = 1, 8 targets, attacked by SGI and
  by GI;
* ``patches_vgg11``: VGG-11 on 32x32 RGB tiles of scikit-image's photographs
  (``benchmarks/sweeps/paper_patches_vgg11.toml``), the same p panel, SGI, 10 targets.

A job's record holds, per target, the exact bits ``I(batch; upload)`` of its round, Fano's
bound from the attacker's identifications, the NMI / PSNR of the reconstructions and
Theorem 1 as published and corrected (:mod:`sims.sweep.runner`, steps 1-6). Records are
appended to ``OUT/campaign.jsonl`` (:class:`sims.store.results.ResultStore`: one record per
finished job, a key at most once), so a killed or deadline-stopped campaign resumes where
it stopped; ``OUT/campaign.json`` says on which device, with which torch, at what size and
in how long each part ran; ``OUT/<panel>.png`` draws each panel.

Size. The paper runs 10,000 Adam iterations per attack. The campaign takes the largest
count of :data:`ITERATION_LADDER` whose estimated time fits ``--minutes`` (default
:data:`GPU_MINUTES`), by the timing model :data:`TIMING`: for each (model, attack),

    job seconds = fixed_s + iterations * per_iteration_s

(``fixed_s``: data, the FL round, the exact bits and Theorem 1's statistics; one attack
iteration of the job's ``attack_chunk`` targets at once: ``per_iteration_s``), and

    campaign seconds = sum over jobs of job seconds / (workers * PARALLEL_EFFICIENCY)

with ``workers`` processes sharing the GPU (a job is latency-bound: small kernels, one
image per target). Until a GPU has run it, :data:`TIMING` is a prior built from counted
operations per iteration and an assumed latency per operation; by it the paper's 10,000
iterations would take about two hours, so the campaign runs a few hundred.
``--calibrate`` measures ``fixed_s`` and ``per_iteration_s`` on the device at hand (one
job of each kind at two iteration counts: the slope and the intercept) and uses them
instead of :data:`TIMING`. No job starts after ``--deadline``
seconds; the jobs left are run by the next call.

    python benchmarks/gpu_campaign.py --dry-run    # CPU, reduced; prints the GPU estimate
    python benchmarks/gpu_campaign.py --out OUT --device cuda --calibrate --deadline 400

The estimate is printed last, as ``headline: estimated_gpu_minutes = value min``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import math
import multiprocessing
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from pruneleak.sims.core.runtime import torch_threads
from pruneleak.sims.store.results import ResultStore
from pruneleak.sims.sweep import load_config
from pruneleak.sims.sweep.grid import SweepConfig
from pruneleak.sims.sweep.job import AttackJob, job_key
from pruneleak.sims.sweep.runner import append_record, run_job, sweep_records

SWEEPS = Path(__file__).resolve().parent / "sweeps"

#: The minutes the campaign is sized for: a GPU is lent for about 10 minutes, start-up and
#: transfers included.
GPU_MINUTES = 8.0

#: Attack iterations the campaign may run, most first (the paper: 10,000).
ITERATION_LADDER = (10_000, 5_000, 3_000, 2_000, 1_000, 500, 300, 200, 100)

#: Processes sharing the GPU, and the fraction of ``workers`` times one job's speed they
#: reach together (a conservative guess until a campaign measures it: see
#: ``campaign.json``'s ``parallel_efficiency``).
WORKERS = 8
PARALLEL_EFFICIENCY = 0.5


@dataclass(frozen=True)
class Panel:
    """One panel of the campaign: the p grid of ``sweep`` (a TOML under
    ``benchmarks/sweeps``) attacked by each of ``attacks``."""

    name: str
    sweep: str
    attacks: tuple[str, ...]


CAMPAIGN = (
    Panel("faces_conv2", "paper_faces_conv2.toml", ("sgi", "gi")),
    Panel("patches_vgg11", "paper_patches_vgg11.toml", ("sgi",)),
)


@dataclass(frozen=True)
class JobTiming:
    """Seconds of one job on one GPU: ``fixed_s`` plus ``per_iteration_s`` per attack
    iteration (all of the job's targets at once)."""

    fixed_s: float
    per_iteration_s: float

    def seconds(self, iterations: int) -> float:
        return self.fixed_s + iterations * self.per_iteration_s


#: Seconds of one eager torch operation on an H100-class GPU when kernels are tiny (one
#: image per target): the launch and dispatch latency bounds an attack iteration, not
#: arithmetic. An assumption, until ``--calibrate`` measures the whole job.
SECONDS_PER_OPERATION = 7e-6

#: Torch operations per attack iteration of all of a job's targets, counted with
#: ``torch.profiler`` on the CPU (the count does not depend on the device): the job at two
#: iteration counts, the difference over the difference (2026-11-28, torch 2.13).
OPERATIONS_PER_ITERATION = {
    ("faces_conv2", "sgi"): 1_467,
    ("faces_conv2", "gi"): 1_324,
    ("patches_vgg11", "sgi"): 10_247,
}

#: Seconds of a job's fixed part (data, pruning, the FL round, the exact bits of every
#: target on the CPU, Theorem 1's statistics): an assumption, larger for VGG-11's 9.2
#: million weights (its targets' release matrices are 12 x 4.6 million float64 each).
FIXED_SECONDS = {"faces_conv2": 5.0, "patches_vgg11": 15.0}

#: The timing model, per (panel, attack): no GPU has run the campaign yet, so it is the
#: prior above; ``--calibrate`` replaces it by the device's measurement (``campaign.json``).
TIMING = {
    (panel, attack): JobTiming(
        fixed_s=FIXED_SECONDS[panel], per_iteration_s=operations * SECONDS_PER_OPERATION
    )
    for (panel, attack), operations in OPERATIONS_PER_ITERATION.items()
}

#: The reduced campaign of ``--dry-run``: small enough for two CPU cores in seconds. The
#: same panels and code paths at a smaller model (per panel), fewer targets and iterations,
#: two schemes at one rate.
DRY_RUN_MODELS = {
    "faces_conv2": {"model.width": 4, "model.hidden": 16},
    "patches_vgg11": {"model.name": "vgg4"},
}
DRY_RUN = {"targets": 2, "attack_chunk": 2, "stats_samples": 2, "device": "cpu"}
DRY_RUN_ITERATIONS = 3
DRY_RUN_GRID = {"pruning.scheme": ["random", "snip"], "pruning.p": [0.5]}
DRY_RUN_WORKERS = 2


def panel_sweep(panel: Panel, *, iterations: int, overrides: dict, grid: dict | None = None):
    """The campaign's sweep of ``panel``: its TOML's base and p grid (or ``grid``), one job
    per (scheme, p, attack), at ``iterations`` attack iterations, with ``overrides``."""
    source = load_config(SWEEPS / panel.sweep)
    (p_grid,) = [g for g in source.grids if g.get("panel") == "p"]
    axes = {**p_grid, **(grid or {}), "attack": list(panel.attacks)}
    base = {**source.base, "inversion.iterations": iterations, **overrides}
    return SweepConfig(name=f"gpu_campaign_{panel.name}", base=base, grids=(axes,))


def campaign_sweeps(iterations: int, device: str) -> dict[str, SweepConfig]:
    """The full campaign (module docstring) at ``iterations`` on ``device``, by panel."""
    return {
        p.name: panel_sweep(p, iterations=iterations, overrides={"device": device})
        for p in CAMPAIGN
    }


def dry_run_sweeps() -> dict[str, SweepConfig]:
    """The reduced campaign of ``--dry-run`` (:data:`DRY_RUN`), by panel."""
    return {
        panel.name: panel_sweep(
            panel,
            iterations=DRY_RUN_ITERATIONS,
            overrides={**DRY_RUN, **DRY_RUN_MODELS[panel.name]},
            grid=DRY_RUN_GRID,
        )
        for panel in CAMPAIGN
    }


def serial_seconds(sweeps: dict[str, SweepConfig], timing: dict, keys=None) -> float:
    """The timing model's seconds of the jobs of ``sweeps`` (those of ``keys`` only,
    unless None) run one after the other."""
    return sum(
        timing[(panel, job.attack)].seconds(job.inversion.iterations)
        for panel, sweep in sweeps.items()
        for job in sweep.jobs()
        if keys is None or job_key(job) in keys
    )


def estimate_seconds(
    sweeps: dict[str, SweepConfig], timing: dict, *, workers: int, efficiency: float
) -> float:
    """The timing model's campaign seconds on ``workers`` processes (module docstring)."""
    return serial_seconds(sweeps, timing) / (workers * efficiency)


def sized_iterations(timing: dict, minutes: float, *, workers: int, efficiency: float) -> int:
    """The largest count of :data:`ITERATION_LADDER` whose campaign fits ``minutes`` (the
    smallest when none does)."""
    for iterations in ITERATION_LADDER:
        sweeps = campaign_sweeps(iterations, "cuda")
        seconds = estimate_seconds(sweeps, timing, workers=workers, efficiency=efficiency)
        if seconds <= minutes * 60:
            return iterations
    return ITERATION_LADDER[-1]


def _run_one(job: AttackJob) -> dict:
    """One job in this process, on one torch thread (the GPU does the work)."""
    with torch_threads(1):
        return run_job(job)


def calibrate(device: str, iterations: tuple[int, int] = (50, 550)) -> dict:
    """:class:`JobTiming` per (panel, attack) measured on ``device``: one job (random
    pruning, p = 0.5, the full model and targets) at each of two iteration counts after a
    warm-up job; the slope is the per-iteration time, the intercept the fixed part."""
    timing = {}
    grid = {"pruning.scheme": ["random"], "pruning.p": [0.5]}
    for panel in CAMPAIGN:
        for attack in panel.attacks:
            seconds = []
            for n in (iterations[0], *iterations):  # the first is a warm-up
                sweep = panel_sweep(
                    panel,
                    iterations=n,
                    overrides={"device": device},
                    grid={**grid, "attack": [attack]},
                )
                job = sweep.jobs()[0]
                seconds.append(_run_one(job)["seconds"])
            slope = max(0.0, (seconds[2] - seconds[1]) / (iterations[1] - iterations[0]))
            fixed = max(0.0, seconds[1] - slope * iterations[0])
            timing[(panel.name, attack)] = JobTiming(fixed_s=fixed, per_iteration_s=slope)
            print(
                f"calibrated {panel.name} {attack}: fixed {fixed:.2f} s, "
                f"{slope * 1e3:.3f} ms per iteration",
                flush=True,
            )
    return timing


def run_campaign(
    sweeps: list[SweepConfig], store: ResultStore, *, workers: int, deadline: float
) -> dict:
    """Run the jobs of ``sweeps`` not yet in ``store`` on ``workers`` processes, none
    started after ``deadline`` (``time.monotonic()``); a failing job is reported and the
    others go on. Returns the keys run, failed (with their error) and left."""
    todo = [(s, j) for s in sweeps for j in s.jobs() if job_key(j) not in store]
    panels = {s.name: s.job_panels() for s in sweeps}
    ran, failed = [], {}
    context = multiprocessing.get_context("spawn")  # a forked CUDA context is unusable
    # the workers are this script's own processes: one torch thread each, for good
    pool = concurrent.futures.ProcessPoolExecutor(
        workers, mp_context=context, initializer=torch.set_num_threads, initargs=(1,)
    )
    with pool:
        running = {}
        while todo or running:
            while todo and len(running) < workers and time.monotonic() < deadline:
                sweep, job = todo.pop(0)
                running[pool.submit(run_job, job)] = (sweep, job)
            if not running:
                break
            finished, _ = concurrent.futures.wait(
                running, return_when=concurrent.futures.FIRST_COMPLETED
            )
            for future in finished:
                sweep, job = running.pop(future)
                label = f"{sweep.name} {job.attack} {job.pruning.scheme} p={job.pruning.p}"
                try:
                    record = future.result()
                except Exception as err:  # one job's failure must not lose the others
                    failed[job_key(job)] = f"{type(err).__name__}: {err}"
                    print(f"{label}: FAILED {failed[job_key(job)]}", flush=True)
                    continue
                append_record(store, sweep.name, job, record, panels=panels[sweep.name][job])
                ran.append(job_key(job))
                print(f"{label}: {record['seconds']:.1f} s", flush=True)
    return {"ran": ran, "failed": failed, "left": [job_key(j) for _, j in todo]}


#: What each campaign figure draws against p, left to right, and its axis label.
FIGURE_METRICS = {
    "psnr": "PSNR of the reconstruction (dB)",
    "exact_bits": "exact I(batch; upload) (bits)",
    "fano_bits": "Fano lower bound from identifications (bits)",
}


def plot_campaign(sweep: SweepConfig, records: list[dict], folder: Path) -> list[Path]:
    """One figure per attack of ``sweep``: each metric of :data:`FIGURE_METRICS` against
    p, one line per scheme (mean over targets, bars: their std), the secret's entropy
    ``log2 N`` dashed on the bits panels (:func:`sims.sweep.panels.panel_rows`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pruneleak.sims.sweep.panels import panel_rows

    ceiling = max(v for r in records for v in r["leakage_secrets_log2"])
    paths = []
    for attack in sorted({r["job"]["attack"] for r in records}):
        figure, axes = plt.subplots(1, len(FIGURE_METRICS), figsize=(13, 3.6))
        for ax, (metric, label) in zip(axes, FIGURE_METRICS.items(), strict=True):
            rows = [
                r
                for r in panel_rows(sweep, records, "p", metric=metric)
                if r["attack"] == attack and r[metric] is not None
            ]
            for scheme in dict.fromkeys(r["scheme"] for r in rows):
                mine = [r for r in rows if r["scheme"] == scheme]
                ax.errorbar(
                    [r["x"] for r in mine],
                    [r[metric] for r in mine],
                    yerr=[r[f"{metric}_std"] for r in mine],
                    marker="o",
                    capsize=2,
                    label=scheme,
                )
            if metric.endswith("_bits"):
                ax.axhline(ceiling, color="grey", linestyle="--", label="log2 N (all of it)")
            ax.set(xlabel="pruning rate p", ylabel=label)
        handles, labels = axes[0].get_legend_handles_labels()
        handles2, labels2 = axes[1].get_legend_handles_labels()
        extra = [(h, lab) for h, lab in zip(handles2, labels2, strict=True) if lab not in labels]
        figure.legend(
            [*handles, *(h for h, _ in extra)],
            [*labels, *(lab for _, lab in extra)],
            loc="center left",
            bbox_to_anchor=(1.0, 0.5),
            frameon=False,
        )
        figure.suptitle(f"{sweep.name}: {attack.upper()}, B = 1")
        figure.tight_layout()
        path = folder / f"{sweep.name}_{attack}.png"
        figure.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(figure)
        paths.append(path)
    return paths


def _device_name(device: str) -> str:
    if device.startswith("cuda") and torch.cuda.is_available():
        return torch.cuda.get_device_name()
    return f"CPU ({platform.processor() or platform.machine()})"


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("gpu_campaign_out"), help="output folder")
    parser.add_argument("--device", default="cuda", help="where the jobs run (default cuda)")
    parser.add_argument(
        "--minutes", type=float, default=GPU_MINUTES, help="GPU minutes to size the campaign for"
    )
    parser.add_argument("--workers", type=int, default=WORKERS, help="processes sharing the GPU")
    parser.add_argument(
        "--deadline", type=float, default=None, help="seconds after which no job starts"
    )
    parser.add_argument("--calibrate", action="store_true", help="measure the timing model first")
    parser.add_argument(
        "--dry-run", action="store_true", help="run a reduced campaign on the CPU (DRY_RUN)"
    )
    args = parser.parse_args(argv)
    if args.workers < 1 or args.minutes <= 0 or (args.deadline is not None and args.deadline < 0):
        parser.error("--workers must be >= 1, --minutes > 0 and --deadline >= 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    started = time.monotonic()
    args.out.mkdir(parents=True, exist_ok=True)
    device = "cpu" if args.dry_run else args.device
    timing = calibrate(device) if args.calibrate else TIMING
    model = {"workers": args.workers, "efficiency": PARALLEL_EFFICIENCY}
    iterations = sized_iterations(timing, args.minutes, **model)
    full = campaign_sweeps(iterations, "cuda")
    estimate = estimate_seconds(full, timing, **model)
    print(
        f"campaign: {sum(len(s.jobs()) for s in full.values())} jobs at {iterations} attack "
        f"iterations on {args.workers} GPU workers, estimated {estimate / 60:.2f} GPU minutes "
        f"(timing model: {'calibrated here' if args.calibrate else 'TIMING'})",
        flush=True,
    )
    sweeps = dry_run_sweeps() if args.dry_run else campaign_sweeps(iterations, device)
    store = ResultStore(args.out / "campaign.jsonl")
    begun = time.monotonic()
    deadline = math.inf if args.deadline is None else begun + args.deadline
    workers = DRY_RUN_WORKERS if args.dry_run else args.workers
    outcome = run_campaign(list(sweeps.values()), store, workers=workers, deadline=deadline)
    wall = time.monotonic() - begun
    figures = [
        path.name
        for sweep in sweeps.values()
        if (records := sweep_records(sweep, store))
        for path in plot_campaign(sweep, records, args.out)
    ]
    measured = serial_seconds(sweeps, timing, keys=set(outcome["ran"])) / (wall * workers)
    summary = {
        "device": _device_name(device),
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "dry_run": args.dry_run,
        "workers": workers,
        "iterations": next(iter(sweeps.values())).jobs()[0].inversion.iterations,
        "timing_model": {f"{panel}/{attack}": vars(t) for (panel, attack), t in timing.items()},
        "calibrated": args.calibrate,
        "estimated_gpu_minutes": estimate / 60,
        "campaign_seconds": wall,
        "total_seconds": time.monotonic() - started,
        # the timing model's serial seconds of the jobs run over the workers' seconds
        "parallel_efficiency": None if args.dry_run or not outcome["ran"] else measured,
        **{f"jobs_{k}": v for k, v in outcome.items()},
        "figures": figures,
    }
    (args.out / "campaign.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(
        f"ran {len(outcome['ran'])} jobs in {wall:.0f} s, {len(outcome['failed'])} failed, "
        f"{len(outcome['left'])} left for the next call; records in {store.path}"
    )
    print(f"headline: estimated_gpu_minutes = {estimate / 60:.2f} min")
    return 1 if outcome["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
