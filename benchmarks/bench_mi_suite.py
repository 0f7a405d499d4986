"""Benchmark of the registered MI estimators on the task suite with known truth (issue 14).

Every estimator of ``estimators.registry`` (default: all; a name whose module cannot be
imported is skipped with a note) runs at its defaults on every task of
``estimators.tasks.suite.DEFAULT_SUITE`` (21 tasks: normal, Student-t, transformed
normals, mixtures, batch-and-gradient channels), on ``--n-samples`` draws (5,000) of one
``--seed``. H-MINE reads ``X`` as ``(n, B, ...)`` batches: a non-batch task's ``X`` of shape
``(n, d)`` is given to it as ``(n, 1, d)``; the other estimators flatten ``X``.

Per (task, estimator): the estimate and its interval (nats), ``solved`` (within a factor
1.5 of the truth: ``truth / 1.5 <= value <= 1.5 truth``), ``covered`` (the interval
contains the truth), the number of warnings and the seconds of ``estimate()`` alone
(sampling excluded). Per estimator: solved and covered counts over the tasks of the run
(a job that failed or timed out counts as neither), median and total seconds.

Speed. For the MINE family (mine, hmine, infonce, nwj, smile) a minimal reference loop
(:func:`reference_dv_training`, written here after the BMI library's defaults: concat MLP
critic with hidden layers (16, 8) and ReLU, batch 256, Adam lr 1e-3, 10,000 steps, the DV
bound on the all-pairs score matrix of each batch, no validation, no early stopping) is
timed on ``--reference-tasks`` in the same run and on the same device and thread count:
a 100-step warm-up, then the median of ``--reference-repeats`` (3) full trainings. MINE
and H-MINE are compared with the loop whose product-of-marginals samples are one shuffled
re-pairing of the batch (BMI's MINE), InfoNCE, NWJ and SMILE with the all-pairs loop
(BMI's InfoNCE, NWJ and DV estimators): ``PEER_PAIRING``. The
ratio printed is the estimator's time on that task / the reference median; the headline is
the largest ratio over the reference tasks. The estimator's time is its single, cold run
in the suite (no warm-up), so the comparison leans against the estimator.

Jobs run in child processes (``--workers`` at a time, default 1; fork start method), each
stopped after ``--timeout`` seconds. Each finished job, failed or not, is one record of
``OUT/records.jsonl`` (``sims.store.results.ResultStore``, keyed by task, estimator, seed and
sample size), so an interrupted run resumes where it stopped; delete that file to start
over. Outputs in ``--out`` (default ``results/mi_suite/``, ignored by git; tracked files
are never overwritten): ``results.csv``, ``results.json`` and ``ratio_heatmap.png``
(estimate / truth, tasks x estimators, the solved band outlined).

Run ``python benchmarks/bench_mi_suite.py`` (full: hours on one CPU thread with every
estimator), ``--quick`` (4 tasks, 1,000 samples, no reference timing) or a part
(``--estimators ksg mine --tasks normal-1v1 student-1v1-dof1``). The last lines are
``headline: name = value unit``.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import inspect
import json
import math
import multiprocessing
import os
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, is_dataclass
from functools import partial
from multiprocessing.connection import wait
from pathlib import Path

import numpy as np

from pruneleak.estimators.registry import ESTIMATORS, get_estimator
from pruneleak.estimators.tasks.suite import get_task, task_names
from pruneleak.sims.core.runtime import fingerprint
from pruneleak.sims.store.results import ResultStore

#: Factor of the "solved" band: truth / SOLVED_FACTOR <= value <= SOLVED_FACTOR * truth.
SOLVED_FACTOR = 1.5
#: Pairing of the reference loop each estimator is timed against: BMI's MINE scores each
#: pair and one shuffled re-pairing of the batch; its InfoNCE / NWJ / DV score all pairs.
PEER_PAIRING = {
    "mine": "shuffled",
    "hmine": "shuffled",
    "infonce": "all",
    "nwj": "all",
    "smile": "all",
}
#: Estimators trained by a neural bound, compared with the reference loop.
MINE_FAMILY = tuple(PEER_PAIRING)
#: Estimators that read X as (n, B, ...) batches (protocol of estimators.registry).
BATCH_INPUT = ("hmine",)
DEFAULT_OUT = Path("results") / "mi_suite"
QUICK_TASKS = ("normal-1v1", "student-1v1-dof1", "mixture-x-1v1", "batch-B2-dx5-dg5-s0.5")
#: One task of each input kind: a 5 + 5 dimensional normal and the largest batch channel.
REFERENCE_TASKS = ("normal-dense-5x5", "batch-B10-dx5-dg10-s0.5")
REFERENCE = {
    "hidden": (16, 8),
    "batch_size": 256,
    "learning_rate": 1e-3,
    "steps": 10_000,
    "warmup_steps": 100,
}


def solved(value: float | None, truth: float, factor: float = SOLVED_FACTOR) -> bool:
    """Whether ``truth / factor <= value <= factor * truth`` (None, a failed job: False).

    Examples
    --------
    >>> solved(1.5, 1.0), solved(1 / 1.5, 1.0), solved(1.51, 1.0), solved(-0.1, 1.0)
    (True, True, False, False)
    """
    if value is None or not math.isfinite(value):
        return False
    return truth / factor <= value <= factor * truth


def covered(low: float | None, high: float | None, truth: float) -> bool:
    """Whether ``low <= truth <= high`` (None, a failed job: False)."""
    return low is not None and high is not None and low <= truth <= high


def estimator_settings(estimator) -> dict:
    """An estimator's settings as JSON values: its public attributes, dataclasses (such as
    a ``TrainingConfig``) expanded; ``device`` is left out (it changes where, not what)."""
    settings = {
        key: asdict(value) if is_dataclass(value) else value
        for key, value in vars(estimator).items()
        if not key.startswith("_") and key != "device"
    }
    return json.loads(json.dumps(settings, sort_keys=True, default=str))


def job_key(kind: str, task: str, name: str, seed: int, n_samples: int, settings) -> str:
    """The record key of one job: what it computed, not where. ``settings`` enter as a
    digest, so a run with other estimator settings (new defaults, say) into the same store
    computes its own records instead of reusing the old ones."""
    return f"{kind}|{task}|{name}|seed={seed}|n={n_samples}|settings={fingerprint(settings)}"


# ---------------------------------------------------------------- jobs in child processes


@dataclass(frozen=True)
class Job:
    """One unit of work: ``run()`` returns a JSON-able dict of results; ``fields`` are stored
    with them in the job's record."""

    key: str
    fields: Mapping[str, object]
    run: Callable[[], dict]


