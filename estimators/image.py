"""Reconstruction metrics for images: PSNR, SSIM, pHash similarity, inference accuracy.

The metrics of Huang et al. (arXiv 2003.01876, Section 4.2) and PriPrune (arXiv
2310.19958, "Privacy Metrics"), plus the optimal matching of a batch of reconstructions to
the originals that every batch score needs (a gradient inversion attack returns the batch
in an arbitrary order).

Layout convention (torch's): a single image is ``(H, W)`` or ``(C, H, W)``; a batch is
``(B, H, W)`` or ``(B, C, H, W)``, and functions with ``per_image=True`` (or taking
``originals`` / ``reconstructions``) read axis 0 as the image index. Inputs may be numpy
arrays or torch tensors on any device; they are moved to the CPU once (metrics are not a
hot loop). NaN / inf and mismatched shapes raise ValueError. Values are floats on
``[0, data_range]`` scale (default data_range 1.0 for images on [0, 1]).
"""

from __future__ import annotations

import numpy as np
import torch
from scipy.fft import dctn
from scipy.ndimage import uniform_filter, zoom
from scipy.optimize import linear_sum_assignment

from bounds.validation import check_choice, check_int, check_real
from estimators._arrays import pair_to_numpy, to_numpy
from estimators.nmi import DEFAULT_LEVELS, check_quantization, nmi, nmi_chance_level

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


def _pair(original, reconstruction, *, func: str, per_image: bool):
    a, b = pair_to_numpy(("original", original), ("reconstruction", reconstruction), func=func)
    if per_image and a.ndim < 2:
        raise ValueError(
            f"With per_image=True, the inputs of {func} need an image axis 0 and at least one "
            f"more axis. Got shape {a.shape} instead."
        )
    return a, b


def _image_axes(arr: np.ndarray, per_image: bool) -> tuple[int, ...] | None:
    return tuple(range(1, arr.ndim)) if per_image else None


def _as_result(values: np.ndarray, per_image: bool):
    return np.asarray(values, dtype=float) if per_image else float(values)


def _mse(a: np.ndarray, b: np.ndarray, per_image: bool):
    return np.mean((a - b) ** 2, axis=_image_axes(a, per_image))


def _psnr_from_mse(mse, data_range: float):
    with np.errstate(divide="ignore"):
        return 10.0 * np.log10(data_range**2 / mse)


def psnr(original, reconstruction, *, data_range: float = 1.0, per_image: bool = False):
    r"""Peak signal-to-noise ratio in decibels.

    .. math:: \mathrm{PSNR} = 10 \log_{10} \frac{R^2}{\mathrm{MSE}(x, \hat x)},

    with ``R = data_range``; an exact reconstruction gives ``inf``. Matches
    ``skimage.metrics.peak_signal_noise_ratio(original, reconstruction, data_range=R)``.

    Parameters
    ----------
    original, reconstruction : array-like or torch.Tensor of the same shape
    data_range : float, default 1.0
        Width of the value range (1.0 for images on [0, 1], 255 for 8-bit images).
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
    a, b = _pair(original, reconstruction, func=func, per_image=per_image)
    return _as_result(_psnr_from_mse(_mse(a, b, per_image), data_range), per_image)


def _ssim_maps(a: np.ndarray, b: np.ndarray, data_range: float, win_size: int) -> np.ndarray:
    """Local SSIM on the last two axes (uniform window, sample covariance), skimage's default."""
    size = (1,) * (a.ndim - 2) + (win_size, win_size)
    n_window = win_size**2
    cov_norm = n_window / (n_window - 1)
    mu_a, mu_b = uniform_filter(a, size), uniform_filter(b, size)
    var_a = cov_norm * (uniform_filter(a * a, size) - mu_a * mu_a)
    var_b = cov_norm * (uniform_filter(b * b, size) - mu_b * mu_b)
    cov_ab = cov_norm * (uniform_filter(a * b, size) - mu_a * mu_b)
    c1, c2 = (0.01 * data_range) ** 2, (0.03 * data_range) ** 2  # K1, K2 of Wang et al. 2004
    local = ((2 * mu_a * mu_b + c1) * (2 * cov_ab + c2)) / (
        (mu_a**2 + mu_b**2 + c1) * (var_a + var_b + c2)
    )
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
        ``(B, C, H, W)``. Both spatial sides must be at least ``win_size``.
    data_range : float, default 1.0
    win_size : int, default 7
        Odd window side.
    normalized : bool, default True
    per_image : bool, default False
        If True, return an ndarray with one value per image of axis 0.

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
    a, b = _pair(original, reconstruction, func=func, per_image=per_image)
    max_ndim = 4 if per_image else 3
    if not 2 <= a.ndim <= max_ndim or min(a.shape[-2:]) < win_size:
        raise ValueError(
            f"The inputs of {func} must be images ({'B, ' if per_image else ''}[C,] H, W) "
            f"with H, W >= win_size={win_size}. Got shape {a.shape} instead."
        )
    local = _ssim_maps(a, b, data_range, win_size)
    value = local.mean(axis=tuple(range(1, local.ndim))) if per_image else local.mean()
    if normalized:
        value = (value + 1.0) / 2.0
    return _as_result(value, per_image)


