"""Reconstruction metrics for images: PSNR, SSIM, pHash similarity, inference accuracy.

The metrics of Huang et al. (arXiv 2003.01876, Section 4.2) and PriPrune (arXiv
2310.19958, "Privacy Metrics"), plus the optimal matching of a batch of reconstructions to
the originals that every batch score needs (a gradient inversion attack returns the batch
in an arbitrary order).

Layout convention (torch's): a single image is ``(H, W)`` or ``(C, H, W)``; a batch is
``(B, H, W)`` or ``(B, C, H, W)``, and functions with ``per_image=True`` (or taking
``originals`` / ``reconstructions``) read axis 0 as the image index. Inputs may be numpy
arrays or torch tensors on any device; they are moved to the CPU once (metrics are not a
hot loop). NaN / inf and mismatched shapes raise ValueError.

Value range. PSNR and SSIM take ``data_range``, the width ``R`` of the pixels' value range
(1.0 for images on [0, 1], 255 for 8-bit images), as scikit-image does; data spread over
more than ``R`` (``max - min`` over both images) raise ValueError naming the observed
min and max, so a 0-255 image scored with the default ``R = 1`` is refused rather than
scored on the wrong scale. :func:`score_reconstruction` takes NMI's ``value_range`` and
refuses values outside it. The pHash and the matching are invariant to a positive scaling
of all values and need no range.
"""

from __future__ import annotations

import numpy as np
import torch
from scipy.fft import dctn
from scipy.ndimage import uniform_filter, zoom
from scipy.optimize import linear_sum_assignment

from pruneleak.bounds.validation import check_bool, check_choice, check_int, check_real
from pruneleak.estimators._arrays import check_seed, check_values_in, pair_to_numpy, to_numpy
from pruneleak.estimators.nmi import DEFAULT_LEVELS, check_quantization, nmi, nmi_chance_level

__all__ = [
    "MATCH_SCORES",
    "METRICS",
    "inference_accuracy",
    "match_reconstructions",
    "phash",
    "phash_similarity",
    "psnr",
    "score_reconstruction",
    "ssim",
]

MATCH_SCORES = ("mse", "psnr")
_PHASH_SIZE = 32  # Zauner (2010), Section 5.2: image resized to 32x32 before the DCT
_PHASH_BLOCK = 8  # 8x8 low-frequency DCT coefficients -> 64 bits
_PHASH_MEAN_FILTER = 7  # 7x7 mean filter before resizing, as in the pHash library


_NAMES = ("original", "reconstruction")
_BATCH_NAMES = ("originals", "reconstructions")


def _pair(original, reconstruction, *, func: str, per_image: bool, names=_NAMES):
    """Both arrays as float64 of one shape; with ``per_image``, axis 0 must be a batch axis."""
    a, b = pair_to_numpy((names[0], original), (names[1], reconstruction), func=func)
    if per_image and a.ndim < 2:
        raise ValueError(
            f"With per_image=True, the inputs of {func} need an image axis 0 and at least one "
            f"more axis. Got shape {a.shape} instead."
        )
    return a, b


def _check_span(a: np.ndarray, b: np.ndarray, data_range: float, *, func: str, names=_NAMES):
    """Refuse data spread over more than ``data_range`` (``max - min`` over both arrays)."""
    low = min(float(a.min()), float(b.min()))
    high = max(float(a.max()), float(b.max()))
    if high - low > data_range:  # Python floats: an overflowing difference is inf, refused
        raise ValueError(
            f"The '{names[0]}' and '{names[1]}' parameters of {func} must take values in a "
            f"range of width data_range={data_range:g} (max - min over both). Got values in "
            f"[{low:g}, {high:g}] instead; pass the data_range of the images (255 for 8-bit)."
        )
    return low, high


def _as_result(values: np.ndarray, per_image: bool):
    return np.asarray(values, dtype=float) if per_image else float(values[0])


def _log10_mse(diff: np.ndarray) -> np.ndarray:
    """``log10`` of the mean square of each row of ``diff`` (m, n); ``-inf`` for a zero row.

    With ``M = max |d|`` of a row, ``MSE = M^2 mean((d / M)^2)`` and the mean lies in
    ``[1/n, 1]``, so no square overflows or underflows however large or small the errors.
    """
    peak = np.abs(diff).max(axis=1)
    scale = np.where(peak > 0, peak, 1.0)
    mean_square = np.mean((diff / scale[:, None]) ** 2, axis=1)
    with np.errstate(divide="ignore"):
        return np.where(peak > 0, 2.0 * np.log10(scale) + np.log10(mean_square), -np.inf)


