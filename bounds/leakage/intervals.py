r"""Confidence intervals: exact binomial (Clopper-Pearson) and the CLT interval of a mean."""

from __future__ import annotations

import math

import numpy as np
from scipy import special, stats

from bounds.validation import check_int, check_open_unit

# Largest number of trials: counts up to 2**53 are exact in float64.
MAX_TRIALS = 1 << 53


def clopper_pearson_interval(
    successes: int, trials: int, confidence: float = 0.95
) -> tuple[float, float]:
    r"""Exact two-sided binomial interval for a success probability.

    .. math::

        \underline p = \mathrm{Beta}^{-1}\!\big(\tfrac{\alpha}{2};\, x,\, n-x+1\big),\qquad
        \overline p = \mathrm{Beta}^{-1}\!\big(1-\tfrac{\alpha}{2};\, x+1,\, n-x\big),

    with :math:`\alpha = 1 - \text{confidence}`, :math:`\underline p = 0` for :math:`x = 0`
    and :math:`\overline p = 1` for :math:`x = n` (Clopper & Pearson 1934, Biometrika 26;
    the beta form is the inversion of the binomial tail, e.g. Brown, Cai, DasGupta 2001,
    Statistical Science 16, eq. 4). Assumptions: ``successes`` is binomial with ``trials``
    independent trials; the coverage is at least ``confidence`` for every :math:`p`.

    Parameters
    ----------
    successes : :math:`x`, an integer in :math:`[0, n]`.
    trials : :math:`n \in [1, 2^{53}]` (counts that float64 holds exactly; the beta
        quantiles are evaluated in float64).
    confidence : in :math:`(0, 1)`.

    Returns
    -------
    (low, high), probabilities in [0, 1] with :math:`\underline p \le x/n \le \overline p`.

    Examples
    --------
    >>> lo, hi = clopper_pearson_interval(0, 10)
    >>> lo, round(hi, 6)
    (0.0, 0.308497)
    """
    func = "clopper_pearson_interval"
    n = check_int("trials", trials, func=func, low=1, high=MAX_TRIALS)
    x = check_int("successes", successes, func=func, low=0, high=n)
    alpha = 1.0 - check_open_unit("confidence", confidence, func=func)
    low = 0.0 if x == 0 else float(stats.beta.ppf(alpha / 2, float(x), float(n - x + 1)))
    high = 1.0 if x == n else float(stats.beta.ppf(1 - alpha / 2, float(x + 1), float(n - x)))
    # The interval contains x / n for every confidence (the median of Bin(n, x/n) is x);
    # the beta quantiles are accurate to ~1e-12 at n ~ 1e12, enough to invert a very narrow
    # interval (confidence 1e-9), so the two limits are clipped to their side of x / n.
    return min(low, x / n), max(high, x / n)


def mean_interval(
    values: np.ndarray, confidence: float, *, low: float, high: float
) -> tuple[float, float, float]:
    r"""``(mean, lo, hi)``: the CLT interval :math:`\bar v \pm z\,\hat\sigma/\sqrt n`, clipped.

    :math:`z = \Phi^{-1}((1 + \text{confidence})/2)`, :math:`\hat\sigma` the sample standard
    deviation (``ddof=1``). Clipping to ``[low, high]`` (the range the mean is known to lie
    in) only removes impossible values, so the coverage does not drop.

    Examples
    --------
    >>> mean, lo, hi = mean_interval(np.array([0.0, 1.0] * 8), 0.95, low=0, high=1)
    >>> mean, round(lo, 4), round(hi, 4)
    (0.5, 0.247, 0.753)
    """
    n = values.size
    mean = float(values.mean())
    z = float(-special.ndtri((1.0 - confidence) / 2))
    half = z * float(values.std(ddof=1)) / math.sqrt(n)
    lo, mid, hi = np.clip([mean - half, mean, mean + half], low, high)
    return float(mid), float(lo), float(hi)
