r"""Pruning as Laplace noise: Huang et al. (arXiv 2003.01876), published and corrected bounds.

Source: Huang, Su, Ravi, Song, Arora, Li, *Privacy-preserving Learning via Deep Net
Pruning* (``papers/huang-pruning-as-dp-noise-arxiv2003.01876.txt``). Setting: one layer
:math:`f(x) = \phi(Ax + b)`, :math:`A \in \mathbb{R}^{m \times d}` with i.i.d.
:math:`\mathcal{N}(0, \sigma_A^2)` entries, ReLU :math:`\phi`, :math:`\|x\|_2 = 1`;
pruning with threshold :math:`a` leaves :math:`\tilde A`, :math:`\bar A = \tilde A - A`, and
the "equivalent" mechanism is :math:`h(x) = f(x) + e`,
:math:`e = \mathrm{Lap}(1, \sigma)^m \circ (\bar A x)` (mean 1, scale :math:`\sigma`).
All logarithms are natural, so every epsilon is in nats (the unit of differential privacy).

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

Lemmas (each returns the threshold/bound of the lemma; constants are module level)
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

from __future__ import annotations

import math

import numpy as np
import sympy as sp
from scipy import optimize, special

from bounds._vector import as_output, int_array, real_array
from bounds.validation import check_choice, check_finite_array, check_int, check_real

# Lemma A.5: Pr[|X| <= t] <= (4/5) t / sigma (folklore; exact sup is sqrt(2/pi) = 0.7979).
LEMMA_A5_CONSTANT = 4 / 5
# Lemma B.1: threshold 10 ||x||_2 a (sqrt(a/sigma) + 1) log(1/delta), delta in (0, 1/10).
LEMMA_B1_CONSTANT = 10.0
# Lemma B.2: threshold 1000 m ||x||_2^2 (sigma^2 + a^2) log^3(m/delta).
LEMMA_B2_CONSTANT = 1000.0
# Lemma B.3: 2 sigma_1 ||e||_2 sqrt(log(d/delta)) + 1 * sigma_1 ||e||_inf log^1.5(d/delta).
LEMMA_B3_CONSTANTS = (2.0, 1.0)
# Lemma B.4: 10^4 sigma_1 sigma_2 sqrt(d) log^2(d/delta).
LEMMA_B4_CONSTANT = 1e4
# Lemma B.5 part 1, with r = a / sigma_A and L = log(m/delta):
# C = r^2/6 - (2 r^3/9)^(1/2) sqrt(L) - (2 r/3) L.
LEMMA_B5_MEAN_CONSTANT = 1 / 6
LEMMA_B5_SQRT_CONSTANT = 2 / 9
LEMMA_B5_LINEAR_CONSTANT = 2 / 3
# Lemma B.5 part 2: floor 0.02 a^2 / sigma_A once a / sigma_A >= 20 log(m/delta).
LEMMA_B5_PART2_FLOOR = 0.02
LEMMA_B5_PART2_RATIO = 20.0
# Lemma D.1 / D.2: sigma_A m + 4 sigma_A sqrt(m) log^1.5(md/delta).
LEMMA_D1_CONSTANT = 4
# Proof of E.2, Part 1, last two lines: 1/6 (a/sigma_A)^2 - 1/5 (a/sigma_A)^1.5 log(m/delta_dp).
PART1_MEAN_CONSTANT = 1 / 6
PART1_DEVIATION_CONSTANT = 1 / 5
# Theorems E.1 / E.2: epsilon_dp = 2 GS_1(f) (...) / (sigma sigma_A).
THEOREM_E_FACTOR = 2
# Proof of E.2, Part 2: E[z_i^2] = 24 b_i^4 (fourth moment of Lap(0, b)), the 48 = 2 * 24.
LAPLACE_FOURTH_MOMENT = 24.0
PART2_CONSTANT = 48.0
PART2_B1_CONSTANT = 10.0

_THEOREMS = ("E.1", "E.2")
_PRUNINGS = ("magnitude", "folded")

# Formulas typed once, in sympy, and lambdified (numeric functions and
# ``epsilon_dp_theorem_expr`` share them).
_SIGMA, _SIGMA_A, _M, _D, _DELTA_DP, _GS1 = sp.symbols(
    "sigma sigma_A m d delta_dp GS_1", positive=True
)


def _sym_lemma_d1(m, d, sigma_a, delta):
    """Lemma D.1 / D.2: sigma_A m + 4 sigma_A sqrt(m) log^1.5(md/delta)."""
    return sigma_a * m + LEMMA_D1_CONSTANT * sigma_a * sp.sqrt(m) * sp.log(
        m * d / delta
    ) ** sp.Rational(3, 2)


def _sym_theorem(theorem, gs1):
    """Theorems E.1/E.2 as stated: 2 GS_1(f) (m/delta_dp or log(m/delta_dp)) / (sigma sigma_A)."""
    factor = sp.log(_M / _DELTA_DP) if theorem == "E.2" else _M / _DELTA_DP
    return THEOREM_E_FACTOR * gs1 * factor / (_SIGMA * _SIGMA_A)


_lemma_d1 = sp.lambdify((_M, _D, _SIGMA_A, _DELTA_DP), _sym_lemma_d1(_M, _D, _SIGMA_A, _DELTA_DP))
_theorem = {
    theorem: sp.lambdify((_SIGMA, _SIGMA_A, _M, _DELTA_DP, _GS1), _sym_theorem(theorem, _GS1))
    for theorem in _THEOREMS
}


def _delta_small(name, value, func):
    """Lemmas of Appendix B require a failure probability in (0, 1/10)."""
    return real_array(
        name, value, func=func, low=0, high=0.1, low_inclusive=False, high_inclusive=False
    )


def _positive(name, value, func):
    return real_array(name, value, func=func, low=0, low_inclusive=False)


def _probability(name, value, func):
    return real_array(
        name, value, func=func, low=0, high=1, low_inclusive=False, high_inclusive=False
    )


# ---------------------------------------------------------------------------------------
# Exact references
# ---------------------------------------------------------------------------------------


def truncated_gaussian_moment(order, a, sigma, *, one_sided=False):
    r"""Exact truncated moment :math:`\mathbb{E}[y^k\,1\{|y| \le a\}]`, :math:`y\sim N(0,\sigma^2)`.

    With ``one_sided=True`` the indicator is :math:`1\{0 \le y \le a\}`.

    The pruned entries of :math:`\bar A` are :math:`y\,1\{|y|\le a\}` (magnitude pruning,
    Lemmas B.1/B.2) or :math:`y\,1\{0 \le y\le a\}` (folded, Lemma B.5). With
    :math:`r = a/\sigma` the moments are incomplete gamma functions:
    :math:`\int_0^a y^k \varphi_\sigma(y)\,dy = \sigma^k 2^{k/2}\Gamma(\tfrac{k+1}2)
    P(\tfrac{k+1}2, r^2/2)/(2\sqrt\pi)`; the symmetric version doubles even orders and
    vanishes for odd orders.

    Parameters
    ----------
    order : int, 0 to 8.
    a : float or array, truncation threshold > 0 (same unit as ``sigma``).
    sigma : float or array, standard deviation > 0.
    one_sided : bool, use :math:`1\{0\le y\le a\}` instead of :math:`1\{|y|\le a\}`.

    Examples
    --------
    >>> round(truncated_gaussian_moment(0, 40.0, 1.0), 12)  # untruncated: total mass
    1.0
    >>> round(truncated_gaussian_moment(2, 80.0, 2.0), 12)  # untruncated: the variance
    4.0
    """
    func = "truncated_gaussian_moment"
    k = check_int("order", order, func=func, low=0, high=8)
    a = _positive("a", a, func)
    sigma = _positive("sigma", sigma, func)
    s = (k + 1) / 2
    half = sigma**k * 2 ** (k / 2) * special.gamma(s) * special.gammainc(s, (a / sigma) ** 2 / 2)
    half = half / (2 * math.sqrt(math.pi))
    if one_sided:
        return as_output(half)
    return as_output(2 * half if k % 2 == 0 else np.zeros_like(half))


def laplace_fourth_moment(scale):
    r""":math:`\mathbb{E}[X^4] = 24 b^4` for :math:`X \sim \mathrm{Lap}(0, b)` (E.2, Part 2).

    Examples
    --------
    >>> laplace_fourth_moment(1.0)
    24.0
    """
    b = _positive("scale", scale, "laplace_fourth_moment")
    return as_output(LAPLACE_FOURTH_MOMENT * b**4)


# ---------------------------------------------------------------------------------------
# Appendix A: probability tools
# ---------------------------------------------------------------------------------------


def lemma_a4_gaussian_tail(t, sigma):
    r"""Lemma A.4: :math:`\Pr[X \ge t] \le \exp(-t^2/2\sigma^2)`, :math:`X\sim N(0,\sigma^2)`.

    Examples
    --------
    >>> lemma_a4_gaussian_tail(2.0, 1.0) == math.exp(-2)
    True
    """
    t = real_array("t", t, func="lemma_a4_gaussian_tail", low=0)
    sigma = _positive("sigma", sigma, "lemma_a4_gaussian_tail")
    return as_output(np.exp(-(t**2) / (2 * sigma**2)))


def lemma_a5_small_ball(t, sigma):
    r"""Lemma A.5: :math:`\Pr[|X| \le t] \le \tfrac45\,t/\sigma`.

    True: the density is at most :math:`1/(\sqrt{2\pi}\sigma)`, and :math:`2/\sqrt{2\pi} < 4/5`.

    Examples
    --------
    >>> lemma_a5_small_ball(0.5, 2.0)  # (4/5) (1/4)
    0.2
    """
    t = real_array("t", t, func="lemma_a5_small_ball", low=0)
    sigma = _positive("sigma", sigma, "lemma_a5_small_ball")
    return as_output(LEMMA_A5_CONSTANT * t / sigma)


def lemma_a6_chi2_deviation(k, t, sigma=1.0):
    r"""Lemma A.6 (Laurent-Massart): the two deviation thresholds for :math:`X = \sigma^2\chi^2_k`.

    Returns ``(upper, lower)``:
    :math:`\Pr[X - k\sigma^2 \ge (2\sqrt{kt}+2t)\sigma^2] \le e^{-t}` and
    :math:`\Pr[k\sigma^2 - X \ge 2\sqrt{kt}\,\sigma^2] \le e^{-t}`.

    Examples
    --------
    >>> lemma_a6_chi2_deviation(4, 1.0)  # (2 sqrt(4) + 2, 2 sqrt(4))
    (6.0, 4.0)
    """
    func = "lemma_a6_chi2_deviation"
    k = _positive("k", k, func)
    t = real_array("t", t, func=func, low=0)
    sigma = _positive("sigma", sigma, func)
    root = 2 * np.sqrt(k * t)
    return as_output((root + 2 * t) * sigma**2), as_output(root * sigma**2)


# ---------------------------------------------------------------------------------------
# Appendix B: concentration
# ---------------------------------------------------------------------------------------


def lemma_b1_threshold(x_norm2, a, sigma, delta):
    r"""Lemma B.1: the threshold exceeded by :math:`|\langle u, x\rangle|` w.p. <= delta.

    .. math:: 10\|x\|_2\,a(\sqrt{a/\sigma}+1)\log(1/\delta),

    :math:`u_i = y_i 1\{|y_i|\le a\}`, :math:`y_i\sim\mathcal N(0,\sigma^2)`,
    :math:`\delta\in(0,1/10)`.

    Examples
    --------
    >>> round(lemma_b1_threshold(1.0, 1.0, 1.0, math.exp(-3)), 9)  # 10 * 1 * 2 * 3
    60.0
    """
    func = "lemma_b1_threshold"
    x_norm2 = real_array("x_norm2", x_norm2, func=func, low=0)
    a, sigma = _positive("a", a, func), _positive("sigma", sigma, func)
    delta = _delta_small("delta", delta, func)
    return as_output(LEMMA_B1_CONSTANT * x_norm2 * a * (np.sqrt(a / sigma) + 1) * np.log(1 / delta))


def lemma_b2_threshold(m, x_norm2, a, sigma, delta):
    r"""Lemma B.2: the threshold exceeded by :math:`|\|Ax\|^2 - \mathbb{E}\|Ax\|^2|` w.p. <= delta.

    .. math:: 1000\,m\|x\|_2^2(\sigma^2+a^2)\log^3(m/\delta)

    Examples
    --------
    >>> round(lemma_b2_threshold(1, 1.0, 1.0, 1.0, math.exp(-3)), 6)  # 1000 * 2 * 3^3
    54000.0
    """
    func = "lemma_b2_threshold"
    m = int_array("m", m, func=func, low=1)
    x_norm2 = real_array("x_norm2", x_norm2, func=func, low=0)
    a, sigma = _positive("a", a, func), _positive("sigma", sigma, func)
    delta = _delta_small("delta", delta, func)
    return as_output(
        LEMMA_B2_CONSTANT * m * x_norm2**2 * (sigma**2 + a**2) * np.log(m / delta) ** 3
    )


def lemma_b3_threshold(d, sigma1, e_norm2, e_norm_inf, delta):
    r"""Lemma B.3: the threshold exceeded by :math:`|\langle u,e\rangle|` with probability <= delta.

    .. math:: 2\sigma_1\|e\|_2\sqrt{\log(d/\delta)} + \sigma_1\|e\|_\infty\log^{1.5}(d/\delta)

    Examples
    --------
    >>> round(lemma_b3_threshold(1, 1.0, 1.0, 1.0, math.exp(-4)), 9)  # 2 * 2 + 4^1.5
    12.0
    """
    func = "lemma_b3_threshold"
    d = int_array("d", d, func=func, low=1)
    sigma1 = _positive("sigma1", sigma1, func)
    e_norm2 = real_array("e_norm2", e_norm2, func=func, low=0)
    e_norm_inf = real_array("e_norm_inf", e_norm_inf, func=func, low=0)
    delta = _delta_small("delta", delta, func)
    log_term = np.log(d / delta)
    c2, cinf = LEMMA_B3_CONSTANTS
    return as_output(
        sigma1 * (c2 * e_norm2 * np.sqrt(log_term) + cinf * e_norm_inf * log_term**1.5)
    )


def lemma_b4_threshold(d, sigma1, sigma2, delta):
    r"""Lemma B.4: the threshold exceeded by :math:`|\langle u,e\rangle|` w.p. <= delta.

    .. math:: 10^4\sigma_1\sigma_2\sqrt d\log^2(d/\delta)

    Examples
    --------
    >>> round(lemma_b4_threshold(4, 1.0, 1.0, 4 * math.exp(-5)), 6)  # 1e4 * 2 * 5^2
    500000.0
    """
    func = "lemma_b4_threshold"
    d = int_array("d", d, func=func, low=1)
    sigma1, sigma2 = _positive("sigma1", sigma1, func), _positive("sigma2", sigma2, func)
    delta = _delta_small("delta", delta, func)
    return as_output(LEMMA_B4_CONSTANT * sigma1 * sigma2 * np.sqrt(d) * np.log(d / delta) ** 2)


def lemma_b5_constant_c(a, sigma_a, m, delta):
    r"""Lemma B.5: :math:`C` in :math:`\Pr[\forall i, (\bar Ax)_i \ge \sigma_A C] > 1-\delta`

    .. math:: C = \frac{a^2}{6\sigma_A^2}
              - \Big(\frac{2a^3}{9\sigma_A^3}\Big)^{1/2}\sqrt{\log(m/\delta)}
              - \frac{2a}{3\sigma_A}\log(m/\delta)

    for :math:`\bar A_{ij} = y_{ij}1\{0\le y_{ij}\le a\}`, :math:`x \ge 0`, :math:`\sum_j x_j = 1`.
    As published. Deviation: the proof's mean bound
    :math:`\mathbb E[\bar A_{ij}] \ge a^2/(6\sigma_A)` holds only for
    :math:`a/\sigma_A \lesssim 0.86` (exact mean:
    ``truncated_gaussian_moment(1, a, sigma_a, one_sided=True)``), so for larger
    :math:`a/\sigma_A` the floor :math:`\sigma_A C` can exceed :math:`\max_i (\bar A x)_i`.

    Examples
    --------
    >>> L = 4.0  # a / sigma_A = 3, log(m / delta) = 4: 9/6 - sqrt(6 L) - 2 L
    >>> round(lemma_b5_constant_c(3.0, 1.0, 1, math.exp(-L)) - (1.5 - math.sqrt(6 * L) - 2 * L), 9)
    0.0
    """
    func = "lemma_b5_constant_c"
    a, sigma_a = _positive("a", a, func), _positive("sigma_a", sigma_a, func)
    m = int_array("m", m, func=func, low=1)
    delta = _delta_small("delta", delta, func)
    r, log_term = a / sigma_a, np.log(m / delta)
    return as_output(
        LEMMA_B5_MEAN_CONSTANT * r**2
        - np.sqrt(LEMMA_B5_SQRT_CONSTANT * r**3) * np.sqrt(log_term)
        - LEMMA_B5_LINEAR_CONSTANT * r * log_term
    )


def lemma_b5_part2_floor(a, sigma_a, m, delta):
    r"""Lemma B.5 part 2: the floor :math:`0.02\,a^2/\sigma_A` on every :math:`(\bar A x)_i`.

    Stated for :math:`a/\sigma_A \ge 20\log(m/\delta)`; raises ValueError outside that
    regime. As published, and false: the lemma's own
    :math:`x` has :math:`\sum_j x_j = 1` and :math:`0 \le \bar A_{ij} \le a`, so
    :math:`(\bar A x)_i` has mean at most :math:`\sigma_A/\sqrt{2\pi}` whereas the floor is at
    least :math:`0.02 \cdot 46^2\,\sigma_A \approx 42\,\sigma_A` (claims registry: Monte Carlo).

    Examples
    --------
    >>> lemma_b5_part2_floor(100.0, 1.0, 1, 0.09)  # 0.02 * 100^2
    200.0
    """
    func = "lemma_b5_part2_floor"
    a, sigma_a = _positive("a", a, func), _positive("sigma_a", sigma_a, func)
    m = int_array("m", m, func=func, low=1)
    delta = _delta_small("delta", delta, func)
    required = LEMMA_B5_PART2_RATIO * np.log(m / delta)
    if np.any(a / sigma_a < required):
        raise ValueError(
            "lemma_b5_part2_floor applies only when a / sigma_a >= 20 log(m / delta). "
            f"Got a / sigma_a = {np.min(a / sigma_a):g} < {np.max(required):g} instead."
        )
    return as_output(LEMMA_B5_PART2_FLOOR * a**2 / sigma_a)


# ---------------------------------------------------------------------------------------
# Appendix C and D
# ---------------------------------------------------------------------------------------


def claim_c4_variance_published(a):
    r"""Claim C.4 as published: :math:`1 - \sqrt{2/\pi}\,a e^{-a^2/2}/\mathrm{erf}(a/\sqrt2)`.

    Stated as :math:`\mathrm{Var}[f(x)]` for :math:`f(x) = x1\{|x|\le a\}`,
    :math:`x\sim\mathcal N(0,1)`. Deviation: that is the variance of :math:`x` *conditioned*
    on :math:`|x|\le a`; the variance of :math:`f(x)` is
    ``truncated_gaussian_moment(2, a, 1.0)``
    :math:`= \mathrm{erf}(a/\sqrt2) - \sqrt{2/\pi}\,a e^{-a^2/2}`.

    Examples
    --------
    >>> round(claim_c4_variance_published(40.0), 12)  # no truncation left: Var = 1
    1.0
    """
    a = _positive("a", a, "claim_c4_variance_published")
    return as_output(1 - np.sqrt(2 / np.pi) * a * np.exp(-(a**2) / 2) / special.erf(a / np.sqrt(2)))


def lemma_d1_threshold(m, d, sigma_a, delta):
    r"""Lemma D.1: the threshold for :math:`\sum_i (z_{ij} - \mathbb E z_{ij})`, :math:`z = |y|`.

    .. math:: \sigma_A m + 4\sigma_A\sqrt m\log^{1.5}(md/\delta)  \quad(\text{w.p.} \ge 1-\delta)

    Examples
    --------
    >>> round(lemma_d1_threshold(1, 1, 1.0, math.exp(-1)), 12)  # 1 + 4 * 1 * 1^1.5
    5.0
    """
    func = "lemma_d1_threshold"
    m = int_array("m", m, func=func, low=1)
    d = int_array("d", d, func=func, low=1)
    sigma_a = _positive("sigma_a", sigma_a, func)
    delta = _probability("delta", delta, func)
    return as_output(_lemma_d1(m, d, sigma_a, delta))


def gs1_bound(m, d, sigma_a, delta):
    r"""Lemma D.2: the bound on :math:`\mathrm{GS}_1(f)` holding with probability >= 1 - delta.

    .. math:: \mathrm{GS}_1(f) \le \sigma_A m + 4\sigma_A\sqrt m\log^{1.5}(md/\delta)

    Neighbouring inputs differ in one coordinate by at most 1, so
    :math:`\mathrm{GS}_1(f) \le \max_k \|A_{*,k}\|_1`. As published. Deviation: the proof
    applies Lemma D.1, which bounds :math:`\|A_{*,k}\|_1 - \mathbb E\|A_{*,k}\|_1`, to
    :math:`\|A_{*,k}\|_1` itself (the mean :math:`m\sigma_A\sqrt{2/\pi}` is dropped). The
    statement still holds in practice because D.1's :math:`\sigma_A m` over-covers the
    mean; see ``gs1_bound_corrected``.

    Examples
    --------
    >>> gs1_bound(50, 10, 0.1, 0.01) == lemma_d1_threshold(50, 10, 0.1, 0.01)
    True
    """
    return lemma_d1_threshold(m, d, sigma_a, delta)


def gs1_bound_corrected(m, d, sigma_a, delta):
    r"""Corrected Lemma D.2, with probability at least :math:`1-\delta`.

    .. math:: \max_k\|A_{*,k}\|_1 \le \sigma_A(m\sqrt{2/\pi} + \sqrt{2m\log(d/\delta)})

    :math:`\|g\|_1` is :math:`\sqrt m`-Lipschitz in :math:`\ell_2`, so Gaussian concentration
    (Tsirelson-Ibragimov-Sudakov) gives a sub-Gaussian upper tail of variance proxy
    :math:`m\sigma_A^2` around the mean :math:`m\sigma_A\sqrt{2/\pi}`; a union bound covers the
    :math:`d` columns.

    Examples
    --------
    >>> value = gs1_bound_corrected(1, 1, 1.0, math.exp(-1))
    >>> round(value - (math.sqrt(2 / math.pi) + math.sqrt(2)), 12)
    0.0
    """
    func = "gs1_bound_corrected"
    m = int_array("m", m, func=func, low=1)
    d = int_array("d", d, func=func, low=1)
    sigma_a = _positive("sigma_a", sigma_a, func)
    delta = _probability("delta", delta, func)
    return as_output(sigma_a * (m * np.sqrt(2 / np.pi) + np.sqrt(2 * m * np.log(d / delta))))


def gs2_bound(m, d, sigma_a, delta, *, form="statement"):
    r"""Lemma D.3: the :math:`\ell_2` sensitivity bound, as published.

    ``form="statement"``: :math:`2(\sqrt{md} + \sqrt{\log(1/\delta)})` (no :math:`\sigma_A`;
    the argument ``sigma_a`` is validated and ignored). ``form="proof"``: the proof's last
    line :math:`\sigma_A(\sqrt{md} + \sqrt{2\log(1/\delta)})`. Deviations: a column
    :math:`A_{*,k}` has :math:`m` entries (Lemma A.6 with :math:`k=m`, not :math:`md`), the
    statement loses :math:`\sigma_A`, and the sup over :math:`k` needs a union bound over
    :math:`d` columns. See ``gs2_bound_corrected``.

    Examples
    --------
    >>> round(gs2_bound(1, 4, 1.0, math.exp(-1)), 12)  # 2 (sqrt(4) + sqrt(1))
    6.0
    >>> round(gs2_bound(1, 4, 1.0, math.exp(-1), form="proof") - (2 + math.sqrt(2)), 12)
    0.0
    """
    func = "gs2_bound"
    m = int_array("m", m, func=func, low=1)
    d = int_array("d", d, func=func, low=1)
    sigma_a = _positive("sigma_a", sigma_a, func)
    delta = _probability("delta", delta, func)
    check_choice("form", form, func=func, choices=("statement", "proof"))
    if form == "statement":
        value = 2 * (np.sqrt(m * d) + np.sqrt(np.log(1 / delta)))
        return as_output(np.broadcast_to(value, np.broadcast_shapes(value.shape, sigma_a.shape)))
    return as_output(sigma_a * (np.sqrt(m * d) + np.sqrt(2 * np.log(1 / delta))))


def gs2_bound_corrected(m, d, sigma_a, delta):
    r"""Corrected Lemma D.3, with probability at least :math:`1-\delta`.

    .. math:: \max_k\|A_{*,k}\|_2 \le \sigma_A(\sqrt m + \sqrt{2\log(d/\delta)})

    :math:`\|g\|_2` is 1-Lipschitz with :math:`\mathbb E\|g\|_2 \le \sqrt m\,\sigma_A`; union
    bound over the :math:`d` columns.

    Examples
    --------
    >>> round(gs2_bound_corrected(4, 1, 1.0, math.exp(-2)), 12)  # sqrt(4) + sqrt(2 * 2)
    4.0
    """
    func = "gs2_bound_corrected"
    m = int_array("m", m, func=func, low=1)
    d = int_array("d", d, func=func, low=1)
    sigma_a = _positive("sigma_a", sigma_a, func)
    delta = _probability("delta", delta, func)
    return as_output(sigma_a * (np.sqrt(m) + np.sqrt(2 * np.log(d / delta))))


# ---------------------------------------------------------------------------------------
# Appendix E: main results, Part 1 (privacy)
# ---------------------------------------------------------------------------------------


def _theorem_epsilon(theorem, sigma, sigma_a, m, d, delta_dp, gs1, func):
    """Theorems E.1/E.2 as stated: 2 GS_1(f) (m/delta or log(m/delta)) / (sigma sigma_A)."""
    sigma, sigma_a = _positive("sigma", sigma, func), _positive("sigma_a", sigma_a, func)
    m = int_array("m", m, func=func, low=1)
    d = int_array("d", d, func=func, low=1)
    delta_dp = _probability("delta_dp", delta_dp, func)
    if gs1 is None:
        gs1 = np.asarray(gs1_bound(m, d, sigma_a, delta_dp))
    else:
        gs1 = _positive("gs1", gs1, func)
    return as_output(_theorem[theorem](sigma, sigma_a, m, delta_dp, gs1))


def epsilon_dp_theorem_e1(sigma, sigma_a, m, d, delta_dp, *, gs1=None):
    r"""Theorem E.1 (magnitude pruning, any x) as stated, in nats.

    .. math:: \epsilon_{dp} = 2\,\mathrm{GS}_1(f)\,(m/\delta_{dp})/(\sigma\sigma_A)

    Parameters
    ----------
    sigma : Laplace scale of :math:`\mathrm{Lap}(1,\sigma)` (> 0, dimensionless).
    sigma_a : standard deviation of the weights (> 0).
    m, d : width and input dimension (integers >= 1).
    delta_dp : in (0, 1).
    gs1 : :math:`\mathrm{GS}_1(f)`; default ``gs1_bound(m, d, sigma_a, delta_dp)`` (Lemma D.2
        with its failure probability set to ``delta_dp``).

    Examples
    --------
    >>> epsilon_dp_theorem_e1(2.0, 1.0, 1, 1, 0.5, gs1=1.0)  # 2 * 1 * (1 / 0.5) / 2
    2.0
    """
    return _theorem_epsilon("E.1", sigma, sigma_a, m, d, delta_dp, gs1, "epsilon_dp_theorem_e1")


def epsilon_dp_theorem_e2(sigma, sigma_a, m, d, delta_dp, *, gs1=None):
    r"""Theorem E.2 (folded pruning, :math:`x\ge0`) as stated, in nats.

    .. math:: \epsilon_{dp} = 2\,\mathrm{GS}_1(f)\log(m/\delta_{dp})/(\sigma\sigma_A)

    As stated in the theorem (arguments as in ``epsilon_dp_theorem_e1``). The proof does
    not establish it (module docstring, items 5 and 7); the proof's own last line is
    ``epsilon_dp_proof_e2``.

    Examples
    --------
    >>> round(epsilon_dp_theorem_e2(2.0, 1.0, 1, 1, math.exp(-1), gs1=1.0), 12)  # 2 * 1 * 1 / 2
    1.0
    """
    return _theorem_epsilon("E.2", sigma, sigma_a, m, d, delta_dp, gs1, "epsilon_dp_theorem_e2")


def epsilon_dp_table1(sigma, sigma_a, m, d, delta_dp, *, theorem, gs1=None):
    r"""Table 1's summary of E.1/E.2: the theorems' epsilon without the factor 2 (a deviation).

    Examples
    --------
    >>> round(epsilon_dp_table1(2.0, 1.0, 1, 1, math.exp(-1), theorem="E.2", gs1=1.0), 12)
    0.5
    """
    check_choice("theorem", theorem, func="epsilon_dp_table1", choices=_THEOREMS)
    stated = epsilon_dp_theorem_e1 if theorem == "E.1" else epsilon_dp_theorem_e2
    return as_output(np.asarray(stated(sigma, sigma_a, m, d, delta_dp, gs1=gs1)) / THEOREM_E_FACTOR)


def epsilon_dp_proof_e2(sigma, sigma_a, a, m, d, delta_dp):
    r"""Last line of Part 1 of the proof of Theorem E.2 (nats).

    .. math:: \epsilon = \frac{2\,(m + 4\sqrt m\log^{1.5}(md/\delta_{dp}))}
              {\sigma\,\big(\tfrac16 (a/\sigma_A)^2
              - \tfrac15 (a/\sigma_A)^{1.5}\log(m/\delta_{dp})\big)}

    (Lemma D.2's :math:`\delta` set to :math:`\delta_{dp}`; ``sigma_a`` enters only through
    :math:`a/\sigma_A` because the proof cancels :math:`\sigma_A` against D.2.) Returns
    ``inf`` where the denominator is not positive (the lower bound on
    :math:`\min_i(\bar Ax)_i` is vacuous). Deviations: see module docstring item 5.

    Examples
    --------
    >>> epsilon_dp_proof_e2(1.0, 1.0, 1.0, 10, 10, 0.1)  # 1/6 - log(100)/5 < 0: vacuous
    inf
    """
    func = "epsilon_dp_proof_e2"
    sigma, sigma_a = _positive("sigma", sigma, func), _positive("sigma_a", sigma_a, func)
    a = _positive("a", a, func)
    m = int_array("m", m, func=func, low=1)
    d = int_array("d", d, func=func, low=1)
    delta_dp = _probability("delta_dp", delta_dp, func)
    r = a / sigma_a
    floor = PART1_MEAN_CONSTANT * r**2 - PART1_DEVIATION_CONSTANT * r**1.5 * np.log(m / delta_dp)
    numerator = THEOREM_E_FACTOR * _lemma_d1(m, d, 1.0, delta_dp)  # D.2 divided by sigma_A
    with np.errstate(divide="ignore"):
        eps = np.where(floor > 0, numerator / (sigma * np.where(floor > 0, floor, 1.0)), np.inf)
    return as_output(eps)


def sigma_for_epsilon_dp(epsilon_dp, *, sigma_a, m, d, delta_dp, theorem="E.2", gs1=None):
    r"""The Laplace scale at which Theorem E.1/E.2 (as stated) gives ``epsilon_dp`` (nats).

    Both theorems are :math:`\epsilon_{dp} = K/\sigma`, so :math:`\sigma = K/\epsilon_{dp}`
    (e.g. Section 4.4's :math:`\epsilon_{dp} = 0.5`, :math:`\delta_{dp} = 0.1`).

    Examples
    --------
    >>> sigma = sigma_for_epsilon_dp(0.5, sigma_a=1.0, m=1, d=1, delta_dp=math.exp(-1), gs1=1.0)
    >>> round(sigma, 12), round(epsilon_dp_theorem_e2(sigma, 1.0, 1, 1, math.exp(-1), gs1=1.0), 12)
    (4.0, 0.5)
    """
    func = "sigma_for_epsilon_dp"
    epsilon_dp = _positive("epsilon_dp", epsilon_dp, func)
    check_choice("theorem", theorem, func=func, choices=_THEOREMS)
    stated = epsilon_dp_theorem_e1 if theorem == "E.1" else epsilon_dp_theorem_e2
    return as_output(np.asarray(stated(1.0, sigma_a, m, d, delta_dp, gs1=gs1)) / epsilon_dp)


def remark_e3_parameters(m, *, theorem="E.2"):
    r"""Remark E.3's parameter choices with every :math:`\Theta`-constant set to 1.

    E.2 (folded): :math:`\sigma = m`; E.1: :math:`\sigma = m^2`; both :math:`\sigma_A = 1/\sigma`,
    :math:`a = \sigma_A`. Returns ``{"sigma", "sigma_a", "a"}`` (floats). Note: then
    :math:`\sigma\sigma_A = 1`, so Theorem E.2 gives
    :math:`\epsilon_{dp} = 2\,\mathrm{GS}_1(f)\log(m/\delta_{dp})` with
    :math:`\mathrm{GS}_1 = \Theta(m\sigma_A) = \Theta(1)` (E.2), which grows with :math:`m`
    (module docstring, item 7).

    Examples
    --------
    >>> remark_e3_parameters(10)
    {'sigma': 10.0, 'sigma_a': 0.1, 'a': 0.1}
    """
    m = check_int("m", m, func="remark_e3_parameters", low=1)
    check_choice("theorem", theorem, func="remark_e3_parameters", choices=_THEOREMS)
    sigma = float(m if theorem == "E.2" else m**2)
    return {"sigma": sigma, "sigma_a": 1.0 / sigma, "a": 1.0 / sigma}


def privacy_loss(y, loc1, scale1, loc2, scale2):
    r"""Exact privacy loss :math:`\log p_1(y)/p_2(y)` of two product Laplace laws (nats).

    The mechanism of the proof releases :math:`y_i = f(x)_i + (\bar Ax)_i + \sigma(\bar Ax)_i W_i`,
    :math:`W_i\sim\mathrm{Lap}(0,1)`: location :math:`f(x)+\bar Ax`, scale
    :math:`\sigma|\bar Ax|`, both depending on :math:`x`. Then

    .. math:: \mathcal L(y) = \sum_i \log\frac{b_{2,i}}{b_{1,i}}
              + \frac{|y_i-\mu_{2,i}|}{b_{2,i}} - \frac{|y_i-\mu_{1,i}|}{b_{1,i}},

    which grows without bound in :math:`|y_i|` whenever :math:`b_{1,i} \ne b_{2,i}`: the
    mechanism is not :math:`\epsilon`-DP for any finite :math:`\epsilon` (module docstring,
    item 5). The last axis of the arrays indexes the coordinates :math:`i`.

    Examples
    --------
    >>> privacy_loss([0.3], [0.0], [1.0], [0.0], [1.0])  # the same law: no loss
    0.0
    >>> privacy_loss([0.0], [0.0], [1.0], [0.0], [2.0]) == math.log(2)  # log(b2 / b1) at y = mu
    True
    """
    func = "privacy_loss"
    y = check_finite_array("y", y, func=func)
    loc1, loc2 = (
        check_finite_array("loc1", loc1, func=func),
        check_finite_array("loc2", loc2, func=func),
    )
    scale1, scale2 = _positive("scale1", scale1, func), _positive("scale2", scale2, func)
    terms = np.log(scale2 / scale1) + np.abs(y - loc2) / scale2 - np.abs(y - loc1) / scale1
    return as_output(np.sum(terms, axis=-1))


def epsilon_dp_fixed_scale(sigma, scale_floor, gs1_location):
    r"""Repaired Part 1: Laplace mechanism with a data-independent scale :math:`\sigma c` (nats).

    If the noise is :math:`\sigma c\,\mathrm{Lap}(0,1)^m` with a fixed :math:`c > 0` (e.g. a
    high-probability floor of :math:`(\bar Ax)_i`) added to the location
    :math:`f(x) + \bar Ax`, Theorem E.6 gives pure DP with
    :math:`\epsilon = \mathrm{GS}_1(f + \bar A\,\cdot)/(\sigma c)` and
    :math:`\mathrm{GS}_1(f + \bar A\,\cdot) \le \mathrm{GS}_1(f) + \max_k\|\bar A_{*,k}\|_1`:
    no factor 2, but the location's extra sensitivity must be counted.

    Examples
    --------
    >>> epsilon_dp_fixed_scale(2.0, 0.5, 3.0)  # 3 / (2 * 0.5)
    3.0
    """
    func = "epsilon_dp_fixed_scale"
    sigma = _positive("sigma", sigma, func)
    scale_floor = _positive("scale_floor", scale_floor, func)
    gs1_location = _positive("gs1_location", gs1_location, func)
    return as_output(gs1_location / (sigma * scale_floor))


# ---------------------------------------------------------------------------------------
# Appendix E: Part 2 (closeness) and the required width
# ---------------------------------------------------------------------------------------


def _part2_constant(eps_ap, delta_ap, a, sigma, sigma_a):
    r = a / sigma_a
    return (
        eps_ap**-4
        * math.log(1 / delta_ap)
        * PART2_CONSTANT
        * (PART2_B1_CONSTANT * r * (math.sqrt(r) + 1)) ** 4
        * (sigma**4 * sigma_a**4 + sigma * sigma_a**2)
    )


def _part2_rhs(k, m, delta_ap):
    """K log^4(m / delta_ap): the right-hand side of Part 2's width condition."""
    return k * np.log(m / delta_ap) ** 4


def _check_part2(func, eps_ap, delta_ap, a, sigma, sigma_a):
    return (
        check_real("eps_ap", eps_ap, func=func, low=0, low_inclusive=False),
        check_real(
            "delta_ap",
            delta_ap,
            func=func,
            low=0,
            high=1,
            low_inclusive=False,
            high_inclusive=False,
        ),
        check_real("a", a, func=func, low=0, low_inclusive=False),
        check_real("sigma", sigma, func=func, low=0, low_inclusive=False),
        check_real("sigma_a", sigma_a, func=func, low=0, low_inclusive=False),
    )


def part2_width_rhs(m, *, eps_ap, delta_ap, a, sigma, sigma_a):
    r"""Right-hand side of Part 2's width condition (proof of Theorem E.2), as published.

    .. math:: m \ge \epsilon^{-4}\log(1/\delta)
              \Big(48\big(10\tfrac{a}{\sigma_A}(\sqrt{a/\sigma_A}+1)\log(m/\delta)\big)^4\Big)
              (\sigma^4\sigma_A^4 + \sigma\sigma_A^2)

    with :math:`\epsilon = \epsilon_{ap}`, :math:`\delta = \delta_{ap}`. ``m`` may be an array.

    Examples
    --------
    >>> kw = {"eps_ap": 1.0, "delta_ap": math.exp(-1), "a": 1.0, "sigma": 1.0, "sigma_a": 1.0}
    >>> round(part2_width_rhs(1, **kw))  # 48 (10 * 1 * 2)^4 (1 + 1) * log^4(e)
    15360000
    """
    func = "part2_width_rhs"
    eps_ap, delta_ap, a, sigma, sigma_a = _check_part2(func, eps_ap, delta_ap, a, sigma, sigma_a)
    m = int_array("m", m, func=func, low=1)
    return as_output(_part2_rhs(_part2_constant(eps_ap, delta_ap, a, sigma, sigma_a), m, delta_ap))


def required_width(eps_ap, delta_ap, *, a, sigma, sigma_a):
    r"""Smallest width from which Part 2's condition holds for every larger width (as published).

    The condition :math:`m \ge K\log^4(m/\delta)` (``part2_width_rhs``) is implicit in
    :math:`m`. With :math:`u = \log m`, :math:`h(u) = e^{u/4} - K^{1/4}(u + \log(1/\delta))` is
    convex, so the condition holds on :math:`m \le m_1` and on :math:`m \ge m_2`; the
    returned value is :math:`m_2` (1 if the condition holds for all :math:`m\ge1`), found by
    Brent's method on the increasing branch and then checked on the integers. Note that
    the condition bounds only the fluctuation of :math:`\tfrac1m\|e-\bar Ax\|^2`, not its
    mean (module docstring, item 6): see ``required_width_corrected``.

    Returns
    -------
    int

    Examples
    --------
    >>> kw = {"a": 0.1, "sigma": 1.0, "sigma_a": 1.0}
    >>> m = required_width(0.5, 0.1, **kw)
    >>> m >= part2_width_rhs(m, eps_ap=0.5, delta_ap=0.1, **kw)
    True
    >>> m - 1 >= part2_width_rhs(m - 1, eps_ap=0.5, delta_ap=0.1, **kw)
    False
    """
    func = "required_width"
    eps_ap, delta_ap, a, sigma, sigma_a = _check_part2(func, eps_ap, delta_ap, a, sigma, sigma_a)
    k = _part2_constant(eps_ap, delta_ap, a, sigma, sigma_a)
    k4 = k**0.25
    log_inv_delta = math.log(1 / delta_ap)

    def holds(m: int) -> bool:
        return m >= _part2_rhs(k, m, delta_ap)

    def h(u: float) -> float:
        return math.exp(u / 4) - k4 * (u + log_inv_delta)

    u_min = max(4 * math.log(4 * k4), 0.0)
    if h(u_min) >= 0:
        return 1
    upper = u_min + 1.0
    for _ in range(200):  # h grows like exp(u/4): a few doublings always suffice
        if h(upper) > 0:
            break
        upper = 2 * upper + 1
    else:
        raise ValueError(f"required_width did not bracket a root for K = {k:g}.")
    u_root = optimize.brentq(h, u_min, upper, xtol=1e-12)
    root = math.exp(u_root)
    if root >= 2**52:  # unit steps are below float resolution: round the root up
        return math.ceil(root * (1 + 1e-12))
    m = max(1, math.floor(root))
    for _ in range(64):  # the float root is within a few units of the integer answer
        if holds(m):
            break
        m += 1
    while m > 1 and holds(m - 1) and (m - 1) > math.exp(u_min):
        m -= 1
    return m


def pruned_row_moments(x, *, a, sigma_a, pruning="magnitude"):
    r"""Exact second and fourth moments of a pruned row product :math:`(\bar Ax)_i`, fixed x.

    :math:`(\bar Ax)_i = \sum_j u_j x_j` with :math:`u_j` i.i.d. pruned weights:
    ``"magnitude"``: :math:`u = y1\{|y|\le a\}` (Theorem E.1, Lemma B.1; sign of
    :math:`\bar A = \tilde A - A` is irrelevant here), ``"folded"``:
    :math:`u = y1\{0\le y\le a\}` (Theorem E.2, Lemma B.5), :math:`y\sim\mathcal N(0,\sigma_A^2)`.
    Cumulants add: :math:`\kappa_n(\sum u_jx_j) = \kappa_n(u)\sum_j x_j^n`.

    Returns
    -------
    (float, float)

    Examples
    --------
    >>> m2, m4 = pruned_row_moments(np.array([1.0]), a=40.0, sigma_a=1.0)  # no pruning left
    >>> round(m2, 9), round(m4, 9)  # E y^2 and E y^4 of N(0, 1)
    (1.0, 3.0)
    """
    func = "pruned_row_moments"
    x = check_finite_array("x", x, func=func, ndim=1)
    a = check_real("a", a, func=func, low=0, low_inclusive=False)
    sigma_a = check_real("sigma_a", sigma_a, func=func, low=0, low_inclusive=False)
    check_choice("pruning", pruning, func=func, choices=_PRUNINGS)
    one_sided = pruning == "folded"
    mu = [truncated_gaussian_moment(k, a, sigma_a, one_sided=one_sided) for k in range(5)]
    k1 = mu[1]
    k2 = mu[2] - mu[1] ** 2
    k3 = mu[3] - 3 * mu[2] * mu[1] + 2 * mu[1] ** 3
    k4 = mu[4] - 4 * mu[3] * mu[1] - 3 * mu[2] ** 2 + 12 * mu[2] * mu[1] ** 2 - 6 * mu[1] ** 4
    c1, c2, c3, c4 = (float(k * np.sum(x**n)) for n, k in enumerate((k1, k2, k3, k4), start=1))
    m2 = c2 + c1**2
    m4 = c4 + 4 * c3 * c1 + 3 * c2**2 + 6 * c2 * c1**2 + c1**4
    return m2, m4


def closeness_mean_square(sigma, row_m2):
    r"""The mean :math:`\mathbb E[\tfrac1m\|e - \bar Ax\|^2] = 2\sigma^2\,\mathbb E[(\bar Ax)_i^2]`.

    This is the term Part 2 drops.

    :math:`e_i - (\bar Ax)_i = \sigma(\bar Ax)_i W_i`, :math:`W_i\sim\mathrm{Lap}(0,1)`,
    :math:`\mathbb E W^2 = 2`. Closeness at level :math:`\epsilon_{ap}` needs this below
    :math:`\epsilon_{ap}^2` whatever the width.

    Examples
    --------
    >>> closeness_mean_square(2.0, 0.25)  # 2 * 2^2 * 0.25
    2.0
    """
    sigma = _positive("sigma", sigma, "closeness_mean_square")
    row_m2 = real_array("row_m2", row_m2, func="closeness_mean_square", low=0)
    return as_output(2 * sigma**2 * row_m2)


def required_width_corrected(eps_ap, delta_ap, *, sigma, row_m2, row_m4):
    r"""Corrected Part 2: a width sufficient for (eps_ap, delta_ap)-closeness (Definition 3.1).

    Closeness: :math:`\Pr[\tfrac1{\sqrt m}\|e-\bar Ax\|_2 \ge \epsilon_{ap}] \le \delta_{ap}`.

    The :math:`z_i = \sigma^2(\bar Ax)_i^2W_i^2` are i.i.d. over rows (fixed :math:`x`), with
    :math:`\mathbb Ez = 2\sigma^2 m_2` and :math:`\mathbb Ez^2 = 24\sigma^4 m_4`
    (``row_m2``, ``row_m4`` from ``pruned_row_moments``). Chebyshev:
    :math:`\Pr[\bar z \ge \epsilon^2] \le \mathrm{Var}\,z/(m(\epsilon^2-\mathbb Ez)^2)`, so

    .. math:: m \ge \frac{24\sigma^4 m_4 - 4\sigma^4 m_2^2}
              {\delta_{ap}(\epsilon_{ap}^2 - 2\sigma^2 m_2)^2}

    suffices when :math:`2\sigma^2 m_2 < \epsilon_{ap}^2`; otherwise no width achieves the
    closeness and ``math.inf`` is returned (the conservative side).

    Returns
    -------
    int or float (``inf``)

    Examples
    --------
    >>> required_width_corrected(2.0, 0.5, sigma=1.0, row_m2=1.0, row_m4=3.0)  # 68 / (0.5 * 2^2)
    34
    >>> required_width_corrected(0.1, 0.1, sigma=1.0, row_m2=1.0, row_m4=3.0)  # mean above eps^2
    inf
    """
    func = "required_width_corrected"
    eps_ap = check_real("eps_ap", eps_ap, func=func, low=0, low_inclusive=False)
    delta_ap = check_real(
        "delta_ap", delta_ap, func=func, low=0, high=1, low_inclusive=False, high_inclusive=False
    )
    sigma = check_real("sigma", sigma, func=func, low=0, low_inclusive=False)
    row_m2 = check_real("row_m2", row_m2, func=func, low=0)
    row_m4 = check_real("row_m4", row_m4, func=func, low=row_m2**2)
    gap = eps_ap**2 - 2 * sigma**2 * row_m2
    if gap <= 0:
        return math.inf
    variance = LAPLACE_FOURTH_MOMENT * sigma**4 * row_m4 - (2 * sigma**2 * row_m2) ** 2
    return max(1, math.ceil(variance / (delta_ap * gap**2)))


def epsilon_dp_theorem_expr(*, theorem="E.2"):
    r"""Theorem E.1/E.2 as a sympy expression, with :math:`\mathrm{GS}_1` from Lemma D.2 (nats).

    Symbols: ``sigma``, ``sigma_A``, ``m``, ``d``, ``delta_dp`` (D.2's failure probability
    set to :math:`\delta_{dp}`), as in ``epsilon_dp_theorem_e1`` / ``_e2``.

    Examples
    --------
    >>> sorted(s.name for s in epsilon_dp_theorem_expr(theorem="E.1").free_symbols)
    ['d', 'delta_dp', 'm', 'sigma', 'sigma_A']
    """
    check_choice("theorem", theorem, func="epsilon_dp_theorem_expr", choices=_THEOREMS)
    return _sym_theorem(theorem, _sym_lemma_d1(_M, _D, _SIGMA_A, _DELTA_DP))
