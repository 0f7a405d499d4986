"""Tests of sims.gradients.statistics: per-sample gradients and the Gram log pseudo-determinant."""

import copy

import numpy as np
import pytest
import torch

from pruneleak.sims.core.functional import batch_gradient
from pruneleak.sims.gradients.per_sample import per_sample_gradients
from pruneleak.sims.gradients.statistics import (
    GradientStatistics,
    gradient_statistics,
    gram_log_pseudo_determinant,
)
from pruneleak.sims.models import conv_net
from pruneleak.sims.pruning.mask import Mask, random_mask


@pytest.fixture(scope="module")
def setup():
    torch.manual_seed(0)
    model = conv_net(
        2, in_channels=1, image_size=8, num_classes=10, width=4, hidden=16, activation="tanh"
    )
    params = {k: v.detach().clone() for k, v in model.named_parameters()}
    images = torch.rand(6, 1, 8, 8)
    labels = torch.tensor([0, 3, 3, 9, 1, 7])
    return model, params, images, labels


def _numpy_reference(g: np.ndarray, *, center: bool) -> tuple[int, float]:
    """Rank and log pseudo-determinant of the d x d covariance, formed explicitly."""
    n, d = g.shape
    sigma = np.cov(g, rowvar=False) if center else g.T @ g / n
    eig = np.linalg.eigvalsh(np.atleast_2d(sigma))
    rank = int(np.linalg.matrix_rank(np.atleast_2d(sigma), hermitian=True))
    # matrix_rank's default tolerance is S.max() * d * eps; ours uses max(n, d), which
    # equals d in the cases below where it matters (d >= n).
    kept = eig[eig > eig.max() * max(n, d) * np.finfo(float).eps]
    assert kept.size == rank
    return rank, float(np.sum(np.log(kept)))


def _loop_reference(model, params, images, labels) -> torch.Tensor:
    """Slow reference: one batch_gradient call per sample (batch_gradient itself is
    checked against loss.backward() in test_fl.py)."""
    rows = []
    for x, y in zip(images, labels, strict=True):
        g = batch_gradient(model, params, x[None], y[None])
        rows.append(torch.cat([g[name].reshape(-1) for name in params]))
    return torch.stack(rows)


def test_per_sample_gradients_match_a_loop(setup):
    model, params, images, labels = setup
    expected = _loop_reference(model, params, images, labels)
    torch.testing.assert_close(per_sample_gradients(model, params, images, labels), expected)
    mask = random_mask(params, 0.7, seed=0)
    masked = per_sample_gradients(model, params, images, labels, mask=mask)
    assert masked.shape == (6, mask.num_kept())
    torch.testing.assert_close(masked, expected[:, mask.flatten()])


@pytest.mark.parametrize(
    ("num_conv", "channels", "size", "activation", "pooling"),
    [(1, 1, 8, "relu", "max"), (4, 3, 12, "sigmoid", "avg"), (6, 1, 5, "tanh", "max")],
)
def test_per_sample_gradients_other_models(num_conv, channels, size, activation, pooling):
    torch.manual_seed(num_conv)
    model = conv_net(
        num_conv,
        in_channels=channels,
        image_size=size,
        num_classes=4,
        width=2,
        hidden=8,
        activation=activation,
        pooling=pooling,
    )
    params = {k: v.detach() for k, v in model.named_parameters()}
    images, labels = torch.rand(3, channels, size, size), torch.tensor([0, 3, 1])
    torch.testing.assert_close(
        per_sample_gradients(model, params, images, labels),
        _loop_reference(model, params, images, labels),
    )