def _child(run: Callable[[], dict], conn) -> None:
    # Ctrl-C is the parent's to handle (it kills the running jobs, which are then not
    # recorded and run again on resume), not a failure of this job to record.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        result = ("ok", run())
    except Exception as err:  # reported in the record, never lost
        result = ("error", f"{type(err).__name__}: {err}")
    try:
        conn.send(result)
    finally:
        conn.close()


def _record(job: Job, status: str, result: dict | None, error: str | None, elapsed: float):
    record = {"key": job.key, **job.fields, "status": status, "error": error}
    record["wall_seconds"] = elapsed
    record.update(result or {})
    return record


def run_jobs(
    jobs: Sequence[Job],
    store: ResultStore,
    *,
    workers: int = 1,
    timeout: float | None = None,
    log: Callable[[str], None] = print,
) -> int:
    """Run the jobs whose key ``store`` lacks, ``workers`` at a time, one record each.

    Each job runs in a forked child process, killed after ``timeout`` seconds (None: no
    limit); its record holds ``status`` "ok", "error" (the exception's message, or the exit
    code of a child that died) or "timeout". Records are appended by this process only, as
    each job ends. Returns the number of jobs run (finished ones are skipped).
    """
    done = store.done()
    todo = [job for job in jobs if job.key not in done]
    if len(todo) < len(jobs):
        log(f"# resuming: {len(jobs) - len(todo)} finished jobs skipped ({store.path})")
    if "fork" not in multiprocessing.get_all_start_methods():  # pragma: no cover - Windows
        log("# no fork start method here: jobs run in this process, without timeouts")
        for job in todo:
            start = time.perf_counter()
            try:
                record = _record(job, "ok", job.run(), None, time.perf_counter() - start)
            except Exception as err:
                message = f"{type(err).__name__}: {err}"
                record = _record(job, "error", None, message, time.perf_counter() - start)
            store.append(record)
        return len(todo)
    context = multiprocessing.get_context("fork")
    pending = list(reversed(todo))
    running: dict[str, tuple] = {}
    try:
        _schedule(pending, running, context, store, workers=workers, timeout=timeout, log=log)
    finally:  # an interrupted run (Ctrl-C) leaves no job running behind it
        for _, process, receiver, _ in running.values():
            process.kill()
            process.join()
            receiver.close()
    return len(todo)


