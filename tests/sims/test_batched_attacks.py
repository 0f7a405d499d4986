"""Batched gradient inversions (sims.attacks.*_batched) against their sequential reference.

The reference for a batched run is the same optimiser run one attack at a time by
sims.attacks.invert_gradient / sgi_attack / gi_attack with the same seed. The functional
Adam both share is itself checked against torch.optim.Adam + MultiStepLR.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from pruneleak.estimators.image import psnr
from pruneleak.sims.attacks import (
    AttackConfig,
    gi_attack,
    gi_attack_batched,
    invert_gradient,
    invert_gradient_batched,
    sgi_attack,
    sgi_attack_batched,
)
from pruneleak.sims.attacks.optimizers import ADAM_GAMMA, ADAM_MILESTONES, adam
from pruneleak.sims.core.functional import batch_gradient
from pruneleak.sims.fl.client import client_update
from pruneleak.sims.pruning.mask import random_mask

CLIENT_LR = 0.25  # PriPrune's client learning rate (arXiv:2310.19958)
ONE_DIGIT = {"lr": CLIENT_LR, "batch_shape": (1, 1, 8, 8), "num_classes": 10}
# Squared-L2 matching with plain (unsigned) Adam: "DLG with Adam", the smooth batched attack.
L2_ADAM = AttackConfig(loss="l2", optimizer="adam", lr=0.1, iterations=100)


def _uploads(model, weights, digits, count, *, p=0.5, local_steps=1, start=0):
    """One-image FedSGD uploads of digits start..start+count under one random mask."""
    mask = random_mask(weights, p, seed=1)
    rows = range(start, start + count)
    sent = [
        client_update(
            model,
            weights,
            mask,
            digits.images[i : i + 1],
            digits.labels[i : i + 1],
            lr=CLIENT_LR,
            local_steps=local_steps,
        )
        for i in rows
    ]
    return sent, [digits.labels[i : i + 1] for i in rows]


def _max_pixel_difference(a, b):
    return max(float((x.images - y.images).abs().max()) for x, y in zip(a, b, strict=True))


# --------------------------------------------------------------------------- functional Adam


@pytest.mark.parametrize("signed", [False, True])
@pytest.mark.parametrize("iterations", [2, 16])
def test_functional_adam_is_torch_adam_with_multistep_schedule(signed, iterations):
    """Bit for bit: same arithmetic as torch.optim.Adam's single-tensor path on CPU, and
    the same learning rates as MultiStepLR (including a milestone at step 0 when
    iterations = 2, where int(2 * 3/8) = 0)."""
    generator = torch.Generator().manual_seed(0)
    a = torch.randn(5, 3, generator=generator)
    start = [torch.randn(5, 3, generator=generator), torch.randn(4, generator=generator)]
    config = AttackConfig(optimizer="adam", iterations=iterations, lr=0.3, signed_gradients=signed)

    def step_fn(variables):
        x, y = variables
        return [2 * a * (a * x - 1), torch.cos(y)], None

    ours = adam(step_fn, [v.clone() for v in start], config)

    reference = [v.clone().requires_grad_(True) for v in start]
    optimizer = torch.optim.Adam(reference, lr=config.lr)
    milestones = [int(iterations * f) for f in ADAM_MILESTONES]
    schedule = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones, gamma=ADAM_GAMMA)
    for _ in range(iterations):
        grads, _ = step_fn([v.detach() for v in reference])
        for v, g in zip(reference, grads, strict=True):
            v.grad = g.sign() if signed else g
        optimizer.step()
        schedule.step()
    for x, y in zip(ours, reference, strict=True):
        torch.testing.assert_close(x, y.detach(), rtol=0, atol=0)


# --------------------------------------------------------------------------- acceptance


def test_sixteen_batched_attacks_equal_sixteen_sequential_ones(model, weights, digits):
    """Acceptance: K = 16 SGI attacks (16 targets, p = 0.5, seeds 0..15), 100 Adam steps,
    batched, equal the 16 sequential runs (speed: benchmarks/bench_attacks.py).

    Tolerance: the batched kernels (conv with a batch of 16, bmm for the per-attack
    weight gradients) round differently from the single-attack ones, by ~1e-7 relative
    per evaluation. Adam divides by sqrt(v), so for a pixel whose gradient stays near
    zero the step acts like sign(g) and a rounding difference can grow. Measured max
    pixel difference per attack after 100 steps: 5e-7 to 3e-6 for 15 of the 16, 2.6e-5
    for one; atol 1e-4 leaves a 4x margin and is 40x below one 8-bit grey level.
    """
    sent, labels = _uploads(model, weights, digits, 16)
    reference = [
        sgi_attack(model, weights, s, **ONE_DIGIT, labels=y, config=replace(L2_ADAM, seed=k))
        for k, (s, y) in enumerate(zip(sent, labels, strict=True))
    ]
    results = sgi_attack_batched(
        model, weights, sent, **ONE_DIGIT, labels=labels, config=L2_ADAM, seeds=list(range(16))
    )
    assert len(results) == 16
    for r, ref in zip(results, reference, strict=True):
        torch.testing.assert_close(r.images, ref.images, rtol=0, atol=1e-4)
        assert torch.equal(r.labels, ref.labels)
        assert r.loss == pytest.approx(ref.loss, rel=1e-3, abs=1e-9)


# --------------------------------------------------------------------------- variants


def test_per_attack_masks_restarts_and_optimised_labels_match_sequential(model, weights, digits):
    """Stacked (per-attack) masks and points, 2 restarts, soft labels, cosine + TV.

    Measured difference 0.0 (the stacked-parameter kernels happen to round alike);
    atol 1e-4 as above."""
    config = AttackConfig(
        loss="cosine_tv",
        optimizer="adam",
        lr=0.1,
        tv_weight=1e-6,
        iterations=30,
        restarts=2,
        label_mode="optimize",
        box=True,
    )
    masks = [random_mask(weights, p, seed=k) for k, p in enumerate((0.0, 0.3, 0.9))]
    targets = [
        batch_gradient(
            model, masks[k].apply(weights), digits.images[k : k + 1], digits.labels[k : k + 1]
        )
        for k in range(3)
    ]
    points = [m.apply(weights) for m in masks]
    common = {"batch_shape": (1, 1, 8, 8), "num_classes": 10}
    batched = invert_gradient_batched(
        model, points, targets, masks=masks, config=config, seeds=[5, 6, 7], **common
    )
    for k in range(3):
        single = invert_gradient(
            model,
            points[k],
            targets[k],
            mask=masks[k],
            config=replace(config, seed=5 + k),
            **common,
        )
        torch.testing.assert_close(batched[k].images, single.images, rtol=0, atol=1e-4)
        assert torch.equal(batched[k].labels, single.labels)


def test_batched_gi_with_local_steps_matches_sequential(model, weights, digits):
    """GI (not mask-aware, shared dense point) on 3-step local training; atol as above."""
    sent, labels = _uploads(model, weights, digits, 2, p=0.3, local_steps=3)
    config = replace(L2_ADAM, iterations=20)
    batched = gi_attack_batched(
        model, weights, sent, **ONE_DIGIT, labels=labels, config=config, local_steps=3
    )
    single = [
        gi_attack(model, weights, s, **ONE_DIGIT, labels=y, config=config, local_steps=3)
        for s, y in zip(sent, labels, strict=True)
    ]
    assert _max_pixel_difference(batched, single) <= 1e-4


def test_batched_backtracking_lbfgs_rows_are_independent_and_match_sequential(
    model, weights, digits
):
    """The L-BFGS of "lbfgs_backtracking" on 4 stacked problems.

    * Rows do not interact: replacing the other attacks leaves an attack's result
      bit-identical. (Moving it to another row need not: CPU ``bmm`` can round a
      batch entry differently at another position, measured with plain ``torch.bmm``
      of (1, 64) x (64, 10) entries, so the row stays in place.)
    * One iteration (a gradient step) equals the one-at-a-time run to round-off
      (measured 1.5e-8; atol 1e-6). From the second iteration on the step is scaled by
      ``s.y / y.y`` of a tiny first step, about 1e3 here, and the line search may halve
      it at different trial points, so kernel round-off grows to ~1e-2 per pixel
      (measured 6.5e-3 after 2 iterations): the runs then agree in outcome, not in
      trajectory. After 100 iterations both reconstruct every unpruned digit (measured
      72-80 dB; 40 dB is a visually exact 8x8 digit).
    """
    sent, labels = _uploads(model, weights, digits, 4, p=0.0)
    config = AttackConfig.dlg(optimizer="lbfgs_backtracking", iterations=1)
    kwargs = {**ONE_DIGIT, "config": config}
    batched = sgi_attack_batched(model, weights, sent, labels=labels, **kwargs)
    single = [
        sgi_attack(model, weights, s, labels=y, **kwargs) for s, y in zip(sent, labels, strict=True)
    ]
    assert _max_pixel_difference(batched, single) <= 1e-6

    kwargs["config"] = replace(config, iterations=100)
    full = sgi_attack_batched(model, weights, sent, labels=labels, **kwargs)
    rotated = [0, 2, 3, 1]  # attack 0 keeps row 0, every other row changes
    others = sgi_attack_batched(
        model, weights, [sent[k] for k in rotated], labels=[labels[k] for k in rotated], **kwargs
    )
    assert torch.equal(full[0].images, others[0].images)
    assert full[0].iterations == others[0].iterations
    one = sgi_attack(model, weights, sent[0], labels=labels[0], **kwargs)
    scores = [psnr(digits.images[k : k + 1], r.images) for k, r in enumerate(full)]
    scores.append(psnr(digits.images[:1], one.images))
    assert min(scores) >= 40.0, scores


# --------------------------------------------------------------------------- bad input


@pytest.fixture(scope="module")
def two_uploads(model, weights, digits):
    return _uploads(model, weights, digits, 2)


@pytest.mark.parametrize(
    ("case", "match"),
    [
        ("lbfgs", "lbfgs_backtracking"),
        ("one_upload", "sequence of uploads"),
        ("no_uploads", "len"),
        ("global_params_length", "global_params"),
        ("labels_length", "labels"),
        ("seeds_length", "seeds"),
        ("negative_seed", "seeds"),
        ("local_steps", "local_steps"),
        ("sent_with_steps", "sent"),
    ],
)
def test_batched_attack_rejects_bad_input(model, weights, two_uploads, case, match):
    sent, labels = two_uploads
    kwargs = {"labels": labels, "config": L2_ADAM}
    bad = {
        "lbfgs": {"config": AttackConfig.dlg()},
        "one_upload": {"sent_params": sent[0]},
        "no_uploads": {"sent_params": []},
        "global_params_length": {"global_params": [weights] * 3},
        "labels_length": {"labels": labels[:1]},
        "seeds_length": {"seeds": [0, 1, 2]},
        "negative_seed": {"seeds": [0, -1]},
        "local_steps": {"local_steps": 0},
        "sent_with_steps": {"local_steps": 2, "gradient_at": "sent"},
    }[case]
    arguments = {"global_params": weights, "sent_params": sent, **kwargs, **bad}
    with pytest.raises(ValueError, match=match):
        sgi_attack_batched(model, **arguments, **ONE_DIGIT)


def test_invert_gradient_batched_needs_a_sequence_of_targets(model, weights, digits):
    g = batch_gradient(model, weights, digits.images[:1], digits.labels[:1])
    with pytest.raises(ValueError, match="sequence of gradient dicts"):
        invert_gradient_batched(
            model,
            weights,
            g,
            batch_shape=(1, 1, 8, 8),
            num_classes=10,
            labels=[digits.labels[:1]],
            config=L2_ADAM,
        )
