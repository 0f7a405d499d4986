"""Local training of many worlds at once: eq. (1) under ``torch.func.vmap``.

A release computed one world per secret (several local steps, several rounds, a defense)
trains the same architecture from many starting points on many batches.
:func:`train_each` runs :func:`sims.fl.client.local_sgd` (PriPrune eq. (1): ``steps``
full-batch steps ``w <- m ⊙ (w - r grad l(v))``) for every row at once, ``chunk`` rows per
vectorised call, so it is the client update itself, not a second implementation of it.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch.func import vmap

from pruneleak.sims.fl.client import local_sgd
from pruneleak.sims.releases.setting import ClientSetting

#: Rows (worlds) per vectorised call, at most: bounds the activations and gradients held
#: at once.
CHUNK = 256
#: Parameter values of the worlds of one vectorised call, at most (2**27 float64, 1 GiB per
#: copy of the weights): a large model gets fewer worlds per call.
CHUNK_VALUES = 1 << 27


def train_each(
    setting: ClientSetting,
    start: Mapping[str, torch.Tensor],
    images: torch.Tensor,
    labels: torch.Tensor,
    *,
    start_per_row: bool,
    data_per_row: bool,
    chunk: int = CHUNK,
) -> dict[str, torch.Tensor]:
    """``setting.local_steps`` steps of eq. (1) for every row, ``{name: (n, *shape)}``.

    Args:
        setting: the model, base mask, learning rate, steps and ``gradient_at``.
        start: the starting weights, ``{name: (n, *shape)}`` with ``start_per_row``, else
            one ``{name: shape}`` shared by every row.
        images, labels: ``(n, B, C, H, W)`` and ``(n, B)`` with ``data_per_row`` (row
            ``i`` trains on its own batch), else one ``(B, C, H, W)`` batch for every row.
        chunk: rows per vectorised call, >= 1 (fewer for a large model:
            :data:`CHUNK_VALUES`).

    Returns:
        The trained weights of every row (float64 when the inputs are), on the inputs'
        device. ``n`` is taken from whichever argument is per row (both must agree).
    """
    if not start_per_row and not data_per_row:
        raise ValueError("train_each needs a per-row start or per-row data (else n is unknown).")
    model, mask = setting.model, setting.mask
    steps, lr, at = setting.local_steps, setting.lr, setting.gradient_at
    weights = sum(t.numel() for t in start.values()) // (
        next(iter(start.values())).shape[0] if start_per_row else 1
    )
    chunk = min(chunk, max(1, CHUNK_VALUES // weights))

    def one(w, x, y):
        return local_sgd(model, w, mask, [(x, y)] * steps, lr=lr, gradient_at=at)

    run = vmap(one, in_dims=(0 if start_per_row else None, *(0 if data_per_row else None,) * 2))
    n = (next(iter(start.values())) if start_per_row else images).shape[0]
    out: dict[str, list[torch.Tensor]] = {name: [] for name in start}
    for lo in range(0, n, chunk):
        part = slice(lo, lo + chunk)
        w = {k: v[part] for k, v in start.items()} if start_per_row else start
        x, y = (images[part], labels[part]) if data_per_row else (images, labels)
        for name, value in run(w, x, y).items():
            out[name].append(value)
    return {name: torch.cat(parts) for name, parts in out.items()}
