r"""Width versus closeness: the synthetic experiment of Huang et al., Section 4.4, Figure 8.

Source: Huang, Su, Ravi, Song, Arora, Li, *Privacy-preserving Learning via Deep Net
Pruning*, arXiv:2003.01876 (``papers/huang-pruning-as-dp-noise-arxiv2003.01876.txt``).

Setting (Section 4.4, Theorem 3.2, proof of Theorem E.2): one layer
:math:`f(x) = \mathrm{ReLU}(Ax + b)` with :math:`A \in \mathbb R^{m\times d}`, i.i.d.
:math:`\mathcal N(0, \sigma_A^2)` entries, :math:`b = 0`, and an input :math:`x` drawn from
the folded Gaussian :math:`|\mathcal N(0, I_d)|` and normalised to :math:`\|x\|_2 = 1`.
Magnitude pruning at sparsity :math:`k` gives :math:`\tilde A`, :math:`\bar A = \tilde A - A`;

.. math::
    g(x) = \mathrm{ReLU}(\tilde A x + b), \qquad
    h(x) = f(x) + e, \quad e = \mathrm{Lap}(1, \sigma)^m \circ (\bar A x),

and the error of one trial is :math:`\tfrac1{\sqrt m}\|h(x) - g(x)\|_2`
(Definition 3.1's closeness statistic; Figure 8 tabulates it). The empirical
:math:`\delta_{ap}` at :math:`\epsilon_{ap}` is the fraction of trials whose error exceeds
:math:`\epsilon_{ap}`.

Readings of the paper (stated because the paper leaves them implicit):

* **Sparsity** is the *fraction of weights set to zero* (Figure 1's caption, Section 2.2,
  Section 4.3: "0.5 means 50% of the weights in a network are zeros"). Magnitude pruning
  at sparsity :math:`k` zeroes the ``round(k m d)`` entries of :math:`A` of smallest
  :math:`|A_{ij}|` (layer-wise, Algorithm 2's THPRUNE with the threshold set to reach the
  target sparsity). ``sparsity_reading="kept"`` reads :math:`k` as the kept fraction
  instead, to test whether that reading explains Figure 8's trend in :math:`k`.
* **Lap(1, sigma)** has location 1 and scale :math:`\sigma` (proof of E.2, Part 1:
  density :math:`\tfrac1{2\sigma}\exp(-|t/(\bar Ax)_i - 1|/\sigma)`), drawn independently
  per output coordinate and multiplied coordinate-wise with :math:`\bar A x` (Part 2:
  :math:`e_i - (\bar A x)_i \sim \mathrm{Lap}(0, \sigma|(\bar Ax)_i|)`).
* :math:`\bar A = \tilde A - A` as in the proof sketch (Section 3) and Section 4.4, so that
  :math:`\mathbb E[h(x)] = \mathrm{ReLU}(Ax) + (\tilde A - A)x`, which equals
  :math:`\tilde A x` when the ReLU is active. (Lemmas B.1/B.5 write
  :math:`\bar A_{ij} = A_{ij}1\{|A_{ij}|\le a\} = A - \tilde A`, the opposite sign; that
  sign would make :math:`h` approximate :math:`2Ax - \tilde Ax`, not :math:`g`.)
* Every trial draws a fresh :math:`A`, :math:`x` and Laplace noise; within a trial the
  same draws serve every sparsity and every parameterisation (common random numbers).

The paper states neither :math:`\sigma`, :math:`\sigma_A`, :math:`d` nor the number of
trials; they are fields of :class:`WidthClosenessConfig`, and the *parameterisations*
(:data:`PARAMETERISATIONS`) map a width :math:`m` to :math:`(\sigma, \sigma_A)`:

``"fixed"``
    :math:`\sigma`, :math:`\sigma_A` from the config, the same for every :math:`m`.
``"remark_e3_folded"`` / ``"remark_e3_gaussian"``
    Remark E.3 (1)/(2): :math:`\sigma = m` / :math:`m^2`, :math:`\sigma_A = 1/\sigma`
    (Theta constants 1; ``bounds.equivalence.remark_e3_parameters``).
``"calibrated"``
    :math:`\sigma_A` from the config, :math:`\sigma` such that Theorem E.2's
    :math:`\epsilon_{dp} = 2\,\mathrm{GS}_1(f)\log(m/\delta_{dp})/(\sigma\sigma_A)` equals
    ``eps_dp`` (Section 4.4: 0.5) at ``delta_dp`` (0.1), with :math:`\mathrm{GS}_1` from
    Lemma D.2 (``bounds.equivalence.sigma_for_epsilon_dp``).
``"theorem_3_2"``
    :math:`\sigma_A = \epsilon_{dp}\delta_{dp}/m^2` (Theorem 3.2's
    :math:`\sigma_A = O(\epsilon_{dp}\delta_{dp}/m^2)`, constant 1) and :math:`\sigma`
    calibrated as in ``"calibrated"``.

With :math:`b = 0` the error is exactly proportional to :math:`\sigma_A` at fixed
:math:`\sigma` (ReLU is positively homogeneous), so only :math:`\sigma` and the product
scale matter.

Modules: :mod:`.config` (the paper's grid and table, the configuration and the
parameterisations), :mod:`.errors` (the random stream and the errors, vectorised and by a
per-trial loop), :mod:`.study` (the run, its summaries and the comparison with Figure 8),
:mod:`.theory` (the width Part 2 of the proof of Theorem E.2 requires).
"""

from pruneleak.sims.experiments.width_closeness.config import (
    PAPER_CLAIMED_WIDTH,
    PAPER_DELTA_DP,
    PAPER_EPS_AP,
    PAPER_EPS_DP,
    PAPER_FIG8_ERROR,
    PAPER_SPARSITIES,
    PAPER_WIDTHS,
    PARAMETERISATIONS,
    SPARSITY_READINGS,
    WidthClosenessConfig,
)
from pruneleak.sims.experiments.width_closeness.errors import (
    closeness_errors,
    closeness_errors_reference,
)
from pruneleak.sims.experiments.width_closeness.study import (
    WidthClosenessResult,
    first_width_below,
    run_width_closeness,
    trend_summary,
)
from pruneleak.sims.experiments.width_closeness.theory import (
    theory_width,
    theory_widths,
    threshold_for_fraction,
)

__all__ = [
    "PAPER_CLAIMED_WIDTH",
    "PAPER_DELTA_DP",
    "PAPER_EPS_AP",
    "PAPER_EPS_DP",
    "PAPER_FIG8_ERROR",
    "PAPER_SPARSITIES",
    "PAPER_WIDTHS",
    "PARAMETERISATIONS",
    "SPARSITY_READINGS",
    "WidthClosenessConfig",
    "WidthClosenessResult",
    "closeness_errors",
    "closeness_errors_reference",
    "first_width_below",
    "run_width_closeness",
    "theory_width",
    "theory_widths",
    "threshold_for_fraction",
    "trend_summary",
]