def _rows(a: np.ndarray, per_image: bool) -> np.ndarray:
    """One row per image: ``(B, pixels)`` with ``per_image``, else the whole array as one row."""
    return a.reshape(len(a), -1) if per_image else a.reshape(1, -1)


def psnr(original, reconstruction, *, data_range: float = 1.0, per_image: bool = False):
    r"""Peak signal-to-noise ratio in decibels.

    .. math:: \mathrm{PSNR} = 10 \log_{10} \frac{R^2}{\mathrm{MSE}(x, \hat x)},

    with ``R = data_range``; an exact reconstruction gives ``inf`` and any other is finite
    (evaluated in log space, see :func:`_log10_mse`). Matches
    ``skimage.metrics.peak_signal_noise_ratio(original, reconstruction, data_range=R)``.

    Parameters
    ----------
    original, reconstruction : array-like or torch.Tensor of the same shape
        Finite real values spread over at most ``data_range`` (``max - min`` over both).
    data_range : float, default 1.0
        Width of the value range, a finite float > 0 (1.0 for images on [0, 1], 255 for
        8-bit images).
    per_image : bool, default False
        If True, axis 0 indexes images and an ndarray of one PSNR per image is returned;
        otherwise the whole array is one image and a float is returned.

    Examples
    --------
    >>> round(psnr(np.zeros(4), np.full(4, 0.1)), 9)  # 10 log10(1 / 0.01)
    20.0
    """
    func = "psnr"
    data_range = check_real("data_range", data_range, func=func, low=0.0, low_inclusive=False)
    per_image = check_bool("per_image", per_image, func=func)
    a, b = _pair(original, reconstruction, func=func, per_image=per_image)
    _check_span(a, b, data_range, func=func)
    # |a - b| <= max - min <= data_range: the difference is finite
    psnr_db = 20.0 * np.log10(data_range) - 10.0 * _log10_mse(_rows(a - b, per_image))
    return _as_result(psnr_db, per_image)


def _ssim_maps(a: np.ndarray, b: np.ndarray, data_range: float, win_size: int) -> np.ndarray:
    """Local SSIM on the last two axes (uniform window, sample covariance), skimage's default.

    skimage evaluates ``(A1 A2) / (B1 B2)``; here the same product is split into the
    luminance term ``l = A1 / B1`` (means and ``C1 = (K1 R)^2``) and the contrast-structure
    term ``cs = A2 / B2`` ((co)variances and ``C2 = (K2 R)^2``), and each is evaluated on
    rescaled data so that no square overflows and no ratio becomes 0 / 0: ``l`` is
    invariant to scaling ``a``, ``b`` and ``R`` together, so it uses values divided by
    ``s = max(|a|, |b|, R)`` (all <= 1); ``cs`` is also invariant to a common shift, so it
    uses values centred at the data's midpoint and divided by ``R`` (all <= 1/2 in size,
    since the data span at most ``R``). ``l``'s denominator stays away from 0: if
    ``s <= 2R`` then ``C1 / s^2 >= (K1 / 2)^2``, and if ``s > 2R`` every value has size
    ``>= s - R > s / 2``.
    """
    size = (1,) * (a.ndim - 2) + (win_size, win_size)
    n_window = win_size**2
    cov_norm = n_window / (n_window - 1)
    k1, k2 = 0.01, 0.03  # K1, K2 of Wang et al. 2004

    scale = max(float(np.abs(a).max()), float(np.abs(b).max()), data_range)
    mu_a, mu_b = uniform_filter(a / scale, size), uniform_filter(b / scale, size)
    c1 = (k1 * (data_range / scale)) ** 2
    luminance = (2 * mu_a * mu_b + c1) / (mu_a**2 + mu_b**2 + c1)

    mid = float(min(a.min(), b.min())) / 2 + float(max(a.max(), b.max())) / 2
    a, b = (a - mid) / data_range, (b - mid) / data_range
    mu_a, mu_b = uniform_filter(a, size), uniform_filter(b, size)
    var_a = cov_norm * (uniform_filter(a * a, size) - mu_a * mu_a)
    var_b = cov_norm * (uniform_filter(b * b, size) - mu_b * mu_b)
    cov_ab = cov_norm * (uniform_filter(a * b, size) - mu_a * mu_b)
    c2 = k2**2
    local = luminance * (2 * cov_ab + c2) / (var_a + var_b + c2)
    pad = (win_size - 1) // 2
    return local[..., pad : local.shape[-2] - pad, pad : local.shape[-1] - pad]


