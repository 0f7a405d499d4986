"""Leakage of a sweep's attacked uploads in bits: exact bits and Fano bits of one secret.

The secret of one attacked upload is the target client's batch: a uniformly random
``B``-subset of its local data ``D_i`` (FedSGD draws ``randperm(|D_i|)[:B]`` every round,
:class:`sims.fl.server.FedConfig`), one of ``N = C(|D_i|, B)`` equally likely values. The
release is the upload the server sees (no noise). Both numbers are about this secret,
in bits, so they compare with each other and with PriPrune's bound:

* :func:`exact_bits`: ``I(batch; upload)`` of one round. With one local step and a mask
  that does not depend on the batch, the kept coordinates of the upload are the mean of
  the batch's single-sample releases (:func:`sims.fl.release.release_vectors`), and
  without noise ``I`` is the entropy of the groups of batches with equal releases
  (``log2 N`` when all differ; :func:`bounds.leakage.batch_leakage`).
* :func:`fano_bits`: the attacker names the ``B`` local samples nearest (L2, pixel space)
  to its ``B`` reconstructions, as an assignment (``B`` distinct samples,
  :func:`sims.attacks.identify`); a success is the named set equal to the batch. ``errors`` out of
  ``trials`` give Fano's lower bound on ``I`` at the Clopper-Pearson upper limit of the
  error (:func:`bounds.leakage.fano_lower_confidence_bits`).
"""

from __future__ import annotations

import math

import torch

from pruneleak.bounds import leakage
from pruneleak.sims.fl.release import release_vectors

#: Confidence of the Clopper-Pearson interval behind the Fano bits.
CONFIDENCE = 0.95
# Noiseless batch means are enumerated (exact grouping) while N * kept <= this (int64
# sums, about a second per 2^30); beyond, batch_leakage assumes them distinct.
ENUMERATION_BUDGET = 1 << 30
# The upload must equal the mean of the batch's single releases to this relative
# tolerance (float32 kernels, batched versus not), else the release model does not hold.
_RELEASE_RTOL = 1e-4


def secrets_log2(local_size: int, batch_size: int) -> float:
    """``log2 C(|D_i|, B)``: the entropy of a uniform ``B``-subset of ``|D_i|`` samples."""
    return math.log2(math.comb(local_size, min(batch_size, local_size)))


def batch_positions(batch_images: torch.Tensor, local_images: torch.Tensor) -> list[int] | None:
    """Positions in ``D_i`` (rows of ``local_images``) of the batch's images, by exact
    equality; None when an image matches no local sample or several (duplicates: which
    sample the client drew cannot be told)."""
    local = local_images.reshape(len(local_images), -1).cpu()
    found = []
    for image in batch_images.reshape(len(batch_images), -1).cpu():
        hits = torch.nonzero((local == image).all(dim=1)).flatten()
        if len(hits) != 1:
            return None
        found.append(int(hits[0]))
    return found


def fano_bits(local_size: int, batch_size: int, errors: int, trials: int) -> float:
    """Fano's lower bound on ``I(batch; upload)`` (bits) from ``errors`` wrong
    identifications out of ``trials`` (the target's attacked uploads), at the upper
    Clopper-Pearson limit (:data:`CONFIDENCE`) of the error. With several rounds the
    channel changes with ``w``; Fano's expression is convex in the error, so the bound
    at the rounds' mean error is a lower bound on their mean ``I``."""
    secrets = math.comb(local_size, min(batch_size, local_size))
    return leakage.fano_lower_confidence_bits(secrets, errors, trials, CONFIDENCE)


def exact_bits(
    model: torch.nn.Module,
    upload: dict,
    local_images: torch.Tensor,
    local_labels: torch.Tensor,
    *,
    lr: float,
    gradient_at: str,
    local_steps: int,
    max_candidates: int,
) -> leakage.BatchLeakage | None:
    """``I(batch; upload)`` in bits for the round of ``upload`` (a record of the sweep's
    observer: ``w``, ``sent``, ``mask``, ``batch``), or None where it is not computed:

    * ``local_steps != 1``: after several steps on the batch the release is no longer
      the mean of single-sample releases (each step's gradient is taken at the previous
      step's weights);
    * ``|D_i| > max_candidates``: the ``|D_i| x kept`` release matrix would be too large;
    * ``N > ENUMERATION_BUDGET / kept`` (too many batches to group exactly) while two
      local samples release alike (then batch means are not all distinct and no count
      without enumeration is exact);
    * the batch's images are not found exactly once in ``D_i``, or the upload differs
      from the mean of its batch's single releases (a scheme that changes the mask or
      the weights after training with the batch's data, e.g. a FedDST readjustment
      round): the release model of :mod:`sims.fl.release` does not hold.

    The releases are taken at the upload's broadcast point ``w`` under its mask, with the
    FL loop's ``lr`` and ``gradient_at``; no noise (``s = 0``). Returns
    :func:`bounds.leakage.batch_leakage`'s result (``.bits``; ``.method`` is ``"exact"``,
    or ``"assumed_distinct"`` when ``N`` is past the enumeration budget and the single
    releases differ: ``log2 N``, assuming no two batches have equal means).
    """
    images, _ = upload["batch"]
    batch_size = len(images)
    if local_steps != 1 or len(local_images) > max_candidates:
        return None
    positions = batch_positions(images, local_images)
    if positions is None:
        return None
    mask = upload["mask"]
    device = next(iter(upload["w"].values())).device
    releases = release_vectors(
        model,
        upload["w"],
        mask,
        local_images.to(device),
        local_labels.to(device),
        lr=lr,
        gradient_at=gradient_at,
    )
    keep = mask.flatten().to(device)
    sent = torch.cat([t.detach().reshape(-1) for t in upload["sent"].values()])[keep]
    sent = sent.to("cpu", torch.float64)
    predicted = releases[positions].mean(dim=0)
    scale = max(1.0, float(sent.abs().max())) if sent.numel() else 1.0
    if sent.numel() and float((predicted - sent).abs().max()) > _RELEASE_RTOL * scale:
        return None
    releases = releases.numpy()
    enumerated = ENUMERATION_BUDGET // max(1, releases.shape[1])
    if batch_size > 1 and math.comb(len(releases), batch_size) > enumerated:
        distinct = len(leakage.distinct_rows(releases))
        if 1 < distinct < len(releases):  # some batch means coincide, which ones unknown
            return None
    return leakage.batch_leakage(releases, 0.0, batch_size, max_enumerated=enumerated)
