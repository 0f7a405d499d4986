r"""Differential-privacy bound on identification (reconstruction) success, Gaussian mechanism.

Balle, Cherubin, Hayes 2022 ("Reconstructing training data with informed adversaries",
IEEE S&P, arXiv 2201.04845) define reconstruction robustness (ReRo); Hayes, Mahloujifar,
Balle 2023 ("Bounding training data reconstruction in DP-SGD", NeurIPS, arXiv 2302.07225)
bound it for an :math:`f`-DP mechanism: against a prior whose best blind guess succeeds
with probability :math:`\kappa`, any attack succeeds with probability at most
:math:`1 - f(\kappa)`. Kaissis, Hayes, Ziller, Rueckert 2023 (arXiv 2307.03928) give the
closed form for the Gaussian mechanism used here. The Gaussian mechanism with
:math:`\ell_2` sensitivity :math:`\Delta` and noise :math:`N(0, s^2 I)` is
:math:`\mu`-GDP with :math:`\mu = \Delta/s`, trade-off function
:math:`f_\mu(\alpha) = \Phi(\Phi^{-1}(1-\alpha) - \mu)` (Dong, Roth, Su 2022, "Gaussian
differential privacy", JRSS-B, Def. 2.7 and Thm. 2.7).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from pruneleak.bounds.leakage._releases import (
    all_subsets,
    centred_scaled,
    difference_norm,
    gram_eigenvalues,
    release_matrix,
    representable,
    subset_sums,
)
from pruneleak.bounds.validation import check_int, check_real

# Floats of one block of squared distances (rows x M, or subsets x N): 16 MiB.
_BLOCK_FLOATS = 1 << 21
# batch_sensitivity enumerates all N (N - 1) / 2 pairs of subsets up to this N (8.4e6 pairs).
MAX_ENUMERATED_SUBSETS = 4096
_UNIT_ROUNDOFF = 2.0**-53


def gaussian_mechanism_success_bound(
    candidates: int, sensitivity: float, noise_std: float
) -> float:
    r"""Success bound :math:`\Phi(\Phi^{-1}(1/M) + \mu)`, :math:`\mu = \Delta/s`, of any attack.

    .. math::

        \Pr[\hat X = X] \le 1 - f_\mu(1/M)
        = 1 - \Phi\big(\Phi^{-1}(1 - 1/M) - \mu\big)
        = \Phi\big(\Phi^{-1}(1/M) + \mu\big)

    (module docstring for the sources). Assumptions: :math:`X` uniform on :math:`M`
    candidates (blind success :math:`\kappa = 1/M`), success means naming the true
    candidate exactly, the release is :math:`r_X + N(0, s^2 I)` with
    :math:`\Delta \ge \max_{i,j}\|r_i - r_j\|_2` (every pair of candidates is a pair of
    neighbouring inputs; :func:`max_pairwise_distance` computes it). Holds for every
    attack, the Bayes-optimal one of :func:`bounds.leakage.exact_leakage` included.
    Checks: :math:`\mu = 0` gives :math:`1/M` (no attack beats guessing),
    :math:`\mu\to\infty` gives 1. ``s = 0`` with :math:`\Delta > 0` gives 1;
    :math:`\Delta = 0` gives :math:`1/M` for every ``s`` (the release is constant).
    :math:`\Phi^{-1}(1/M)` is ``ndtri_exp(-ln M)``, finite for every :math:`M` (``1/M``
    underflows to 0 beyond :math:`2^{1074}`), and :math:`\mu` beyond the largest float
    counts as :math:`\infty`. A result below the smallest float (huge :math:`M`, small
    :math:`\mu`) rounds to 0.

    Parameters
    ----------
    candidates : :math:`M \ge 1`.
    sensitivity : :math:`\Delta \ge 0`, same unit as ``noise_std``.
    noise_std : :math:`s \ge 0`.

    Returns
    -------
    float, a probability in :math:`[1/M, 1]`.

    Examples
    --------
    >>> gaussian_mechanism_success_bound(4, 0.0, 1.0)
    0.25
    >>> round(gaussian_mechanism_success_bound(2, 1.0, 1.0), 6)  # Phi(0 + 1)
    0.841345
    """
    func = "gaussian_mechanism_success_bound"
    m = check_int("candidates", candidates, func=func, low=1)
    delta = check_real("sensitivity", sensitivity, func=func, low=0)
    s = check_real("noise_std", noise_std, func=func, low=0)
    if delta == 0:
        return 1 / m
    if s == 0:
        return 1.0
    return float(special.ndtr(special.ndtri_exp(-math.log(m)) + delta / s))


def _nonnegative_or_inf(name: str, value, func: str) -> float:
    """``value`` as a float in [0, inf] (``inf``: no noise), else the usual ValueError."""
    if isinstance(value, (int, float, np.floating)) and value == math.inf:
        return math.inf
    return check_real(name, value, func=func, low=0)


def gdp_reconstruction_bound(kappa: float, mu: float) -> float:
    r"""ReRo bound of a :math:`\mu`-GDP mechanism: :math:`\Phi(\Phi^{-1}(\kappa) + \mu)`.

    .. math::

        \Pr[\text{success}] \le 1 - f_\mu(\kappa)
        = 1 - \Phi\big(\Phi^{-1}(1 - \kappa) - \mu\big)
        = \Phi\big(\Phi^{-1}(\kappa) + \mu\big)

    Hayes, Mahloujifar, Balle 2023 (arXiv 2302.07225, Thm. 2 / Sec. 3: an :math:`f`-DP
    mechanism is :math:`(\eta, 1 - f(\kappa))`-ReRo against a prior of baseline success
    :math:`\kappa`), with the Gaussian trade-off :math:`f_\mu` (Dong, Roth, Su 2022,
    Def. 2.7). ``kappa`` is the probability that the best blind guess succeeds
    (:math:`1/N` for naming one of :math:`N` equally likely secrets); ``mu`` the GDP
    parameter *for the relation between the candidates* (e.g. :math:`2C/(\sigma C)` for
    one Gaussian step whose candidates differ by replacing one clipped example).
    :func:`gaussian_mechanism_success_bound` is this with :math:`\kappa = 1/M`,
    :math:`\mu = \Delta/s`. Probability (no unit).

    Parameters
    ----------
    kappa : baseline success in [0, 1].
    mu : :math:`\mu \ge 0` (``inf`` allowed: no noise, bound 1 for :math:`\kappa > 0`).

    Returns
    -------
    float in :math:`[\kappa, 1]`.

    Examples
    --------
    >>> round(gdp_reconstruction_bound(0.5, 1.0), 6)  # Phi(0 + 1)
    0.841345
    >>> gdp_reconstruction_bound(0.25, 0.0)
    0.25
    """
    func = "gdp_reconstruction_bound"
    k = check_real("kappa", kappa, func=func, low=0, high=1)
    mu = _nonnegative_or_inf("mu", mu, func)
    if k in (0.0, 1.0) or mu == 0:
        return k
    if math.isinf(mu):
        return 1.0
    # Phi(Phi^-1(kappa) + mu) >= kappa; the max keeps it so where ndtr underflows (tiny kappa)
    return max(k, float(special.ndtr(special.ndtri(k) + mu)))


def dp_reconstruction_bound(kappa: float, epsilon: float, delta: float) -> float:
    r"""ReRo bound of an (epsilon, delta)-DP mechanism, :math:`\le e^\epsilon\kappa + \delta`.

    An :math:`(\epsilon,\delta)`-DP mechanism is :math:`f_{\epsilon,\delta}`-DP with
    :math:`f_{\epsilon,\delta}(\alpha) = \max(0, 1 - \delta - e^\epsilon\alpha,
    e^{-\epsilon}(1 - \delta - \alpha))` (Dong, Roth, Su 2022, Def. 2.4 / Prop. 2.5), so by
    Hayes et al. 2023 (arXiv 2302.07225, Sec. 3) success is at most
    :math:`1 - f_{\epsilon,\delta}(\kappa) = \min\big(1, e^\epsilon\kappa + \delta,
    1 - e^{-\epsilon}(1 - \delta - \kappa)\big)`. The third term is below the second only
    when :math:`\kappa > (1 - \delta)/(1 + e^\epsilon)`; both are returned through the
    minimum. ``epsilon`` in nats for the relation between the candidates (a replacement
    of one record costs group privacy over add/remove: :math:`2\epsilon` with
    :math:`(1 + e^\epsilon)\delta`, or the mechanism's own replace-one curve).

    Parameters
    ----------
    kappa : baseline success in [0, 1].
    epsilon : :math:`\epsilon \ge 0` in nats (``inf`` allowed: bound 1).
    delta : in [0, 1].

    Returns
    -------
    float in :math:`[\kappa, 1]`.

    Examples
    --------
    >>> dp_reconstruction_bound(0.01, 0.0, 0.0)
    0.01
    >>> round(dp_reconstruction_bound(0.01, math.log(2.0), 0.001), 12)  # 2 * 0.01 + 0.001
    0.021
    """
    func = "dp_reconstruction_bound"
    k = check_real("kappa", kappa, func=func, low=0, high=1)
    eps = _nonnegative_or_inf("epsilon", epsilon, func)
    d = check_real("delta", delta, func=func, low=0, high=1)
    if math.isinf(eps):
        return 1.0 if k > 0 or d > 0 else 0.0
    # e^eps kappa in log space: exp overflows to inf (bound 1) rather than raising
    overflows = k > 0 and eps + math.log(k) > 700
    linear = math.inf if overflows else (math.exp(eps) * k if k > 0 else 0.0)
    other = 1 - math.exp(-eps) * (1 - d - k)
    return float(max(k, min(1.0, linear + d, other)))


def max_pairwise_distance(releases) -> float:
    r""":math:`\max_{i,j}\|r_i - r_j\|_2`, the :math:`\ell_2` sensitivity over the candidates.

    Squared distances :math:`\|c_i\|^2 + \|c_j\|^2 - 2\langle c_i, c_j\rangle` of the
    centred rows in units of a power of two (``centred_scaled``: entries below 1, no
    overflow or underflow), a block of rows at a time (memory
    :math:`O(\text{block}\cdot M)`); the maximising pair is then measured directly,
    :math:`\|r_i - r_j\|_2` (``difference_norm``), so the result has no cancellation
    error. Unit: that of ``releases``. ValueError when the distance exceeds the largest
    float, 1.8e308 (rows of opposite signs near it).

    Parameters
    ----------
    releases : (M, k) finite array, one release vector per candidate.

    Returns
    -------
    float, :math:`\ge 0` (0 for :math:`M = 1`).

    Examples
    --------
    >>> max_pairwise_distance([[0.0, 0.0], [3.0, 4.0], [1.0, 1.0]])
    5.0
    """
    func = "max_pairwise_distance"
    return _max_pairwise_distance(release_matrix(releases, func), func)


def _max_pairwise_distance(r: np.ndarray, func: str) -> float:
    """:func:`max_pairwise_distance` of a validated release matrix; errors name ``func``."""
    c, _ = centred_scaled(r)
    m = c.shape[0]
    norms = np.einsum("ij,ij->i", c, c)
    rows = max(1, _BLOCK_FLOATS // m)
    best, pair = -math.inf, (0, 0)
    for start in range(0, m, rows):
        block = c[start : start + rows]
        sq = norms[start : start + rows, None] + norms[None, :] - 2 * block @ c.T
        i, j = np.unravel_index(int(np.argmax(sq)), sq.shape)
        if sq[i, j] > best:
            best, pair = float(sq[i, j]), (start + int(i), int(j))
    x, exponent = difference_norm(r[pair[0]], r[pair[1]])
    if x > 0 and not representable(x, exponent):
        raise ValueError(
            f"The 'releases' parameter of {func} must have pairwise distances below the "
            f"largest float, 1.8e308. Got rows {pair[0]} and {pair[1]} at distance "
            f"2**{math.log2(x) + exponent:.1f} instead; rescale the releases."
        )
    return math.ldexp(x, exponent)


@dataclass(frozen=True)
class BatchSensitivity:
    r""":math:`\ell_2` sensitivity of the mean release of a batch (unit of the releases).

    Attributes
    ----------
    value : the diameter :math:`D_B` of the batch means (``"exact"``) or an upper bound on
        it (``"bound"``); either is a valid sensitivity for
        :func:`gaussian_mechanism_success_bound` with :math:`\binom{M}{B}` candidates.
    method : ``"exact"`` or ``"bound"`` (:func:`batch_sensitivity`).
    """

    value: float
    method: str


def _diameter_of_subset_sums(r: np.ndarray, c: np.ndarray, size: int) -> float:
    r""":math:`\max_{S\ne S'}\|\sum_S r_i - \sum_{S'} r_i\|` over the ``size``-subsets:
    squared distances :math:`Q_S + Q_{S'} - 2P_{SS'}` from the Gram matrix of the centred
    rows ``c`` (:math:`Q_S = 1_S^\top G 1_S`, :math:`P_{SS'} = 1_S^\top G 1_{S'}`), a block
    of subsets at a time against all of them (memory ``_BLOCK_FLOATS``), then the best pair
    measured directly as :math:`\|\sum_t (r_{a_t} - r_{c_t})\|`, :math:`\{a_t\} = S\setminus
    S'`, :math:`\{c_t\} = S'\setminus S` (``difference_norm``: no cancellation)."""
    m = c.shape[0]
    gram = c @ c.T
    subsets = all_subsets(m, size)
    n = subsets.shape[1]
    rows = max(1, _BLOCK_FLOATS // max(n, m))
    quadratic = np.empty(n)
    for start in range(0, n, rows):
        block = subsets[:, start : start + rows]
        sums = subset_sums(gram, block)  # (rows, M): 1_S^T G
        quadratic[start : start + block.shape[1]] = np.take_along_axis(sums, block.T, 1).sum(1)
    best, pair = -math.inf, (0, 0)
    for start in range(0, n, rows):
        block = subsets[:, start : start + rows]
        cross = subset_sums(subset_sums(gram, block).T, subsets)  # (N, rows): P_{S'S}
        squared = quadratic[:, None] + quadratic[None, start : start + block.shape[1]] - 2 * cross
        i, j = np.unravel_index(int(np.argmax(squared)), squared.shape)
        if squared[i, j] > best:
            best, pair = float(squared[i, j]), (int(i), start + int(j))
    first, second = set(subsets[:, pair[0]].tolist()), set(subsets[:, pair[1]].tolist())
    x, exponent = difference_norm(r[sorted(first - second)], r[sorted(second - first)])
    return math.ldexp(x, exponent)


def batch_sensitivity(
    releases, batch_size: int, *, max_enumerated: int = MAX_ENUMERATED_SUBSETS
) -> BatchSensitivity:
    r"""Sensitivity of the mean release of a uniform :math:`B`-subset: the diameter
    :math:`D_B = \max_{S\ne S'}\|\bar r_S - \bar r_{S'}\|_2`, or an upper bound on it.

    Why it is the sensitivity to use. The secret is a :math:`B`-subset :math:`S` of the
    :math:`M` candidates, uniform on the :math:`N = \binom{M}{B}` subsets, and the server
    sees :math:`\bar r_S + N(0, s^2 I)`, :math:`\bar r_S = \tfrac1B\sum_{i\in S} r_i`
    (:func:`bounds.leakage.batch_leakage`). Take every pair of subsets as a pair of
    neighbouring inputs: the Gaussian mechanism with :math:`\ell_2` sensitivity
    :math:`\Delta \ge \max_{S\ne S'}\|\bar r_S - \bar r_{S'}\|` is then
    :math:`\Delta/s`-GDP for that relation (Dong, Roth, Su 2022, Thm. 2.7), and
    :func:`gaussian_mechanism_success_bound` ``(N, Delta, s)`` bounds any attack's chance of
    naming the whole batch (Hayes et al. 2023, module docstring). :math:`D_B` is the
    smallest valid :math:`\Delta`; :func:`max_pairwise_distance` :math:`\Delta_1 =
    \max_{ij}\|r_i - r_j\|` is valid too, since with :math:`A = S\setminus S'`,
    :math:`C = S'\setminus S`, :math:`|A| = |C| = q`,

    .. math::

        \bar r_S - \bar r_{S'} = \frac1B\Big(\sum_{i\in A} r_i - \sum_{j\in C} r_j\Big)
        = \frac1B\sum_{t=1}^q (r_{a_t} - r_{c_t}),\qquad
        1 \le q \le q_{\max} = \min(B, M - B)

    (the two subsets share :math:`B - q` members, taken from the other :math:`M - 2q`).

    Exact (``method="exact"``): :math:`B = 1` (:func:`max_pairwise_distance`, the same
    number), :math:`B = M` (0), :math:`q_{\max} = 1` (:math:`\Delta_1/B`: only
    complements of single candidates), and :math:`N \le` ``max_enumerated``: all
    :math:`N(N-1)/2` pairs of the smaller of the subsets and their complements (the
    differences of sums are the same up to sign), squared distances from the Gram matrix,
    the largest pair measured directly. Time :math:`O(N^2\min(B, M-B))`.

    Bound (``method="bound"``, larger :math:`N`). Write :math:`c_i = r_i - p` for any point
    :math:`p` and :math:`v = 1_A - 1_C`: :math:`v` sums to 0, so
    :math:`\sum_A r_i - \sum_C r_j = \sum_i v_i c_i`, and :math:`\|v\|^2 = 2q`. Three
    bounds hold at each :math:`q`:

    - :math:`q\Delta_1`: the triangle inequality over the :math:`q` pairs above;
    - :math:`\sqrt{2q\lambda_{\max}}`: :math:`\|\sum_i v_i c_i\|^2 = v^\top G v \le
      \lambda_{\max}(G)\|v\|^2`, :math:`G = (\langle c_i, c_j\rangle)` the centred Gram
      matrix about the mean (centring does not change :math:`v^\top G v`, :math:`v` sums to
      0, and the mean gives the smallest :math:`\mathrm{tr}\,G`);
    - :math:`T_{2q}`, the sum of the :math:`2q` largest :math:`\|r_i - p\|`:
      :math:`\|\sum_A c_i - \sum_C c_j\| \le \sum_{A\cup C}\|c_i\|`, taken for :math:`p`
      the mean and :math:`p` the coordinate-wise median (the smaller; the median is not
      pulled by an outlier). Tight for one outlier, or for collinear releases split at
      :math:`p`.

    so :math:`D_B \le \tfrac1B\max_{q\le q_{\max}}\min(q\Delta_1, \sqrt{2q\lambda_{\max}},
    T_{2q}) \le \tfrac{q_{\max}}B\Delta_1 \le \Delta_1`. Costs :math:`O(Mk\min(M, k))` (the
    smaller Gram matrix and its eigenvalues) on top of :func:`max_pairwise_distance`. Each
    term carries a margin for rounding, so the bound holds for the computed numbers:
    :math:`\Delta_1(1 + 8(k + 4)u)` (the search for the farthest pair may pick a pair
    :math:`O(ku)` short), :math:`\lambda_{\max} + 2(\max(M,k) + 8\min(M,k))\,u\,\mathrm{tr}\,G`
    (forming :math:`G`, Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed.,
    eq. 3.5, and a backward stable symmetric eigensolver, LAPACK Users' Guide, 3rd ed.,
    Sec. 4.7, with its :math:`p(n)` taken as :math:`8n`), plus :math:`2u\sqrt{\mathrm{tr}\,G}`
    for the centring, and :math:`T_{2q}(1 + 2(k + 2q + 4)u)`; :math:`u = 2^{-53}`.
    Subnormal rounding adds :math:`\sqrt{Mk}\,2^{-1070}` in units of the largest centred
    entry.

    Parameters
    ----------
    releases : (M, k) finite array, row :math:`i` the release of candidate :math:`i` alone.
    batch_size : :math:`B`, an integer in :math:`[1, M]`.
    max_enumerated : largest :math:`N` searched exactly (time grows as :math:`N^2`), at
        least 0.

    Returns
    -------
    BatchSensitivity, ``value`` in the unit of ``releases``, :math:`\le\Delta_1`.

    Examples
    --------
    >>> batch_sensitivity([[0.0, 0.0], [3.0, 4.0], [1.0, 1.0]], 1)  # max_pairwise_distance
    BatchSensitivity(value=5.0, method='exact')
    >>> batch_sensitivity(np.eye(4), 2)  # {0, 1} against {2, 3}: |(1, 1, -1, -1)| / 2
    BatchSensitivity(value=1.0, method='exact')
    >>> res = batch_sensitivity(np.eye(4), 2, max_enumerated=0)  # sqrt(2 * 2 * 1) / 2
    >>> res.method, round(res.value, 12), res.value >= 1.0
    ('bound', 1.0, True)
    """
    func = "batch_sensitivity"
    r = release_matrix(releases, func)
    m, k = r.shape
    b = check_int("batch_size", batch_size, func=func, low=1, high=m)
    cap = check_int("max_enumerated", max_enumerated, func=func, low=0)
    pairwise = _max_pairwise_distance(r, func)
    small = min(b, m - b)  # q_max, and the size of the subsets enumerated
    if b == 1:
        return BatchSensitivity(pairwise, "exact")
    if small == 0 or pairwise == 0:
        return BatchSensitivity(0.0, "exact")
    if small == 1:
        return BatchSensitivity(pairwise / b, "exact")
    c, exponent = centred_scaled(r)
    if math.comb(m, b) <= cap:
        return BatchSensitivity(_diameter_of_subset_sums(r, c, small) / b, "exact")
    u = _UNIT_ROUNDOFF
    tiny = math.sqrt(m * k) * 2.0**-1070
    d1 = math.ldexp(pairwise, -exponent) * (1 + 8 * (k + 4) * u)
    eigenvalues = gram_eigenvalues(c)
    trace = float(np.sum(np.einsum("ij,ij->i", c, c)))
    top = max(float(eigenvalues[-1]), 0.0) + 2 * (max(m, k) + 8 * min(m, k)) * u * trace
    spectral = math.sqrt(top) + 2 * u * math.sqrt(trace) + tiny
    # T_2q about the mean (c) and about the coordinate-wise median, which an outlier does not
    # pull: both in units of 2^exponent; r is scaled below 1/2 first (no overflow in r - p).
    scale = math.frexp(float(np.abs(r).max()))[1] + 1
    y = np.ldexp(r, -scale)
    # (+ sqrt(k) 2^-1073: entries of y below the subnormal range are lost; inf when that
    # term, or a norm, is beyond the float range in units of 2^exponent)
    deviation = np.linalg.norm(y - np.median(y, axis=0), axis=1) + math.sqrt(k) * 2.0**-1073
    with np.errstate(over="ignore"):
        about_median = np.ldexp(deviation, scale - exponent)
    outer = np.minimum(
        *(
            np.cumsum(np.sort(x)[::-1][: 2 * small])
            for x in (np.linalg.norm(c, axis=1), about_median)
        )
    )
    outer = outer * (1 + 2 * (k + 2 * small + 4) * u) + tiny
    scaled = max(
        min(q * d1, math.sqrt(2 * q) * spectral, float(outer[2 * q - 1]))
        for q in range(1, small + 1)
    )
    return BatchSensitivity(min(math.ldexp(scaled / b, exponent), pairwise), "bound")