def ssim(
    original,
    reconstruction,
    *,
    data_range: float = 1.0,
    win_size: int = 7,
    normalized: bool = True,
    per_image: bool = False,
):
    r"""Structural similarity (Wang et al. 2004), normalised to [0, 1] as in Huang et al.

    SSIM is computed as ``skimage.metrics.structural_similarity`` does by default: a
    ``win_size x win_size`` uniform window, sample (co)variances, ``K1 = 0.01``,
    ``K2 = 0.03``, the mean of the local SSIM map after cropping ``(win_size - 1) / 2``
    pixels at each border, and for ``(C, H, W)`` images the mean over channels
    (skimage's ``channel_axis=0``). Huang et al. (Section 4.2) "normalize SSIM to take value
    range [0, 1]" without saying how; the affine map

    .. math:: \mathrm{SSIM}_{[0,1]} = (\mathrm{SSIM} + 1) / 2

    is used here (``normalized=False`` returns the raw SSIM in [-1, 1]).

    Parameters
    ----------
    original, reconstruction : array-like or torch.Tensor of the same shape
        ``(H, W)`` or ``(C, H, W)``; with ``per_image=True`` a batch ``(B, H, W)`` or
        ``(B, C, H, W)``. Both spatial sides must be at least ``win_size``. Finite real
        values spread over at most ``data_range`` (``max - min`` over both).
    data_range : float, default 1.0
        Width of the value range, a finite float > 0 (255 for 8-bit images).
    win_size : int, default 7
        Odd window side, at least 3.
    normalized : bool, default True
    per_image : bool, default False
        If True, return an ndarray with one value per image of axis 0.

    Returns
    -------
    float (or ndarray with ``per_image``), finite: in [0, 1] if ``normalized``, else in
    [-1, 1].

    Examples
    --------
    >>> x = np.linspace(0, 1, 64).reshape(8, 8)
    >>> round(ssim(x, x), 12)
    1.0
    """
    func = "ssim"
    data_range = check_real("data_range", data_range, func=func, low=0.0, low_inclusive=False)
    win_size = check_int("win_size", win_size, func=func, low=3)
    if win_size % 2 == 0:
        raise ValueError(f"The 'win_size' parameter of {func} must be odd. Got {win_size} instead.")
    normalized = check_bool("normalized", normalized, func=func)
    per_image = check_bool("per_image", per_image, func=func)
    a, b = _pair(original, reconstruction, func=func, per_image=per_image)
    # a batch needs an image axis in front of (H, W) or (C, H, W): (H, W) alone is not one
    image_ndims = (3, 4) if per_image else (2, 3)
    if a.ndim not in image_ndims or min(a.shape[-2:]) < win_size:
        raise ValueError(
            f"The inputs of {func} must be images ({'B, ' if per_image else ''}[C,] H, W) "
            f"with H, W >= win_size={win_size}. Got shape {a.shape} instead."
        )
    _check_span(a, b, data_range, func=func)
    local = _rows(_ssim_maps(a, b, data_range, win_size), per_image)
    value = local.mean(axis=1)
    if normalized:
        value = (value + 1.0) / 2.0
    return _as_result(value, per_image)


def _grayscale(images: np.ndarray) -> np.ndarray:
    """(H, W) stays; (C, H, W) is averaged over channels (the hash only needs luminance)."""
    return images if images.ndim == 2 else images.mean(axis=0)


def _phash_bits(image: np.ndarray) -> np.ndarray:
    # every step is linear and the bits compare with the median, so the hash is invariant
    # to a positive scaling: divide by the largest magnitude, and no sum can overflow
    peak = float(np.abs(image).max())
    image = image / peak if peak > 0 else image
    smooth = uniform_filter(_grayscale(image), _PHASH_MEAN_FILTER, mode="nearest")
    factors = (_PHASH_SIZE / smooth.shape[0], _PHASH_SIZE / smooth.shape[1])
    resized = zoom(smooth, factors, order=1, mode="nearest", grid_mode=True)
    coeffs = dctn(resized, type=2, norm="ortho")
    low = coeffs[1 : _PHASH_BLOCK + 1, 1 : _PHASH_BLOCK + 1].ravel()  # skip the DC row/col
    return low > np.median(low)


