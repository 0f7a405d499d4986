"""Coverage map of PriPrune, journal version (``papers/priprune-journal-version.txt``).

The journal prints Theorem 1 as Theorem 4.1 (eq. 6) and Corollary 1 as Corollary 4.2
(eq. 15), the proof of part A/B in the main text (eq. 7-14) and the multi-round chain in
Appendix A (eq. 20-25); equations 19 and 21 carry no number in the text file. The rows
point to the same claims as the AAAI version's where the statement is the same.
"""

from __future__ import annotations

from pruneleak.bounds.claims.coverage.rows import checked, unchecked

_S = "priprune-journal"
_ATTACK = (
    "the SGI attack study (sims.experiments.attack_model, notebook priprune_fig2_attack_study)"
)
_DEFENSE = "the defense study (sims.defenses, notebook priprune_defense)"

ROWS = (
    unchecked(_S, "eq. (1)", 336, "definition", "the pruned local update (AAAI eq. 1)"),
    checked(_S, "eq. (2)", 506, "priprune.eq9_mi_identity"),
    unchecked(_S, "eq. (3)", 549, "definition", "the leakage I_i (AAAI eq. 2)"),
    unchecked(_S, "Assumption 1", 572, "definition", "premise (non-singular covariance, mean 0)"),
    unchecked(_S, "Assumption 2", 627, "definition", "premise (constant pruning rate)"),
    checked(
        _S,
        "eq. (4)",
        654,
        "priprune.proof_step_a",
        "priprune.proof_step_b",
        "priprune.proof_step_c",
        "priprune.proof_step_d",
        why="the chain of Appendix A, eq. (20), summarised",
    ),
    unchecked(_S, "eq. (5)", 704, "definition", "the single-round leakage (AAAI eq. 3)"),
    checked(
        _S,
        "Theorem 4.1",
        712,
        "priprune.theorem1_gaussian",
        "priprune.finite_leakage",
        "priprune.theorem1_unit",
    ),
    checked(
        _S,
        "eq. (6)",
        725,
        "priprune.theorem1_gaussian",
        "priprune.theorem1_unit",
        "priprune.theorem1_assembly",
    ),
    checked(_S, "eq. (7)", 800, "priprune.mi_le_entropies"),
    checked(_S, "eq. (8)", 838, "priprune.eq15_nonnegative"),
    checked(
        _S,
        "eq. (9)",
        927,
        "priprune.eq15_step_a",
        "priprune.eq15_step_b",
        "priprune.taylor_series",
        "priprune.mask_term_bound",
        "priprune.mask_term_from_series",
        "priprune.mask_entropy_dimension",
    ),
    unchecked(_S, "eq. (10)", 956, "definition", "substitutes x^t into part B (AAAI eq. 16)"),
    checked(_S, "eq. (11)", 1020, "priprune.eq17_scaling"),
    checked(_S, "eq. (12)", 1176, "priprune.eq18_whitening"),
    checked(
        _S,
        "eq. (13)",
        1204,
        "priprune.eq19_max_entropy",
        "priprune.gaussian_entropy_formula",
    ),
    checked(_S, "eq. (14)", 1228, "priprune.part_b_bound", "priprune.theorem1_assembly"),
    checked(_S, "Corollary 4.2", 1319, "priprune.monotone_T", "priprune.proof_step_a"),
    checked(_S, "eq. (15)", 1337, "priprune.monotone_T"),
    checked(
        _S,
        "Theorem 1 (bullet naming Theorem 4.1)",
        1375,
        "priprune.theorem1_gaussian",
        why="the journal's discussion calls Theorem 4.1 'Theorem 1'",
    ),
    checked(_S, "Section 4.2.1 (NMI)", 1405, "priprune.nmi_chance"),
    unchecked(_S, "Insight 1", 1635, "empirical", _ATTACK + " and " + _DEFENSE),
    unchecked(_S, "Insight 2", 1663, "empirical", _DEFENSE + " (Pseudo-Pruning)"),
    unchecked(_S, "Insight 3", 1743, "empirical", _DEFENSE + " (adaptive rate)"),
    unchecked(_S, "eq. (16)", 1766, "definition", "the PriPrune loss (AAAI eq. 6)"),
    checked(
        _S,
        "eq. (17)",
        1840,
        "priprune.eq17_alpha_order",
        "priprune.eq17_uniform_layer_sparsity",
    ),
    checked(_S, "eq. (18)", 1912, "priprune.gumbel_mask_probability"),
    checked(
        _S,
        "eq. (20) (steps (a)-(d))",
        2393,
        "priprune.proof_step_a",
        "priprune.proof_step_b",
        "priprune.proof_step_c",
        "priprune.proof_step_d",
    ),
    checked(_S, "eq. (22)", 2625, "priprune.eq18_whitening"),
    checked(_S, "eq. (23)", 2671, "priprune.eq19_max_entropy"),
    checked(_S, "eq. (24)", 2712, "priprune.part_b_bound"),
    checked(_S, "eq. (25)", 2837, "priprune.eq23_prunefl"),
)
