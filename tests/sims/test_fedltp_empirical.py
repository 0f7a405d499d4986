"""Empirical privacy of Fed-LTP's uploads (sims.fedltp.empirical).

The upload is checked against a slow recomputation of clip + sum + noise written here
(a loop over records, the noise drawn as Opacus draws it), the release model of the bits
against the upload's residual, the Monte Carlo bits against a 1-D quadrature of the
binary Gaussian channel written here, and the measured identification success against
Hayes et al.'s bound.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pytest
import torch
from scipy import integrate, stats
from torch import nn

from pruneleak.bounds.accounting import epsilon_sampled_gaussian
from pruneleak.bounds.leakage import exact_leakage
from pruneleak.estimators.image import psnr
from pruneleak.sims.attacks import DIGITS_ATTACK_MODEL
from pruneleak.sims.core.runtime import generator, seeded
from pruneleak.sims.data.datasets import load_digits_dataset
from pruneleak.sims.fedltp.empirical import (
    PSNR_CAP,
    EmpiricalConfig,
    FixedBatchTrainer,
    clipped_releases,
    dp_upload,
    empirical_privacy,
    format_table,
    kept_vector,
    read_noise_std,
    reconstruction_key,
    step_epsilon,
)
from pruneleak.sims.fedltp.masks import prune_remaining
from pruneleak.sims.fedltp.tickets import current_params
from pruneleak.sims.models import conv_net
from pruneleak.sims.plots.fedltp import plot_empirical_reconstructions
from pruneleak.sims.pruning.mask import Mask
from pruneleak.sims.store.reconstructions import load_reconstructions

LR, CLIP = 0.1, 1.0


def _model():
    return conv_net(in_channels=1, image_size=8, num_classes=10, **DIGITS_ATTACK_MODEL)


@pytest.fixture(scope="module")
def client():
    data = load_digits_dataset()
    rows = torch.arange(0, 60, 10)  # six records of different classes
    with seeded(3):
        model = _model()
    params = current_params(model)
    mask = prune_remaining(params, Mask.ones(params), 0.5)
    return model, params, mask, data.images[rows], data.labels[rows]


def _slow_upload(model, params, mask, images, labels, batch, *, sigma, seed):
    """Clip + sum + noise + step, written out: one backward per record at m * w, the
    gradient masked, scaled by min(1, C / (||g|| + 1e-6)) (Opacus' factor), summed, plus
    N(0, (sigma C)^2) per parameter in parameter order from the generator the trainer
    seeds with seed + 1 (torch.normal, as opacus.optimizers.optimizer._generate_noise),
    divided by B, one SGD step, pruned weights set to 0."""
    work = _model()
    point = mask.apply(params)
    with torch.no_grad():
        for name, p in work.named_parameters():
            p.copy_(point[name])
    named = list(work.named_parameters())
    total = {name: torch.zeros_like(p) for name, p in named}
    for i in batch:
        loss = nn.functional.cross_entropy(work(images[i : i + 1]), labels[i : i + 1])
        grads = torch.autograd.grad(loss, [p for _, p in named])
        grads = [g * mask.keep[name] for g, (name, _) in zip(grads, named, strict=True)]
        norm = math.sqrt(sum(float((g.double() ** 2).sum()) for g in grads))
        factor = min(1.0, CLIP / (norm + 1e-6))
        for g, (name, _) in zip(grads, named, strict=True):
            total[name] += g * factor
    draws = generator(seed + 1)
    out = {}
    for name, p in named:
        noise = (
            torch.normal(0.0, sigma * CLIP, p.shape, generator=draws)
            if sigma > 0
            else torch.zeros_like(p)
        )
        grad = (total[name] + noise) / len(batch) * mask.keep[name]
        out[name] = (point[name] - LR * grad) * mask.keep[name]
    return out


@pytest.mark.parametrize(("sigma", "batch"), [(0.0, [1, 4]), (1.5, [0, 2, 5]), (0.7, [3])])
def test_upload_equals_slow_recomputation(client, sigma, batch):
    model, params, mask, images, labels = client
    upload = dp_upload(
        model, params, mask, images, labels, batch,
        max_grad_norm=CLIP, noise_multiplier=sigma, lr=LR, seed=11,
    )  # fmt: skip
    slow = _slow_upload(model, params, mask, images, labels, batch, sigma=sigma, seed=11)
    for name in params:
        # float32 kernels (Opacus' einsum vs autograd), weights of order 0.3: 1e-6 absolute
        torch.testing.assert_close(upload[name], slow[name], rtol=0, atol=1e-6)
        assert not upload[name][~mask.keep[name]].any()  # the ticket is applied


def test_clipped_releases_are_the_single_record_uploads(client):
    # Opacus' per-sample route (B = 1, no noise) against the float64 loop of clipped_releases
    model, params, mask, images, labels = client
    releases = clipped_releases(model, params, mask, images, labels, max_grad_norm=CLIP)
    start = kept_vector(mask.apply(params), mask)
    for i in range(len(labels)):
        upload = dp_upload(
            model, params, mask, images, labels, [i],
            max_grad_norm=CLIP, noise_multiplier=0.0, lr=LR, seed=0,
        )  # fmt: skip
        read = (start - kept_vector(upload, mask)) / LR
        # float32 weights: 2^-24 * 0.3 / lr ~ 2e-7 per coordinate
        torch.testing.assert_close(read, releases[i], rtol=0, atol=5e-6)
    assert torch.allclose(
        releases.norm(dim=1), torch.full((len(labels),), CLIP, dtype=torch.float64), atol=1e-5
    )


def test_release_model_noise_scale(client):
    # read gradient = mean of the batch's releases + N(0, read_noise_std^2) per coordinate
    model, params, mask, images, labels = client
    releases = clipped_releases(model, params, mask, images, labels, max_grad_norm=CLIP)
    start = kept_vector(mask.apply(params), mask)
    batch, sigma = [0, 3], 2.0
    upload = dp_upload(
        model, params, mask, images, labels, batch,
        max_grad_norm=CLIP, noise_multiplier=sigma, lr=LR, seed=5,
    )  # fmt: skip
    residual = (start - kept_vector(upload, mask)) / LR - releases[batch].mean(dim=0)
    k = residual.numel()
    expected = read_noise_std(sigma, CLIP, len(batch))
    assert expected == pytest.approx(1.0)  # sigma C / B
    # sample std of k Gaussians: relative SE 1 / sqrt(2k) (k ~ 13,000: 0.6 %); 5 SE
    assert float(residual.std()) == pytest.approx(expected, rel=5 / math.sqrt(2 * k))
    assert abs(float(residual.mean())) < 5 * expected / math.sqrt(k)


def _binary_channel_bits(distance: float, s: float) -> float:
    """I(X; Y), X uniform on {0, d}, Y = X + N(0, s^2), by 1-D quadrature of
    1 - E h2(posterior): the posterior of X = d given y is sigmoid(d (y - d/2) / s^2)."""
    a = distance / s

    def integrand(z):  # z = (y - d/2) / s under X = d, y = d + s z'  -> z = z' + a/2
        p = 1 / (1 + math.exp(-a * z))
        h = -sum(v * math.log2(v) for v in (p, 1 - p) if v > 0)
        return stats.norm.pdf(z - a / 2) * h

    h_mean, _ = integrate.quad(integrand, -40, 40, limit=200, epsabs=1e-12)
    return 1 - h_mean


@pytest.mark.parametrize(("distance", "s"), [(1.0, 1.0), (2.0, 0.5), (0.3, 1.0)])
def test_monte_carlo_bits_against_quadrature(distance, s):
    # two candidates in 3-D at the given distance, the Monte Carlo route forced
    releases = np.array([[0.0, 0.0, 0.0], [distance / math.sqrt(2), distance / math.sqrt(2), 0]])
    res = exact_leakage(releases, s, method="monte_carlo", samples=200_000, seed=0)
    truth = _binary_channel_bits(distance, s)
    low, high = res.ci_bits
    se = (high - low) / (2 * 1.96)
    assert abs(res.bits - truth) < 4 * se + 1e-12
    assert se < 0.01  # the check has teeth
    # the MAP success is Phi(d / (2 s)) (Bayes error of two Gaussians)
    lo, hi = res.bayes_success_ci
    assert lo - 1e-3 <= stats.norm.cdf(distance / (2 * s)) <= hi + 1e-3


def test_step_epsilon_is_the_unsampled_accountant():
    for sigma in (0.5, 1.0, 4.0):
        eps, _ = epsilon_sampled_gaussian(1.0, sigma, 1, 1e-5)
        assert step_epsilon(sigma, 1e-5) == pytest.approx(eps, rel=1e-12)
    assert step_epsilon(0.0, 1e-5) == math.inf


def test_fixed_batch_trainer_draws_the_batch():
    trainer = FixedBatchTrainer(
        _model(), [2, 0], clipping="per_example", max_grad_norm=1.0,
        noise_multiplier=1.0, momentum=0.0, device="cpu",
    )  # fmt: skip
    assert trainer.batch_size == 2
    assert [b.tolist() for b in trainer.draw_batches(3, steps=2, seed=0)] == [[2, 0], [2, 0]]
    with pytest.raises(ValueError, match="'batch'"):
        trainer.draw_batches(2, steps=1, seed=0)


@pytest.fixture(scope="module")
def kept_folder(tmp_path_factory):
    return tmp_path_factory.mktemp("reconstructions")


@pytest.fixture(scope="module")
def table(kept_folder):
    config = EmpiricalConfig(sigmas=(0.0, 1.0, 4.0), local_size=8, trials=6, mc_samples=1024)
    return config, empirical_privacy(config, reconstructions_dir=kept_folder)


def test_kept_reconstructions_are_the_attacked_digits_and_give_the_reported_psnr(
    table, kept_folder
):
    """Every kept original is a digit of the data set (one per trial, B = 1), and the
    median PSNR of the kept reconstructions is the record's (float16 storage: 0.05 dB)."""
    config, records = table
    digits = load_digits_dataset().images.numpy()
    for record in records:
        for attack in ("sgi", "gi"):
            found = load_reconstructions(
                kept_folder, reconstruction_key(config, record["sigma"], attack)
            )
            assert found is not None
            originals, reconstructions = found
            assert originals.shape == (config.trials, 1, 8, 8)
            for image in originals:
                assert np.abs(digits - image).reshape(len(digits), -1).max(axis=1).min() < 1e-3
            pairs = zip(originals, reconstructions, strict=True)
            each = [min(psnr(o, r), PSNR_CAP) for o, r in pairs]
            assert np.median(each) == pytest.approx(record[f"{attack}_psnr"], abs=0.05)
    fig = plot_empirical_reconstructions(config, kept_folder, max_images=4)
    labelled = [ax.get_ylabel() for ax in fig.axes if ax.get_ylabel()]
    assert labelled == ["original"] + [
        f"{a} sigma={s:g}" for s in config.sigmas for a in ("SGI", "GI")
    ]
    assert len(fig.axes) == (1 + 2 * len(config.sigmas)) * 4
    with pytest.raises(ValueError, match=r"'directory'.*reconstructions_dir"):
        plot_empirical_reconstructions(replace(config, seed=1), kept_folder)


def test_identification_never_beats_hayes(table):
    _config, records = table
    for r in records:
        n = r["trials"]
        for attack in ("sgi", "gi"):
            # one-sided: the measured rate may exceed the bound by its binomial error only
            hits = round(r[f"{attack}_success"] * n)
            assert stats.binom.sf(hits - 1, n, r["hayes_gdp"]) > 0.01, (r["sigma"], attack)
        # the MAP attacker's exact-posterior success: below the data bound (its interval)
        assert r["bayes_success_ci"][0] <= r["hayes_gdp_data"] + 1e-9
        assert r["hayes_gdp_data"] <= r["hayes_gdp"] + 1e-12  # data diameter <= 2C
        assert r["hayes_gdp"] <= r["hayes_dp"] + 1e-12  # exact GDP beats the RDP epsilon
        assert r["kappa"] == pytest.approx(1 / 8)
        assert 0 <= r["bits"] <= r["log2_secrets"] + 1e-12
        assert r["sgi_fano_bits"] <= r["bits_ci"][1] + 1e-9


def test_no_noise_reference(table):
    _, records = table
    r = records[0]
    assert r["sigma"] == 0 and r["epsilon"] == math.inf and r["hayes_gdp"] == 1.0
    assert r["bits"] == pytest.approx(3.0)  # distinct releases: log2 8, exact
    assert r["sgi_success"] >= 5 / 6  # the attack works without noise (32/32 at 300 it.)
    assert r["bayes_success"] == 1.0


def test_noise_reduces_everything(table):
    _, records = table
    for a, b in itertools.pairwise(records):
        assert b["epsilon"] < a["epsilon"]
        assert b["hayes_gdp"] < a["hayes_gdp"]
        assert b["bits"] < a["bits"]
        assert b["bayes_success"] < a["bayes_success"]


def test_format_table(table):
    _, records = table
    text = format_table(records)
    lines = text.splitlines()
    assert len(lines) == 1 + len(records)
    assert "Hayes(mu)" in lines[0] and lines[1].split()[0] == "0.00"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("sigmas", (-1.0,)),
        ("sigmas", ()),
        ("local_size", 1),
        ("batch_size", 16),
        ("max_grad_norm", 0.0),
        ("pruning_rate", 1.0),
        ("delta", 0.0),
        ("trials", 0),
    ],
)
def test_config_validation(field, value):
    with pytest.raises(ValueError, match=f"'{field}'"):
        EmpiricalConfig(**{field: value})
