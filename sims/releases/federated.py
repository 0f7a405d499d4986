"""The target's uploads over ``T`` rounds of pruned FL, each of ``tau`` local steps.

PriPrune's Algorithm 1 with the target client in every round: round ``t`` broadcasts
``w_{t-1}``, every client runs ``tau`` steps of eq. (1) under the base mask ``m`` on its
batch (:func:`sims.fl.client.local_sgd`), and the server averages the uploads weighted by
the clients' batch sizes (line 11, ``sum_i |D_i| / |D| w_hat_i``; every client keeps the
same coordinates, so the mean needs no per-coordinate counts). The other clients' batches
are fixed and known to the server, as are ``w_0``, ``m`` and the seeds; then the whole
trajectory is a deterministic function of the target's batch ``X``, and the release is
the concatenation of the target's ``T`` uploads (kept coordinates):

.. math:: Y = \\big(u_1(X), \\dots, u_T(X)\\big) + Z,\\qquad Z\\sim N(0, s^2 I),

where the noise ``Z`` is that of the server's view: training uses the clean uploads
(the observer's channel; noise that enters training, as DP noise does, makes the
release random given ``X``: :mod:`sims.releases.dp_upload`). The other clients' uploads
add nothing the server could not compute from ``Y`` and what it knows, so they are not
part of ``Y``. ``T = 1`` with ``tau = 1`` is one FedSGD step, whose release of a batch is
the mean of its members' single releases (:attr:`FederatedRelease.linear`); otherwise the
release is computed in one world per secret (every ``B``-subset of the candidates), all
worlds at once (:func:`sims.releases.training.train_each`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import torch

from pruneleak.bounds.validation import check_int
from pruneleak.sims.core.functional import check_batch
from pruneleak.sims.fl.client import local_sgd
from pruneleak.sims.fl.release import release_gram, release_vectors
from pruneleak.sims.releases.setting import MAX_SECRETS, ClientSetting, secret_batches, secret_data
from pruneleak.sims.releases.training import CHUNK, train_each


class FederatedRelease:
    """The target's ``rounds`` uploads (module docstring); deterministic given the batch.

    Args:
        setting: the target's round as the server knows it (:class:`ClientSetting`;
            ``setting.local_steps`` is ``tau``).
        images, labels: the ``M`` candidates, ``(M, C, H, W)`` and ``(M,)``.
        batch_size: ``B``, the secret is a uniform ``B``-subset of the candidates.
        rounds: ``T >= 1``, rounds the target takes part in with its batch.
        others: the other clients' fixed batches ``(images, labels)``, one per client,
            training in every round beside the target (none: the server's model is the
            target's upload).
        max_secrets: cap on ``N = C(M, B)`` for a release computed world by world.
        chunk: worlds per vectorised call.
    """

    randomness = "none"

    def __init__(
        self,
        setting: ClientSetting,
        images: torch.Tensor,
        labels: torch.Tensor,
        *,
        batch_size: int = 1,
        rounds: int = 1,
        others: Sequence[tuple[torch.Tensor, torch.Tensor]] = (),
        max_secrets: int = MAX_SECRETS,
        chunk: int = CHUNK,
    ):
        func = "FederatedRelease"
        check_batch(setting.model, images, labels, func=func)
        for k, pair in enumerate(others):
            if not isinstance(pair, tuple | list) or len(pair) != 2:
                raise ValueError(
                    f"The 'others' parameter of {func} must hold (images, labels) pairs, one "
                    f"per client. Got {type(pair).__name__} at index {k} instead."
                )
            check_batch(setting.model, *pair, func=func)
        self.setting = setting
        self.images = images.to(setting.device, torch.float64)
        self.labels = labels.to(setting.device)
        self.batch_size = check_int("batch_size", batch_size, func=func, low=1, high=len(images))
        self.rounds = check_int("rounds", rounds, func=func, low=1)
        self.others = [
            (x.to(setting.device, torch.float64), y.to(setting.device)) for x, y in others
        ]
        self.max_secrets = check_int("max_secrets", max_secrets, func=func, low=1)
        self.chunk = check_int("chunk", chunk, func=func, low=1)

    @property
    def linear(self) -> bool:
        """One round of one step: a batch's release is the mean of its members' releases,
        so :meth:`single_releases` suffice for any ``B`` (:func:`bounds.leakage.batch_leakage`)."""
        return self.rounds == 1 and self.setting.local_steps == 1

    def single_releases(self) -> np.ndarray:
        """``(M, k)`` float64: the kept coordinates of each candidate's round-1 upload when
        it is the whole batch (``B = 1``). One step from a common start is ``w - lr g_i``,
        so the kept coordinates come from the per-sample gradients alone
        (:func:`sims.fl.release.release_vectors`), ``chunk`` candidates at a time: no
        candidate's whole weights are held."""
        return self._single(release_vectors)

    def single_gram(self) -> np.ndarray:
        """``(M, M)`` float64: the Gram matrix of the single releases translated by the kept
        weights (:func:`sims.fl.release.release_gram`), for models whose ``(M, k)`` single
        releases are too large to hold: their geometry is all the leakage needs
        (:mod:`sims.releases.geometry`)."""
        return self._single(release_gram)

    def _single(self, compute) -> np.ndarray:
        """``compute`` (:func:`sims.fl.release.release_vectors` or ``release_gram``) on the
        candidates, one step from the setting's weights."""
        setting = self.setting
        return compute(
            setting.model,
            setting.params,
            setting.mask,
            self.images,
            self.labels,
            lr=setting.lr,
            gradient_at=setting.gradient_at,
            chunk_size=self.chunk,
        ).numpy()

    def secrets(self) -> torch.Tensor:
        """``(N, B)`` candidate indices of every secret, one world each (lexicographic)."""
        return secret_batches(len(self.images), self.batch_size, max_secrets=self.max_secrets)

    def uploads(self) -> Iterator[np.ndarray]:
        """Per round ``t = 1..T``, the ``(N, k)`` float64 kept coordinates of the target's
        upload in every secret's world, row ``i`` for ``secrets()[i]``."""
        setting = self.setting
        x, y = secret_data(
            setting,
            self.images,
            self.labels,
            self.batch_size,
            max_secrets=self.max_secrets,
            func="FederatedRelease.uploads",
        )
        w, per_row = setting.params, False
        weight = self.batch_size + sum(len(labels) for _, labels in self.others)
        for t in range(1, self.rounds + 1):
            target = train_each(
                setting, w, x, y, start_per_row=per_row, data_per_row=True, chunk=self.chunk
            )
            yield setting.kept_rows(target).cpu().numpy()
            if t == self.rounds:
                return
            total = {name: self.batch_size * value for name, value in target.items()}
            for images, labels in self.others:
                if per_row:
                    other = train_each(
                        setting,
                        w,
                        images,
                        labels,
                        start_per_row=True,
                        data_per_row=False,
                        chunk=self.chunk,
                    )
                else:  # round 1: one common start, one computation for every world
                    steps = [(images, labels)] * setting.local_steps
                    sent = local_sgd(
                        setting.model,
                        w,
                        setting.mask,
                        steps,
                        lr=setting.lr,
                        gradient_at=setting.gradient_at,
                    )
                    other = {name: value[None] for name, value in sent.items()}
                for name in total:
                    total[name] = total[name] + len(labels) * other[name]
            w, per_row = {name: value / weight for name, value in total.items()}, True
