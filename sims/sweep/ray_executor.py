"""Running a sweep's jobs as Ray tasks, on this machine or on a cluster (:func:`run_on_ray`).

Each job is one Ray task (``ray.remote``) reserving the sweep's
:class:`sims.sweep.grid.Resources` (``num_cpus``, ``num_gpus``); Ray starts it on a
worker with that much free, so a cluster of GPU machines runs as many jobs at once as it
has GPUs (or GPU fractions). The driver, the process that calls :func:`run_on_ray`,
collects the records as they finish (``ray.wait``) and appends each to the results store
itself: the store is a file on the driver's machine only, written by one process, and it
is resumable exactly as with the local executor (rerun the sweep; jobs it holds are not
submitted again).

Exactly once. Jobs the store holds are not submitted; each finished task's record is
appended once, by the driver, through :func:`sims.sweep.runner.append_record`, whose
append checks the key under the store's lock, so a job another writer recorded while its
task ran keeps that writer's record. A task whose worker process dies (killed, out of
memory, its node lost) is retried by Ray up to :data:`MAX_RETRIES` times on another
worker; only the attempt that returns produces a record.

A bounded window. The driver keeps at most :func:`window` tasks submitted at a time
(twice as many as the cluster can run at once) and submits the next job when one
finishes, skipping a job another writer recorded meanwhile (as the local executor does).
So a sweep of thousands of jobs does not flood Ray's scheduler, and an error stops the
sweep soon: a job that raises is not retried (it would raise again); the driver submits
nothing more, waits for the tasks already running, appends their records (nothing
finished is lost) and then raises the first error. No task is cancelled: ``ray.cancel``
racing with a task that is just finishing crashes the driver in Ray (``Check failed: it
!= submissible_tasks_.end()``, ray-project/ray#54846; seen here with Ray 2.60).

Same records. A task runs the job under :func:`sims.core.runtime.torch_threads` with as many
torch threads as the CPUs it reserved (``Resources.cpus``). The thread count matters in
the last digits: torch splits a reduction into one partial sum per thread and adds the
partial sums, so the rounding depends on the split, and the inversion's iterations carry
such differences on (a reconstruction differs in the fourth decimal from one thread to
two, scoring the same images does not). With the same thread
count a task's record equals, float for float, the record of :func:`run_job` in-process
(the local executor under ``pruneleak --threads N``, default 1 = the default ``cpus``),
except the wall-clock ``seconds``.

Tuned workers. The tasks run in Ray workers started with glibc's heap tuning in their
environment (:data:`sims.core.runtime.HEAP_TUNING_ENV`, the tasks' ``runtime_env``
``env_vars``; :func:`task_options`), the tuning the command line gives its own process:
glibc reads the variables when the worker starts, and Ray starts a worker for each
runtime environment, so no code changes a running process's allocator and workers of
other runtime environments keep glibc's defaults. The tuning changes speed, not records.

Ray is imported when a sweep runs on it, not with pruneleak: without Ray installed
(``pip install 'pruneleak[ray]'``) everything else works and asking for this executor is
a ValueError saying what to install (:func:`sims.core.extras.require`). A Ray runtime
this process has initialised already is used as it is; otherwise :func:`run_on_ray`
starts one (or connects to ``address``) and shuts it down before returning, even after an
error, so it leaves no Ray runtime behind.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable, Sequence

from pruneleak.bounds.progress import progress as show_progress
from pruneleak.sims.core.extras import require
from pruneleak.sims.core.runtime import HEAP_TUNING_ENV, torch_threads
from pruneleak.sims.store.results import ResultStore
from pruneleak.sims.sweep.grid import Resources, SweepConfig
from pruneleak.sims.sweep.job import AttackJob, job_key
from pruneleak.sims.sweep.runner import append_record, check_sweep, run_job

logger = logging.getLogger(__name__)

#: Attempts Ray makes again at a task whose worker process died (Ray's ``max_retries``;
#: set explicitly rather than relying on Ray's default). A job that raises is not retried.
MAX_RETRIES = 3


def import_ray():
    """The ``ray`` module, or a :class:`~sims.core.extras.MissingExtraError` (a ValueError)
    saying how to install it."""
    return require("ray", purpose="The Ray executor")


def _run_with_threads(run: Callable[[AttackJob], dict], job: AttackJob, threads: int) -> dict:
    """One task on a Ray worker: ``run(job)`` on ``threads`` torch threads (module
    docstring, "Same records"); the worker's thread count is restored afterwards, since
    the worker process goes on to run other tasks."""
    with torch_threads(threads):
        return run(job)


def task_options(resources: Resources) -> dict:
    """The Ray options of every task of a sweep with ``resources`` per job: the CPUs and
    GPUs it reserves, :data:`MAX_RETRIES`, and the ``runtime_env`` whose ``env_vars``
    start its worker with glibc's heap tuning (module docstring, "Tuned workers")."""
    return {
        "num_cpus": resources.cpus,
        "num_gpus": resources.gpus,
        "max_retries": MAX_RETRIES,
        "runtime_env": {"env_vars": dict(HEAP_TUNING_ENV)},
    }


