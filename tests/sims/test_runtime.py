"""sims.core.runtime: opt-in tuning leaves nothing behind; seeding and fingerprints."""

import ast
from pathlib import Path

import pytest
import torch

from pruneleak.sims import cli
from pruneleak.sims.core import runtime
from pruneleak.sims.core.runtime import (
    HEAP_TUNING_ENV,
    MMAP_THRESHOLD_BYTES,
    TRIM_THRESHOLD_BYTES,
    fingerprint,
    generator,
    seeded,
    torch_threads,
    tune_process_heap,
)
from pruneleak.sims.sweep.grid import Resources
from pruneleak.sims.sweep.ray_executor import _run_with_threads, task_options

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("bounds", "estimators", "sims")


def test_torch_threads_sets_threads_inside_and_restores_them():
    before = torch.get_num_threads()
    inside = 2 if before != 2 else 1
    with torch_threads(inside):
        assert torch.get_num_threads() == inside
    assert torch.get_num_threads() == before


def test_torch_threads_restores_threads_when_the_block_raises():
    before = torch.get_num_threads()
    with pytest.raises(RuntimeError, match="boom"), torch_threads(before + 1):
        raise RuntimeError("boom")
    assert torch.get_num_threads() == before


def test_torch_threads_none_leaves_threads_alone():
    before = torch.get_num_threads()
    with torch_threads(None):
        assert torch.get_num_threads() == before


@pytest.mark.parametrize("threads", [0, -1, 1.5, "2"])
def test_torch_threads_rejects_bad_thread_counts(threads):
    with (
        pytest.raises(ValueError, match="'threads' parameter of torch_threads"),
        torch_threads(threads),
    ):
        pass


# --------------------------------------------------------------------------------------
# glibc's heap tuning: only a process's owner applies it
# --------------------------------------------------------------------------------------


@pytest.fixture
def mallopt_calls(monkeypatch):
    """The ``(parameter, value)`` calls made to glibc's mallopt while the test runs; the
    lookup is replaced by a recorder, so nothing reaches this process's allocator."""
    calls = []
    monkeypatch.setattr(runtime, "_mallopt", lambda: lambda *args: calls.append(args))
    return calls


def test_the_thread_context_never_calls_mallopt(mallopt_calls):
    with torch_threads(2), torch_threads(None):
        pass
    with pytest.raises(RuntimeError, match="boom"), torch_threads(1):
        raise RuntimeError("boom")
    assert mallopt_calls == []


def test_a_ray_task_leaves_the_heap_of_its_worker_alone(mallopt_calls):
    assert _run_with_threads(lambda job: {"job": job}, "j", 1) == {"job": "j"}
    assert mallopt_calls == []


def test_tune_process_heap_sets_both_thresholds(mallopt_calls):
    assert tune_process_heap()
    assert mallopt_calls == [(-3, MMAP_THRESHOLD_BYTES), (-1, TRIM_THRESHOLD_BYTES)]


def test_cli_main_tunes_the_heap_of_its_process(mallopt_calls, tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"key": "a"}\n')
    assert cli.main(["results", "check", str(path)]) == 0
    assert mallopt_calls == [(-3, MMAP_THRESHOLD_BYTES), (-1, TRIM_THRESHOLD_BYTES)]


def _heap_calls(path: Path) -> set[str]:
    """``file:function`` (innermost; ``<module>`` outside any) of each call in ``path`` to
    mallopt or to the functions that call it."""
    tree = ast.parse(path.read_text(), filename=str(path))
    enclosing = {}
    for function in ast.walk(tree):  # outer functions first, so inner ones win
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            enclosing.update(dict.fromkeys(ast.walk(function), function.name))
    return {
        f"{path.relative_to(ROOT).as_posix()}:{enclosing.get(node, '<module>')}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (getattr(node.func, "id", None) or getattr(node.func, "attr", None))
        in ("mallopt", "_mallopt", "tune_process_heap")
    }


def test_only_the_command_line_entry_point_tunes_the_heap():
    """Library code never calls mallopt: in the packages, besides the tuning function
    itself, only the command line's main (whose process ends with the command) calls it
    (the benchmark scripts, which own their processes too, are no package)."""
    calls = sorted(
        {
            call
            for package in PACKAGES
            for path in (ROOT / package).rglob("*.py")
            for call in _heap_calls(path)
        }
    )
    assert calls == ["sims/cli/__init__.py:main", "sims/core/runtime.py:tune_process_heap"]


def test_ray_tasks_start_their_workers_with_glibcs_heap_variables():
    options = task_options(Resources(cpus=2, gpus=0.5))
    assert options["runtime_env"]["env_vars"] == {
        "MALLOC_MMAP_THRESHOLD_": str(MMAP_THRESHOLD_BYTES),
        "MALLOC_TRIM_THRESHOLD_": str(TRIM_THRESHOLD_BYTES),
    }
    assert options["runtime_env"]["env_vars"] is not HEAP_TUNING_ENV  # Ray may keep it
    assert (options["num_cpus"], options["num_gpus"]) == (2, 0.5)


def test_seeded_reproduces_draws_and_restores_the_global_generator():
    torch.manual_seed(123)
    expected_after = torch.rand(3)  # what the caller's stream gives next, untouched
    torch.manual_seed(123)
    with seeded(7):
        first = torch.rand(4)
    after = torch.rand(3)
    with seeded(7):
        again = torch.rand(4)
    # Reference draws of seed 7 from a private generator: independent of the global one.
    reference = torch.rand(4, generator=torch.Generator().manual_seed(7))
    torch.testing.assert_close(first, reference, rtol=0, atol=0)
    torch.testing.assert_close(again, reference, rtol=0, atol=0)
    torch.testing.assert_close(after, expected_after, rtol=0, atol=0)


def test_seeded_model_initialisation_is_reproducible():
    with seeded(3):
        a = torch.nn.Linear(5, 2).weight.detach().clone()
    with seeded(3):
        b = torch.nn.Linear(5, 2).weight.detach().clone()
    with seeded(4):
        c = torch.nn.Linear(5, 2).weight.detach().clone()
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert not torch.equal(a, c)


def test_generator_is_seeded_and_private():
    state = torch.random.get_rng_state()
    draws = torch.rand(3, generator=generator(11))
    torch.testing.assert_close(
        draws, torch.rand(3, generator=torch.Generator().manual_seed(11)), rtol=0, atol=0
    )
    assert torch.equal(torch.random.get_rng_state(), state)


def test_fingerprint_ignores_device_and_excluded_fields_only():
    base = {"p": 0.3, "seed": 1, "device": "cpu", "data_dir": "/a"}
    same = fingerprint(base, exclude=("data_dir",))
    assert fingerprint({**base, "device": "cuda:3"}, exclude=("data_dir",)) == same
    assert fingerprint({**base, "data_dir": "/b"}, exclude=("data_dir",)) == same
    assert fingerprint({**base, "p": 0.31}, exclude=("data_dir",)) != same
    assert fingerprint({**base, "seed": 2}, exclude=("data_dir",)) != same
    # without the exclusion the data directory counts
    assert fingerprint(base) != fingerprint({**base, "data_dir": "/b"})


def test_fingerprint_is_independent_of_key_order_and_has_the_asked_length():
    a = fingerprint({"x": 1, "y": [1, 2]}, length=12)
    b = fingerprint({"y": [1, 2], "x": 1}, length=12)
    assert a == b
    assert len(a) == 12
    assert all(ch in "0123456789abcdef" for ch in a)
