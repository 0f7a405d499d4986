"""A defense-aware SGI: the honest-but-curious server that knows PriPrune's Algorithm 3.

PriPrune (arXiv:2310.19958, "Pruning as a Privacy Defense for FL"; journal version Sec. 5,
Algorithm 3) evaluates its client-side defenses against SGI as Algorithm 2 runs it
(:func:`sims.attacks.sgi_attack`): the mask read off the zeros of the upload (line 3),
so the withheld weights are not matched (they do not enter as ``w / lr``), but the dummy
gradient is taken at that mask times the broadcast weights and every non-zero
coordinate is read as a gradient. That attacker does not know how the upload was made. The
server here does (Kerckhoffs: only the client's data and its private weights are
secret) and uses what the fixed defenses (:class:`sims.defenses.FixedDefense`) imply for
client ``i``'s upload ``w_hat = m_hat ⊙ w_bar`` of round ``t`` (:mod:`sims.defenses.client`):

1. **Withheld coordinates**: a base-kept prunable coordinate at which ``w_hat`` is 0 was
   withheld by the defense (AAAI eq. 8; Algorithm 3 line 13). Its value tells nothing,
   so it is left out of the matching: ``mask = m_i^t & (w_hat != 0)`` on prunable tensors.
   A shared weight that is exactly 0 is read as withheld too: rare, but not of
   probability zero, since the server's aggregate is 0 where every sampled client
   withheld a weight and a zero gradient (a dead ReLU) keeps it there; the attack then
   drops a coordinate it could have used, never matches a wrong one.
2. **Stale coordinates (Pseudo-Pruning)**: the client starts round ``t`` from
   ``w_init = w^{t-1} ⊙ m_hat' + w_tilde ⊙ (1 - m_hat')`` (the text after AAAI eq. 8;
   journal Sec. 5.2), ``m_hat'`` the defense mask of the client's **previous** upload.
   Where ``m_hat'`` withheld, ``(w^{t-1} - w_hat) / lr`` is ``(w^{t-1} - w_tilde)/lr + g``,
   not the gradient ``g``, so those coordinates are left out too. The observer keeps,
   per client, the coordinates withheld at its last upload it saw (only the last one:
   :meth:`sims.defenses.Defense.start` loads back the last round's ``w_tilde`` only),
   so it must see every upload of the clients it attacks (``targets`` of
   :func:`sims.fl.server.run_federated` fixed across rounds, as in
   :func:`sims.sweep.runner.run_job`).
3. **The evaluation point**: the client took its gradient under its *base* mask
   (eq. (1): the forward pass of ``m_i^t ⊙ w_init``, the weights it withholds
   afterwards included), so the dummy gradient is taken at ``m_i^t ⊙ w_init``
   (``gradient_at="masked"``) or ``w_init`` (``"dense"``), not at the recovered mask
   times ``w^{t-1}`` as Algorithm 2 does, which drops the withheld weights from the
   forward pass. Without Pseudo-Pruning ``w_init = w^{t-1}``. With it, ``w_tilde`` is
   the client's private trained weights of its previous round: the record's ``point``
   keeps the broadcast there, and :func:`defense_aware_attack` (``replay=True``, the
   attacker's prior) replaces it by an estimate: the client's previous round replayed on
   the attacker's own reconstruction of that round's batch.

The masks are exact for the fixed defenses under FedSGD, and so is the point without
Pseudo-Pruning; with it the point is as good as the replayed reconstruction. PriPrune's
adaptive defense (:mod:`sims.defenses.adaptive`) steps by ``lambda_acc * lr`` (pass that
as ``lr``: :attr:`sims.defenses.DefenseSpec.step_scale`) and, from a client's second
round on, mixes its whole previous trained model into every local step's forward pass at
coordinates drawn with its private probabilities ``alpha``; the attack models neither,
so against it the attack is exact only at a client's first round.

Placed in :mod:`sims.attacks` because it is the server's side: it reads uploads and
broadcasts only, never a defense's state, and imports nothing from :mod:`sims.defenses`.

:class:`DefenseAwareObserver` is the ``on_target_update`` observer that keeps one record
per upload; :func:`defense_aware_attack` inverts a list of its records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch
from torch import nn

from pruneleak.bounds.validation import check_choice
from pruneleak.sims.attacks.config import AttackConfig, AttackResult
from pruneleak.sims.attacks.inversion import invert_gradient_batched
from pruneleak.sims.attacks.update import revealed_gradient
from pruneleak.sims.core.functional import check_lr
from pruneleak.sims.fl.client import local_sgd
from pruneleak.sims.pruning.mask import Mask, prunable_names

Params = Mapping[str, torch.Tensor]

#: Where the aware attacker takes the dummy gradient (:class:`sims.fl.server.FedConfig`'s
#: ``gradient_at``: the client's own point).
AWARE_POINTS = ("masked", "dense")


def _device(params: Params) -> torch.device:
    return next(iter(params.values())).device


def attack_mask(base: Mask, sent: Params, stale: Mapping[str, torch.Tensor] | None) -> Mask:
    """The coordinates whose ``(w - w_hat) / lr`` is the client's gradient (module
    docstring, steps 1-2): ``base`` minus the zeros of ``sent`` on prunable tensors,
    minus ``stale`` (bool flags per prunable tensor; None: nothing stale).
    The mask lies on the upload's device."""
    base = base.to(_device(sent))
    keep = dict(base.keep)
    for name in prunable_names(base.keep):
        flags = base.keep[name] & (sent[name] != 0)
        if stale is not None:
            flags = flags & ~stale[name]
        keep[name] = flags
    return Mask(keep)


