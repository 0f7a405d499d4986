"""Opt-in process tuning and reproducible randomness that leaves no global state behind.

Library code never changes the process: no thread count, allocator setting or global
seed survives a call. Two context managers give the command line and the benchmarks
what they need:

* :func:`cpu_tuning` sets torch's intra-op thread count and, on glibc, lets the heap keep
  freed blocks, for the duration of the block only;
* :func:`seeded` runs a block (typically a model's construction, whose ``nn.Module``
  initialisers draw from torch's global generator) under a forked, seeded global
  generator, so the same seed gives the same weights and the caller's RNG state is
  untouched afterwards.

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

# glibc mallopt parameters (malloc.h), their defaults (mallopt(3)) and our tuned values.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_DEFAULT_THRESHOLD_BYTES = 128 * 1024
#: The largest block glibc serves from its heap under :func:`cpu_tuning` (glibc's largest
#: allowed mmap threshold on 64-bit, mallopt(3)); larger blocks are mapped afresh.
MMAP_THRESHOLD_BYTES = 32 * 2**20
_TRIM_THRESHOLD_BYTES = 2**30


def _mallopt():
    """glibc's ``mallopt`` or None where the C library is not glibc (macOS, musl)."""
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):
        return None
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return mallopt


@contextmanager
def cpu_tuning(*, threads: int | None = 1, keep_freed_memory: bool = True) -> Iterator[None]:
    """Tune the CPU for many small torch steps, inside this block only.

    Args:
        threads: torch intra-op threads inside the block (None: leave as is, and torch
            is not imported). One thread suits the small models of the attacks: a second
            one mostly adds synchronisation on a shared host.
        keep_freed_memory: on glibc, let the heap keep freed blocks of up to 32 MiB (and
            up to 1 GiB of free heap top). An attack iteration frees and reallocates the
            same large tensors every step; with glibc's defaults each of them is served
            by fresh, page-faulted pages. glibc's documented defaults (128 KiB for both
            thresholds) are set back on exit.

    Thread counts are process-wide in torch: do not enter this from several Python
    threads at once.
    """
    torch = None
    if threads is not None:
        threads = check_int("threads", threads, func="cpu_tuning", low=1)
        import torch
    previous = torch.get_num_threads() if torch is not None else None
    mallopt = _mallopt() if keep_freed_memory else None
    if torch is not None and threads != previous:
        torch.set_num_threads(threads)
    if mallopt is not None:
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
        mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD_BYTES)
    try:
        yield
    finally:
        if mallopt is not None:
            mallopt(_M_MMAP_THRESHOLD, _DEFAULT_THRESHOLD_BYTES)
            mallopt(_M_TRIM_THRESHOLD, _DEFAULT_THRESHOLD_BYTES)
        if torch is not None and torch.get_num_threads() != previous:
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