def _schedule(pending, running, context, store, *, workers, timeout, log) -> None:
    while pending or running:
        while pending and len(running) < workers:
            job = pending.pop()
            receiver, sender = context.Pipe(duplex=False)
            process = context.Process(target=_child, args=(job.run, sender))
            process.start()
            sender.close()
            running[job.key] = (job, process, receiver, time.perf_counter())
        wait([entry[2] for entry in running.values()], timeout=0.2)
        for key, (job, process, receiver, start) in list(running.items()):
            elapsed = time.perf_counter() - start
            record = None
            if receiver.poll():
                try:
                    status, payload = receiver.recv()
                except EOFError:  # the child died before it could answer
                    process.join()
                    status, payload = "error", f"the job's process exited with {process.exitcode}"
                process.join()
                if status == "ok":
                    record = _record(job, "ok", payload, None, elapsed)
                else:
                    record = _record(job, "error", None, payload, elapsed)
            elif not process.is_alive():
                message = f"the job's process exited with {process.exitcode} without a result"
                record = _record(job, "error", None, message, elapsed)
            elif timeout is not None and elapsed > timeout:
                process.kill()
                process.join()
                record = _record(job, "timeout", None, f"stopped after {timeout:g} s", elapsed)
            if record is not None:
                receiver.close()
                del running[key]
                store.append(record)
                log(f"# done {key}: {record['status']} ({elapsed:.1f} s)")


# ---------------------------------------------------------------- estimator jobs


def _json_safe(value):
    """``value`` if JSON can hold it as itself (finite numbers, str, bool, None), else str."""
    if isinstance(value, bool | str | int) or value is None:
        return value
    if isinstance(value, float | np.floating):
        return float(value) if math.isfinite(value) else str(float(value))
    if isinstance(value, np.integer):
        return int(value)
    return str(value)


def _set_threads(threads: int) -> None:
    import torch  # a child process: its thread count dies with it

    torch.set_num_threads(threads)


def estimate_job(
    task_name: str,
    estimator_name: str,
    factory: Callable[[], object],
    *,
    n_samples: int,
    seed: int,
    threads: int,
) -> dict:
    """Sample the task, run ``factory().estimate(x, y, seed=seed)``, time ``estimate`` alone."""
    task = get_task(task_name)
    x, y = task.sample(n_samples, seed)
    if estimator_name in BATCH_INPUT and x.ndim == 2:
        x = x[:, None, :]  # a batch of one input
    _set_threads(threads)
    estimator = factory()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # each estimate carries its warnings
        start = time.perf_counter()
        estimate = estimator.estimate(x, y, seed=seed)
        seconds = time.perf_counter() - start
    return {
        "value": float(estimate.value),
        "ci_low": float(estimate.ci_low),
        "ci_high": float(estimate.ci_high),
        "confidence": float(estimate.confidence),
        "warnings": [str(message) for message in estimate.warnings],
        "n_warnings": len(estimate.warnings),
        "diagnostics": {str(k): _json_safe(v) for k, v in dict(estimate.diagnostics).items()},
        "seconds": seconds,
    }


# ---------------------------------------------------------------- the reference loop


def reference_dv_training(
    x: np.ndarray,
    y: np.ndarray,
    *,
    steps: int = REFERENCE["steps"],
    batch_size: int = REFERENCE["batch_size"],
    learning_rate: float = REFERENCE["learning_rate"],
    hidden: tuple[int, ...] = REFERENCE["hidden"],
    pairing: str = "all",
    seed: int = 0,
    device: str = "cpu",
) -> float:
    """Train a concat-MLP critic on the DV bound for ``steps`` steps; the final bound (nats).

    A deliberately plain loop, the yardstick of the speed comparison: ``T(x, y) =
    MLP([x, y])`` with ReLU hidden layers, each step a uniform minibatch of ``batch_size``
    pairs, the score matrix ``S_ij = T(x_i, y_j)`` of all pairs, the Donsker-Varadhan bound
    ``mean_i S_ii - log mean_{i != j} exp(S_ij)`` (Belghazi et al., "MINE", ICML 2018,
    eq. 10; the off-diagonal pairs as samples of the product of marginals), Adam. With
    ``pairing="shuffled"`` (BMI's MINE) the product of marginals is sampled by one random
    re-pairing of the batch instead, ``log mean_i exp(T(x_i, y_{pi(i)}))``. No
    validation split, no early stopping, no moving average. The returned value is the bound
    averaged over 10 fresh minibatches of the training data after training.
    """
    import torch
    from torch import nn

    device = torch.device(device)
    generator = torch.Generator().manual_seed(seed)
    x = torch.as_tensor(x.reshape(len(x), -1), dtype=torch.float32, device=device)
    y = torch.as_tensor(y.reshape(len(y), -1), dtype=torch.float32, device=device)
    n, dim_x, dim_y = len(x), x.shape[1], y.shape[1]
    batch = min(batch_size, n)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        layers, width = [], dim_x + dim_y
        for size in hidden:
            layers += [nn.Linear(width, size), nn.ReLU()]
            width = size
        critic = nn.Sequential(*layers, nn.Linear(width, 1)).to(device)
    optimizer = torch.optim.Adam(critic.parameters(), lr=learning_rate)
    off_diagonal = ~torch.eye(batch, dtype=torch.bool, device=device)
    log_pairs = math.log(batch * (batch - 1))

    def bound(index: torch.Tensor) -> torch.Tensor:
        xb, yb = x[index], y[index]
        if pairing == "shuffled":
            shuffled = yb[torch.randperm(batch, generator=generator).to(device)]
            joint = critic(torch.cat([xb, yb], dim=1)).squeeze(-1)
            marginal = critic(torch.cat([xb, shuffled], dim=1)).squeeze(-1)
            return joint.mean() - (torch.logsumexp(marginal, 0) - math.log(batch))
        pairs = torch.cat(
            [
                xb[:, None, :].expand(batch, batch, dim_x),
                yb[None, :, :].expand(batch, batch, dim_y),
            ],
            dim=-1,
        )
        scores = critic(pairs).squeeze(-1)  # scores[i, j] = T(x_i, y_j)
        return scores.diagonal().mean() - (torch.logsumexp(scores[off_diagonal], 0) - log_pairs)

    for _ in range(steps):
        index = torch.randint(n, (batch,), generator=generator).to(device)
        loss = -bound(index)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        values = [
            bound(torch.randint(n, (batch,), generator=generator).to(device)) for _ in range(10)
        ]
    return float(torch.stack(values).mean())


