"""Tests of sims.experiments.width_closeness (Huang et al., arXiv:2003.01876, Section 4.4)."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

import pruneleak.sims.experiments.width_closeness as wc
from pruneleak.bounds.equivalence import epsilon_dp_theorem_e2, required_width
from pruneleak.sims.experiments.width_closeness import errors, theory

SMALL = {"sparsities": (0.1, 0.5, 0.9), "widths": (3, 10, 37), "input_dim": 7, "trials": 13}


def _stable_sort_buckets(magnitude, counts):
    """Reference for _prune_buckets: ranks from a full stable sort."""
    rank = magnitude.argsort(dim=1, stable=True).argsort(dim=1) + 1
    return torch.searchsorted(counts, rank.reshape(-1)).reshape(rank.shape)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 4),
    total=st.integers(1, 400),
    ties=st.booleans(),
    seed=st.integers(0, 2**31 - 1),
    fractions=st.lists(st.floats(0, 1), min_size=1, max_size=9),
)
def test_prune_buckets_match_a_stable_sort(n, total, ties, seed, fractions):
    gen = torch.Generator().manual_seed(seed)
    if ties:  # few distinct values: ties are broken by position, as magnitude_mask does
        magnitude = torch.randint(0, 4, (n, total), generator=gen).float() / 3
    else:
        magnitude = torch.randn(n, total, generator=gen).abs()
    counts = torch.tensor(sorted(round(f * total) for f in fractions))
    torch.testing.assert_close(
        errors._prune_buckets(magnitude, counts),
        _stable_sort_buckets(magnitude, counts),
        rtol=0,
        atol=0,
    )


@pytest.mark.parametrize(
    ("dtype", "rtol", "atol"),
    # float64: the two codes differ only in summation order over d = 7 terms (~1e-15).
    # float32: same draws, summation order differs: a few ulps (6e-8) of the O(1) terms
    # Ax, A~x, which cancel in h - g: hence an absolute 1e-6 besides the relative 2e-5.
    [("float64", 1e-12, 0.0), ("float32", 2e-5, 1e-6)],
)
@pytest.mark.parametrize("bias", [0.0, 0.3, -0.3])
@pytest.mark.parametrize("reading", ["pruned", "kept"])
def test_vectorised_errors_equal_the_per_trial_loop(monkeypatch, dtype, rtol, atol, bias, reading):
    # Small blocks so that several blocks (and a ragged last one) are exercised.
    monkeypatch.setattr(errors, "_BLOCK_ELEMENTS", 300)
    config = wc.WidthClosenessConfig(
        **SMALL, dtype=dtype, bias=bias, sparsity_reading=reading, device="cpu", seed=5
    )
    for m in config.widths:
        fast = wc.closeness_errors(config, m)
        slow = wc.closeness_errors_reference(config, m)
        assert fast.shape == (len(wc.PARAMETERISATIONS), config.trials, 3)
        torch.testing.assert_close(fast, slow, rtol=rtol, atol=atol)


def _pruned_second_moment(count: int, total: int) -> float:
    """E[Z^2 1{Z pruned}] for one of ``total`` i.i.d. N(0, 1) entries when the ``count``
    smallest in magnitude are pruned: an entry of magnitude t is pruned iff at most
    count - 1 of the other total - 1 lie below t, so by quadrature
    int_0^inf t^2 2 phi(t) P[Bin(total - 1, 2 Phi(t) - 1) <= count - 1] dt."""
    a = stats.norm.ppf((1 + count / total) / 2)

    def integrand(t):
        below = stats.binom.cdf(count - 1, total - 1, 2 * stats.norm.cdf(t) - 1)
        return t**2 * 2 * stats.norm.pdf(t) * below

    return integrate.quad(integrand, 0, 12, points=[a], limit=200, epsabs=1e-13)[0]


@pytest.mark.parametrize(
    ("bias", "noise_factor", "max_se", "rtol"),
    [
        # b << 0: both ReLUs are off, h - g = e = L o (A~ - A)x, E L^2 = 1 + 2 sigma^2.
        (-50.0, lambda s: 1 + 2 * s**2, 0.005, 0.025),
        # b >> 0: both ReLUs are on (linear), h - g = e - (A~ - A)x, E (L - 1)^2 = 2 sigma^2.
        (50.0, lambda s: 2 * s**2, 0.008, 0.04),
    ],
    ids=["relu_off", "relu_on"],
)
def test_mean_square_error_matches_the_closed_form(bias, noise_factor, max_se, rtol):
    """E[err^2] = sigma_A^2 noise_factor(sigma) E[Z^2 1{Z pruned}]: rows of (A~ - A)x have
    E[(A~ - A)x]_i^2 = sigma_A^2 E[Z^2 1{pruned}] sum_j x_j^2 (cross terms vanish by sign
    symmetry, sum_j x_j^2 = 1). |Ax| < 50 fails with probability < 1e-500, so the ReLU
    regime is certain."""
    sigma, sigma_a, m, d = 0.5, 0.7, 200, 50
    config = wc.WidthClosenessConfig(
        sparsities=(0.1, 0.5, 0.9),
        widths=(m,),
        input_dim=d,
        trials=2000,
        parameterisations=("fixed",),
        sigma=sigma,
        sigma_a=sigma_a,
        bias=bias,
        dtype="float64",
        device="cpu",
        seed=11,
    )
    squares = wc.closeness_errors(config, m)[0].square().numpy()  # (trials, K)
    expected = np.array(
        [
            sigma_a**2 * noise_factor(sigma) * _pruned_second_moment(c, m * d)
            for c in config.prune_counts(m)
        ]
    )
    # The per-trial err^2 averages m = 200 rows of L^2 v^2 resp. (L - 1)^2 v^2 (E xi^4 = 24
    # makes the latter heavier). Measured relative standard errors of the mean over 2000
    # trials: 0.39-0.49% (off) and 0.63-0.79% (on), largest at k = 0.1 where a row prunes
    # only ~5 entries; the guard keeps them below max_se, and rtol = 5 max_se.
    standard_error = squares.std(axis=0, ddof=1) / math.sqrt(config.trials) / squares.mean(axis=0)
    assert np.all(standard_error < max_se)
    np.testing.assert_allclose(squares.mean(axis=0), expected, rtol=rtol)


def test_same_seed_same_numbers_and_dtype_independent_draws():
    base = wc.WidthClosenessConfig(**SMALL, device="cpu", seed=3)
    first = wc.closeness_errors(base, 10)
    torch.testing.assert_close(first, wc.closeness_errors(base, 10), rtol=0, atol=0)
    other = wc.closeness_errors(wc.WidthClosenessConfig(**SMALL, device="cpu", seed=4), 10)
    assert not torch.allclose(first, other)
    double = wc.closeness_errors(
        wc.WidthClosenessConfig(**SMALL, device="cpu", seed=3, dtype="float64"), 10
    )
    # Same float32 draws, computed in float64: agreement to float32 rounding.
    torch.testing.assert_close(first.double(), double, rtol=2e-5, atol=0)


def test_errors_scale_with_sigma_a_when_bias_is_zero():
    """ReLU is positively homogeneous: at b = 0 the error is proportional to sigma_A."""
    common = dict(SMALL, parameterisations=("fixed",), device="cpu", dtype="float64", sigma=2.0)
    one = wc.closeness_errors(wc.WidthClosenessConfig(**common, sigma_a=1.0), 10)
    three = wc.closeness_errors(wc.WidthClosenessConfig(**common, sigma_a=3.0), 10)
    torch.testing.assert_close(three, 3 * one, rtol=1e-12, atol=0)


def test_noise_parameters_follow_the_paper():
    config = wc.WidthClosenessConfig(sigma=0.3, sigma_a=0.2)
    assert config.noise_parameters("fixed", 50) == (0.3, 0.2)
    # Remark E.3: sigma = m (folded, E.2) or m^2 (Gaussian, E.1), sigma_A = 1 / sigma.
    assert config.noise_parameters("remark_e3_folded", 50) == (50.0, 1 / 50)
    assert config.noise_parameters("remark_e3_gaussian", 50) == (2500.0, 1 / 2500)
    # Theorem 3.2: sigma_A = eps_dp delta_dp / m^2.
    assert config.noise_parameters("theorem_3_2", 50)[1] == pytest.approx(0.05 / 2500, rel=1e-15)
    for name in ("calibrated", "theorem_3_2"):
        sigma, sigma_a = config.noise_parameters(name, 50)
        eps = epsilon_dp_theorem_e2(sigma, sigma_a, 50, config.input_dim, config.delta_dp)
        assert eps == pytest.approx(0.5, rel=1e-12)


def test_first_width_below_reproduces_figure_8_highlights():
    # Read off the Figure 8 table (PAPER_FIG8_ERROR): first m with error <= 0.05 and 0.01.
    np.testing.assert_array_equal(
        wc.first_width_below(wc.PAPER_FIG8_ERROR, wc.PAPER_WIDTHS, 0.05),
        [20, 20, 20, 20, 20, 20, 20, 10, 10],
    )
    np.testing.assert_array_equal(
        wc.first_width_below(wc.PAPER_FIG8_ERROR, wc.PAPER_WIDTHS, 0.01),
        [1500, 1500, 1500, 1500, 1500, 1500, 1000, 500, 500],
    )
    assert np.isinf(wc.first_width_below(wc.PAPER_FIG8_ERROR, wc.PAPER_WIDTHS, 0.001)).all()


def test_trend_summary_of_figure_8_decreases_in_m_and_k():
    trend = wc.trend_summary(wc.PAPER_FIG8_ERROR)
    assert trend["in_m"] < -0.9
    assert trend["in_k"] < -0.5
    increasing = wc.trend_summary(np.arange(6.0).reshape(2, 3))
    assert increasing == pytest.approx({"in_m": 1.0, "in_k": 1.0}, abs=1e-12)


def test_smallest_width_search():
    assert theory._smallest_width(lambda m: m >= 12_345) == 12_345
    assert theory._smallest_width(lambda m: True) == 1
    assert theory._smallest_width(lambda m: False) == math.inf
    # Holds at small m, fails in between, holds again (the shape of Part 2's condition).
    assert theory._smallest_width(lambda m: m < 5 or m >= 777) == 777


@pytest.mark.parametrize(
    ("sigma", "k", "eps"),
    # required_width: 5.6e9, 1.0e11, 5.3e11 and 1.0e13 (beyond the 1e12 cap of the search).
    [(1e-4, 0.1, 0.05), (1e-6, 0.1, 0.01), (1e-6, 0.5, 0.05), (1e-4, 0.1, 0.01)],
)
def test_theory_width_matches_required_width_for_fixed_parameters(sigma, k, eps):
    """The grid-and-bisection search against bounds.equivalence's Brent solution."""
    config = wc.WidthClosenessConfig(sigma=sigma, sigma_a=1.0)
    a = wc.threshold_for_fraction(k, 1.0)
    assert stats.norm.cdf(a) - stats.norm.cdf(-a) == pytest.approx(k, rel=1e-12)
    expected = required_width(eps, config.delta_ap, a=a, sigma=sigma, sigma_a=1.0)
    if expected > theory._THEORY_WIDTH_CAP:
        expected = math.inf
    assert wc.theory_width(config, "fixed", k, eps) == expected


