"""sims.sweep.ray_executor: a sweep run as Ray tasks records what the local executor
records (float for float), exactly once per job even when a worker is SIGKILLed mid-job,
resumes from a store holding some jobs, leaves no Ray runtime it started, and the
``pruneleak sweep --executor ray`` command and its ``[resources]`` table.

Ray starts twice in this file (about 5 s each): once inside ``run_sweep`` (the first
test, which checks that the sweep shuts down the runtime it started), then once for the
other tests (``ray_runtime``, two CPUs). Functions that run on the workers are defined
here and sent by value (this file is not importable on the workers).
"""

from __future__ import annotations

import functools
import json
import os
import signal
import sys
import time

import pytest
import torch
from test_sweep import TINY, TINY_TOML

from pruneleak.sims.cli.sweep import main as sweep_main
from pruneleak.sims.core.runtime import HEAP_TUNING_ENV, torch_threads
from pruneleak.sims.store.results import ResultStore
from pruneleak.sims.sweep import Resources, SweepConfig, job_key, read_config, run_job, run_sweep
from pruneleak.sims.sweep.ray_executor import MAX_RETRIES, run_on_ray, window

ray = pytest.importorskip("ray")  # the ray extra (make install has it)
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("ray")]  # one Ray runtime at a time

ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

NAME = "tiny-ray"
GRID = '[[grid]]\npanel = "p"\npruning.p = [0.0, 0.3, 0.9]\n'
CONFIG = SweepConfig(name=NAME, base=TINY, grids=({"panel": "p", "pruning.p": [0.0, 0.3, 0.9]},))
KEYS = [job_key(job) for job in CONFIG.jobs()]


def without_seconds(records):
    """Records by key, without the one field that differs between runs (wall time)."""
    return {r["key"]: {k: v for k, v in r.items() if k != "seconds"} for r in records}