def reference_job(
    task_name: str,
    *,
    n_samples: int,
    seed: int,
    steps: int,
    repeats: int,
    warmup_steps: int,
    pairing: str,
    device: str,
    threads: int,
) -> dict:
    """Warm-up, then ``repeats`` timed trainings of :func:`reference_dv_training`."""
    from pruneleak.estimators.device import resolve_device

    device = str(resolve_device(device))
    _set_threads(threads)
    x, y = get_task(task_name).sample(n_samples, seed)
    train = partial(reference_dv_training, x, y, pairing=pairing, device=device)
    train(steps=warmup_steps, seed=seed)
    seconds, values = [], []
    for repeat in range(repeats):
        start = time.perf_counter()
        values.append(train(steps=steps, seed=seed + repeat))
        seconds.append(time.perf_counter() - start)
    return {
        "value": float(np.median(values)),
        "values": values,
        "seconds": float(np.median(seconds)),
        "all_seconds": seconds,
        "steps": steps,
        "pairing": pairing,
        "device": device,
    }


# ---------------------------------------------------------------- the run


def available_estimators(
    names: Sequence[str], *, device: str | None, log: Callable[[str], None] = print
) -> dict[str, Callable[[], object]]:
    """Factories of the registry estimators that import; a note for each one that does not.

    ``device`` is passed to the estimators whose constructor takes a ``device`` setting.
    """
    factories = {}
    for name in names:
        module, cls = ESTIMATORS[name].split(":")
        try:
            estimator_class = getattr(importlib.import_module(module), cls)
        except Exception as err:  # not importable yet, or broken: skip it, say why
            log(
                f"# skipped estimator {name!r}: cannot import {ESTIMATORS[name]} "
                f"({type(err).__name__}: {err})"
            )
            continue
        params = {}
        if device is not None and "device" in inspect.signature(estimator_class).parameters:
            params["device"] = device
        factories[name] = partial(get_estimator, name, **params)
    return factories


def build_jobs(
    tasks: Sequence[str],
    factories: Mapping[str, Callable[[], object]],
    *,
    n_samples: int,
    seed: int,
    threads: int,
    reference_tasks: Sequence[str] = (),
    reference: Mapping[str, object] | None = None,
    device: str = "cpu",
) -> list[Job]:
    """The estimator jobs (tasks x estimators, task by task) and the reference jobs."""
    jobs = []
    settings_of = {name: estimator_settings(factory()) for name, factory in factories.items()}
    for name in tasks:
        task = get_task(name)
        for estimator in factories:
            fields = {
                "kind": "estimate",
                "task": name,
                "family": task.family,
                "dims": task.dims,
                "estimator": estimator,
                "seed": seed,
                "n_samples": n_samples,
                "truth": task.mutual_information,
                "truth_stderr": task.truth_stderr,
                "threads": threads,
                "settings": settings_of[estimator],
            }
            run = partial(
                estimate_job,
                name,
                estimator,
                factories[estimator],
                n_samples=n_samples,
                seed=seed,
                threads=threads,
            )
            key = job_key("estimate", name, estimator, seed, n_samples, settings_of[estimator])
            jobs.append(Job(key, fields, run))
    settings = {**REFERENCE, **(reference or {})}
    pairings = sorted({PEER_PAIRING[name] for name in factories if name in PEER_PAIRING})
    for name, pairing in ((name, p) for name in reference_tasks for p in pairings):
        label = f"reference-{pairing}-{settings['steps']}x{settings['repeats']}"
        fields = {"kind": "reference", "task": name, "estimator": label, "seed": seed}
        fields |= {"n_samples": n_samples, "threads": threads, "pairing": pairing}
        run = partial(
            reference_job,
            name,
            n_samples=n_samples,
            seed=seed,
            steps=settings["steps"],
            repeats=settings["repeats"],
            warmup_steps=settings["warmup_steps"],
            pairing=pairing,
            device=device,
            threads=threads,
        )
        jobs.append(Job(job_key("reference", name, label, seed, n_samples, settings), fields, run))
    return jobs