def test_corrected_theory_width_is_infinite_under_remark_e3():
    """sigma sigma_A = 1: the mean 2 sigma^2 E(A-bar x)^2 = 2 E[Z^2 1{|Z|<=a}] > eps^2."""
    config = wc.WidthClosenessConfig()
    assert wc.theory_width(config, "remark_e3_folded", 0.5, 0.05, corrected=True) == math.inf
    assert math.isfinite(wc.theory_width(config, "theorem_3_2", 0.5, 0.05, corrected=True))


def test_run_covers_the_grid_with_the_parameterisations_scales():
    config = wc.WidthClosenessConfig(trials=4, input_dim=5, device="cpu")
    result = wc.run_width_closeness(config, progress=False)
    P, K, M = len(wc.PARAMETERISATIONS), 9, 8
    assert result.errors.shape == (P, 4, K, M)
    assert np.all(np.isfinite(result.errors)) and np.all(result.errors >= 0)
    # Remark E.3 (folded): sigma = m, sigma_A = 1 / m
    np.testing.assert_array_equal(result.sigma[1], np.asarray(config.widths, dtype=float))
    np.testing.assert_allclose(result.sigma_a[1], 1 / np.asarray(config.widths), rtol=1e-15)


def _constructed_result(errors):
    """A result on the paper grid with the given errors (trials, 9, 8) of ``"fixed"``."""
    errors = np.asarray(errors, dtype=float)
    config = wc.WidthClosenessConfig(trials=errors.shape[0], parameterisations=("fixed",))
    ones = np.ones((1, len(config.widths)))
    return wc.WidthClosenessResult(config, errors[None], sigma=ones, sigma_a=ones)


