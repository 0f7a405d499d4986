"""Gradient inversion attacks on pruned FL updates: GI and PriPrune's SGI.

An honest-but-curious server holds the global weights ``w`` it broadcast and the pruned
weights ``w_hat = m ⊙ (w - lr * g)`` a client sent back after one FedSGD step
(PriPrune, arXiv:2310.19958, eq. (1); :func:`sims.fl.client_update`). It searches for a
batch of images whose gradient matches the gradient the update reveals.

* :func:`sgi_attack` -- Sparse Gradient Inversion (PriPrune Algorithm 2): recover the
  mask from the zeros of ``w_hat`` (line 3), form the masked pseudo-gradient
  ``m ⊙ (w - w_hat) / lr`` (line 4) and invert it with the matching loss restricted to
  the kept coordinates.
* :func:`gi_attack` -- classic gradient inversion (Geiping et al. 2020, "Inverting
  Gradients", NeurIPS), not mask-aware: it reads ``(w - w_hat) / lr`` over *all*
  coordinates as a dense FedSGD gradient at ``w``. A pruned coordinate then shows
  ``w / lr`` instead of a gradient, which is how PriPrune's appendix ("Comparison of
  Attacks", Fig. 6/7) runs GI on pruned models and why it "fails even with low pruning
  rates such as p = 0.2".
* :func:`invert_gradient` -- the inversion both share; :func:`idlg_label` -- iDLG label
  recovery (Zhao, Mopuri and Bilen 2020, arXiv:2001.02610) for one image.

Two matching losses and optimisers are offered (:class:`AttackConfig`): cosine
distance + total variation with Adam (Geiping et al.; PriPrune's choice) and squared L2
with L-BFGS (Zhu, Liu and Han 2019, "Deep Leakage from Gradients", DLG). On 8x8 digits
with the model of :data:`DIGITS_ATTACK_MODEL` (Conv-1, 16 channels, sigmoid, average
pooling; 26,474 parameters), 100 L-BFGS iterations (about 0.6 s of one CPU core) recover
an unpruned single image at 32-62 dB PSNR (mean 53 dB over the first 8 digits). The
floor is float32 round-off in ``(w - w_hat) / lr``, a relative error of about
``2**-24 |w| / (lr |g|)`` per coordinate. The Conv-2 that :func:`sims.models.conv_net`
suggests for digits (width 8, two 2x2 pools down to a 16x2x2 map) inverts far worse
(about 22 dB with average pooling, 14 dB with max pooling, in the same 100 iterations).

Measured on the first 8 digits, B = 1, iDLG labels, random masks, client lr 0.25 (mean
PSNR in dB, SGI / GI). ``AttackConfig.dlg()``: p = 0: 53.0 / 53.0; 0.3: 36.0 / 4.3;
0.5: 31.5 / 5.2; 0.9: 13.9 / 5.7; 0.99: 5.7 / 5.7 (both return their untouched random
start: the kept coordinates no longer depend on the image within float32 precision).
``AttackConfig.inverting_gradients()``: 39.7 / 39.7; 35.0 / 4.3; 30.9 / 3.6;
15.5 / 4.4; 8.2 / 4.5. GI already fails at p = 0.01 (4.3 dB): a single pruned
coordinate's ``w / lr`` outweighs the whole gradient.

The client's loss is assumed to be the mean cross-entropy of :func:`sims.fl.batch_gradient`
(soft targets for jointly optimised labels) and the model free of batch statistics
(no BatchNorm), so the dummy gradient is a pure function of (params, images, labels)
built with ``torch.func.functional_call`` and ``torch.func.grad``, ready for ``vmap``.

Deviations from PriPrune Algorithm 2 as published (line numbers of arXiv:2310.19958):

1. Line 4 forms ``(w_hat^t - w_hat^{t-1}) ⊙ m_rec``, i.e. ``-lr * g`` and with the
   *user's previous upload* as reference. Under FedSGD the step starts from the global
   weights, and the cosine loss below line 7 is sign sensitive, so matching ``-lr * g``
   would drive the dummy gradient to ``-g``. We use ``(w - w_hat) / lr`` with ``w`` the
   global weights, which equals ``m ⊙ g`` up to float round-off.
2. The loss below line 7 adds the regulariser as a constant, ``1 - cos + tau``, which
   has no effect on the optimisation. We follow Geiping et al.:
   ``1 - cos + tv_weight * TV(x)``.
3. Line 7 evaluates the dummy gradient at ``w_hat`` (the weights *after* the step); the
   client computed it at ``m ⊙ w`` (eq. (1)). We default to ``m_rec ⊙ w``
   (``gradient_at="masked"``); ``gradient_at="sent"`` reproduces the published line.
   It matters: on the digits model at p = 0 and client lr 0.25 the published point gives
   3-7 dB with either loss (20-24 dB with cosine at lr 0.01) where ``m_rec ⊙ w`` gives
   38-62 dB.
4. Line 5 initialises integer labels ``randint(0, max(y))`` and line 8 takes gradient
   steps on them; gradient steps need soft labels, so ``label_mode="optimize"``
   optimises label logits as DLG does. ``"known"`` and ``"idlg"`` are the usual
   stronger alternatives.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace

import torch
from torch import nn
from torch.func import functional_call, grad, grad_and_value

from bounds.validation import check_choice, check_int, check_real
from estimators.device import resolve_device
from sims.pruning import Mask

logger = logging.getLogger(__name__)

__all__ = [
    "DIGITS_ATTACK_MODEL",
    "GRADIENT_POINTS",
    "LABEL_MODES",
    "LOSSES",
    "OPTIMIZERS",
    "AttackConfig",
    "AttackResult",
    "gi_attack",
    "idlg_label",
    "invert_gradient",
    "pseudo_gradient",
    "recover_mask",
    "sgi_attack",
]

LOSSES = ("cosine_tv", "l2")
OPTIMIZERS = ("adam", "lbfgs")
LABEL_MODES = ("known", "idlg", "optimize")
GRADIENT_POINTS = ("masked", "dense", "sent")

#: Keyword arguments of :func:`sims.models.conv_net` for the digits attack experiments
#: (with ``in_channels=1, image_size=8, num_classes=10``): one 3x3 conv with 16
#: channels, 2x2 average pooling to 16x5x5, fc(64), fc(10), sigmoid throughout (twice
#: differentiable, non-negative before the last layer as :func:`idlg_label` needs).
DIGITS_ATTACK_MODEL = {
    "num_conv": 1,
    "width": 64,
    "hidden": 64,
    "activation": "sigmoid",
    "pooling": "avg",
}

# Adam's learning rate drops 10x at 3/8, 5/8 and 7/8 of the run (Geiping et al. 2020,
# reference implementation `inversefed`, scheduler of `GradientReconstructor`).
_ADAM_MILESTONES = (3 / 8, 5 / 8, 7 / 8)
_ADAM_GAMMA = 0.1
# L-BFGS stop rules on the normalised L2 loss (a relative squared error): below a relative
# gradient mismatch of ~1e-7 (float32 round-off) further steps only chase noise.
_LBFGS_TOLERANCE_GRAD = 1e-12
_LBFGS_TOLERANCE_CHANGE = 1e-14
_LBFGS_HISTORY = 100


@dataclass(frozen=True)
class AttackConfig:
    """Hyper-parameters of a gradient inversion.

    Attributes:
        loss: matching loss. ``"l2"``: ``sum ||m ⊙ (g' - g)||^2 / sum ||m ⊙ g||^2``, DLG's
            squared distance normalised by the target's energy (same minimisers; makes
            the L-BFGS tolerances scale free). ``"cosine_tv"``: ``1 - <m⊙g', m⊙g> /
            (||m⊙g'|| ||m⊙g||) + tv_weight * TV(x)`` over all layers at once (Geiping et
            al. 2020; PriPrune Algorithm 2, below line 7).
        optimizer: ``"lbfgs"`` (strong Wolfe line search; one ``step`` with ``iterations``
            as ``max_iter``) or ``"adam"`` (learning rate dropped 10x at 3/8, 5/8, 7/8
            of the run, as in Geiping et al.).
        iterations: optimiser iterations per restart, >= 1. PriPrune uses 10,000 (Adam).
        lr: optimiser learning rate, > 0 (1.0 is L-BFGS's natural step; PriPrune uses
            0.01 with Adam, Geiping et al. 0.1).
        tv_weight: weight of the total variation prior in ``"cosine_tv"``, >= 0.
            Ignored by ``"l2"``.
        restarts: independent random initialisations, >= 1; the one with the lowest
            final matching loss (TV excluded) is returned.
        label_mode: ``"known"`` (labels passed in), ``"idlg"`` (recovered from the
            gradient by :func:`idlg_label`; B = 1 only) or ``"optimize"`` (soft labels
            optimised jointly, as DLG and PriPrune Algorithm 2 line 8).
        box: keep the images in [0, 1] during the search: Adam projects (clamps) after
            every step (Geiping et al.'s "boxed" option); L-BFGS, whose curvature pairs a
            projection would break, optimises ``z`` with ``x = sigmoid(z)``. The returned
            images are clamped to [0, 1] in every case (the pixel range is public).
        signed_gradients: Adam steps on the sign of the image gradient (Geiping et al.'s
            default). Ignored by L-BFGS.
        seed: seed of the random initialisation, >= 0.
        device: ``"auto"`` (CUDA when present), ``"cpu"``, ``"cuda"``, ...
        cpu_threads: torch intra-op threads while an attack runs on the CPU (restored
            afterwards; process-wide, so do not run attacks from several Python threads
            at once), >= 1, or None to leave torch's setting. The default 1 suits small
            models, whose operations are too small to split: on the digits model one
            thread took 0.47 s of CPU per B = 1 attack, two threads 3.3 s (2-core host
            shared with other jobs). Parallelise over attacks (processes) instead.
    """

    loss: str = "l2"
    optimizer: str = "lbfgs"
    iterations: int = 100
    lr: float = 1.0
    tv_weight: float = 0.0
    restarts: int = 1
    label_mode: str = "known"
    box: bool = False
    signed_gradients: bool = False
    seed: int = 0
    device: str = "auto"
    cpu_threads: int | None = 1

    def __post_init__(self) -> None:
        func = "AttackConfig"
        check_choice("loss", self.loss, func=func, choices=LOSSES)
        check_choice("optimizer", self.optimizer, func=func, choices=OPTIMIZERS)
        check_int("iterations", self.iterations, func=func, low=1)
        check_real("lr", self.lr, func=func, low=0, low_inclusive=False)
        check_real("tv_weight", self.tv_weight, func=func, low=0)
        check_int("restarts", self.restarts, func=func, low=1)
        check_choice("label_mode", self.label_mode, func=func, choices=LABEL_MODES)
        for name in ("box", "signed_gradients"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(
                    f"The '{name}' parameter of {func} must be a bool. "
                    f"Got {getattr(self, name)!r} instead."
                )
        check_int("seed", self.seed, func=func, low=0)
        resolve_device(self.device)
        if self.cpu_threads is not None:
            check_int("cpu_threads", self.cpu_threads, func=func, low=1)

    @classmethod
    def dlg(cls, **overrides) -> AttackConfig:
        """Squared L2 matching with L-BFGS (Zhu et al. 2019), the strong attack of the demos.

        100 iterations: 33-63 dB on unpruned B = 1 digits (see the module docstring);
        L-BFGS stops by itself at the float32 floor after about 140.
        """
        return replace(cls(loss="l2", optimizer="lbfgs", iterations=100, lr=1.0), **overrides)

    @classmethod
    def inverting_gradients(cls, **overrides) -> AttackConfig:
        """Cosine + TV with signed Adam, boxed (Geiping et al. 2020; PriPrune's attack).

        Geiping et al. use lr 0.1, TV weight 1e-4 and 4,800-24,000 iterations; PriPrune
        lr 0.01 and 10,000 iterations. Here lr 0.1 and 300 iterations (34-54 dB on
        unpruned B = 1 digits, about 1.3 s of one CPU core) and TV weight 1e-6: the
        final cosine distance is ~1e-7, so 1e-4 * TV (~0.5 for a digit) dominates and
        flattens the image (about 9 dB measured on a sigmoid ConvNet).
        """
        base = cls(
            loss="cosine_tv",
            optimizer="adam",
            iterations=300,
            lr=0.1,
            tv_weight=1e-6,
            box=True,
            signed_gradients=True,
        )
        return replace(base, **overrides)


@dataclass
class AttackResult:
    """Outcome of one inversion (the best restart).

    Attributes:
        images: reconstructed batch ``(B, C, H, W)``, float32 on CPU, clamped to [0, 1],
            in the attack's own (arbitrary) order.
        labels: int64 ``(B,)`` on CPU: the labels used or found.
        loss: final matching loss of the returned restart (TV term excluded), a float.
        iterations: optimiser iterations that restart ran.
    """

    images: torch.Tensor
    labels: torch.Tensor
    loss: float
    iterations: int


# --------------------------------------------------------------------------- update side


def _check_param_dict(name: str, params, *, func: str) -> dict[str, torch.Tensor]:
    if not isinstance(params, Mapping) or not params:
        raise ValueError(
            f"The '{name}' parameter of {func} must be a non-empty dict of tensors. "
            f"Got {type(params).__name__} instead."
        )
    for key, tensor in params.items():
        if not isinstance(tensor, torch.Tensor) or not tensor.is_floating_point():
            raise ValueError(
                f"The '{name}' parameter of {func} must map names to floating-point tensors. "
                f"Got {getattr(tensor, 'dtype', type(tensor).__name__)} for {key!r} instead."
            )
        if not bool(torch.isfinite(tensor).all()):
            raise ValueError(
                f"The '{name}' parameter of {func} must be finite. "
                f"Got NaN or infinite entries in {key!r} instead."
            )
    return {key: tensor.detach() for key, tensor in params.items()}


def _check_same_layout(name_a: str, a: Mapping, name_b: str, b: Mapping, *, func: str) -> None:
    if list(a) != list(b) or any(a[k].shape != b[k].shape for k in a):
        raise ValueError(
            f"The '{name_a}' and '{name_b}' parameters of {func} must have the same names, "
            f"order and shapes. Got {[(k, tuple(v.shape)) for k, v in a.items()]} and "
            f"{[(k, tuple(v.shape)) for k, v in b.items()]} instead."
        )


def recover_mask(sent_params: Mapping[str, torch.Tensor]) -> Mask:
    """The pruning mask read off the zeros of the sent weights (PriPrune Alg. 2, line 3).

    ``m_rec[j] = 1 if w_hat[j] != 0 else 0`` for the prunable tensors (``ndim >= 2``);
    biases are never pruned (:mod:`sims.pruning`), so their mask is all-True whatever
    their values.

    Caveat: a kept weight whose update lands exactly on 0.0 is read as pruned. With
    continuous weights and gradients this has probability zero, but it can happen
    (e.g. a weight initialised to 0 in a layer with zero gradient), so the recovered
    mask is exact almost surely, not always.
    """
    sent = _check_param_dict("sent_params", sent_params, func="recover_mask")
    return Mask(
        {
            name: (t != 0) if t.ndim >= 2 else torch.ones_like(t, dtype=torch.bool)
            for name, t in sent.items()
        }
    )


def pseudo_gradient(
    global_params: Mapping[str, torch.Tensor],
    sent_params: Mapping[str, torch.Tensor],
    *,
    lr: float,
    mask: Mask | None = None,
) -> dict[str, torch.Tensor]:
    """The gradient a one-step FedSGD update reveals: ``(w - w_hat) / lr``, masked.

    With ``mask`` (SGI, PriPrune Alg. 2 line 4, sign and reference corrected -- see the
    module docstring) the result is ``m ⊙ (w - w_hat) / lr``, which equals the client's
    ``m ⊙ g`` exactly up to float round-off. With ``mask=None`` (GI's view) every
    coordinate is kept, so a pruned coordinate shows ``w / lr``.
    """
    func = "pseudo_gradient"
    lr = check_real("lr", lr, func=func, low=0, low_inclusive=False)
    w = _check_param_dict("global_params", global_params, func=func)
    sent = _check_param_dict("sent_params", sent_params, func=func)
    _check_same_layout("global_params", w, "sent_params", sent, func=func)
    revealed = {name: (w[name] - sent[name].to(w[name].device)) / lr for name in w}
    if mask is None:
        return revealed
    _check_same_layout("mask.keep", mask.keep, "global_params", w, func=func)
    return mask.to(next(iter(w.values())).device).apply(revealed)


# --------------------------------------------------------------------------- labels


def _last_linear_weight(grads: Mapping[str, torch.Tensor], num_classes: int, *, func: str) -> str:
    names = [n for n, t in grads.items() if t.ndim == 2 and t.shape[0] == num_classes]
    if not names:
        raise ValueError(
            f"{func} needs a 2-D weight with {num_classes} rows (the last linear layer) in "
            f"the gradient. Got shapes {[tuple(t.shape) for t in grads.values()]} instead."
        )
    return names[-1]


def idlg_label(
    target_grad: Mapping[str, torch.Tensor], *, num_classes: int, mask: Mask | None = None
) -> torch.Tensor:
    """Label of a single image from its gradient (iDLG, Zhao et al. 2020, Section 3).

    For cross-entropy the gradient of the last linear layer's row ``i`` is
    ``(softmax_i - 1[i = y]) * h``, with ``h`` the layer's input. If every entry of ``h``
    is >= 0 -- **required**: the activation before the last linear layer must be
    non-negative (sigmoid, ReLU; not tanh) -- the true label's row sum is <= 0 and every
    other row sum is >= 0, so ``y = argmin_i sum_j grad[i, j]``. With ``mask`` the sums
    run over kept coordinates only. The last linear layer is the last 2-D tensor with
    ``num_classes`` rows in ``target_grad``'s order.

    Returns an int64 tensor of shape ``(1,)`` on the gradient's device.
    """
    func = "idlg_label"
    num_classes = check_int("num_classes", num_classes, func=func, low=2)
    grads = _check_param_dict("target_grad", target_grad, func=func)
    name = _last_linear_weight(grads, num_classes, func=func)
    g = grads[name] if mask is None else grads[name] * mask.keep[name].to(grads[name].device)
    return g.sum(dim=1).argmin().reshape(1)


# --------------------------------------------------------------------------- objective


def _total_variation(images: torch.Tensor) -> torch.Tensor:
    """Anisotropic TV with means, as in Geiping et al.'s reference implementation."""
    dx = (images[..., :, 1:] - images[..., :, :-1]).abs().mean()
    dy = (images[..., 1:, :] - images[..., :-1, :]).abs().mean()
    return dx + dy


def _matching_objective(
    model: nn.Module,
    params: dict[str, torch.Tensor],
    target: dict[str, torch.Tensor],
    keep: dict[str, torch.Tensor] | None,
    config: AttackConfig,
) -> Callable[[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]:
    """Pure ``(images, label_probs) -> (objective, matching loss)`` for ``torch.func``.

    ``target`` must already be masked; the dummy gradient is masked here.
    """

    def cross_entropy(p, images, label_probs):
        return nn.functional.cross_entropy(functional_call(model, p, (images,)), label_probs)

    dummy_gradient = grad(cross_entropy)
    names = list(target)
    target_energy = sum((target[n] ** 2).sum() for n in names)

    def objective(images, label_probs):
        g = dummy_gradient(params, images, label_probs)
        if keep is not None:
            g = {n: g[n] * keep[n] for n in names}
        if config.loss == "l2":
            matching = sum(((g[n] - target[n]) ** 2).sum() for n in names) / target_energy
            return matching, matching
        dot = sum((g[n] * target[n]).sum() for n in names)
        dummy_energy = sum((g[n] ** 2).sum() for n in names)
        matching = 1 - dot / (dummy_energy.sqrt() * target_energy.sqrt())
        return matching + config.tv_weight * _total_variation(images), matching

    return objective


# --------------------------------------------------------------------------- inversion


def _check_batch_shape(model: nn.Module, batch_shape, *, func: str) -> tuple[int, ...]:
    ok = isinstance(batch_shape, tuple | list) and len(batch_shape) == 4
    ok = ok and all(isinstance(s, int) and not isinstance(s, bool) and s >= 1 for s in batch_shape)
    expected = getattr(model, "input_shape", None)
    if ok and expected is not None and tuple(batch_shape[1:]) != tuple(expected):
        ok = False
    if not ok:
        want = "(B, C, H, W)" if expected is None else f"(B, {', '.join(map(str, expected))})"
        raise ValueError(
            f"The 'batch_shape' parameter of {func} must be a tuple {want} of positive "
            f"integers. Got {batch_shape!r} instead."
        )
    return tuple(batch_shape)


def _initial_labels(
    labels,
    target: dict[str, torch.Tensor],
    keep: Mask | None,
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
                f"label_mode='idlg' in {func} recovers the label of one image only. "
                f"Got batch size {batch} instead."
            )
        return idlg_label(target, num_classes=num_classes, mask=keep)
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


def _run_adam(step_fn, variables: list[torch.Tensor], config: AttackConfig) -> int:
    optimizer = torch.optim.Adam(variables, lr=config.lr)
    milestones = [int(config.iterations * f) for f in _ADAM_MILESTONES]
    schedule = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones, gamma=_ADAM_GAMMA)
    for _ in range(config.iterations):
        grads, _ = step_fn(variables)
        for v, g in zip(variables, grads, strict=True):
            v.grad = g.sign() if config.signed_gradients else g
        optimizer.step()
        schedule.step()
        if config.box:
            with torch.no_grad():
                variables[0].clamp_(0.0, 1.0)
    return config.iterations


def _run_lbfgs(step_fn, variables: list[torch.Tensor], config: AttackConfig) -> int:
    optimizer = torch.optim.LBFGS(
        variables,
        lr=config.lr,
        max_iter=config.iterations,
        history_size=_LBFGS_HISTORY,
        tolerance_grad=_LBFGS_TOLERANCE_GRAD,
        tolerance_change=_LBFGS_TOLERANCE_CHANGE,
        line_search_fn="strong_wolfe",
    )

    def closure():
        grads, value = step_fn(variables)
        for v, g in zip(variables, grads, strict=True):
            v.grad = g
        # L-BFGS reads the loss as a Python float (one device sync per evaluation).
        return value

    optimizer.step(closure)
    return int(optimizer.state[variables[0]].get("n_iter", 0))


@contextmanager
def _intra_op_threads(device: torch.device, threads: int | None):
    """Set torch's intra-op thread count on CPU for the duration of the block."""
    previous = torch.get_num_threads()
    change = device.type == "cpu" and threads is not None and threads != previous
    if change:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        if change:
            torch.set_num_threads(previous)


def invert_gradient(
    model: nn.Module,
    params: Mapping[str, torch.Tensor],
    target_grad: Mapping[str, torch.Tensor],
    *,
    batch_shape: tuple[int, int, int, int],
    num_classes: int,
    labels: torch.Tensor | None = None,
    mask: Mask | None = None,
    config: AttackConfig,
) -> AttackResult:
    """Find a batch whose mean cross-entropy gradient at ``params`` matches ``target_grad``.

    ``model`` supplies only the architecture: the dummy gradient is
    ``torch.func.grad`` of ``cross_entropy(functional_call(model, params, x), y)``
    with respect to ``params``, and the matching loss of ``config.loss`` is
    differentiated once more with respect to the images (and label logits with
    ``label_mode="optimize"``). With ``mask`` both gradients are restricted to the kept
    coordinates (SGI); without, all coordinates count (GI). Images start from
    ``N(0, 1)`` (PriPrune Alg. 2 line 5; Geiping et al.); all ``B`` images are solved
    jointly. Returns the restart with the lowest final matching loss.
    """
    func = "invert_gradient"
    if not isinstance(config, AttackConfig):
        raise ValueError(
            f"The 'config' parameter of {func} must be an AttackConfig. "
            f"Got {type(config).__name__} instead."
        )
    num_classes = check_int("num_classes", num_classes, func=func, low=2)
    batch_shape = _check_batch_shape(model, batch_shape, func=func)
    device = resolve_device(config.device)
    point = {n: t.to(device) for n, t in _check_param_dict("params", params, func=func).items()}
    target = {
        n: t.to(device) for n, t in _check_param_dict("target_grad", target_grad, func=func).items()
    }
    _check_same_layout("params", point, "target_grad", target, func=func)
    if mask is not None:
        _check_same_layout("mask.keep", mask.keep, "params", point, func=func)
        mask = mask.to(device)
        target = mask.apply(target)
    if not any(bool((t != 0).any()) for t in target.values()):
        raise ValueError(f"The 'target_grad' parameter of {func} is zero on every kept coordinate.")
    fixed_labels = _initial_labels(
        labels,
        target,
        mask,
        batch=batch_shape[0],
        num_classes=num_classes,
        config=config,
        func=func,
    )
    keep = None if mask is None else {n: k.to(point[n].dtype) for n, k in mask.keep.items()}
    objective = _matching_objective(model, point, target, keep, config)
    to_image = torch.sigmoid if config.box and config.optimizer == "lbfgs" else (lambda z: z)

    def total(variables):
        images = to_image(variables[0])
        if fixed_labels is None:
            probs = torch.softmax(variables[1], dim=1)
        else:
            probs = nn.functional.one_hot(fixed_labels, num_classes).to(images.dtype)
        return objective(images, probs)

    step_fn = grad_and_value(lambda v: total(v)[0])
    run = _run_lbfgs if config.optimizer == "lbfgs" else _run_adam
    generator = torch.Generator().manual_seed(config.seed)
    best = None
    with _intra_op_threads(device, config.cpu_threads):
        for restart in range(config.restarts):
            variables = [torch.randn(batch_shape, generator=generator)]
            if fixed_labels is None:
                variables.append(torch.randn((batch_shape[0], num_classes), generator=generator))
            variables = [v.to(device).requires_grad_(True) for v in variables]
            iterations = run(step_fn, variables, config)
            final = float(total([v.detach() for v in variables])[1])
            logger.debug(
                "restart %d: matching loss %.3e after %d iterations", restart, final, iterations
            )
            score = final if math.isfinite(final) else math.inf
            if best is None or score < best[0]:
                best = (score, final, iterations, [v.detach() for v in variables])
    _, final, iterations, variables = best
    if not math.isfinite(final):
        logger.warning("%s: every restart diverged (matching loss %s)", func, final)
    images = to_image(variables[0]).clamp(0.0, 1.0).to("cpu", torch.float32)
    found = variables[1].argmax(dim=1) if fixed_labels is None else fixed_labels
    return AttackResult(images=images, labels=found.to("cpu"), loss=final, iterations=iterations)


# --------------------------------------------------------------------------- attacks


def _evaluation_point(global_params, sent_params, mask: Mask | None, gradient_at: str, func: str):
    check_choice("gradient_at", gradient_at, func=func, choices=GRADIENT_POINTS)
    if gradient_at == "sent":
        return dict(sent_params)
    if gradient_at == "masked":
        return mask.to(next(iter(global_params.values())).device).apply(global_params)
    return dict(global_params)


def sgi_attack(
    model: nn.Module,
    global_params: Mapping[str, torch.Tensor],
    sent_params: Mapping[str, torch.Tensor],
    *,
    lr: float,
    batch_shape: tuple[int, int, int, int],
    num_classes: int,
    labels: torch.Tensor | None = None,
    config: AttackConfig,
    gradient_at: str = "masked",
) -> AttackResult:
    """Sparse Gradient Inversion, PriPrune (arXiv:2310.19958) Algorithm 2.

    1. ``m_rec`` = :func:`recover_mask` of ``sent_params`` (line 3);
    2. target ``m_rec ⊙ (w - w_hat) / lr`` by :func:`pseudo_gradient` (line 4);
    3. :func:`invert_gradient` with the loss restricted to ``m_rec`` (lines 5-8), the
       dummy gradient taken at ``m_rec ⊙ w`` (``gradient_at="masked"``, where
       :func:`sims.fl.client_update` takes it by default), at ``w`` (``"dense"``, for a
       client that trains densely) or at ``w_hat`` (``"sent"``, as published).

    Exact for one FedSGD step (``local_steps=1``); with more local steps the pseudo-
    gradient is the average gradient along the local path, which the attack treats as
    one gradient.
    """
    func = "sgi_attack"
    w = _check_param_dict("global_params", global_params, func=func)
    sent = _check_param_dict("sent_params", sent_params, func=func)
    mask = recover_mask(sent)
    target = pseudo_gradient(w, sent, lr=lr, mask=mask)
    point = _evaluation_point(w, sent, mask, gradient_at, func)
    return invert_gradient(
        model,
        point,
        target,
        batch_shape=batch_shape,
        num_classes=num_classes,
        labels=labels,
        mask=mask,
        config=config,
    )


def gi_attack(
    model: nn.Module,
    global_params: Mapping[str, torch.Tensor],
    sent_params: Mapping[str, torch.Tensor],
    *,
    lr: float,
    batch_shape: tuple[int, int, int, int],
    num_classes: int,
    labels: torch.Tensor | None = None,
    config: AttackConfig,
    gradient_at: str = "dense",
) -> AttackResult:
    """Classic gradient inversion (Geiping et al. 2020) applied to a pruned update.

    Not mask-aware: the target is ``(w - w_hat) / lr`` over all coordinates
    (:func:`pseudo_gradient` with ``mask=None``), so each pruned coordinate contributes
    ``w / lr``, and the dummy gradient is taken at the global weights ``w``
    (``gradient_at="dense"``: the server believes the client trained the dense model)
    or at ``w_hat`` (``"sent"``, the model PriPrune Algorithm 1 line 8 hands the
    attack). iDLG labels (``label_mode="idlg"``) are read from the same unmasked
    target. At p = 0 it coincides with :func:`sgi_attack`.
    """
    func = "gi_attack"
    if gradient_at == "masked":
        raise ValueError(
            f"The 'gradient_at' parameter of {func} must be 'dense' or 'sent' (GI knows no "
            f"mask). Got 'masked' instead."
        )
    w = _check_param_dict("global_params", global_params, func=func)
    sent = _check_param_dict("sent_params", sent_params, func=func)
    target = pseudo_gradient(w, sent, lr=lr)
    point = _evaluation_point(w, sent, None, gradient_at, func)
    return invert_gradient(
        model,
        point,
        target,
        batch_shape=batch_shape,
        num_classes=num_classes,
        labels=labels,
        mask=None,
        config=config,
    )
