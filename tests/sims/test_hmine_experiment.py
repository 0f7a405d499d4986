"""sims.experiments.hmine: the (X_B, G) sampler against slow references, attack, studies."""

import math

import numpy as np
import pytest
import torch
from scipy.special import comb
from torch import nn

from pruneleak.estimators.neural import TrainingConfig
from pruneleak.sims.core.functional import batch_gradient
from pruneleak.sims.experiments import hmine
from pruneleak.sims.experiments.hmine import (
    HMineExperimentConfig,
    HMinePoint,
    inference_error,
    make_client_task,
    run_study,
    sample_batch_gradients,
    tabular_logistic_regression,
)
from pruneleak.sims.store.results import ResultStore

TINY = HMineExperimentConfig(
    client_size=40,
    n_pairs=300,
    estimator=TrainingConfig(max_steps=5, batch_size=32, n_fits=1),
    attack_runs=2,
    attack_iterations=5,
    device="cpu",
)


@pytest.fixture(scope="module")
def task():
    return make_client_task(TINY, HMinePoint(train_steps=3))


def test_sampled_gradient_equals_batch_gradient_of_the_batch(task):
    x, g, clean = sample_batch_gradients(task, batch_size=3, n_pairs=4, seed=1)
    assert x.shape == (4, 3, 30)
    assert g.shape == (4, 62)  # 30 x 2 weights + 2 biases
    torch.testing.assert_close(g, clean)
    flat_images = task.images.flatten(1)
    for i in range(4):
        rows = [int(torch.nonzero((flat_images == r).all(1))[0]) for r in x[i]]
        assert len(set(rows)) == 3  # drawn without replacement
        expected = batch_gradient(task.model, task.params, task.images[rows], task.labels[rows])
        torch.testing.assert_close(g[i], torch.cat([t.flatten() for t in expected.values()]))


def test_noise_is_added_with_the_requested_scale(task):
    _, g, clean = sample_batch_gradients(task, batch_size=2, n_pairs=500, noise_std=0.3, seed=2)
    # 500 x 62 Gaussian draws: the sample sd is within 1 % of 0.3 with overwhelming odds
    assert float((g - clean).std()) == pytest.approx(0.3, rel=0.03)


def test_projection_basis_is_orthonormal(task, monkeypatch):
    basis_holder = {}
    original = hmine._orthonormal_rows

    def capture(k, d, generator, device):
        basis_holder["basis"] = original(k, d, generator, device)
        return basis_holder["basis"]

    monkeypatch.setattr(hmine, "_orthonormal_rows", capture)
    _, _, projected = sample_batch_gradients(
        task, batch_size=2, n_pairs=20, projection_dim=10, seed=4
    )
    basis = basis_holder["basis"]
    torch.testing.assert_close(basis @ basis.T, torch.eye(10), atol=1e-5, rtol=0)
    assert projected.shape == (20, 10)


@pytest.mark.parametrize("fraction", [0.5, 0.9])
def test_client_data_has_the_requested_class_balance(fraction):
    task = make_client_task(TINY, HMinePoint(positive_fraction=fraction, train_steps=0))
    assert float(task.labels.double().mean()) == pytest.approx(fraction)


def test_training_is_softmax_regression_sgd_on_the_seeded_batches():
    """t steps of make_client_task against SGD written out: for logistic regression the
    mean cross-entropy gradient is (softmax(x W^T + b) - onehot(y))^T x / B for W and the
    row mean of softmax - onehot for b; batches are drawn with replacement from the
    client data by a generator seeded with the config's seed."""
    steps = 4
    start = make_client_task(TINY, HMinePoint(train_steps=0))
    trained = make_client_task(TINY, HMinePoint(train_steps=steps))
    torch.testing.assert_close(trained.images, start.images, rtol=0, atol=0)
    w = start.params["classifier.0.weight"].double()
    b = start.params["classifier.0.bias"].double()
    x_all, y_all = start.images.flatten(1).double(), start.labels
    generator = torch.Generator().manual_seed(TINY.seed)
    draws = [
        torch.randint(len(y_all), (TINY.train_batch,), generator=generator) for _ in range(steps)
    ]
    for rows in draws:
        x, y = x_all[rows], y_all[rows]
        residual = torch.softmax(x @ w.T + b, dim=1) - nn.functional.one_hot(y, 2).double()
        w = w - TINY.train_lr * residual.T @ x / len(rows)
        b = b - TINY.train_lr * residual.mean(dim=0)
    # float32 training against this float64 loop: 4 steps of O(1) updates
    torch.testing.assert_close(trained.params["classifier.0.weight"].double(), w, rtol=0, atol=1e-5)
    torch.testing.assert_close(trained.params["classifier.0.bias"].double(), b, rtol=0, atol=1e-5)


