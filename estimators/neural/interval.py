r"""The interval of a cross-fitted neural estimate: training variance, evaluation noise and
an allowance for the critic's generalisation error.

A neural estimate varies for two reasons: the critic depends on the seed (initialisation,
minibatch order, which samples train and which validate), and a fixed critic's bound
on a finite test fold is noisy. A bootstrap of the test fold sees the second only, and
gives tight intervals around failed fits (issue 14). Here ``K`` fits, each
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

Generalisation allowance (upper end only). All fits share one bias: a critic trained on
a finite sample generalises imperfectly, so its bound on held-out samples is below the
best bound its family reaches, and every fit misses low together (on tasks where the
validation bound peaks and then falls while the training bound keeps rising). For the
critic ``T_hat`` that maximises the bound on its training sample,
``E[L(T_hat)] <= sup_T L(T) <= E[L_train(T_hat)]``: the out-of-sample value
underestimates the family's best bound and the in-sample value overestimates it (the
optimism of the training error; Hastie, Tibshirani and Friedman, *The Elements of
Statistical Learning*, 2nd ed., Section 7.4). The upper end therefore adds
``gap = max(0, mean_k g_k)``, the mean over the fits of the training-probe bound minus
the validation bound of the restored critic (two folds of equal size, same formula):

.. math:: [\,v - t\,\mathrm{se},\; v + t\,\mathrm{se} + \mathrm{gap}\,].

The sandwich is exact for the in-sample maximiser and approximate for an early-stopped
critic. Nothing here covers the approximation error of the critic family (a too small
critic, InfoNCE's ``log(batch_size)`` ceiling), a bias that no amount of data removes;
the warnings of the estimators flag the detectable failures (no convergence,
overfitting, heavy tails, saturation).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

__all__ = ["cross_fit_interval"]


def cross_fit_interval(
    values, standard_errors, *, confidence: float, gaps=None
) -> tuple[float, float, float, dict[str, float | str]]:
    """``(value, low, high, details)`` from the fits' test values, evaluation SEs and
    train/validation gaps (nats; ``gaps=None``: no generalisation allowance).

    ``details`` holds ``between_fit_sd``, ``evaluation_se`` (root mean square of the
    ``s_k``), ``interval_se``, ``quantile``, ``generalisation_allowance`` and a sentence
    ``interval`` saying what the interval covers.

    Examples
    --------
    >>> value, low, high, _ = cross_fit_interval([1.0, 1.2, 1.1], [0.05, 0.05, 0.05],
    ...                                          confidence=0.95, gaps=[0.1, 0.2, 0.0])
    >>> round(value, 3), round(value - low, 3)  # t_2 = 4.303, se = sqrt((0.01 + 0.0025) / 3)
    (1.1, 0.278)
    >>> round(high - value, 3)  # plus the mean gap, 0.1
    0.378
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
            "(use n_fits >= 2)"
        )
    else:
        between = float(values.std(ddof=1))
        se = math.sqrt((between**2 + evaluation_var) / k)
        quantile = float(stats.t.ppf(tail, k - 1))
        covers = (
            f"{confidence:.0%} Student-t interval (K - 1 = {k - 1} degrees of freedom) over "
            f"{k} fits with own seeds and disjoint test folds: covers training variance "
            "(initialisation, minibatch order, split) and evaluation noise"
        )
    allowance = 0.0 if gaps is None else max(0.0, float(np.mean(gaps)))
    if gaps is None:
        covers += "; no allowance for a bias shared by all fits"
    else:
        covers += (
            f"; the upper end adds the mean train/validation gap, {allowance:.3g} nats, as an "
            "allowance for the critics' generalisation error (not for the approximation "
            "error of the critic family)"
        )
    details = {
        "generalisation_allowance": allowance,
        "between_fit_sd": between,
        "evaluation_se": math.sqrt(evaluation_var),
        "interval_se": se,
        "quantile": quantile,
        "interval": covers,
    }
    return value, value - quantile * se, value + quantile * se + allowance, details
