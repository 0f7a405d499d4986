"""sims.experiments.identifiability: where SGI stops recovering digits, against k / n."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.optimize import minimize

from pruneleak.estimators.image import psnr
from pruneleak.sims.data.datasets import load_digits_dataset
from pruneleak.sims.experiments import identifiability as ident
from pruneleak.sims.experiments.identifiability import (
    IdentifiabilityConfig,
    _logistic_midpoint,
    breakdown_ratio,
    format_table,
    resized_digits,
    run_identifiability,
)
from pruneleak.sims.plots.identifiability import (
    identifiability_reconstruction_rows,
    plot_identifiability,
)
from pruneleak.sims.store.results import ResultStore


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    """Two pruning rates either side of each breakdown, 2 targets, 150 L-BFGS steps."""
    folder = tmp_path_factory.mktemp("ident")
    store = ResultStore(folder / "ident.jsonl")
    records = []
    for point, rates in (("dense", (0.99, 1.0)), ("masked", (0.9, 0.99))):
        config = IdentifiabilityConfig(
            pruning_rates=rates, gradient_points=(point,), targets=2, iterations=150
        )
        kept = folder / "reconstructions"
        records += run_identifiability(config, store, progress=False, reconstructions_dir=kept)
    return records, store


def test_sgi_recovers_digits_until_few_coordinates_survive(small_run):
    """Measured (float64, 150 iterations, 2 targets): dense gradient, p = 0.99
    (k/n = 5.5): 49 and 76 dB; p = 1 (only the 90 biases, k/n = 1.4): 15 and 16 dB.
    Gradient at the pruned weights, p = 0.9 (k/n = 42.6): 48 and 40 dB; p = 0.99: 5 dB,
    the untouched start (the pruned conv layer no longer sees the image)."""
    records, _ = small_run
    by = {(r["gradient_at"], r["p"]): r for r in records}
    assert by[("dense", 0.99)]["success_rate"] == 1.0
    assert by[("dense", 1.0)]["success_rate"] == 0.0
    assert by[("masked", 0.9)]["success_rate"] == 1.0
    assert by[("masked", 0.99)]["success_rate"] == 0.0
    assert by[("dense", 1.0)]["kept"] == 16 + 64 + 10  # the biases of DIGITS_ATTACK_MODEL
    assert by[("dense", 0.99)]["ratio"] == pytest.approx(by[("dense", 0.99)]["kept"] / 64)
    ratios = breakdown_ratio(records)
    assert 1.41 < ratios["dense"] < 5.54
    assert 5.53 < ratios["masked"] < 42.7
    table = format_table(records)
    assert "breakdown (dense gradient" in table
    # the figure marks each fitted breakdown with a vertical line at its ratio
    verticals = [
        line.get_xdata()[0]
        for line in plot_identifiability(records).axes[0].get_lines()
        if line.get_label().startswith("50 % breakdown")
    ]
    assert sorted(verticals) == sorted(ratios.values())


def test_kept_reconstructions_are_the_targets_and_give_the_recorded_psnr(small_run):
    """The grid of the dense run: its two digits on top (8x8 digits of the data set, in
    target order) and one row per p, whose PSNR per target is the record's (float16
    storage: 0.05 dB below 40 dB, and above 40 dB wherever the record is)."""
    records, store = small_run
    config = IdentifiabilityConfig(
        pruning_rates=(0.99, 1.0), gradient_points=("dense",), targets=2, iterations=150
    )
    folder = store.path.parent / "reconstructions"
    originals, rows = identifiability_reconstruction_rows(config, folder)
    assert list(rows) == ["dense p=0.99", "dense p=1"]
    digits = load_digits_dataset().images.numpy()
    assert originals.shape == (2, 1, 8, 8)
    for image in originals:
        assert np.abs(digits - image).reshape(len(digits), -1).max(axis=1).min() < 1e-3
    by_p = {r["p"]: r for r in records if r["gradient_at"] == "dense"}
    for p, label in ((0.99, "dense p=0.99"), (1.0, "dense p=1")):
        for o, r, recorded in zip(originals, rows[label], by_p[p]["psnr_per_target"], strict=True):
            if recorded < 40:
                assert psnr(o, r) == pytest.approx(recorded, abs=0.05)
            else:
                assert psnr(o, r) > 40


def test_rerun_reads_finished_configurations_from_the_store(small_run, monkeypatch):
    records, store = small_run

    def must_not_run(config, job):
        raise AssertionError(f"{job} was run again")

    monkeypatch.setattr(ident, "_run_job", must_not_run)
    config = IdentifiabilityConfig(
        pruning_rates=(0.99, 1.0), gradient_points=("dense",), targets=2, iterations=150
    )
    again = run_identifiability(config, store, progress=False)
    assert again == [r for r in records if r["gradient_at"] == "dense"]


def test_logistic_midpoint_is_the_maximum_likelihood_one():
    """Against a direct minimisation of the logistic negative log-likelihood."""
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 2, 200)
    y = rng.uniform(size=200) < 1 / (1 + np.exp(-4 * (x - 0.5)))

    def negative_log_likelihood(theta):
        z = theta[0] + theta[1] * x
        return np.sum(np.logaddexp(0, z) - y * z)

    theta = minimize(negative_log_likelihood, [0.0, 1.0], method="BFGS").x
    assert _logistic_midpoint(x, y) == pytest.approx(-theta[0] / theta[1], abs=1e-3)
    assert _logistic_midpoint(x, np.ones(200, dtype=bool)) is None


def test_resized_digits_keep_range_and_the_native_size():
    native = load_digits_dataset().images
    same, labels = resized_digits(8)
    assert torch.equal(same, native) and labels.shape == (len(native),)
    small, _ = resized_digits(5)
    assert small.shape == (len(native), 1, 5, 5)
    assert float(small.min()) >= 0.0 and float(small.max()) <= 1.0
    # antialiased resizing preserves the mean intensity to within a few percent
    assert math.isclose(float(small.mean()), float(native.mean()), rel_tol=0.05)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("pruning_rates", ()),
        ("pruning_rates", (1.2,)),
        ("widths", (2,)),
        ("image_sizes", (2,)),
        ("batch_sizes", (0,)),
        ("gradient_points", ("sent",)),
        ("targets", 0),
        ("psnr_threshold", 0.0),
        ("precision", "float16"),
        ("device", "tpu"),
    ],
)
def test_bad_configuration_is_a_clear_value_error(field, value):
    with pytest.raises(ValueError, match=field):
        IdentifiabilityConfig(**{field: value})
