r"""Leakage from per-draw likelihoods: releases that are random given the secret, or not a
vector plus isotropic noise.

A release that withholds data-dependent coordinates, draws a random mask or samples
hidden randomness (Gumbel noise, DP noise) is not "one vector per candidate plus
:math:`N(0, s^2 I)`", so :func:`~bounds.leakage.exact.exact_leakage` does not apply. The
draws are then made where the release is computed (``sims``, torch, on the device), and
this module does the information arithmetic on plain arrays: for each of :math:`D`
Monte Carlo draws :math:`(X_d, U_d, Z_d)` of the secret, the release's randomness and
the noise, with observation :math:`y_d`, one row of scores over the :math:`M` candidates.

The secret :math:`X` is uniform on the :math:`M` candidates; :math:`U` is independent of
:math:`X`. Two quantities bracket :math:`I(X; Y)`:

- **Upper**: :math:`I(X; Y, U) = I(X; Y\mid U) \ge I(X; Y)` (chain rule; :math:`I(X; U) =
  0`). With ``log_likelihoods[d, x]`` :math:`= \log p(y_d\mid x, U_d)` (any constant per
  row), the posterior given :math:`(y_d, U_d)` is their softmax :math:`\pi^U_d` and

  .. math:: I(X; Y\mid U) = \log_2 M - \mathbb E\, H(\pi^U(Y, U))

  (Cover & Thomas, 2nd ed., eq. 2.43, conditioned on :math:`U`). Each draw's term lies in
  :math:`[0, \log_2 M]`. When :math:`U` is a function of :math:`Y` (a random mask the
  server sees), :math:`I(X; U\mid Y) = 0` and the upper value **is** :math:`I(X; Y)`;
  when there is no randomness it is the exact value too.
- **Lower**: Barber & Agakov (2003, "The IM algorithm: a variational approach to
  information maximization", NeurIPS, eq. 2): for any conditional distribution
  :math:`q(x\mid y)` fixed before the draws,

  .. math:: I(X; Y) = \log_2 M - H(X\mid Y) \ge \log_2 M + \mathbb E \log_2 q(X\mid Y),

  since the cross-entropy :math:`-\mathbb E\log q(X|Y)` is at least :math:`H(X|Y)`.
  Here :math:`q = (1-\epsilon)\,\mathrm{softmax}(\text{critic}_d) + \epsilon/M`, the
  critic any score of :math:`(x, y)` that does not use :math:`U_d` (e.g. the
  log-likelihood averaged over independent draws of the randomness); :math:`\epsilon`
  keeps each term above :math:`\log_2\epsilon` at a cost of at most
  :math:`-\log_2(1-\epsilon)` bits. The floor sets the range of the terms, and with it the
  width of their interval (the empirical Bernstein interval's range term is of order
  :math:`R/D` for ``D`` draws), so the default :math:`\epsilon = \min(1/4, 5/D)`
  (fixed before the draws) balances the two costs. With the exact
  :math:`\log p(y\mid x)` as critic the bound is attained up to that cost: it is InfoNCE
  with the exact conditional density over the whole candidate set.

The Bayes-optimal success (MAP attacker) is bracketed the same way: above by
:math:`\mathbb E\max_x\pi^U_x`, the success of an attacker who also sees :math:`U`; below
by the success of the attacker that names :math:`\arg\max q`, an achievable attack (its
indicator per draw, Clopper-Pearson interval).

Intervals come from :func:`bounds.leakage.intervals.mean_interval` on the per-draw
terms (bounded, independent across draws); a bracket's interval is (lower limit of the
lower bound, upper limit of the upper bound), each at ``confidence``, so it covers
:math:`I` with probability at least ``confidence`` (a union of two one-sided misses of
:math:`(1 - \text{confidence})/2`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from pruneleak.bounds.leakage.intervals import clopper_pearson_interval, mean_interval
from pruneleak.bounds.validation import as_real_array, check_open_unit, check_real

#: Largest weight of the uniform distribution mixed into the critic's posterior (module
#: docstring); the default is ``min(MAX_EPSILON, 5 / D)`` for ``D`` draws.
MAX_EPSILON = 0.25


@dataclass(frozen=True)
class PosteriorLeakage:
    r""":math:`I(X; Y)` in bits from per-draw likelihoods, and the Bayes-optimal success.

    Attributes
    ----------
    bits : the value (``"monte_carlo"``) or the midpoint of ``bracket_bits`` (``"bracket"``).
    ci_bits : (low, high) interval that covers :math:`I(X; Y)` at ``confidence``.
    bayes_success : MAP success, or the midpoint of ``success_bracket``.
    bayes_success_ci : (low, high) interval of the Bayes-optimal success.
    candidates : :math:`M`, the number of equally likely secrets.
    samples : draws :math:`D`.
    method : ``"monte_carlo"`` (exact quantity, Monte Carlo interval) or ``"bracket"``.
    bracket_bits : (lower, upper) Monte Carlo means of the two bounds, or None.
    success_bracket : (lower, upper) means for the success, or None.
    """

    bits: float
    ci_bits: tuple[float, float]
    bayes_success: float
    bayes_success_ci: tuple[float, float]
    candidates: int
    samples: int
    method: str
    bracket_bits: tuple[float, float] | None = None
    success_bracket: tuple[float, float] | None = None


def _scores(name: str, value, func: str) -> np.ndarray:
    """``value`` as a (D, M) float array with D >= 2, M >= 1, no NaN and no +inf."""
    arr = as_real_array(name, value, func=func)
    if arr.ndim != 2 or arr.shape[0] < 2 or arr.shape[1] < 1:
        raise ValueError(
            f"The '{name}' parameter of {func} must be a (draws, candidates) array with at "
            f"least 2 draws and 1 candidate. Got shape {arr.shape} instead."
        )
    if np.isnan(arr).any() or np.isposinf(arr).any():
        raise ValueError(
            f"The '{name}' parameter of {func} must not contain NaN or +inf (-inf marks an "
            f"impossible candidate). Got {int(np.isnan(arr).sum() + np.isposinf(arr).sum())} "
            "such entries instead."
        )
    return arr


def _truth(truth, draws: int, candidates: int, func: str) -> np.ndarray:
    arr = np.asarray(truth)
    if arr.shape != (draws,) or arr.dtype.kind not in "iu":
        raise ValueError(
            f"The 'truth' parameter of {func} must be {draws} integer indices, one per draw. "
            f"Got {arr.dtype} of shape {arr.shape} instead."
        )
    if arr.size and (arr.min() < 0 or arr.max() >= candidates):
        raise ValueError(
            f"The 'truth' parameter of {func} must hold candidate indices in "
            f"[0, {candidates - 1}]. Got {arr.min()}..{arr.max()} instead."
        )
    return arr.astype(np.intp)


def _log_posteriors(scores: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax; a row of all -inf gives the uniform posterior."""
    top = scores.max(axis=1, keepdims=True)
    empty = ~np.isfinite(top[:, 0])
    scores = np.where(empty[:, None], 0.0, scores)
    return scores - special.logsumexp(scores, axis=1, keepdims=True)


