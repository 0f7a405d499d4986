"""sims.experiments.consistency: Spearman's rho, its stratified bootstrap interval, verdicts.

References: scipy.stats.spearmanr (rho), scipy.stats.bootstrap (interval, one stratum),
a Monte Carlo coverage check against the closed-form population Spearman correlation of
a bivariate normal, rho_S = (6 / pi) arcsin(rho / 2) (Kendall and Gibbons, Rank
Correlation Methods, 5th ed., 1990, Sec. 10.3).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from pruneleak.sims.experiments.consistency import (
    _verdict,
    consistency_rows,
    format_table,
    rows_as_dicts,
    spearman_rows,
    stratified_bootstrap_spearman,
)
from pruneleak.sims.plots.sweep import plot_consistency
from pruneleak.sims.sweep import SweepConfig, job_key


def test_vectorised_spearman_equals_scipy_row_by_row():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 5, size=(20, 12)).astype(float)  # many ties
    y = x + rng.normal(size=(20, 12))
    y[3] = np.round(y[3])
    ours = spearman_rows(x, y)
    for i in range(20):
        assert ours[i] == pytest.approx(stats.spearmanr(x[i], y[i]).statistic, abs=1e-12)
    assert math.isnan(spearman_rows(np.ones(5), np.arange(5.0)))


def test_one_stratum_interval_matches_scipy_bootstrap():
    """Same statistic, same percentile method; the two resampling streams differ, so
    the ends agree to Monte Carlo error: 4000 resamples put a percentile's standard
    error near 0.01 here; tolerance 0.04."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=60)
    y = 0.5 * x + rng.normal(size=60)
    rho, low, high = stratified_bootstrap_spearman(x, y, np.zeros(60), n_resamples=4000, seed=2)
    reference = stats.bootstrap(
        (x, y),
        lambda a, b: stats.spearmanr(a, b).statistic,
        paired=True,
        vectorized=False,
        n_resamples=4000,
        method="percentile",
        random_state=3,
    ).confidence_interval
    assert rho == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert low == pytest.approx(reference.low, abs=0.04)
    assert high == pytest.approx(reference.high, abs=0.04)


def test_interval_covers_the_population_spearman_correlation():
    """200 samples of n = 80 from a bivariate normal with rho = 0.6; the 95 % percentile
    interval should cover rho_S = (6/pi) arcsin(0.3) = 0.5821 about 95 % of the time.
    Binomial sd of the coverage at 200 trials: 1.5 %; the percentile bootstrap of a
    bounded statistic under-covers slightly, hence [0.88, 0.99]."""
    rng = np.random.default_rng(4)
    truth = 6 / math.pi * math.asin(0.3)
    covered = 0
    for trial in range(200):
        z = rng.normal(size=(80, 2))
        x, y = z[:, 0], 0.6 * z[:, 0] + 0.8 * z[:, 1]
        _, low, high = stratified_bootstrap_spearman(
            x, y, np.zeros(80), n_resamples=400, seed=trial
        )
        covered += low <= truth <= high
    assert 0.88 <= covered / 200 <= 0.99


def test_resampling_keeps_each_stratum_whole():
    """x is constant inside each stratum and y falls from stratum to stratum: a resample
    that kept the strata always sees the three groups in order (rho <= -0.8), one that
    mixed them would not."""
    x = np.repeat([0.1, 0.5, 0.9], 4)
    strata = np.repeat([0, 1, 2], 4)
    y = -x + np.tile([0.0, 0.01, 0.02, 0.03], 3)
    rho, low, high = stratified_bootstrap_spearman(x, y, strata, n_resamples=300, seed=0)
    assert rho == pytest.approx(stats.spearmanr(x, y).statistic)
    assert low <= high < -0.8
    assert stratified_bootstrap_spearman(x, np.ones(12), strata) == (None, None, None)


@pytest.mark.parametrize(
    ("rho_bound", "low", "high", "verdict"),
    [
        (0.9, 0.2, 0.8, "agree"),
        (-0.9, -0.8, -0.2, "agree"),
        (0.9, -0.8, -0.2, "disagree"),
        (0.9, -0.3, 0.4, "inconclusive"),
        (0.05, 0.2, 0.8, "flat"),
        (None, 0.2, 0.8, "flat"),
        (0.9, None, None, "undefined"),
    ],
)
def test_verdicts(rho_bound, low, high, verdict):
    assert _verdict(rho_bound, low, high) == verdict


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"x": [1, 2], "y": [1, 2, 3], "strata": [0, 0]}, "same length|one length"),
        ({"x": [1], "y": [1], "strata": [0]}, "length >= 2"),
        ({"n_resamples": 0}, "n_resamples"),
        ({"confidence": 1.0}, "confidence"),
    ],
)
def test_bootstrap_rejects_bad_input(kwargs, match):
    arguments = {"x": [1, 2, 3], "y": [3, 1, 2], "strata": [0, 0, 0], **kwargs}
    with pytest.raises(ValueError, match=match):
        stratified_bootstrap_spearman(**arguments)


