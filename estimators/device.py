"""Torch device selection shared by ``estimators`` and ``sims``."""

from __future__ import annotations

import torch


def check_device(device: str | torch.device, *, func: str) -> str | torch.device:
    """Check that ``device`` names a device (``"auto"``, ``"cpu"``, ``"cuda"``,
    ``"cuda:N"``, ...) without asking whether it is present, so a configuration written
    for a GPU can be loaded, validated and fingerprinted on a laptop. Returns ``device``.

    Examples
    --------
    >>> check_device("cuda:1", func="f")  # not looked up: valid on a machine without CUDA
    'cuda:1'
    """
    if isinstance(device, str) and device == "auto":
        return device
    try:
        torch.device(device)
    except (RuntimeError, TypeError) as err:
        raise ValueError(
            f"The 'device' parameter of {func} must be 'auto', 'cpu', 'cuda' or 'cuda:N'. "
            f"Got {device!r} instead."
        ) from err
    return device


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """Map ``"auto"`` to CUDA when available (else CPU); pass any other device through.

    Raises ValueError for a CUDA device on a machine without CUDA, instead of failing
    later inside torch.

    Examples
    --------
    >>> resolve_device("cpu")
    device(type='cpu')
    """
    if isinstance(device, str) and device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as err:
        raise ValueError(
            "The 'device' parameter must be 'auto', 'cpu', 'cuda' or 'cuda:N'. "
            f"Got {device!r} instead."
        ) from err
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} was requested but CUDA is not available here.")
    return resolved
