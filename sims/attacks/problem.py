"""One inversion problem, validated and placed on the attack's device.

Between the public entry points (:mod:`sims.attacks.inversion`) and the pure objective
(:mod:`sims.attacks.objectives`) sit the steps every run shares, single or batched:
check and move the evaluation point and target, mask the target, fix the labels
(known, or iDLG, or LLG, or none when they are optimised; deviation 4 in
:mod:`sims.attacks.attack`), draw the ``N(0, 1)`` start (PriPrune Algorithm 2 line 5),
and turn the best variables (:class:`sims.attacks.inversion.BestIterate`) into an
:class:`AttackResult`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from pruneleak.sims.attacks.checks import check_same_layout
from pruneleak.sims.attacks.config import AttackConfig, AttackResult
from pruneleak.sims.attacks.objectives import flatten, image_map
from pruneleak.sims.attacks.update import idlg_label, recover_labels
from pruneleak.sims.pruning.mask import Mask, prunable_names


def _fixed_labels(
    labels,
    target: dict[str, torch.Tensor],
    mask: Mask | None,
    *,
    batch: int,
    num_classes: int,
    config: AttackConfig,
    func: str,
) -> torch.Tensor | None:
    """Fixed labels (int64, on the target's device), or None when they are optimised."""
    mode = config.label_mode
    if mode != "known" and labels is not None:
        raise ValueError(
            f"The 'labels' parameter of {func} must be None with label_mode={mode!r}. "
            f"Got a tensor instead."
        )
    if mode == "optimize":
        return None
    if mode == "idlg":
        if batch != 1:
            raise ValueError(
                f"The 'config.label_mode' parameter of {func} is 'idlg', which recovers the "
                f"label of one image only; it needs batch_shape[0] == 1. Got batch size "
                f"{batch} instead."
            )
        return idlg_label(target, num_classes=num_classes, mask=mask)
    if mode == "recover":
        return recover_labels(target, num_classes=num_classes, batch_size=batch, mask=mask)
    if (
        not isinstance(labels, torch.Tensor)
        or labels.dtype not in (torch.int64, torch.int32)
        or tuple(labels.shape) != (batch,)
        or bool((labels < 0).any())
        or bool((labels >= num_classes).any())
    ):
        raise ValueError(
            f"The 'labels' parameter of {func} must be an integer tensor of shape ({batch},) "
            f"with values in [0, {num_classes - 1}] when label_mode='known'. "
            f"Got {labels!r} instead."
        )
    return labels.to(next(iter(target.values())).device, torch.int64)


@dataclass
class InversionProblem:
    """One validated inversion on the attack's device: the arguments of the objective
    (:func:`sims.attacks.objectives.attack_objective`, without the row dimension) and
    the fixed labels. ``target`` and ``keep`` are flattened in ``point``'s order
    (:func:`sims.attacks.objectives.flatten`); ``keep`` is 1 on the tensors that are not
    prunable, None without a mask."""

    point: dict[str, torch.Tensor]
    target: torch.Tensor
    target_energy: torch.Tensor
    keep: torch.Tensor | None
    onehot: torch.Tensor
    labels: torch.Tensor | None

    def arguments(self) -> tuple:
        return self.point, self.target, self.target_energy, self.keep, self.onehot


def prepare_problem(
    params, target_grad, *, batch_shape, num_classes, labels, mask, config, device, func
) -> InversionProblem:
    """Move ``params`` and ``target_grad`` (dicts that
    :func:`sims.attacks.checks.check_param_dict` returned: finite, detached) to ``device``
    after checking their layouts, mask the target, refuse a target that is zero on every
    kept coordinate, and fix the labels.

    The zero test reads the target's energy ``sum ||m ⊙ g||^2``, the denominator of both
    matching losses, which is computed anyway: one device synchronisation, no further
    scan. A target so small that its squares underflow is refused with it (the losses
    would divide by zero); one whose energy overflows passes, and its run ends in the
    divergence error of :mod:`sims.attacks.inversion`.
    """
    point = {n: t.to(device) for n, t in params.items()}
    target = {n: t.to(device) for n, t in target_grad.items()}
    check_same_layout("params", point, "target_grad", target, func=func)
    if mask is not None:
        check_same_layout("mask.keep", mask.keep, "params", point, func=func)
        mask = mask.to(device)
        target = mask.apply(target)
    energy = sum((t * t).sum() for t in target.values())
    if not float(energy) > 0:
        raise ValueError(
            f"The 'target_grad' parameter of {func} is zero on every kept coordinate (its "
            f"energy sum ||m * g||^2 is {float(energy)}). Read from an upload as "
            "(w - w') / lr, it is zero where the client's step left the float32 weights "
            "unchanged: check the client's 'lr' (too small to move them?)."
        )
    fixed = _fixed_labels(
        labels,
        target,
        mask,
        batch=batch_shape[0],
        num_classes=num_classes,
        config=config,
        func=func,
    )
    dtype = next(iter(point.values())).dtype
    keep = None
    if mask is not None:
        prunable = set(prunable_names(point))
        keep = flatten(
            [
                mask.keep[n].to(t.dtype) if n in prunable else torch.ones_like(t)
                for n, t in point.items()
            ]
        )
    if fixed is None:
        onehot = torch.zeros((batch_shape[0], num_classes), device=device, dtype=dtype)
    else:
        onehot = nn.functional.one_hot(fixed, num_classes).to(dtype)
    target = flatten([target[n] for n in point])
    return InversionProblem(point, target, energy, keep, onehot, fixed)


def initial_variables(
    generator: torch.Generator, batch_shape, num_classes: int, config: AttackConfig
) -> list[torch.Tensor]:
    """``N(0, 1)`` images (PriPrune Alg. 2 line 5), then label logits when optimised (CPU)."""
    variables = [torch.randn(batch_shape, generator=generator)]
    if config.label_mode == "optimize":
        variables.append(torch.randn((batch_shape[0], num_classes), generator=generator))
    return variables


def attack_result(
    images, label_logits, problem: InversionProblem, loss: float, iterations: int, config
) -> AttackResult:
    """The returned images (mapped, clamped to [0, 1], float32 on CPU) and labels (fixed,
    or the argmax of the optimised logits ``label_logits``)."""
    found = label_logits.argmax(dim=-1) if problem.labels is None else problem.labels
    return AttackResult(
        images=image_map(config)(images).clamp(0.0, 1.0).to("cpu", torch.float32),
        labels=found.to("cpu"),
        loss=loss,
        iterations=iterations,
    )
