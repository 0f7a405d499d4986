"""Marginal transforms keep the dependence; the heavy-tail check separates t from normal."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from pruneleak.estimators.samples import heavy_tail_warnings, paired_samples, transform_samples


def test_rank_transform_is_the_normal_score_of_the_ranks():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((200, 3))
    expected = stats.norm.ppf(stats.rankdata(x, axis=0) / 201)
    np.testing.assert_allclose(transform_samples(x, "rank", func="f"), expected)


def test_rank_transform_ignores_monotone_maps():
    """Same ranks, same output: MI estimators see exp(x) and x identically."""
    x = np.random.default_rng(1).standard_normal((300, 2))
    np.testing.assert_array_equal(
        transform_samples(np.exp(x), "rank", func="f"), transform_samples(x, "rank", func="f")
    )


def test_asinh_transform_matches_its_formula():
    x = np.random.default_rng(2).standard_t(1, size=(501, 2)) * 1e-3 + 5.0
    median = np.percentile(x, 50, axis=0)
    mad = np.percentile(np.abs(x - median), 50, axis=0)
    expected = np.arcsinh((x - median) / (1.4826 * mad))
    np.testing.assert_allclose(transform_samples(x, "asinh", func="f"), expected, rtol=1e-9)


@pytest.mark.parametrize("transform", ["asinh", "rank"])
def test_transforms_are_strictly_increasing_per_feature(transform):
    x = np.random.default_rng(3).standard_cauchy((400, 2))
    out = transform_samples(x, transform, func="f")
    for j in range(2):
        order = np.argsort(x[:, j])
        assert np.all(np.diff(out[order, j]) > 0)


def test_transforms_keep_the_batch_shape():
    x = np.random.default_rng(4).standard_normal((50, 3, 2))
    assert transform_samples(x, "asinh", func="f").shape == (50, 3, 2)


def test_heavy_tails_flag_cauchy_but_not_normal():
    rng = np.random.default_rng(5)
    normal, cauchy = rng.standard_normal((5000, 2)), rng.standard_cauchy((5000, 2))
    assert heavy_tail_warnings("m", {"x": normal, "y": normal}) == []
    [message] = heavy_tail_warnings("m", {"x": normal, "y": cauchy})
    assert "heavy tails in y" in message and "transform='asinh'" in message


def test_paired_samples_keeps_batches_when_asked():
    x, y = paired_samples(
        np.ones((4, 2, 3)) * np.arange(4)[:, None, None], np.arange(4.0), func="f", flatten_x=False
    )
    assert x.shape == (4, 2, 3) and y.shape == (4, 1)


@pytest.mark.parametrize("transform", ["log", None])
def test_unknown_transform_is_refused(transform):
    with pytest.raises(ValueError, match=r"'transform'.*'none', 'asinh', 'rank'"):
        transform_samples(np.ones((3, 1)), transform, func="f")


def test_asinh_of_an_extreme_outlier_is_its_logarithm():
    """asinh(r) = log(2 r) for huge r, computed without forming r (1e308 / 0.5 overflows)."""
    x = np.r_[np.linspace(-1.0, 1.0, 99), 1e308][:, None]
    out = transform_samples(x, "asinh", func="f")
    median, mad = np.median(x), np.median(np.abs(x - np.median(x)))
    # log(2 r) with r = (1e308 - median) / (1.4826 mad), evaluated in log space by hand
    expected_tail = np.log(2.0) + np.log(1e308) - np.log(1.4826 * mad)
    assert np.isfinite(out).all()
    assert out[-1, 0] == pytest.approx(expected_tail, rel=1e-12)
    np.testing.assert_allclose(out[:-1, 0], np.arcsinh((x[:-1, 0] - median) / (1.4826 * mad)))


def test_heavy_tail_check_survives_an_extreme_outlier():
    x = np.r_[np.linspace(-1.0, 1.0, 99), 1e308][:, None]
    [message] = heavy_tail_warnings("m", {"x": x})
    assert "heavy tails in x" in message