def collect(store: ResultStore, jobs: Sequence[Job]) -> list[dict]:
    """The records of ``jobs`` (in job order), with ``solved`` and ``covered`` recomputed;
    a job without a record (interrupted run) appears with status "missing"."""
    records = {record["key"]: record for record in store.records()}
    rows = []
    for job in jobs:
        row = dict(records.get(job.key) or {"key": job.key, **job.fields, "status": "missing"})
        if row["kind"] == "estimate":
            value = row.get("value") if row["status"] == "ok" else None
            row["solved"] = solved(value, row["truth"])
            row["covered"] = row["status"] == "ok" and covered(
                row.get("ci_low"), row.get("ci_high"), row["truth"]
            )
            row["ratio"] = None if value is None else value / row["truth"]
        rows.append(row)
    return rows


def _fmt(value, spec: str, width: int) -> str:
    return f"{'-':>{width}}" if value is None else f"{value:{width}{spec}}"


def print_tables(rows: Sequence[dict], log: Callable[[str], None] = print) -> None:
    """One table per task (truth, each estimator's value, interval, solved, covered,
    warnings, seconds)."""
    estimates = [row for row in rows if row["kind"] == "estimate"]
    for task in dict.fromkeys(row["task"] for row in estimates):
        task_rows = [row for row in estimates if row["task"] == task]
        first = task_rows[0]
        stderr = f" +- {first['truth_stderr']:.4f} (MC)" if first["truth_stderr"] else ""
        truth = f"truth {first['truth']:.4f}{stderr} nats"
        log(f"\n== {task} ({first['family']}, {first['dims']}): {truth}")
        log(
            f"   {'estimator':<10} {'value':>8} {'interval':>20} {'ratio':>6} {'solved':>6} "
            f"{'covered':>7} {'warn':>4} {'seconds':>8}  status"
        )
        for row in task_rows:
            ok = row["status"] == "ok"
            interval = f"[{row['ci_low']:8.4f}, {row['ci_high']:8.4f}]" if ok else "-"
            log(
                f"   {row['estimator']:<10} {_fmt(row.get('value') if ok else None, '.4f', 8)} "
                f"{interval:>20} {_fmt(row['ratio'], '.2f', 6)} "
                f"{'yes' if row['solved'] else 'no':>6} {'yes' if row['covered'] else 'no':>7} "
                f"{_fmt(row.get('n_warnings') if ok else None, 'd', 4)} "
                f"{_fmt(row.get('seconds') if ok else None, '.2f', 8)}  {row['status']}"
                + (f" ({row['error']})" if row.get("error") else "")
            )


def summarize(rows: Sequence[dict]) -> dict[str, dict]:
    """Per estimator: solved and covered counts over the run's tasks, seconds, failures."""
    summary = {}
    estimates = [row for row in rows if row["kind"] == "estimate"]
    for estimator in dict.fromkeys(row["estimator"] for row in estimates):
        mine = [row for row in estimates if row["estimator"] == estimator]
        seconds = [row["seconds"] for row in mine if row["status"] == "ok"]
        summary[estimator] = {
            "tasks": len(mine),
            "solved": sum(row["solved"] for row in mine),
            "covered": sum(row["covered"] for row in mine),
            "failed": sum(row["status"] != "ok" for row in mine),
            "median_seconds": float(np.median(seconds)) if seconds else None,
            "total_seconds": float(np.sum(seconds)) if seconds else 0.0,
            "batch_solved": sum(row["solved"] for row in mine if row["family"] == "batch"),
            "batch_tasks": sum(row["family"] == "batch" for row in mine),
        }
    return summary


def time_ratios(rows: Sequence[dict]) -> dict[str, dict[str, float]]:
    """``{estimator: {task: estimator seconds / reference median seconds}}``, MINE family."""
    references = {
        (row["task"], row["pairing"]): row["seconds"]
        for row in rows
        if row["kind"] == "reference" and row["status"] == "ok"
    }
    ratios: dict[str, dict[str, float]] = {}
    for row in rows:
        if (
            row["kind"] == "estimate"
            and row["estimator"] in MINE_FAMILY
            and row["status"] == "ok"
            and (row["task"], PEER_PAIRING[row["estimator"]]) in references
        ):
            reference = references[row["task"], PEER_PAIRING[row["estimator"]]]
            ratios.setdefault(row["estimator"], {})[row["task"]] = row["seconds"] / reference
    return ratios


