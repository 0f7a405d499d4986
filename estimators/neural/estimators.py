r"""The neural MI estimators: MINE, NWJ, InfoNCE, SMILE (concat critic) and H-MINE.

Every estimator follows the protocol of :mod:`estimators.registry`: settings are keyword
arguments checked at construction, and ``estimate(x, y, *, seed=0)`` returns an
:class:`~estimators.estimate.MIEstimate` in nats. One estimate is ``n_fits`` independent
fits (:class:`~estimators.neural.training.TrainingConfig`):

1. The samples are validated (:func:`estimators.samples.paired_samples`), optionally
   transformed per feature (``transform="asinh"`` or ``"rank"``, which leave the MI
   unchanged) and standardised.
2. Fit ``k`` holds out its own test fold (disjoint across fits), splits the rest into
   training and validation, trains a fresh critic from its own seed
   (:func:`~estimators.neural.training.train_critic`, early stopping on the validation
   bound) and evaluates the restored critic's bound on its test fold, with a standard
   error (:mod:`~estimators.neural.evaluation`).
3. The estimate is the mean of the fits' test values; the interval comes from their
   spread and standard errors, and its upper end adds the fits' mean train/validation
   gap as an allowance for the critics' generalisation error
   (:mod:`~estimators.neural.interval`).

Which bound each class trains and reports:

=========  ====================  ====================  =========================
class      critic                training objective    reported value
=========  ====================  ====================  =========================
MINE       ConcatCritic          DV with MINE's EMA    DV
NWJ        ConcatCritic          NWJ                   NWJ
InfoNCE    ConcatCritic          InfoNCE               InfoNCE (K <= 512)
SMILE      ConcatCritic          JS                    DV with clipped ratio
HMINE      HierarchicalCritic    DV with MINE's EMA    DV
=========  ====================  ====================  =========================

Warnings (:class:`~estimators.estimate.MIWarning`, also listed in ``.warnings``): a fit
that reached ``max_steps`` while its validation bound was still improving (not
converged); a training-probe bound above the validation bound of the restored critic by
more than :data:`GAP_SIGMAS` standard errors of the difference and by more than
:data:`GAP_RELATIVE` of the validation value (overfitting); heavy tails in the data when
``transform="none"``; an InfoNCE value above :data:`SATURATION_SHARE` of its
``log(batch_size)`` ceiling; and, from :func:`~estimators.estimate.make_estimate`, a
negative estimate.

If ``Y`` is a deterministic function of a continuous ``X`` (a noiseless gradient) the
true MI is infinite; an estimate is then a finite value limited by the critic and ``n``.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from pruneleak.bounds.validation import check_bool, check_choice, check_int, check_real
from pruneleak.estimators._arrays import check_seed
from pruneleak.estimators.device import check_device, resolve_device
from pruneleak.estimators.estimate import MIEstimate, make_estimate
from pruneleak.estimators.neural.critics import (
    ACTIVATIONS,
    ConcatCritic,
    HierarchicalCritic,
    check_hidden,
)
from pruneleak.estimators.neural.evaluation import (
    EVAL_BLOCK,
    Evaluation,
    evaluate_infonce,
    evaluate_marginal,
)
from pruneleak.estimators.neural.interval import cross_fit_interval
from pruneleak.estimators.neural.objectives import (
    dv_bound,
    infonce_bound,
    js_objective,
    mine_surrogate,
    nwj_bound,
    off_diagonal,
    smile_bound,
)
from pruneleak.estimators.neural.training import TrainingConfig, train_critic
from pruneleak.estimators.samples import (
    TRANSFORMS,
    heavy_tail_warnings,
    paired_samples,
    transform_samples,
)

__all__ = ["HMINE", "HMINE_PRESETS", "MINE", "NWJ", "SMILE", "CriticPreset", "InfoNCE"]

logger = logging.getLogger(__name__)

#: Largest number of hidden activations of one training minibatch's score matrix
#: (batch_size**2 times the widest hidden layer): 2**28 float32 are 1 GiB, and autograd
#: keeps a few such tensors per layer.
MAX_PAIR_ACTIVATIONS = 2**28
#: A training bound above the validation bound by more than this share of the
#: validation value, and by more than GAP_SIGMAS standard errors of the difference, is
#: reported as overfitting.
GAP_RELATIVE = 0.5
GAP_SIGMAS = 3.0
#: InfoNCE is reported as saturated when its value exceeds this share of log(batch_size),
#: the ceiling of its training bound.
SATURATION_SHARE = 0.8
#: Product-of-marginal pairs per sample when a DV, NWJ or SMILE bound is evaluated: on the
#: validation fold and training probe at every evaluation, and once on the test fold.
VALIDATION_SHIFTS = 16
TEST_SHIFTS = 64


def _standardize(arr: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """Zero mean, unit variance per feature over ``axes``, in float64, without overflow.

    Each feature is first divided by its largest magnitude (same result, and no sum of
    squares can overflow); a constant feature becomes 0.
    """
    peak = np.abs(arr).max(axis=axes, keepdims=True)
    arr = arr / np.where(peak > 0, peak, 1.0)
    centred = arr - arr.mean(axis=axes, keepdims=True)
    std = np.sqrt(np.mean(centred**2, axis=axes, keepdims=True))
    return centred / np.where(std > 0, std, 1.0)


def _to_tensor(name: str, arr: np.ndarray, *, func: str, standardize: bool, axes, device):
    limit = float(np.finfo(np.float32).max)
    if standardize:
        arr = _standardize(arr, axes)
    elif np.abs(arr).max() > limit:
        raise ValueError(
            f"The '{name}' parameter of {func} has values up to {np.abs(arr).max():g}, beyond "
            f"float32 (at most {limit:g}) in which the critic computes; keep "
            "TrainingConfig(standardize=True) or rescale the data."
        )
    return torch.from_numpy(np.ascontiguousarray(arr)).to(device, torch.float32)


class _NeuralEstimator:
    """Shared protocol of the neural estimators (see the module docstring)."""

    name = ""
    bound = ""
    clip: float | None = None

    def __init__(self, *, training, transform, device, progress):
        func = type(self).__name__
        if training is None:
            training = TrainingConfig()
        elif not isinstance(training, TrainingConfig):
            raise ValueError(
                f"The 'training' parameter of {func} must be a TrainingConfig or None. "
                f"Got {type(training).__name__} instead."
            )
        self.training = training
        self.transform = check_choice("transform", transform, func=func, choices=TRANSFORMS)
        self.device = check_device(device, func=func)
        self.progress = check_bool("progress", progress, func=func)

    # --- hooks of the subclasses ------------------------------------------------------
    def _samples(self, x, y, func: str) -> tuple[np.ndarray, np.ndarray]:
        x, y = paired_samples(x, y, func=func)
        if self.transform != "none":
            x = transform_samples(x, self.transform, func=func)
            y = transform_samples(y, self.transform, func=func)
        return x, y

    def _x_axes(self) -> tuple[int, ...]:
        return (0,)

    def _build(self, dim_x: int, dim_y: int, x_shape) -> nn.Module:
        raise NotImplementedError

    def _objective(self, critic, x, y, state: dict):
        raise NotImplementedError

    def _evaluate(self, critic, x, y, *, test: bool) -> Evaluation:
        shifts = TEST_SHIFTS if test else VALIDATION_SHIFTS
        return evaluate_marginal(critic, x, y, self.bound, shifts=shifts, clip=self.clip)

    def _extra_warnings(self, value: float, fits: list[dict]) -> list[str]:
        return []

    # --- the protocol -------------------------------------------------------------------
    def estimate(self, x, y, *, seed: int = 0) -> MIEstimate:
        """Estimate ``I(X; Y)`` in nats from paired samples (first axis = sample).

        Raises ValueError for invalid samples (see :func:`estimators.samples.paired_samples`),
        too few samples for the configured folds and batch size, or a critic that
        diverged.
        """
        func = f"{type(self).__name__}.estimate"
        seed = check_seed(seed, func=func)
        started = time.perf_counter()
        raw_x, raw_y = self._samples(x, y, func)
        config = self.training
        n = raw_x.shape[0]
        n_test = max(2, round(config.test_fraction * n))
        n_rest = n - n_test
        n_val = max(2, round(config.validation_fraction * n_rest))
        n_train = n_rest - n_val
        if n_train < config.batch_size or config.n_fits * n_test > n:
            raise ValueError(
                f"{func} needs at least batch_size={config.batch_size} training samples per "
                f"fit and {config.n_fits} disjoint test folds of {n_test} samples "
                f"(test_fraction={config.test_fraction:g}, validation_fraction="
                f"{config.validation_fraction:g}). Got {n} samples in all ({n_train} for "
                "training)."
            )
        warnings_found = []
        if self.transform == "none":
            warnings_found += heavy_tail_warnings(
                self.name, {"x": raw_x.reshape(n, -1), "y": raw_y}
            )
        device = resolve_device(self.device)
        x_t = _to_tensor(
            "x",
            raw_x,
            func=func,
            standardize=config.standardize,
            axes=self._x_axes(),
            device=device,
        )
        y_t = _to_tensor(
            "y", raw_y, func=func, standardize=config.standardize, axes=(0,), device=device
        )
        rng = np.random.default_rng(seed)
        order = rng.permutation(n)
        children = np.random.SeedSequence(seed).spawn(config.n_fits)
        fits, critics, trace = [], [], {}
        for k, child in enumerate(children):
            test = order[k * n_test : (k + 1) * n_test]
            rest = np.concatenate([order[: k * n_test], order[(k + 1) * n_test :]])
            rest = np.random.default_rng(child).permutation(rest)
            fit_seed = int(child.generate_state(1, dtype=np.uint64)[0] % 2**63)
            fit = self._fit(x_t, y_t, rest[n_val:], rest[:n_val], test, fit_seed, device, k)
            critics.append(fit.pop("critic"))
            for key, column in fit.pop("trace").items():
                trace.setdefault(key, []).append(column)
            fits.append(fit)
        value, low, high, details = cross_fit_interval(
            [f["value"] for f in fits],
            [f["se"] for f in fits],
            confidence=config.confidence,
            gaps=[f["train_validation_gap"] for f in fits],
        )
        warnings_found += self._warnings(value, fits)
        diagnostics = {
            "bound": self.bound,
            "n_fits": config.n_fits,
            "n_train": n_train,
            "n_validation": n_val,
            "n_test": n_test,
            **details,
        }
        for k, fit in enumerate(fits):
            for key in ("value", "se", "steps", "best_step", "train_validation_gap"):
                diagnostics[f"fit{k}_{key}"] = fit[key]
        diagnostics["wall_time_s"] = time.perf_counter() - started
        logger.info("%s: %.4f nats [%.4f, %.4f]", self.name, value, low, high)
        return make_estimate(
            self.name,
            value,
            (low, high),
            confidence=config.confidence,
            n_samples=n,
            trace={key: np.concatenate(columns) for key, columns in trace.items()},
            critic=nn.ModuleList(critics),
            diagnostics=diagnostics,
            warnings_found=warnings_found,
        )

    def _fit(self, x, y, train, validation, test, seed, device, k) -> dict:
        config = self.training
        to_index = lambda idx: torch.as_tensor(idx, dtype=torch.long, device=device)  # noqa: E731
        train, validation, test = to_index(train), to_index(validation), to_index(test)
        probe = train[: len(validation)]  # same size as validation: comparable bounds
        with torch.random.fork_rng(devices=[]):  # the caller's global RNG stays untouched
            torch.manual_seed(seed)
            critic = self._build(x.shape[-1], y.shape[1], tuple(x.shape)).to(device)
        generator = torch.Generator(device=device)
        generator.manual_seed(seed)
        folds = {"train": probe, "validation": validation}
        state: dict = {}
        x_train, y_train = x[train], y[train]
        result = train_critic(
            critic,
            objective=lambda idx: self._objective(critic, x_train[idx], y_train[idx], state),
            evaluate=lambda fold: self._evaluate(
                critic, x[folds[fold]], y[folds[fold]], test=False
            ),
            n_train=len(train),
            config=config,
            generator=generator,
            progress=self.progress,
            description=f"{self.name} fit {k + 1}/{config.n_fits}",
        )
        with torch.no_grad():
            tested = self._evaluate(critic, x[test], y[test], test=True)
        if not (math.isfinite(tested.value) and math.isfinite(tested.se)):
            raise ValueError(
                f"{type(self).__name__}.estimate could not produce a finite estimate: the "
                f"critic of fit {k} gives a non-finite bound on its test fold "
                f"(learning_rate={config.learning_rate:g}); lower the learning rate or keep "
                "standardize=True."
            )
        trace = dict(result.trace)
        trace["fit"] = np.full(len(trace["step"]), k, dtype=float)
        gap = result.best_train.value - result.best_validation.value
        return {
            "value": tested.value,
            "se": tested.se,
            "steps": result.steps_run,
            "best_step": result.best_step,
            "stopped_early": result.stopped_early,
            "train_validation_gap": gap,
            "gap_se": math.hypot(result.best_train.se, result.best_validation.se),
            "validation": result.best_validation.value,
            "critic": critic,
            "trace": trace,
        }

    def _warnings(self, value: float, fits: list[dict]) -> list[str]:
        messages = []
        config = self.training
        unconverged = [k for k, f in enumerate(fits) if not f["stopped_early"]]
        if unconverged:
            messages.append(
                f"{self.name}: not converged: fit(s) {unconverged} reached max_steps="
                f"{config.max_steps} while the validation bound was still improving (best at "
                f"step(s) {[fits[k]['best_step'] for k in unconverged]}); the estimate is "
                "likely too low. Raise max_steps or the learning rate."
            )
        overfit = [
            k
            for k, f in enumerate(fits)
            if f["train_validation_gap"] > GAP_SIGMAS * f["gap_se"]
            and f["train_validation_gap"] > GAP_RELATIVE * abs(f["validation"])
        ]
        if overfit:
            gaps = ", ".join(
                f"{fits[k]['train_validation_gap'] + fits[k]['validation']:.3g} vs "
                f"{fits[k]['validation']:.3g}"
                for k in overfit
            )
            messages.append(
                f"{self.name}: train/validation gap: the critic of fit(s) {overfit} scores "
                f"well above its validation bound on training samples (train vs validation "
                f"nats: {gaps}): it overfits. Use more samples, a smaller critic or a lower "
                "learning rate."
            )
        return messages + self._extra_warnings(value, fits)


# ------------------------------------------------------------------------ concat critics


class _PairwiseEstimator(_NeuralEstimator):
    """An estimator on a :class:`ConcatCritic` scoring all pairs of every minibatch."""

    def __init__(
        self,
        *,
        hidden=(128,),
        activation: str = "elu",
        training: TrainingConfig | None = None,
        transform: str = "rank",
        device="auto",
        progress: bool = False,
    ):
        super().__init__(training=training, transform=transform, device=device, progress=progress)
        func = type(self).__name__
        self.hidden = check_hidden("hidden", hidden, func=func, allow_empty=False)
        self.activation = check_choice(
            "activation", activation, func=func, choices=tuple(ACTIVATIONS)
        )
        pairs = self.training.batch_size**2 * max(self.hidden)
        if pairs > MAX_PAIR_ACTIVATIONS:
            raise ValueError(
                f"The 'batch_size' and 'hidden' parameters of {func} give "
                f"batch_size**2 * max(hidden) = {pairs} hidden activations per minibatch, "
                f"more than the limit of {MAX_PAIR_ACTIVATIONS}; use a smaller batch_size or "
                "narrower layers."
            )

    def _build(self, dim_x, dim_y, x_shape):
        return ConcatCritic(dim_x, dim_y, hidden=self.hidden, activation=self.activation)

    @staticmethod
    def _pairs(critic, x, y):
        """Joint (diagonal) and product-of-marginal (off-diagonal) scores of a minibatch."""
        scores = critic.scores(x, y)
        return scores.diagonal(), off_diagonal(scores)


_TRAINING_DOC = """
    training : TrainingConfig, optional
        Steps, batch size, learning rate and schedule, early stopping, folds, fits,
        confidence, standardisation; ``TrainingConfig()`` by default.
    transform : {"rank", "asinh", "none"}, default "rank"
        Per-feature strictly increasing map applied first (:mod:`estimators.samples`);
        MI is invariant to it. The default normal scores leave Gaussian data nearly
        unchanged and tame heavy tails; with "none" heavy tails are checked and warned
        about.
    device : "auto", "cpu", "cuda", "cuda:N" or "mps", default "auto"
    progress : bool, default False
        Show a progress bar per fit.