@pytest.mark.parametrize(("n", "d"), [(6, 10), (20, 4), (3, 3)])
@pytest.mark.parametrize("center", [True, False])
def test_gram_pseudo_determinant_matches_numpy(n, d, center):
    g = np.random.default_rng(n * d).normal(size=(n, d))
    rank, log_pdet = gram_log_pseudo_determinant(torch.from_numpy(g), center=center)
    ref_rank, ref_log_pdet = _numpy_reference(g, center=center)
    assert isinstance(rank, int) and isinstance(log_pdet, float)
    assert rank == ref_rank == min(n - center, d)
    # Both sides are float64 eigendecompositions of the same spectrum: agreement to ~1e-12
    # relative on a log-determinant of order 10.
    assert log_pdet == pytest.approx(ref_log_pdet, rel=1e-10, abs=1e-10)


def test_gram_rank_of_a_low_rank_sample():
    rng = np.random.default_rng(1)
    g = rng.normal(size=(12, 3)) @ rng.normal(size=(3, 40))  # rank 3 before centring
    rank, log_pdet = gram_log_pseudo_determinant(torch.from_numpy(g))
    ref_rank, ref_log_pdet = _numpy_reference(g, center=True)
    assert rank == ref_rank == 3
    assert log_pdet == pytest.approx(ref_log_pdet, rel=1e-10)


def test_gram_float32_rounding_does_not_create_rank():
    """A column that is an exact linear combination before float32 rounding stays dependent."""
    g = np.random.default_rng(2).normal(size=(100, 20)).astype(np.float32)
    dependent = -g[:, :10].sum(axis=1, keepdims=True)  # rounded to float32
    rank, log_pdet = gram_log_pseudo_determinant(torch.from_numpy(np.hstack([g, dependent])))
    assert rank == 20
    ref_rank, ref_log_pdet = _numpy_reference(np.hstack([g, dependent]).astype(float), center=True)
    assert ref_rank == 20
    assert log_pdet == pytest.approx(ref_log_pdet, rel=1e-10)


def test_gram_rtol_cuts_the_spectrum():
    g = torch.from_numpy(np.random.default_rng(4).normal(size=(16, 30)))
    # The centring null eigenvalue is ~1e-16 relative; 1e-12 removes it and nothing else.
    assert gram_log_pseudo_determinant(g, rtol=1e-12)[0] == 15
    # An rtol just below 1 keeps only the largest eigenvalue.
    assert gram_log_pseudo_determinant(g, rtol=0.999)[0] == 1


def test_gram_is_chunk_invariant(monkeypatch):
    import pruneleak.sims.gradients.statistics as gradstats

    g = torch.from_numpy(np.random.default_rng(3).normal(size=(5, 101)))
    whole = gram_log_pseudo_determinant(g)
    monkeypatch.setattr(gradstats, "_GRAM_CHUNK_ELEMENTS", 5 * 7)  # 7 columns per chunk
    chunked = gram_log_pseudo_determinant(g)
    assert chunked[0] == whole[0]
    assert chunked[1] == pytest.approx(whole[1], rel=1e-12)


@pytest.mark.parametrize("center", [True, False])
@pytest.mark.parametrize("p", [None, 0.3, 0.7])
def test_gradient_statistics_equal_the_explicit_route_in_float64(setup, center, p):
    """The per-layer Gram route gives gram_log_pseudo_determinant of the formed matrix."""
    model, params, images, labels = setup
    model = copy.deepcopy(model).double()
    params = {name: t.double() for name, t in params.items()}
    images = images.double()
    mask = None if p is None else random_mask(params, p, seed=5)
    stats = gradient_statistics(model, params, images, labels, mask=mask, center=center)
    g = per_sample_gradients(model, params, images, labels, mask=mask)
    rank, log_pdet = gram_log_pseudo_determinant(g, center=center)
    assert (stats.d_star, stats.d) == (rank, g.shape[1])
    assert stats.log_pseudo_det == pytest.approx(log_pdet, rel=1e-10)


