"""What the server sees of one client's one-step update, as vectors: one per candidate batch.

The leakage of an update (:mod:`bounds.leakage`) is computed from the release vector of
every value the secret can take. For one FedSGD step (PriPrune eq. (1),
:func:`sims.fl.client.client_update` with ``local_steps=1``) and a data-independent mask,
the release of a batch is the kept coordinates of ``w_hat = m ⊙ (w - lr * g)`` with ``g``
the mean of the batch's per-sample gradients, so the release of a batch of ``B``
candidates is the mean of their single-candidate releases: this module computes the
single-candidate ones and :func:`bounds.leakage.batch_leakage` averages them.

Two forms of the same releases:

- :func:`release_vectors`, the ``(M, k)`` matrix itself (``k`` kept coordinates, up to
  millions: ``8 M k`` bytes);
- :func:`release_gram`, their ``(M, M)`` Gram matrix after a translation, from which
  :func:`bounds.leakage.releases_from_gram` builds an ``(M, r)`` matrix, ``r < M``, with the
  same pairwise distances: the leakage through isotropic Gaussian noise depends on the
  releases only through those distances (it is invariant under translations and
  isometries), so both forms give the same bits, and the second never holds an
  ``(M, k)`` matrix.

Both compute in float64 by default (``dtype``), from a float64 copy of the weights and
images: at ``s = 0`` the exact leakage counts the *distinct* releases, so equality must
be decided by an exact computation, and float32 (about 7 significant digits) rounds
releases that differ by less than ``6e-8 |w|`` per coordinate to the same value,
merging candidates that float64 keeps apart.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import nn

from pruneleak.bounds.validation import check_choice, check_int
from pruneleak.sims.core.functional import check_lr
from pruneleak.sims.gradients.per_sample import per_sample_gradients, per_sample_gram
from pruneleak.sims.pruning.mask import Mask

GRADIENT_AT = ("masked", "dense")
#: Floating-point types the releases may be computed in.
DTYPES = (torch.float64, torch.float32)


def _evaluation_point(global_params, mask, images, *, gradient_at, dtype, func):
    """Validated options and, in ``dtype`` (new tensors: the caller's are not modified),
    the weights ``w``, the point ``v`` where the gradient is taken (``m ⊙ w`` or ``w``)
    and the images."""
    if dtype not in DTYPES:
        raise ValueError(
            f"The 'dtype' parameter of {func} must be one of torch.float64, torch.float32. "
            f"Got {dtype!r} instead."
        )
    gradient_at = check_choice("gradient_at", gradient_at, func=func, choices=GRADIENT_AT)
    weights = {name: t.detach().to(dtype) for name, t in global_params.items()}
    point = mask.apply(weights) if gradient_at == "masked" else weights
    return weights, point, images.to(dtype)


def release_vectors(
    model: nn.Module,
    global_params: Mapping[str, torch.Tensor],
    mask: Mask,
    images: torch.Tensor,
    labels: torch.Tensor,
    *,
    lr: float,
    gradient_at: str = "masked",
    dtype: torch.dtype = torch.float64,
    chunk_size: int = 256,
) -> torch.Tensor:
    """The kept coordinates of every candidate's one-step update, float64 ``(M, k)`` on CPU.

    Row ``i`` is ``w_hat`` of :func:`sims.fl.client.client_update` (one step, the same
    ``gradient_at``) on the batch ``images[i:i+1]``, restricted to the
    ``k = mask.num_kept()`` kept coordinates in the mask's (``named_parameters``) order:
    ``w_kept - lr * g_kept(v, x_i)`` with ``v = m ⊙ w`` (``"masked"``) or ``v = w``
    (``"dense"``). The per-sample gradients are computed with
    :func:`sims.gradients.per_sample.per_sample_gradients` ``chunk_size`` candidates at a time
    on the images' device, in ``dtype`` (default float64, module docstring: distinct
    releases must stay distinct) from copies of ``global_params`` and ``images`` in that
    type; ``model`` supplies only the architecture (``torch.func.functional_call``) and is
    not modified. So this equals ``M`` calls of ``client_update`` on a ``dtype`` copy of
    the model up to the round-off of batched kernels; ``dtype=torch.float32`` gives the
    float32 releases of a float32 client. The result goes to the host in float64 for
    :mod:`bounds`. Pruned coordinates are omitted: with a data-independent mask they are 0
    in every release and public.
    """
    func = "release_vectors"
    lr = check_lr("lr", lr, func=func)
    chunk_size = check_int("chunk_size", chunk_size, func=func, low=1)
    weights, point, images = _evaluation_point(
        global_params, mask, images, gradient_at=gradient_at, dtype=dtype, func=func
    )
    keep = mask.flatten().to(images.device)
    w_kept = torch.cat([t.reshape(-1) for t in weights.values()])[keep]
    rows = []
    for x, y in zip(images.split(chunk_size), labels.split(chunk_size), strict=True):
        g = per_sample_gradients(model, point, x, y, mask=mask)
        rows.append((w_kept - lr * g).to("cpu", torch.float64))
    return torch.cat(rows)


def release_gram(
    model: nn.Module,
    global_params: Mapping[str, torch.Tensor],
    mask: Mask,
    images: torch.Tensor,
    labels: torch.Tensor,
    *,
    lr: float,
    gradient_at: str = "masked",
    dtype: torch.dtype = torch.float64,
    chunk_size: int = 256,
) -> torch.Tensor:
    r"""Gram matrix of the one-step releases translated by :math:`-w_{kept}`, float64
    ``(M, M)`` on CPU: :math:`lr^2 \langle g_i, g_j\rangle` over the kept coordinates.

    The releases of :func:`release_vectors` (same arguments) are
    :math:`r_i = w_{kept} - lr\,g_i`, so :math:`r_i - w_{kept} = -lr\,g_i`, a translation:
    the pairwise distances, hence the leakage through Gaussian noise, are those of the
    vectors :math:`lr\,g_i`, whose Gram this is,

    .. math:: K_{ij} = lr^2 \sum_{c\ \text{kept}} g_{ic}\, g_{jc},
              \qquad \|r_i - r_j\|^2 = K_{ii} + K_{jj} - 2K_{ij}.

    Returned **uncentred** and without :math:`w_{kept}`: adding :math:`w_{kept}` would add
    :math:`\|w_{kept}\|^2` to every entry, and its round-off (about
    :math:`10^{-16}\|w_{kept}\|^2`) would swamp distances of order :math:`lr^2\|g\|^2`;
    the diagonal is the scale of the entries' round-off that
    :func:`bounds.leakage.gram_groups` needs; :func:`bounds.leakage.releases_from_gram`
    centres. Compose: ``releases_from_gram(release_gram(...).numpy())`` is an ``(M, r)``
    matrix for :func:`bounds.leakage.batch_leakage` at ``s > 0``.

    Computed by :func:`sims.gradients.per_sample.per_sample_gram` over chunks of ``chunk_size``
    candidates on the images' device, in ``dtype`` (default float64, from copies of
    ``global_params`` and ``images``; ``model`` supplies only the architecture): no
    ``(M, k)`` matrix is formed. Memory: the ``(M, M)`` result (on the device, then on
    the host), two chunks' recorded layers and the per-layer blocks of
    ``per_sample_gram``; ``ceil(M/c)(ceil(M/c)+1)/2`` forward and backward passes of
    ``c = chunk_size`` candidates.
    """
    func = "release_gram"
    lr = check_lr("lr", lr, func=func)
    chunk_size = check_int("chunk_size", chunk_size, func=func, low=1)
    _, point, images = _evaluation_point(
        global_params, mask, images, gradient_at=gradient_at, dtype=dtype, func=func
    )
    gram, _ = per_sample_gram(model, point, images, labels, mask=mask, chunk_size=chunk_size)
    return (gram * (lr * lr)).cpu()
