"""Gradient inversion: find a batch whose gradient matches a target gradient.

:func:`invert_gradient` solves one problem: starting from ``N(0, 1)`` images it
minimises the matching objective of :mod:`sims.attacks.objectives` with an optimiser
of :mod:`sims.attacks.optimizers`, over ``config.restarts`` starts, and returns the
best point any start evaluated (:class:`BestIterate`: the lowest matching loss, not
the last iterate). SGI and GI (:mod:`sims.attacks.attack`) both
end here; they differ only in the mask they pass.

:func:`invert_gradient_batched` runs K independent inversions (targets, masks, seeds,
restarts) as one computation: the problems are stacked as the rows of one objective
(:func:`sims.attacks.objectives.attack_objective`), and inputs equal across attacks are
passed once (an expanded view). Two optimisers batch: Adam (elementwise, so K runs at
once are K runs) and ``"lbfgs_backtracking"`` (every trial point one batched evaluation
for all rows). torch's strong-Wolfe ``"lbfgs"`` runs one attack at a time. The
sequential reference of a batched run is :func:`invert_gradient` with the same
optimiser and seed: the same objective on one row, which differs only in how the dummy
gradients are computed (:func:`sims.attacks.objectives.single_gradient`, a plain
forward of the model, against :func:`sims.attacks.objectives.stacked_gradient`,
batched per-layer products or ``torch.func.vmap``), so the two differ only by the
round-off of the batched kernels, which sign-based Adam and L-BFGS's accept/reject
decisions can amplify into a different trajectory
(``tests/sims/test_batched_attacks.py`` states the tolerances).

On a CPU batching costs more than it saves once the K stacked per-attack weight
gradients outgrow glibc's largest heap block
(:data:`sims.core.runtime.MMAP_THRESHOLD_BYTES`: the threshold of a process tuned by
:func:`sims.core.runtime.tune_process_heap`, as the command line and the Ray workers
are, and the most glibc's dynamic threshold rises to elsewhere): every step then maps
and page-faults them afresh, while K sequential runs reuse their blocks. The cosine loss
of one local step never forms a linear layer's per-attack gradient
(:class:`sims.attacks.objectives.OuterProducts`), so there only the other layers count
(a convolution's gradient is small); otherwise :func:`invert_gradient_batched` splits
the attacks into chunks whose largest stacked tensor fits such a block and runs a
chunk of one as the sequential attack. On a GPU (whose caching allocator reuses
blocks) all attacks form one chunk (``benchmarks/bench_attacks.py`` measures both sides
on a small and a large model). A model whose ``vmap`` second derivatives are wrong
(:func:`vmap_differentiates`) runs its attacks one at a time as well.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Collection, Mapping, Sequence

import torch
from torch import nn

from pruneleak.bounds.validation import check_int
from pruneleak.estimators.device import resolve_device
from pruneleak.sims.attacks.checks import (
    check_batch_shape,
    check_config,
    check_input_channels,
    check_local_steps,
    check_num_classes,
    check_param_dict,
    check_param_dicts,
    check_sequence,
    per_attack,
)
from pruneleak.sims.attacks.config import AttackConfig, AttackResult
from pruneleak.sims.attacks.objectives import (
    attack_objective,
    factored_matching,
    grad_and_value,
    linear_weights,
    single_gradient,
    stacked_gradient,
)
from pruneleak.sims.attacks.optimizers import adam, lbfgs_backtracking, torch_lbfgs
from pruneleak.sims.attacks.problem import (
    InversionProblem,
    attack_result,
    initial_variables,
    prepare_problem,
)
from pruneleak.sims.core.runtime import MMAP_THRESHOLD_BYTES
from pruneleak.sims.pruning.mask import Mask

logger = logging.getLogger(__name__)


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

    ``model`` supplies only the architecture: the dummy gradient is the gradient of
    ``cross_entropy(functional_call(model, params, x), y)`` with respect to ``params``,
    and the matching loss of ``config.loss`` is differentiated once more with respect to
    the images (and label logits with ``label_mode="optimize"``). ``batch_shape`` is
    ``(B, C, H, W)``; ``num_classes`` >= 2; ``labels`` (int, shape ``(B,)``) only with
    ``label_mode="known"``. With ``mask`` both gradients are restricted to the kept
    coordinates (SGI); without, all coordinates count (GI). Images start from
    ``N(0, 1)`` (PriPrune Alg. 2 line 5; Geiping et al.) drawn with ``config.seed``; all
    ``B`` images are solved jointly, in the floating type of ``params`` (float64
    weights: a float64 attack). Returns the point with the lowest matching loss that any
    restart evaluated (:class:`BestIterate`), not a restart's last iterate.

    With ``local_steps > 1`` the target is the sum of the gradients along the client's
    ``local_steps`` full-batch steps with learning rate ``client_lr`` (> 0; what
    ``(w - w_hat) / client_lr`` reveals after FedSGD with several local epochs on one
    batch) and the dummy data replay those steps from ``params`` (Geiping et al. 2020,
    Section 5, "multiple local updates"). Minibatched FedAvg is not modelled.

    :func:`invert_gradient_batched` runs K such inversions as one computation.
    """
    func = "invert_gradient"
    return invert_checked(
        model,
        check_param_dict("params", params, func=func, model=model),
        check_param_dict("target_grad", target_grad, func=func),
        batch_shape=batch_shape,
        num_classes=num_classes,
        labels=labels,
        mask=mask,
        config=config,
        local_steps=local_steps,
        client_lr=client_lr,
        func=func,
    )


