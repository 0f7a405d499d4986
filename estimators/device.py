"""Torch device selection shared by ``estimators`` and ``sims``."""

from __future__ import annotations

import torch

#: Device types the toolkit computes on; others (``"meta"``, ``"xla"``, ...) parse in torch
#: but would fail later, far from the configuration that named them.
DEVICE_TYPES = ("cpu", "cuda", "mps")


def _parse(device, where: str) -> torch.device:
    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError) as err:
        parsed, cause = None, err
    else:
        cause = None
    if parsed is None or parsed.type not in DEVICE_TYPES:
        raise ValueError(
            f"The 'device' parameter{where} must be 'auto', 'cpu', 'cuda', 'cuda:N' or 'mps'. "
            f"Got {device!r} instead."
        ) from cause
    return parsed


def check_device(device: str | torch.device, *, func: str) -> str | torch.device:
    """Check that ``device`` names a device (``"auto"``, ``"cpu"``, ``"cuda"``,
    ``"cuda:N"``, ``"mps"``) without asking whether it is present, so a configuration
    written for a GPU can be loaded, validated and fingerprinted on a laptop. Returns
    ``device``.

    Examples
    --------
    >>> check_device("cuda:1", func="f")  # not looked up: valid on a machine without CUDA
    'cuda:1'
    """
    if isinstance(device, str) and device == "auto":
        return device
    _parse(device, f" of {func}")
    return device


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """Map ``"auto"`` to CUDA when available (else CPU); pass any other device through.

    Raises ValueError for a CUDA device on a machine without CUDA or with fewer GPUs than
    its index, and for MPS where it is not available, instead of failing later inside
    torch.

    Examples
    --------
    >>> resolve_device("cpu")
    device(type='cpu')
    """
    if isinstance(device, str) and device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    resolved = _parse(device, "")
    if resolved.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device={device!r} was requested but CUDA is not available here.")
        count = torch.cuda.device_count()
        if resolved.index is not None and resolved.index >= count:
            raise ValueError(
                f"device={device!r} was requested but this machine has {count} CUDA "
                f"device(s): cuda:0 to cuda:{count - 1}."
            )
    if resolved.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"device={device!r} was requested but MPS is not available here.")
    return resolved
