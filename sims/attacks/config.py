"""What a gradient inversion is asked to do and what it returns.

:class:`AttackConfig` only *describes* an attack (matching loss, optimiser, labels,
restarts, seed, device); :mod:`sims.attacks.inversion` runs it. The choice tuples are
the allowed values of its fields and of the attack's ``gradient_at``
(:mod:`sims.attacks.attack`); :data:`DIGITS_ATTACK_MODEL` is the architecture the
digits attack studies invert.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch

from pruneleak.bounds.validation import check_choice, check_int, check_real
from pruneleak.estimators.device import check_device
from pruneleak.sims.core.functional import MAX_ADAM_LR, check_lr
from pruneleak.sims.core.runtime import check_seed

LOSSES = ("cosine_tv", "l2")
OPTIMIZERS = ("adam", "lbfgs", "lbfgs_backtracking")
LABEL_MODES = ("known", "idlg", "recover", "optimize")
GRADIENT_POINTS = ("masked", "dense", "sent")

#: Keyword arguments of :func:`sims.models.conv_net` for the digits attack experiments
#: (with ``in_channels=1, image_size=8, num_classes=10``): one 3x3 conv with 16
#: channels, 2x2 average pooling to 16x5x5, fc(64), fc(10), sigmoid throughout (twice
#: differentiable, non-negative before the last layer as
#: :func:`sims.attacks.update.idlg_label` needs). One conv layer rather than the Conv-2
#: :func:`sims.models.conv_net` suggests for digits: two 2x2 pools leave a 16x2x2 map,
#: which inverts far worse.
DIGITS_ATTACK_MODEL = {
    "num_conv": 1,
    "width": 64,
    "hidden": 64,
    "activation": "sigmoid",
    "pooling": "avg",
}


@dataclass(frozen=True)
class AttackConfig:
    """Hyper-parameters of a gradient inversion.

    Attributes:
        loss: matching loss (:mod:`sims.attacks.objectives`). ``"l2"``: ``sum ||m ⊙
            (g' - g)||^2 / sum ||m ⊙ g||^2``, DLG's squared distance normalised by the
            target's energy (same minimisers; makes the L-BFGS tolerances scale free).
            ``"cosine_tv"``: ``1 - <m⊙g', m⊙g> / (||m⊙g'|| ||m⊙g||) + tv_weight * TV(x)``
            over all layers at once (Geiping et al. 2020; PriPrune Algorithm 2, below
            line 7).
        optimizer: ``"lbfgs"`` (``torch.optim.LBFGS``, strong Wolfe line search; one
            ``step`` with ``iterations`` as ``max_iter``; not batched),
            ``"lbfgs_backtracking"`` (our batched L-BFGS with Armijo backtracking) or
            ``"adam"`` (learning rate dropped 10x at 3/8, 5/8, 7/8 of the run, as in
            Geiping et al.); see :mod:`sims.attacks.optimizers`.
        iterations: optimiser iterations per restart, >= 1. PriPrune uses 10,000 (Adam).
        lr: optimiser learning rate, > 0 (1.0 is L-BFGS's natural step; PriPrune uses
            0.01 with Adam, Geiping et al. 0.1).
        tv_weight: weight of the total variation prior in ``"cosine_tv"``, >= 0.
            Ignored by ``"l2"``.
        restarts: independent random initialisations, >= 1. Each restart returns the
            point with the lowest matching loss (TV excluded) it evaluated, not its last
            iterate (``breaching``'s best-iterate rule, Geiping et al.); the restart whose
            best loss is lowest is returned.
        label_mode: ``"known"`` (labels passed in), ``"idlg"`` (recovered from the
            gradient by :func:`sims.attacks.update.idlg_label`; B = 1 only),
            ``"recover"`` (B labels with multiplicity from the last layer's gradient,
            :func:`sims.attacks.update.recover_labels`, LLG of Wainakh et al. 2022; any
            B, equal to ``"idlg"`` at B = 1) or ``"optimize"`` (soft labels optimised
            jointly, as DLG and PriPrune Algorithm 2 line 8).
        box: keep the images in [0, 1] during the search: Adam projects (clamps) after
            every step (Geiping et al.'s "boxed" option); both L-BFGS, whose curvature
            pairs a projection would break, optimise ``z`` with ``x = sigmoid(z)``. The
            returned images are clamped to [0, 1] in every case (the pixel range is
            public).
        signed_gradients: Adam steps on the sign of the image gradient (Geiping et al.'s
            default). Ignored by L-BFGS.
        mask_dummy: with a mask (SGI), match ``m ⊙ g'`` against ``m ⊙ g`` (True, our
            default) or the unmasked dummy gradient ``g'`` against ``m ⊙ g`` (False, the
            literal PriPrune Algorithm 2 line 7; deviation 5 in
            :mod:`sims.attacks.attack`). Ignored without a mask (GI).
        input_mean, input_std: per-channel normalisation of the model's input, as in
            ``breaching``: the model sees ``(x - mean) / std`` while the optimised images
            ``x`` stay in pixel space (so ``box``, TV and the returned images are in
            [0, 1] pixels). Both empty (default: the model sees pixels) or both of
            length C (or 1, shared by all channels); every std > 0.
        seed: seed of the random initialisation, >= 0.
        device: ``"auto"`` (CUDA when present), ``"cpu"``, ``"cuda"``, ...; its syntax
            is checked here, the device resolved when the attack runs.
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
    mask_dummy: bool = True
    input_mean: tuple[float, ...] = ()
    input_std: tuple[float, ...] = ()
    seed: int = 0
    device: str = "auto"

    def __post_init__(self) -> None:
        func = "AttackConfig"
        check_choice("loss", self.loss, func=func, choices=LOSSES)
        check_choice("optimizer", self.optimizer, func=func, choices=OPTIMIZERS)
        check_int("iterations", self.iterations, func=func, low=1)
        check_lr("lr", self.lr, func=func)
        if self.optimizer == "adam":
            check_real("lr", self.lr, func=f"{func} with optimizer='adam'", high=MAX_ADAM_LR)
        check_real("tv_weight", self.tv_weight, func=func, low=0)
        check_int("restarts", self.restarts, func=func, low=1)
        check_choice("label_mode", self.label_mode, func=func, choices=LABEL_MODES)
        for name in ("box", "signed_gradients", "mask_dummy"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(
                    f"The '{name}' parameter of {func} must be a bool. "
                    f"Got {getattr(self, name)!r} instead."
                )
        self._check_normalisation(func)
        check_seed(self.seed, func=func)
        check_device(self.device, func=func)

    def _check_normalisation(self, func: str) -> None:
        """``input_mean`` and ``input_std`` as tuples of floats (a sweep passes lists):
        finite, std > 0, both empty or of one length."""
        values = {}
        for name in ("input_mean", "input_std"):
            value = getattr(self, name)
            if not isinstance(value, tuple | list):
                raise ValueError(
                    f"The '{name}' parameter of {func} must be a tuple of floats (one per "
                    f"channel, or empty). Got {value!r} instead."
                )
            low = 0 if name == "input_std" else None
            values[name] = tuple(
                check_real(f"{name}[{c}]", v, func=func, low=low, low_inclusive=False)
                for c, v in enumerate(value)
            )
            object.__setattr__(self, name, values[name])
        if len(values["input_mean"]) != len(values["input_std"]):
            raise ValueError(
                f"The 'input_std' parameter of {func} must have as many entries as "
                f"input_mean ({len(values['input_mean'])}). Got {len(values['input_std'])} "
                "instead."
            )

    @classmethod
    def dlg(cls, **overrides) -> AttackConfig:
        """Squared L2 matching with L-BFGS (Zhu et al. 2019), the strong attack of the demos.

        100 iterations of torch's strong-Wolfe L-BFGS on the energy-normalised squared
        distance; on unpruned single digits L-BFGS reaches the float32 floor of the
        revealed gradient and stops on its change tolerance.
        """
        return replace(cls(loss="l2", optimizer="lbfgs", iterations=100, lr=1.0), **overrides)

    @classmethod
    def inverting_gradients(cls, **overrides) -> AttackConfig:
        """Cosine + TV with signed Adam, boxed (Geiping et al. 2020; PriPrune's attack).

        Geiping et al. use lr 0.1, TV weight 1e-4 and 4,800-24,000 iterations; PriPrune
        lr 0.01 and 10,000 iterations. Here lr 0.1, 300 iterations and TV weight 1e-6:
        on 8x8 digits the final cosine distance is far below Geiping et al.'s TV term
        (1e-4 times a TV of order 0.5), which would then dominate and flatten the image.
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
        loss: matching loss (TV term excluded) at the returned images before their
            clamp to [0, 1] (unboxed L-BFGS can leave the box; a boxed attack stays in
            it): the lowest the returned restart evaluated, a float.
        iterations: optimiser iterations that restart ran.
    """

    images: torch.Tensor
    labels: torch.Tensor
    loss: float
    iterations: int
