"""Coverage map of H-MINE (``papers/h-mine-quantitative-leakage-metric.txt``).

The paper numbers no equations or theorems; the rows are its displayed bound, the
algorithm's estimate, the architecture statement and the results sections.
"""

from __future__ import annotations

from pruneleak.bounds.claims.coverage.rows import checked, unchecked

_S = "hmine"

ROWS = (
    checked(_S, "Section 2.2 (Donsker-Varadhan bound)", 68, "hmine.dv_bound"),
    checked(_S, "Section 2.3 ('reduced by B times')", 82, "hmine.input_layer_reduction"),
    checked(
        _S, "Algorithm 1, line 15 (lower-bound estimate)", 126, "hmine.alg1_minibatch_lower_bound"
    ),
    unchecked(
        _S,
        "Sections 3.2-3.4 (convergence, attack validation, factors)",
        139,
        "empirical",
        "the H-MINE leakage study (sims.experiments.hmine, notebook hmine_leakage_risk)",
    ),
)
