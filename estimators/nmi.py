r"""Normalised mutual information between an image and its reconstruction (PriPrune's metric).

PriPrune (Chu et al., arXiv 2310.19958, Section "Experimental Setup", footnote on
"Privacy Metrics") scores a reconstruction by the discrete mutual information between the
flattened original ``U`` and the flattened reconstruction ``V``, each pixel treated as one
sample of a pair of discrete labels:

.. math::

    I(U; V) = \sum_{i}\sum_{j} \frac{|U_i \cap V_j|}{N}
              \log\frac{N\,|U_i \cap V_j|}{|U_i|\,|V_j|},
    \qquad
    \mathrm{NMI}(U, V) = \frac{I(U; V)}{\operatorname{mean}(H(U), H(V))},

where ``U_i`` is the set of pixels whose original value falls in level ``i`` and ``N`` is
the number of pixels. The paper does not say how continuous pixel values become labels;
here both images are quantised to ``levels`` equal-width bins of ``value_range`` (default
256 levels on [0, 1], which maps 8-bit images ``k / 255`` back to ``k``) and the mean is
the arithmetic mean. Values outside ``value_range`` are refused, not clipped: clipping a
0-255 image to [0, 1] puts almost every pixel in the top level, and two independent such
images then score an NMI near 1 or 0 that says nothing about leakage. With these choices
:func:`nmi` equals scikit-learn's ``normalized_mutual_info_score``
(``average_method="arithmetic"``) on the quantised values.

The plug-in MI is biased upwards for a finite number of pixels: an original scored against
an *independent* image gets an NMI well above 0, the more so the fewer the pixels and the
more the occupied levels. Report :func:`nmi_chance_level` (or the permutation null of
:func:`nmi_permutation_null`, or the chance-corrected :func:`adjusted_nmi`) beside every NMI
so that a leak can be told apart from the metric's floor.

All information quantities are in nats; NMI itself is unitless, in [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from pruneleak.bounds.validation import check_choice, check_int, check_real
from pruneleak.estimators._arrays import check_seed, check_values_in, pair_to_numpy, to_numpy

DEFAULT_LEVELS = 256
#: Most levels: codes are computed in float64, which holds every integer up to 2**53.
MAX_LEVELS = 2**53
AVERAGE_METHODS = ("arithmetic", "geometric", "min", "max")

__all__ = [
    "AVERAGE_METHODS",
    "DEFAULT_LEVELS",
    "MAX_LEVELS",
    "PermutationNull",
    "adjusted_nmi",
    "nmi",
    "nmi_chance_level",
    "nmi_permutation_null",
    "quantize",
    "quantized_mutual_information",
]


def check_quantization(levels, value_range, *, func: str) -> tuple[int, float, float]:
    """Validate ``levels`` (int in [2, 2**53]) and ``value_range`` (finite ``low < high``
    whose width ``high - low`` is a finite float); return them as numbers.

    Examples
    --------
    >>> check_quantization(4, (0, 2), func="f")
    (4, 0.0, 2.0)
    """
    levels = check_int("levels", levels, func=func, low=2, high=MAX_LEVELS)
    try:
        low, high = value_range
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"The 'value_range' parameter of {func} must be a pair (low, high). "
            f"Got {value_range!r} instead."
        ) from err
    low = check_real("value_range[0]", low, func=func)
    high = check_real("value_range[1]", high, func=func, low=low, low_inclusive=False)
    if not np.isfinite(high - low):
        raise ValueError(
            f"The 'value_range' parameter of {func} must have a width high - low that is a "
            f"finite float (at most {np.finfo(float).max:g}). Got {value_range!r} instead."
        )
    return levels, low, high


def _quantize_array(x: np.ndarray, levels: int, low: float, high: float) -> np.ndarray:
    """Codes of values already checked to lie in [low, high]; ``high`` joins the last bin."""
    codes = np.floor((x - low) / (high - low) * levels)
    return np.minimum(codes, levels - 1).astype(np.int64)


def _codes(name: str, x: np.ndarray, levels: int, low: float, high: float, func: str):
    check_values_in(name, x, low, high, func=func, range_name="value_range")
    return _quantize_array(x.ravel(), levels, low, high)


def quantize(x, levels: int = DEFAULT_LEVELS, value_range=(0.0, 1.0)) -> np.ndarray:
    """Quantise values to ``levels`` equal-width bins of ``value_range``; return int codes.

    Code ``k`` holds the values in ``[low + k w, low + (k + 1) w)`` with
    ``w = (high - low) / levels``; the top edge ``high`` belongs to the last bin. Values
    outside ``value_range`` raise ValueError naming their min and max (clip a
    reconstruction that overshoots yourself if that is what you mean).

    Parameters
    ----------
    x : array-like or torch.Tensor
        Real values of any shape inside ``value_range``; NaN or inf raise ValueError.
    levels : int, default 256
        Number of bins, in [2, 2**53].
    value_range : (float, float), default (0.0, 1.0)
        The interval ``[low, high]`` that is split into bins; ``high - low`` must be a
        finite float.

    Returns
    -------
    ndarray of int64 with the shape of ``x`` and values in ``{0, ..., levels - 1}``.

    Examples
    --------
    >>> quantize([0.0, 0.3, 0.5, 1.0], levels=4).tolist()
    [0, 1, 2, 3]
    >>> quantize([0, 128, 255])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ... must have values in value_range=[0, 1]. Got values in [0, 255] instead.
    """
    levels, low, high = check_quantization(levels, value_range, func="quantize")
    arr = to_numpy("x", x, func="quantize")
    return _codes("x", arr, levels, low, high, "quantize").reshape(arr.shape)


def _check_levels_for_pixels(levels: int, pixels: int, *, func: str) -> None:
    """Raise ValueError when ``levels`` exceeds ``max(DEFAULT_LEVELS, pixels)``.

    With more levels than pixels, continuous values fall into a bin of their own, each
    image's codes are all distinct, and the NMI of any two such images, independent ones
    included, is 1 (a plug-in MI of ``log N`` over entropies of ``log N``): the score says
    nothing. Up to :data:`DEFAULT_LEVELS` (256, which resolves 8-bit images exactly) is
    always allowed; beyond it at most one level per pixel.
    """
    limit = max(DEFAULT_LEVELS, pixels)
    if levels > limit:
        raise ValueError(
            f"The 'levels' parameter of {func} must be in [2, {limit}] for images of "
            f"{pixels} pixels (at most max({DEFAULT_LEVELS}, pixels): with more levels than "
            f"pixels every pixel is its own bin and NMI is 1 for any two images). "
            f"Got {levels} instead."
        )


def _quantized_pair(original, reconstruction, levels, value_range, *, func: str):
    levels, low, high = check_quantization(levels, value_range, func=func)
    u, v = pair_to_numpy(("original", original), ("reconstruction", reconstruction), func=func)
    _check_levels_for_pixels(levels, u.size, func=func)
    return (
        _codes("original", u, levels, low, high, func),
        _codes("reconstruction", v, levels, low, high, func),
    )


class _Contingency:
    """The occupied cells of the contingency table of two code vectors.

    Only levels that occur are kept (``np.unique``), so memory and time depend on the
    number of pixels, not on ``levels`` (a dense ``levels x levels`` table would need
    ``8 levels**2`` bytes). ``rows``/``cols`` are the marginal counts of the occupied
    levels, ``counts[c]`` the count of cell ``(i[c], j[c])``.
    """

    def __init__(self, u: np.ndarray, v: np.ndarray):
        _, u_index = np.unique(u, return_inverse=True)
        _, v_index = np.unique(v, return_inverse=True)
        self.rows, self.cols = np.bincount(u_index), np.bincount(v_index)
        cells, self.counts = np.unique(u_index * len(self.cols) + v_index, return_counts=True)
        self.i, self.j = np.divmod(cells, len(self.cols))


def _entropy(counts: np.ndarray) -> float:
    n = counts.sum()
    return float(-np.sum(counts / n * (np.log(counts) - np.log(n))))


def _mi_from_contingency(table: _Contingency) -> float:
    n = table.rows.sum()
    nij = table.counts.astype(float)
    terms = (
        nij
        / n
        * (np.log(nij) + np.log(n) - np.log(table.rows[table.i]) - np.log(table.cols[table.j]))
    )
    return max(float(terms.sum()), 0.0)  # rounding can leave -1e-17 for independent labels


def _generalized_mean(h_u: float, h_v: float, average: str) -> float:
    if average == "arithmetic":
        return (h_u + h_v) / 2.0
    if average == "geometric":
        return float(np.sqrt(h_u * h_v))
    return min(h_u, h_v) if average == "min" else max(h_u, h_v)


def _nmi_codes(u: np.ndarray, v: np.ndarray, average: str) -> float:
    table = _Contingency(u, v)
    if len(table.rows) == len(table.cols) == 1:
        return 1.0  # both constant: identical one-label partitions (scikit-learn's convention)
    mi = _mi_from_contingency(table)
    if mi == 0.0:
        return 0.0
    # mi > 0 needs two occupied levels on both sides, so both entropies are > 0
    nmi = mi / _generalized_mean(_entropy(table.rows), _entropy(table.cols), average)
    return min(nmi, 1.0)  # I <= min(H(U), H(V)) <= mean: only rounding can pass 1


def quantized_mutual_information(
    original, reconstruction, *, levels: int = DEFAULT_LEVELS, value_range=(0.0, 1.0)
) -> float:
    """Plug-in MI ``I(U; V)`` in nats between the quantised, flattened arrays (PriPrune footnote).

    Equals scikit-learn's ``mutual_info_score`` on ``quantize(original).ravel()`` and
    ``quantize(reconstruction).ravel()``. Domain: two real arrays of the same shape with
    values in ``value_range``, ``levels`` as in :func:`nmi` (else ValueError); the result
    is finite, in ``[0, log(levels)]``.

    Examples
    --------
    >>> x = [0.0, 0.0, 1.0, 1.0]
    >>> mi = quantized_mutual_information(x, x, levels=2)
    >>> abs(mi - float(np.log(2))) < 1e-12  # I(U; U) = H(U) = log 2 nats
    True
    """
    u, v = _quantized_pair(
        original, reconstruction, levels, value_range, func="quantized_mutual_information"
    )
    return _mi_from_contingency(_Contingency(u, v))


def nmi(
    original,
    reconstruction,
    *,
    levels: int = DEFAULT_LEVELS,
    value_range=(0.0, 1.0),
    average: str = "arithmetic",
) -> float:
    """PriPrune's normalised mutual information between an original and its reconstruction.

    ``NMI = I(U; V) / mean(H(U), H(V))`` on the flattened arrays quantised by
    :func:`quantize` (see the module docstring for the formula and the quantisation, which
    the paper leaves open). The default arithmetic mean is PriPrune's ``mean``; ``average``
    also accepts ``"geometric"``, ``"min"`` and ``"max"`` as in scikit-learn. Two constant
    images give 1.0 and one constant image gives 0.0 (scikit-learn's conventions).

    Parameters
    ----------
    original, reconstruction : array-like or torch.Tensor of the same shape
        One image (or any array) each, with every value in ``value_range``; a batch is
        scored as one long vector, so score the images of a batch one by one with
        :func:`estimators.image.score_reconstruction`.
    levels : int, default 256
        Number of quantisation levels, in [2, max(256, N)] for images of N pixels: more
        would put every pixel in a bin of its own, where NMI is 1 for any two images.
    value_range : (float, float), default (0.0, 1.0)
        ``(low, high)`` of the pixel values, e.g. ``(0, 255)`` for 8-bit images. Values
        outside it raise ValueError (they are not clipped).
    average : {"arithmetic", "geometric", "min", "max"}, default "arithmetic"

    Returns
    -------
    float in [0, 1]; higher means more leakage.

    References
    ----------
    Chu et al., PriPrune, arXiv 2310.19958, footnote 1 ("Privacy Metrics").

    Examples
    --------
    >>> x = np.linspace(0, 1, 64).reshape(8, 8)
    >>> nmi(x, x)
    1.0
    """
    check_choice("average", average, func="nmi", choices=AVERAGE_METHODS)
    u, v = _quantized_pair(original, reconstruction, levels, value_range, func="nmi")
    return float(_nmi_codes(u, v, average))


def _expected_mi(rows: np.ndarray, cols: np.ndarray) -> float:
    """E[I] in nats under the permutation (hypergeometric) model, Vinh et al. (2010) eq. 24a."""
    n = int(rows.sum())
    a_vals, a_mult = np.unique(rows[rows > 0], return_counts=True)
    b_vals, b_mult = np.unique(cols[cols > 0], return_counts=True)
    b = b_vals.astype(float)[:, None]
    log_n = np.log(n)
    total = 0.0
    for a, a_count in zip(a_vals.astype(float), a_mult, strict=True):
        nij = np.arange(1.0, min(a, b_vals.max()) + 1.0)[None, :]
        valid = (nij <= np.minimum(a, b)) & (nij >= a + b - n)
        nij_safe = np.where(valid, nij, 1.0)
        log_prob = (
            gammaln(a + 1)
            + gammaln(b + 1)
            + gammaln(n - a + 1)
            + gammaln(n - b + 1)
            - gammaln(n + 1)
            - gammaln(nij_safe + 1)
            - gammaln(a - nij_safe + 1)
            - gammaln(np.maximum(b - nij_safe, 0.0) + 1)
            - gammaln(np.maximum(n - a - b + nij_safe, 0.0) + 1)
        )
        term = nij / n * (np.log(nij) + log_n - np.log(a) - np.log(b)) * np.exp(log_prob)
        total += a_count * float(np.sum(b_mult[:, None] * np.where(valid, term, 0.0)))
    return total


def adjusted_nmi(
    original,
    reconstruction,
    *,
    levels: int = DEFAULT_LEVELS,
    value_range=(0.0, 1.0),
    average: str = "arithmetic",
) -> float:
    r"""Chance-corrected NMI (adjusted mutual information) of the quantised, flattened arrays.

    .. math::

        \mathrm{AMI} = \frac{I(U; V) - E[I]}{\operatorname{mean}(H(U), H(V)) - E[I]},

    where ``E[I]`` is the expected MI when the pixel pairing is a uniformly random
    permutation with both histograms fixed (Vinh, Epps and Bailey, JMLR 2010, eq. 24a). It
    is about 0 for an unrelated reconstruction, 1 for a perfect one, and can be negative.
    Equals scikit-learn's ``adjusted_mutual_info_score`` on the quantised values. Domain and
    parameters as in :func:`nmi`.

    Returns
    -------
    float, finite, at most 1.

    Examples
    --------
    >>> x = np.linspace(0, 1, 64).reshape(8, 8)
    >>> round(adjusted_nmi(x, x), 12)
    1.0
    """
    func = "adjusted_nmi"
    check_choice("average", average, func=func, choices=AVERAGE_METHODS)
    u, v = _quantized_pair(original, reconstruction, levels, value_range, func=func)
    table = _Contingency(u, v)
    if len(table.rows) == len(table.cols) == 1:
        return 1.0
    mi = _mi_from_contingency(table)
    emi = _expected_mi(table.rows, table.cols)
    denominator = _generalized_mean(_entropy(table.rows), _entropy(table.cols), average) - emi
    eps = np.finfo(np.float64).eps
    # floating point can put E[I] just above the normaliser; keep the sign, avoid 0 / 0
    denominator = min(denominator, -eps) if denominator < 0 else max(denominator, eps)
    return float((mi - emi) / denominator)


def _check_draws(name: str, value, func: str) -> int:
    return check_int(name, value, func=func, low=1)


def nmi_chance_level(
    original,
    *,
    levels: int = DEFAULT_LEVELS,
    value_range=(0.0, 1.0),
    n_draws: int = 16,
    seed: int = 0,
) -> float:
    """NMI of ``original`` against independent uniform-noise images: the metric's floor.

    The "independent random image" is i.i.d. ``Uniform(value_range)`` noise of the same
    shape as ``original``, quantised like a reconstruction (drawn directly as i.i.d. uniform
    codes ``floor(levels U)``, ``U ~ Uniform[0, 1)``, which is the same law); the result is
    the mean :func:`nmi` over ``n_draws`` such images. ``original`` must have its values
    in ``value_range``; ``seed`` is an int in [0, 2**63 - 1]. Because the plug-in MI is
    biased upwards (roughly ``(L_U - 1)(L_V - 1) / (2N)`` nats for ``L`` occupied levels
    and ``N`` pixels), this floor is far above 0 for small images with many levels. For a
    floor that keeps the reconstruction's own histogram, use :func:`nmi_permutation_null`.

    Returns
    -------
    float in [0, 1].

    Examples
    --------
    >>> x = np.linspace(0, 1, 64).reshape(8, 8)
    >>> 0.0 < nmi_chance_level(x, n_draws=4) < 1.0
    True
    """
    func = "nmi_chance_level"
    levels, low, high = check_quantization(levels, value_range, func=func)
    n_draws = _check_draws("n_draws", n_draws, func)
    rng = np.random.default_rng(check_seed(seed, func=func))
    x = to_numpy("original", original, func=func)
    _check_levels_for_pixels(levels, x.size, func=func)
    u = _codes("original", x, levels, low, high, func)
    scores = [
        _nmi_codes(u, _quantize_array(rng.random(u.size), levels, 0.0, 1.0), "arithmetic")
        for _ in range(n_draws)
    ]
    return float(np.mean(scores))


@dataclass(frozen=True)
class PermutationNull:
    """NMI of a reconstruction beside its permutation null distribution.

    Attributes
    ----------
    observed : float
        :func:`nmi` of the original and the reconstruction.
    null_mean, null_std : float
        Mean and standard deviation of the NMI after randomly permuting the reconstruction's
        pixels (same histogram, pairing destroyed).
    p_value : float
        ``(1 + #{null >= observed}) / (1 + n_permutations)``: the probability of an NMI at
        least as large as the observed one if the reconstruction were unrelated.
    """

    observed: float
    null_mean: float
    null_std: float
    p_value: float


def nmi_permutation_null(
    original,
    reconstruction,
    *,
    levels: int = DEFAULT_LEVELS,
    value_range=(0.0, 1.0),
    n_permutations: int = 100,
    seed: int = 0,
) -> PermutationNull:
    """Permutation test of :func:`nmi`: is the reconstruction more than the metric's floor?

    Each permutation shuffles the reconstruction's pixels, which keeps both histograms (so
    both entropies) and destroys any pixel-wise dependence; the NMI of the shuffled pairs is
    the chance level for this particular pair of histograms. Domain as in :func:`nmi`;
    ``n_permutations >= 1``, ``seed`` an int in [0, 2**63 - 1].

    Examples
    --------
    >>> x = np.tile([0.0, 1.0], 32)  # two levels: a shuffle almost never pairs them all
    >>> nmi_permutation_null(x, x, n_permutations=19).p_value  # (1 + 0) / (1 + 19)
    0.05
    """
    func = "nmi_permutation_null"
    n_permutations = _check_draws("n_permutations", n_permutations, func)
    rng = np.random.default_rng(check_seed(seed, func=func))
    u, v = _quantized_pair(original, reconstruction, levels, value_range, func=func)
    observed = _nmi_codes(u, v, "arithmetic")
    null = np.array(
        [_nmi_codes(u, rng.permutation(v), "arithmetic") for _ in range(n_permutations)]
    )
    return PermutationNull(
        observed=float(observed),
        null_mean=float(null.mean()),
        null_std=float(null.std(ddof=1)) if n_permutations > 1 else 0.0,
        p_value=float((1 + np.sum(null >= observed)) / (1 + n_permutations)),
    )
