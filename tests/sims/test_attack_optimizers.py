"""The device-side backtracking L-BFGS, chunked batched attacks and single-scan validation.

sims.attacks.optimizers.lbfgs_backtracking runs every row's line search as torch.where
decisions, one trial per row per pass; the reference here is the textbook form with
Python branches (Nocedal and Wright, Numerical Optimization, 2nd ed., Algorithm 7.4 for
the direction, Sec. 3.1 for Armijo backtracking), one problem at a time, on quadratics
whose minimum is known in closed form.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from pruneleak.sims.attacks import (
    AttackConfig,
    invert_gradient_batched,
    optimizers,
    sgi_attack,
    sgi_attack_batched,
)
from pruneleak.sims.attacks.optimizers import lbfgs_backtracking
from pruneleak.sims.core.functional import batch_gradient
from pruneleak.sims.fl.client import client_update
from pruneleak.sims.pruning.mask import random_mask

CLIENT_LR = 0.25
ONE_DIGIT = {"lr": CLIENT_LR, "batch_shape": (1, 1, 8, 8), "num_classes": 10}


def _quadratics(count: int, dim: int, seed: int):
    """``f_n(x) = 0.5 x'A_n x - b_n'x`` with SPD ``A_n`` of condition number up to 1e3."""
    generator = torch.Generator().manual_seed(seed)
    matrices, vectors = [], []
    for n in range(count):
        q, _ = torch.linalg.qr(torch.randn(dim, dim, generator=generator, dtype=torch.float64))
        spectrum = torch.logspace(0, 1 + n, dim, dtype=torch.float64)  # condition 10^(1+n)
        matrices.append(q @ torch.diag(spectrum) @ q.T)
        vectors.append(torch.randn(dim, generator=generator, dtype=torch.float64))
    return torch.stack(matrices), torch.stack(vectors)


def _step_fn(matrices, vectors):
    def step_fn(variables):
        (x,) = variables
        ax = torch.einsum("nij,nj->ni", matrices, x)
        value = 0.5 * (x * ax).sum(1) - (vectors * x).sum(1)
        return [ax - vectors], (value, value)

    return step_fn


def _slow_lbfgs(fun, x, config):
    """One problem, Python branches, the classic nested loops; returns (x, iterations)."""
    history, done = [], 0
    f, g = fun(x)
    if g.abs().max() <= optimizers._LBFGS_TOLERANCE_GRAD:
        return x, 0
    for it in range(config.iterations):
        q, alphas = -g, []
        for s, y, rho in reversed(history):
            alpha = rho * (s @ q)
            q = q - alpha * y
            alphas.append(alpha)
        gamma = (1 / history[-1][2]) / (history[-1][1] @ history[-1][1]) if history else 1.0
        r = gamma * q
        for (s, y, rho), alpha in zip(history, reversed(alphas), strict=True):
            r = r + s * (alpha - rho * (y @ r))
        d, slope = r, g @ r
        if slope >= 0:
            d, slope, history = -g, -(g @ g), []
        t = config.lr * min(1.0, 1 / float(g.abs().sum())) if it == 0 else config.lr
        for _ in range(optimizers._MAX_BACKTRACKS):
            trial = x + t * d
            f_trial, g_trial = fun(trial)
            if torch.isfinite(f_trial) and f_trial <= f + optimizers._ARMIJO_C1 * t * slope:
                break
            t = t / 2
        else:
            return x, done
        s, y = trial - x, g_trial - g
        if s @ y > optimizers._MIN_CURVATURE * s.norm() * y.norm():
            history = [*history, (s, y, 1 / (s @ y))][-optimizers._LBFGS_HISTORY :]
        done += 1
        tol = optimizers._LBFGS_TOLERANCE_CHANGE
        stop = (
            g_trial.abs().max() <= optimizers._LBFGS_TOLERANCE_GRAD
            or (f_trial - f).abs() <= tol
            or s.abs().max() <= tol
        )
        x, f, g = trial, f_trial, g_trial
        if stop:
            break
    return x, done


@pytest.mark.parametrize(("iterations", "lr"), [(3, 1.0), (40, 1.0), (40, 4.0)])
def test_device_side_lbfgs_equals_the_textbook_loop_on_quadratics(iterations, lr):
    """Four rows of different conditioning, run together, each equal to its own
    textbook run to float64 round-off. The two differ only in summation order (row sums
    of stacked tensors against vector dots), about 1e-16 relative per operation, which
    condition numbers up to 1e4 amplify over 40 iterations (measured up to 9e-10); atol
    1e-8 leaves a 10x margin and is far below an algorithmic difference (one backtrack
    more or less moves x by ~1e-1). The step counts agree to one: a converged row stops
    when f changes by <= 1e-14, a test at the round-off of f (measured: 36 against 37
    steps for one row). lr = 4 makes the first trials fail Armijo, so rows backtrack
    different numbers of times in the same passes.
    """
    matrices, vectors = _quadratics(4, 6, seed=0)
    config = AttackConfig(optimizer="lbfgs_backtracking", iterations=iterations, lr=lr)
    start = torch.randn(4, 6, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    (x,), done = lbfgs_backtracking(_step_fn(matrices, vectors), [start.clone()], config)
    for n in range(4):

        def fun(v, n=n):
            grads, (value, _) = _step_fn(matrices[n : n + 1], vectors[n : n + 1])([v[None]])
            return value[0], grads[0][0]

        expected, steps = _slow_lbfgs(fun, start[n].clone(), config)
        torch.testing.assert_close(x[n], expected, rtol=0, atol=1e-8)
        assert abs(int(done[n]) - steps) <= 1


def test_device_side_lbfgs_reaches_the_closed_form_minimum():
    """x* = A^-1 b; 60 iterations on 6 dimensions converge to round-off (atol 1e-8)."""
    matrices, vectors = _quadratics(3, 6, seed=2)
    config = AttackConfig(optimizer="lbfgs_backtracking", iterations=60, lr=1.0)
    (x,), done = lbfgs_backtracking(
        _step_fn(matrices, vectors), [torch.zeros(3, 6, dtype=torch.float64)], config
    )
    torch.testing.assert_close(x, torch.linalg.solve(matrices, vectors), rtol=0, atol=1e-8)
    assert bool((done < 60).all())  # stopped on a tolerance, not on the iteration cap


# --------------------------------------------------------------------------- chunks


def test_chunked_batched_attacks_equal_one_chunk(model, weights, digits):
    """K = 5 attacks in chunks of 2 (2 + 2 + 1) equal one stacked chunk of 5, and a
    chunk of 1 (the sequential path) equals sgi_attack. Tolerance atol 1e-4 as in
    test_batched_attacks (batched kernels round differently with another batch size)."""
    mask = random_mask(weights, 0.5, seed=1)
    x, y = digits.images[:5], digits.labels[:5]
    sent = [
        client_update(model, weights, mask, x[k : k + 1], y[k : k + 1], lr=CLIENT_LR)
        for k in range(5)
    ]
    labels = [y[k : k + 1] for k in range(5)]
    config = AttackConfig(loss="l2", optimizer="adam", lr=0.1, iterations=30)
    kwargs = {**ONE_DIGIT, "labels": labels, "config": config, "seeds": list(range(5))}
    whole = sgi_attack_batched(model, weights, sent, chunk=5, **kwargs)
    for chunk in (1, 2):
        parts = sgi_attack_batched(model, weights, sent, chunk=chunk, **kwargs)
        for a, b in zip(parts, whole, strict=True):
            torch.testing.assert_close(a.images, b.images, rtol=0, atol=1e-4)
            assert torch.equal(a.labels, b.labels)
    single = sgi_attack(
        model, weights, sent[3], labels=labels[3], config=replace(config, seed=3), **ONE_DIGIT
    )
    one = sgi_attack_batched(model, weights, sent, chunk=1, **kwargs)[3]
    assert torch.equal(one.images, single.images) and one.loss == single.loss


def test_chunk_must_be_a_positive_int(model, weights, digits):
    g = batch_gradient(model, weights, digits.images[:1], digits.labels[:1])
    with pytest.raises(ValueError, match="'chunk' parameter of invert_gradient_batched"):
        invert_gradient_batched(
            model,
            weights,
            [g],
            **{k: v for k, v in ONE_DIGIT.items() if k != "lr"},
            labels=[digits.labels[:1]],
            config=AttackConfig(optimizer="adam"),
            chunk=0,
        )


# --------------------------------------------------------------------------- validation


def _nan_in_last(params):
    bad = dict(params)
    last = list(bad)[-1]
    bad[last] = bad[last].clone()
    bad[last].view(-1)[-1] = float("nan")
    return bad, last


@pytest.mark.parametrize("which", ["global_params", "sent_params"])
@pytest.mark.parametrize("batched", [False, True])
def test_attacks_name_the_non_finite_input(model, weights, digits, which, batched):
    """A NaN in the last entry of the last tensor (the one a partial scan would miss)
    is refused, naming the parameter and the tensor."""
    x, y = digits.images[:1], digits.labels[:1]
    sent = client_update(model, weights, random_mask(weights, 0.3, seed=0), x, y, lr=CLIENT_LR)
    inputs = {"global_params": weights, "sent_params": sent}
    inputs[which], key = _nan_in_last(inputs[which])
    config = AttackConfig.dlg(optimizer="adam", lr=0.1, iterations=1)
    if batched:
        inputs["sent_params"] = [inputs["sent_params"]]
        name = which if which == "global_params" else r"sent_params\[0\]"
        with pytest.raises(ValueError, match=rf"'{name}' parameter.*finite.*'{key}'"):
            sgi_attack_batched(model, **inputs, labels=[y], config=config, **ONE_DIGIT)
    else:
        with pytest.raises(ValueError, match=rf"'{which}' parameter.*finite.*'{key}'"):
            sgi_attack(model, **inputs, labels=y, config=config, **ONE_DIGIT)


@pytest.mark.parametrize("batched", [False, True])
def test_an_attack_scans_each_input_once(model, weights, digits, monkeypatch, batched):
    """The finiteness scan (one aminmax per tensor) runs once per tensor of the
    broadcast weights and once per tensor of each upload; the shared weights of a
    batched attack once in all. Before, the attack re-scanned its inputs seven times."""
    x, y = digits.images[:2], digits.labels[:2]
    mask = random_mask(weights, 0.3, seed=0)
    sent = [
        client_update(model, weights, mask, x[k : k + 1], y[k : k + 1], lr=CLIENT_LR)
        for k in range(2)
    ]
    calls = []
    aminmax = torch.aminmax
    monkeypatch.setattr(torch, "aminmax", lambda t, **kw: calls.append(t.shape) or aminmax(t, **kw))
    config = AttackConfig.dlg(optimizer="adam", lr=0.1, iterations=1)
    if batched:
        sgi_attack_batched(model, weights, sent, labels=[y[:1], y[1:]], config=config, **ONE_DIGIT)
        assert len(calls) == 3 * len(weights)
    else:
        sgi_attack(model, weights, sent[0], labels=y[:1], config=config, **ONE_DIGIT)
        assert len(calls) == 2 * len(weights)
