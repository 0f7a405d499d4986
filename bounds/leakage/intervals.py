r"""Confidence intervals: exact binomial (Clopper-Pearson) and an empirical Bernstein interval
for the mean of bounded i.i.d. values; both cover with at least the stated confidence for
every sample size."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from pruneleak.bounds.validation import check_int, check_open_unit

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
    r"""``(mean, lo, hi)``: the mean of i.i.d. values in ``[low, high]`` and an interval for
    their expectation whose coverage is at least ``confidence`` for every sample size.

    Empirical Bernstein bound (Maurer & Pontil 2009, "Empirical Bernstein bounds and sample
    variance penalization", COLT, arXiv:0907.3740, Thm. 4): for :math:`n \ge 2` i.i.d.
    values in an interval of length :math:`R`, with probability at least :math:`1 - \delta`

    .. math::

        \mathbb E\,v - \bar v \le \sqrt{\frac{2\hat\sigma^2\ln(2/\delta)}{n}}
        + \frac{7R\ln(2/\delta)}{3(n-1)},

    :math:`\hat\sigma^2` the sample variance (``ddof=1``; the theorem is stated for
    :math:`[0, 1]` and scales with :math:`R`). The same bound for :math:`-v` gives the lower
    limit; each side at :math:`\delta = (1 - \text{confidence})/2`, so both hold together
    with probability at least ``confidence`` (union bound). Unlike the CLT interval
    :math:`\bar v \pm z\hat\sigma/\sqrt n` it needs no large-sample approximation: near an
    end of the range, where rare values carry the whole distance to the end and
    :math:`\hat\sigma` is often 0, the CLT interval misses far more often than
    :math:`1 - \text{confidence}`; this one pays :math:`7R\ln(2/\delta)/(3(n-1))` instead
    (about :math:`10.2R/n` at 95 %). The results are clipped to ``[low, high]``, which only
    removes impossible values. Assumption: every value lies in ``[low, high]`` (rounding of
    order 1e-16 aside); the point estimate is the plain sample mean.

    Examples
    --------
    >>> mean, lo, hi = mean_interval(np.array([0.0, 1.0] * 8), 0.95, low=0, high=1)
    >>> mean, round(lo, 4), round(hi, 4)
    (0.5, 0.0, 1.0)
    >>> mean, lo, hi = mean_interval(np.array([0.0, 1.0] * 2048), 0.95, low=0, high=1)
    >>> round(hi - mean, 4)  # 0.5 sqrt(2 ln 80 / 4096) + 7 ln 80 / (3 * 4095)
    0.0256
    """
    n = values.size
    mean = float(values.mean())
    log_term = math.log(4.0 / (1.0 - confidence))  # ln(2 / delta), delta = (1 - conf) / 2
    variance = float(values.var(ddof=1))
    half = math.sqrt(2.0 * variance * log_term / n) + 7.0 * (high - low) * log_term / (3 * (n - 1))
    lo, mid, hi = np.clip([mean - half, mean, mean + half], low, high)
    return float(mid), float(lo), float(hi)
