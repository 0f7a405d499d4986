"""The verifier's figure (notebook verify_theorems): each claim's panel draws its deciding
check's curve, has a y label, and a legend with the curve's full labels, outside the data,
at the printed width."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.legend import Legend

from pruneleak.bounds import claims
from pruneleak.sims.plots.claims import plot_claim_curves, y_label
from pruneleak.sims.plots.style import readability_problems

#: Failing claims of every paper whose checks run in well under a second, with long
#: labels, a Monte Carlo band, log axes and a unit in MB.
IDS = (
    "priprune.mask_term_from_series",
    "priprune.mix_defense_rate",
    "priprune.eq23_prunefl",
    "huang.B5.mean_step",
    "fedltp.table3.comm_units",
    "hmine.input_layer_reduction",
)


@pytest.fixture(scope="module")
def results():
    return claims.run_claims(IDS, seed=0)


def test_each_panel_draws_its_curve_with_a_y_label_and_its_full_legend(results):
    fig = plot_claim_curves(results)
    assert readability_problems(fig) == []
    lines = {line.get_gid(): line for ax in fig.axes for line in ax.get_lines()}
    assert len(fig.axes) == len(IDS)
    legends = fig.findobj(Legend)
    shown = [t.get_text().replace("\n", " ") for legend in legends for t in legend.get_texts()]
    for result in results:
        curve = result.curve
        true = lines[f"true/{result.claim.id}"]
        np.testing.assert_array_equal(true.get_xdata(), curve.x)
        np.testing.assert_array_equal(true.get_ydata(), curve.true)
        if curve.claimed is not None:
            claimed = lines[f"claimed/{result.claim.id}"]
            np.testing.assert_array_equal(claimed.get_ydata(), curve.claimed)
        assert true.axes.get_ylabel().replace("\n", " ") == y_label(curve)
        # the labels in full (wrapped at spaces, never cut mid-word)
        assert f"true: {curve.true_label}" in shown
        if curve.claimed is not None:
            assert f"claimed: {curve.claimed_label}" in shown
    assert all(ax.get_ylabel().strip() for ax in fig.axes)
    band = [c for ax in fig.axes for c in ax.collections if c.get_gid()]
    assert [c.get_gid() for c in band] == ["true_band/priprune.mix_defense_rate"]
    plt.close(fig)


def test_y_label_names_the_unit_of_the_curve(results):
    by_id = {r.claim.id: r.curve for r in results}
    assert y_label(by_id["fedltp.table3.comm_units"]) == "claimed and true value (MB)"
    assert y_label(by_id["priprune.eq23_prunefl"]) == "claimed and true value (bits)"
    assert y_label(by_id["priprune.mask_term_from_series"]) == "claimed and true value"


def test_no_curve_is_refused():
    with pytest.raises(ValueError, match="'results' parameter of plot_claim_curves"):
        plot_claim_curves([])
