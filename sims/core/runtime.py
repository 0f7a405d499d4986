"""Opt-in process tuning and reproducible randomness that leaves no global state behind.

Library code never changes the process: no thread count, allocator setting or global
seed survives a call. Two context managers give the command line and the benchmarks
what they need:

* :func:`torch_threads` sets torch's intra-op thread count for the duration of the block
  and restores the previous count (torch can read it back);
* :func:`seeded` runs a block (typically a model's construction, whose ``nn.Module``
  initialisers draw from torch's global generator) under a forked, seeded global
  generator, so the same seed gives the same weights and the caller's RNG state is
  untouched afterwards.

The heap tuning (glibc keeping freed blocks, :func:`tune_process_heap`) is no context
manager: glibc has no getter for its settings, so nothing could restore them, and setting
the mmap threshold turns glibc's dynamic threshold off for good. It belongs to whoever owns
the process: the command line's ``main`` (:mod:`sims.cli`) and the benchmark scripts call
:func:`tune_process_heap` first thing, since their process ends with them; a Ray worker is
started with :data:`HEAP_TUNING_ENV`, which glibc reads at the worker's start
(:mod:`sims.sweep.ray_executor`). A notebook kernel or any other caller of the library
keeps glibc's own behaviour.

Draws inside the library come from ``torch.Generator`` / ``numpy.random.Generator``
objects seeded from the job's ``seed`` and passed down.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING

from pruneleak.bounds.validation import MAX_SEED as MAX_SEED  # re-exported
from pruneleak.bounds.validation import check_int, check_seed

if TYPE_CHECKING:
    import torch

# torch is imported inside the functions that use it, so that a command that never
# touches torch (``pruneleak bound``, ``pruneleak verify``) starts without loading it.

# glibc mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
#: The largest block glibc serves from the heap of a tuned process (glibc's largest
#: allowed mmap threshold on 64-bit, mallopt(3)); larger blocks are mapped afresh.
MMAP_THRESHOLD_BYTES = 32 * 2**20
#: The free memory at the top of a tuned process's heap that glibc keeps rather than
#: returning it to the system.
TRIM_THRESHOLD_BYTES = 2**30
#: The heap tuning as glibc's environment variables (mallopt(3), "Environment
#: variables"), which glibc reads once, when a process starts: the tuning of a process
#: started for our work only, such as a Ray worker.
HEAP_TUNING_ENV = {
    "MALLOC_MMAP_THRESHOLD_": str(MMAP_THRESHOLD_BYTES),
    "MALLOC_TRIM_THRESHOLD_": str(TRIM_THRESHOLD_BYTES),
}


def _mallopt():
    """glibc's ``mallopt`` or None where the C library is not glibc (macOS, musl)."""
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):
        return None
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return mallopt


def tune_process_heap() -> bool:
    """Let glibc's heap keep freed blocks of up to :data:`MMAP_THRESHOLD_BYTES` and up to
    :data:`TRIM_THRESHOLD_BYTES` of free heap top, for the rest of the process; True on
    glibc, False (nothing done) elsewhere.

    An attack iteration frees and reallocates the same large tensors every step; with
    glibc's defaults (128 KiB for both thresholds) each of them is served by fresh,
    page-faulted pages. The setting is process-wide and permanent
    (module docstring): only a process's entry point calls this, never library code.
    """
    mallopt = _mallopt()
    if mallopt is None:
        return False
    mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
    mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)
    return True


@contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """Run the block on ``threads`` torch intra-op threads and restore the previous count
    on exit, even when the block raises.

    ``threads`` >= 1, or None to leave the count alone (torch is then not imported). One
    thread suits the small models of the attacks: a second one mostly adds
    synchronisation on a shared host. Thread counts are process-wide in torch: do not
    enter this from several Python threads at once.
    """
    if threads is None:
        yield
        return
    threads = check_int("threads", threads, func="torch_threads", low=1)
    import torch

    previous = torch.get_num_threads()
    if threads != previous:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        if torch.get_num_threads() != previous:
            torch.set_num_threads(previous)


@contextmanager
def seeded(seed: int, device: torch.device | str = "cpu") -> Iterator[None]:
    """Run the block with torch's global generator (CPU, and ``device`` if CUDA) seeded
    to ``seed``; the generators' previous states are restored on exit."""
    import torch

    seed = check_seed(seed, func="seeded")
    device = torch.device(device)
    devices = [device] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices, device_type="cuda"):
        torch.manual_seed(seed)
        yield


def generator(seed: int, device: torch.device | str = "cpu") -> torch.Generator:
    """A fresh ``torch.Generator`` on ``device`` seeded to ``seed``."""
    import torch

    seed = check_seed(seed, func="generator")
    return torch.Generator(device=torch.device(device)).manual_seed(seed)


#: Fields that never enter a fingerprint: where a job runs does not change what it computes.
NOT_FINGERPRINTED = frozenset({"device"})


def fingerprint(fields: Mapping, *, length: int = 16, exclude=()) -> str:
    """A stable hex digest of a job's defining fields (sorted JSON, SHA-256).

    ``device`` and the names in ``exclude`` are left out, so moving a sweep to a GPU or
    changing where data are read from does not recompute finished work.
    """
    length = check_int("length", length, func="fingerprint", low=4, high=64)
    skip = NOT_FINGERPRINTED | set(exclude)
    kept = {key: value for key, value in fields.items() if key not in skip}
    text = json.dumps(kept, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:length]