def test_paper_comparison_of_figure_8_itself():
    cmp = _constructed_result(np.stack([wc.PAPER_FIG8_ERROR] * 2)).paper_comparison("fixed")
    np.testing.assert_allclose(cmp["ratio"], 1.0, rtol=1e-15)
    assert cmp["reproduces_trend_in_m"] and cmp["reproduces_trend_in_k"]
    # Read off the table: every k is <= 0.05 at m = 20 and <= 0.01 at m = 1500 (k <= 0.8)
    # resp. m = 500 (k = 0.9), so the published table supports both claims.
    for eps in (0.05, 0.01):
        claim = cmp["claims"][eps]
        assert claim["holds"] and claim["holds_at_1500"]
        np.testing.assert_array_equal(claim["first_width_mean"], claim["paper_first_width"])


def test_paper_comparison_flags_a_claim_broken_at_one_cell_and_a_reversed_trend():
    table = wc.PAPER_FIG8_ERROR.copy()
    table[8, 5] = 0.011  # k = 0.9 at its claimed m = 500, just above eps_ap = 0.01
    cmp = _constructed_result(table[None]).paper_comparison("fixed")
    assert not cmp["claims"][0.01]["holds"] and cmp["claims"][0.01]["holds_at_1500"]
    assert cmp["claims"][0.01]["first_width_mean"][8] == 1000  # 0.0056 at m = 1000
    assert cmp["claims"][0.05]["holds"]
    growing = _constructed_result(wc.PAPER_FIG8_ERROR[None, :, ::-1]).paper_comparison("fixed")
    assert not growing["reproduces_trend_in_m"] and growing["reproduces_trend_in_k"]


