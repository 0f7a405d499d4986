r"""Pruning as Laplace noise: Huang et al. (arXiv 2003.01876), published and corrected bounds.

Source: Huang, Su, Ravi, Song, Arora, Li, *Privacy-preserving Learning via Deep Net
Pruning* (``papers/huang-pruning-as-dp-noise-arxiv2003.01876.txt``). Setting: one layer
:math:`f(x) = \phi(Ax + b)`, :math:`A \in \mathbb{R}^{m \times d}` with i.i.d.
:math:`\mathcal{N}(0, \sigma_A^2)` entries, ReLU :math:`\phi`, :math:`\|x\|_2 = 1`;
pruning with threshold :math:`a` leaves :math:`\tilde A`, :math:`\bar A = \tilde A - A`, and
the "equivalent" mechanism is :math:`h(x) = f(x) + e`,
:math:`e = \mathrm{Lap}(1, \sigma)^m \circ (\bar A x)` (mean 1, scale :math:`\sigma`).
All logarithms are natural, so every epsilon is in nats (the unit of differential privacy).

Numerics. Widths and dimensions are integers up to 2^53, evaluated as floats (a product
such as ``m * d`` never wraps around); products and quotients that could leave the float
range on the way are formed in logarithms. An epsilon_dp whose exact value lies beyond the
float range (about 1.8e308 nats) is returned as ``inf``, like the vacuous proof form: no
guarantee either way (the convention of ``bounds.accounting``). Every other quantity
(thresholds, sensitivities, moments, widths, a noise scale) whose exact value lies beyond
the float range raises ValueError naming the inputs; ``nan`` is never returned.

Modules (one idea each; every public name is re-exported here, so
``from bounds.equivalence import X`` works for all of them):

- ``privacy``: Part 1, epsilon_dp of Theorems E.1/E.2 (stated, proof and Table 1 forms),
  its inverse, Remark E.3, the exact privacy loss and the repaired Laplace epsilon.
- ``sensitivity``: Lemma D.1's threshold and the sensitivities GS_1 (D.2) and GS_2 (D.3),
  published and corrected.
- ``width``: Part 2, the width m for (eps_ap, delta_ap)-closeness, published and corrected.
- ``lemmas``: the probability tools and concentration thresholds of Appendices A-C.
- ``moments``: exact truncated-Gaussian and Laplace moments (the references).

Public functions (scalars or numpy arrays, broadcast; a 0-d result is a Python float):

Main results
    ``epsilon_dp_theorem_e1(sigma, sigma_a, m, d, delta_dp, *, gs1=None)``
        Theorem E.1 as stated: :math:`2\,\mathrm{GS}_1(f)\,(m/\delta_{dp})/(\sigma\sigma_A)`.
    ``epsilon_dp_theorem_e2(sigma, sigma_a, m, d, delta_dp, *, gs1=None)``
        Theorem E.2 as stated: :math:`2\,\mathrm{GS}_1(f)\log(m/\delta_{dp})/(\sigma\sigma_A)`.
    ``epsilon_dp_table1(sigma, sigma_a, m, d, delta_dp, *, theorem, gs1=None)``
        Table 1's summary form (no factor 2).
    ``epsilon_dp_proof_e2(sigma, sigma_a, a, m, d, delta_dp)``
        the last line of Part 1 of the proof of E.2 (depends on ``a``; ``inf`` when vacuous).
    ``sigma_for_epsilon_dp(epsilon_dp, *, sigma_a, m, d, delta_dp, theorem="E.2", gs1=None)``
        inverse of the stated theorems: the Laplace scale giving a target epsilon.
    ``epsilon_dp_theorem_expr(*, theorem="E.2")``
        the stated theorems as sympy expressions (GS_1 from Lemma D.2).
    ``remark_e3_parameters(m, *, theorem)``
        Remark E.3's choices (sigma, sigma_A, a) with every Theta constant set to 1.
    ``part2_width_rhs(m, *, eps_ap, delta_ap, a, sigma, sigma_a)`` and
    ``required_width(eps_ap, delta_ap, *, a, sigma, sigma_a)``
        Part 2 of the proof of E.2: the implicit condition on ``m`` and its smallest
        solution (the width for (eps_ap, delta_ap)-closeness, Definition 3.1).
    ``pruned_row_moments(x, *, a, sigma_a, pruning)`` and
    ``required_width_corrected(eps_ap, delta_ap, *, sigma, row_m2, row_m4)``
        corrected Part 2 (Chebyshev on the exact moments; ``inf`` when no width works).
    ``closeness_mean_square(sigma, row_m2)``
        :math:`\mathbb{E}\,\tfrac1m\|e-\bar A x\|_2^2 = 2\sigma^2\,\mathbb{E}[(\bar A x)_i^2]`.
    ``privacy_loss(y, loc1, scale1, loc2, scale2)`` and
    ``epsilon_dp_fixed_scale(sigma, scale_floor, gs1_location)``
        the exact privacy loss of the mechanism, and the repaired (data-independent scale)
        Laplace-mechanism epsilon.

Lemmas (each returns the threshold/bound of the lemma; constants are module level, re-exported)
    ``lemma_a4_gaussian_tail``, ``lemma_a5_small_ball``, ``lemma_a6_chi2_deviation``,
    ``lemma_b1_threshold``, ``lemma_b2_threshold``, ``lemma_b3_threshold``,
    ``lemma_b4_threshold``, ``lemma_b5_constant_c``, ``lemma_b5_part2_floor``,
    ``claim_c4_variance_published``, ``lemma_d1_threshold``, ``gs1_bound`` (Lemma D.2),
    ``gs2_bound`` (Lemma D.3, statement and proof forms), ``gs1_bound_corrected``,
    ``gs2_bound_corrected``, ``laplace_fourth_moment``.
    Exact references: ``truncated_gaussian_moment(order, a, sigma, *, one_sided=False)``.

Deviations found (each detailed in the function's docstring):

1. Lemma D.3's statement :math:`2(\sqrt{md}+\sqrt{\log(1/\delta)})` lacks :math:`\sigma_A` and
   its proof ends at :math:`\sigma_A(\sqrt{md}+\sqrt{2\log(1/\delta)})`; a column of
   :math:`A` has :math:`m` entries, not :math:`md`, and the sup over the :math:`d` columns
   needs a union bound: corrected :math:`\sigma_A(\sqrt m + \sqrt{2\log(d/\delta)})`.
2. Lemma D.1 bounds the *deviation* :math:`\sum_i z_{ij} - \mathbb{E}z_{ij}`, and D.2 then
   uses it as a bound on :math:`\|A_{*,k}\|_1` itself (drops the mean
   :math:`m\sigma_A\sqrt{2/\pi}`); the statement of D.2 still holds numerically because
   the deviation term :math:`\sigma_A m` is far too large. Corrected (Gaussian Lipschitz
   concentration): :math:`\sigma_A(m\sqrt{2/\pi} + \sqrt{2m\log(d/\delta)})`.
3. Lemma B.5: :math:`\int_0^a x\varphi_{\sigma_A}(x)dx
   = \sigma_A(1-e^{-a^2/2\sigma_A^2})/\sqrt{2\pi}` is *at most*
   :math:`a^2/(2\sqrt{2\pi}\sigma_A)` (the proof writes >=); the step to
   :math:`a^2/(6\sigma_A)` holds only for :math:`a/\sigma_A \lesssim 0.86`. The mean of
   :math:`(\bar A x)_i` never exceeds :math:`\sigma_A/\sqrt{2\pi}` (with
   :math:`\sum x_j = 1`), so part 2 (floor :math:`0.02\,a^2/\sigma_A` when
   :math:`a/\sigma_A \ge 20\log(m/\delta) \ge 46`) is false. The second moment bound
   :math:`a^3/(3\sqrt{2\pi}\sigma_A) \le a^3/(9\sigma_A)` is false too
   (:math:`3\sqrt{2\pi} = 7.52 < 9`).
4. Claim C.4 gives the variance of the Gaussian *conditioned* on :math:`|x|\le a`, not of
   the truncation :math:`f(x) = x\,1\{|x|\le a\}` it defines (which is
   :math:`\mathrm{erf}(a/\sqrt2) - \sqrt{2/\pi}\,a e^{-a^2/2}`); its small-``a`` expansion
   :math:`\tfrac56 a^2` is wrong for either (the conditioned variance is
   :math:`a^2/3 + O(a^4)`).
5. Part 1 of E.2: the density of :math:`e_i = L_i(\bar A x)_i` is written without its
   Jacobian :math:`1/|(\bar A x)_i|`, and the step from
   :math:`|\frac{y_i-f(x_1)_i}{(\bar A x_1)_i} - \frac{y_i-f(x_2)_i}{(\bar A x_2)_i}|` to
   :math:`2|f(x_2)_i - f(x_1)_i|/\min|\bar A x|` drops the :math:`y`-dependent term: the
   noise scale depends on the input, so the privacy loss is unbounded in :math:`y` (no
   finite pure epsilon; see ``privacy_loss``). The location also moves by
   :math:`\bar A x`, whose sensitivity is never counted. The final line uses
   :math:`\tfrac15 (a/\sigma_A)^{1.5}\log(m/\delta)` where B.5 gives a different :math:`C`;
   Theorem E.2 then states a third form, and Table 1 drops the factor 2.
6. Part 2: the condition bounds the deviation of :math:`\tfrac1m\sum z_i` from its mean
   but concludes :math:`\tfrac1{\sqrt m}\|e-\bar A x\|_2 \le \epsilon`, dropping
   :math:`\mathbb{E}z_i = 2\sigma^2(\bar A x)_i^2`; with Remark E.3's :math:`\sigma = m` that
   mean grows with :math:`m`. The max bound takes :math:`z_i \le \sqrt{b_i\log(m/\delta)}`
   where the Laplace tail gives :math:`z_i \le b_i^2\log^2(m/\delta)`, and uses
   :math:`M` without the square root in Bernstein.
7. Remark E.3 (:math:`\sigma\sigma_A = 1`, :math:`\mathrm{GS}_1 = \Theta(m\sigma_A)`) makes
   Theorem E.2's epsilon :math:`\approx 2\log(m/\delta_{dp})`, at least 4.6 for
   :math:`\delta_{dp} = 0.1`: the paper's budget :math:`\epsilon_{dp} = 0.5` (Section 4.4) is
   out of reach with those choices.
"""