def _entropy_bits(log_post: np.ndarray) -> np.ndarray:
    post = np.exp(log_post)
    return -(post * np.where(post > 0, log_post, 0.0)).sum(axis=1) / math.log(2)


def _upper_terms(log_likelihoods: np.ndarray, truth: np.ndarray, func: str):
    """Per-draw ``log2 M - H(pi^U)`` and ``max pi^U``; the truth must be possible."""
    rows = np.arange(truth.size)
    if not np.isfinite(log_likelihoods[rows, truth]).all():
        bad = int(np.flatnonzero(~np.isfinite(log_likelihoods[rows, truth]))[0])
        raise ValueError(
            f"The 'log_likelihoods' parameter of {func} must be finite at each draw's true "
            f"candidate (the observation was generated by it). Got -inf at draw {bad} instead."
        )
    log_post = _log_posteriors(log_likelihoods)
    m = log_likelihoods.shape[1]
    info = np.clip(math.log2(m) - _entropy_bits(log_post), 0.0, math.log2(m))
    return info, np.exp(log_post.max(axis=1))


def posterior_leakage(log_likelihoods, truth, *, confidence: float = 0.95) -> PosteriorLeakage:
    r""":math:`I(X; Y)` and the Bayes success from the exact per-draw log-likelihoods.

    .. math::

        I(X; Y) = \log_2 M - \mathbb E\, H(\pi(Y)),\qquad
        \Pr[\text{success}] = \mathbb E\max_x \pi_x(Y),\qquad
        \pi_x(y_d) \propto p(y_d\mid x),

    estimated by the mean over the draws (module docstring). Assumptions: draw :math:`d`
    has :math:`X_d` uniform on the :math:`M` candidates and :math:`y_d` drawn from
    :math:`p(\cdot\mid X_d)`, independently across draws, and ``log_likelihoods[d]`` is
    :math:`\log p(y_d\mid x)` up to a constant of the row, ``-inf`` where impossible. If
    the release has randomness :math:`U` and the rows are :math:`\log p(y_d\mid x, U_d)`,
    the value is :math:`I(X; Y, U)`, equal to :math:`I(X; Y)` when :math:`U` is a
    function of :math:`Y`; otherwise use :func:`posterior_bracket`.

    Parameters
    ----------
    log_likelihoods : (D, M) array, :math:`D \ge 2`.
    truth : (D,) integer indices of the true candidates :math:`X_d`.
    confidence : level of the intervals, in (0, 1).

    Returns
    -------
    PosteriorLeakage with ``method="monte_carlo"``, bits in :math:`[0, \log_2 M]`.

    Examples
    --------
    >>> ll = np.array([[0.0, -np.inf], [-np.inf, 0.0]])  # each draw names its candidate
    >>> posterior_leakage(ll, [0, 1]).bits
    1.0
    """
    func = "posterior_leakage"
    ll = _scores("log_likelihoods", log_likelihoods, func)
    d, m = ll.shape
    x = _truth(truth, d, m, func)
    conf = check_open_unit("confidence", confidence, func=func)
    info, win = _upper_terms(ll, x, func)
    bits, lo, hi = mean_interval(info, conf, low=0.0, high=math.log2(m))
    success, s_lo, s_hi = mean_interval(win, conf, low=1 / m, high=1.0)
    return PosteriorLeakage(
        bits=bits,
        ci_bits=(lo, hi),
        bayes_success=success,
        bayes_success_ci=(s_lo, s_hi),
        candidates=m,
        samples=d,
        method="monte_carlo",
    )


