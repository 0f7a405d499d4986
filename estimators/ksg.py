r"""Kraskov-Stoegbauer-Grassberger (KSG) k-nearest-neighbour estimator of I(X; Y).

Kraskov, Stoegbauer and Grassberger, "Estimating mutual information", Phys. Rev. E 69,
066138 (2004), estimator 1 (eq. 8), in nats:

.. math::

    \hat I(X; Y) = \psi(k) + \psi(N) - \frac1N \sum_{i=1}^N
                   \left[\psi(n_x(i) + 1) + \psi(n_y(i) + 1)\right],

where ``eps_i`` is the max-norm distance from ``(x_i, y_i)`` to its k-th nearest neighbour
in the joint space and ``n_x(i)`` counts the points ``j != i`` with
``||x_j - x_i||_inf < eps_i`` (strictly), likewise ``n_y(i)``. Since the ``k - 1`` nearer
joint neighbours are strictly inside in both spaces (continuous data), ``n_x, n_y >= k - 1``
and the estimate can never exceed the *ceiling* ``psi(N) - psi(k)`` (about ``log N``).

Two neighbour searches give identical counts (same floating-point distances, same strict
comparison): ``scipy.spatial.cKDTree`` with the Chebyshev norm (fast in a few dimensions,
but a k-d tree prunes nothing in tens of dimensions and ends up slower than a plain scan),
and a chunked brute force (``scipy.spatial.distance.cdist`` with the Chebyshev metric on
blocks of rows, memory bounded by :data:`BRUTE_MAX_ENTRIES`).

The classical baseline of the package: accurate in low dimension, biased towards 0 when the
MI is large relative to ``log N`` (Gao, Ver Steeg and Galstyan, AISTATS 2015: k-NN
estimators need a number of samples exponential in the MI) or the dimension is high
(every neighbour is then far away; -85 % at 25 + 25 dimensions, issue 14). The estimator
warns in both cases; see ``benchmarks/bench_ksg.py`` for timings.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial import cKDTree
from scipy.spatial.distance import cdist
from scipy.special import digamma, stdtrit

from pruneleak.bounds.validation import check_bool, check_choice, check_int, check_real
from pruneleak.estimators._arrays import check_seed
from pruneleak.estimators.estimate import MIEstimate, make_estimate
from pruneleak.estimators.samples import (
    TRANSFORMS,
    heavy_tail_warnings,
    paired_samples,
    transform_samples,
)

__all__ = ["KSG"]

ALGORITHMS = ("auto", "tree", "brute")
INTERVALS = ("half-sampling", "none")
#: ``algorithm="auto"`` uses the k-d tree up to this joint dimension (dim_x + dim_y) and the
#: brute force above it. Crossover measured at n = 5,000 on one core: see
#: ``benchmarks/bench_ksg.py`` (the tree wins below ~8 joint dimensions, loses above).
TREE_MAX_DIM = 8
#: Largest block of pairwise distances (rows x N entries, float64) the brute force holds at
#: once, per array (three arrays: x, y and joint distances): 2**21 entries = 16 MiB each.
BRUTE_MAX_ENTRIES = 2**21
#: Below this many samples the estimate is flagged as small-sample (Kraskov et al. 2004,
#: Fig. 4-5: at N = 100 the bias of a 1 nat Gaussian pair is already about 5 %; at N = 10
#: the estimate of 1 nat is 0.53, issue 14).
SMALL_N = 100
#: Fraction of the ceiling ``psi(N) - psi(k)`` above which the estimate is flagged as
#: saturated. Measured on 1-d Gaussian pairs (mean of 5 seeds, k = 3): the bias is -6 % at
#: 0.51 of the ceiling and -12 % at 0.72 for N = 100; -6 % at 0.79 and -13 % at 0.88 for
#: N = 1,000; in more dimensions saturation sets in earlier.
CEILING_FRACTION = 0.6
#: Joint dimension warning: ``N^(1 / (dim_x + dim_y))`` below this (see
#: :meth:`KSG._dimension_warning` for the measurements behind it).
RESOLUTION = 3.0


def _by_max_abs(arr: np.ndarray, axis) -> np.ndarray:
    """``arr`` divided by its largest magnitude along ``axis`` (1 where that is 0)."""
    peak = np.abs(arr).max(axis=axis, keepdims=True)
    return arr / np.where(peak > 0, peak, 1.0)


def _standardize(arr: np.ndarray) -> np.ndarray:
    """Every feature divided by its standard deviation (features with none are kept).

    Division by the largest magnitude first keeps the variance from overflowing (one value
    of 1e308 squared is inf, which used to turn the whole feature into zeros). The mean is
    not subtracted: max-norm neighbour counts are invariant to a shift, and subtracting a
    mean dominated by an outlier would erase the differences between the other points.
    """
    arr = _by_max_abs(arr, axis=0)
    std = arr.std(axis=0)
    return arr / np.where(std > 0, std, 1.0)


def _counts_tree(x: np.ndarray, y: np.ndarray, k: int) -> tuple[np.ndarray, ...]:
    """``(eps, n_x, n_y)`` by k-d trees (Chebyshev norm); see the module docstring."""
    joint = np.hstack([x, y])
    # k + 1 neighbours because the nearest one is the point itself (distance 0)
    eps = cKDTree(joint).query(joint, k=k + 1, p=np.inf)[0][:, -1]
    radius = np.nextafter(eps, 0.0)  # d <= nextafter(eps, 0) <=> d < eps: strict
    n_x = cKDTree(x).query_ball_point(x, radius, p=np.inf, return_length=True) - 1
    n_y = cKDTree(y).query_ball_point(y, radius, p=np.inf, return_length=True) - 1
    return eps, n_x.astype(np.int64), n_y.astype(np.int64)


def _counts_brute(
    x: np.ndarray, y: np.ndarray, k: int, subsets: list[np.ndarray] | None = None
) -> list[tuple[np.ndarray, ...]]:
    """``(eps, n_x, n_y)`` by a chunked scan, for the full sample and for each subset.

    ``subsets`` are arrays of distinct sample indices; the result for a subset is that of
    the samples ``x[s], y[s]`` alone (the same as :func:`_counts_tree` on them). The
    distances of a block of rows to all samples are computed once and shared by every
    subset, so the half-samples of the interval cost a selection and a partition each, not
    a new distance computation.
    """
    n = len(x)
    groups = [np.arange(n), *(subsets or [])]
    members, positions, outputs = [], [], []
    for index in groups:
        mask = np.zeros(n, dtype=bool)
        mask[index] = True
        position = np.full(n, -1, dtype=np.int64)
        position[index] = np.arange(len(index))
        members.append(mask)
        positions.append(position)
        m = len(index)
        outputs.append((np.empty(m), np.empty(m, np.int64), np.empty(m, np.int64)))
    rows_per_block = max(1, BRUTE_MAX_ENTRIES // n)
    for start in range(0, n, rows_per_block):
        rows = np.arange(start, min(start + rows_per_block, n))
        d_x = cdist(x[rows], x, "chebyshev")
        d_y = cdist(y[rows], y, "chebyshev")
        d_z = np.maximum(d_x, d_y)
        d_z[np.arange(len(rows)), rows] = np.inf  # a point is not its own neighbour
        for g, (mask, position, (eps, n_x, n_y)) in enumerate(
            zip(members, positions, outputs, strict=True)
        ):
            if g == 0:  # the full sample: no selection
                kth = np.partition(d_z, k - 1, axis=1)[:, k - 1]
                inside_x, inside_y = d_x < kth[:, None], d_y < kth[:, None]
                out = rows
            else:
                in_rows = mask[rows]
                if not in_rows.any():
                    continue
                kth = np.partition(d_z[np.ix_(in_rows, mask)], k - 1, axis=1)[:, k - 1]
                # counting over the members (and-mask) is cheaper than selecting them
                inside_x = (d_x[in_rows] < kth[:, None]) & mask
                inside_y = (d_y[in_rows] < kth[:, None]) & mask
                out = position[rows[in_rows]]
            eps[out] = kth
            # the point itself (distance 0 < eps) is counted by the comparison: minus 1
            n_x[out] = np.count_nonzero(inside_x, axis=1) - 1
            n_y[out] = np.count_nonzero(inside_y, axis=1) - 1
    return outputs


def _neighbour_counts(
    x: np.ndarray, y: np.ndarray, k: int, algorithm: str, subsets: list[np.ndarray] | None = None
) -> list[tuple[np.ndarray, ...]]:
    """``(eps, n_x, n_y)`` for the full sample, then for every subset, by ``algorithm``."""
    if algorithm == "brute":
        return _counts_brute(x, y, k, subsets)
    groups = [None, *(subsets or [])]
    return [_counts_tree(x, y, k) if s is None else _counts_tree(x[s], y[s], k) for s in groups]


def _ksg_value(k: int, n_x: np.ndarray, n_y: np.ndarray) -> float:
    """Kraskov et al. (2004), eq. 8, from the neighbour counts of ``N = len(n_x)`` points."""
    n = len(n_x)
    return float(digamma(k) + digamma(n) - np.mean(digamma(n_x + 1) + digamma(n_y + 1)))


class KSG:
    r"""KSG estimate (Kraskov et al. 2004, estimator 1, eq. 8) of ``I(X; Y)`` in nats.

    Parameters
    ----------
    k : int, default 3
        Number of neighbours, in ``[1, N - 1]`` for ``N`` samples (checked when the data
        arrive). Kraskov et al. recommend 2 to 4.
    transform : {"none", "asinh", "rank"}, default "none"
        Strictly increasing map applied to every feature first
        (:func:`estimators.samples.transform_samples`); MI is invariant to it. ``"rank"``
        makes the estimate depend on the ranks only (a copula estimate); both tame heavy
        tails, which are warned about under ``"none"``.
    standardize : bool, default True
        Scale every feature to unit variance (after the transform). MI is invariant to
        this, but the max-norm mixes the scales of the features, so the finite-sample bias
        is not. With False, ``x`` and ``y`` are only divided by one common factor (their
        largest magnitude), which leaves every neighbour count, so the estimate, unchanged.
    interval : {"half-sampling", "none"}, default "half-sampling"
        How the interval is computed; see Notes. ``"none"`` skips the resampling and
        returns the degenerate interval ``[value, value]`` (for callers that only read the
        value).
    n_resamples : int, default 30
        Random half-samples for the interval, in ``[2, 10000]``. Each costs about half the
        estimate with ``"tree"`` and less with ``"brute"`` (the distances are
        shared); 30 keep the Monte Carlo error of the standard error near 13 %.
    confidence : float, default 0.95
        Level of the two-sided interval, in ``(0, 1)``.
    algorithm : {"auto", "tree", "brute"}, default "auto"
        Neighbour search (identical counts): k-d trees, or the chunked brute force;
        ``"auto"`` takes the tree up to :data:`TREE_MAX_DIM` joint dimensions.

    Notes
    -----
    **Interval: half-sampling, i.e. the delete-d jackknife with d = N / 2.** The ordinary
    bootstrap does not work for a nearest-neighbour estimator: a resample with replacement
    holds exact duplicates, at distance 0, which inflates every neighbour count (and
    ``eps_i = 0`` is undefined). Subsamples without replacement keep the points distinct.
    The estimator is a non-smooth function of the data (integer counts), for which the
    delete-1 jackknife is inconsistent but the delete-d jackknife with ``d`` a fixed
    fraction of ``N`` is consistent (Shao and Wu, "A general theory for jackknife variance
    estimation", Ann. Statist. 17, 1176-1197, 1989; Shao and Tu, *The Jackknife and
    Bootstrap*, 1995, Sec. 2.3). With ``B`` independent random subsets of size
    ``r = floor(N/2)`` (a Monte Carlo approximation of the average over all of them) and
    ``d = N - r``:

    .. math::

        \hat v = \frac{r}{d}\,\frac{1}{B - 1}\sum_{b=1}^{B}
                 \bigl(\hat I_{r,b} - \bar I_r\bigr)^2, \qquad
        \hat I \pm t_{B-1,(1 + c)/2}\,\sqrt{\hat v}.

    (Complementary halves would be cheaper to draw but carry one degree of freedom per
    pair, not two: for a mean, ``I_S + I_{S^c} = 2 I``.) A known closed form was
    considered and rejected: the standard error of the mean of the per-point terms of
    eq. 8 ignores that every point also enters its neighbours' counts and is too small by
    10-35 % (measured on Gaussian pairs, 200 replicates: 95 % intervals covering 78-92 %).

    The factor ``r / d`` is the finite-population correction that Politis and Romano's
    subsampling omits (it assumes ``r / N -> 0``); at ``r = N / 2`` it is 1. The deviations
    are centred at their own mean, so the interval is about the estimator's sampling
    spread at ``N`` and **not** about its bias (the half-samples are more biased than the
    full sample; their mean minus the estimate is reported as
    ``diagnostics["half_sample_shift"]``, a visible sign of bias when it is large against
    the standard error).

    Coverage of the 95 % interval at the defaults, measured on ``correlated_gaussian_pair``
    (200 replicates each; the mean of the estimator is the mean of the 200 values):

    ============  ======  =====  ===============  ============  ============
    dimensions    MI      N      mean SE / sd     covers mean   covers truth
    ============  ======  =====  ===============  ============  ============
    1 + 1         1       500    0.94             0.94          0.93
    1 + 1         1       1000   1.03             0.97          0.96
    1 + 1         1       2000   1.06             0.96          0.95
    1 + 1         0       1000   1.14             0.98          0.98
    1 + 1         3       2000   0.99             0.94          0.905
    3 + 3         1       1000   1.00             0.95          0.385
    5 + 5         1       500    1.01             0.94          0.0
    ============  ======  =====  ===============  ============  ============

    So it covers the mean of the estimator at about the nominal level, and the truth only
    where the bias is small (low dimension, MI well below ``log N``; 3 + 3 dimensions at
    N = 1,000 are already 10 % low). The half-samples need ``floor(N / 2) >= k + 1``; with
    fewer samples the interval is ``[value, value]`` and a warning says so.

    **Warnings** (issued as :class:`estimators.estimate.MIWarning` and kept in
    ``warnings``): fewer than :data:`SMALL_N` samples; an estimate above
    :data:`CEILING_FRACTION` of the ceiling ``psi(N) - psi(k)``; a joint dimension too high
    for ``N`` (see :meth:`_dimension_warning`); heavy tails under ``transform="none"``; a
    negative estimate (added by :func:`estimators.estimate.make_estimate`).

    Examples
    --------
    >>> from pruneleak.estimators.mi import correlated_gaussian_pair
    >>> x, y = correlated_gaussian_pair(2000, 1, 0.5, seed=0)  # I(X; Y) = 0.5 nats
    >>> est = KSG(n_resamples=10).estimate(x, y)
    >>> abs(est.value - 0.5) < 0.05, est.ci_low < est.value < est.ci_high
    (True, True)
    >>> est.diagnostics["algorithm"]
    'tree'
    """

    name = "ksg"

    def __init__(
        self,
        *,
        k: int = 3,
        transform: str = "none",
        standardize: bool = True,
        interval: str = "half-sampling",
        n_resamples: int = 30,
        confidence: float = 0.95,
        algorithm: str = "auto",
    ) -> None:
        func = "KSG"
        self.k = check_int("k", k, func=func, low=1)
        self.transform = check_choice("transform", transform, func=func, choices=TRANSFORMS)
        self.standardize = check_bool("standardize", standardize, func=func)
        self.interval = check_choice("interval", interval, func=func, choices=INTERVALS)
        self.n_resamples = check_int("n_resamples", n_resamples, func=func, low=2, high=10_000)
        self.confidence = check_real(
            "confidence", confidence, func=func, low=0, high=1, low_inclusive=False,
            high_inclusive=False,
        )  # fmt: skip
        self.algorithm = check_choice("algorithm", algorithm, func=func, choices=ALGORITHMS)

    def __repr__(self) -> str:
        return (
            f"KSG(k={self.k}, transform={self.transform!r}, standardize={self.standardize}, "
            f"interval={self.interval!r}, n_resamples={self.n_resamples}, "
            f"confidence={self.confidence}, algorithm={self.algorithm!r})"
        )

    def _prepare(self, x, y, func: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """Validated, transformed and rescaled samples, and the heavy-tail warnings."""
        x, y = paired_samples(x, y, func=func)
        n = len(x)
        if self.k > n - 1:
            raise ValueError(
                f"The 'k' parameter of {func} must be in [1, N - 1] = [1, {n - 1}] for N = {n} "
                f"samples (KSG needs at least k + 1 = {self.k + 1} samples). Got {self.k} "
                "instead."
            )
        found = []
        if self.transform == "none":
            found = heavy_tail_warnings(self.name, {"x": x, "y": y})
        x = transform_samples(x, self.transform, func=func)
        y = transform_samples(y, self.transform, func=func)
        if self.standardize:
            x, y = _standardize(x), _standardize(y)
        else:  # one common factor: the max-norm distances keep their order, nothing overflows
            joint = _by_max_abs(np.hstack([x, y]), axis=None)
            x, y = joint[:, : x.shape[1]], joint[:, x.shape[1] :]
        return x, y, found

    def _dimension_warning(self, n: int, dim: int) -> str | None:
        r"""A warning when the joint dimension ``dim`` is too high for ``n`` samples.

        A k-NN estimator resolves the joint density on the scale of the k-th neighbour
        distance, which shrinks like ``(k / N)^{1 / dim}``; when ``N^{1 / dim}`` is small
        the local-uniformity assumption of Kraskov et al. fails and the estimate is biased
        towards 0. The threshold :data:`RESOLUTION` = 3 is where the measured bias of a
        1-nat Gaussian pair (``correlated_gaussian_pair``, mean of 1-3 seeds) reaches
        about -10 %: at N = 1,000 -7 % for 3 + 3 dimensions (``N^{1/6} = 3.2``) and -21 %
        for 4 + 4 (2.4); at N = 5,000 -7 % for 3 + 3 (4.1), -12 % for 4 + 4 (2.9), -22 %
        for 5 + 5, -78 % for 25 + 25 and -93 % for 50 + 50.
        """
        resolution = n ** (1.0 / dim)
        if resolution >= RESOLUTION:
            return None
        return (
            f"{self.name}: {dim} joint dimensions (dim_x + dim_y) for N = {n} samples "
            f"(N^(1/dim) = {resolution:.2f} < {RESOLUTION:g}): too few samples per dimension "
            "for the neighbour counts, and KSG is biased towards 0 (measured on 1-nat "
            "Gaussian pairs at N = 5,000: -12 % at 4 + 4 dimensions, -78 % at 25 + 25, "
            "-93 % at 50 + 50). Treat the value as a lower estimate; reduce the dimension or "
            "use a parametric or neural estimator."
        )

    def estimate(self, x, y, *, seed: int = 0) -> MIEstimate:
        """Estimate ``I(X; Y)`` in nats from paired samples ``x`` (N, ...) and ``y`` (N, ...).

        Axes after the first are flattened into features. ``seed`` draws the half-sample
        splits of the interval (the value does not depend on it).

        Raises
        ------
        ValueError
            NaN / inf, different sample counts, ``N < k + 1``, constant ``x`` or ``y``, or
            duplicated joint samples (``eps_i = 0``; add a tiny jitter to discrete data).
            The duplicates are those of the rescaled data: points more than ~1e300 times
            smaller than an outlier of the same variable underflow to one value.
        """
        func = "KSG.estimate"
        seed = check_seed(seed, func=func)
        x, y, found = self._prepare(x, y, func)
        n, dim_x, dim_y = len(x), x.shape[1], y.shape[1]
        k = self.k
        algorithm = self.algorithm
        if algorithm == "auto":
            algorithm = "tree" if dim_x + dim_y <= TREE_MAX_DIM else "brute"
        half = n // 2
        resample = self.interval == "half-sampling" and half >= k + 1
        subsets = []
        if resample:
            rng = np.random.default_rng(seed)
            subsets = [np.sort(rng.permutation(n)[:half]) for _ in range(self.n_resamples)]
        counts = _neighbour_counts(x, y, k, algorithm, subsets)
        eps, n_x, n_y = counts[0]
        if np.any(eps == 0):
            raise ValueError(
                f"The 'x' and 'y' parameters of {func} must be continuous: "
                f"{int(np.sum(eps == 0))} joint samples (x, y) have k={k} or more exact "
                "duplicates after rescaling (discrete data, or points so much smaller than an "
                "outlier that they round together); add a tiny jitter."
            )
        value = _ksg_value(k, n_x, n_y)
        ceiling = float(digamma(n) - digamma(k))
        diagnostics = {
            "k": k,
            "algorithm": algorithm,
            "dim_x": dim_x,
            "dim_y": dim_y,
            "transform": self.transform,
            "standardize": int(self.standardize),
            "ceiling": ceiling,
            "mean_n_x": float(np.mean(n_x)),
            "mean_n_y": float(np.mean(n_y)),
        }
        if resample:
            halves = np.array([_ksg_value(k, c[1], c[2]) for c in counts[1:]])
            variance = half / (n - half) * float(np.var(halves, ddof=1))
            se = math.sqrt(variance)
            # Student's t with B - 1 degrees of freedom: the Monte Carlo error of se over B
            # random half-samples (t_29 = 2.05 against z = 1.96 at 95 %)
            t = float(stdtrit(len(halves) - 1, 0.5 + self.confidence / 2.0))
            interval = (value - t * se, value + t * se)
            diagnostics |= {
                "interval": (
                    f"half-sampling (delete-d jackknife, d = N - floor(N/2)), "
                    f"{len(halves)} half-samples, Student t; sampling spread, not the bias"
                ),
                "n_resamples": self.n_resamples,
                "standard_error": se,
                "half_sample_shift": float(np.mean(halves)) - value,
            }
        else:
            interval = (value, value)
            why = "interval='none'" if self.interval == "none" else f"floor(N/2) < k + 1 = {k + 1}"
            diagnostics["interval"] = f"none ({why}): ci_low = ci_high = value"
            if self.interval != "none":
                found.append(
                    f"{self.name}: N = {n} samples are too few for the half-sampling interval "
                    f"(floor(N/2) = {half} < k + 1 = {k + 1}); the interval is the point "
                    "[value, value] and says nothing about the error."
                )
        if n < SMALL_N:
            found.append(
                f"{self.name}: only N = {n} samples (fewer than {SMALL_N}): KSG's bias is "
                "large at this size, towards 0 for dependent variables (e.g. 0.53 nats for a "
                "true 1.0 at N = 10), and the estimate cannot exceed psi(N) - psi(k) = "
                f"{ceiling:.3g} nats."
            )
        elif value > CEILING_FRACTION * ceiling:
            found.append(
                f"{self.name}: the estimate {value:.3g} nats is above {CEILING_FRACTION:g} of "
                f"the ceiling psi(N) - psi(k) = {ceiling:.3g} nats that KSG cannot exceed at "
                f"N = {n}: it is saturated and biased towards 0 (k-NN estimators need a number "
                "of samples exponential in the MI); the true MI may be much larger."
            )
        dim_warning = self._dimension_warning(n, dim_x + dim_y)
        if dim_warning is not None:
            found.append(dim_warning)
        return make_estimate(
            self.name,
            value,
            interval,
            confidence=self.confidence,
            n_samples=n,
            diagnostics=diagnostics,
            warnings_found=found,
        )