def headlines(summary: Mapping[str, dict], ratios: Mapping[str, Mapping[str, float]]) -> list[str]:
    """The ``headline: name = value unit`` lines."""
    lines = []
    if summary:
        best = max(entry["solved"] for entry in summary.values())
        tasks = max(entry["tasks"] for entry in summary.values())
        winners = [name for name, entry in summary.items() if entry["solved"] == best]
        lines += [f"best_solved = {best}/{tasks} tasks", f"best_estimator = {'+'.join(winners)}"]
    for name, entry in summary.items():
        lines.append(f"{name}_solved = {entry['solved']}/{entry['tasks']} tasks")
        lines.append(f"{name}_coverage = {entry['covered'] / entry['tasks']:.2f}")
        if entry["median_seconds"] is not None:
            lines.append(f"{name}_median_seconds = {entry['median_seconds']:.3g} s")
        if name in BATCH_INPUT and entry["batch_tasks"]:
            lines.append(
                f"{name}_batch_solved = {entry['batch_solved']}/{entry['batch_tasks']} tasks"
            )
    for name, by_task in ratios.items():
        lines.append(f"{name}_time_ratio_vs_reference = {max(by_task.values()):.3g} x")
    return [f"headline: {line}" for line in lines]


def print_summary(
    rows: Sequence[dict],
    summary: Mapping[str, dict],
    ratios: Mapping[str, Mapping[str, float]],
    log: Callable[[str], None] = print,
) -> None:
    log(f"\n== summary ({SOLVED_FACTOR:g}x band; failed jobs count as unsolved, uncovered)")
    log(
        f"   {'estimator':<10} {'solved':>8} {'covered':>8} {'failed':>6} {'median s':>9} "
        f"{'total s':>9}"
    )
    for name, entry in summary.items():
        tasks = entry["tasks"]
        log(
            f"   {name:<10} {entry['solved']:>4}/{tasks:<3} {entry['covered']:>4}/{tasks:<3} "
            f"{entry['failed']:>6} {_fmt(entry['median_seconds'], '.2f', 9)} "
            f"{entry['total_seconds']:9.1f}"
        )
    references = [row for row in rows if row["kind"] == "reference"]
    if references:
        log("\n== speed: reference DV loop (concat MLP (16, 8), batch 256, Adam 1e-3)")
        for row in references:
            if row["status"] != "ok":
                log(f"   {row['task']}: reference {row['status']} ({row.get('error')})")
                continue
            spread = ", ".join(f"{s:.1f}" for s in row["all_seconds"])
            log(
                f"   {row['task']} ({row['pairing']} pairs): {row['steps']} steps, "
                f"median {row['seconds']:.1f} s "
                f"({spread}) on {row['device']}, final bound {row['value']:.3f} nats"
            )
        for name, by_task in ratios.items():
            text = ", ".join(f"{task} {ratio:.2f} x" for task, ratio in by_task.items())
            log(f"   {name} time / reference time: {text}")


# ---------------------------------------------------------------- files


def _tracked(path: Path) -> bool:
    """Whether git tracks ``path`` (False outside a repository or without git)."""
    try:
        result = subprocess.run(
            ["git", "ls-files", "--error-unmatch", "--", path.name],
            cwd=path.parent,
            capture_output=True,
            check=False,
        )
    except (OSError, ValueError):
        return False
    return result.returncode == 0


def _writable(path: Path) -> Path:
    if path.exists() and _tracked(path):
        raise ValueError(f"{path} is tracked by git; choose another --out folder.")
    return path


OUTPUT_FILES = ("results.csv", "results.json", "ratio_heatmap.png")
CSV_FIELDS = (
    "task", "family", "dims", "truth", "truth_stderr", "estimator", "status", "value",
    "ci_low", "ci_high", "confidence", "ratio", "solved", "covered", "n_warnings", "seconds",
    "seed", "n_samples", "error",
)  # fmt: skip


