r"""Leakage of a batch of :math:`B` distinct candidates through the noisy mean of their releases.

Model. The client's batch is a uniformly random :math:`B`-subset :math:`S` of the :math:`M`
candidates (drawn without replacement, unordered: what a shuffled data loader draws), so
there are :math:`N = \binom{M}{B}` equally likely secrets. For one FedSGD step with the
mean loss over the batch and a data-independent mask, the release of a batch is the mean
of its members' single-candidate releases (row :math:`i` of ``releases`` is
:math:`r_i`, computed by ``sims``), and the server sees

.. math::

    Y = r_S + Z,\qquad r_S = \frac1B\sum_{i\in S} r_i,\qquad Z\sim N(0, s^2 I_k).

With :math:`c_i = (r_i - \bar r)/s` (centred, scaled; the posterior is translation
invariant), :math:`G = (\langle c_i, c_j\rangle)_{ij}` the :math:`M\times M` Gram matrix and
:math:`a_i = \langle y/s, c_i\rangle`, the log-likelihood of a subset up to a constant is

.. math::

    \ell_S(y) = \frac1B\sum_{i\in S} a_i - \frac1{2B^2}\sum_{i,j\in S} G_{ij}

(expand :math:`-\|y/s - \tfrac1B\sum_{i\in S} c_i\|^2/2`). Since :math:`\sum_i c_i = 0`,
:math:`\sum_{i\in S} c_i = -\sum_{i\notin S} c_i`, so a subset and its complement give the
same quadratic term and opposite linear terms: subsets are enumerated through the smaller of
:math:`S` and its complement. Uniform prior, bits (Cover & Thomas, *Elements of Information
Theory*, 2nd ed., eq. 2.43):

.. math::

    I(S; Y) = \log_2 N - \mathbb E\, H(\pi(Y)),\qquad
    \Pr[\text{Bayes success}] = \mathbb E\max_S \pi_S(Y),\qquad
    \pi_S(y) \propto e^{\ell_S(y)}.

Methods (``BatchLeakage.method``):

- ``"exact"``: no Monte Carlo. :math:`B = M` (:math:`N = 1`, 0 bits); all releases equal
  (0 bits, success :math:`1/N`); :math:`s = 0` with :math:`N\le` ``max_enumerated``
  (entropy of the distinct batch means, grouping subsets whose means are equal, success
  = groups / :math:`N`); :math:`B = 1` where :func:`~bounds.leakage.exact.exact_leakage` is
  exact.
- ``"monte_carlo"``: :math:`B = 1`, delegated to ``exact_leakage`` (same numbers).
- ``"enumerated"``: :math:`s > 0`, :math:`N \le` ``max_enumerated``: Monte Carlo over
  :math:`(S, Z)` with the exact posterior over all :math:`N` subsets (log space, chunked:
  neither the :math:`(N, k)` matrix of means nor a :math:`(\text{draws}, N)` array above
  ``_CHUNK_FLOATS`` floats is formed). Interval: the empirical Bernstein interval
  (:func:`bounds.leakage.intervals.mean_interval`, Maurer & Pontil 2009, Thm. 4) of the
  per-draw :math:`\log_2 N - H(\pi)` and :math:`\max\pi`, values in :math:`[0, \log_2 N]`
  and :math:`[1/N, 1]`, as in ``exact_leakage``: coverage at least the confidence for
  every number of draws.
- ``"bracket"``: :math:`s > 0`, :math:`N >` ``max_enumerated``: two Monte Carlo bounds with
  :math:`K` = ``negatives`` subsets :math:`S_1..S_K` drawn uniformly and independently per
  draw (independent of :math:`(S, Y)`), with the known likelihood :math:`p(y\mid S)`:

  .. math::

      \mathbb E\Big[\log(K+1) - H(w)\Big]
      \;\le\; I(S;Y) \;\le\;
      \mathbb E\log\frac{p(Y\mid S)}{\tfrac1N p(Y\mid S)
      + \tfrac{N-1}{N}\tfrac1{K'}\sum_{k: S_k\ne S} p(Y\mid S_k)},

  :math:`w_j \propto p(Y\mid S_j)` the posterior over the :math:`K + 1` subsets
  :math:`S_0 = S, S_1, \dots, S_K` and :math:`K'` the number of negatives other than
  :math:`S`. Left: InfoNCE with the optimal critic :math:`\log p(y\mid s)`,
  :math:`\mathbb E\log\frac{(K+1)\,p(Y\mid S)}{\sum_{j=0}^K p(Y\mid S_j)}` (van den Oord
  et al. 2018, arXiv:1807.03748; Poole et al. 2019, "On variational bounds of mutual
  information", ICML, eq. 12), averaged over which of the :math:`K + 1` subsets is the
  true one: given :math:`Y` and the unordered :math:`\{S_0..S_K\}` (i.i.d. uniform), the
  true one is :math:`S_j` with probability :math:`w_j`, so the term's conditional
  expectation is :math:`\log(K+1) + \sum_j w_j\log w_j` (same mean, smaller variance, and
  each draw lies in :math:`[0, \log(K+1)]`). Right: :math:`p(y) = \tfrac1N p(y\mid S) +
  \tfrac{N-1}N\,\text{mean}_{S'\ne S}\,p(y\mid S')` and the kept negatives are i.i.d.
  uniform on the :math:`N - 1` other subsets, so the denominator is an unbiased estimate of
  :math:`p(y)` given :math:`(y, S, K')`; by Jensen its expected log is at most
  :math:`\log p(y)` and the bound is :math:`\ge \mathbb E\log p(Y\mid S)/p(Y) = I` (the
  leave-one-out bound of Poole et al., with the true subset's own share of :math:`p(y)`
  kept in; with :math:`K' = 0` the term is :math:`\log N \ge \log p(y\mid S)/p(y)`). Each
  draw is at most :math:`\log N`; it has no lower limit, so for the interval it is floored
  at :math:`-\log N` (a floor only raises the mean, and needs a truth :math:`N` times less
  likely than the average subset). Both tighten as :math:`K` grows; the bracket is wide
  when :math:`I \gg \log_2(K+1)`. ``ci_bits`` = (empirical Bernstein lower limit of the
  left mean, upper limit of the floored right mean), each from a two-sided interval at
  ``confidence``, so it covers :math:`I` with probability at least ``confidence`` (union
  bound over two misses of probability :math:`(1-\text{confidence})/2` each).
- ``"assumed_distinct"``: :math:`s = 0`, :math:`N >` ``max_enumerated``: ``bits`` =
  :math:`\log_2 N` on the **assumption** that different subsets have different mean
  releases (true for generic real-valued releases; quantised releases, e.g. integer pixel
  values, can have :math:`r_1 + r_4 = r_2 + r_3`, and then :math:`\log_2 N` is only the
  entropy ceiling, an upper bound). Not checked (that would need the enumeration); if two
  single releases are equal the assumption is certainly false and a ValueError asks for a
  larger ``max_enumerated``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pruneleak.bounds.leakage._releases import (
    all_subsets,
    distinct_rows,
    group_entropy_bits,
    release_matrix,
    scaled_releases,
    subset_sums,
)
from pruneleak.bounds.leakage.exact import exact_leakage
from pruneleak.bounds.leakage.intervals import mean_interval
from pruneleak.bounds.validation import check_int, check_open_unit, check_real

METHODS = ("exact", "monte_carlo", "enumerated", "bracket", "assumed_distinct")
# Enumerate when N <= this. At M = 1797, B = 2 (N = 1,613,706) 1024 draws take ~10 s on one
# core; the subset table costs 4 B (min(B, M - B)) bytes per subset (13 MB there).
DEFAULT_MAX_ENUMERATED = 2_000_000
# Negatives per draw of the bracket: the lower bound saturates at log2(1024) = 10 bits.
DEFAULT_NEGATIVES = 1023
# Floats per working array (draws x subsets, or draws x negatives x k): 8 MiB; a few such
# arrays live at once, so the temporaries stay well under 64 MiB.
_CHUNK_FLOATS = 1 << 20
# The M x M Gram matrix is used when it has at most this many entries (64 MiB); beyond,
# the quadratic terms are computed from the k-dimensional sums instead (same algebra).
_GRAM_FLOATS = 1 << 23
_MAX_SAMPLES = 1 << 30
_MAX_NEGATIVES = 1 << 20
# Fixed weights of the hash that pre-groups the noiseless batch sums (ties are then checked
# exactly, so the hash only affects speed, never the result).
_HASH_SEED = 20240917


@dataclass(frozen=True)
class BatchLeakage:
    r"""Leakage of a uniformly random :math:`B`-subset through its noisy mean release (bits).

    Attributes
    ----------
    bits : :math:`I(S; Y)` in bits: exact, a Monte Carlo mean, or (``"bracket"``) the
        midpoint of ``bracket_bits``, or (``"assumed_distinct"``) :math:`\log_2 N`.
    ci_bits : (low, high) confidence interval of :math:`I(S;Y)`, coverage at least
        ``confidence`` for every ``samples`` (empirical Bernstein, module docstring); zero
        width when exact or ``"assumed_distinct"``.
    bayes_success : :math:`\mathbb E\max_S \pi_S(Y)`, the MAP attacker's probability of
        naming the whole batch; None where not computed (``"bracket"``).
    bayes_success_ci : (low, high) interval of ``bayes_success`` (same kind), or None.
    candidates : :math:`M`.
    batch_size : :math:`B`.
    secrets : :math:`N = \binom{M}{B}`, a Python int (may be astronomically large).
    method : one of ``METHODS`` (module docstring).
    samples : Monte Carlo draws used (0 without Monte Carlo).
    noise_std : :math:`s`.
    exact : True when computed without Monte Carlo and without assumption.
    bracket_bits : (lower, upper) Monte Carlo means of the InfoNCE and leave-one-out bounds,
        clipped to :math:`[0, \log_2 N]` (``"bracket"`` only, else None); they can cross
        when the bracket is narrower than their Monte Carlo errors (``ci_bits`` contains
        both).
    """

    bits: float
    ci_bits: tuple[float, float]
    bayes_success: float | None
    bayes_success_ci: tuple[float, float] | None
    candidates: int
    batch_size: int
    secrets: int
    method: str
    samples: int
    noise_std: float
    exact: bool
    bracket_bits: tuple[float, float] | None = None


def _exact(bits, success, m, b, n, s, method="exact"):
    bits, success = float(bits), float(success)
    return BatchLeakage(
        bits=bits,
        ci_bits=(bits, bits),
        bayes_success=success,
        bayes_success_ci=(success, success),
        candidates=m,
        batch_size=b,
        secrets=n,
        method=method,
        samples=0,
        noise_std=s,
        exact=True,
    )


def _random_subsets(rng: np.random.Generator, m: int, b: int, n: int) -> np.ndarray:
    """(n, b) rows, each an independent uniform b-subset of range(m) (unordered, distinct).

    Floyd's algorithm (Bentley & Floyd 1987, CACM 30(9), "A sample of brilliance") vectorised
    over rows, O(n b^2), for b^2 <= 4 m; else the b smallest of m uniform keys per row.
    """
    if b * b <= 4 * m:
        out = np.empty((n, b), dtype=np.intp)
        for col, j in enumerate(range(m - b, m)):
            t = rng.integers(0, j + 1, size=n)
            if col:
                t = np.where((out[:, :col] == t[:, None]).any(axis=1), j, t)
            out[:, col] = t
        return out
    rows = max(1, _CHUNK_FLOATS // m)
    return np.concatenate(
        [
            np.argpartition(rng.random((min(rows, n - i), m)), b - 1, axis=1)[:, :b]
            for i in range(0, n, rows)
        ]
    )


def _quadratic_terms(scaled: np.ndarray, subsets: np.ndarray) -> np.ndarray:
    r""":math:`\sum_{i,j\in S} G_{ij} = \|\sum_{i\in S} c_i\|^2` for every column of ``subsets``."""
    m, k = scaled.shape
    n = subsets.shape[1]
    out = np.empty(n)
    if m * m <= _GRAM_FLOATS:
        gram = scaled @ scaled.T
        for start in range(0, n, _CHUNK_FLOATS):
            block = subsets[:, start : start + _CHUNK_FLOATS]
            out[start : start + block.shape[1]] = sum(gram[p, q] for p in block for q in block)
        return out
    rows = max(1, _CHUNK_FLOATS // max(k, 1))
    for start in range(0, n, rows):
        sums = subset_sums(scaled, subsets[:, start : start + rows])
        out[start : start + sums.shape[0]] = np.einsum("ij,ij->i", sums, sums)
    return out


def _fold_logits(state, logits: np.ndarray):
    r"""Fold a block of logits (items along axis 0, one column per draw) into the running
    ``(top, z, t)`` of a softmax: ``top`` the largest logit so far,
    :math:`z = \sum e^{\ell - \text{top}}`, :math:`t = \sum e^{\ell - \text{top}}
    (\text{top} - \ell)`; ``state`` None starts a new one. The old sums are rescaled when
    ``top`` grows, so no exponential overflows and no (items, draws) array outlives its block.
    """
    top = logits.max(axis=0)
    z = t = 0.0
    if state is not None:
        old_top, z, t = state
        top = np.maximum(old_top, top)
        shrink = np.exp(old_top - top)
        t = shrink * (t + (top - old_top) * z)
        z = shrink * z
    gap = top - logits
    weights = np.exp(-gap)
    return top, z + weights.sum(axis=0), t + np.einsum("ij,ij->j", weights, gap)


def _entropy_nats(z: np.ndarray, t: np.ndarray) -> np.ndarray:
    r"""Entropy of the softmax folded into ``(z, t)``: :math:`H = \ln z + t/z` nats, a sum of
    non-negative terms (:math:`\pi = e^{\ell - \text{top}}/z`,
    :math:`-\ln\pi = \ln z + \text{top} - \ell`)."""
    return np.log(z) + t / z


def _enumerated(scaled: np.ndarray, b: int, samples: int, rng: np.random.Generator):
    """Per-draw ``log2 N - H(posterior)`` (bits) and ``max posterior`` over all N subsets."""
    m, k = scaled.shape
    small = min(b, m - b)  # enumerate S, or its complement when that is smaller
    # Complements: sum_{S} c_i = -sum_{S^c} c_i (centred). The sign flips y and every
    # likelihood together (a reflection), so it cannot change the numbers; kept for clarity.
    sign = 1.0 if small == b else -1.0
    subsets = all_subsets(m, small)
    n_sub = subsets.shape[1]
    offset = _quadratic_terms(scaled, subsets) / (2 * b * b)
    draws = max(1, min(samples, _CHUNK_FLOATS // (n_sub + m + k)))
    block = max(1, min(n_sub, _CHUNK_FLOATS // draws))
    info = np.empty(samples)
    success = np.empty(samples)
    log2_n = math.log2(n_sub)
    for start in range(0, samples, draws):
        d = min(draws, samples - start)
        truth = subsets[:, rng.integers(n_sub, size=d)]  # (small, d), uniform over subsets
        y = sign * subset_sums(scaled, truth) / b + rng.standard_normal((d, k))
        a = sign * (scaled @ y.T) / b  # (m, d): a_i / B, signed for complements
        state = None
        for lo in range(0, n_sub, block):
            logits = subset_sums(a, subsets[:, lo : lo + block])  # (block, d)
            logits -= offset[lo : lo + block, None]
            state = _fold_logits(state, logits)
        _, z, t = state
        info[start : start + d] = log2_n - _entropy_nats(z, t) / math.log(2)
        success[start : start + d] = 1.0 / z
    return info, success


def _log_likelihoods(scaled: np.ndarray, y: np.ndarray, subsets: np.ndarray) -> np.ndarray:
    r""":math:`\ell_S = \langle y, m_S\rangle - \|m_S\|^2/2` for subsets (d, j, b), y (d, k)."""
    b = subsets.shape[-1]
    sums = subset_sums(scaled, np.moveaxis(subsets, -1, 0))  # (d, j, k)
    return (np.einsum("djk,dk->dj", sums, y) - 0.5 * np.einsum("djk,djk->dj", sums, sums) / b) / b


def _same_subsets(truth: np.ndarray, others: np.ndarray) -> np.ndarray:
    """(d, j) mask: ``others[i, l]`` is the same set as ``truth[i]`` (rows of indices, any
    order)."""
    return (np.sort(others, axis=-1) == np.sort(truth, axis=-1)[:, None, :]).all(axis=-1)


def _bracket(scaled: np.ndarray, b: int, samples: int, negatives: int, rng):
    """Per-draw InfoNCE (lower) and leave-one-out (upper) terms, in bits (module docstring)."""
    m, k = scaled.shape
    secrets = math.comb(m, b)
    log_n = math.log(secrets)
    log_rest = math.log1p(-1 / secrets)  # ln((N - 1) / N)
    width = max(k, 1) * b
    draws = max(1, min(samples, _CHUNK_FLOATS // ((negatives + 1) * width)))
    per_block = max(1, _CHUNK_FLOATS // (draws * width))
    lower = np.empty(samples)
    upper = np.empty(samples)
    for start in range(0, samples, draws):
        d = min(draws, samples - start)
        truth = _random_subsets(rng, m, b, d)
        y = subset_sums(scaled, truth.T) / b + rng.standard_normal((d, k))
        positive = _log_likelihoods(scaled, y, truth[:, None, :])[:, 0]
        state = _fold_logits(None, positive[None, :])  # softmax over the K + 1 subsets
        lse = np.full(d, -np.inf)  # log sum_k exp(l_{S_k}) over negatives other than S
        kept = np.zeros(d)  # how many negatives differ from S
        for done in range(0, negatives, per_block):
            j = min(per_block, negatives - done)
            others = _random_subsets(rng, m, b, d * j).reshape(d, j, b)
            logits = _log_likelihoods(scaled, y, others)  # (d, j)
            state = _fold_logits(state, logits.T)
            other = ~_same_subsets(truth, others)
            kept += other.sum(axis=1)
            masked = np.where(other, logits, -np.inf)
            lse = np.logaddexp(lse, np.logaddexp.reduce(masked, axis=1))
        _, z, t = state
        lower_nats = math.log(negatives + 1) - _entropy_nats(z, t)
        # ln p(y|S) - ln(p(y|S) / N + (N - 1) / N * mean of p(y|S_k) over the kept S_k);
        # no kept S_k: lse = -inf and the term is ln N
        rest = log_rest + lse - np.log(np.maximum(kept, 1)) - positive
        upper_nats = -np.logaddexp(-log_n, rest)
        lower[start : start + d] = lower_nats / math.log(2)
        upper[start : start + d] = upper_nats / math.log(2)
    return lower, upper


def _row_blocks(m: int, k: int):
    """Slices of at most ``_CHUNK_FLOATS`` entries of an (m, k) array, whole rows each."""
    rows = max(1, _CHUNK_FLOATS // max(k, 1))
    return (slice(start, start + rows) for start in range(0, m, rows))


def _magnitude_range(r: np.ndarray) -> tuple[float, float]:
    """Largest and smallest non-zero :math:`|r_{ij}|` (``(0.0, inf)`` when all are 0), a
    block of rows at a time (no full-size temporary)."""
    largest, smallest = 0.0, math.inf
    for block in _row_blocks(*r.shape):
        magnitude = np.abs(r[block])
        largest = max(largest, float(magnitude.max(initial=0.0)))
        smallest = min(smallest, float(magnitude.min(initial=math.inf, where=magnitude > 0)))
    return largest, smallest


def _integer_exponent(largest: float, smallest: float, b: int) -> int | None:
    """``low`` such that every entry is an integer multiple of :math:`2^{low}` and every sum
    of ``b`` entries, in those units, fits int64; None when the exponent range of the
    non-zero entries (``_magnitude_range``; ``frexp``'s exponent grows with the magnitude)
    is too wide for that."""
    if largest == 0:
        return 0
    low = math.frexp(smallest)[1] - 53
    return None if math.frexp(largest)[1] - low + math.ceil(math.log2(b)) > 62 else low


def _integer_rows(r: np.ndarray, low: int) -> np.ndarray:
    """``r`` in units of :math:`2^{low}` as exact int64 (``low`` from ``_integer_exponent``)."""
    mant, expo = np.frexp(r)  # r = mant 2^expo, 1/2 <= |mant| < 1 (or 0)
    ints = np.ldexp(mant, 53).astype(np.int64)  # exact: 53 significant bits
    shift = np.where(r != 0, expo - 53 - low, 0)
    return ints * np.left_shift(np.int64(1), shift)


def _hash_weights(k: int) -> np.ndarray:
    """Fixed random int64 weights of the pre-grouping hash (any weights give the same result)."""
    return np.random.default_rng(_HASH_SEED).integers(
        1, np.iinfo(np.int64).max, size=k, dtype=np.int64
    )


def _mix(words: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser (Steele, Lea & Flood 2014, "Fast splittable pseudorandom number
    generators", OOPSLA) of uint64 words, wrapping: every input bit reaches every output
    bit, so sums that differ only in high bits (quantised values have many trailing zero
    bits) still get unrelated hashes."""
    z = words ^ (words >> np.uint64(30))
    z = z * np.uint64(0xBF58476D1CE4E5B9)
    z = z ^ (z >> np.uint64(27))
    z = z * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _integer_row_keys(r: np.ndarray, low: int) -> np.ndarray:
    r"""One int64 key per row: :math:`\sum_c (v_{ic} / 2^{z_c})\,w_c` modulo :math:`2^{64}`,
    :math:`v` the exact integer rows (``_integer_rows``) and :math:`2^{z_c}` the largest
    power of two dividing column :math:`c`. Linear modulo :math:`2^{64}` in the row, so the
    sum of a subset's row keys is the key of its integer sum: equal sums, equal keys. The
    division (exact) keeps the low bits of the entries from being all zero, where the
    products with the weights would keep only a few random bits of the key (a difference
    vector divisible by :math:`2^t` collides with probability :math:`2^{t-64}`)."""
    m, k = r.shape
    common = np.zeros(k, dtype=np.int64)  # OR of |v|: its lowest set bit is 2^{z_c}
    for block in _row_blocks(m, k):
        common |= np.bitwise_or.reduce(np.abs(_integer_rows(r[block], low)), axis=0)
    lowest = common & -common
    shift = np.where(common == 0, 0, np.frexp(lowest.astype(float))[1] - 1)
    weights = _hash_weights(k)
    keys = np.empty(m, dtype=np.int64)
    for block in _row_blocks(m, k):
        keys[block] = ((_integer_rows(r[block], low) >> shift) * weights).sum(axis=1)
    return keys


def _exact_group_counts(values: np.ndarray, subsets: np.ndarray) -> np.ndarray:
    """Multiplicities of the distinct sums of ``values`` rows over the columns of ``subsets``,
    by exact comparison: the sums are formed a chunk at a time and hashed (a weighted sum,
    modulo :math:`2^{64}`, of their bit patterns mixed by ``_mix``); only sums with equal
    hashes are compared entry by entry, a chunk of whole hash groups at a time (different
    hashes mean different sums). Time O(N b k); memory a chunk, or one group of equal
    hashes."""
    k = values.shape[1]
    n = subsets.shape[1]
    weights = _hash_weights(k).view(np.uint64)
    keys = np.empty(n, dtype=np.uint64)
    for block in _row_blocks(n, k):
        sums = subset_sums(values, subsets[:, block])
        if sums.dtype.kind == "f":
            sums = sums + 0.0  # maps -0.0 to 0.0
        keys[block] = (_mix(sums.view(np.uint64)) * weights).sum(axis=1)  # wraps mod 2^64
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    group = np.cumsum(np.concatenate([[True], sorted_keys[1:] != sorted_keys[:-1]])) - 1
    sizes = np.bincount(group)
    counts = [np.ones(int(np.sum(sizes == 1)), dtype=np.int64)]
    tied = sizes[group] > 1
    shared, shared_group = order[tied], group[tied]  # whole groups, in increasing group order
    rows = max(1, _CHUNK_FLOATS // max(k, 1))
    start = 0
    while start < shared.size:  # chunks of whole groups: up to `rows`, or one larger group
        stop = min(start + rows, shared.size)
        if stop < shared.size:
            cut = int(np.searchsorted(shared_group, shared_group[stop]))
            side = "right" if cut == start else "left"
            stop = int(np.searchsorted(shared_group, shared_group[stop], side=side))
        sums = subset_sums(values, subsets[:, shared[start:stop]])
        counts.append(np.unique(sums, axis=0, return_counts=True)[1])
        start = stop
    return np.concatenate(counts)


def _float_keys(r: np.ndarray, subsets: np.ndarray, largest: float) -> tuple[np.ndarray, float]:
    r"""Keys :math:`\kappa_S` of the subsets and a tolerance :math:`\tau` such that equal
    float64 sums :math:`T_S = T_{S'}` (summed in index order) give
    :math:`|\kappa_S - \kappa_{S'}| \le \tau`.

    With :math:`x = 2^{-e} r` (:math:`|x| < 1`), weights :math:`w\in[0, 1)^k`,
    :math:`h_i = x_i\cdot w` (one matrix-vector product) and :math:`\kappa_S = \sum_{i\in S}
    h_i`, rounding error analysis (Higham, *Accuracy and Stability of Numerical Algorithms*,
    2nd ed., eq. 3.5: :math:`|\mathrm{fl}(\sum_j^n p_j) - \sum_j p_j| \le \gamma_n\sum_j|p_j|`,
    :math:`\gamma_n = nu/(1 - nu)`, :math:`u = 2^{-53}`, any order of summation) gives, with
    :math:`a_i = |x_i|\cdot w`,

    .. math::

        |\kappa_S - 2^{-e}\,T_S\cdot w| \le (\gamma_k + 2\gamma_{b-1})(1 + \gamma_k)
        \sum_{i\in S} a_i + b\,k\,2^{-1074}

    (the dot products, the sum of the :math:`h_i`, the rounding of :math:`T_S` itself, and
    underflow to subnormals; sums of floats are exact in the subnormal range). The tolerance
    is twice the largest such bound, taken with :math:`2(k + 2b)u` for the factor in front
    of the sum (at least twice the exact factor while :math:`ku < 10^{-2}`), over the
    :math:`b` largest :math:`a_i`; ``largest`` is :math:`\max|r_{ij}|`, so :math:`e` is its
    ``frexp`` exponent. Time O(M k + N b); no (N, k) array."""
    m, k = r.shape
    b = subsets.shape[0]
    exponent = math.frexp(largest)[1]
    weights = np.ldexp(_hash_weights(k).astype(float), -63)
    h = np.empty(m)
    a = np.empty(m)
    for block in _row_blocks(m, k):
        x = np.ldexp(r[block], -exponent)
        h[block] = x @ weights
        a[block] = np.abs(x) @ weights
    largest = float(np.sort(a)[-b:].sum())
    tolerance = 2 * (2 * (k + 2 * b) * 2.0**-53 * largest + b * k * 2.0**-1074)
    return subset_sums(h, subsets), tolerance


def _noiseless_group_counts(r: np.ndarray, b: int) -> np.ndarray:
    r"""Multiplicities of the distinct batch sums over all b-subsets (see batch_leakage).

    One key per row, a subset's key the sum of its members' (so the N keys cost O(N b)
    after O(M k)), keys sorted (O(N log N)), and only subsets whose keys may be equal
    compared exactly. Integer route (``_integer_exponent``): ``_integer_row_keys``, linear
    modulo :math:`2^{64}` in the row, so equal sums give equal keys, and different keys
    different sums. Float route: ``_float_keys``; equal float sums give keys within the
    tolerance, so every run of sorted keys with gaps within it is compared (a run holds
    every pair that may be equal: their gap bounds each gap between them). A float sum of
    ``b`` entries that may overflow (:math:`b\max|r| \ge 2^{1023}`) goes the slow way,
    ``_exact_group_counts`` on all subsets (O(N b k)).
    """
    m = r.shape[0]
    subsets = all_subsets(m, b)
    largest, smallest = _magnitude_range(r)
    low = _integer_exponent(largest, smallest, b)
    if low is not None:
        keys = subset_sums(_integer_row_keys(r, low), subsets)  # wraps mod 2^64
        order = np.argsort(keys, kind="stable")
        same = keys[order[1:]] == keys[order[:-1]]
    elif b * largest < 2.0**1023:
        keys, tolerance = _float_keys(r, subsets, largest)
        order = np.argsort(keys, kind="stable")
        same = np.diff(keys[order]) <= tolerance
    else:
        with np.errstate(over="ignore"):  # sums of float64 in index order: inf where they are
            return _exact_group_counts(r, subsets)
    in_run = np.zeros(order.size, dtype=bool)  # sorted position shares a run with another
    in_run[1:] |= same
    in_run[:-1] |= same
    singles = np.ones(int(order.size - in_run.sum()), dtype=np.int64)
    if not in_run.any():
        return singles
    # Keys in different runs belong to different sums, so one exact grouping of every
    # subset in a run counts each run's sums correctly. Only the rows involved are used.
    candidates = subsets[:, order[in_run]]
    rows, local = np.unique(candidates, return_inverse=True)  # increasing: order kept
    values = r[rows] if low is None else _integer_rows(r[rows], low)
    tied = _exact_group_counts(values, local.reshape(candidates.shape))
    return np.concatenate([singles, tied])


def batch_leakage(
    releases,
    noise_std: float,
    batch_size: int,
    *,
    samples: int = 4096,
    confidence: float = 0.95,
    seed: int = 0,
    max_enumerated: int = DEFAULT_MAX_ENUMERATED,
    negatives: int = DEFAULT_NEGATIVES,
) -> BatchLeakage:
    r""":math:`I(S; Y)` in bits for a uniform :math:`B`-subset :math:`S` and
    :math:`Y = \tfrac1B\sum_{i\in S} r_i + N(0, s^2 I_k)`.

    .. math::

        I(S; Y) = \log_2\binom{M}{B} - \mathbb E\, H(\pi(Y)),\qquad
        \pi_S(y) \propto \exp\Big(\frac1B\sum_{i\in S} a_i
        - \frac1{2B^2}\sum_{i,j\in S} G_{ij}\Big)

    (module docstring; Cover & Thomas, 2nd ed., eq. 2.43). Assumptions: :math:`S` uniform
    on the :math:`N = \binom{M}{B}` subsets of :math:`B` distinct candidates (without
    replacement, unordered); the release of a batch is the mean of its members' rows of
    ``releases`` (FedSGD step on the mean loss, mask independent of the data); the noise is
    :math:`N(0, s^2 I_k)`, independent of :math:`S`. Which method runs:

    - :math:`B = 1`: :func:`~bounds.leakage.exact.exact_leakage` (same numbers; method
      ``"exact"`` or ``"monte_carlo"``).
    - :math:`B = M`, or all rows equal: 0 bits, exact.
    - :math:`s = 0`, :math:`N \le` ``max_enumerated``: exact. The server learns which
      distinct mean it saw: :math:`I = \sum_g \tfrac{n_g}{N}\log_2\tfrac{N}{n_g}` over the
      groups of subsets with equal means, success = groups / :math:`N`. Equality is exact
      for the mathematical means whenever the entries of ``releases`` are multiples of one
      power of two within 62 bits of range, e.g. integers or quantised values (they are
      summed as int64); otherwise the sums are compared as float64 sums in index order
      (means equal in exact arithmetic but not after rounding count as distinct, and the
      other way round). Cost :math:`O(Mk + NB\log N)`: one hash per row, linear in the
      row, so a subset's hash is the sum of its members' (no :math:`k`-dimensional sum per
      subset); the :math:`N` hashes are sorted and only subsets whose hashes may be equal
      (within the rounding bound of the float route) are compared exactly.
    - :math:`s = 0`, :math:`N >` ``max_enumerated``: ``"assumed_distinct"``, module
      docstring (:math:`\log_2 N`, an assumption; ValueError if two rows are equal).
    - :math:`s > 0`, :math:`N \le` ``max_enumerated``: ``"enumerated"``, exact posterior,
      Monte Carlo over :math:`(S, Z)` with ``samples`` draws.
    - :math:`s > 0`, :math:`N >` ``max_enumerated``: ``"bracket"``, InfoNCE lower and
      leave-one-out upper bound with ``negatives`` = :math:`K`; ``ci_bits`` = (empirical
      Bernstein lower limit of the lower bound, upper limit of the upper bound), which
      covers :math:`I` with probability at least ``confidence`` (module docstring);
      ``bits`` is the midpoint of ``bracket_bits``.

    Intervals (``"monte_carlo"``, ``"enumerated"``, ``"bracket"``) are empirical Bernstein
    intervals (:func:`bounds.leakage.intervals.mean_interval`): coverage at least
    ``confidence`` for every ``samples``, at least about :math:`10.2R/\text{samples}` wide
    at 95 % for per-draw values in a range of length :math:`R` bits.

    Parameters
    ----------
    releases : (M, k) finite array, row :math:`i` the release of candidate :math:`i` alone.
    noise_std : :math:`s \ge 0`, Gaussian noise per coordinate (same unit as ``releases``).
    batch_size : :math:`B`, an integer in :math:`[1, M]`.
    samples : Monte Carlo draws, at least 2.
    confidence : level of the intervals, in (0, 1).
    seed : seed of ``numpy.random.default_rng``; same seed, same numbers.
    max_enumerated : largest :math:`N` handled by enumerating all subsets (time and memory
        grow linearly in :math:`N`), at least 0.
    negatives : :math:`K \ge 1` negatives per draw of the bracket.

    Returns
    -------
    BatchLeakage, bits in :math:`[0, \log_2 N]`.

    Examples
    --------
    >>> r = np.array([[0.0], [1.0], [2.0], [3.0]])  # 0+3 = 1+2: two pairs share a mean
    >>> res = batch_leakage(r, 0.0, 2)
    >>> res.secrets, res.method, res.bits  # groups of sizes 1, 1, 2, 1, 1 out of 6
    (6, 'exact', 2.2516291673878226)
    >>> res = batch_leakage(np.eye(6), 0.3, 2, samples=500, seed=1)
    >>> res.method, res.ci_bits[0] <= res.bits <= res.ci_bits[1] <= math.log2(15)
    ('enumerated', True)
    >>> big = batch_leakage(np.eye(6), 0.3, 3, samples=200, max_enumerated=10, negatives=64)
    >>> big.method, big.bracket_bits[0] <= big.bits <= big.bracket_bits[1], big.bayes_success
    ('bracket', True, None)
    """
    func = "batch_leakage"
    r = release_matrix(releases, func)
    m = r.shape[0]
    s = check_real("noise_std", noise_std, func=func, low=0)
    b = check_int("batch_size", batch_size, func=func, low=1, high=m)
    n = check_int("samples", samples, func=func, low=2, high=_MAX_SAMPLES)
    conf = check_open_unit("confidence", confidence, func=func)
    seed = check_int("seed", seed, func=func, low=0)
    cap = check_int("max_enumerated", max_enumerated, func=func, low=0)
    neg = check_int("negatives", negatives, func=func, low=1, high=_MAX_NEGATIVES)
    secrets = math.comb(m, b)
    log2_n = math.log2(secrets)
    if b == 1:
        one = exact_leakage(r, s, samples=n, confidence=conf, seed=seed)
        return BatchLeakage(
            bits=one.bits,
            ci_bits=one.ci_bits,
            bayes_success=one.bayes_success,
            bayes_success_ci=one.bayes_success_ci,
            candidates=m,
            batch_size=1,
            secrets=m,
            method="exact" if one.exact else "monte_carlo",
            samples=one.samples,
            noise_std=s,
            exact=one.exact,
        )
    counts = distinct_rows(r)
    if secrets == 1 or counts.size == 1:
        return _exact(0.0, 1 / secrets, m, b, secrets, s)
    if s == 0 and secrets <= cap:
        groups = _noiseless_group_counts(r, b)
        bits = group_entropy_bits(groups)
        return _exact(bits, groups.size / secrets, m, b, secrets, s)
    if s == 0:
        if counts.size < m:
            raise ValueError(
                f"batch_leakage cannot assume distinct batch means: {m - counts.size + 1} or "
                f"more of the {m} rows of 'releases' are equal, so subsets that swap them have "
                f"equal means. Got max_enumerated={cap!r} instead; pass "
                f"max_enumerated >= {secrets} to enumerate the {secrets} subsets exactly."
            )
        return BatchLeakage(
            bits=log2_n,
            ci_bits=(log2_n, log2_n),
            bayes_success=1.0,
            bayes_success_ci=(1.0, 1.0),
            candidates=m,
            batch_size=b,
            secrets=secrets,
            method="assumed_distinct",
            samples=0,
            noise_std=s,
            exact=False,
        )
    scaled = scaled_releases(r, s, func)
    rng = np.random.default_rng(seed)
    if secrets <= cap:
        info, success = _enumerated(scaled, b, n, rng)
        bits, bits_lo, bits_hi = mean_interval(info, conf, low=0.0, high=log2_n)
        win, win_lo, win_hi = mean_interval(success, conf, low=1 / secrets, high=1.0)
        return BatchLeakage(
            bits=bits,
            ci_bits=(bits_lo, bits_hi),
            bayes_success=win,
            bayes_success_ci=(win_lo, win_hi),
            candidates=m,
            batch_size=b,
            secrets=secrets,
            method="enumerated",
            samples=n,
            noise_std=s,
            exact=False,
        )
    lower, upper = _bracket(scaled, b, n, neg, rng)
    # Per draw: InfoNCE term in [0, log2(K + 1)]; leave-one-out term <= log2 N, floored at
    # -log2 N (module docstring). Limits and means are then clipped to [0, log2 N].
    low_mean, low_lo, _ = mean_interval(lower, conf, low=0.0, high=math.log2(neg + 1))
    floored = np.maximum(upper, -log2_n)
    _, _, up_hi = mean_interval(floored, conf, low=-log2_n, high=log2_n)
    low_mean, low_lo = min(low_mean, log2_n), min(low_lo, log2_n)
    up_mean, up_hi = (min(max(v, 0.0), log2_n) for v in (float(upper.mean()), up_hi))
    # The two means can cross when the bracket is narrower than their Monte Carlo errors;
    # the interval is widened (never narrowed) to contain both.
    low_lo, up_hi = min(low_lo, up_mean), max(up_hi, low_mean)
    return BatchLeakage(
        bits=0.5 * (low_mean + up_mean),
        ci_bits=(low_lo, up_hi),
        bayes_success=None,
        bayes_success_ci=None,
        candidates=m,
        batch_size=b,
        secrets=secrets,
        method="bracket",
        samples=n,
        noise_std=s,
        exact=False,
        bracket_bits=(low_mean, up_mean),
    )
