"""Coverage map of Huang et al. (``papers/huang-pruning-as-dp-noise-arxiv2003.01876.txt``).

The paper numbers no equations; the rows are its definitions, theorems, lemmas, claims and
remarks (main text and appendices A-E), the labelled parts of their proofs, Table 1 and the
numerical statements of Sections 4.1 and 4.4.
"""

from __future__ import annotations

from pruneleak.bounds.claims.coverage.rows import checked, unchecked

_S = "huang"
_CONSTANT = (
    "a cited theorem whose universal constant the paper leaves unnamed and no step of the "
    "paper uses numerically"
)

ROWS = (
    unchecked(_S, "Definition 2.1", 73, "definition", "(eps_dp, delta_dp)-differential privacy"),
    unchecked(_S, "Definition 2.2", 106, "definition", "global sensitivity GS_p"),
    unchecked(_S, "Definition 3.1", 124, "definition", "(eps_ap, delta_ap)-closeness"),
    unchecked(
        _S,
        "Theorem 3.2",
        132,
        "out-of-scope",
        "the informal version of Theorem E.2 (m = Omega(poly(...)) without constants); its "
        "parts are checked as Claims 3.3 and 3.4 and Theorem E.2's proof",
    ),
    checked(_S, "Claim 3.3", 149, "huang.E2.part1", "huang.E2.abar_sign"),
    checked(_S, "Claim 3.4", 151, "huang.E2.part2_closeness", "huang.E2.part2_max"),
    checked(_S, "Section 4.1 (gradual pruning schedule)", 182, "huang.sec4_1.gradual_pruning"),
    checked(
        _S,
        "Section 4.4 and Figure 8",
        287,
        "huang.sec4_4.figure8",
        "huang.sec4_4.budget",
    ),
    checked(_S, "Lemma A.1", 423, "huang.A1.upper", "huang.A1.lower"),
    checked(_S, "Lemma A.2", 430, "huang.A2"),
    checked(_S, "Lemma A.3", 436, "huang.A3"),
    checked(_S, "Lemma A.4", 442, "huang.A4"),
    checked(_S, "Lemma A.5", 446, "huang.A5"),
    checked(_S, "Lemma A.6", 452, "huang.A6"),
    checked(_S, "Lemma A.7", 458, "huang.A7.expectation", "huang.A7.tail"),
    checked(_S, "Lemma B.1", 478, "huang.B1", "huang.B1.proof_t"),
    checked(_S, "Lemma B.2", 510, "huang.B2", "huang.B2.proof_t", "huang.B2.moments"),
    checked(_S, "Lemma B.3", 562, "huang.B3"),
    checked(_S, "Lemma B.4", 600, "huang.B4", "huang.B4.proof_norm", "huang.B4.proof_inf"),
    checked(
        _S,
        "Lemma B.5",
        640,
        "huang.B5.mean_step",
        "huang.B5.mean",
        "huang.B5.second_moment_step",
        "huang.B5.second_moment",
        "huang.B5.constant_C",
        "huang.B5.part2",
    ),
    checked(_S, "Theorem C.1", 712, "huang.C1"),
    unchecked(_S, "Theorem C.2", 720, "out-of-scope", "Carbery-Wright: " + _CONSTANT),
    checked(_S, "Lemma C.3", 728, "huang.C3"),
    checked(_S, "Lemma C.3 proof (Theorem C.5 applied to mu)", 752, "huang.C3.proof_law"),
    checked(
        _S,
        "Lemma C.3 proof (int |p|^2 d mu = sum alpha_i^2 Var)",
        756,
        "huang.C3.proof_second_moment",
    ),
    checked(_S, "Lemma C.3 proof (0 <= a << 1)", 768, "huang.C4.small_a"),
    checked(_S, "Lemma C.3 proof (a >= 1)", 776, "huang.C4.large_a"),
    checked(_S, "Claim C.4", 790, "huang.C4.variance"),
    unchecked(_S, "Theorem C.5", 796, "out-of-scope", "Arutyunyan-Kosov: " + _CONSTANT),
    checked(_S, "Lemma D.1", 808, "huang.D1"),
    checked(_S, "Lemma D.2", 840, "huang.D2"),
    checked(_S, "Lemma D.3", 859, "huang.D3", "huang.D3.proof"),
    checked(_S, "Table 1", 878, "huang.table1"),
    checked(
        _S,
        "Theorem E.1",
        881,
        "huang.table1",
        why="its eps_dp against Table 1's; the paper gives no proof of E.1 (only of E.2)",
    ),
    checked(
        _S,
        "Theorem E.2",
        882,
        "huang.E2.part1",
        "huang.E2.part2_closeness",
        "huang.table1",
    ),
    checked(_S, "Remark E.3", 900, "huang.E3"),
    unchecked(_S, "Definition E.4", 907, "definition", "eps-differential privacy"),
    unchecked(_S, "Definition E.5", 911, "definition", "global sensitivity GS_p"),
    checked(_S, "Theorem E.6", 915, "huang.E6"),
    checked(_S, "Theorem E.7", 921, "huang.E7"),
    unchecked(_S, "Definition E.8", 925, "definition", "(eps, delta)-approximation"),
    checked(_S, "proof of Theorem E.2, Part 1", 940, "huang.E2.part1", "huang.E2.abar_sign"),
    checked(
        _S,
        "proof of Theorem E.2, Part 2",
        964,
        "huang.E2.laplace_fourth_moment",
        "huang.E2.part2_max",
        "huang.E2.part2_closeness",
    ),
)
