"""Refusing work that cannot fit in memory before anything is allocated.

A model or a batch whose size comes from the user's options (a hidden width, a number of
samples) may need more memory than the device has. torch would then fail deep inside its
allocator, or, on Linux with memory overcommit, start and be killed later. The checks
here compare a size computed *before* allocation with the memory of the target device:
physical RAM for the CPU (``os.sysconf``), the GPU's total memory for CUDA
(``torch.cuda.get_device_properties``). Total rather than free memory: the check refuses
what can never fit, not what does not fit right now (torch's caching allocator keeps
freed blocks, which free-memory queries count as used).
"""

from __future__ import annotations

import os

import torch

#: Parameter-sized float tensors a training step or an attack holds at once, at least: the
#: caller's weights, the working copy, their gradient and the updated weights.
TRAINING_COPIES = 4


def device_memory_bytes(device: str | torch.device) -> int | None:
    """Total memory of ``device`` in bytes: physical RAM for ``"cpu"``, the GPU's memory
    for ``"cuda[:N]"``; None where the platform does not report it (no ``os.sysconf``)."""
    device = torch.device(device)
    if device.type == "cuda":
        index = device.index if device.index is not None else torch.cuda.current_device()
        return int(torch.cuda.get_device_properties(index).total_memory)
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # Windows has no sysconf
        return None


def format_bytes(n: float) -> str:
    """``n`` bytes in binary units, e.g. ``format_bytes(3 * 2**30) == '3.0 GiB'``."""
    units = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
    power = 0
    while n >= 1024 and power < len(units) - 1:
        n /= 1024
        power += 1
    return f"{n:.1f} {units[power]}"


def check_fits(
    what: str,
    count: int,
    *,
    unit: str,
    bytes_each: int,
    copies: int,
    device: str | torch.device,
) -> None:
    """Raise ValueError when ``copies`` copies of ``count`` values of ``bytes_each`` bytes
    exceed the memory of ``device`` (:func:`device_memory_bytes`).

    ``what`` says what the user asked for, with the parameters and values that set its
    size (e.g. ``"The model conv_net(hidden=1000000000, ...)"``); ``unit`` names the values
    (``"parameters"``, ``"float32 values"``). The message gives the count, the bytes and the
    limit.
    """
    limit = device_memory_bytes(device)
    need = count * bytes_each * copies
    if limit is not None and need > limit:
        raise ValueError(
            f"{what} has {count:,} {unit} ({format_bytes(count * bytes_each)}); it needs at "
            f"least {copies} copies of them ({format_bytes(need)}), more than the "
            f"{format_bytes(limit)} of memory of the {torch.device(device)} device. "
            f"Choose smaller values."
        )
