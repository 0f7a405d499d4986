"""Fig. 2's claim over seeds (sims.experiments.pruning_rate_trend) on synthetic records of a
p panel whose values are set by hand."""

import math

import numpy as np
import pytest

from pruneleak.sims.experiments.pruning_rate_trend import format_trend_table, trend_rows
from pruneleak.sims.sweep import SweepConfig, job_key

CONFIG = SweepConfig(
    name="trend",
    base={"num_clients": 4, "targets": 3, "fed.clients_per_round": 4},
    grids=(
        {
            "panel": "p",
            "pruning.scheme": ["random", "snip"],
            "pruning.p": [0.3, 0.6, 0.9],
            "seed": [0, 1, 2],
        },
    ),
)
T2_975 = 0.95 * math.sqrt(2 / (1 - 0.95**2))  # t_{2, 0.975} in closed form


def _records(nmi, psnr, bits):
    """A record per job; each metric a function of (job, target client)."""
    out = []
    for job in CONFIG.jobs():
        clients = [2, 0, 1]  # the order the uploads came in: per-target values by client id
        out.append(
            {
                "key": job_key(job),
                "job": job.as_fields(),
                "d": 100,
                "clients": clients,
                **{
                    f"{name}_per_target": [f(job, c) for c in sorted(clients)]
                    for name, f in (("nmi", nmi), ("psnr", psnr), ("exact_bits", bits))
                },
            }
        )
    return out


def test_trend_verdicts_and_paired_change_by_hand():
    records = _records(
        nmi=lambda j, c: 1 - j.pruning.p + 0.1 * j.seed + 0.01 * c,  # falls by 0.6 per run
        psnr=lambda j, c: 10 + 5 * j.pruning.p * (1 + 0.1 * j.seed) + c,  # rises 3, 3.3, 3.6 dB
        bits=lambda j, c: 7.5,  # every rate leaks all the bits
    )
    rows = {(r["scheme"], r["metric"]): r for r in trend_rows(CONFIG, records)}
    assert len(rows) == 6
    nmi = rows["random", "nmi"]
    assert [p["x"] for p in nmi["points"]] == [0.3, 0.6, 0.9]
    assert nmi["change"] == pytest.approx(-0.6) and nmi["pairs"] == 9
    assert nmi["change_p"] == 0.0 and nmi["verdict"] == "holds"  # the same fall in every run
    # the rate 0.3's seed means 0.71, 0.81, 0.91: sd 0.1
    half = T2_975 * 0.1 / math.sqrt(3)
    assert nmi["points"][0]["ci"] == pytest.approx((0.81 - half, 0.81 + half))
    psnr = rows["snip", "psnr"]
    gains = np.array([3.0, 3.3, 3.6])
    half = T2_975 * gains.std(ddof=1) / math.sqrt(3)
    assert psnr["change_ci"] == pytest.approx((3.3 - half, 3.3 + half))
    assert psnr["verdict"] == "fails"
    assert rows["random", "exact_bits"]["change"] == 0.0
    assert rows["random", "exact_bits"]["verdict"] == "fails"  # no run leaks less
    text = format_trend_table(trend_rows(CONFIG, records))
    assert "holds" in text and "fails" in text and "0.810 [" in text


def test_one_seed_is_not_resolved_and_missing_metrics_are_left_out():
    records = [
        r
        for r in _records(lambda j, c: 1 - j.pruning.p, lambda j, c: 0.0, lambda j, c: None)
        if r["job"]["seed"] == 0
    ]
    rows = trend_rows(CONFIG, records)
    assert {r["metric"] for r in rows} == {"nmi", "psnr"}  # no exact bits recorded
    nmi = next(r for r in rows if r["metric"] == "nmi")
    assert nmi["change"] == pytest.approx(-0.6) and nmi["change_ci"] is None
    assert nmi["verdict"] == "not resolved at this scale"


def test_trend_figure_draws_each_interval_and_marks_the_verdict():
    import matplotlib

    matplotlib.use("Agg")
    from pruneleak.sims.plots.style import readability_problems
    from pruneleak.sims.plots.sweep import plot_trend

    records = _records(
        nmi=lambda j, c: 1 - j.pruning.p + 0.1 * j.seed + 0.01 * c,
        psnr=lambda j, c: 10.0,
        bits=lambda j, c: 7.5,
    )
    rows = trend_rows(CONFIG, records)
    fig = plot_trend(rows)
    assert len(fig.axes) == 3
    ax = fig.axes[0]
    (line,) = [x for x in ax.lines if x.get_gid() == "nmi/random"]
    assert list(line.get_ydata()) == pytest.approx([0.81, 0.51, 0.21])
    segments = [c for c in ax.collections if len(c.get_segments()) == 3]
    half = T2_975 * 0.1 / math.sqrt(3)
    ends = sorted(seg[1][1] - seg[0][1] for c in segments for seg in c.get_segments())
    assert ends[0] == pytest.approx(2 * half)  # each bar spans the interval
    assert ax.get_title() == "falls with p: 2 of 2"
    assert fig.axes[2].get_title() == "falls with p: 0 of 2"  # the bits do not fall
    assert line.get_markerfacecolor() != "white"
    (flat,) = [x for x in fig.axes[2].lines if x.get_gid() == "exact_bits/random"]
    assert flat.get_markerfacecolor() == "white"
    assert not readability_problems(fig)