def evaluation_point(base: Mask, start: Params, gradient_at: str) -> dict[str, torch.Tensor]:
    """Where the client took its gradient from ``start`` (module docstring, step 3)."""
    return base.to(_device(start)).apply(start) if gradient_at == "masked" else dict(start)


class DefenseAwareObserver:
    """The defense-aware server's ``on_target_update`` (module docstring), with per-client
    state.

    Args:
        pseudo: whether the clients run Pseudo-Pruning (the server knows the defense's
            settings); with real pruning nothing is stale.
        gradient_at: the clients' ``gradient_at`` (:data:`AWARE_POINTS`).

    Attributes:
        records: one dict per upload seen, in order: ``round``, ``client``, ``w`` (the
            broadcast ``w^{t-1}``), ``sent`` (the upload), ``mask`` (the base mask
            ``m_i^t``), ``batch`` (what the FL loop passed), ``stale`` (with
            Pseudo-Pruning, bool flags per prunable tensor of the coordinates the client
            withheld at its previous upload, all False at its first; None without),
            ``attack_mask`` (the coordinates the attack matches), ``point`` (where it
            takes the dummy gradient, the broadcast at the stale coordinates) and
            ``gradient_at``.
    """

    def __init__(self, *, pseudo: bool, gradient_at: str = "masked"):
        func = "DefenseAwareObserver"
        if not isinstance(pseudo, bool):
            raise ValueError(
                f"The 'pseudo' parameter of {func} must be a bool. Got {pseudo!r} instead."
            )
        self.pseudo = pseudo
        self.gradient_at = check_choice("gradient_at", gradient_at, func=func, choices=AWARE_POINTS)
        self.records: list[dict] = []
        self._last_withheld: dict[int, dict[str, torch.Tensor]] = {}

    def fork(self) -> DefenseAwareObserver:
        """A new observer with no records and this one's per-client state (what each client
        withheld at its last upload seen): to record alternative uploads of the same round
        without one changing what is stale for the other."""
        other = DefenseAwareObserver(pseudo=self.pseudo, gradient_at=self.gradient_at)
        other._last_withheld = dict(self._last_withheld)
        return other

    def __call__(
        self, t: int, client: int, global_params: Params, sent: Params, mask: Mask, batch
    ) -> None:
        stale = None
        if self.pseudo:
            base = mask.to(_device(sent))
            names = prunable_names(base.keep)
            stale = self._last_withheld.get(client) or {
                n: torch.zeros_like(base.keep[n]) for n in names
            }
            # this upload's withheld coordinates are the stale ones of the next
            self._last_withheld[client] = {n: base.keep[n] & (sent[n] == 0) for n in names}
        self.records.append(
            {
                "round": t,
                "client": client,
                "w": global_params,
                "sent": sent,
                "mask": mask,
                "batch": batch,
                "stale": stale,
                "attack_mask": attack_mask(mask, sent, stale),
                "point": evaluation_point(mask, global_params, self.gradient_at),
                "gradient_at": self.gradient_at,
            }
        )