def test_trial_summaries_against_a_direct_count():
    per_trial = np.array([0.01, 0.03, 0.07, 0.09, 0.2])
    scale = np.outer(np.arange(1, 10), 1 / np.arange(1, 9))  # (9, 8): k (j + 1) / (i + 1)
    result = _constructed_result(per_trial[:, None, None] * scale)
    for j, i in [(0, 0), (4, 3), (8, 7)]:
        values = per_trial * scale[j, i]
        assert result.delta_ap("fixed", 0.05)[j, i] == np.mean(values > 0.05)
        assert result.mean("fixed")[j, i] == pytest.approx(values.mean(), rel=1e-14)
        assert result.std("fixed")[j, i] == pytest.approx(values.std(ddof=1), rel=1e-14)
        assert result.quantile("fixed", 0.5)[j, i] == pytest.approx(values[2], rel=1e-14)
    # k = 0.1, eps_ap = 0.06: trials above it are 3/5, 1/5, 1/5, 0 at m = 10, 20, 50, 100,
    # so delta_ap <= 0.1 first at m = 100; the mean 0.08 / (i + 1) is <= 0.06 from m = 20
    assert result.empirical_width("fixed", 0.06, criterion="delta")[0] == 100
    assert result.empirical_width("fixed", 0.06)[0] == 20
    assert np.isinf(result.empirical_width("fixed", 0.001, criterion="delta")[0])
    rows = result.table()
    rows = rows[(rows["eps_ap"] == 0.05) & (rows["sparsity"] == 0.5) & (rows["width"] == 100)]
    assert rows["mean"][0] == pytest.approx((per_trial * scale[4, 3]).mean(), rel=1e-14)