def invert_checked(
    model: nn.Module,
    params: dict[str, torch.Tensor],
    target_grad: dict[str, torch.Tensor],
    *,
    batch_shape,
    num_classes,
    labels,
    mask: Mask | None,
    config,
    local_steps,
    client_lr,
    func: str,
) -> AttackResult:
    """:func:`invert_gradient` of ``params`` and ``target_grad`` that
    :func:`sims.attacks.checks.check_param_dict` already returned (the attack of
    :mod:`sims.attacks.attack` checks its inputs once and derives these from them);
    every other argument is checked here."""
    config = check_config(config, func=func)
    num_classes = check_num_classes(model, num_classes, func=func)
    batch_shape = check_batch_shape(model, batch_shape, func=func)
    check_input_channels(config, batch_shape, func=func)
    local_steps, client_lr = check_local_steps(local_steps, client_lr, func=func)
    problem = prepare_problem(
        params,
        target_grad,
        batch_shape=batch_shape,
        num_classes=num_classes,
        labels=labels,
        mask=mask,
        config=config,
        device=resolve_device(config.device),
        func=func,
    )
    steps = {"local_steps": local_steps, "client_lr": client_lr}
    return _solve(model, problem, batch_shape, num_classes, config, steps, config.seed, func)


def _solve(
    model, problem: InversionProblem, batch_shape, num_classes, config, steps, seed: int, func
) -> AttackResult:
    """One attack, its restarts one after the other, as one row (module docstring): the
    best restart as an :class:`AttackResult`. ``steps`` holds ``local_steps`` and
    ``client_lr``."""
    args = _rows([problem.arguments()], 1)
    dummy_gradient = single_gradient(model, problem.point)
    if factored_matching(config, steps["local_steps"]):
        dummy_gradient = stacked_gradient(model, args[0], fallback=dummy_gradient)
    objective = attack_objective(dummy_gradient, config, **steps)
    gradient_and_value = grad_and_value(objective)

    def step_fn(variables):
        return gradient_and_value(variables, *args)

    generator = torch.Generator().manual_seed(seed)
    best = None
    for restart in range(config.restarts):
        variables = initial_variables(generator, batch_shape, num_classes, config)
        variables = [v.to(problem.onehot.device, problem.onehot.dtype)[None] for v in variables]
        tolerance = matching_tolerance(config.loss, problem.onehot.dtype)
        tracked = BestIterate(step_fn, tolerance=tolerance)
        if config.optimizer == "lbfgs":
            variables = [v.requires_grad_(True) for v in variables]
            iterations = torch_lbfgs(tracked, variables, config)
            variables = [v.detach() for v in variables]
        elif config.optimizer == "lbfgs_backtracking":
            variables, done = lbfgs_backtracking(tracked, variables, config)
            iterations = int(done[0])
        else:
            variables = adam(tracked, variables, config)
            iterations = config.iterations
        tracked.record(variables, objective(variables, *args)[1].detach())
        loss = float(tracked.loss[0])
        logger.debug(
            "restart %d: best matching loss %.3e in %d iterations", restart, loss, iterations
        )
        if best is None or loss < best[0]:
            best = (loss, iterations, tracked.variables)
    loss, iterations, variables = best
    if not math.isfinite(loss):
        raise _diverged(func, loss, config)
    return attack_result(variables[0][0], variables[-1][0], problem, loss, iterations, config)


