"""The optimisers of an inversion, each usable on K stacked problems or on one.

All take ``step_fn(variables) -> (grads, (objective, matching))`` and a list of
variable tensors, and return the final variables:

* :func:`adam` -- a functional copy of ``torch.optim.Adam`` under ``MultiStepLR``
  (Geiping et al. 2020's schedule). Every operation is elementwise, so variables
  stacked along a leading dimension are K independent Adam runs at once.
* :func:`torch_lbfgs` -- ``torch.optim.LBFGS`` with its strong-Wolfe line search
  (DLG's optimiser); one problem at a time, since its line search is per problem.
* :func:`lbfgs_backtracking` -- our L-BFGS with an Armijo backtracking line search on N
  stacked problems: every trial step is one batched evaluation for all rows, so N runs
  cost about one run's number of evaluations. It also reaches a lower matching loss
  than torch's L-BFGS, which stops early on its change tolerance.

The stop rules are on the normalised L2 loss, a relative squared error: below a
relative gradient mismatch of ~1e-7, float32 round-off in ``(w - w_hat) / lr`` (a
relative error of about ``2**-24 |w| / (lr |g|)`` per coordinate), further steps only
chase noise.
"""

from __future__ import annotations

from collections import Counter

import torch

from sims.attacks.config import ADAM_BETAS, AttackConfig

# Adam's learning rate drops 10x at 3/8, 5/8 and 7/8 of the run (Geiping et al. 2020,
# reference implementation `inversefed`, scheduler of `GradientReconstructor`).
ADAM_MILESTONES = (3 / 8, 5 / 8, 7 / 8)
ADAM_GAMMA = 0.1
_ADAM_EPS = 1e-8
# L-BFGS stop rules (module docstring) and memory.
_LBFGS_TOLERANCE_GRAD = 1e-12
_LBFGS_TOLERANCE_CHANGE = 1e-14
_LBFGS_HISTORY = 100
# Backtracking line search: Armijo constant (Nocedal and Wright, Numerical Optimization,
# 2nd ed., Sec. 3.1, c1 = 1e-4), step halved at most this often.
_ARMIJO_C1 = 1e-4
_MAX_BACKTRACKS = 30
# Curvature pairs with s.y <= this * |s| |y| are not stored (keeps H positive definite;
# relative, so that tiny first steps still set the scale).
_MIN_CURVATURE = 1e-10


def adam(step_fn, variables: list[torch.Tensor], config: AttackConfig) -> list[torch.Tensor]:
    """``config.iterations`` Adam steps; returns the final variables (new tensors).

    Functional re-implementation of ``torch.optim.Adam`` (default betas (0.9, 0.999),
    eps 1e-8, single-tensor arithmetic, same operation order) under ``MultiStepLR``
    with the milestones :data:`ADAM_MILESTONES` and factor :data:`ADAM_GAMMA`; the tests
    check it against both. ``signed_gradients`` feeds ``sign(grad)``; ``box`` clamps
    the images (``variables[0]``) to [0, 1] after every step (Geiping et al.'s "boxed"
    option).
    """
    beta1, beta2 = ADAM_BETAS
    drops = Counter(int(config.iterations * f) for f in ADAM_MILESTONES)
    first = [torch.zeros_like(v) for v in variables]
    second = [torch.zeros_like(v) for v in variables]
    lr = config.lr
    for i in range(config.iterations):
        if i in drops:
            lr = lr * ADAM_GAMMA ** drops[i]
        grads, _ = step_fn(variables)
        bias_correction1 = 1 - beta1 ** (i + 1)
        bias_correction2_sqrt = (1 - beta2 ** (i + 1)) ** 0.5
        updated = []
        for j, (v, g) in enumerate(zip(variables, grads, strict=True)):
            g = g.sign() if config.signed_gradients else g
            first[j] = first[j].lerp(g, 1 - beta1)
            second[j] = second[j].mul(beta2).addcmul(g, g, value=1 - beta2)
            denom = (second[j].sqrt() / bias_correction2_sqrt).add(_ADAM_EPS)
            updated.append(v.addcdiv(first[j], denom, value=-lr / bias_correction1))
        if config.box:
            updated[0] = updated[0].clamp(0.0, 1.0)
        variables = updated
    return variables


def torch_lbfgs(step_fn, variables: list[torch.Tensor], config: AttackConfig) -> int:
    """``torch.optim.LBFGS`` (strong Wolfe) on ``variables`` (leaf tensors that require
    grad) in place; returns the iterations it ran."""
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


def lbfgs_backtracking(step_fn, variables: list[torch.Tensor], config: AttackConfig):
    """L-BFGS with a backtracking (Armijo) line search on N stacked problems at once.

    ``step_fn(variables) -> (grads, (objective, matching))`` on variables with a leading
    problem dimension N; returns ``(variables, iterations)`` (an int64 tensor (N,)).
    Every row is an independent L-BFGS run (history ``_LBFGS_HISTORY``, first step
    ``lr * min(1, 1 / ||g||_1)`` as in ``torch.optim.LBFGS``, then ``lr``; the step is
    halved until Armijo's condition holds, at most ``_MAX_BACKTRACKS`` times; a
    non-descent direction restarts that row's history). A row stops when its gradient's
    largest entry is below ``_LBFGS_TOLERANCE_GRAD``, its objective or step changes by
    less than ``_LBFGS_TOLERANCE_CHANGE``, or no step is accepted; finished rows are
    still evaluated (they do not move). With N = 1 (:func:`single_as_stacked`) this is
    the sequential reference of the batched attack.
    """
    count = variables[0].shape[0]
    shapes = [v.shape[1:] for v in variables]
    sizes = [v[0].numel() for v in variables]

    def unflatten(x):
        return [c.reshape(count, *s) for c, s in zip(x.split(sizes, 1), shapes, strict=True)]

    def evaluate(x):
        grads, (value, _) = step_fn(unflatten(x))
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
    return unflatten(x), iterations


def single_as_stacked(step_fn):
    """``step_fn`` of one problem as a step function of N = 1 stacked problems."""

    def stacked(variables):
        grads, (objective, matching) = step_fn([v[0] for v in variables])
        return [g.unsqueeze(0) for g in grads], (objective.reshape(1), matching.reshape(1))

    return stacked
