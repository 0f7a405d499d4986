r"""The interval of a cross-fitted neural estimate: training variance plus evaluation noise.

A neural estimate varies for two reasons: the critic depends on the seed (initialisation,
minibatch order, which samples train and which validate), and a fixed critic's bound
on a finite test fold is noisy. A bootstrap of the test fold sees the second only, and
was measured to give tight intervals around failed fits (issue 14). Here ``K`` fits, each
with its own seed and its own disjoint test fold, give test values ``v_1..v_K`` with
evaluation standard errors ``s_1..s_K`` (:mod:`estimators.neural.evaluation`). The
estimate is ``v = mean(v_k)``, and with ``sd`` the sample standard deviation of the
``v_k``:

.. math::

    \mathrm{se}^2 = \frac{\mathrm{sd}^2 + \overline{s^2}}{K}, \qquad
    v \pm t_{K-1,\,(1+c)/2}\; \mathrm{se}.

``sd^2`` estimates the variance of one fit's value, training and evaluation noise
together (the folds are disjoint, so the fits are independent given the data); adding
the mean evaluation variance counts that part twice, on purpose: with ``K = 3`` the
spread has 2 degrees of freedom, and three fits that agree by chance would otherwise give
a near-zero width. Student's ``t`` with ``K - 1`` degrees of freedom accounts for
estimating ``sd`` from ``K`` values. With ``K = 1`` there is no spread: the interval is
``v +- z se`` with ``se = s_1`` and covers evaluation noise only.

What it does not cover: a bias shared by all fits. A variational bound is below the
MI when the critic family or the training budget cannot represent the density ratio
(a too small critic, too few samples, InfoNCE's ``log(batch_size)`` ceiling), and every
fit then misses in the same direction; the warnings of the estimators flag the
detectable cases (no convergence, overfitting, heavy tails, saturation).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

__all__ = ["cross_fit_interval"]


def cross_fit_interval(
    values, standard_errors, *, confidence: float
) -> tuple[float, float, float, dict[str, float | str]]:
    """``(value, low, high, details)`` from the fits' test values and evaluation SEs (nats).

    ``details`` holds ``between_fit_sd``, ``evaluation_se`` (root mean square of the
    ``s_k``), ``interval_se``, ``quantile`` and a sentence ``interval`` saying what the
    interval covers.

    Examples
    --------
    >>> value, low, high, _ = cross_fit_interval([1.0, 1.2, 1.1], [0.05, 0.05, 0.05],
    ...                                          confidence=0.95)
    >>> round(value, 3), round(high - value, 3)  # t_2 = 4.303, se = sqrt((0.01 + 0.0025) / 3)
    (1.1, 0.278)
    """
    values = np.asarray(values, dtype=float)
    ses = np.asarray(standard_errors, dtype=float)
    k = len(values)
    value = float(values.mean())
    evaluation_var = float(np.mean(ses**2))
    tail = (1.0 + confidence) / 2.0
    if k == 1:
        between = 0.0
        se = math.sqrt(evaluation_var)
        quantile = float(stats.norm.ppf(tail))
        covers = (
            f"{confidence:.0%} normal interval of one fit's evaluation noise on its test fold "
            "(influence-function standard error); it does not cover training variance "
            "(use n_fits >= 2) nor a bias shared by all critics"
        )
    else:
        between = float(values.std(ddof=1))
        se = math.sqrt((between**2 + evaluation_var) / k)
        quantile = float(stats.t.ppf(tail, k - 1))
        covers = (
            f"{confidence:.0%} Student-t interval (K - 1 = {k - 1} degrees of freedom) over "
            f"{k} fits with own seeds and disjoint test folds: covers training variance "
            "(initialisation, minibatch order, split) and evaluation noise, not a bias "
            "shared by all fits"
        )
    details = {
        "between_fit_sd": between,
        "evaluation_se": math.sqrt(evaluation_var),
        "interval_se": se,
        "quantile": quantile,
        "interval": covers,
    }
    return value, value - quantile * se, value + quantile * se, details