def test_dlg_recovers_a_single_record_of_logistic_regression(task):
    # grad_W = (p - y) x^T reveals x up to a scalar fixed by grad_b: B = 1 leaks exactly
    exact = inference_error(task, batch_size=1, noise_std=0.0, runs=2, iterations=100)
    assert exact["reconstruction_mse"] < 1e-8
    assert exact["inference_error"] < 1e-8
    noisy = inference_error(task, batch_size=1, noise_std=1.0, runs=2, iterations=100)
    assert noisy["reconstruction_mse"] > 1e-3


def test_run_point_record_and_bounds():
    record = hmine.run_point(TINY, HMinePoint(batch_size=2, noise_std=0.1, train_steps=0))
    assert record["bound_batches"] == pytest.approx(math.log(comb(40, 2, exact=True)))
    assert 0 < record["bound_gaussian_channel"] < math.inf
    assert hmine.run_point(TINY, HMinePoint(batch_size=2))["bound_gaussian_channel"] is None
    assert record["mi_ci_low"] <= record["mi"] <= record["mi_ci_high"]
    for name in ("inference_error", "reconstruction_mse", "cov_sum", "log_n_test"):
        assert np.isfinite(record[name])


def test_run_study_resumes_from_the_store(tmp_path, monkeypatch):
    store = ResultStore(tmp_path / "hmine.jsonl")
    first = run_study(TINY, "batch_size", (1, 2), store=store, progress=False)
    assert [r["value"] for r in first] == [1, 2]
    assert [r["batch_size"] for r in first] == [1, 2]

    def fail(*args, **kwargs):
        raise AssertionError("a finished point was recomputed")

    monkeypatch.setattr(hmine, "run_point", fail)
    again = run_study(TINY, "batch_size", (1, 2), store=store, progress=False)
    assert [r["mi"] for r in again] == [r["mi"] for r in first]


def test_same_seed_same_record():
    point = HMinePoint(batch_size=1, train_steps=0)
    assert hmine.run_point(TINY, point) == hmine.run_point(TINY, point)


def test_tabular_model_is_an_affine_map_of_the_record():
    model = tabular_logistic_regression(7, 3)
    assert model.input_shape == (1, 1, 7)
    records = torch.rand(4, 1, 1, 7, generator=torch.Generator().manual_seed(0))
    weight, bias = model.classifier[0].weight, model.classifier[0].bias
    with torch.no_grad():
        torch.testing.assert_close(model(records), records.flatten(1) @ weight.T + bias)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"task": "adult"}, "task"),
        ({"client_size": 1}, "client_size"),
        ({"n_pairs": 1}, "n_pairs"),
        ({"estimator": {"steps": 3}}, "estimator"),
        ({"projection_dim": 0}, "projection_dim"),
        ({"train_lr": 0.0}, "train_lr"),
        ({"attack_runs": 0}, "attack_runs"),
        ({"seed": -1}, "seed"),
    ],
)
def test_config_rejects_bad_values(kwargs, match):
    with pytest.raises(ValueError, match=match):
        HMineExperimentConfig(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"batch_size": 0}, "batch_size"),
        ({"noise_std": -0.1}, "noise_std"),
        ({"train_steps": -1}, "train_steps"),
        ({"positive_fraction": 1.0}, "positive_fraction"),
    ],
)
def test_point_rejects_bad_values(kwargs, match):
    with pytest.raises(ValueError, match=match):
        HMinePoint(**kwargs)


def test_imbalance_is_tabular_only():
    with pytest.raises(ValueError, match="tabular"):
        make_client_task(
            HMineExperimentConfig(task="digits", device="cpu"), HMinePoint(positive_fraction=0.7)
        )


def test_study_name_is_checked():
    with pytest.raises(ValueError, match="study"):
        run_study(TINY, "epochs", (1,))


def test_batch_larger_than_the_client_is_rejected(task):
    with pytest.raises(ValueError, match="batch_size"):
        sample_batch_gradients(task, batch_size=41, n_pairs=2)


def test_digits_sampler_projects_the_convnet_gradient():
    config = HMineExperimentConfig(task="digits", client_size=30, projection_dim=16, device="cpu")
    digits = make_client_task(config, HMinePoint(train_steps=0))
    x, g, _ = sample_batch_gradients(digits, batch_size=2, n_pairs=8, projection_dim=16)
    assert x.shape == (8, 2, 64)
    assert g.shape == (8, 16)