class BestIterate:
    """An optimiser's ``step_fn`` that also keeps, per row, the evaluated point with the
    lowest matching loss (TV excluded; a non-finite loss counts as ``inf``), up to the
    loss's rounding: ``tolerance``.

    Gradient descent on a non-convex matching loss need not end at its best point
    (signed Adam oscillates, a learning rate too large makes the loss rise), so the
    attack returns the best point it evaluated, as Geiping et al.'s ``breaching`` library
    keeps its best candidate (which it ranks by the whole objective, regulariser
    included; here the matching loss alone ranks points, as it ranks restarts, so
    that the TV weight does not decide which reconstruction is returned). A point
    whose loss is non-finite is never kept over a finite one, so a run that diverges
    after a finite start returns its best finite point. The optimisers are left as they
    are: every point they evaluate passes through here, iterates and line-search trials
    alike (each is a point the attacker computed a loss for), and :meth:`record` takes
    the final point, which Adam never evaluates.

    Losses closer than the arithmetic resolves are not ranked: a point is kept when its
    loss is at most the lowest seen so far plus ``tolerance``, so among such points the
    latest, the optimiser's most refined, wins. Near a match the cosine distance
    ``1 - cos`` is the difference of two numbers near 1 and moves on a grid of about
    one ulp of 1 (6e-8 in float32), while the image still improves; ranking on that
    grid returns an early iterate (:func:`matching_tolerance` gives the band). The
    lowest loss is kept beside the chosen point's, so a slow upward drift within the
    band cannot carry the choice away from the minimum. The choice is a
    ``torch.where`` per row on the device, with no host synchronisation.
    ``variables`` and ``loss`` are ``None`` before the first evaluation, then the chosen
    points and their losses ``(N,)``.
    """

    def __init__(self, step_fn, *, tolerance: float = 0.0) -> None:
        self._step_fn = step_fn
        self._tolerance = tolerance
        self._lowest: torch.Tensor | None = None
        self.variables: list[torch.Tensor] | None = None
        self.loss: torch.Tensor | None = None

    def __call__(self, variables):
        grads, (value, matching) = self._step_fn(variables)
        self.record(variables, matching)
        return grads, (value, matching)

    def record(self, variables: list[torch.Tensor], matching: torch.Tensor) -> None:
        """Keep the rows of ``variables`` whose ``matching`` loss is within ``tolerance``
        of the lowest so far, this one included (a non-finite loss never replaces a
        finite one)."""
        score = torch.where(torch.isfinite(matching), matching.detach(), math.inf)
        if self.loss is None:
            self.variables = [v.detach().clone() for v in variables]
            self.loss = self._lowest = score
            return
        self._lowest = torch.minimum(self._lowest, score)
        keep = score <= self._lowest + self._tolerance
        self.variables = [
            torch.where(keep.reshape(-1, *[1] * (v.dim() - 1)), v.detach(), b)
            for v, b in zip(variables, self.variables, strict=True)
        ]
        self.loss = torch.where(keep, score, self.loss)


#: Ulps of 1 within which two cosine distances count as equal (:class:`BestIterate`):
#: ``1 - cos`` carries the rounding of the three sums behind ``cos``, a few ulps; on
#: Conv-2 near a match successive iterates move within 2.5 ulps of each other.
COSINE_TIE_ULPS = 4


def matching_tolerance(loss: str, dtype: torch.dtype) -> float:
    """The band of :class:`BestIterate` for the matching ``loss`` computed in ``dtype``:
    ``COSINE_TIE_ULPS`` ulps of 1 for ``"cosine_tv"``, whose value is ``1 - cos``; 0
    for ``"l2"``, a sum of squared differences formed directly, accurate relative to its
    own size down to 0."""
    return COSINE_TIE_ULPS * torch.finfo(dtype).eps if loss == "cosine_tv" else 0.0


def _diverged(func: str, loss: float, config) -> ValueError:
    """The error for an attack none of whose restarts evaluated a point with a finite
    matching loss (:class:`BestIterate` then reports ``inf``): its reconstruction would
    be NaN, scored as if it were an image."""
    return ValueError(
        f"{func}: every one of the {config.restarts} restarts diverged (matching loss "
        f"{loss}); lower the attack's 'lr' (AttackConfig.lr, got {config.lr:g}) or change "
        f"its optimizer ({config.optimizer!r}), and check the client 'lr' the update is "
        "read with (a tiny one makes the target gradient (w - w_hat) / lr overflow)."
    )


def _rows(arguments: list[tuple], repeat: int) -> tuple:
    """The objective's arguments of N = ``len(arguments) * repeat`` rows (row ``k * repeat
    + r`` is repetition ``r`` of problem ``k``) from the problems' own ``arguments``:
    each value (tensor, dict of tensors or None) stacked along a new dim 0, or, when it
    is the same for every problem, the first one expanded to N rows (a view, no copy)."""
    rows = len(arguments) * repeat
    return tuple(
        _row_value([a[i] for a in arguments], repeat, rows) for i in range(len(arguments[0]))
    )