def test_paper_comparison_needs_the_paper_grid():
    result = wc.run_width_closeness(wc.WidthClosenessConfig(**SMALL, device="cpu"))
    with pytest.raises(ValueError, match="paper's grid"):
        result.paper_comparison("fixed")


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("sparsities", (0.5, 0.1), "strictly increasing"),
        ("sparsities", (0.0, 0.5), r"'sparsities'.*\(0, 1\)"),
        ("sparsities", (), "strictly increasing"),
        ("widths", (10, 0), "'widths'"),
        ("widths", (2.5,), "'widths'"),
        ("input_dim", 0, "'input_dim'"),
        ("trials", 0, "'trials'"),
        ("parameterisations", ("fixed", "fixed"), "each once"),
        ("parameterisations", ("made_up",), "'parameterisations'"),
        ("sigma", 0.0, "'sigma'"),
        ("sigma_a", -1.0, "'sigma_a'"),
        ("eps_dp", float("nan"), "'eps_dp'"),
        ("delta_dp", 1.0, "'delta_dp'"),
        ("delta_ap", 0.0, "'delta_ap'"),
        ("eps_ap", (0.05, -0.01), "'eps_ap'"),
        ("eps_ap", (), "'eps_ap'"),
        ("bias", float("inf"), "'bias'"),
        ("sparsity_reading", "zeros", "'sparsity_reading'"),
        ("seed", -1, "'seed'"),
        ("dtype", "float16", "'dtype'"),
    ],
)
def test_config_rejects_bad_values(field, value, match):
    with pytest.raises(ValueError, match=match):
        wc.WidthClosenessConfig(**{field: value})


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: wc.closeness_errors({"trials": 3}, 10), "WidthClosenessConfig"),
        (lambda: wc.closeness_errors(wc.WidthClosenessConfig(), 0), "'m'"),
        (lambda: wc.run_width_closeness(None), "WidthClosenessConfig"),
        (lambda: wc.first_width_below(np.ones((2, 3)), (1, 2), 0.1), "shape"),
        (lambda: wc.threshold_for_fraction(1.0, 1.0), "'fraction'"),
        (lambda: wc.theory_width(wc.WidthClosenessConfig(), "fixed", 0.5, 0.0), "'eps_ap'"),
        (lambda: wc.WidthClosenessConfig().noise_parameters("other", 10), "'parameterisation'"),
    ],
    ids=["config", "m", "run", "shape", "fraction", "eps_ap", "parameterisation"],
)
def test_functions_reject_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_figure8_heat_maps_have_colour_bars_and_readable_annotations():
    """Every heat map of the Figure 8 comparison has its colour bar, every cell its value
    at 8 pt or more (the table's value, formatted), and the boxes mark the first width
    below each eps_ap; one map per row at the printed width."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgba

    from pruneleak.sims.plots.style import MIN_FONT_PT, readability_problems
    from pruneleak.sims.plots.width_closeness import (
        plot_width_closeness,
        plot_width_closeness_calibrated,
    )

    config = wc.WidthClosenessConfig(trials=3, widths=wc.PAPER_WIDTHS, device="cpu")
    result = wc.run_width_closeness(config, progress=False)
    fig = plot_width_closeness(result)
    assert readability_problems(fig) == []
    maps = [ax for ax in fig.axes if ax.get_gid()]
    assert [ax.get_gid() for ax in maps][:2] == ["paper, Figure 8", maps[1].get_gid()]
    assert len(maps) == 6 and len(fig.axes) == 12  # six maps, six colour bars
    columns = [config.widths.index(m) for m in wc.PAPER_WIDTHS]
    tables = [wc.PAPER_FIG8_ERROR]
    names = ("fixed", "remark_e3_folded", "remark_e3_gaussian", "theorem_3_2")
    tables += [result.mean(n)[:, columns] for n in names]
    tables.append(result.mean("theorem_3_2")[:, columns] / wc.PAPER_FIG8_ERROR)
    for ax, table in zip(maps, tables, strict=True):
        mesh = ax.collections[0]
        assert mesh.colorbar is not None and mesh.colorbar.ax.get_ylabel()
        texts = list(ax.texts)
        assert [t.get_text() for t in texts] == [f"{v:.2g}" for v in np.ravel(table)]
        assert min(t.get_fontsize() for t in texts) >= MIN_FONT_PT
    # the boxes of the paper's map: the first width below each eps_ap, per sparsity
    boxes = {(p.get_edgecolor(), p.get_xy()) for p in maps[0].patches}
    for eps, colour in zip(wc.PAPER_EPS_AP, ("tab:blue", "tab:green"), strict=True):
        first = wc.first_width_below(wc.PAPER_FIG8_ERROR, wc.PAPER_WIDTHS, eps)
        want = {(to_rgba(colour), (list(wc.PAPER_WIDTHS).index(m), row))
                for row, m in enumerate(first) if np.isfinite(m)}  # fmt: skip
        assert want <= {(tuple(c), tuple(xy)) for c, xy in boxes}
    plt.close(fig)
    fig = plot_width_closeness_calibrated(result)
    assert readability_problems(fig) == []
    assert len(fig.axes) == 6
    plt.close(fig)
