"""Coverage map of PriPrune, AAAI/arXiv version (``papers/priprune-aaai-arxiv2310.19958.txt``).

Every numbered equation, assumption, theorem, corollary and insight, and every labelled step
of the appendix "Proof of Theorem" (lines 345-460), with the line of the text file. The
unnumbered display of eq. (13)/(14) (I <= A + B, line 384) is listed where the existing
claims locate it.
"""

from __future__ import annotations

from pruneleak.bounds.claims.coverage.rows import checked, unchecked

_S = "priprune-aaai"
_ATTACK = (
    "the SGI attack study (sims.experiments.attack_model, notebook priprune_fig2_attack_study)"
)
_DEFENSE = "the defense study (sims.defenses, notebook priprune_defense)"

ROWS = (
    unchecked(
        _S, "eq. (1)", 54, "definition", "the pruned local update w_hat = (w - r grad) (.) m"
    ),
    unchecked(_S, "eq. (2)", 92, "definition", "the leakage I_i = I(D_i; {w^t (.) m^t}_t)"),
    unchecked(
        _S, "eq. (3)", 96, "definition", "the single-round leakage I(x^t; w^t (.) m^t | past)"
    ),
    unchecked(_S, "Assumption 1", 100, "definition", "premise (non-singular covariance, mean 0)"),
    unchecked(_S, "Assumption 2", 104, "definition", "premise (constant base pruning rate)"),
    checked(
        _S,
        "Theorem 1",
        110,
        "priprune.theorem1_gaussian",
        "priprune.finite_leakage",
        "priprune.theorem1_unit",
    ),
    checked(
        _S,
        "eq. (4)",
        114,
        "priprune.theorem1_gaussian",
        "priprune.theorem1_unit",
        "priprune.theorem1_assembly",
    ),
    checked(
        _S,
        "sentence after eq. (4) (monotonicity in p, B, d*)",
        118,
        "priprune.monotone_p",
        "priprune.monotone_B",
        "priprune.monotone_dstar",
    ),
    checked(_S, "Corollary 1", 120, "priprune.monotone_T", "priprune.proof_step_a"),
    checked(
        _S,
        "eq. (5)",
        124,
        "priprune.monotone_T",
        why="T times eq. (4): the single-round claims apply to each term",
    ),
    checked(_S, "footnote 1 (NMI)", 176, "priprune.nmi_chance"),
    checked(_S, "'Impact of Model Size' (Conv-2 size)", 196, "priprune.conv2_parameter_count"),
    unchecked(_S, "Insight 1", 215, "empirical", _ATTACK + " and " + _DEFENSE),
    unchecked(_S, "Insight 2", 221, "empirical", _DEFENSE + " (Pseudo-Pruning)"),
    unchecked(_S, "Insight 3", 230, "empirical", _DEFENSE + " (adaptive rate)"),
    unchecked(_S, "eq. (6)", 267, "definition", "the PriPrune loss (weights of three terms)"),
    checked(_S, "eq. (7)", 273, "priprune.gumbel_mask_probability"),
    checked(
        _S,
        "eq. (8)",
        281,
        "priprune.eq17_alpha_order",
        "priprune.eq17_uniform_layer_sparsity",
    ),
    checked(_S, "eq. (9)", 352, "priprune.eq9_mi_identity"),
    checked(_S, "proof of Theorem 1 step (a)", 357, "priprune.proof_step_a"),
    checked(_S, "proof of Theorem 1 step (b)", 358, "priprune.proof_step_b"),
    checked(_S, "proof of Theorem 1 step (c)", 361, "priprune.proof_step_c"),
    checked(_S, "proof of Theorem 1 step (d)", 365, "priprune.proof_step_d"),
    unchecked(_S, "eq. (11)", 369, "definition", "x^t, the mean of B per-sample gradients"),
    unchecked(_S, "eq. (12)", 375, "definition", "restates the single-round leakage eq. (3)"),
    checked(_S, "I <= A + B (eq. 13-14, unnumbered)", 384, "priprune.mi_le_entropies"),
    checked(_S, "eq. (15) first line (0 <= H(w, m, w (.) m))", 388, "priprune.eq15_nonnegative"),
    checked(_S, "eq. (15) step (a)", 398, "priprune.eq15_step_a"),
    checked(
        _S,
        "eq. (15) step (b)",
        399,
        "priprune.eq15_step_b",
        "priprune.taylor_series",
        "priprune.mask_entropy_dimension",
    ),
    checked(
        _S,
        "eq. (15)",
        400,
        "priprune.mask_term_bound",
        "priprune.mask_term_from_series",
    ),
    unchecked(_S, "eq. (16)", 407, "definition", "substitutes eq. (11) into part B"),
    checked(_S, "eq. (17)", 416, "priprune.eq17_scaling"),
    checked(_S, "eq. (18) and its step (a)", 428, "priprune.eq18_whitening"),
    checked(
        _S, "Gaussian entropy formula before eq. (19)", 432, "priprune.gaussian_entropy_formula"
    ),
    checked(_S, "eq. (19)", 437, "priprune.eq19_max_entropy"),
    checked(_S, "bound on part B (eq. 17-19 combined)", 439, "priprune.part_b_bound"),
    checked(_S, "'After summing part A and part B'", 444, "priprune.theorem1_assembly"),
    checked(
        _S,
        "eq. (22)",
        451,
        "priprune.monotone_T",
        "priprune.theorem1_gaussian",
        why="Corollary 1 again, with Delta written out",
    ),
    checked(_S, "eq. (23)", 456, "priprune.eq23_prunefl"),
    checked(_S, "'Defense Details' (Mix rates)", 534, "priprune.mix_defense_rate"),
)