def _row_value(items: list, repeat: int, rows: int):
    first = items[0]
    if first is None:
        return None
    if isinstance(first, dict):
        return {n: _row_value([item[n] for item in items], repeat, rows) for n in first}
    if all(item is first or torch.equal(first, item) for item in items[1:]):
        return first.expand(rows, *first.shape)
    return torch.stack(items).repeat_interleave(repeat, dim=0)


def vmap_differentiates(model: nn.Module) -> bool:
    """Whether ``torch.func.vmap(grad(...))`` of ``model`` is differentiable once more with
    respect to its inputs. Not with an affine ``nn.LayerNorm``: the batching rule of its
    backward gets the second derivative wrong (torch 2.13; pytorch/functorch#534; relative
    error up to 0.8 in ``tests/sims/test_attack_objectives.py``), so batched attacks on
    such a model run one at a time."""
    return not any(isinstance(m, nn.LayerNorm) and m.elementwise_affine for m in model.modules())


def chunk_size(
    point: Mapping[str, torch.Tensor],
    rows_per_attack: int,
    count: int,
    *,
    unformed: Collection[str] = (),
) -> int:
    """How many attacks :func:`invert_gradient_batched` stacks at once (module docstring).

    On a CPU: the most attacks whose stacked per-attack gradients of the largest weight
    tensor (``rows_per_attack`` = restarts rows each) fit one heap block of
    :data:`sims.core.runtime.MMAP_THRESHOLD_BYTES`, at least 1 (1 runs the attacks one
    after the other); the tensors ``unformed`` (linear weights matched through their
    factors, :func:`sims.attacks.objectives.factored_matching`) have no per-attack
    gradient and do not count. Elsewhere all ``count`` attacks.
    """
    if next(iter(point.values())).device.type != "cpu":
        return count
    sizes = [t.numel() * t.element_size() for n, t in point.items() if n not in unformed]
    largest = max(sizes, default=0) * rows_per_attack
    return count if largest == 0 else max(1, min(count, MMAP_THRESHOLD_BYTES // largest))


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
    chunk: int | None = None,
) -> list[AttackResult]:
    """K independent :func:`invert_gradient` runs as one batched computation.

    Attack ``k`` inverts ``target_grads[k]`` at ``params`` (one dict shared by every
    attack, or one per attack) under ``masks`` (None, one shared mask, or one per
    attack) with ``labels[k]``, starting from the initialisation ``invert_gradient``
    draws with ``seed = seeds[k]`` (default ``config.seed`` for every attack).
    ``batch_shape``, ``num_classes``, ``local_steps`` and ``client_lr`` are as in
    :func:`invert_gradient` and shared by all attacks. The ``K x restarts`` problems are
    stacked as the rows of one objective (module docstring), ``chunk`` attacks at a time
    (>= 1; default :func:`chunk_size`, see the module docstring); a chunk of one attack
    runs as :func:`invert_gradient` does.

    ``config.optimizer`` must be ``"adam"`` (elementwise: K runs at once are K runs) or
    ``"lbfgs_backtracking"`` (rows independent, trial points evaluated together);
    torch's strong-Wolfe ``"lbfgs"`` is not batched, use :func:`invert_gradient`. The
    only difference from K sequential runs is the float round-off of the batched
    kernels (see the tests for the tolerance).

    Returns one :class:`AttackResult` per attack, in order, each its best restart.
    """
    func = "invert_gradient_batched"
    count = check_sequence("target_grads", target_grads, func=func, what="gradient dicts")
    params = per_attack("params", params, count, func=func, single=Mapping)
    return invert_checked_batched(
        model,
        check_param_dicts("params", params, func=func, model=model),
        [check_param_dict(f"target_grads[{k}]", t, func=func) for k, t in enumerate(target_grads)],
        batch_shape=batch_shape,
        num_classes=num_classes,
        labels=labels,
        masks=masks,
        config=config,
        seeds=seeds,
        local_steps=local_steps,
        client_lr=client_lr,
        chunk=chunk,
        func=func,
    )


def invert_checked_batched(
    model: nn.Module,
    params: list[dict[str, torch.Tensor]],
    target_grads: list[dict[str, torch.Tensor]],
    *,
    batch_shape,
    num_classes,
    labels,
    masks,
    config,
    seeds,
    local_steps,
    client_lr,
    chunk: int | None,
    func: str,
) -> list[AttackResult]:
    """:func:`invert_gradient_batched` of K ``params`` and ``target_grads`` (lists) that
    :func:`sims.attacks.checks.check_param_dict` already returned; every other argument
    is checked here."""
    config = check_config(config, func=func)
    if config.optimizer == "lbfgs":
        raise ValueError(
            f"The 'config.optimizer' parameter of {func} must be 'adam' or "
            f"'lbfgs_backtracking' (torch's strong-Wolfe L-BFGS is not batched; use "
            f"invert_gradient). Got 'lbfgs' instead."
        )
    count = len(target_grads)
    num_classes = check_num_classes(model, num_classes, func=func)
    batch_shape = check_batch_shape(model, batch_shape, func=func)
    check_input_channels(config, batch_shape, func=func)
    local_steps, client_lr = check_local_steps(local_steps, client_lr, func=func)
    if chunk is not None:
        chunk = check_int("chunk", chunk, func=func, low=1)
    masks = per_attack("masks", masks, count, func=func, single=Mask)
    labels = per_attack("labels", labels, count, func=func, single=torch.Tensor)
    seeds = per_attack(
        "seeds", config.seed if seeds is None else seeds, count, func=func, single=int
    )
    seeds = [check_int("seeds", s, func=func, low=0) for s in seeds]
    device = resolve_device(config.device)
    problems = [
        prepare_problem(
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
    if chunk is None:
        factored = factored_matching(config, local_steps)
        unformed = linear_weights(model) if factored else ()
        chunk = chunk_size(problems[0].point, config.restarts, count, unformed=unformed)
    if chunk > 1 and not vmap_differentiates(model):
        logger.info("%s: the model has an affine LayerNorm; attacks run one at a time", func)
        chunk = 1
    shape = (batch_shape, num_classes, config)
    steps = {"local_steps": local_steps, "client_lr": client_lr}
    if chunk == 1:
        return [
            _solve(model, p, *shape, steps, seed, f"{func} (attack {k})")
            for k, (p, seed) in enumerate(zip(problems, seeds, strict=True))
        ]
    if any(p.keep is None for p in problems) and any(p.keep is not None for p in problems):
        # The rows share one structure: an unmasked attack keeps every coordinate.
        for p in problems:
            if p.keep is None:
                p.keep = torch.ones_like(p.target)
    results = []
    for start in range(0, count, chunk):
        results += _solve_stacked(
            model,
            steps,
            problems[start : start + chunk],
            seeds[start : start + chunk],
            *shape,
            first=start,
            func=func,
        )
    return results


def _solve_stacked(
    model, steps, problems, seeds, batch_shape, num_classes, config, *, first: int, func: str
) -> list[AttackResult]:
    """The attacks ``problems`` (numbered from ``first`` in errors), their restarts as
    rows, as one computation: one :class:`AttackResult` per attack. ``steps`` holds
    ``local_steps`` and ``client_lr``."""
    count, restarts = len(problems), config.restarts
    args = _rows([p.arguments() for p in problems], restarts)
    objective = attack_objective(stacked_gradient(model, args[0]), config, **steps)
    gradient_and_value = grad_and_value(objective)
    initial = []
    for seed in seeds:
        generator = torch.Generator().manual_seed(seed)
        initial += [
            initial_variables(generator, batch_shape, num_classes, config) for _ in range(restarts)
        ]
    onehot = problems[0].onehot
    variables = [
        torch.stack([v[j] for v in initial]).to(onehot.device, onehot.dtype)
        for j in range(len(initial[0]))
    ]

    def step_fn(v):
        return gradient_and_value(v, *args)

    tracked = BestIterate(step_fn, tolerance=matching_tolerance(config.loss, onehot.dtype))
    if config.optimizer == "adam":
        variables = adam(tracked, variables, config)
        done = torch.full((count * restarts,), config.iterations)
    else:
        variables, done = lbfgs_backtracking(tracked, variables, config)
    tracked.record(variables, objective(variables, *args)[1].detach())
    best_loss = tracked.loss.reshape(count, restarts)
    variables = [v.reshape(count, restarts, *v.shape[1:]) for v in tracked.variables]
    done = done.reshape(count, restarts).cpu()
    best = best_loss.argmin(dim=1)
    best_loss, best = best_loss.cpu(), best.cpu()
    results = []
    for k, problem in enumerate(problems):
        r = int(best[k])
        loss = float(best_loss[k, r])
        if not math.isfinite(loss):
            raise _diverged(f"{func} (attack {first + k})", loss, config)
        results.append(
            attack_result(
                variables[0][k, r], variables[-1][k, r], problem, loss, int(done[k, r]), config
            )
        )
    return results