def _grayscale(images: np.ndarray) -> np.ndarray:
    """(H, W) stays; (C, H, W) is averaged over channels (the hash only needs luminance)."""
    return images if images.ndim == 2 else images.mean(axis=0)


def _phash_bits(image: np.ndarray) -> np.ndarray:
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
    coefficient: above the block's median or not.

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
    unrelated ones. Returns a float, or an ndarray per image with ``per_image=True``.

    Examples
    --------
    >>> x = np.linspace(0, 1, 64).reshape(8, 8)
    >>> phash_similarity(x, x)
    1.0
    """
    a, b = _pair(original, reconstruction, func="phash_similarity", per_image=per_image)
    if not per_image:
        a, b = a[None], b[None]
    if a.ndim not in (3, 4):
        raise ValueError(
            "The inputs of phash_similarity must be images ([B,] [C,] H, W). "
            f"Got shape {a.shape[1:] if not per_image else a.shape} instead."
        )
    bits = _PHASH_BLOCK * _PHASH_BLOCK
    distances = [
        np.count_nonzero(_phash_bits(x) != _phash_bits(y)) for x, y in zip(a, b, strict=True)
    ]
    sims = (bits - np.array(distances)) / bits
    return _as_result(sims if per_image else sims[0], per_image)


def inference_accuracy(classifier, reconstructions, labels, *, per_image: bool = False):
    r"""Inference accuracy "INFE" (Huang et al., Section 4.2): :math:`1[y = f(W, x^*)]`.

    Parameters
    ----------
    classifier : callable
        Maps a batch of reconstructions to logits / scores of shape ``(B, n_classes)``; a
        ``torch.nn.Module`` is evaluated under ``torch.no_grad()`` on the device of its
        parameters, with the batch converted to a float32 tensor there.
    reconstructions : array-like or torch.Tensor, shape (B, ...)
    labels : array-like of int, shape (B,)
        True labels of the originals (after matching, see :func:`match_reconstructions`).
    per_image : bool, default False
        If True, return the 0/1 outcome of each image; otherwise their mean.

    Examples
    --------
    >>> def classifier(images):  # predicts class 0 for every image
    ...     return np.tile([1.0, 0.0], (len(images), 1))
    >>> inference_accuracy(classifier, np.zeros((4, 2, 2)), [0, 0, 1, 0])
    0.75
    """
    func = "inference_accuracy"
    images = to_numpy("reconstructions", reconstructions, func=func)
    y = to_numpy("labels", labels, func=func, ndim=1)
    if images.ndim < 2 or images.shape[0] != y.shape[0]:
        raise ValueError(
            f"The 'reconstructions' (B, ...) and 'labels' (B,) parameters of {func} must have "
            f"the same B. Got shapes {images.shape} and {y.shape} instead."
        )
    scores = _classify(classifier, images)
    if scores.shape[0] != y.shape[0] or scores.ndim != 2:
        raise ValueError(
            f"The classifier of {func} must return scores of shape (B, n_classes). "
            f"Got shape {scores.shape} instead."
        )
    correct = (np.argmax(scores, axis=1) == y).astype(float)
    return _as_result(correct if per_image else correct.mean(), per_image)


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
    flat_a, flat_b = a.reshape(len(a), -1), b.reshape(len(b), -1)
    mse = np.mean((flat_a[:, None, :] - flat_b[None, :, :]) ** 2, axis=2)
    if score == "mse":
        return mse
    # maximising the total PSNR = minimising the sum of log MSE; an exact match (MSE 0)
    # must stay finite for the solver, so floor it far below any real error
    return np.log(np.maximum(mse, np.finfo(float).tiny))


def match_reconstructions(originals, reconstructions, *, score: str = "mse") -> np.ndarray:
    """Optimal one-to-one assignment of reconstructions to originals (Hungarian algorithm).

    Gradient inversion recovers a batch in arbitrary order, so before scoring a batch of
    ``B > 1`` images each original is paired with one reconstruction so that the total
    ``score`` over pairs is best: ``"mse"`` minimises the summed MSE, ``"psnr"`` maximises
    the summed PSNR. Solved exactly by ``scipy.optimize.linear_sum_assignment``.

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
    a, b = _pair(originals, reconstructions, func=func, per_image=True)
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
    levels, value_range :
        Quantisation of :func:`estimators.nmi.nmi`; ``value_range`` also sets PSNR's and
        SSIM's ``data_range = high - low``.
    match : {"mse", "psnr"} or None, default "mse"
        Matching score of :func:`match_reconstructions`; None keeps the given order.
    chance_draws : int, default 16
        Uniform-noise images per original for :func:`estimators.nmi.nmi_chance_level`.
    seed : int, default 0

    Returns
    -------
    dict of ndarrays of shape (B,)
        ``"assignment"`` (reconstruction index matched to each original), ``"nmi"``,
        ``"nmi_chance"`` (the NMI floor, report it beside ``"nmi"``), ``"psnr"`` (dB) and,
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
    a, b = _pair(originals, reconstructions, func=func, per_image=True)
    perm = np.arange(len(a)) if match is None else match_reconstructions(a, b, score=match)
    b = b[perm]
    levels, low, high = check_quantization(levels, value_range, func=func)
    data_range = high - low
    rng = np.random.default_rng(seed)
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
    if a.ndim >= 3 and min(a.shape[-2:]) >= 7:
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