def test_gradient_statistics_refuse_non_finite_gradients_and_tiny_batches(setup):
    model, params, images, labels = setup
    broken = {**params, "classifier.0.weight": params["classifier.0.weight"] * float("inf")}
    with pytest.raises(ValueError, match="gradients of gradient_statistics must be finite"):
        gradient_statistics(model, broken, images, labels)
    with pytest.raises(ValueError, match="n >= 2 samples"):
        gradient_statistics(model, params, images[:1], labels[:1])
    with pytest.raises(ValueError, match="rtol"):
        gradient_statistics(model, params, images, labels, rtol=0.0)


def test_gradient_statistics_on_a_model(setup):
    model, params, images, labels = setup
    mask = random_mask(params, 0.5, seed=0)
    stats = gradient_statistics(model, params, images, labels, mask=mask)
    g = per_sample_gradients(model, params, images, labels, mask=mask).double().numpy()
    # Reference through numpy's n x n centred Gram matrix (d = 824 here: the d x d route
    # was checked against np.cov above on small d).
    centred = g - g.mean(axis=0)
    eig = np.linalg.eigvalsh(centred @ centred.T / (g.shape[0] - 1))
    kept = eig[eig > eig.max() * g.shape[1] * np.finfo(float).eps]
    ref_rank, ref_log_pdet = kept.size, float(np.sum(np.log(kept)))
    assert (stats.n_samples, stats.d, stats.centered) == (6, mask.num_kept(), True)
    assert stats.d_star == ref_rank == 5  # d* <= n - 1: a limit of the sample
    # The reference sums float32-rounded per-sample gradients; the per-layer Gram
    # multiplies the float32 factors in float64: float32 round-off apart.
    assert stats.log_pseudo_det == pytest.approx(ref_log_pdet, rel=1e-6)
    assert stats.delta == -stats.log_pseudo_det / 2
    raw = gradient_statistics(model, params, images, labels, center=False)
    assert raw.d_star == 6 and not raw.centered


@pytest.mark.parametrize(("log_pdet", "delta"), [(-7.0, 3.5), (7.0, -3.5)])
def test_delta_is_the_signed_log_determinant_of_the_whitening(log_pdet, delta):
    stats = GradientStatistics(n_samples=3, d=5, d_star=2, log_pseudo_det=log_pdet, centered=True)
    # Eigenvalues e^-3, e^-4 (sum of logs -7): log det Sigma^(-1/2) = +3.5; e^3, e^4: -3.5.
    assert stats.delta == delta


@pytest.mark.parametrize(
    ("gradients", "kwargs", "match"),
    [
        (torch.zeros(5), {}, "2-D"),
        (torch.zeros(1, 4), {}, "n >= 2"),
        (torch.zeros(0, 4), {"center": False}, "n >= 1"),
        (torch.full((3, 4), float("nan")), {}, "finite"),
        (torch.zeros(3, 4), {"rtol": -1.0}, "rtol"),
        (torch.zeros(3, 4), {"rtol": 0.0}, "rtol"),
    ],
)
def test_gram_rejects_bad_input(gradients, kwargs, match):
    with pytest.raises(ValueError, match=match):
        gram_log_pseudo_determinant(gradients, **kwargs)


def test_per_sample_gradients_reject_bad_input(setup):
    model, params, images, labels = setup
    with pytest.raises(ValueError, match="images"):
        per_sample_gradients(model, params, images[:, :, :4], labels)
    mask = random_mask(params, 0.5, seed=0)
    del mask.keep["features.0.bias"]
    with pytest.raises(ValueError, match=r"'mask'.*names and shapes.*features\.0\.bias"):
        per_sample_gradients(model, params, images, labels, mask=mask)


def test_a_mask_selects_by_name_whatever_its_order(setup):
    """Columns follow ``params``' order; the mask's flags are matched by name."""
    model, params, images, labels = setup
    mask = random_mask(params, 0.5, seed=0)
    reversed_mask = Mask(dict(reversed(list(mask.keep.items()))))
    torch.testing.assert_close(
        per_sample_gradients(model, params, images, labels, mask=reversed_mask),
        _loop_reference(model, params, images, labels)[:, mask.flatten()],
    )