def phash(image) -> np.ndarray:
    """64-bit DCT perceptual hash of one image ``(H, W)`` or ``(C, H, W)``, as 64 booleans.

    Follows the DCT hash of the pHash library (Zauner 2010, "Implementation and
    benchmarking of perceptual image hash functions", Section 5.2): luminance (mean over
    channels), a 7x7 mean filter, bilinear resize to 32x32, the orthonormal 2-D DCT-II, the
    8x8 block of lowest frequencies without the DC row and column, and one bit per
    coefficient: above the block's median or not. Domain: any finite real image; the hash
    is invariant to a positive scaling of the values, so no value range is needed.

    Examples
    --------
    >>> bits = phash(np.linspace(0, 1, 64).reshape(8, 8))
    >>> bits.shape, bits.dtype
    ((64,), dtype('bool'))
    """
    arr = to_numpy("image", image, func="phash")
    if arr.ndim not in (2, 3):
        raise ValueError(
            f"The 'image' parameter of phash must be (H, W) or (C, H, W). Got shape {arr.shape}."
        )
    return _phash_bits(arr)


def phash_similarity(original, reconstruction, *, per_image: bool = False):
    r"""Normalised complementary pHash distance (Huang et al., Section 4.2, "HASH").

    .. math:: (64 - d_{\mathrm{ham}}(H(x^*), H(x))) / 64,

    with ``H`` the 64-bit hash of :func:`phash`: 1 for identical images, about 0.5 for
    unrelated ones. Returns a float in [0, 1], or an ndarray per image with
    ``per_image=True`` (inputs ``(B, H, W)`` or ``(B, C, H, W)``).

    Examples
    --------
    >>> x = np.linspace(0, 1, 64).reshape(8, 8)
    >>> phash_similarity(x, x)
    1.0
    """
    per_image = check_bool("per_image", per_image, func="phash_similarity")
    a, b = _pair(original, reconstruction, func="phash_similarity", per_image=per_image)
    if not per_image:
        a, b = a[None], b[None]
    if a.ndim not in (3, 4):
        expected = "(B, [C,] H, W) with per_image=True" if per_image else "([C,] H, W)"
        raise ValueError(
            f"The inputs of phash_similarity must be images {expected}. "
            f"Got shape {a.shape if per_image else a.shape[1:]} instead."
        )
    bits = _PHASH_BLOCK * _PHASH_BLOCK
    distances = [
        np.count_nonzero(_phash_bits(x) != _phash_bits(y)) for x, y in zip(a, b, strict=True)
    ]
    return _as_result((bits - np.array(distances)) / bits, per_image)


def inference_accuracy(classifier, reconstructions, labels, *, per_image: bool = False):
    r"""Inference accuracy "INFE" (Huang et al., Section 4.2): :math:`1[y = f(W, x^*)]`.

    Parameters
    ----------
    classifier : callable
        Maps a batch of reconstructions to finite logits / scores of shape
        ``(B, n_classes)``; a ``torch.nn.Module`` is evaluated under ``torch.no_grad()`` on
        the device of its parameters, with the batch converted to a float32 tensor there.
    reconstructions : array-like or torch.Tensor, shape (B, ...)
    labels : array-like of int, shape (B,)
        True labels of the originals (after matching, see :func:`match_reconstructions`):
        integers in ``[0, n_classes - 1]``; a fractional label (1.7) is refused, not
        truncated.
    per_image : bool, default False
        If True, return the 0/1 outcome of each image; otherwise their mean (in [0, 1]).

    Examples
    --------
    >>> def classifier(images):  # predicts class 0 for every image
    ...     return np.tile([1.0, 0.0], (len(images), 1))
    >>> inference_accuracy(classifier, np.zeros((4, 2, 2)), [0, 0, 1, 0])
    0.75
    """
    func = "inference_accuracy"
    if not callable(classifier):
        raise ValueError(
            f"The 'classifier' parameter of {func} must be callable (a function or a "
            f"torch.nn.Module). Got {type(classifier).__name__} instead."
        )
    per_image = check_bool("per_image", per_image, func=func)
    images = to_numpy("reconstructions", reconstructions, func=func)
    y = to_numpy("labels", labels, func=func, ndim=1)
    if images.ndim < 2 or images.shape[0] != y.shape[0]:
        raise ValueError(
            f"The 'reconstructions' (B, ...) and 'labels' (B,) parameters of {func} must have "
            f"the same B. Got shapes {images.shape} and {y.shape} instead."
        )
    scores = _classify(classifier, images)
    if scores.ndim != 2 or scores.shape[0] != y.shape[0]:
        raise ValueError(
            f"The classifier of {func} must return scores of shape (B, n_classes) with "
            f"B={y.shape[0]}. Got shape {scores.shape} instead."
        )
    bad = (y != np.floor(y)) | (y < 0) | (y >= scores.shape[1])
    if np.any(bad):
        raise ValueError(
            f"The 'labels' parameter of {func} must hold integers in [0, {scores.shape[1] - 1}] "
            f"(the classifier returns {scores.shape[1]} classes). Got {y[bad][0]:g} instead."
        )
    correct = (np.argmax(scores, axis=1) == y).astype(float)
    return correct if per_image else float(correct.mean())


