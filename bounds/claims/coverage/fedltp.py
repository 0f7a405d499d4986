"""Coverage map of Fed-LTP (``papers/fed-ltp-lottery-ticket-zcdp.txt``).

Equations 1-24, Definitions 1-4, Lemma 1, Theorem 1 and its proof, Algorithm 2 and the
experiment tables.
"""

from __future__ import annotations

from pruneleak.bounds.claims.coverage.rows import checked, unchecked

_S = "fedltp"

ROWS = (
    unchecked(_S, "eq. (1)", 102, "definition", "the FL objective"),
    unchecked(_S, "eq. (2)", 106, "definition", "the local gradient step"),
    unchecked(_S, "eq. (3)", 110, "definition", "the validation score S_i"),
    unchecked(_S, "Definition 1", 121, "definition", "(eps, delta)-DP"),
    unchecked(_S, "eq. (4)", 125, "definition", "the inequality defining (eps, delta)-DP"),
    unchecked(_S, "Definition 2", 129, "definition", "instance-level DP for FL"),
    unchecked(_S, "eq. (5)", 133, "definition", "the inequality of Definition 2"),
    unchecked(_S, "Definition 3", 134, "definition", "Rényi DP"),
    unchecked(_S, "eq. (6)", 138, "definition", "the Rényi divergence"),
    unchecked(_S, "eq. (7)", 144, "definition", "the privacy loss random variable"),
    checked(_S, "Definition 4", 145, "fedltp.definition4"),
    checked(_S, "eq. (8)", 149, "fedltp.definition4"),
    checked(_S, "Lemma 1", 153, "fedltp.lemma1"),
    checked(_S, "eq. (9)", 169, "fedltp.eq9_pruned_fraction"),
    unchecked(_S, "eq. (10)", 175, "definition", "softmax selection of a winning ticket"),
    checked(_S, "eq. (11)", 245, "fedltp.eq9_pruned_fraction", why="'which results in p = 1 - Pr'"),
    checked(_S, "eq. (12)", 256, "fedltp.eq12_iterated"),
    unchecked(_S, "eq. (13)", 260, "definition", "the global model theta_0 (.) M(theta_0)"),
    checked(_S, "eq. (14)", 266, "fedltp.eq12_iterated", why="masks differ across clients"),
    checked(_S, "eq. (15)", 270, "fedltp.table2.eq15", "fedltp.eq12_iterated"),
    checked(_S, "eq. (16)", 274, "fedltp.table2.eq16"),
    checked(_S, "eq. (17)", 296, "fedltp.eq23.epsilon_val"),
    checked(_S, "eq. (18)", 300, "fedltp.eq18.noise_variance"),
    unchecked(_S, "eq. (19)", 304, "definition", "selection of the best validated model"),
    checked(
        _S,
        "Theorem 1",
        314,
        "fedltp.eq21.mu1",
        "fedltp.eq21.rate",
        "fedltp.eq22",
        "fedltp.eq23",
        "fedltp.table3.epsilon",
    ),
    checked(
        _S,
        "eq. (20)",
        318,
        "fedltp.eq22",
        "fedltp.eq23",
        "fedltp.algorithm2.local_steps",
    ),
    checked(_S, "eq. (21)", 322, "fedltp.eq21.mu1", "fedltp.eq21.rate"),
    checked(_S, "eq. (22)", 330, "fedltp.eq22"),
    checked(
        _S,
        "eq. (23)",
        334,
        "fedltp.eq23",
        "fedltp.eq23.lemma1_step",
        "fedltp.eq23.epsilon_val",
    ),
    checked(_S, "eq. (24)", 338, "fedltp.eq23"),
    checked(
        _S,
        "Algorithm 2, lines 13-16",
        206,
        "fedltp.algorithm2.local_steps",
        "fedltp.algorithm2.clipping",
    ),
    checked(_S, "Table II", 372, "fedltp.table2.eq15", "fedltp.table2.eq16"),
    checked(_S, "Table III", 497, "fedltp.table3.epsilon", "fedltp.table3.comm_units"),
)
