r"""Exact leakage of a finite candidate set through a Gaussian release: I(X; Y) and Bayes success.

Model. The secret :math:`X` is uniform on :math:`M` candidates; candidate :math:`i` releases
the vector :math:`r_i \in \mathbb R^k` (row :math:`i` of ``releases``) and the server sees
:math:`Y = r_X + Z`, :math:`Z \sim N(0, s^2 I_k)`. The posterior is

.. math::

    \pi_j(y) = \frac{\exp(\ell_j(y))}{\sum_l \exp(\ell_l(y))},\qquad
    \ell_j(y) = \frac{\langle y, r_j\rangle - \tfrac12\|r_j\|^2}{s^2},

because :math:`\|y - r_j\|^2 = \|y\|^2 - 2\langle y, r_j\rangle + \|r_j\|^2` and
:math:`\|y\|^2` is the same for every :math:`j`. Then (uniform prior, bits)

.. math::

    I(X; Y) = \log_2 M - \mathbb E\,H(\pi(Y)),\qquad
    \Pr[\text{Bayes success}] = \mathbb E \max_j \pi_j(Y)

(Cover & Thomas, *Elements of Information Theory*, 2nd ed., eq. 2.43
:math:`I = H(X) - H(X\mid Y)`; the maximum-a-posteriori guess is Bayes-optimal).

Computation. Monte Carlo over :math:`X` uniform and :math:`Z`: the releases are centred
(the posterior is translation invariant), divided by :math:`s`, and each chunk of draws
costs one product :math:`(R_{X} + W) R^\top` of a (chunk, k) by a (k, M) matrix, so
memory is :math:`O(\text{chunk}\cdot(M + k))` and no :math:`M\times M\times k` (nor even
:math:`M\times M`) array exists. Log-posteriors go through ``scipy.special.logsumexp``; the
entropy :math:`-\sum_j \pi_j\log\pi_j` is a sum of non-negative terms (no cancellation).
Each draw's :math:`\log_2 M - H(\pi)` and :math:`\max_j\pi_j` are conditional expectations
of the information density and of the success indicator given :math:`Y` (lower variance
than the raw quantities), bounded in :math:`[0, \log_2 M]` and :math:`[1/M, 1]`; the
interval is the empirical Bernstein interval of their mean for values in those ranges
(:func:`bounds.leakage.intervals.mean_interval`; Maurer & Pontil 2009, Thm. 4), whose
coverage is at least the confidence for every number of draws. A CLT interval is not: near
the ceiling the whole shortfall :math:`\log_2 M - I` sits in rare draws, the sample
variance is often 0 and its interval misses the true value far more often than stated.
The logits are
differences of inner products of size :math:`\|r\|^2/s^2` (after centring), so their
absolute rounding error is about :math:`10^{-16}\|r\|^2/s^2`.

Exact cases (``exact=True``, interval of zero width, ``samples=0``):
all releases identical (0 bits, success :math:`1/M`); :math:`s = 0` (the release names
its group of identical rows: :math:`I = H(\text{group}) = \sum_g \tfrac{m_g}{M}\log_2
\tfrac{M}{m_g}`, which is :math:`\log_2 M` for distinct rows, and success
:math:`G/M` for :math:`G` groups); :math:`M = 2` (one-dimensional quadrature,
:mod:`bounds.leakage.binary`, error below 1e-9 bits).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from pruneleak.bounds.leakage._releases import (
    difference_norm,
    distinct_rows,
    group_entropy_bits,
    release_matrix,
    representable,
    scaled_releases,
)
from pruneleak.bounds.leakage.binary import bits_at_snr, success_at_snr
from pruneleak.bounds.leakage.intervals import mean_interval
from pruneleak.bounds.validation import check_choice, check_int, check_open_unit, check_real

METHODS = ("auto", "monte_carlo")
# Floats per chunk of draws, over the (chunk, k) noise and the (chunk, M) logits: 16 MiB.
_CHUNK_FLOATS = 1 << 21
_MAX_SAMPLES = 1 << 30


@dataclass(frozen=True)
class ExactLeakage:
    r"""Leakage of a finite candidate set (bits) and Bayes-optimal identification success.

    Attributes
    ----------
    bits : :math:`I(X; Y)` in bits (Monte Carlo mean, or exact).
    ci_bits : (low, high) confidence interval of :math:`I(X;Y)`, empirical Bernstein (module
        docstring; coverage at least ``confidence`` for every ``samples``), or zero width
        when exact.
    bayes_success : :math:`\mathbb E\max_j \pi_j(Y)`, the MAP attacker's success probability.
    bayes_success_ci : (low, high) interval of ``bayes_success``, of the same kind.
    candidates : :math:`M`.
    distinct : number of distinct release vectors (exact equality).
    samples : Monte Carlo draws used (0 when ``exact``).
    noise_std : :math:`s`.
    exact : True when computed without Monte Carlo (closed form or quadrature).
    """

    bits: float
    ci_bits: tuple[float, float]
    bayes_success: float
    bayes_success_ci: tuple[float, float]
    candidates: int
    distinct: int
    samples: int
    noise_std: float
    exact: bool


def _exact(bits, success, m, distinct, s):
    return ExactLeakage(
        bits=float(bits),
        ci_bits=(float(bits), float(bits)),
        bayes_success=float(success),
        bayes_success_ci=(float(success), float(success)),
        candidates=m,
        distinct=distinct,
        samples=0,
        noise_std=s,
        exact=True,
    )


def _snr(a: np.ndarray, b: np.ndarray, s: float) -> float:
    """:math:`\\|a - b\\|/s` for ``s > 0``; ``inf`` when it exceeds the largest float."""
    x, exponent = difference_norm(a, b)
    mantissa, s_exponent = math.frexp(s)
    ratio, exponent = x / mantissa, exponent - s_exponent
    return math.ldexp(ratio, exponent) if representable(ratio, exponent) else math.inf


def _monte_carlo(scaled: np.ndarray, samples: int, rng: np.random.Generator):
    """Per-draw ``log2 M - H(posterior)`` (bits) and ``max posterior``, chunk by chunk."""
    m, k = scaled.shape
    half_norms = 0.5 * np.einsum("ij,ij->i", scaled, scaled)
    chunk = max(1, min(samples, _CHUNK_FLOATS // (m + k)))
    info = np.empty(samples)
    success = np.empty(samples)
    for start in range(0, samples, chunk):
        n = min(chunk, samples - start)
        truth = rng.integers(m, size=n)
        y = scaled[truth] + rng.standard_normal((n, k))
        logits = y @ scaled.T - half_norms
        log_post = logits - special.logsumexp(logits, axis=1, keepdims=True)
        post = np.exp(log_post)
        entropy_bits = -np.sum(post * log_post, axis=1) / math.log(2)
        info[start : start + n] = math.log2(m) - entropy_bits
        success[start : start + n] = post.max(axis=1)
    return info, success


def exact_leakage(
    releases,
    noise_std: float,
    *,
    samples: int = 4096,
    confidence: float = 0.95,
    seed: int = 0,
    method: str = "auto",
) -> ExactLeakage:
    r""":math:`I(X; Y)` in bits and the Bayes-optimal success for ``Y = releases[X] + Z``.

    .. math::

        I(X; Y) = \log_2 M - \mathbb E_{X, Z}\, H\big(\pi(r_X + Z)\big),\qquad
        \Pr[\text{success}] = \mathbb E_{X, Z} \max_j \pi_j(r_X + Z),

    with :math:`\pi` the posterior of the module docstring. Assumptions: :math:`X`
    uniform on the :math:`M` rows of ``releases`` (identical rows are separate candidates
    that the release cannot tell apart), noise :math:`N(0, s^2 I_k)` independent of
    :math:`X`. Exact (no Monte Carlo) when all rows are equal, when :math:`s = 0`, and
    when :math:`M = 2` (``method="auto"``); otherwise Monte Carlo with ``samples`` draws
    and an empirical Bernstein interval at ``confidence`` (module docstring): its coverage
    holds for every ``samples``, and it is at least about :math:`10.2\log_2 M/\text{samples}`
    bits wide at 95 % however small the sample variance.

    Parameters
    ----------
    releases : (M, k) finite array, one release vector per candidate, :math:`M \ge 1`.
    noise_std : :math:`s \ge 0`, standard deviation of the Gaussian noise per coordinate
        (same unit as ``releases``).
    samples : Monte Carlo draws, at least 2.
    confidence : level of the intervals, in (0, 1).
    seed : seed of ``numpy.random.default_rng``; same seed, same numbers.
    method : "auto" (exact where possible) or "monte_carlo" (always sample when
        :math:`s > 0` and the rows are not all equal; for checking the sampler).

    Returns
    -------
    ExactLeakage, bits in :math:`[0, \log_2 M]`.

    Examples
    --------
    >>> r = np.eye(4)
    >>> exact_leakage(r, 0.0).bits
    2.0
    >>> res = exact_leakage(r, 0.5, samples=2000, seed=1)
    >>> res.ci_bits[0] <= res.bits <= res.ci_bits[1], res.exact
    (True, False)
    >>> exact_leakage([[0.0], [2.0]], 1.0).bayes_success  # Phi(d / (2 s)) = Phi(1)
    0.8413447460685429
    """
    func = "exact_leakage"
    r = release_matrix(releases, func)
    s = check_real("noise_std", noise_std, func=func, low=0)
    n = check_int("samples", samples, func=func, low=2, high=_MAX_SAMPLES)
    conf = check_open_unit("confidence", confidence, func=func)
    seed = check_int("seed", seed, func=func, low=0)
    method = check_choice("method", method, func=func, choices=METHODS)
    m = r.shape[0]
    counts = distinct_rows(r)
    g = counts.size
    if g == 1:
        return _exact(0.0, 1 / m, m, g, s)
    if s == 0:
        return _exact(group_entropy_bits(counts), g / m, m, g, s)
    if m == 2 and method == "auto":
        snr = _snr(r[0], r[1], s)
        return _exact(bits_at_snr(snr), success_at_snr(snr), m, g, s)
    scaled = scaled_releases(r, s, func)
    info, success = _monte_carlo(scaled, n, np.random.default_rng(seed))
    bits, bits_lo, bits_hi = mean_interval(info, conf, low=0.0, high=math.log2(m))
    win, win_lo, win_hi = mean_interval(success, conf, low=1 / m, high=1.0)
    return ExactLeakage(
        bits=bits,
        ci_bits=(bits_lo, bits_hi),
        bayes_success=win,
        bayes_success_ci=(win_lo, win_hi),
        candidates=m,
        distinct=g,
        samples=n,
        noise_std=s,
        exact=False,
    )