def _classify(classifier, images: np.ndarray) -> np.ndarray:
    if isinstance(classifier, torch.nn.Module):
        param = next(classifier.parameters(), None)
        device = param.device if param is not None else torch.device("cpu")
        batch = torch.as_tensor(images, dtype=torch.float32, device=device)
        with torch.no_grad():
            out = classifier(batch)
    else:
        out = classifier(images)
    return to_numpy("classifier output", out, func="inference_accuracy")


def _cost_matrix(a: np.ndarray, b: np.ndarray, score: str) -> np.ndarray:
    """Pairwise costs, one original (row) at a time so memory stays ``B x pixels``.

    Both batches are divided by their largest magnitude first (no difference can overflow;
    the ranking of MSEs is unchanged). Costs come from ``log10 MSE`` (:func:`_log10_mse`),
    so tiny errors do not underflow to ties.
    """
    peak = max(float(np.abs(a).max()), float(np.abs(b).max()))
    scale = peak if peak > 0 else 1.0
    flat_a, flat_b = a.reshape(len(a), -1) / scale, b.reshape(len(b), -1) / scale
    log_mse = np.stack([_log10_mse(row[None, :] - flat_b) for row in flat_a])
    finite = log_mse[np.isfinite(log_mse)]
    if finite.size == 0:  # every pair is an exact match: any assignment is optimal
        return np.zeros_like(log_mse)
    if score == "mse":
        # MSE relative to the largest one, in (0, 1]; an exact match costs 0
        return 10.0 ** (log_mse - finite.max())
    # maximising the total PSNR = minimising the sum of log MSE. An exact match (log MSE
    # -inf) must stay finite for the solver: put it further below the smallest real cost
    # than B times the spread of the real costs, so more exact matches always win
    spread = finite.max() - finite.min()
    return np.where(np.isfinite(log_mse), log_mse, finite.min() - len(a) * spread - 1.0)


def match_reconstructions(originals, reconstructions, *, score: str = "mse") -> np.ndarray:
    """Optimal one-to-one assignment of reconstructions to originals (Hungarian algorithm).

    Gradient inversion recovers a batch in arbitrary order, so before scoring a batch of
    ``B > 1`` images each original is paired with one reconstruction so that the total
    ``score`` over pairs is best: ``"mse"`` minimises the summed MSE, ``"psnr"`` maximises
    the summed PSNR. Solved exactly by ``scipy.optimize.linear_sum_assignment``. Domain:
    two finite real batches ``(B, ...)`` of the same shape; the matching is invariant to a
    positive scaling of all values, so no value range is needed.

    Returns
    -------
    ndarray of int, shape (B,)
        ``perm`` such that ``reconstructions[perm[i]]`` is matched to ``originals[i]``.

    Examples
    --------
    >>> originals = np.arange(3.0)[:, None, None] * np.ones((3, 2, 2))
    >>> match_reconstructions(originals, originals[::-1]).tolist()
    [2, 1, 0]
    """
    func = "match_reconstructions"
    check_choice("score", score, func=func, choices=MATCH_SCORES)
    a, b = _pair(originals, reconstructions, func=func, per_image=True, names=_BATCH_NAMES)
    _, perm = linear_sum_assignment(_cost_matrix(a, b, score))
    return perm.astype(np.int64)