from pruneleak.bounds.equivalence.lemmas import (
    LEMMA_A5_CONSTANT,
    LEMMA_B1_CONSTANT,
    LEMMA_B2_CONSTANT,
    LEMMA_B3_CONSTANTS,
    LEMMA_B4_CONSTANT,
    LEMMA_B5_LINEAR_CONSTANT,
    LEMMA_B5_MEAN_CONSTANT,
    LEMMA_B5_PART2_FLOOR,
    LEMMA_B5_PART2_RATIO,
    LEMMA_B5_SQRT_CONSTANT,
    claim_c4_variance_published,
    lemma_a4_gaussian_tail,
    lemma_a5_small_ball,
    lemma_a6_chi2_deviation,
    lemma_b1_threshold,
    lemma_b2_threshold,
    lemma_b3_threshold,
    lemma_b4_threshold,
    lemma_b5_constant_c,
    lemma_b5_part2_floor,
)
from pruneleak.bounds.equivalence.moments import (
    LAPLACE_FOURTH_MOMENT,
    laplace_fourth_moment,
    truncated_gaussian_moment,
)
from pruneleak.bounds.equivalence.privacy import (
    PART1_DEVIATION_CONSTANT,
    PART1_MEAN_CONSTANT,
    THEOREM_E_FACTOR,
    epsilon_dp_fixed_scale,
    epsilon_dp_proof_e2,
    epsilon_dp_table1,
    epsilon_dp_theorem_e1,
    epsilon_dp_theorem_e2,
    epsilon_dp_theorem_expr,
    privacy_loss,
    remark_e3_parameters,
    sigma_for_epsilon_dp,
)
from pruneleak.bounds.equivalence.sensitivity import (
    LEMMA_D1_CONSTANT,
    gs1_bound,
    gs1_bound_corrected,
    gs2_bound,
    gs2_bound_corrected,
    lemma_d1_threshold,
)
from pruneleak.bounds.equivalence.width import (
    PART2_B1_CONSTANT,
    PART2_CONSTANT,
    closeness_mean_square,
    part2_width_rhs,
    pruned_row_moments,
    required_width,
    required_width_corrected,
)

