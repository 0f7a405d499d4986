"""bounds.gaussian: closed forms against Monte Carlo, numerical integration and limits."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, stats

from pruneleak.bounds import gaussian

RNG = np.random.default_rng(11)
_A = RNG.normal(size=(4, 4))
COV = _A @ _A.T + 0.2 * np.eye(4)
KEEP = np.array([True, False, True, True])


def test_masked_mi_matches_monte_carlo():
    B, s, n = 4, 0.5, 40_000
    x = gaussian.sample_round(COV, batch_size=B, n_rounds=n, seed=0)
    rng = np.random.default_rng(1)
    y = x[:, KEEP] + s * rng.normal(size=(n, KEEP.sum()))
    log_cond = stats.multivariate_normal(np.zeros(3), s**2 * np.eye(3)).logpdf(y - x[:, KEEP])
    marginal = COV[np.ix_(KEEP, KEEP)] / B + s**2 * np.eye(3)
    samples = log_cond - stats.multivariate_normal(np.zeros(3), marginal).logpdf(y)
    exact = gaussian.masked_update_mi(COV, KEEP, batch_size=B, noise_std=s, unit="nats")
    # Monte Carlo mean of the information density; 5 standard errors (~1e-6 false alarm).
    assert abs(samples.mean() - exact) < 5 * samples.std() / math.sqrt(n)


def test_mi_grows_like_k_log_one_over_s():
    kw = {"batch_size": 4, "unit": "nats"}
    values = [gaussian.masked_update_mi(COV, KEEP, noise_std=s, **kw) for s in (1e-2, 1e-3, 1e-4)]
    asym = [
        gaussian.masked_update_mi_small_noise(COV, KEEP, noise_std=s, **kw)
        for s in (1e-2, 1e-3, 1e-4)
    ]
    # Each decade of s adds k log 10 nats (k = 3 kept coordinates); the gap to the
    # asymptote is O(s^2) (module docstring).
    np.testing.assert_allclose(np.diff(values), 3 * math.log(10), rtol=1e-3)
    assert abs(values[-1] - asym[-1]) < 1e-6
    assert gaussian.masked_update_mi(COV, KEEP, noise_std=0.0, **kw) == math.inf
    bits = gaussian.masked_update_mi(COV, KEEP, noise_std=0.1, batch_size=4)  # default unit
    assert bits == pytest.approx(
        gaussian.masked_update_mi(COV, KEEP, noise_std=0.1, **kw) / math.log(2)
    )


def test_random_mask_mi_matches_enumeration():
    var = np.array([0.5, 2.0, 3.0])
    q, B, s = 0.7, 2, 0.3
    expected = 0.0
    for bits in itertools.product([False, True], repeat=3):
        keep = np.array(bits)
        weight = np.prod(np.where(keep, q, 1 - q))
        expected += weight * gaussian.masked_update_mi(
            np.diag(var), keep, batch_size=B, noise_std=s
        )
    assert gaussian.random_mask_mi(var, keep_prob=q, batch_size=B, noise_std=s) == pytest.approx(
        expected
    )


@pytest.mark.parametrize(("std", "step"), [(1.0, 0.7), (0.3, 0.05), (2.0, 3.0)])
def test_quantised_entropy_matches_cellwise_integration(std, step):
    density = stats.norm(0, std).pdf
    n_cells = math.ceil(14 * std / step) + 1
    probs = [
        integrate.quad(density, (c - 0.5) * step, (c + 0.5) * step, epsabs=0, epsrel=1e-13)[0]
        for c in range(-n_cells, n_cells + 1)
    ]
    probs = np.array(probs)
    ref = -np.sum(probs[probs > 0] * np.log(probs[probs > 0]))
    # quad per cell at 1e-13 relative; the entropy inherits ~1e-12.
    assert gaussian.quantised_coordinate_entropy(std, step, unit="nats") == pytest.approx(
        ref, rel=1e-10
    )


def test_quantised_entropy_small_step_limit_and_sum():
    h = 0.5 * math.log(2 * math.pi * math.e)  # N(0, 1), nats
    for step in (0.1, 0.01):
        gap = gaussian.quantised_coordinate_entropy(1.0, step, unit="nats") - (h - math.log(step))
        assert abs(gap) < step**2  # the high-resolution error is O(step^2)
    var = np.array([1.0, 4.0, 9.0])
    keep = np.array([True, False, True])
    total = gaussian.quantised_update_mi(var, keep, batch_size=4, step=0.2)
    parts = [gaussian.quantised_coordinate_entropy(math.sqrt(v / 4), 0.2) for v in var[keep]]
    assert total == pytest.approx(sum(parts))


def test_gaussian_update_entropy_matches_scipy():
    d_star, log_pdet = 4, float(np.linalg.slogdet(COV)[1])
    ref = stats.multivariate_normal(np.zeros(4), COV / 8).entropy()
    ours = gaussian.gaussian_update_entropy(d_star, log_pdet, batch_size=8, unit="nats")
    assert ours == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize(
    ("func", "kwargs", "match"),
    [
        (
            gaussian.masked_update_mi,
            {"cov": -np.eye(2), "keep": np.array([True, True]), "batch_size": 1, "noise_std": 1.0},
            "positive semi-definite",
        ),
        (
            gaussian.masked_update_mi,
            {"cov": np.eye(2), "keep": np.array([1, 0]), "batch_size": 1, "noise_std": 1.0},
            "boolean",
        ),
        (
            gaussian.masked_update_mi,
            {"cov": np.eye(2), "keep": np.array([True, True]), "batch_size": 0.5, "noise_std": 1.0},
            "batch_size",
        ),
        (
            gaussian.masked_update_mi,
            {"cov": np.eye(2), "keep": np.array([True, True]), "batch_size": 1, "noise_std": -1.0},
            "noise_std",
        ),
        (
            gaussian.random_mask_mi,
            {"variances": [1.0, 0.0], "keep_prob": 0.5, "batch_size": 1, "noise_std": 1.0},
            "positive",
        ),
        (
            gaussian.random_mask_mi,
            {"variances": [1.0], "keep_prob": 1.5, "batch_size": 1, "noise_std": 1.0},
            "keep_prob",
        ),
        (gaussian.quantised_coordinate_entropy, {"std": 1.0, "step": 1e-9}, "std / step <="),
        (gaussian.quantised_coordinate_entropy, {"std": 1.0, "step": 0.1, "unit": "dB"}, "unit"),
    ],
)
def test_invalid_parameters_raise(func, kwargs, match):
    with pytest.raises(ValueError, match=match):
        func(**kwargs)


def test_every_unit_parameter_in_bounds_defaults_to_bits():
    """One default unit across bounds (bounds/__init__.py): every ``unit=`` is "bits"."""
    import inspect

    from pruneleak.bounds import accounting, equivalence, priprune

    defaults = {
        f"{module.__name__}.{name}": inspect.signature(func).parameters["unit"].default
        for module in (gaussian, priprune, equivalence, accounting)
        for name, func in vars(module).items()
        if callable(func)
        and not name.startswith("_")
        # defined in the module or, for a package, in one of its modules
        and (getattr(func, "__module__", None) or "").startswith(module.__name__)
        and "unit" in getattr(inspect.signature(func), "parameters", {})
    }
    assert len(defaults) >= 30  # priprune and gaussian carry the unit parameters
    assert set(defaults.values()) == {"bits"}, defaults


def test_tiny_noise_mi_is_finite():
    """noise_std = 1e-300 once gave inf (s^2 underflows); the exact value is
    (1/2) sum_j log(1 + lambda_j / (B s^2)) = (1/2) sum_j (log(lambda_j / B) - 2 log s),
    up to a relative 1e-600."""
    lam, b, s = np.array([2.0, 0.5]), 4.0, 1e-300
    ref = 0.5 * np.sum(np.log(lam / b) - 2 * math.log(s)) / math.log(2)
    ours = gaussian.masked_update_mi(
        np.diag(lam), np.array([True, True]), batch_size=b, noise_std=s
    )
    assert ours == pytest.approx(ref, rel=1e-14)
    assert gaussian.random_mask_mi(lam, keep_prob=0.0, batch_size=b, noise_std=0.0) == 0.0