#: Seconds to wait for a TCP connection to a cluster's address before refusing it: Ray's
#: own connection to an address where nothing answers retries for minutes.
CONNECT_TIMEOUT_S = 10.0


def check_reachable(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """Refuse (ConnectionError, naming ``address``) a ``host:port`` or ``ray://host:port``
    address where no TCP connection opens within ``timeout_s`` seconds; ``"auto"`` and
    other forms without a port are left to Ray, which resolves them at once."""
    host, colon, port = address.removeprefix("ray://").rpartition(":")
    if not colon or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as err:
        raise ConnectionError(
            f"The 'address' parameter of run_on_ray names a Ray cluster that does not "
            f"answer: no connection to {host}:{port} within {timeout_s:g} s ({err}). "
            f"Got {address!r}: start the cluster (ray start --head) or fix the address."
        ) from None


def _start(ray, address: str | None) -> bool:
    """Make sure this process is connected to a Ray runtime; True if this call started
    the connection (and so must shut it down)."""
    if ray.is_initialized():
        if address is not None:
            raise ValueError(
                f"The 'address' parameter of run_on_ray must be None when this process is "
                f"connected to Ray already (its runtime is used). Got {address!r} instead."
            )
        return False
    if address is None:
        ray.init(address="local", include_dashboard=False)
    else:
        check_reachable(address)
        ray.init(address=address)
    return True


def run_on_ray(
    config: SweepConfig,
    jobs: Sequence[AttackJob],
    store: ResultStore,
    *,
    address: str | None = None,
    progress: bool | None = None,
    run: Callable[[AttackJob], dict] = run_job,
) -> int:
    """Run the ``jobs`` (of ``config``) not yet in ``store`` as Ray tasks and append their
    records as they finish (module docstring); returns the number of records written.
    When the store holds every job, it returns 0 without connecting to Ray.

    ``address``: the Ray cluster (``"auto"``: the one ``ray start`` started on this
    machine; ``"ray://host:10001"``: Ray Client); None: the runtime this process is
    connected to, else a new local one. ``progress`` over finished jobs: False none,
    True or None a bar on a terminal, else lines on stderr
    (:func:`bounds.progress.progress`). ``run`` computes a job's record on the worker;
    it is :func:`sims.sweep.runner.run_job` except in tests and tools that wrap it (it
    must be picklable by Ray's cloudpickle).
    """
    check_sweep(config, store, "run_on_ray")
    ray = import_ray()
    pending = [job for job in jobs if job_key(job) not in store]
    if not pending:  # a finished sweep resumed: no Ray runtime to start
        return 0
    started = _start(ray, address)
    resources = config.resources
    panels = config.job_panels()
    task = ray.remote(_run_with_threads).options(**task_options(resources))
    todo = iter(pending)
    in_flight: dict = {}
    written, error = 0, None

    def submit_next() -> None:
        for job in todo:
            if job_key(job) in store:  # another writer recorded it since the sweep began
                logger.info("%s: %s recorded by another writer; skipped", config.name, job_key(job))
                bar.update()
                continue
            in_flight[task.remote(run, job, resources.cpus)] = job
            return

    try:
        slots = window(ray.cluster_resources(), resources)
        with show_progress(
            total=len(pending), desc=config.name, unit="job", enabled=progress
        ) as bar:
            for _ in range(slots):
                submit_next()
            while in_flight:
                (ref,), _ = ray.wait(list(in_flight), num_returns=1)
                job = in_flight.pop(ref)
                try:
                    record = ray.get(ref)
                except Exception as err:  # the job raised: finish the running ones, then raise
                    error = error or err
                    continue
                written += append_record(store, config.name, job, record, panels=panels[job])
                bar.update()
                if error is None:
                    submit_next()
        if error is not None:
            raise error
    finally:
        if started:
            ray.shutdown()
    return written


def window(cluster: dict, resources: Resources) -> int:
    """How many tasks :func:`run_on_ray` keeps submitted: twice the jobs the ``cluster``
    (``ray.cluster_resources()``: totals such as ``{"CPU": 16.0, "GPU": 2.0}``) runs at
    once with ``resources`` each. ValueError when it cannot run one: its tasks would wait
    forever."""
    at_once = int(cluster.get("CPU", 0) // resources.cpus)
    if resources.gpus > 0:
        at_once = min(at_once, int(cluster.get("GPU", 0) // resources.gpus))
    if at_once < 1:
        raise ValueError(
            "The sweep's [resources] (cpus = "
            f"{resources.cpus}, gpus = {resources.gpus:g} per job) must fit the Ray cluster, "
            f"which has {cluster.get('CPU', 0):g} CPUs and {cluster.get('GPU', 0):g} GPUs; "
            "lower them or add machines."
        )
    return 2 * at_once
