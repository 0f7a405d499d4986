r"""Fano's inequality: an attack's identification error gives a lower bound on I(X; Y)."""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from pruneleak.bounds.leakage.intervals import MAX_TRIALS, clopper_pearson_interval
from pruneleak.bounds.validation import check_int, check_open_unit, check_real


def _binary_entropy_bits(p: float) -> float:
    return float(special.entr(p) + special.entr(1 - p)) / math.log(2)


def _fano_bits(m: int, p: float) -> float:
    if m == 1:
        return 0.0
    value = math.log2(m) - _binary_entropy_bits(p) - p * math.log2(m - 1)
    return max(0.0, value)


def fano_lower_bound_bits(candidates: int, error_probability: float) -> float:
    r"""Lower bound :math:`I(X; Y) \ge \log_2 M - h(P_e) - P_e\log_2(M - 1)` bits.

    .. math::

        h(P_e) + P_e\log_2(M - 1) \ge H(X\mid \hat X) \ge H(X \mid Y)
        \;\Rightarrow\; I(X; Y) = \log_2 M - H(X\mid Y)
        \ge \log_2 M - h(P_e) - P_e\log_2(M-1),

    Fano's inequality (Cover & Thomas, *Elements of Information Theory*, 2nd ed.,
    Thm. 2.10.1) with the data-processing step :math:`X\to Y\to\hat X`; :math:`h` is the
    binary entropy in bits. Assumptions: :math:`X` uniform on :math:`M` candidates (so
    :math:`H(X) = \log_2 M`), :math:`\hat X` any estimate computed from :math:`Y` only,
    :math:`P_e = \Pr[\hat X \ne X]` its **true** error probability. With a measured error
    rate use :func:`fano_lower_confidence_bits`. :math:`M = 1` gives 0. The expression is
    convex in :math:`P_e` with minimum 0 at :math:`P_e = (M-1)/M` (blind guessing); above
    that it grows again (an attack that is wrong too often is informative, e.g.
    :math:`M = 2`, :math:`P_e = 1` gives 1 bit). The clip at 0 only removes rounding.
    :math:`M` may be an astronomically large Python int (e.g. :math:`\binom{1797}{64}`,
    the batches of :func:`~bounds.leakage.batches.batch_leakage`): ``math.log2`` takes
    exact integers of any size.

    Parameters
    ----------
    candidates : :math:`M \ge 1`, a Python or numpy integer of any size.
    error_probability : :math:`P_e \in [0, 1]`.

    Returns
    -------
    float, bits in :math:`[0, \log_2 M]`.

    Examples
    --------
    >>> fano_lower_bound_bits(8, 0.0)
    3.0
    >>> fano_lower_bound_bits(2, 0.5)
    0.0
    >>> fano_lower_bound_bits(2**200, 0.0)
    200.0
    """
    func = "fano_lower_bound_bits"
    m = check_int("candidates", candidates, func=func, low=1)
    p = check_real("error_probability", error_probability, func=func, low=0, high=1)
    return _fano_bits(m, p)


def fano_lower_confidence_bits(
    candidates: int, errors: int, trials: int, confidence: float = 0.95
) -> float:
    r"""Fano's bound at the worst error probability of the Clopper-Pearson interval, in bits.

    .. math::

        \min_{P_e\in[\underline p,\, \overline p]}
        \big(\log_2 M - h(P_e) - P_e\log_2(M-1)\big)^+,

    with :math:`[\underline p, \overline p]` :func:`clopper_pearson_interval` of
    ``errors`` out of ``trials`` at ``confidence``. The Fano expression is convex in
    :math:`P_e` with its minimum 0 at :math:`P_e = (M-1)/M` (blind guessing), so the
    minimum over the interval is at that point clipped into the interval: the upper
    limit :math:`\overline p` for an attack better than guessing. It holds with
    probability at least ``confidence`` (the interval covers the true :math:`P_e`).
    Assumptions as in :func:`fano_lower_bound_bits`; the trials are independent draws of
    :math:`(X, Y)`.

    Parameters
    ----------
    candidates : :math:`M \ge 1`, any size (as in :func:`fano_lower_bound_bits`).
    errors : wrong identifications, in :math:`[0, n]`.
    trials : :math:`n \in [1, 2^{53}]` (as in :func:`clopper_pearson_interval`).
    confidence : in (0, 1).

    Returns
    -------
    float, bits in :math:`[0, \log_2 M]`.

    Examples
    --------
    >>> round(fano_lower_confidence_bits(16, 0, 100), 4)  # P_e <= 0.0362
    3.6338
    """
    func = "fano_lower_confidence_bits"
    m = check_int("candidates", candidates, func=func, low=1)
    n = check_int("trials", trials, func=func, low=1, high=MAX_TRIALS)
    errors = check_int("errors", errors, func=func, low=0, high=n)
    confidence = check_open_unit("confidence", confidence, func=func)
    low, high = clopper_pearson_interval(errors, n, confidence)
    worst = float(np.clip((m - 1) / m, low, high))
    return _fano_bits(m, worst)