def save_outputs(
    out: Path,
    rows: Sequence[dict],
    summary: Mapping[str, dict],
    ratios: Mapping[str, Mapping[str, float]],
    lines: Sequence[str],
    config: Mapping[str, object],
    *,
    figure: bool = True,
) -> list[Path]:
    """Write ``results.csv``, ``results.json`` and (``figure``) ``ratio_heatmap.png``."""
    written = []
    csv_path = _writable(out / "results.csv")
    with open(csv_path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_FIELDS, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            if row["kind"] == "estimate":
                writer.writerow({field: row.get(field) for field in CSV_FIELDS})
    written.append(csv_path)
    json_path = _writable(out / "results.json")
    payload = {
        "config": dict(config),
        "rows": list(rows),
        "summary": dict(summary),
        "time_ratios": {name: dict(by_task) for name, by_task in ratios.items()},
        "headlines": list(lines),
    }
    json_path.write_text(json.dumps(payload, indent=1, default=_json_safe) + "\n")
    written.append(json_path)
    if figure:
        written.append(plot_heatmap(rows, _writable(out / "ratio_heatmap.png")))
    return written


def plot_heatmap(rows: Sequence[dict], path: Path) -> Path:
    """Estimate / truth, tasks x estimators, log colour scale clipped to [1/4, 4] (a value
    <= 0 shows as 1/4, its number in the cell); solved cells outlined, the solved band
    marked on the colour bar; failed or missing jobs grey with an x."""
    from matplotlib import colormaps
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import LogNorm
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle
    from matplotlib.ticker import NullLocator

    estimates = [row for row in rows if row["kind"] == "estimate"]
    tasks = list(dict.fromkeys(row["task"] for row in estimates))
    names = list(dict.fromkeys(row["estimator"] for row in estimates))
    ratio = np.full((len(tasks), len(names)), np.nan)
    for row in estimates:
        if row["ratio"] is not None:
            ratio[tasks.index(row["task"]), names.index(row["estimator"])] = row["ratio"]
    low, high = 0.25, 4.0
    shown = np.clip(np.where(ratio > 0, ratio, low), low, high)  # a value <= 0 shows as 1/4
    figure = Figure(figsize=(3.6 + 0.8 * len(names), 1.4 + 0.3 * len(tasks)))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    cmap = colormaps["RdBu_r"].with_extremes(bad="0.8")
    image = axes.imshow(
        np.ma.masked_invalid(shown), cmap=cmap, norm=LogNorm(low, high), aspect="auto"
    )
    for i in range(len(tasks)):
        for j in range(len(names)):
            value = ratio[i, j]
            text = "x" if np.isnan(value) else f"{value:.2f}"
            dark = not np.isnan(value) and not 0.4 < shown[i, j] < 2.5  # deep colours
            axes.text(
                j, i, text, ha="center", va="center", fontsize=7, color="white" if dark else "black"
            )
            if not np.isnan(value) and 1 / SOLVED_FACTOR <= value <= SOLVED_FACTOR:
                axes.add_patch(
                    Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black", lw=1.2)
                )
    axes.set_xticks(range(len(names)), names, rotation=45, ha="right")
    axes.set_yticks(range(len(tasks)), tasks, fontsize=7)
    bar = figure.colorbar(image, ax=axes, label="estimate / truth (solved band between lines)")
    for edge in (1 / SOLVED_FACTOR, SOLVED_FACTOR):
        bar.ax.axhline(edge, color="black", lw=1.5)
    ticks = [0.25, 0.5, 1 / SOLVED_FACTOR, 1.0, SOLVED_FACTOR, 2.0, 4.0]
    bar.ax.yaxis.set_minor_locator(NullLocator())
    bar.set_ticks(ticks, labels=[f"{t:.2g}" for t in ticks])
    axes.set_title(f"estimate / truth (outlined: solved, within {SOLVED_FACTOR:g}x)", fontsize=9)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    return path


# ---------------------------------------------------------------- entry points


def run_benchmark(
    tasks: Sequence[str],
    factories: Mapping[str, Callable[[], object]],
    *,
    out: str | os.PathLike = DEFAULT_OUT,
    n_samples: int = 5000,
    seed: int = 0,
    workers: int = 1,
    timeout: float | None = 3600.0,
    threads: int = 1,
    device: str = "cpu",
    reference_tasks: Sequence[str] = (),
    reference: Mapping[str, object] | None = None,
    figure: bool = True,
    log: Callable[[str], None] = print,
) -> dict:
    """Run (or resume) the benchmark, print the tables and headlines, save the files.

    ``factories`` maps an estimator's name to a callable that builds it (for the registry:
    :func:`available_estimators`). Returns ``{"rows", "summary", "ratios", "headlines",
    "files"}``.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tasks = list(dict.fromkeys(tasks))  # a name given twice runs once
    reference = {**REFERENCE, "repeats": 3, **(reference or {})}
    for name in ("records.jsonl", *OUTPUT_FILES):  # refuse before any work is done
        _writable(out / name)
    store = ResultStore(out / "records.jsonl")
    dropped = [name for name in reference_tasks if name not in tasks]
    if dropped:
        log(f"# reference timing skipped on {', '.join(dropped)}: not among the run's tasks")
    reference_tasks = [name for name in reference_tasks if name in tasks]
    jobs = build_jobs(
        tasks,
        factories,
        n_samples=n_samples,
        seed=seed,
        threads=threads,
        reference_tasks=reference_tasks if any(n in MINE_FAMILY for n in factories) else (),
        reference=reference,
        device=device,
    )
    log(
        f"# {len(tasks)} tasks x {len(factories)} estimators ({', '.join(factories)}), "
        f"n = {n_samples}, seed = {seed}, {workers} worker(s) of {threads} thread(s) on "
        f"{os.cpu_count()} cores, device {device}, timeout {timeout} s per job"
    )
    run_jobs(jobs, store, workers=workers, timeout=timeout, log=log)
    rows = collect(store, jobs)
    print_tables(rows, log)
    summary = summarize(rows)
    ratios = time_ratios(rows)
    print_summary(rows, summary, ratios, log)
    lines = headlines(summary, ratios)
    config = {
        "tasks": list(tasks),
        "estimators": list(factories),
        "n_samples": n_samples,
        "seed": seed,
        "workers": workers,
        "threads": threads,
        "device": device,
        "timeout": timeout,
        "reference_tasks": list(reference_tasks),
        "reference": reference,
        "solved_factor": SOLVED_FACTOR,
    }
    files = save_outputs(out, rows, summary, ratios, lines, config, figure=figure)
    log(f"\n# wrote {', '.join(str(path) for path in files)}")
    for line in lines:
        log(line)
    return {"rows": rows, "summary": summary, "ratios": ratios, "headlines": lines, "files": files}


def _int_at_least(low: int):
    """An argparse type: an integer >= ``low``, else a one-line error naming the value."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer >= {low}; got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be an integer >= {low}; got {value}")
        return value

    return parse


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--estimators", nargs="+", metavar="NAME", default=list(ESTIMATORS))
    parser.add_argument("--tasks", nargs="+", metavar="NAME", help="default: the whole suite")
    parser.add_argument("--n-samples", type=_int_at_least(1), help="default 5000 (--quick: 1000)")
    parser.add_argument("--seed", type=_int_at_least(0), default=0)
    parser.add_argument("--device", default="auto", help="passed to estimators that take one")
    parser.add_argument("--workers", type=_int_at_least(1), default=1, help="parallel jobs")
    parser.add_argument(
        "--timeout", type=float, default=3600.0, help="seconds per job; 0: no limit"
    )
    parser.add_argument("--threads", type=_int_at_least(1), default=1, help="torch threads per job")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--quick", action="store_true", help="4 tasks, 1000 samples")
    parser.add_argument(
        "--reference-tasks",
        nargs="*",
        metavar="NAME",
        help=f"tasks of the timed reference loop (default {' '.join(REFERENCE_TASKS)}; "
        "--quick: none); give the flag alone for none",
    )
    parser.add_argument("--reference-steps", type=_int_at_least(1), default=REFERENCE["steps"])
    parser.add_argument("--reference-repeats", type=_int_at_least(1), help="default 3 (--quick: 1)")
    parser.add_argument("--no-figure", action="store_true")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    names = task_names()
    for option, chosen, known in (
        ("--estimators", args.estimators, tuple(ESTIMATORS)),
        ("--tasks", args.tasks or (), names),
        ("--reference-tasks", args.reference_tasks or (), names),
    ):
        unknown = [name for name in chosen if name not in known]
        if unknown:
            parser.error(f"{option}: unknown {', '.join(unknown)}; known: {', '.join(known)}")
    if args.timeout < 0 or not math.isfinite(args.timeout):
        parser.error(f"--timeout must be a finite number of seconds >= 0; got {args.timeout}")
    tasks = args.tasks or (QUICK_TASKS if args.quick else names)
    n_samples = args.n_samples or (1000 if args.quick else 5000)
    if args.reference_tasks is None:
        reference_tasks = () if args.quick else REFERENCE_TASKS
    else:
        reference_tasks = tuple(args.reference_tasks)
    repeats = args.reference_repeats or (1 if args.quick else 3)
    import torch  # noqa: F401  (imported once here: forked jobs do not import it again)

    factories = available_estimators(args.estimators, device=args.device)
    if not factories:
        print("# no estimator could be imported; nothing to run", file=sys.stderr)
        return 1
    run_benchmark(
        tasks,
        factories,
        out=args.out,
        n_samples=n_samples,
        seed=args.seed,
        workers=args.workers,
        timeout=args.timeout or None,
        threads=args.threads,
        device=args.device,
        reference_tasks=reference_tasks,
        reference={"steps": args.reference_steps, "repeats": repeats},
        figure=not args.no_figure,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