def keys_on_lines(path) -> list[str]:
    """The key of every line of the results file, read independently of ResultStore."""
    return [json.loads(line)["key"] for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    """The tiny sweep run by the local executor on one torch thread (the thread count of
    the default ``[resources] cpus = 1``): its store and its records."""
    store = ResultStore(tmp_path_factory.mktemp("local") / "local.jsonl")
    with torch_threads(1):
        records = run_sweep(CONFIG, store, progress=False)
    assert len(records) == 3
    return store, without_seconds(records)


def test_ray_records_equal_local_ones_and_the_runtime_it_started_is_shut_down(tmp_path, local):
    assert not ray.is_initialized(), "this test must run before ray_runtime starts Ray"
    store = ResultStore(tmp_path / "ray.jsonl")
    records = run_sweep(CONFIG, store, progress=False, executor="ray")
    assert not ray.is_initialized()
    assert [r["key"] for r in records] == KEYS
    assert without_seconds(records) == local[1]  # every field, floats exactly equal
    assert sorted(keys_on_lines(store.path)) == sorted(KEYS)


@pytest.fixture(scope="module")
def ray_runtime():
    ray.init(address="local", num_cpus=2, include_dashboard=False)
    yield
    ray.shutdown()


def _die_after_the_job(job, *, victim: str, folder):
    """run_job, but the worker running ``victim`` computes its record and then, at its
    first attempt, kills its own process with SIGKILL before returning it; each attempt
    at ``victim`` writes its PID to ``folder``."""
    record = run_job(job)
    if job_key(job) == victim:
        first = not (folder / "killed").exists()
        (folder / ("killed" if first else "retried")).write_text(str(os.getpid()))
        if first:
            os.kill(os.getpid(), signal.SIGKILL)
    return record


def test_a_job_whose_worker_is_killed_is_retried_and_recorded_once(ray_runtime, tmp_path, local):
    assert MAX_RETRIES >= 1
    store = ResultStore(tmp_path / "killed.jsonl")
    victim = KEYS[1]
    run = functools.partial(_die_after_the_job, victim=victim, folder=tmp_path)
    assert run_on_ray(CONFIG, CONFIG.jobs(), store, progress=False, run=run) == 3
    killed, retried = (int((tmp_path / f).read_text()) for f in ("killed", "retried"))
    assert killed != retried  # a second worker process ran the job again
    lines = keys_on_lines(store.path)
    assert lines.count(victim) == 1 and sorted(lines) == sorted(KEYS)
    assert without_seconds(store.records()) == local[1]


def _logged_fake(job, *, log, other=None, fail=None):
    """A fake job for the store's bookkeeping: appends the job's key to the file ``log``;
    for the key ``other``, a second writer records the job first; for ``fail``, raises."""
    key = job_key(job)
    with open(log, "a") as fh:
        fh.write(key + "\n")
    if key == other:
        ResultStore(log.with_name("store.jsonl")).append({"key": key, "by": "other"})
    if key == fail:
        raise ValueError("injected")
    return {"seconds": 0.0, "by": "ray"}


def test_resume_runs_only_the_jobs_the_store_lacks(ray_runtime, tmp_path, local):
    lines = local[0].path.read_text().splitlines(keepends=True)
    path = tmp_path / "store.jsonl"
    path.write_text(lines[0] + lines[2])  # jobs 0 and 2 done before
    log = tmp_path / "ran.txt"
    run = functools.partial(_logged_fake, log=log)
    written = run_on_ray(CONFIG, CONFIG.jobs(), ResultStore(path), progress=False, run=run)
    assert written == 1 and log.read_text().split() == [KEYS[1]]
    assert path.read_text().startswith(lines[0] + lines[2])  # earlier records untouched
    assert sorted(keys_on_lines(path)) == sorted(KEYS)


def test_a_job_another_writer_recorded_meanwhile_keeps_that_record(ray_runtime, tmp_path):
    path, log = tmp_path / "store.jsonl", tmp_path / "ran.txt"
    run = functools.partial(_logged_fake, log=log, other=KEYS[0])
    assert run_on_ray(CONFIG, CONFIG.jobs(), ResultStore(path), progress=False, run=run) == 2
    assert sorted(log.read_text().split()) == sorted(KEYS)
    by = {r["key"]: r["by"] for r in ResultStore(path).records()}
    assert by == {KEYS[0]: "other", KEYS[1]: "ray", KEYS[2]: "ray"}
    assert keys_on_lines(path).count(KEYS[0]) == 1


def test_a_job_that_raises_ends_the_sweep_with_its_error(ray_runtime, tmp_path):
    """The jobs running beside the failing one finish and are recorded (all three fit the
    window of 4 tasks on 2 CPUs)."""
    path = tmp_path / "store.jsonl"
    run = functools.partial(_logged_fake, log=tmp_path / "ran.txt", fail=KEYS[1])
    with pytest.raises(ValueError, match="injected"):
        run_on_ray(CONFIG, CONFIG.jobs(), ResultStore(path), progress=False, run=run)
    assert KEYS[1] not in ResultStore(path)
    assert sorted(keys_on_lines(path)) == sorted([KEYS[0], KEYS[2]])
    assert ray.is_initialized()  # the caller's runtime is left to the caller


def _slow_unless_failing(job, *, log, fail):
    time.sleep(0 if job_key(job) == fail else 1.0)
    return _logged_fake(job, log=log, fail=fail)


def test_after_an_error_no_further_job_is_submitted(ray_runtime, tmp_path):
    """Six jobs, a window of 4 (2 CPUs): the first job fails at once while the others
    take a second; the three running beside it are recorded, the last two never run."""
    config = SweepConfig(
        name=NAME, base=TINY, grids=({"panel": "p", "pruning.p": [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]},)
    )
    keys = [job_key(job) for job in config.jobs()]
    path, log = tmp_path / "store.jsonl", tmp_path / "ran.txt"
    run = functools.partial(_slow_unless_failing, log=log, fail=keys[0])
    with pytest.raises(ValueError, match="injected"):
        run_on_ray(config, config.jobs(), ResultStore(path), progress=False, run=run)
    assert sorted(log.read_text().split()) == sorted(keys[:4])
    assert sorted(keys_on_lines(path)) == sorted(keys[1:4])


def _records_a_later_job(job, *, log, first, later):
    """A fake job: ``first`` records the job ``later`` as another writer would, at once;
    the other jobs take a second."""
    if job_key(job) == first:
        ResultStore(log.with_name("store.jsonl")).append({"key": later, "by": "other"})
    else:
        time.sleep(1.0)
    return _logged_fake(job, log=log)


def test_a_job_recorded_by_another_writer_before_its_turn_is_not_submitted(ray_runtime, tmp_path):
    """Six jobs, a window of 4: while the first four run, the first records the sixth as
    another writer; the sixth is then skipped, never run, and keeps the other record."""
    config = SweepConfig(
        name=NAME, base=TINY, grids=({"panel": "p", "pruning.p": [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]},)
    )
    keys = [job_key(job) for job in config.jobs()]
    path, log = tmp_path / "store.jsonl", tmp_path / "ran.txt"
    run = functools.partial(_records_a_later_job, log=log, first=keys[0], later=keys[5])
    assert run_on_ray(config, config.jobs(), ResultStore(path), progress=False, run=run) == 5
    assert sorted(log.read_text().split()) == sorted(keys[:5])
    by = {r["key"]: r["by"] for r in ResultStore(path).records()}
    assert by == {**dict.fromkeys(keys[:5], "ray"), keys[5]: "other"}


@pytest.mark.parametrize(
    ("cluster", "resources", "expected"),
    [
        ({"CPU": 2.0}, Resources(), 4),
        ({"CPU": 16.0, "GPU": 2.0}, Resources(cpus=1, gpus=0.5), 8),
        ({"CPU": 16.0, "GPU": 2.0}, Resources(cpus=4, gpus=0.25), 8),
        ({"CPU": 3.0, "GPU": 1.0}, Resources(cpus=2, gpus=1.0), 2),
    ],
)
def test_the_window_is_twice_the_jobs_the_cluster_runs_at_once(cluster, resources, expected):
    assert window(cluster, resources) == expected


@pytest.mark.parametrize(
    ("cluster", "resources"),
    [({"CPU": 8.0}, Resources(gpus=1.0)), ({"CPU": 1.0}, Resources(cpus=2))],
)
def test_resources_the_cluster_cannot_fit_are_a_clear_error(cluster, resources):
    with pytest.raises(ValueError, match=r"\[resources\].*must fit the Ray cluster"):
        window(cluster, resources)


def _report(job):
    return {
        "seconds": 0.0,
        "threads": torch.get_num_threads(),
        "assigned": ray.get_runtime_context().get_assigned_resources(),
        "heap_env": {name: os.environ.get(name) for name in HEAP_TUNING_ENV},
    }


def test_each_task_reserves_the_sweeps_cpus_and_computes_on_as_many_threads(ray_runtime, tmp_path):
    """A task holds the sweep's CPUs, computes on as many torch threads, and runs in a
    worker started with glibc's heap tuning in its environment (task_options)."""
    config = SweepConfig(name=NAME, base=TINY, grids=CONFIG.grids, resources=Resources(cpus=2))
    store = ResultStore(tmp_path / "store.jsonl")
    run_on_ray(config, config.jobs()[:1], store, progress=False, run=_report)
    (record,) = store.records()
    assert record["threads"] == 2 and record["assigned"] == {"CPU": 2.0}
    assert record["heap_env"] == HEAP_TUNING_ENV  # the worker started with glibc's tuning


def test_a_finished_sweep_resumed_on_ray_does_not_connect(local, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("ray.init was called")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", refuse)
    store = local[0]
    before = store.path.read_bytes()
    assert without_seconds(run_sweep(CONFIG, store, executor="ray")) == local[1]
    assert run_on_ray(CONFIG, CONFIG.jobs(), store, address="auto") == 0
    assert store.path.read_bytes() == before


def test_run_on_ray_needs_a_result_store(tmp_path):
    with pytest.raises(ValueError, match=r"The 'store' parameter of run_on_ray must be a Result"):
        run_on_ray(CONFIG, CONFIG.jobs(), str(tmp_path / "s.jsonl"))


def test_an_address_is_refused_when_this_process_is_connected_already(ray_runtime, tmp_path):
    with pytest.raises(ValueError, match=r"'address' parameter of run_on_ray must be None"):
        run_sweep(CONFIG, ResultStore(tmp_path / "s.jsonl"), executor="ray", address="auto")


def test_cli_runs_a_toml_sweep_on_ray(ray_runtime, tmp_path, local, capsys):
    path = tmp_path / "tiny.toml"
    path.write_text(f'name = "{NAME}"\n{TINY_TOML}\n[resources]\ncpus = 1\n{GRID}')
    results = tmp_path / "cli.jsonl"
    command = [str(path), "--results", str(results), "--executor", "ray", "--no-table"]
    assert sweep_main(command) == 0
    assert "3 of 3 jobs recorded" in capsys.readouterr().out
    assert without_seconds(ResultStore(results).records()) == local[1]


# --------------------------------------------------------------------------- no Ray needed


def _cli_error(command, capsys) -> str:
    with pytest.raises(SystemExit) as exit_:
        sweep_main(command)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    return err


def tiny_toml(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(f'name = "{NAME}"\n{TINY_TOML}{GRID}')
    return str(path)


def test_cli_refuses_an_address_without_the_ray_executor(tmp_path, capsys):
    command = [tiny_toml(tmp_path), "--results", str(tmp_path / "s.jsonl"), "--address", "auto"]
    err = _cli_error(command, capsys)
    assert "--address option ('address' of run_sweep)" in err and "executor='local'" in err
    assert not (tmp_path / "s.jsonl").exists()


def test_cli_says_how_to_install_ray_when_it_is_missing(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as if not installed
    command = [tiny_toml(tmp_path), "--results", str(tmp_path / "s.jsonl"), "--executor", "ray"]
    err = _cli_error(command, capsys)
    assert "pip install 'pruneleak[ray]'" in err


@pytest.mark.parametrize(
    ("table", "match"),
    [
        ("gpus = 2", r"The 'gpus' parameter of Resources must be in \[0, 1\]. Got 2.0 instead"),
        ("gpus = -0.5", r"'gpus' parameter of Resources must be in \[0, 1\]. Got -0.5 instead"),
        ("cpus = 0", r"The 'cpus' parameter of Resources must be in \[1, inf\). Got 0 instead"),
        ("cpus = 1.5", r"'cpus' parameter of Resources must be an integer .* Got 1.5 instead"),
        ('gpus = "one"', r"'gpus' parameter of Resources must be a real number .* 'one'"),
        ("memory = 4", r"'resources' table .* cpus, gpus. Got unknown keys \['memory'\]"),
    ],
)
def test_bad_resources_in_toml_are_a_value_error_naming_the_file(tmp_path, table, match):
    path = tmp_path / "bad.toml"
    path.write_text(f'name = "bad"\n{GRID}\n[resources]\n{table}\n')
    with pytest.raises(ValueError, match=rf"bad.toml: .*{match}"):
        read_config(path)


def test_resources_that_are_not_a_table_are_refused(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(f'name = "bad"\nresources = 1\n{GRID}')
    with pytest.raises(ValueError, match=r"'resources' entry .* must be a table .* Got 1 instead"):
        read_config(path)


def test_resources_do_not_change_the_jobs_or_their_keys(tmp_path):
    path = tmp_path / "gpu.toml"
    path.write_text(f'name = "{NAME}"\n{TINY_TOML}\n[resources]\ngpus = 0.25\ncpus = 4\n{GRID}')
    config = read_config(path)
    assert config.resources == Resources(cpus=4, gpus=0.25)
    assert [job_key(j) for j in config.jobs()] == KEYS
    assert CONFIG.resources == Resources(cpus=1, gpus=0.0)