def defense_aware_attack(
    model: nn.Module,
    records: Sequence[Mapping],
    *,
    lr: float,
    config: AttackConfig,
    labels: Sequence[torch.Tensor | None] | None = None,
    seeds: Sequence[int] | None = None,
    local_steps: int = 1,
    replay: bool = True,
    **options,
) -> list[AttackResult]:
    """Invert the uploads of :class:`DefenseAwareObserver` records (in the order seen):
    the target ``attack_mask ⊙ (w - w_hat) / lr`` (Algorithm 2 line 4 under the aware
    mask) matched on ``attack_mask`` at the record's point
    (:func:`sims.attacks.inversion.invert_gradient_batched`, the uploads of one round as
    one batched computation, rounds in order).

    ``replay`` (Pseudo-Pruning records only; the attacker's prior): the point's stale
    coordinates hold, instead of the broadcast, an estimate of the client's ``w_tilde``:
    its previous local training (eq. (1): ``local_steps`` steps of ``lr`` under its base
    mask, :func:`sims.fl.client.local_sgd`) replayed from the estimated start of that
    round on the attacker's own reconstruction of that round's batch and labels. The
    withheld weights are the client's trained weights (Algorithm 3 line 13), so a good
    reconstruction of round ``t'`` gives back the forward pass of round ``t``. A client's
    earlier records must be among ``records`` for this; without them the point keeps the
    broadcast.

    ``lr`` is the client's learning rate (times the defense's step scale, e.g.
    PriPrune's ``lambda_acc``); ``config``, ``labels`` and ``seeds`` (one per record;
    default: none and ``config.seed``) and the other keyword options (``batch_shape``,
    ``num_classes``, ``chunk``) as in :func:`sims.attacks.inversion.invert_gradient_batched`.
    """
    func = "defense_aware_attack"
    lr = check_lr("lr", lr, func=func)
    if not isinstance(replay, bool):
        raise ValueError(
            f"The 'replay' parameter of {func} must be a bool. Got {replay!r} instead."
        )
    count = len(records)
    labels = [None] * count if labels is None else list(labels)
    seeds = [config.seed] * count if seeds is None else list(seeds)
    results: list[AttackResult] = [None] * count
    replayed: dict[int, dict[str, torch.Tensor]] = {}  # per client: its estimated w_bar
    for t in sorted({r["round"] for r in records}):
        rows = [k for k, r in enumerate(records) if r["round"] == t]
        starts, points = {}, {}
        for k in rows:
            record = records[k]
            starts[k] = dict(record["w"])
            previous = replayed.get(record["client"]) if replay else None
            if previous is None:
                points[k] = record["point"]
                continue
            stale = record["stale"]
            starts[k].update({n: torch.where(stale[n], previous[n], starts[k][n]) for n in stale})
            points[k] = evaluation_point(record["mask"], starts[k], record["gradient_at"])
        found = invert_gradient_batched(
            model,
            [points[k] for k in rows],
            [
                revealed_gradient(
                    dict(records[k]["w"]),
                    dict(records[k]["sent"]),
                    lr=lr,
                    mask=records[k]["attack_mask"],
                    func=func,
                )
                for k in rows
            ],
            masks=[records[k]["attack_mask"] for k in rows],
            labels=[labels[k] for k in rows],
            seeds=[seeds[k] for k in rows],
            config=config,
            local_steps=local_steps,
            client_lr=lr,
            **options,
        )
        for k, result in zip(rows, found, strict=True):
            results[k] = result
            record = records[k]
            if replay and record["stale"] is not None:
                like = next(iter(starts[k].values()))
                batch = (result.images.to(like), result.labels.to(like.device))
                replayed[record["client"]] = local_sgd(
                    model,
                    starts[k],
                    record["mask"].to(like.device),
                    [batch] * local_steps,
                    lr=lr,
                    gradient_at=record["gradient_at"],
                )
    return results
