r"""Claims of Huang et al.: the main text (Sections 4.1, 4.4) and appendices A-E.

Source: ``papers/huang-pruning-as-dp-noise-arxiv2003.01876.txt`` (arXiv 2003.01876).

Thresholds and constants are those of ``bounds.equivalence`` (``lemma_*``, ``gs*_bound``,
``claim_c4_variance_published``, ``laplace_fourth_moment``, ``truncated_gaussian_moment``,
``privacy_loss``, ``epsilon_dp_theorem_e2``). Exact references: the Gaussian and
chi-square distribution functions of ``scipy`` in log space; Monte Carlo otherwise. Where a
lemma is stated for all values of a scale-free ratio (e.g. :math:`a/\sigma`), the check
sweeps the ratio with :math:`\sigma = 1`.

Monte Carlo tail bounds ("with probability at most delta") are checked at failure
probabilities a simulation can resolve (delta >= 0.01); the thresholds of Appendix B are
so loose that no exceedance is ever observed, and each point reports the Wilson interval.

Modules: :mod:`.main_text` (Sections 4.1 and 4.4, Figure 8), one per appendix,
:mod:`.appendix_a` to :mod:`.appendix_e`, each with its own ``CLAIMS``, :mod:`.tools` (the
probability and privacy tools the appendices state: Lemmas A.1-A.3, A.7, Theorems C.1,
E.6, E.7), and :mod:`.common` for the samplers and symbols they share. ``CLAIMS`` here
concatenates them in the paper's order, the order of the report.
"""

# The claims of each appendix; the four private helpers re-exported as themselves
# (``x as x``) keep the old path ``huang._name`` that the reference tests use.
from pruneleak.bounds.claims.huang import (
    appendix_a,
    appendix_b,
    appendix_c,
    appendix_d,
    appendix_e,
    main_text,
    tools,
)
from pruneleak.bounds.claims.huang.appendix_a import A4, A5, A6
from pruneleak.bounds.claims.huang.appendix_b import _B5_C_ROOT as _B5_C_ROOT
from pruneleak.bounds.claims.huang.appendix_b import _B5_M as _B5_M
from pruneleak.bounds.claims.huang.appendix_b import (
    B1,
    B1_PROOF_T,
    B2,
    B2_MOMENTS,
    B2_PROOF_T,
    B3,
    B4,
    B4_PROOF_INF,
    B4_PROOF_NORM,
    B5_CONSTANT_C,
    B5_MEAN,
    B5_MEAN_STEP,
    B5_PART2,
    B5_SECOND_MOMENT,
    B5_SECOND_MOMENT_STEP,
)
from pruneleak.bounds.claims.huang.appendix_b import _b5_c_exact as _b5_c_exact
from pruneleak.bounds.claims.huang.appendix_c import C4_LARGE_A, C4_SMALL_A, C4_VARIANCE
from pruneleak.bounds.claims.huang.appendix_d import D1, D2, D3, D3_PROOF
from pruneleak.bounds.claims.huang.appendix_e import (
    ABAR_SIGN,
    E3,
    LAPLACE_FOURTH,
    PART1_LOSS,
    PART2_CLOSENESS,
    PART2_MAX,
    TABLE1,
)
from pruneleak.bounds.claims.huang.appendix_e import _part2_max_true as _part2_max_true
from pruneleak.bounds.claims.huang.main_text import BUDGET, FIGURE8, GRADUAL_PRUNING

CLAIMS = (
    main_text.CLAIMS
    + tools.CLAIMS_A
    + appendix_a.CLAIMS
    + appendix_b.CLAIMS
    + tools.CLAIMS_C
    + appendix_c.CLAIMS
    + appendix_d.CLAIMS
    + appendix_e.CLAIMS
    + tools.CLAIMS_E
)

__all__ = [
    "A4",
    "A5",
    "A6",
    "ABAR_SIGN",
    "B1",
    "B1_PROOF_T",
    "B2",
    "B2_MOMENTS",
    "B2_PROOF_T",
    "B3",
    "B4",
    "B4_PROOF_INF",
    "B4_PROOF_NORM",
    "B5_CONSTANT_C",
    "B5_MEAN",
    "B5_MEAN_STEP",
    "B5_PART2",
    "B5_SECOND_MOMENT",
    "B5_SECOND_MOMENT_STEP",
    "BUDGET",
    "C4_LARGE_A",
    "C4_SMALL_A",
    "C4_VARIANCE",
    "CLAIMS",
    "D1",
    "D2",
    "D3",
    "D3_PROOF",
    "E3",
    "FIGURE8",
    "GRADUAL_PRUNING",
    "LAPLACE_FOURTH",
    "PART1_LOSS",
    "PART2_CLOSENESS",
    "PART2_MAX",
    "TABLE1",
]