def score_reconstruction(
    originals,
    reconstructions,
    *,
    levels: int = DEFAULT_LEVELS,
    value_range=(0.0, 1.0),
    match: str | None = "mse",
    chance_draws: int = 16,
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """Score a batch of reconstructions image by image, after optimal matching.

    Parameters
    ----------
    originals, reconstructions : array-like or torch.Tensor, shape (B, [C,] H, W)
        Every value inside ``value_range`` (refused otherwise, never clipped).
    levels, value_range :
        Quantisation of :func:`estimators.nmi.nmi`; ``value_range`` (default [0, 1]; use
        ``(0, 255)`` for 8-bit images) also sets PSNR's and SSIM's
        ``data_range = high - low``.
    match : {"mse", "psnr"} or None, default "mse"
        Matching score of :func:`match_reconstructions`; None keeps the given order.
    chance_draws : int, default 16
        Uniform-noise images per original for :func:`estimators.nmi.nmi_chance_level`.
    seed : int, default 0
        In [0, 2**63 - 1].

    Returns
    -------
    dict of ndarrays of shape (B,)
        ``"assignment"`` (reconstruction index matched to each original), ``"nmi"``,
        ``"nmi_chance"`` (the NMI of the original against uniform noise: a reference, not
        a floor, since noise fills every level and the plug-in NMI's bias grows with the
        occupied levels; the floor of a given reconstruction is
        :func:`estimators.nmi.nmi_permutation_null`'s ``null_mean``), ``"psnr"`` (dB) and,
        when both spatial sides are at least 7, ``"ssim"`` (normalised to [0, 1]).

    Examples
    --------
    >>> originals = np.linspace(0, 1, 48).reshape(3, 4, 4)
    >>> scores = score_reconstruction(originals, originals[::-1], chance_draws=1)
    >>> scores["assignment"].tolist(), scores["nmi"].tolist(), sorted(scores)
    ([2, 1, 0], [1.0, 1.0, 1.0], ['assignment', 'nmi', 'nmi_chance', 'psnr'])
    """
    func = "score_reconstruction"
    chance_draws = check_int("chance_draws", chance_draws, func=func, low=1)
    check_choice("match", match, func=func, choices=(*MATCH_SCORES, None))
    levels, low, high = check_quantization(levels, value_range, func=func)
    rng = np.random.default_rng(check_seed(seed, func=func))
    a, b = _pair(originals, reconstructions, func=func, per_image=True, names=_BATCH_NAMES)
    if a.ndim not in (3, 4):
        raise ValueError(
            f"The 'originals' and 'reconstructions' parameters of {func} must be batches of "
            f"images (B, H, W) or (B, C, H, W). Got shape {a.shape} instead."
        )
    for name, arr in zip(_BATCH_NAMES, (a, b), strict=True):
        check_values_in(name, arr, low, high, func=func, range_name="value_range")
    perm = np.arange(len(a)) if match is None else match_reconstructions(a, b, score=match)
    b = b[perm]
    data_range = high - low
    seeds = rng.integers(0, 2**63 - 1, size=len(a))
    result = {
        "assignment": perm,
        "nmi": np.array(
            [nmi(x, y, levels=levels, value_range=value_range) for x, y in zip(a, b, strict=True)]
        ),
        "nmi_chance": np.array(
            [
                nmi_chance_level(
                    x, levels=levels, value_range=value_range, n_draws=chance_draws, seed=int(s)
                )
                for x, s in zip(a, seeds, strict=True)
            ]
        ),
        "psnr": psnr(a, b, data_range=data_range, per_image=True),
    }
    if min(a.shape[-2:]) >= 7:
        result["ssim"] = ssim(a, b, data_range=data_range, per_image=True)
    return result


#: Similarity metrics of one (original, reconstruction) pair, for registry-driven tests and
#: sweeps: name -> (callable(original, reconstruction) -> float, value range, symmetric).
METRICS = {
    "nmi": (nmi, (0.0, 1.0), True),
    "psnr": (psnr, (-np.inf, np.inf), True),
    "ssim": (ssim, (0.0, 1.0), True),
    "phash_similarity": (phash_similarity, (0.0, 1.0), True),
}
