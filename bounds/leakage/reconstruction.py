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
