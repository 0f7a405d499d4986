"""The sweep's figures read at their printed size and show what the records hold: the
panels of one metric per scheme (equal schemes visible side by side and said to be
equal, a constant leakage drawn as constant), and the consistency forest plot (every
scheme in the legend, nothing off the page)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.legend import Legend

from pruneleak.sims.experiments.consistency import consistency_rows
from pruneleak.sims.plots.style import readability_problems
from pruneleak.sims.plots.sweep import plot_consistency, plot_panels
from pruneleak.sims.sweep import SweepConfig, job_key
from pruneleak.sims.sweep.panels import panel_rows

SCHEMES = ["random", "snip", "synflow"]
CONFIG = SweepConfig(
    name="figures",
    grids=(
        {"panel": "p", "pruning.scheme": SCHEMES, "pruning.p": [0.3, 0.6, 0.9]},
        {"panel": "B", "pruning.scheme": SCHEMES, "fed.batch_size": [1, 2, 4]},
        {"panel": "T", "pruning.scheme": SCHEMES, "fed.rounds": [1, 2, 4]},
    ),
)
CEILING = 8.49


def _records():
    """Exact bits at the ceiling log2 N for every scheme (constant in p, growing with B as
    N does); Fano bits that differ by scheme and rise with p; NMI falling with p."""
    rng = np.random.default_rng(0)
    records = []
    for job in CONFIG.jobs():
        b, p = job.fed.batch_size, job.pruning.p
        ceiling = CEILING * b
        offset = SCHEMES.index(job.pruning.scheme)
        records.append(
            {
                "key": job_key(job),
                "job": job.as_fields(),
                "d": 1000,
                "nmi_per_target": list(0.9 - 0.5 * p + 0.01 * rng.normal(size=2)),
                "nmi_chance": 0.6,
                "exact_bits_per_target": [ceiling, ceiling],
                "leakage_secrets_log2": [ceiling, ceiling],
                "fano_bits_per_target": [0.1 * offset + p, 0.1 * offset + p + 0.02],
                "bound_published_bits": 10 * p + b,
                "bound_corrected_bits": -10 * p + b,
            }
        )
    return records


def _scheme_lines(fig) -> dict[str, tuple[object, list, list]]:
    found = {}
    for ax in fig.axes:
        for line in ax.get_lines():
            if line.get_gid():
                found[(ax.get_title(), line.get_gid())] = (ax, list(line.get_xdata()),
                                                           list(line.get_ydata()))  # fmt: skip
    return found


def test_panels_of_equal_constant_schemes_show_each_scheme_and_say_they_are_equal():
    records = _records()
    fig = plot_panels(CONFIG, records, ["p", "B"], metric="exact_bits")
    assert readability_problems(fig) == []
    lines = _scheme_lines(fig)
    for panel in ("p", "B"):
        rows = [r for r in panel_rows(CONFIG, records, panel, metric="exact_bits")]
        for scheme in SCHEMES:
            mine = [r for r in rows if r["scheme"] == scheme]
            ax, xs, ys = lines[(f"panel {panel}", f"exact_bits/{scheme}")]
            assert xs == [r["x"] for r in mine] and ys == [r["exact_bits"] for r in mine]
        # a constant series is drawn from 0: no autoscaled zoom into a flat line
        low, high = ax.get_ylim()
        assert low == 0 and high >= max(r["ceiling_bits"] for r in rows)
        # the equal schemes stand side by side (a few points apart), not on top
        fig.canvas.draw()
        at = {
            round(float(line.get_transform().transform((line.get_xdata()[0], 0))[0]), 2)
            for line in ax.get_lines()
            if line.get_gid() in {f"exact_bits/{s}" for s in SCHEMES}
        }
        assert len(at) == len(SCHEMES)
        notes = [t.get_text() for t in ax.texts if t.get_gid() == "equal_note"]
        expected = "all 3 schemes equal: 8.49 bits (the ceiling)" if panel == "p" else None
        assert notes == ([expected] if expected else ["all 3 schemes equal (the ceiling)"])
        assert ax.get_yscale() == "linear"
    (legend,) = fig.legends
    assert {t.get_text() for t in legend.get_texts()} == {*SCHEMES, "ceiling log2 N"}
    assert len({ax.get_title() for ax in fig.axes}) == 2  # short, distinct titles
    plt.close(fig)


def test_panels_of_different_schemes_have_no_equality_note_and_titles_that_do_not_collide():
    fig = plot_panels(CONFIG, _records(), ["p", "B", "T"], metric="fano_bits")
    assert readability_problems(fig) == []  # three panels: two to a row, short titles
    assert not [t for ax in fig.axes for t in ax.texts if t.get_gid() == "equal_note"]
    assert [ax.get_title() for ax in fig.axes if ax.get_visible()] == [
        "panel p",
        "panel B",
        "panel T",
    ]
    plt.close(fig)


def test_consistency_plot_names_every_scheme_even_one_missing_from_the_first_panel():
    records = _records()
    rows = consistency_rows(CONFIG, records, panels=("p", "B"), n_resamples=200)
    # exact bits are constant in p for every scheme: no rho there, for anyone
    assert all(r.rho is None for r in rows if r.metric == "exact_bits" and r.panel == "p")
    fig = plot_consistency(rows, metric="exact_bits")
    assert readability_problems(fig) == []
    texts = {t.get_text() for legend in fig.findobj(Legend) for t in legend.get_texts()}
    assert {*SCHEMES, "all schemes pooled", "bound as published", "bound corrected"} <= texts
    (ax,) = fig.axes
    drawn = {line.get_gid(): line for line in ax.get_lines() if line.get_gid()}
    for scheme in SCHEMES:  # the B panel only: one point each, at its rho
        xs = drawn[f"rho/{scheme}"].get_xdata()
        assert len(xs) == 1 and 0.5 < xs[0] < 1.5
    assert [t.get_text() for t in ax.texts if t.get_gid() == "undefined/p"]
    plt.close(fig)


@pytest.mark.parametrize("metric", ["nmi", "fano_bits"])
def test_scheme_colours_agree_between_panels_and_consistency(metric):
    records = _records()
    panels = plot_panels(CONFIG, records, ["p", "B"], metric=metric)
    rows = consistency_rows(CONFIG, records, panels=("p", "B"), n_resamples=200)
    forest = plot_consistency(rows, metric=metric)
    in_panels = {
        line.get_gid().split("/")[1]: line.get_color()
        for ax in panels.axes
        for line in ax.get_lines()
        if line.get_gid() and line.get_gid().startswith(f"{metric}/")
    }
    in_forest = {
        line.get_gid().split("/")[1]: line.get_color()
        for line in forest.axes[0].get_lines()
        if line.get_gid() and line.get_gid().startswith("rho/") and "all" not in line.get_gid()
    }
    assert in_forest and all(in_forest[s] == in_panels[s] for s in in_forest)
    plt.close(panels)
    plt.close(forest)


def _floor_line(fig):
    (ax,) = [a for a in fig.axes if a.get_title() == "panel p"]
    return {line.get_gid(): line for line in ax.get_lines() if line.get_gid()}


def test_the_nmi_panel_draws_the_permutation_floor_of_the_records():
    """Records with a permutation floor (0.2 + 0.1 p, the mean over schemes at each p):
    the dashed reference is that floor, at each p, and no uniform-noise line is drawn."""
    records = [
        {**r, "nmi_permutation_floor": 0.2 + 0.1 * r["job"]["pruning.p"]} for r in _records()
    ]
    fig = plot_panels(CONFIG, records, ["p"], metric="nmi")
    lines = _floor_line(fig)
    assert "nmi_chance" not in lines
    floor = lines["nmi_permutation_floor"]
    np.testing.assert_allclose(floor.get_xdata(), [0.3, 0.6, 0.9])
    np.testing.assert_allclose(floor.get_ydata(), [0.23, 0.26, 0.29])
    assert "shuffled" in floor.get_label()
    plt.close(fig)


def test_records_without_a_floor_show_the_uniform_noise_reference_named_as_such():
    fig = plot_panels(CONFIG, _records(), ["p"], metric="nmi")
    line = _floor_line(fig)["nmi_chance"]
    np.testing.assert_allclose(line.get_ydata(), [0.6, 0.6, 0.6])
    assert line.get_label() == "NMI against uniform noise"
    plt.close(fig)
