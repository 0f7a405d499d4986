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

import numpy as np
from scipy import special

from bounds.leakage._releases import centred_scaled, difference_norm, release_matrix, representable
from bounds.validation import check_int, check_real

# Floats of one block of squared distances (rows x M): 16 MiB.
_BLOCK_FLOATS = 1 << 21


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
    r = release_matrix(releases, func)
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