# --------------------------------------------------------------------------- on a sweep


def _synthetic(config: SweepConfig, leak, bound_published, bound_corrected, *, targets=6):
    """Records for ``config``'s jobs with leakage ``leak(job, k)`` per target k."""
    records = []
    for job in config.jobs():
        values = [leak(job, k) for k in range(targets)]
        records.append(
            {
                "key": job_key(job),
                "job": job.as_fields(),
                "d": 1000,
                "nmi_per_target": values,
                "psnr_per_target": [10 + 20 * v for v in values],
                "bound_published_bits": bound_published(job),
                "bound_corrected_bits": bound_corrected(job),
            }
        )
    return records


SYNTHETIC = SweepConfig(
    name="synthetic",
    grids=(
        {
            "panel": "p",
            "pruning.scheme": ["random", "snip"],
            "pruning.p": [0.1, 0.3, 0.5, 0.7, 0.9],
        },
        {"panel": "T", "pruning.scheme": ["random"], "fed.rounds": [1, 2, 4]},
    ),
)


def test_rows_read_directions_right_on_synthetic_records():
    """Leakage falls with p (noise small), the published bound rises with p and the
    corrected one falls; both rise with T while the leakage is flat noise."""
    rng = np.random.default_rng(0)
    noise = {(job_key(j), k): rng.normal(scale=0.3) for j in SYNTHETIC.jobs() for k in range(6)}

    def leak(job, k):
        jitter = noise[(job_key(job), k)]
        return 1 - job.pruning.p + 0.05 * jitter if job.fed.rounds == 1 else 0.5 + jitter

    records = _synthetic(
        SYNTHETIC,
        leak,
        lambda j: 10 * j.pruning.p + j.fed.rounds,
        lambda j: -10 * j.pruning.p + j.fed.rounds,
    )
    rows = consistency_rows(SYNTHETIC, records, panels=("p", "T"), n_resamples=500)
    pooled = {(r.panel, r.metric): r for r in rows if r.scheme == "all"}
    p_nmi = pooled[("p", "nmi")]
    assert p_nmi.parameter == "pruning.p" and p_nmi.n == 2 * 5 * 6 and p_nmi.n_configs == 10
    assert p_nmi.rho < -0.9 and p_nmi.ci_high < 0
    assert p_nmi.rho_bound_published == pytest.approx(1.0)
    assert (p_nmi.verdict_published, p_nmi.verdict_corrected) == ("disagree", "agree")
    assert pooled[("p", "psnr")].verdict_corrected == "agree"
    t_nmi = pooled[("T", "nmi")]
    assert t_nmi.rho_bound_published == pytest.approx(1.0)
    assert t_nmi.ci_low < 0 < t_nmi.ci_high and t_nmi.verdict_published == "inconclusive"
    assert {r.scheme for r in rows if r.panel == "p"} == {"all", "random", "snip"}
    table = format_table(rows, schemes=False)
    assert "disagree" in table and "snip" not in table
    assert len(rows_as_dicts(rows)) == len(rows)
    assert plot_consistency(rows).axes


@pytest.mark.parametrize(
    ("kwargs", "match"), [({"panels": ("q",)}, "panels"), ({"metrics": ("ssim",)}, "metrics")]
)
def test_rows_reject_unknown_panels_and_metrics(kwargs, match):
    with pytest.raises(ValueError, match=match):
        consistency_rows(SYNTHETIC, [], **kwargs)


def test_a_panel_with_one_x_value_has_no_rows():
    """A panel whose jobs differ only in their scheme has no axis: no trend to check (it
    used to end in a KeyError on the empty axis)."""
    config = SweepConfig(
        name="flat",
        grids=(
            {"panel": "p", "pruning.scheme": ["random", "snip"], "pruning.p": [0.5]},
            {"panel": "T", "pruning.scheme": ["random"], "fed.rounds": [1, 2]},
        ),
    )
    records = _synthetic(config, lambda job, k: 0.1 * k, lambda j: 1.0, lambda j: 1.0)
    rows = consistency_rows(config, records, panels=("p", "T"), n_resamples=50)
    assert rows and {r.panel for r in rows} == {"T"}