"""


class MINE(_PairwiseEstimator):
    __doc__ = f"""MINE: the Donsker-Varadhan bound on a concat critic (Belghazi et al. 2018).

    Trains with MINE's moving-average gradient correction
    (:func:`~estimators.neural.objectives.mine_surrogate`, Section 3.2) on the
    ``batch_size * (batch_size - 1)`` product-of-marginal pairs of each minibatch's score
    matrix, and reports :func:`~estimators.neural.objectives.dv_bound` on the test folds.

    Parameters
    ----------
    hidden : sequence of int, default (128,)
        Hidden widths of the :class:`~estimators.neural.critics.ConcatCritic`.
    activation : {{"elu", "relu", "softplus"}}, default "elu"
    ema_rate : float, default 0.01
        Weight of the newest minibatch in the moving average of ``E_Q[e^T]``, in (0, 1];
        1 switches the correction off.
    {_TRAINING_DOC}
    Examples
    --------
    >>> from pruneleak.estimators.mi import correlated_gaussian_pair
    >>> x, y = correlated_gaussian_pair(1000, 1, 0.5)  # I(X; Y) = 0.5 nats
    >>> quick = TrainingConfig(eval_every=25, patience=3, n_fits=2)  # a small budget
    >>> est = MINE(hidden=(16,), training=quick, device="cpu").estimate(x, y)
    >>> est.method, est.ci_low < 0.5 < est.ci_high, len(est.critic)
    ('mine', True, 2)
    """

    name = "mine"
    bound = "dv"

    def __init__(
        self,
        *,
        hidden=(128,),
        activation: str = "elu",
        ema_rate: float = 0.01,
        training: TrainingConfig | None = None,
        transform: str = "rank",
        device="auto",
        progress: bool = False,
    ):
        super().__init__(
            hidden=hidden,
            activation=activation,
            training=training,
            transform=transform,
            device=device,
            progress=progress,
        )
        self.ema_rate = check_real(
            "ema_rate", ema_rate, func="MINE", low=0.0, low_inclusive=False, high=1.0
        )

    def _objective(self, critic, x, y, state):
        joint, marginal = self._pairs(critic, x, y)
        surrogate, state["log_average"] = mine_surrogate(
            joint, marginal, state.get("log_average"), rate=self.ema_rate
        )
        return -surrogate, dv_bound(joint.detach(), marginal.detach())


class NWJ(_PairwiseEstimator):
    __doc__ = f"""NWJ: the Nguyen-Wainwright-Jordan bound on a concat critic.

    Trains and reports :func:`~estimators.neural.objectives.nwj_bound` (Poole et al.
    2019's ``I_NWJ``) over all pairs of each minibatch. Unbiased minibatch gradients, but
    the ``e^T`` term makes its variance grow quickly with the MI.

    Parameters
    ----------
    hidden : sequence of int, default (128,)
    activation : {{"elu", "relu", "softplus"}}, default "elu"
    {_TRAINING_DOC}"""

    name = "nwj"
    bound = "nwj"

    def _objective(self, critic, x, y, state):
        bound = nwj_bound(*self._pairs(critic, x, y))
        return -bound, bound.detach()


class InfoNCE(_PairwiseEstimator):
    __doc__ = f"""InfoNCE (CPC) on a concat critic: low variance, at most ``log K``.

    Trains :func:`~estimators.neural.objectives.infonce_bound` on each minibatch's score
    matrix (``K = batch_size``, so the training bound is at most ``log(batch_size)``) and
    reports it on the test folds with ``K`` = the fold size (blocks of at most
    :data:`~estimators.neural.evaluation.EVAL_BLOCK`), a valid bound with a higher
    ceiling. A value above {SATURATION_SHARE:g} ``log(batch_size)`` is reported as
    saturated: the true MI may be much larger.

    Parameters
    ----------
    hidden : sequence of int, default (128,)
    activation : {{"elu", "relu", "softplus"}}, default "elu"
    {_TRAINING_DOC}"""

    name = "infonce"
    bound = "infonce"

    def _objective(self, critic, x, y, state):
        bound = infonce_bound(critic.scores(x, y))
        return -bound, bound.detach()

    def _evaluate(self, critic, x, y, *, test):
        block = EVAL_BLOCK if test else self.training.batch_size
        return evaluate_infonce(critic, x, y, block=block)

    def _extra_warnings(self, value, fits):
        ceiling = math.log(self.training.batch_size)
        if value > SATURATION_SHARE * ceiling:
            return [
                f"{self.name}: saturated: the estimate {value:.3g} nats is above "
                f"{SATURATION_SHARE:g} log(batch_size) = {SATURATION_SHARE * ceiling:.3g}; "
                f"InfoNCE's training bound cannot exceed log(batch_size) = {ceiling:.3g}, so "
                "the true MI may be much larger. Raise batch_size or use another estimator."
            ]
        return []


class SMILE(_PairwiseEstimator):
    __doc__ = f"""SMILE: the clipped DV value of a critic trained as a JS classifier.

    Song and Ermon (2020), Section 5: the critic maximises the Jensen-Shannon objective
    (:func:`~estimators.neural.objectives.js_objective`, whose maximiser is the log
    density ratio), and the reported value is
    :func:`~estimators.neural.objectives.smile_bound` with clip ``tau``: the DV bound with
    ``e^T`` clipped to ``[e^-tau, e^tau]`` in the partition function, which bounds its
    variance at the price of a bias when the MI is large (not a lower bound).

    Parameters
    ----------
    clip : float, default 5.0
        ``tau`` > 0 (the authors' usual choice is 5; ``inf`` gives the DV bound).
    hidden : sequence of int, default (128,)
    activation : {{"elu", "relu", "softplus"}}, default "elu"
    {_TRAINING_DOC}"""

    name = "smile"
    bound = "smile"

    def __init__(
        self,
        *,
        clip: float = 5.0,
        hidden=(128,),
        activation: str = "elu",
        training: TrainingConfig | None = None,
        transform: str = "rank",
        device="auto",
        progress: bool = False,
    ):
        super().__init__(
            hidden=hidden,
            activation=activation,
            training=training,
            transform=transform,
            device=device,
            progress=progress,
        )
        self.clip = check_real("clip", clip, func="SMILE", low=0.0, low_inclusive=False)

    def _objective(self, critic, x, y, state):
        joint, marginal = self._pairs(critic, x, y)
        bound = smile_bound(joint.detach(), marginal.detach(), clip=self.clip)
        return -js_objective(joint, marginal), bound


# ------------------------------------------------------------------------ H-MINE


@dataclass(frozen=True)
class CriticPreset:
    """A named H-MINE architecture and the Adam learning rate it trains with.

    Attributes:
        block_hidden: hidden widths of the BlockModel.
        embedding_dim: width of each embedding ``h_m`` (the BlockModel's last layer).
        mix_hidden: hidden widths of the MixModel (its output layer has 1 unit).
        learning_rate: initial Adam step size (``TrainingConfig.learning_rate``).
    """

    block_hidden: tuple[int, ...]
    embedding_dim: int
    mix_hidden: tuple[int, ...]
    learning_rate: float


#: H-MINE's presets: ``"default"``, this package's tuned critic (see :class:`HMINE`), and
#: ``"paper"``, Liu et al. (2021), Section 3.1 (``papers/h-mine-quantitative-leakage-
#: metric.txt``, line 135): "3 fully connected layers with 200, 200, 5 neurons" (the
#: BlockModel: hidden 200, 200 and the 5-wide embedding), "The MixModel is a two-layer MLP
#: with 500, 1 neurons", "Adam ... learning rate 5e-5".
HMINE_PRESETS = {
    "default": CriticPreset((32,), 16, (64,), 3e-3),
    "paper": CriticPreset((200, 200), 5, (500,), 5e-5),
}


class HMINE(_NeuralEstimator):
    __doc__ = f"""H-MINE: the DV bound on the hierarchical critic of Liu et al. (2021).

    ``x`` holds ``n`` batches of ``B`` i.i.d. inputs, shape ``(n, B, ...)`` (axes after the
    second are flattened into the features of one input), and ``y`` the gradient of each
    batch, ``(n, ...)``. The critic is
    :class:`~estimators.neural.critics.HierarchicalCritic`; since the ``B`` inputs are
    i.i.d., ``x``'s features are transformed and standardised over samples and positions
    together. Training is MINE's (DV with the moving-average correction), with
    ``marginal_shifts`` re-paired samples per joint sample of a minibatch; the test
    value pairs each held-out sample with {TEST_SHIFTS} others.

    The paper's architecture ((200, 200), 5, (500,)) and learning rate (5e-5) are
    ``preset="paper"``, not the default: at 5e-5 it under-trains on batch-gradient tasks
    and at 5e-4 it overfits 25 x 25 tasks without warning (issue 14). Plain :class:`MINE`
    on the flattened batch is a strong competitor (docs/findings/hmine.md compares the two
    on the task suite); H-MINE's advantage is its parameter count, which does not grow
    with ``B``.

    Parameters
    ----------
    preset : {{"default", "paper"}}, default "default"
        The architecture and learning rate (:data:`HMINE_PRESETS`); ``"paper"`` is the
        paper's ((200, 200), 5, (500,), Adam at 5e-5). Arguments given explicitly win:
        the preset fills ``block_hidden``, ``embedding_dim`` and ``mix_hidden`` when they
        are None, and the learning rate when ``training`` is None.
    block_hidden : sequence of int, default None (the preset's; "default": (32,))
    embedding_dim : int, default None (the preset's; "default": 16)
    mix_hidden : sequence of int, default None (the preset's; "default": (64,))
    activation : {{"elu", "relu", "softplus"}}, default "elu" (the paper does not say)
    ema_rate : float, default 0.01
        As in :class:`MINE`.
    marginal_shifts : int, default 4
        Product-of-marginal pairs per joint pair in a training minibatch, >= 1.
    {_TRAINING_DOC}"""

    name = "hmine"
    bound = "dv"

    def __init__(
        self,
        *,
        preset: str = "default",
        block_hidden=None,
        embedding_dim: int | None = None,
        mix_hidden=None,
        activation: str = "elu",
        ema_rate: float = 0.01,
        marginal_shifts: int = 4,
        training: TrainingConfig | None = None,
        transform: str = "rank",
        device="auto",
        progress: bool = False,
    ):
        func = "HMINE"
        self.preset = check_choice("preset", preset, func=func, choices=tuple(HMINE_PRESETS))
        chosen = HMINE_PRESETS[self.preset]
        if training is None:
            training = TrainingConfig(learning_rate=chosen.learning_rate)
        super().__init__(training=training, transform=transform, device=device, progress=progress)
        block_hidden = chosen.block_hidden if block_hidden is None else block_hidden
        embedding_dim = chosen.embedding_dim if embedding_dim is None else embedding_dim
        mix_hidden = chosen.mix_hidden if mix_hidden is None else mix_hidden
        self.block_hidden = check_hidden("block_hidden", block_hidden, func=func, allow_empty=False)
        self.embedding_dim = check_int("embedding_dim", embedding_dim, func=func, low=1)
        self.mix_hidden = check_hidden("mix_hidden", mix_hidden, func=func)
        self.activation = check_choice(
            "activation", activation, func=func, choices=tuple(ACTIVATIONS)
        )
        self.ema_rate = check_real(
            "ema_rate", ema_rate, func=func, low=0.0, low_inclusive=False, high=1.0
        )
        self.marginal_shifts = check_int(
            "marginal_shifts", marginal_shifts, func=func, low=1, high=self.training.batch_size - 1
        )

    def _samples(self, x, y, func):
        x, y = paired_samples(x, y, func=func, flatten_x=False)
        x = x.reshape(x.shape[0], x.shape[1], -1)
        if self.transform != "none":
            # the B inputs are i.i.d.: one transform per feature over samples and positions
            pooled = transform_samples(x.reshape(-1, x.shape[2]), self.transform, func=func)
            x = pooled.reshape(x.shape)
            y = transform_samples(y, self.transform, func=func)
        return x, y

    def _x_axes(self):
        return (0, 1)

    def _build(self, dim_x, dim_y, x_shape):
        return HierarchicalCritic(
            dim_x,
            dim_y,
            x_shape[1],
            block_hidden=self.block_hidden,
            embedding_dim=self.embedding_dim,
            mix_hidden=self.mix_hidden,
            activation=self.activation,
        )

    def _objective(self, critic, x, g, state):
        scores = critic.shifted_scores(x, g, self.marginal_shifts)
        joint, marginal = scores[0], scores[1:].flatten()
        surrogate, state["log_average"] = mine_surrogate(
            joint, marginal, state.get("log_average"), rate=self.ema_rate
        )
        return -surrogate, dv_bound(joint.detach(), marginal.detach())
