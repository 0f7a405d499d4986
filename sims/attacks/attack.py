"""The attack on a pruned FL update: GI and PriPrune's SGI as one gradient inversion.

An honest-but-curious server holds the global weights ``w`` and a client's upload
``w_hat = m ⊙ (w - lr * g)`` (PriPrune, arXiv:2310.19958, eq. (1)). It reads the update
(:mod:`sims.attacks.update`) and inverts the gradient it reveals
(:mod:`sims.attacks.inversion`). :func:`gradient_inversion` does both, and one switch,
``mask_aware``, is all that separates the two attacks of the paper:

* ``mask_aware=True`` -- Sparse Gradient Inversion (SGI, PriPrune Algorithm 2):
  recover the mask from the zeros of ``w_hat`` (line 3), form the masked
  pseudo-gradient ``m ⊙ (w - w_hat) / lr`` (line 4) and invert it with the matching
  loss restricted to the kept coordinates, the dummy gradient taken at ``m ⊙ w`` by
  default (where the client took it).
* ``mask_aware=False`` -- classic gradient inversion (GI; Geiping et al. 2020,
  "Inverting Gradients", NeurIPS): it reads ``(w - w_hat) / lr`` over *all*
  coordinates as a dense FedSGD gradient at ``w``. A pruned coordinate then shows
  ``w / lr`` instead of a gradient, which is how PriPrune's appendix ("Comparison of
  Attacks", Fig. 6/7) runs GI on pruned models and why it "fails even with low pruning
  rates such as p = 0.2". On an unpruned update the two coincide.

:func:`sgi_attack` and :func:`gi_attack` are the two settings under the paper's names;
the ``*_batched`` twins attack K uploads as one batched inversion.

Deviations from PriPrune Algorithm 2 as published (line numbers of arXiv:2310.19958):

1. Line 4 forms ``(w_hat^t - w_hat^{t-1}) ⊙ m_rec``, i.e. ``-lr * g`` and with the
   *user's previous upload* as reference. Under FedSGD the step starts from the global
   weights, and the cosine loss below line 7 is sign sensitive, so matching ``-lr * g``
   would drive the dummy gradient to ``-g``. We use ``(w - w_hat) / lr`` with ``w`` the
   global weights, which equals ``m ⊙ g`` up to float round-off
   (:func:`sims.attacks.update.pseudo_gradient`).
2. The loss below line 7 adds the regulariser as a constant, ``1 - cos + tau``, which
   has no effect on the optimisation. We follow Geiping et al.:
   ``1 - cos + tv_weight * TV(x)`` (:mod:`sims.attacks.objectives`).
3. Line 7 evaluates the dummy gradient at ``w_hat`` (the weights *after* the step); the
   client computed it at ``m ⊙ w`` (eq. (1)). We default to ``m_rec ⊙ w``
   (``gradient_at="masked"``); ``gradient_at="sent"`` reproduces the published line,
   which breaks the inversion even at p = 0 (see the results page and the tests).
4. Line 5 initialises integer labels ``randint(0, max(y))`` and line 8 takes gradient
   steps on them; gradient steps need soft labels, so ``label_mode="optimize"``
   optimises label logits as DLG does. ``"known"`` and ``"idlg"`` are the usual
   stronger alternatives (:mod:`sims.attacks.problem`), and ``"recover"`` reads the
   labels of a batch off the last layer's gradient (LLG,
   :func:`sims.attacks.update.recover_labels`).
5. Line 7 masks only the target: it matches the whole dummy gradient ``g'`` against
   ``m_rec ⊙ g``, so every pruned coordinate, whose target is 0, pulls ``g'`` there to
   0 as well, a constraint the client's data does not satisfy. We mask the dummy
   gradient too and match ``m_rec ⊙ g'`` against ``m_rec ⊙ g``
   (``AttackConfig.mask_dummy=True``, :mod:`sims.attacks.objectives`);
   ``mask_dummy=False`` is the line as printed; ``benchmarks/sgi_masking.py`` measures
   the difference (docs/deviations.md).

Beyond p = 0.9 SGI fails for a reason the attack cannot remove: the client's *forward*
pass runs the pruned network ``m ⊙ w`` (eq. (1)), which keeps so few weights that it
hardly sees the image; with the gradient taken at the dense ``w``
(``gradient_at="dense"``) the kept coordinates still identify the image (see
:mod:`sims.experiments.identifiability`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch
from torch import nn

from pruneleak.bounds.validation import check_choice
from pruneleak.sims.attacks.checks import (
    check_param_dict,
    check_param_dicts,
    check_sequence,
    per_attack,
)
from pruneleak.sims.attacks.config import GRADIENT_POINTS, AttackConfig, AttackResult
from pruneleak.sims.attacks.inversion import invert_checked, invert_checked_batched
from pruneleak.sims.attacks.update import mask_from_zeros, revealed_gradient
from pruneleak.sims.core.functional import check_lr


def _check_switch(mask_aware, gradient_at, local_steps, *, func: str) -> str:
    """The evaluation point, defaulting by ``mask_aware``: ``m ⊙ w`` for SGI, ``w`` for GI."""
    if not isinstance(mask_aware, bool):
        raise ValueError(
            f"The 'mask_aware' parameter of {func} must be a bool. Got {mask_aware!r} instead."
        )
    if gradient_at is None:
        gradient_at = "masked" if mask_aware else "dense"
    check_choice("gradient_at", gradient_at, func=func, choices=GRADIENT_POINTS)
    if not mask_aware and gradient_at == "masked":
        raise ValueError(
            f"The 'gradient_at' parameter of {func} must be 'dense' or 'sent' without "
            f"mask_aware (GI knows no mask). Got 'masked' instead."
        )
    if local_steps != 1 and gradient_at == "sent":
        raise ValueError(
            f"The 'gradient_at' parameter of {func} cannot be 'sent' with local_steps > 1 "
            f"(the replayed steps start from the broadcast weights). Got 'sent' instead."
        )
    return gradient_at


def _read_update(w, sent, *, mask_aware, lr, gradient_at, func):
    """``(point, target, mask)`` the server inverts for one update, from the broadcast
    weights ``w`` and the upload ``sent`` (dicts that
    :func:`sims.attacks.checks.check_param_dict` returned) and a checked ``lr``.

    The mask is the only thing ``mask_aware`` decides: recovered from ``w_hat`` (SGI) or
    None (GI); the target and the evaluation point follow from it.
    """
    mask = mask_from_zeros(sent) if mask_aware else None
    target = revealed_gradient(w, sent, lr=lr, mask=mask, func=func)
    if gradient_at == "sent":
        point = sent
    elif gradient_at == "masked":
        point = mask.to(next(iter(w.values())).device).apply(w)
    else:
        point = w
    return point, target, mask


def gradient_inversion(
    model: nn.Module,
    global_params: Mapping[str, torch.Tensor],
    sent_params: Mapping[str, torch.Tensor],
    *,
    mask_aware: bool,
    lr: float,
    batch_shape: tuple[int, int, int, int],
    num_classes: int,
    labels: torch.Tensor | None = None,
    config: AttackConfig,
    gradient_at: str | None = None,
    local_steps: int = 1,
) -> AttackResult:
    """Reconstruct the batch behind one upload ``sent_params`` of the broadcast
    ``global_params``: SGI with ``mask_aware=True``, GI without (module docstring).

    1. the mask: :func:`sims.attacks.update.recover_mask` of ``sent_params`` when
       ``mask_aware`` (Alg. 2 line 3), else none;
    2. the target: :func:`sims.attacks.update.pseudo_gradient` ``(w - w_hat) / lr``
       under that mask (line 4), ``lr`` the client's learning rate (> 0);
    3. :func:`sims.attacks.inversion.invert_gradient` of the target under that mask
       (lines 5-8), the dummy gradient taken at ``gradient_at``: ``"masked"`` (``m ⊙ w``,
       where :func:`sims.fl.client.client_update` takes it; mask-aware only), ``"dense"``
       (``w``, a client that trains densely) or ``"sent"`` (``w_hat``, as published).
       Default: ``"masked"`` with ``mask_aware``, else ``"dense"``.

    ``batch_shape``, ``num_classes``, ``labels`` and ``config`` are passed to
    :func:`sims.attacks.inversion.invert_gradient`. Exact for one FedSGD step; with
    ``local_steps`` > 1 (the client's local epochs on one batch, ``lr`` its learning
    rate) the dummy batch replays the ``local_steps`` steps from the evaluation point
    (``"sent"`` is then not allowed).
    """
    func = "gradient_inversion"
    gradient_at = _check_switch(mask_aware, gradient_at, local_steps, func=func)
    point, target, mask = _read_update(
        check_param_dict("global_params", global_params, func=func, model=model),
        check_param_dict("sent_params", sent_params, func=func),
        mask_aware=mask_aware,
        lr=check_lr("lr", lr, func=func),
        gradient_at=gradient_at,
        func=func,
    )
    return invert_checked(
        model,
        point,
        target,
        batch_shape=batch_shape,
        num_classes=num_classes,
        labels=labels,
        mask=mask,
        config=config,
        local_steps=local_steps,
        client_lr=lr,
        func=func,
    )


def gradient_inversion_batched(
    model: nn.Module,
    global_params: Mapping[str, torch.Tensor] | Sequence[Mapping[str, torch.Tensor]],
    sent_params: Sequence[Mapping[str, torch.Tensor]],
    *,
    mask_aware: bool,
    lr: float,
    batch_shape: tuple[int, int, int, int],
    num_classes: int,
    labels: Sequence[torch.Tensor | None] | None = None,
    config: AttackConfig,
    seeds: Sequence[int] | None = None,
    gradient_at: str | None = None,
    local_steps: int = 1,
    chunk: int | None = None,
) -> list[AttackResult]:
    """:func:`gradient_inversion` of K uploads ``sent_params[k]`` (broadcast weights: one
    dict for all, or one per upload; ``labels`` and ``seeds`` one per upload) as one
    batched inversion, :func:`sims.attacks.inversion.invert_gradient_batched` (``chunk``
    as there)."""
    func = "gradient_inversion_batched"
    gradient_at = _check_switch(mask_aware, gradient_at, local_steps, func=func)
    count = check_sequence("sent_params", sent_params, func=func, what="uploads")
    global_params = per_attack("global_params", global_params, count, func=func, single=Mapping)
    lr = check_lr("lr", lr, func=func)
    problems = [
        _read_update(w, sent, mask_aware=mask_aware, lr=lr, gradient_at=gradient_at, func=func)
        for w, sent in zip(
            check_param_dicts("global_params", global_params, func=func, model=model),
            [
                check_param_dict(f"sent_params[{k}]", s, func=func)
                for k, s in enumerate(sent_params)
            ],
            strict=True,
        )
    ]
    return invert_checked_batched(
        model,
        [p[0] for p in problems],
        [p[1] for p in problems],
        batch_shape=batch_shape,
        num_classes=num_classes,
        labels=labels,
        masks=[p[2] for p in problems],
        config=config,
        seeds=seeds,
        local_steps=local_steps,
        client_lr=lr,
        chunk=chunk,
        func=func,
    )


def sgi_attack(model: nn.Module, global_params, sent_params, **options) -> AttackResult:
    """Sparse Gradient Inversion (PriPrune Algorithm 2): :func:`gradient_inversion` with
    ``mask_aware=True``; the keyword options (``lr``, ``batch_shape``, ``num_classes``,
    ``config``, ...) as there."""
    return gradient_inversion(model, global_params, sent_params, mask_aware=True, **options)


def gi_attack(model: nn.Module, global_params, sent_params, **options) -> AttackResult:
    """Classic gradient inversion (Geiping et al. 2020) of a pruned update:
    :func:`gradient_inversion` with ``mask_aware=False``; the keyword options as there
    (``gradient_at`` ``"dense"`` or ``"sent"``)."""
    return gradient_inversion(model, global_params, sent_params, mask_aware=False, **options)


def sgi_attack_batched(
    model: nn.Module, global_params, sent_params, **options
) -> list[AttackResult]:
    """:func:`sgi_attack` on K uploads: :func:`gradient_inversion_batched` with
    ``mask_aware=True``; the keyword options as there."""
    return gradient_inversion_batched(model, global_params, sent_params, mask_aware=True, **options)


def gi_attack_batched(
    model: nn.Module, global_params, sent_params, **options
) -> list[AttackResult]:
    """:func:`gi_attack` on K uploads: :func:`gradient_inversion_batched` with
    ``mask_aware=False``; the keyword options as there."""
    return gradient_inversion_batched(
        model, global_params, sent_params, mask_aware=False, **options
    )