__all__ = [
    "LAPLACE_FOURTH_MOMENT",
    "LEMMA_A5_CONSTANT",
    "LEMMA_B1_CONSTANT",
    "LEMMA_B2_CONSTANT",
    "LEMMA_B3_CONSTANTS",
    "LEMMA_B4_CONSTANT",
    "LEMMA_B5_LINEAR_CONSTANT",
    "LEMMA_B5_MEAN_CONSTANT",
    "LEMMA_B5_PART2_FLOOR",
    "LEMMA_B5_PART2_RATIO",
    "LEMMA_B5_SQRT_CONSTANT",
    "LEMMA_D1_CONSTANT",
    "PART1_DEVIATION_CONSTANT",
    "PART1_MEAN_CONSTANT",
    "PART2_B1_CONSTANT",
    "PART2_CONSTANT",
    "THEOREM_E_FACTOR",
    "claim_c4_variance_published",
    "closeness_mean_square",
    "epsilon_dp_fixed_scale",
    "epsilon_dp_proof_e2",
    "epsilon_dp_table1",
    "epsilon_dp_theorem_e1",
    "epsilon_dp_theorem_e2",
    "epsilon_dp_theorem_expr",
    "gs1_bound",
    "gs1_bound_corrected",
    "gs2_bound",
    "gs2_bound_corrected",
    "laplace_fourth_moment",
    "lemma_a4_gaussian_tail",
    "lemma_a5_small_ball",
    "lemma_a6_chi2_deviation",
    "lemma_b1_threshold",
    "lemma_b2_threshold",
    "lemma_b3_threshold",
    "lemma_b4_threshold",
    "lemma_b5_constant_c",
    "lemma_b5_part2_floor",
    "lemma_d1_threshold",
    "part2_width_rhs",
    "privacy_loss",
    "pruned_row_moments",
    "remark_e3_parameters",
    "required_width",
    "required_width_corrected",
    "sigma_for_epsilon_dp",
    "truncated_gaussian_moment",
]
