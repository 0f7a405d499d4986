"""Gradient inversion attacks on pruned FL updates: GI and PriPrune's SGI.

An honest-but-curious server holds the global weights ``w`` it broadcast and the pruned
weights ``w_hat = m ⊙ (w - lr * g)`` a client sent back after one FedSGD step
(PriPrune, arXiv:2310.19958, eq. (1); :func:`sims.fl.client.client_update`). It searches for a
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
an unpruned single image at 32-62 dB PSNR (mean 53 dB over the first 8 digits);
torch's L-BFGS then stops on its change tolerance. The float32 round-off in
``(w - w_hat) / lr`` (a relative error of about ``2**-24 |w| / (lr |g|)`` per
coordinate) is not yet the limit: ``"lbfgs_backtracking"`` (below) reaches 77 dB. The
Conv-2 that :func:`sims.models.conv_net`
suggests for digits (width 8, two 2x2 pools down to a 16x2x2 map) inverts far worse
(about 22 dB with average pooling, 14 dB with max pooling, in the same 100 iterations).

Measured on the first 8 digits, B = 1, iDLG labels, random masks, client lr 0.25 (mean
PSNR in dB, SGI / GI). ``AttackConfig.dlg()``: p = 0: 53.0 / 53.0; 0.3: 36.0 / 4.3;
0.5: 31.5 / 5.2; 0.9: 13.9 / 5.7; 0.99: 5.7 / 5.7 (both return their untouched random
start: the kept coordinates no longer depend on the image within float32 precision).
``AttackConfig.inverting_gradients()``: 39.7 / 39.7; 35.0 / 4.3; 30.9 / 3.6;
15.5 / 4.4; 8.2 / 4.5. GI already fails at p = 0.01 (4.3 dB): a single pruned
coordinate's ``w / lr`` outweighs the whole gradient.

Batched attacks: :func:`invert_gradient_batched`, :func:`sgi_attack_batched` and
:func:`gi_attack_batched` run K independent inversions (targets, masks, seeds,
restarts) as one computation: the per-attack objective is ``torch.func.vmap``-ed over the
stacked problems. Two optimisers batch: Adam (a functional copy of ``torch.optim.Adam``,
elementwise, so K runs at once are K runs) and ``"lbfgs_backtracking"``, our L-BFGS
with an Armijo backtracking line search whose trial points are one batched evaluation
for all rows. torch's strong-Wolfe ``"lbfgs"`` (DLG's optimiser, :meth:`AttackConfig.dlg`)
runs one attack at a time. The sequential reference of a batched run is
:func:`invert_gradient` with the same optimiser and seed; the two differ only by the
round-off of the batched kernels (``tests/sims/test_batched_attacks.py``: below 1e-5 per
pixel for unsigned Adam; sign-based Adam and L-BFGS's accept/reject decisions can
amplify it into a different trajectory). On the digits model, 16 batched attacks ran
4.6-5.4x (Adam) and 6.7-7.8x (backtracking L-BFGS) faster than 16 sequential ones (one
core of a shared 2-core host; ``benchmarks/bench_attacks.py``). On FEMNIST's Conv-2 at
28x28 (6.6 million weights) batching is about 4x *slower* on a CPU (0.23-0.27x): the K
stacked per-attack gradients of its 6.4-million-weight layer exceed glibc's largest
heap block (32 MiB, :func:`_keep_freed_cpu_memory`), so every step page-faults them
afresh. Batch small models on a CPU; large ones on a GPU or in small chunks.

With ``"lbfgs_backtracking"`` (100 iterations, K = 8 batched, 1.1 s in all) the table
below reads (SGI / GI): p = 0: 76.9 / 76.9; 0.3: 86.7 / 4.3; 0.5: 79.9 / 4.3; 0.9:
21.2 / 5.0; 0.99: 5.7 / 5.2 dB. Beyond p = 0.9 SGI fails because the client's *forward*
pass runs the pruned network ``m ⊙ w`` (eq. (1)), which at p = 0.99 keeps one or two of
the 144 conv weights and hardly sees the image; when the gradient is taken at the dense
``w`` (``gradient_at="dense"``) the kept coordinates identify the image up to
p = 0.998 (see :mod:`sims.experiments.identifiability`).

The client's loss is assumed to be the mean cross-entropy of
:func:`sims.core.functional.batch_gradient`
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
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import torch
from torch import nn
from torch.func import functional_call, grad, grad_and_value, vmap

from bounds.validation import check_choice, check_int, check_real
from estimators.device import check_device, resolve_device
from sims.attacks.priors import total_variation
from sims.pruning.mask import Mask, prunable_names

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
    "gi_attack_batched",
    "idlg_label",
    "invert_gradient",
    "invert_gradient_batched",
    "pseudo_gradient",
    "recover_mask",
    "sgi_attack",
    "sgi_attack_batched",
]

LOSSES = ("cosine_tv", "l2")
OPTIMIZERS = ("adam", "lbfgs", "lbfgs_backtracking")
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
# Backtracking line search of "lbfgs_backtracking": Armijo constant (Nocedal and Wright,
# Numerical Optimization, 2nd ed., Sec. 3.1, c1 = 1e-4), step halved at most this often.
_ARMIJO_C1 = 1e-4
_MAX_BACKTRACKS = 30
# Curvature pairs with s.y <= this * |s| |y| are not stored (keeps H positive definite;
# relative, so that tiny first steps still set the scale).
_MIN_CURVATURE = 1e-10


@dataclass(frozen=True)
class AttackConfig:
    """Hyper-parameters of a gradient inversion.

    Attributes:
        loss: matching loss. ``"l2"``: ``sum ||m ⊙ (g' - g)||^2 / sum ||m ⊙ g||^2``, DLG's
            squared distance normalised by the target's energy (same minimisers; makes
            the L-BFGS tolerances scale free). ``"cosine_tv"``: ``1 - <m⊙g', m⊙g> /
            (||m⊙g'|| ||m⊙g||) + tv_weight * TV(x)`` over all layers at once (Geiping et
            al. 2020; PriPrune Algorithm 2, below line 7).
        optimizer: ``"lbfgs"`` (``torch.optim.LBFGS``, strong Wolfe line search; one
            ``step`` with ``iterations`` as ``max_iter``), ``"lbfgs_backtracking"``
            (our batched L-BFGS with Armijo backtracking, see
            :func:`invert_gradient_batched`) or ``"adam"`` (learning rate dropped 10x
            at 3/8, 5/8, 7/8 of the run, as in Geiping et al.).
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
            every step (Geiping et al.'s "boxed" option); both L-BFGS, whose curvature
            pairs a projection would break, optimise ``z`` with ``x = sigmoid(z)``. The returned
            images are clamped to [0, 1] in every case (the pixel range is public).
        signed_gradients: Adam steps on the sign of the image gradient (Geiping et al.'s
            default). Ignored by L-BFGS.
        seed: seed of the random initialisation, >= 0.
        device: ``"auto"`` (CUDA when present), ``"cpu"``, ``"cuda"``, ...
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
        check_device(self.device, func=func)

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


def _image_map(config: AttackConfig):
    """Variables to images: ``sigmoid`` for boxed L-BFGS (the box as a reparametrisation),
    else the identity (Adam projects instead)."""
    return torch.sigmoid if config.box and config.optimizer != "adam" else (lambda z: z)


def _objective(model: nn.Module, config: AttackConfig, *, local_steps: int, client_lr: float):
    """Pure ``(variables, point, target, target_energy, keep, onehot) -> (objective, matching)``.

    Every tensor argument belongs to *one* attack, so the function can be ``vmap``-ed
    over attacks. ``variables[0]`` are the dummy images (their logits ``z``, ``x =
    sigmoid(z)``, for boxed L-BFGS), ``variables[1]`` the label logits with
    ``label_mode="optimize"`` (``onehot`` is then ignored). ``keep`` holds 0/1 floats
    for the prunable tensors (None for GI: nothing masked); ``target`` must already be
    masked and ``target_energy`` is its squared norm.

    The dummy update replays the client's ``local_steps`` full-batch steps of eq. (1) on
    the dummy batch: ``keep ⊙ sum_s g(a_s)`` with ``a_0 = point`` and ``a_{s+1} = keep ⊙
    a_s - client_lr * keep ⊙ g(a_s)``, which is ``keep ⊙ (w - w_hat) / client_lr`` for
    the dummy data, i.e. what :func:`pseudo_gradient` reveals for the real data. One
    step is plain gradient matching.
    """

    def cross_entropy(p, images, label_probs):
        return nn.functional.cross_entropy(functional_call(model, p, (images,)), label_probs)

    dummy_gradient = grad(cross_entropy)
    to_image = _image_map(config)
    optimize_labels = config.label_mode == "optimize"

    def objective(variables, point, target, target_energy, keep, onehot):
        images = to_image(variables[0])
        probs = torch.softmax(variables[1], dim=-1) if optimize_labels else onehot
        names = list(target)
        masked = keep if keep is not None else {}
        at, g = point, None
        for step in range(local_steps):
            g_step = {n: t.contiguous() for n, t in dummy_gradient(at, images, probs).items()}
            g_step = {n: g_step[n] * masked[n] if n in masked else g_step[n] for n in names}
            g = g_step if g is None else {n: g[n] + g_step[n] for n in names}
            if step + 1 < local_steps:
                at = {
                    n: (masked[n] * at[n] if n in masked else at[n]) - client_lr * g_step[n]
                    for n in names
                }
        if config.loss == "l2":
            residual = [g[n] - target[n] for n in names]
            matching = sum((r * r).sum() for r in residual) / target_energy
            return matching, matching
        dot = sum((g[n] * target[n]).sum() for n in names)
        dummy_energy = sum((g[n] * g[n]).sum() for n in names)
        matching = 1 - dot / (dummy_energy.sqrt() * target_energy.sqrt())
        return matching + config.tv_weight * total_variation(images), matching

    return objective


# --------------------------------------------------------------------------- inversion


def _check_config(config, *, func: str) -> AttackConfig:
    if not isinstance(config, AttackConfig):
        raise ValueError(
            f"The 'config' parameter of {func} must be an AttackConfig. "
            f"Got {type(config).__name__} instead."
        )
    return config


def _check_local_steps(local_steps, client_lr, *, func: str) -> tuple[int, float]:
    """``(local_steps, client_lr)``; the client's learning rate is needed from 2 steps on."""
    local_steps = check_int("local_steps", local_steps, func=func, low=1)
    if local_steps == 1 and client_lr is None:
        return 1, 0.0
    return local_steps, check_real("client_lr", client_lr, func=func, low=0, low_inclusive=False)


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


@dataclass
class _Problem:
    """One validated inversion on the attack's device: the arguments of :func:`_objective`."""

    point: dict[str, torch.Tensor]
    target: dict[str, torch.Tensor]
    target_energy: torch.Tensor
    keep: dict[str, torch.Tensor] | None
    onehot: torch.Tensor
    labels: torch.Tensor | None

    def arguments(self) -> tuple:
        return self.point, self.target, self.target_energy, self.keep, self.onehot


def _prepare(
    model, params, target_grad, *, batch_shape, num_classes, labels, mask, config, device, func
) -> _Problem:
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
    fixed = _initial_labels(
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
        keep = {n: mask.keep[n].to(point[n].dtype) for n in prunable_names(point)}
    if fixed is None:
        onehot = torch.zeros((batch_shape[0], num_classes), device=device, dtype=dtype)
    else:
        onehot = nn.functional.one_hot(fixed, num_classes).to(dtype)
    energy = sum((t * t).sum() for t in target.values())
    return _Problem(point, target, energy, keep, onehot, fixed)


def _initial_variables(
    generator: torch.Generator, batch_shape, num_classes: int, config: AttackConfig
) -> list[torch.Tensor]:
    """``N(0, 1)`` images (PriPrune Alg. 2 line 5), then label logits when optimised (CPU)."""
    variables = [torch.randn(batch_shape, generator=generator)]
    if config.label_mode == "optimize":
        variables.append(torch.randn((batch_shape[0], num_classes), generator=generator))
    return variables


def _adam(step_fn, variables: list[torch.Tensor], config: AttackConfig) -> list[torch.Tensor]:
    """``config.iterations`` Adam steps; returns the final variables (new tensors).

    Functional re-implementation of ``torch.optim.Adam`` (default betas (0.9, 0.999),
    eps 1e-8, single-tensor arithmetic, same operation order) under ``MultiStepLR``
    with the milestones of ``_ADAM_MILESTONES``; the tests check it against both. Every
    operation is elementwise, so stacked variables of K attacks take K independent
    Adam runs at once. ``signed_gradients`` feeds ``sign(grad)``; ``box`` clamps the
    images to [0, 1] after every step (Geiping et al.'s "boxed" option).
    """
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    drops = Counter(int(config.iterations * f) for f in _ADAM_MILESTONES)
    first = [torch.zeros_like(v) for v in variables]
    second = [torch.zeros_like(v) for v in variables]
    lr = config.lr
    for i in range(config.iterations):
        if i in drops:
            lr = lr * _ADAM_GAMMA ** drops[i]
        grads, _ = step_fn(variables)
        bias_correction1 = 1 - beta1 ** (i + 1)
        bias_correction2_sqrt = (1 - beta2 ** (i + 1)) ** 0.5
        updated = []
        for j, (v, g) in enumerate(zip(variables, grads, strict=True)):
            g = g.sign() if config.signed_gradients else g
            first[j] = first[j].lerp(g, 1 - beta1)
            second[j] = second[j].mul(beta2).addcmul(g, g, value=1 - beta2)
            denom = (second[j].sqrt() / bias_correction2_sqrt).add(eps)
            updated.append(v.addcdiv(first[j], denom, value=-lr / bias_correction1))
        if config.box:
            updated[0] = updated[0].clamp(0.0, 1.0)
        variables = updated
    return variables


def _lbfgs(step_fn, variables: list[torch.Tensor], config: AttackConfig) -> int:
    """``torch.optim.LBFGS`` (strong Wolfe) on ``variables`` in place; returns its iterations."""
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
        grads, (value, _) = step_fn(variables)
        for v, g in zip(variables, grads, strict=True):
            v.grad = g
        # L-BFGS reads the loss as a Python float (one device sync per evaluation).
        return value

    optimizer.step(closure)
    return int(optimizer.state[variables[0]].get("n_iter", 0))


def _two_loop(g, history, newest: int, filled: int):
    """``-H g`` by the L-BFGS two-loop recursion (Nocedal and Wright, Algorithm 7.4), row
    by row; ``history = (S, Y, rho, valid)`` with ``filled`` pairs written to a ring
    ending at ``newest``; invalid entries contribute exactly nothing (no device sync)."""
    s_hist, y_hist, rho, valid = history
    slots = [(newest - i) % s_hist.shape[1] for i in range(filled)]
    q, alphas = -g, []
    for j in slots:
        alpha = torch.where(valid[:, j], rho[:, j] * (s_hist[:, j] * q).sum(1), 0.0)
        q = q - alpha[:, None] * y_hist[:, j]
        alphas.append(alpha)
    gamma = torch.ones_like(rho[:, 0])
    for j in reversed(slots):  # the newest valid pair of each row wins
        sy, yy = 1 / rho[:, j], (y_hist[:, j] * y_hist[:, j]).sum(1)
        gamma = torch.where(valid[:, j], sy / yy, gamma)
    r = gamma[:, None] * q
    for j, alpha in zip(reversed(slots), reversed(alphas), strict=True):
        beta = torch.where(valid[:, j], rho[:, j] * (y_hist[:, j] * r).sum(1), 0.0)
        r = r + s_hist[:, j] * (alpha - beta)[:, None]
    return r


def _lbfgs_backtracking(step_fn, variables: list[torch.Tensor], config: AttackConfig):
    """L-BFGS with a backtracking (Armijo) line search on N stacked problems at once.

    ``step_fn(variables) -> (grads, (objective, matching))`` on variables with a leading
    problem dimension N; returns ``(variables, iterations)`` (an int64 tensor (N,)).
    Every row is an independent L-BFGS run (history ``_LBFGS_HISTORY``, first step
    ``lr * min(1, 1 / ||g||_1)`` as in ``torch.optim.LBFGS``, then ``lr``; the step is
    halved until Armijo's condition holds, at most ``_MAX_BACKTRACKS`` times; a
    non-descent direction restarts that row's history). A row stops when its gradient's
    largest entry is below ``_LBFGS_TOLERANCE_GRAD``, its objective or step changes by
    less than ``_LBFGS_TOLERANCE_CHANGE``, or no step is accepted; finished rows are
    still evaluated (they do not move). Unlike ``torch.optim.LBFGS``'s strong-Wolfe
    search, every trial point is one batched evaluation for all rows, so N runs cost
    about one run's number of batched evaluations. With N = 1 this is the sequential
    reference of the batched attack.
    """
    count = variables[0].shape[0]
    shapes = [v.shape[1:] for v in variables]
    sizes = [v[0].numel() for v in variables]

    def evaluate(x):
        parts = [c.reshape(count, *s) for c, s in zip(x.split(sizes, 1), shapes, strict=True)]
        grads, (value, _) = step_fn(parts)
        return value.detach(), torch.cat([g.reshape(count, -1) for g in grads], dim=1)

    x = torch.cat([v.reshape(count, -1) for v in variables], dim=1)
    f, g = evaluate(x)
    slots = _LBFGS_HISTORY
    history = (
        x.new_zeros(count, slots, x.shape[1]),
        x.new_zeros(count, slots, x.shape[1]),
        x.new_ones(count, slots),
        torch.zeros(count, slots, dtype=torch.bool, device=x.device),
    )
    active = g.abs().amax(1) > _LBFGS_TOLERANCE_GRAD
    iterations = torch.zeros(count, dtype=torch.int64, device=x.device)
    for it in range(config.iterations):
        if not bool(active.any()):
            break
        d = _two_loop(g, history, (it - 1) % slots, min(it, slots))
        slope = (g * d).sum(1)
        uphill = slope >= 0
        d = torch.where(uphill[:, None], -g, d)
        slope = torch.where(uphill, -(g * g).sum(1), slope)
        history[3][uphill] = False
        if it == 0:
            t = config.lr * torch.clamp(1 / g.abs().sum(1), max=1.0)
        else:
            t = torch.full_like(f, config.lr)
        t = torch.where(active, t, 0.0)
        accepted = ~active
        x_new, f_new, g_new = x, f, g
        for _ in range(_MAX_BACKTRACKS):
            trial = x + t[:, None] * d
            f_trial, g_trial = evaluate(trial)
            ok = ~accepted & torch.isfinite(f_trial) & (f_trial <= f + _ARMIJO_C1 * t * slope)
            x_new = torch.where(ok[:, None], trial, x_new)
            f_new = torch.where(ok, f_trial, f_new)
            g_new = torch.where(ok[:, None], g_trial, g_new)
            accepted = accepted | ok
            if bool(accepted.all()):
                break
            t = torch.where(accepted, t, t / 2)
        moved = active & accepted
        s, y = x_new - x, g_new - g
        sy = (s * y).sum(1)
        store = moved & (sy > _MIN_CURVATURE * (s * s).sum(1).sqrt() * (y * y).sum(1).sqrt())
        slot = it % slots
        history[0][:, slot] = torch.where(store[:, None], s, 0.0)
        history[1][:, slot] = torch.where(store[:, None], y, 0.0)
        history[2][:, slot] = torch.where(store, 1 / torch.where(store, sy, 1.0), 1.0)
        history[3][:, slot] = store
        iterations += moved.to(torch.int64)
        active = (
            moved
            & (g_new.abs().amax(1) > _LBFGS_TOLERANCE_GRAD)
            & ((f_new - f).abs() > _LBFGS_TOLERANCE_CHANGE)
            & (s.abs().amax(1) > _LBFGS_TOLERANCE_CHANGE)
        )
        x, f, g = x_new, f_new, g_new
    parts = [c.reshape(count, *s) for c, s in zip(x.split(sizes, 1), shapes, strict=True)]
    return parts, iterations


def _single_as_stacked(step_fn):
    """``step_fn`` of one problem as a step function of N = 1 stacked problems."""

    def stacked(variables):
        grads, (objective, matching) = step_fn([v[0] for v in variables])
        return [g.unsqueeze(0) for g in grads], (objective.reshape(1), matching.reshape(1))

    return stacked


def _result(images, label_logits, problem: _Problem, loss: float, iterations: int, config):
    found = label_logits.argmax(dim=-1) if problem.labels is None else problem.labels
    return AttackResult(
        images=_image_map(config)(images).clamp(0.0, 1.0).to("cpu", torch.float32),
        labels=found.to("cpu"),
        loss=loss,
        iterations=iterations,
    )


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
    local_steps: int = 1,
    client_lr: float | None = None,
) -> AttackResult:
    """Find a batch whose mean cross-entropy gradient at ``params`` matches ``target_grad``.

    ``model`` supplies only the architecture: the dummy gradient is
    ``torch.func.grad`` of ``cross_entropy(functional_call(model, params, x), y)``
    with respect to ``params``, and the matching loss of ``config.loss`` is
    differentiated once more with respect to the images (and label logits with
    ``label_mode="optimize"``). With ``mask`` both gradients are restricted to the kept
    coordinates (SGI); without, all coordinates count (GI). Images start from
    ``N(0, 1)`` (PriPrune Alg. 2 line 5; Geiping et al.); all ``B`` images are solved
    jointly, in the floating type of ``params`` (float64 weights: a float64 attack).
    Returns the restart with the lowest final matching loss.

    With ``local_steps > 1`` the target is the sum of the gradients along the client's
    ``local_steps`` full-batch steps with learning rate ``client_lr`` (what
    ``(w - w_hat) / client_lr`` reveals after FedSGD with several local epochs on one
    batch) and the dummy data replay those steps from ``params`` (Geiping et al. 2020,
    Section 5, "multiple local updates"). Minibatched FedAvg is not modelled.

    :func:`invert_gradient_batched` runs K such inversions as one computation.
    """
    func = "invert_gradient"
    config = _check_config(config, func=func)
    num_classes = check_int("num_classes", num_classes, func=func, low=2)
    batch_shape = _check_batch_shape(model, batch_shape, func=func)
    local_steps, client_lr = _check_local_steps(local_steps, client_lr, func=func)
    device = resolve_device(config.device)
    problem = _prepare(
        model,
        params,
        target_grad,
        batch_shape=batch_shape,
        num_classes=num_classes,
        labels=labels,
        mask=mask,
        config=config,
        device=device,
        func=func,
    )
    objective = _objective(model, config, local_steps=local_steps, client_lr=client_lr)
    args = problem.arguments()
    gradient_and_value = grad_and_value(objective, has_aux=True)

    def step_fn(variables):
        return gradient_and_value(variables, *args)

    generator = torch.Generator().manual_seed(config.seed)
    best = None
    for restart in range(config.restarts):
        variables = _initial_variables(generator, batch_shape, num_classes, config)
        variables = [v.to(device, problem.onehot.dtype) for v in variables]
        if config.optimizer == "lbfgs":
            variables = [v.requires_grad_(True) for v in variables]
            iterations = _lbfgs(step_fn, variables, config)
            variables = [v.detach() for v in variables]
        elif config.optimizer == "lbfgs_backtracking":
            stacked, done = _lbfgs_backtracking(
                _single_as_stacked(step_fn), [v.unsqueeze(0) for v in variables], config
            )
            variables, iterations = [v[0] for v in stacked], int(done[0])
        else:
            variables = _adam(step_fn, variables, config)
            iterations = config.iterations
        final = float(objective(variables, *args)[1])
        logger.debug(
            "restart %d: matching loss %.3e after %d iterations", restart, final, iterations
        )
        score = final if math.isfinite(final) else math.inf
        if best is None or score < best[0]:
            best = (score, final, iterations, variables)
    _, final, iterations, variables = best
    if not math.isfinite(final):
        logger.warning("%s: every restart diverged (matching loss %s)", func, final)
    return _result(variables[0], variables[-1], problem, final, iterations, config)


# --------------------------------------------------------------------------- batched


def _per_attack(name: str, value, count: int, *, func: str, single: type | tuple) -> list:
    """``value`` repeated ``count`` times when it is one ``single`` item, else as a list of
    ``count`` items."""
    if value is None or isinstance(value, single):
        return [value] * count
    if isinstance(value, str | bytes) or not isinstance(value, Sequence) or len(value) != count:
        raise ValueError(
            f"The '{name}' parameter of {func} must be one value or a sequence of {count} "
            f"(one per attack). Got {type(value).__name__} instead."
        )
    return list(value)


def _stack(items: list) -> tuple:
    """Per-attack values (tensors, dicts of tensors or None) stacked along a new dim 0,
    or the first one with vmap dim None when all are equal (shared by every attack)."""
    first = items[0]
    if first is None:
        return None, None
    if isinstance(first, dict):
        if all(all(_same(first[n], item[n]) for n in first) for item in items[1:]):
            return first, None
        return {n: torch.stack([item[n] for item in items]) for n in first}, 0
    if all(_same(first, item) for item in items[1:]):
        return first, None
    return torch.stack(items), 0


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a is b or torch.equal(a, b)


def _repeat(value, times: int):
    """Each entry along dim 0 repeated ``times`` times in place (``repeat_interleave``)."""
    if isinstance(value, dict):
        return {n: t.repeat_interleave(times, dim=0) for n, t in value.items()}
    return value.repeat_interleave(times, dim=0)


def invert_gradient_batched(
    model: nn.Module,
    params: Mapping[str, torch.Tensor] | Sequence[Mapping[str, torch.Tensor]],
    target_grads: Sequence[Mapping[str, torch.Tensor]],
    *,
    batch_shape: tuple[int, int, int, int],
    num_classes: int,
    labels: Sequence[torch.Tensor | None] | None = None,
    masks: Mask | Sequence[Mask | None] | None = None,
    config: AttackConfig,
    seeds: Sequence[int] | None = None,
    local_steps: int = 1,
    client_lr: float | None = None,
) -> list[AttackResult]:
    """K independent :func:`invert_gradient` runs as one batched computation (Adam only).

    Attack ``k`` inverts ``target_grads[k]`` at ``params`` (one dict shared by every
    attack, or one per attack) under ``masks`` (None, one shared mask, or one per
    attack) with ``labels[k]``, starting from the initialisation ``invert_gradient``
    draws with ``seed = seeds[k]`` (default ``config.seed`` for every attack). Its
    ``K x restarts`` problems are stacked and the per-attack objective is mapped over
    them with ``torch.func.vmap``; inputs equal across attacks are passed once. The
    optimiser is the functional Adam that :func:`invert_gradient` uses, elementwise, so
    the only difference from K sequential runs is the float round-off of the batched
    kernels (see the tests for the tolerance).
    L-BFGS is not batched (its line search is per problem); use :func:`invert_gradient`.

    Returns one :class:`AttackResult` per attack, in order, each its best restart.
    """
    func = "invert_gradient_batched"
    config = _check_config(config, func=func)
    if config.optimizer == "lbfgs":
        raise ValueError(
            f"The 'config.optimizer' parameter of {func} must be 'adam' or "
            f"'lbfgs_backtracking' (torch's strong-Wolfe L-BFGS is not batched; use "
            f"invert_gradient). Got 'lbfgs' instead."
        )
    if isinstance(target_grads, Mapping) or not isinstance(target_grads, Sequence):
        raise ValueError(
            f"The 'target_grads' parameter of {func} must be a sequence of gradient dicts, "
            f"one per attack. Got {type(target_grads).__name__} instead."
        )
    count = check_int("len(target_grads)", len(target_grads), func=func, low=1)
    num_classes = check_int("num_classes", num_classes, func=func, low=2)
    batch_shape = _check_batch_shape(model, batch_shape, func=func)
    local_steps, client_lr = _check_local_steps(local_steps, client_lr, func=func)
    params = _per_attack("params", params, count, func=func, single=Mapping)
    masks = _per_attack("masks", masks, count, func=func, single=Mask)
    labels = _per_attack("labels", labels, count, func=func, single=torch.Tensor)
    seeds = _per_attack(
        "seeds", config.seed if seeds is None else seeds, count, func=func, single=int
    )
    seeds = [check_int("seeds", s, func=func, low=0) for s in seeds]
    device = resolve_device(config.device)
    problems = [
        _prepare(
            model,
            params[k],
            target_grads[k],
            batch_shape=batch_shape,
            num_classes=num_classes,
            labels=labels[k],
            mask=masks[k],
            config=config,
            device=device,
            func=func,
        )
        for k in range(count)
    ]
    if any(p.keep is None for p in problems) and any(p.keep is not None for p in problems):
        for p in problems:
            if p.keep is None:
                p.keep = {n: torch.ones_like(p.point[n]) for n in prunable_names(p.point)}
    stacked = [_stack([p.arguments()[i] for p in problems]) for i in range(5)]
    args = tuple(value for value, _ in stacked)
    dims = tuple(dim for _, dim in stacked)

    objective = _objective(model, config, local_steps=local_steps, client_lr=client_lr)
    restarts = config.restarts
    if restarts > 1:
        # Problem n = k * restarts + r is restart r of attack k.
        args = tuple(
            _repeat(value, restarts) if dim == 0 else value
            for value, dim in zip(args, dims, strict=True)
        )
    gradient_and_value = vmap(grad_and_value(objective, has_aux=True), in_dims=(0, *dims))
    evaluate = vmap(objective, in_dims=(0, *dims))
    initial = []
    for seed in seeds:
        generator = torch.Generator().manual_seed(seed)
        initial += [
            _initial_variables(generator, batch_shape, num_classes, config) for _ in range(restarts)
        ]
    dtype = problems[0].onehot.dtype
    variables = [
        torch.stack([v[j] for v in initial]).to(device, dtype) for j in range(len(initial[0]))
    ]
    step_fn = lambda v: gradient_and_value(v, *args)  # noqa: E731
    if config.optimizer == "adam":
        variables = _adam(step_fn, variables, config)
        done = torch.full((count * restarts,), config.iterations)
    else:
        variables, done = _lbfgs_backtracking(step_fn, variables, config)
    final = evaluate(variables, *args)[1].reshape(count, restarts)
    variables = [v.reshape(count, restarts, *v.shape[1:]) for v in variables]
    done = done.reshape(count, restarts).cpu()
    scores = torch.where(torch.isfinite(final), final, torch.full_like(final, math.inf))
    best = scores.argmin(dim=1)
    final, best = final.cpu(), best.cpu()
    results = []
    for k, problem in enumerate(problems):
        r = int(best[k])
        loss = float(final[k, r])
        if not math.isfinite(loss):
            logger.warning("%s: every restart of attack %d diverged (loss %s)", func, k, loss)
        results.append(
            _result(
                variables[0][k, r],
                variables[-1][k, r],
                problem,
                loss,
                int(done[k, r]),
                config,
            )
        )
    return results


# --------------------------------------------------------------------------- attacks


def _evaluation_point(global_params, sent_params, mask: Mask | None, gradient_at: str, func: str):
    check_choice("gradient_at", gradient_at, func=func, choices=GRADIENT_POINTS)
    if gradient_at == "sent":
        return dict(sent_params)
    if gradient_at == "masked":
        return mask.to(next(iter(global_params.values())).device).apply(global_params)
    return dict(global_params)


def _update_problem(
    attack: str, global_params, sent_params, *, lr: float, gradient_at: str, local_steps, func
):
    """``(point, target, mask)`` the server inverts for one update (SGI or GI)."""
    if attack == "gi" and gradient_at == "masked":
        raise ValueError(
            f"The 'gradient_at' parameter of {func} must be 'dense' or 'sent' (GI knows no "
            f"mask). Got 'masked' instead."
        )
    if local_steps != 1 and gradient_at == "sent":
        raise ValueError(
            f"The 'gradient_at' parameter of {func} cannot be 'sent' with local_steps > 1 "
            f"(the replayed steps start from the broadcast weights). Got 'sent' instead."
        )
    w = _check_param_dict("global_params", global_params, func=func)
    sent = _check_param_dict("sent_params", sent_params, func=func)
    mask = recover_mask(sent) if attack == "sgi" else None
    target = pseudo_gradient(w, sent, lr=lr, mask=mask)
    return _evaluation_point(w, sent, mask, gradient_at, func), target, mask


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
    local_steps: int = 1,
) -> AttackResult:
    """Sparse Gradient Inversion, PriPrune (arXiv:2310.19958) Algorithm 2.

    1. ``m_rec`` = :func:`recover_mask` of ``sent_params`` (line 3);
    2. target ``m_rec ⊙ (w - w_hat) / lr`` by :func:`pseudo_gradient` (line 4);
    3. :func:`invert_gradient` with the loss restricted to ``m_rec`` (lines 5-8), the
       dummy gradient taken at ``m_rec ⊙ w`` (``gradient_at="masked"``, where
       :func:`sims.fl.client.client_update` takes it by default), at ``w`` (``"dense"``, for a
       client that trains densely) or at ``w_hat`` (``"sent"``, as published).

    Exact for one FedSGD step. With ``local_steps`` > 1 (the client's local epochs on
    one batch, ``lr`` its learning rate) the server inverts the weight difference: the
    dummy batch replays the ``local_steps`` masked steps from the evaluation point
    (:func:`invert_gradient`). :func:`sgi_attack_batched` attacks K updates at once.
    """
    point, target, mask = _update_problem(
        "sgi",
        global_params,
        sent_params,
        lr=lr,
        gradient_at=gradient_at,
        local_steps=local_steps,
        func="sgi_attack",
    )
    return invert_gradient(
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
    local_steps: int = 1,
) -> AttackResult:
    """Classic gradient inversion (Geiping et al. 2020) applied to a pruned update.

    Not mask-aware: the target is ``(w - w_hat) / lr`` over all coordinates
    (:func:`pseudo_gradient` with ``mask=None``), so each pruned coordinate contributes
    ``w / lr``, and the dummy gradient is taken at the global weights ``w``
    (``gradient_at="dense"``: the server believes the client trained the dense model)
    or at ``w_hat`` (``"sent"``, the model PriPrune Algorithm 1 line 8 hands the
    attack). iDLG labels (``label_mode="idlg"``) are read from the same unmasked
    target. At p = 0 it coincides with :func:`sgi_attack`. ``local_steps``: as in
    :func:`sgi_attack`, with dense replayed steps. :func:`gi_attack_batched` attacks K
    updates at once.
    """
    point, target, _ = _update_problem(
        "gi",
        global_params,
        sent_params,
        lr=lr,
        gradient_at=gradient_at,
        local_steps=local_steps,
        func="gi_attack",
    )
    return invert_gradient(
        model,
        point,
        target,
        batch_shape=batch_shape,
        num_classes=num_classes,
        labels=labels,
        mask=None,
        config=config,
        local_steps=local_steps,
        client_lr=lr,
    )


