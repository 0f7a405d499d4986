r"""The Gaussian-channel upper bound: :math:`\tfrac12\log_2\det(I + \Sigma/s^2)` bits."""

from __future__ import annotations

import math

import numpy as np

from bounds.leakage._releases import centred, release_matrix
from bounds.validation import check_real


def gaussian_channel_bound_bits(releases, noise_std: float) -> float:
    r"""Upper bound :math:`I(X; Y) \le \tfrac12\log_2\det(I_k + \Sigma/s^2)` bits.

    .. math::

        \Sigma = \tfrac1M C^\top C,\quad C = R - \mathbf 1\bar r^\top,\qquad
        \tfrac12\log_2\det\big(I_k + \tfrac{C^\top C}{M s^2}\big)
        = \tfrac12\sum_i \log_2\big(1 + \tfrac{\sigma_i(C)^2}{M s^2}\big),

    with :math:`\sigma_i(C)^2` the eigenvalues of the centred Gram matrix :math:`CC^\top`
    (:math:`M\times M`) or of :math:`C^\top C` (:math:`k\times k`), whichever is smaller:
    both have the same non-zero spectrum, so
    :math:`\det(I_k + C^\top C/(Ms^2)) = \det(I_M + CC^\top/(Ms^2))`. Eigenvalues carry
    an absolute rounding error of about :math:`10^{-16}\max_i\sigma_i^2` (negative ones
    are set to 0), so each term is off by at most about
    :math:`10^{-16}\max_i\sigma_i^2/(Ms^2)` bits; the Gram route is ~3x faster than an SVD
    at :math:`M = 1797`, :math:`k = 2000`.

    Why it holds. :math:`Y = r_X + Z` with :math:`Z\sim N(0, s^2 I_k)` independent of
    :math:`X`, and :math:`r_X` has covariance :math:`\Sigma` under the uniform prior
    (population covariance, divided by :math:`M`). Then
    :math:`I(X; Y) \le I(r_X; Y) = h(Y) - h(Z)` (data processing; equality here since
    :math:`Y` depends on :math:`X` only through :math:`r_X`) and
    :math:`h(Y) \le \tfrac12\log\det(2\pi e(\Sigma + s^2 I))` because the Gaussian has the
    largest entropy for a given covariance (Cover & Thomas, *Elements of Information
    Theory*, 2nd ed., Thm. 8.6.5); the result is the capacity of the vector Gaussian
    channel at input covariance :math:`\Sigma` (ibid., Ch. 9). Valid for **any** release
    distribution with that covariance; loose when the releases are far from Gaussian
    (it is not capped by :math:`\log_2 M`: take the minimum with
    :func:`bounds.leakage.ceiling_bits`).

    Parameters
    ----------
    releases : (M, k) finite array, one release vector per candidate.
    noise_std : :math:`s \ge 0`; ``s = 0`` gives ``inf`` unless all releases are equal (0).

    Returns
    -------
    float, bits per release (one round).

    Examples
    --------
    >>> round(gaussian_channel_bound_bits([[-1.0], [1.0]], 1.0), 12)  # 1/2 log2(1 + 1)
    0.5
    >>> gaussian_channel_bound_bits([[3.0, 3.0], [3.0, 3.0]], 0.0)
    0.0
    """
    func = "gaussian_channel_bound_bits"
    r = release_matrix(releases, func)
    s = check_real("noise_std", noise_std, func=func, low=0)
    c = centred(r)
    if c.size == 0 or not np.any(c):
        return 0.0
    if s == 0:
        return math.inf
    gram = c @ c.T if c.shape[0] <= c.shape[1] else c.T @ c
    eigenvalues = np.clip(np.linalg.eigvalsh(gram), 0.0, None)
    return float(0.5 * np.sum(np.log1p(eigenvalues / (r.shape[0] * s * s))) / math.log(2))
