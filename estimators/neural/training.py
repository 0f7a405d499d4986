"""Training a critic that a user can trust: held-out validation, early stopping, a schedule.

:class:`TrainingConfig` holds the settings every neural estimator shares;
:func:`train_critic` is the loop. Each step draws a minibatch without replacement (a new
random permutation of the training fold every epoch), maximises the estimator's training
objective with Adam, and records the minibatch bound in a buffer on the device (no host
synchronisation per step). Every ``eval_every`` steps the bound is evaluated on the
validation fold and on an equally large probe of the training fold (same formula, same
candidate-set size, so the two are comparable: their gap is overfitting); the critic with
the best validation bound is kept, the learning rate follows the schedule, and training
stops after ``patience`` evaluations without a new best, or at ``max_steps``. The best
critic is restored at the end.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from pruneleak.bounds.progress import progress as show_progress
from pruneleak.bounds.validation import (
    check_bool,
    check_choice,
    check_int,
    check_open_unit,
    check_real,
)
from pruneleak.estimators.neural.evaluation import Evaluation

__all__ = ["SCHEDULES", "TrainingConfig", "TrainingResult", "train_critic"]

#: Learning-rate schedules: "plateau" halves the rate after ceil(patience / 2) evaluations
#: without a new best validation bound; "cosine" decays it to 0 at max_steps
#: (Loshchilov and Hutter, SGDR, ICLR 2017, without restarts); "constant" keeps it.
SCHEDULES = ("plateau", "cosine", "constant")


@dataclass(frozen=True)
class TrainingConfig:
    """Training, splitting and interval settings shared by the neural estimators.

    The defaults were tuned on the task suite of ``benchmarks/bench_mi_suite.py``
    (docs/guide/estimating-mi.md gives the measurements): small minibatches with all
    their pairs scored, a validation bound that peaks early and then falls while the
    training bound keeps rising (overfitting, not under-training, limits the estimates),
    hence early stopping with a short patience and averaged weights.

    Attributes
    ----------
    max_steps : int, default 4000
        Cap on the Adam updates of one fit (early stopping usually ends training sooner).
    batch_size : int, default 64
        Samples per minibatch. Pairwise critics score all ``batch_size**2`` pairs of a
        minibatch (the cost grows as its square; InfoNCE's training bound is at most
        ``log(batch_size)``, 4.16 nats at 64: raise it for larger MI).
    learning_rate : float, default 3e-3
        Initial Adam step size.
    weight_decay : float, default 0.0
        Decoupled weight decay per step, as a multiple of the learning rate (AdamW;
        Loshchilov and Hutter, ICLR 2019), >= 0.
    averaging : float, default 0.99
        Decay of an exponential moving average of the critic's weights, updated after
        every step, in [0, 1); evaluations, early stopping and the returned critic use
        the averaged weights (Polyak averaging; 0 switches it off and uses the weights
        as trained).
    schedule : {"plateau", "cosine", "constant"}, default "plateau"
        Learning-rate schedule (:data:`SCHEDULES`).
    eval_every : int, default 100
        Steps between evaluations of the validation bound (the unit of ``patience``).
    patience : int, default 4
        Evaluations without an improvement of the validation bound before training stops.
    min_improvement : float, default 0.005
        Nats by which a validation bound must beat the best so far to count as an
        improvement for ``patience`` and the plateau schedule (smaller gains are noise; the
        best critic is still the one with the highest validation bound), >= 0.
    validation_fraction : float, default 0.2
        Share of a fit's non-test samples held out for validation, in (0, 1).
    test_fraction : float, default 0.25
        Share of all samples in each fit's test fold, in (0, 1). The test folds of the
        ``n_fits`` fits are disjoint, so ``n_fits * test_fraction <= 1``.
    n_fits : int, default 3
        Independent fits (own seed, own test fold); the estimate is the mean of their
        test bounds and the interval reflects their spread (see
        :mod:`estimators.neural.interval`).
    confidence : float, default 0.95
        Level of the two-sided interval, in (0, 1).
    standardize : bool, default True
        Scale every feature to zero mean and unit variance (in float64, before the
        critic's float32; MI is invariant to it). Inputs are then at most ``sqrt(n)`` in
        size, so float32 cannot overflow whatever the data's magnitude. With False the
        data go to the critic as they are and must fit in float32.

    Examples
    --------
    >>> TrainingConfig(n_fits=5, test_fraction=0.25)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: The 'n_fits' and 'test_fraction' parameters of TrainingConfig need ... 1.25 instead.
    """

    max_steps: int = 4000
    batch_size: int = 64
    learning_rate: float = 3e-3
    weight_decay: float = 0.0
    averaging: float = 0.99
    schedule: str = "plateau"
    eval_every: int = 100
    patience: int = 4
    min_improvement: float = 0.005
    validation_fraction: float = 0.2
    test_fraction: float = 0.25
    n_fits: int = 3
    confidence: float = 0.95
    standardize: bool = True

    def __post_init__(self):
        func = "TrainingConfig"
        check_int("max_steps", self.max_steps, func=func, low=1)
        check_int("batch_size", self.batch_size, func=func, low=2)
        check_real("learning_rate", self.learning_rate, func=func, low=0.0, low_inclusive=False)
        check_real("weight_decay", self.weight_decay, func=func, low=0.0)
        check_real("averaging", self.averaging, func=func, low=0.0, high=1.0, high_inclusive=False)
        check_choice("schedule", self.schedule, func=func, choices=SCHEDULES)
        check_int("eval_every", self.eval_every, func=func, low=1)
        check_int("patience", self.patience, func=func, low=1)
        check_real("min_improvement", self.min_improvement, func=func, low=0.0)
        check_open_unit("validation_fraction", self.validation_fraction, func=func)
        check_open_unit("test_fraction", self.test_fraction, func=func)
        check_int("n_fits", self.n_fits, func=func, low=1)
        check_open_unit("confidence", self.confidence, func=func)
        check_bool("standardize", self.standardize, func=func)
        if self.n_fits * self.test_fraction > 1.0 + 1e-12:
            raise ValueError(
                f"The 'n_fits' and 'test_fraction' parameters of {func} need n_fits * "
                f"test_fraction <= 1 (disjoint test folds). Got {self.n_fits} * "
                f"{self.test_fraction:g} = {self.n_fits * self.test_fraction:g} instead."
            )


@dataclass
class TrainingResult:
    """What one training run did.

    ``trace`` holds one entry per evaluation, the first at step 0 (the initial critic):
    ``step``, ``train`` and ``validation`` (the bound on the training probe and on the
    validation fold, nats), ``train_batches`` (mean minibatch bound since the previous
    evaluation; nan at step 0) and ``learning_rate``.
    ``best_step`` is the step of the restored critic, ``steps_run`` the updates made, and
    ``stopped_early`` whether patience (not ``max_steps``) ended training.
    """

    steps_run: int
    best_step: int
    stopped_early: bool
    best_train: Evaluation
    best_validation: Evaluation
    trace: dict[str, np.ndarray] = field(default_factory=dict)


def train_critic(
    critic: torch.nn.Module,
    *,
    objective: Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]],
    evaluate: Callable[[str], Evaluation],
    n_train: int,
    config: TrainingConfig,
    generator: torch.Generator,
    progress: bool = False,
    description: str = "training",
) -> TrainingResult:
    """Train ``critic`` in place and restore its best validated state.

    ``objective(indices)`` maps a minibatch of training-fold indices to
    ``(loss, bound)``: the loss to minimise and the minibatch bound (both 0-d tensors;
    only the loss needs a gradient). ``evaluate(fold)`` with ``fold`` ``"train"`` or
    ``"validation"`` returns the bound of the current critic on that fold. Raises
    ValueError when a validation bound is not finite (the critic diverged).
    """
    device = next(critic.parameters()).device
    params = [p for p in critic.parameters() if p.requires_grad]
    averaged = [p.detach().clone() for p in params]
    optimizer = torch.optim.AdamW(
        critic.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay
    )
    size = config.batch_size
    per_epoch = n_train // size
    window = torch.zeros(config.eval_every, device=device)
    reduce_after = math.ceil(config.patience / 2)
    rows: dict[str, list[float]] = {
        k: [] for k in ("step", "train", "validation", "train_batches", "learning_rate")
    }
    best_value, best_step, best_state = -math.inf, 0, None
    reference = -math.inf  # best value that counted as an improvement
    best_train = best_validation = None
    since_best = since_reduction = 0
    stopped_early = False
    lr = config.learning_rate

    def checkpoint(step: int, filled: int) -> bool:
        """Evaluate, keep the best state, adapt the rate; True when patience ran out."""
        nonlocal best_value, best_step, best_state, best_train, best_validation
        nonlocal reference, since_best, since_reduction, lr
        averaging = config.averaging > 0
        with torch.no_grad():
            if averaging:  # evaluate (and keep) the averaged weights, then train on
                live = [p.detach().clone() for p in params]
                torch._foreach_copy_(params, averaged)
            validation = evaluate("validation")
            train = evaluate("train")
        if not math.isfinite(validation.value):
            raise ValueError(
                f"{description}: the critic diverged (validation bound {validation.value!r} "
                f"at step {step}) with learning_rate={config.learning_rate:g}; lower the "
                "learning rate or keep standardize=True."
            )
        rows["step"].append(step)
        rows["train"].append(train.value)
        rows["validation"].append(validation.value)
        rows["train_batches"].append(float(window[:filled].mean()) if filled else math.nan)
        rows["learning_rate"].append(lr)
        if validation.value > best_value:
            best_value, best_step = validation.value, step
            best_train, best_validation = train, validation
            best_state = {k: v.detach().clone() for k, v in critic.state_dict().items()}
        if validation.value > reference + config.min_improvement:
            reference = validation.value
            since_best = since_reduction = 0
        else:
            since_best += 1
            since_reduction += 1
        if averaging:
            with torch.no_grad():
                torch._foreach_copy_(params, live)
        if since_best == 0:
            return False
        if config.schedule == "plateau" and since_reduction >= reduce_after:
            lr /= 2.0
            for group in optimizer.param_groups:
                group["lr"] = lr
            since_reduction = 0
        return since_best >= config.patience

    checkpoint(0, 0)
    step = 0
    perm = torch.empty(0, dtype=torch.long, device=device)
    with show_progress(
        total=config.max_steps, desc=description, unit="step", enabled=progress, leave=False
    ) as bar:
        while step < config.max_steps:
            if step % per_epoch == 0:
                perm = torch.randperm(n_train, generator=generator, device=device)
            start = (step % per_epoch) * size
            loss, bound = objective(perm[start : start + size])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            if config.averaging > 0:
                with torch.no_grad():
                    torch._foreach_lerp_(averaged, params, 1.0 - config.averaging)
            window[step % config.eval_every] = bound.detach()
            step += 1
            if config.schedule == "cosine":
                lr = (
                    0.5 * config.learning_rate * (1.0 + math.cos(math.pi * step / config.max_steps))
                )
                for group in optimizer.param_groups:
                    group["lr"] = lr
            if step % config.eval_every == 0 or step == config.max_steps:
                filled = (step - 1) % config.eval_every + 1
                bar.update(filled)
                if checkpoint(step, filled):
                    stopped_early = True
                    break
                bar.set_postfix(validation=f"{rows['validation'][-1]:.3f}")
    critic.load_state_dict(best_state)
    return TrainingResult(
        steps_run=step,
        best_step=best_step,
        stopped_early=stopped_early,
        best_train=best_train,
        best_validation=best_validation,
        trace={k: np.asarray(v, dtype=float) for k, v in rows.items()},
    )