def _attack_batched(
    attack: str,
    model,
    global_params,
    sent_params,
    *,
    lr,
    batch_shape,
    num_classes,
    labels,
    config,
    seeds,
    gradient_at,
    local_steps,
    func,
) -> list[AttackResult]:
    if isinstance(sent_params, Mapping) or not isinstance(sent_params, Sequence):
        raise ValueError(
            f"The 'sent_params' parameter of {func} must be a sequence of uploads, one per "
            f"attack. Got {type(sent_params).__name__} instead."
        )
    count = check_int("len(sent_params)", len(sent_params), func=func, low=1)
    global_params = _per_attack("global_params", global_params, count, func=func, single=Mapping)
    problems = [
        _update_problem(
            attack, w, sent, lr=lr, gradient_at=gradient_at, local_steps=local_steps, func=func
        )
        for w, sent in zip(global_params, sent_params, strict=True)
    ]
    return invert_gradient_batched(
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
    )


def sgi_attack_batched(
    model: nn.Module,
    global_params: Mapping[str, torch.Tensor] | Sequence[Mapping[str, torch.Tensor]],
    sent_params: Sequence[Mapping[str, torch.Tensor]],
    *,
    lr: float,
    batch_shape: tuple[int, int, int, int],
    num_classes: int,
    labels: Sequence[torch.Tensor | None] | None = None,
    config: AttackConfig,
    seeds: Sequence[int] | None = None,
    gradient_at: str = "masked",
    local_steps: int = 1,
) -> list[AttackResult]:
    """:func:`sgi_attack` on K uploads ``sent_params[k]`` (broadcast weights: one dict for
    all, or one per upload) as one batched inversion, :func:`invert_gradient_batched`."""
    return _attack_batched(
        "sgi",
        model,
        global_params,
        sent_params,
        lr=lr,
        batch_shape=batch_shape,
        num_classes=num_classes,
        labels=labels,
        config=config,
        seeds=seeds,
        gradient_at=gradient_at,
        local_steps=local_steps,
        func="sgi_attack_batched",
    )


def gi_attack_batched(
    model: nn.Module,
    global_params: Mapping[str, torch.Tensor] | Sequence[Mapping[str, torch.Tensor]],
    sent_params: Sequence[Mapping[str, torch.Tensor]],
    *,
    lr: float,
    batch_shape: tuple[int, int, int, int],
    num_classes: int,
    labels: Sequence[torch.Tensor | None] | None = None,
    config: AttackConfig,
    seeds: Sequence[int] | None = None,
    gradient_at: str = "dense",
    local_steps: int = 1,
) -> list[AttackResult]:
    """:func:`gi_attack` on K uploads as one batched inversion (see
    :func:`sgi_attack_batched`)."""
    return _attack_batched(
        "gi",
        model,
        global_params,
        sent_params,
        lr=lr,
        batch_shape=batch_shape,
        num_classes=num_classes,
        labels=labels,
        config=config,
        seeds=seeds,
        gradient_at=gradient_at,
        local_steps=local_steps,
        func="gi_attack_batched",
    )
