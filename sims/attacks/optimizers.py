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

from pruneleak.sims.attacks.config import AttackConfig
from pruneleak.sims.core.functional import ADAM_BETAS

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
# lbfgs_backtracking asks the device whether any row still runs once every this many
# evaluations (the only host synchronisation of its loop).
_CHECK_EVERY = 10
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


def _two_loop(g, history, done, bound: int):
    """``-H g`` by the L-BFGS two-loop recursion (Nocedal and Wright, Algorithm 7.4), row
    by row; ``history = (S, Y, rho, valid)`` is a ring per row, row ``n`` having written
    its pair of iteration ``i`` to slot ``i % slots`` after ``done[n]`` iterations.

    The rings are first ordered newest first (one gather per tensor); ``bound`` (a
    Python int, at least every ``done[n]``) caps the pairs visited. Pairs a row has not
    written, or that are invalid, contribute exactly nothing (no device sync).
    """
    s_hist, y_hist, rho, valid = history
    slots = s_hist.shape[1]
    order = (done[:, None] - 1 - torch.arange(slots, device=done.device)) % slots
    s_hist = s_hist.gather(1, order[..., None].expand_as(s_hist))
    y_hist = y_hist.gather(1, order[..., None].expand_as(y_hist))
    rho, valid = rho.gather(1, order), valid.gather(1, order)
    valid = valid & (torch.arange(slots, device=done.device) < done[:, None])
    used = range(min(bound, slots))
    q, alphas = -g, []
    for j in used:
        alpha = torch.where(valid[:, j], rho[:, j] * (s_hist[:, j] * q).sum(1), 0.0)
        q = q - alpha[:, None] * y_hist[:, j]
        alphas.append(alpha)
    gamma = torch.ones_like(rho[:, 0])
    for j in reversed(used):  # the newest valid pair of each row wins
        sy, yy = 1 / rho[:, j], (y_hist[:, j] * y_hist[:, j]).sum(1)
        gamma = torch.where(valid[:, j], sy / yy, gamma)
    r = gamma[:, None] * q
    for j, alpha in zip(reversed(used), reversed(alphas), strict=True):
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
    non-descent direction restarts that row's history). A row stops after
    ``config.iterations`` accepted steps, when its gradient's largest entry is below
    ``_LBFGS_TOLERANCE_GRAD``, its objective or step changes by less than
    ``_LBFGS_TOLERANCE_CHANGE``, or no step is accepted. With N = 1 this is the
    sequential reference of the batched attack.

    Every loop pass evaluates one trial point per row, and every decision is a
    ``torch.where`` on the device: a row whose trial is accepted takes the step, stores
    the curvature pair and computes its next direction, a rejected one halves its step,
    so rows in different phases of their line searches share each batched evaluation
    and nothing waits for the host. The only synchronisation is the test whether any
    row is still running, once every :data:`_CHECK_EVERY` passes (finished rows are
    still evaluated in between; they do not move). Each row takes the same steps as
    the classic nested loops would.
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
    rows = torch.arange(count, device=x.device)
    done = torch.zeros(count, dtype=torch.int64, device=x.device)  # accepted steps
    trials = torch.zeros(count, dtype=torch.int64, device=x.device)  # in this line search
    active = g.abs().amax(1) > _LBFGS_TOLERANCE_GRAD
    searching = torch.zeros(count, dtype=torch.bool, device=x.device)
    d, slope, t = torch.zeros_like(x), torch.zeros_like(f), torch.zeros_like(f)
    for step in range(config.iterations * _MAX_BACKTRACKS):
        if step % _CHECK_EVERY == 0 and not bool(active.any()):
            break
        # Rows that are not halfway through a line search start one from x.
        start = ~searching
        direction = _two_loop(g, history, done, min(step, slots))
        new_slope = (g * direction).sum(1)
        uphill = start & (new_slope >= 0)
        direction = torch.where(uphill[:, None], -g, direction)
        new_slope = torch.where(uphill, -(g * g).sum(1), new_slope)
        history[3].logical_and_(~uphill[:, None])
        first = config.lr * torch.clamp(1 / g.abs().sum(1), max=1.0)
        d = torch.where(start[:, None], direction, d)
        slope = torch.where(start, new_slope, slope)
        t = torch.where(start, torch.where(done == 0, first, config.lr), t)
        t = torch.where(active, t, 0.0)
        trials = torch.where(start, 0, trials) + 1
        trial = x + t[:, None] * d
        f_trial, g_trial = evaluate(trial)
        ok = active & torch.isfinite(f_trial) & (f_trial <= f + _ARMIJO_C1 * t * slope)
        # Accepted rows: store the curvature pair in their next ring slot and move.
        s, y = trial - x, g_trial - g
        sy = (s * y).sum(1)
        store = sy > _MIN_CURVATURE * (s * s).sum(1).sqrt() * (y * y).sum(1).sqrt()
        slot = done % slots
        history[0][rows, slot] = torch.where(
            ok[:, None], torch.where(store[:, None], s, 0.0), history[0][rows, slot]
        )
        history[1][rows, slot] = torch.where(
            ok[:, None], torch.where(store[:, None], y, 0.0), history[1][rows, slot]
        )
        history[2][rows, slot] = torch.where(
            ok, torch.where(store, 1 / torch.where(store, sy, 1.0), 1.0), history[2][rows, slot]
        )
        history[3][rows, slot] = torch.where(ok, store, history[3][rows, slot])
        done = done + ok.to(torch.int64)
        running = (
            (g_trial.abs().amax(1) > _LBFGS_TOLERANCE_GRAD)
            & ((f_trial - f).abs() > _LBFGS_TOLERANCE_CHANGE)
            & (s.abs().amax(1) > _LBFGS_TOLERANCE_CHANGE)
            & (done < config.iterations)
        )
        # Rejected rows halve their step, or stop after _MAX_BACKTRACKS trials.
        active = torch.where(ok, running, active & (trials < _MAX_BACKTRACKS))
        searching = active & ~ok
        t = torch.where(ok, t, t / 2)
        x = torch.where(ok[:, None], trial, x)
        f = torch.where(ok, f_trial, f)
        g = torch.where(ok[:, None], g_trial, g)
    return unflatten(x), done