def posterior_bracket(
    log_likelihoods,
    critic,
    truth,
    *,
    confidence: float = 0.95,
    epsilon: float | None = None,
) -> PosteriorLeakage:
    r"""A certified bracket of :math:`I(X; Y)` for a release with hidden randomness.

    .. math::

        \log_2 M + \mathbb E\log_2 q(X\mid Y) \;\le\; I(X; Y) \;\le\; I(X; Y, U)
        = \log_2 M - \mathbb E\,H(\pi^U(Y, U))

    (module docstring: Barber-Agakov on the left, the chain rule on the right).

    Parameters
    ----------
    log_likelihoods : (D, M), row :math:`d` = :math:`\log p(y_d\mid x, U_d)`, the
        likelihood under the draw's own randomness (up to a row constant).
    critic : (D, M), row :math:`d` = any score of :math:`(x, y_d)` computed without
        :math:`U_d` (``-inf`` allowed); :math:`q` is its softmax mixed with
        ``epsilon`` of the uniform distribution.
    truth : (D,) integer indices of the true candidates.
    confidence : level of the intervals, in (0, 1).
    epsilon : weight of the uniform part of :math:`q`, in (0, 1); None: :math:`\min(1/4,
        5/D)`.

    Returns
    -------
    PosteriorLeakage with ``method="bracket"``: ``bracket_bits`` = (lower, upper) means,
    ``ci_bits`` = (lower limit of the lower bound, upper limit of the upper bound),
    ``bits`` the midpoint of the bracket; the same for the success.

    Examples
    --------
    >>> ll = np.array([[0.0, -np.inf], [-np.inf, 0.0]] * 4)
    >>> blind = np.zeros((8, 2))  # a critic that knows nothing: the lower bound is ~0
    >>> res = posterior_bracket(ll, blind, [0, 1] * 4)
    >>> round(res.bracket_bits[0], 12), res.bracket_bits[1]
    (0.0, 1.0)
    """
    func = "posterior_bracket"
    ll = _scores("log_likelihoods", log_likelihoods, func)
    scores = _scores("critic", critic, func)
    if scores.shape != ll.shape:
        raise ValueError(
            f"The 'critic' parameter of {func} must have the shape of 'log_likelihoods', "
            f"{ll.shape}. Got {scores.shape} instead."
        )
    d, m = ll.shape
    x = _truth(truth, d, m, func)
    conf = check_open_unit("confidence", confidence, func=func)
    if epsilon is None:
        epsilon = min(MAX_EPSILON, 5 / d)
    eps = check_real(
        "epsilon", epsilon, func=func, low=0, high=1, low_inclusive=False, high_inclusive=False
    )
    info, win = _upper_terms(ll, x, func)
    log_q = np.logaddexp(math.log1p(-eps) + _log_posteriors(scores), math.log(eps / m))
    rows = np.arange(d)
    lower = (math.log(m) + log_q[rows, x]) / math.log(2)
    floor = math.log2(eps)
    low_mean, low_lo, _ = mean_interval(lower, conf, low=floor, high=math.log2(m))
    up_mean, _, up_hi = mean_interval(info, conf, low=0.0, high=math.log2(m))
    hits = int(np.sum(np.argmax(scores, axis=1) == x))
    hit_rate = hits / d
    hit_lo = max(clopper_pearson_interval(hits, d, conf)[0], 1 / m)  # blind guess: 1/M
    win_mean, _, win_hi = mean_interval(win, conf, low=1 / m, high=1.0)
    low_bits, low_ci = max(low_mean, 0.0), max(low_lo, 0.0)
    return PosteriorLeakage(
        bits=0.5 * (low_bits + up_mean),
        ci_bits=(low_ci, up_hi),
        bayes_success=0.5 * (max(hit_rate, 1 / m) + win_mean),
        bayes_success_ci=(hit_lo, win_hi),
        candidates=m,
        samples=d,
        method="bracket",
        bracket_bits=(low_bits, up_mean),
        success_bracket=(max(hit_rate, 1 / m), win_mean),
    )
