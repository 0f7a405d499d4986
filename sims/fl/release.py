"""What the server sees of one client's one-step update, as vectors: one per candidate batch.

The leakage of an update (:mod:`bounds.leakage`) is computed from the release vector of
every value the secret can take. For one FedSGD step (PriPrune eq. (1),
:func:`sims.fl.client.client_update` with ``local_steps=1``) and a data-independent mask,
the release of a batch is the kept coordinates of ``w_hat = m ⊙ (w - lr * g)`` with ``g``
the mean of the batch's per-sample gradients, so the release of a batch of ``B``
candidates is the mean of their single-candidate releases: this module computes the
single-candidate ones and :func:`bounds.leakage.batch_leakage` averages them.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import nn

from bounds.validation import check_choice, check_int
from sims.core.functional import check_lr
from sims.core.per_sample import per_sample_gradients
from sims.pruning.mask import Mask

GRADIENT_AT = ("masked", "dense")


def release_vectors(
    model: nn.Module,
    global_params: Mapping[str, torch.Tensor],
    mask: Mask,
    images: torch.Tensor,
    labels: torch.Tensor,
    *,
    lr: float,
    gradient_at: str = "masked",
    chunk_size: int = 256,
) -> torch.Tensor:
    """The kept coordinates of every candidate's one-step update, float64 ``(M, k)`` on CPU.

    Row ``i`` is ``w_hat`` of :func:`sims.fl.client.client_update` (one step, the same
    ``gradient_at``) on the batch ``images[i:i+1]``, restricted to the
    ``k = mask.num_kept()`` kept coordinates in the mask's (``named_parameters``) order:
    ``w_kept - lr * g_kept(v, x_i)`` with ``v = m ⊙ w`` (``"masked"``) or ``v = w``
    (``"dense"``). The per-sample gradients are computed with ``torch.func.vmap``
    (:func:`sims.core.per_sample.per_sample_gradients`) ``chunk_size`` candidates at a
    time, in the model's dtype on its device, so this equals ``M`` calls of
    ``client_update`` up to the round-off of batched kernels; the result goes to the host
    in float64 for :mod:`bounds`. Pruned coordinates are omitted: with a data-independent
    mask they are 0 in every release and public.
    """
    func = "release_vectors"
    lr = check_lr("lr", lr, func=func)
    gradient_at = check_choice("gradient_at", gradient_at, func=func, choices=GRADIENT_AT)
    chunk_size = check_int("chunk_size", chunk_size, func=func, low=1)
    point = mask.apply(global_params) if gradient_at == "masked" else dict(global_params)
    keep = mask.flatten().to(images.device)
    w_kept = torch.cat([t.detach().reshape(-1) for t in global_params.values()])[keep]
    rows = []
    for x, y in zip(images.split(chunk_size), labels.split(chunk_size), strict=True):
        g = per_sample_gradients(model, point, x, y, mask=mask)
        rows.append((w_kept - lr * g).to("cpu", torch.float64))
    return torch.cat(rows)
