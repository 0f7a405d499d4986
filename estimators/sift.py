r"""SIFT similarity of a reconstruction to its original (Huang et al., arXiv:2003.01876,
Section 4.2, "SIFT similarity").

The paper: "We first calculate SIFT [Lowe 2004] keypoints and descriptors
:math:`\mathcal K^*` and :math:`\mathcal K` based on :math:`x^*` and :math:`x`. Then, we
search for matched pairs between :math:`\mathcal K^*` and :math:`\mathcal K`, and compute
the distance of each matched pair. We then filter the good matched pairs based on the
distance, and calculate #matched good pairs / #matched pairs." It names neither the
matcher nor the filter; this module reads them as follows.

* **Keypoints and descriptors**: scikit-image's :class:`skimage.feature.SIFT` (Otero and
  Delbracio's *Anatomy of the SIFT method*, 2014, after Lowe 2004) with its defaults,
  on the image as given (no resizing: the paper scores MNIST's 28x28 and CIFAR-10's
  32x32 images at their size) after SIFT's own initial ``upsampling`` (2, Lowe's
  doubling, by default). Colour images are averaged over channels first, and pixels are
  mapped to [0, 1] by subtracting the smaller minimum of the two images and dividing by
  ``data_range`` (SIFT's contrast threshold is absolute, for [0, 1] images). Descriptors
  are 128 bins quantised to 0-255, as scikit-image returns them.
* **Matched pairs**: every descriptor of the reconstruction with its nearest descriptor
  of the original in Euclidean distance (brute force, no cross check), so
  #matched pairs = number of the reconstruction's keypoints whenever the original has one.
* **Good pairs**: Lowe's ratio test (Lowe 2004, Section 7.1): a pair is good when the
  nearest distance :math:`d_1` is below ``ratio`` times the second-nearest distance
  :math:`d_2` among the original's descriptors. ``ratio`` is unitless (both distances
  are in the same descriptor units); the default 0.8 is Lowe's, which rejects 90 % of
  false matches and 5 % of correct ones on his data. Two tie rules are scikit-image's
  (:func:`skimage.feature.match_descriptors`): with a single descriptor in the original
  :math:`d_2 = \infty` (the pair is good), and :math:`d_2 = 0` counts as float64's eps,
  so an exact duplicate is a good pair.

.. math:: \mathrm{SIFT}(x^*, x) = \frac{\#\{\text{good pairs}\}}{\#\{\text{matched pairs}\}}
    \in [0, 1].

**Undefined values.** When the original or the reconstruction has no SIFT keypoint
(a blank or very smooth image; scikit-image's SIFT finds none on most 8x8 digits, and
few on 28x28 ones) there is no matched pair and the ratio is 0 / 0. The result then says
so: :attr:`SiftSimilarity.value` is ``None`` and :attr:`SiftSimilarity.reason` names the
image without keypoints; no number is made up. Callers that average over images must
drop the undefined ones and report how many they dropped (as
:mod:`sims.experiments.prune_vs_noise` does). An image too small for even one octave
(``min(H, W) * upsampling < 12``, scikit-image's smallest octave) raises ValueError
instead, since no image of that size can have a defined value.

Like every similarity here, the value describes one reconstruction; it does not decide
alone whether a defence protects.

Requires scikit-image (the ``faces`` extra: ``pip install 'pruneleak[faces]'``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

import numpy as np

from pruneleak.bounds.validation import check_bool, check_choice, check_real
from pruneleak.estimators.image import _check_span, _grayscale, _pair

__all__ = ["SIFT_RATIO", "SIFT_UPSAMPLINGS", "SiftSimilarity", "sift_similarity"]

#: Lowe's ratio-test threshold (Lowe 2004, "Distinctive image features from
#: scale-invariant keypoints", Section 7.1: matches with a distance ratio above 0.8 are
#: rejected).
SIFT_RATIO = 0.8
#: SIFT's initial upsampling factors that work: scikit-image 0.26 also offers 4, but then
#: its seed blur sqrt(sigma_min^2 - sigma_in^2) = sqrt(0.4^2 - 0.5^2) is not real and
#: every call fails with "math domain error".
SIFT_UPSAMPLINGS = (1, 2)
_MIN_OCTAVE_SIDE = 12  # scikit-image's SIFT._set_number_of_octaves: last octave >= 12 px
_DESCRIPTOR_LENGTH = 128  # 4 x 4 histograms of 8 orientations


@dataclass(frozen=True)
class SiftSimilarity:
    """SIFT similarity of one reconstruction to its original (:func:`sift_similarity`).

    Attributes:
        good: matched pairs that pass Lowe's ratio test.
        matched: matched pairs: the reconstruction's keypoints when the original has at
            least one keypoint, else 0.
        keypoints_original, keypoints_reconstruction: SIFT keypoints found in each image
            (scikit-image may return one position twice, with two orientations).
    """

    good: int
    matched: int
    keypoints_original: int
    keypoints_reconstruction: int

    @property
    def defined(self) -> bool:
        """Whether there is at least one matched pair, so the ratio exists."""
        return self.matched > 0

    @property
    def value(self) -> float | None:
        """``good / matched`` in [0, 1], or ``None`` when undefined (see :attr:`reason`)."""
        return self.good / self.matched if self.defined else None

    @property
    def reason(self) -> str:
        """Why the value is undefined ("" when it is defined)."""
        missing = [
            name
            for name, count in (
                ("original", self.keypoints_original),
                ("reconstruction", self.keypoints_reconstruction),
            )
            if count == 0
        ]
        if not missing:
            return ""
        return (
            f"no SIFT keypoint in the {' nor the '.join(missing)}: no matched pair, "
            f"the ratio good / matched is 0 / 0"
        )


def _sift_class():
    try:
        feature = importlib.import_module("skimage.feature")
    except ImportError as err:
        raise ImportError(
            "sift_similarity needs scikit-image (skimage.feature.SIFT), which cannot be "
            f"imported ({err}): pip install 'pruneleak[faces]'."
        ) from err
    return feature.SIFT, feature.match_descriptors


def _descriptors(image: np.ndarray, upsampling: int) -> np.ndarray:
    """SIFT descriptors ``(n, 128)`` of a 2-D image in [0, 1]; ``n = 0`` when SIFT finds
    no keypoint."""
    sift_class, _ = _sift_class()
    sift = sift_class(upsampling=upsampling)
    try:
        sift.detect_and_extract(image)
    except RuntimeError as err:  # scikit-image's way of saying "no keypoint"
        if "found no features" not in str(err):
            raise
        return np.zeros((0, _DESCRIPTOR_LENGTH))
    return np.asarray(sift.descriptors, dtype=np.float64).reshape(-1, _DESCRIPTOR_LENGTH)


def _count(original: np.ndarray, reconstruction: np.ndarray, ratio: float) -> SiftSimilarity:
    """Matched and good pairs of two descriptor sets (module docstring)."""
    _, match_descriptors = _sift_class()
    matched = len(reconstruction) if len(original) else 0
    good = 0
    if matched:
        pairs = match_descriptors(reconstruction, original, cross_check=False, max_ratio=ratio)
        good = len(pairs)
    return SiftSimilarity(good, matched, len(original), len(reconstruction))


def sift_similarity(
    original,
    reconstruction,
    *,
    ratio: float = SIFT_RATIO,
    upsampling: int = 2,
    data_range: float = 1.0,
    per_image: bool = False,
):
    r"""SIFT similarity "SIFT" of Huang et al. (Section 4.2): the fraction of the
    reconstruction's SIFT matches to the original that pass Lowe's ratio test (module
    docstring for the exact rule).

    Parameters
    ----------
    original, reconstruction : array-like or torch.Tensor of the same shape
        ``(H, W)`` or ``(C, H, W)``; with ``per_image=True`` a batch ``(B, H, W)`` or
        ``(B, C, H, W)``. ``min(H, W) * upsampling`` must be at least 12. Finite real
        values spread over at most ``data_range`` (``max - min`` over both).
    ratio : float, default 0.8
        Lowe's ratio-test threshold, unitless, in (0, 1): a pair is good when
        :math:`d_1 < \text{ratio}\cdot d_2`.
    upsampling : {1, 2}, default 2
        SIFT's initial upsampling of the image (Lowe's doubling).
    data_range : float, default 1.0
        Width of the pixels' value range, > 0 (255 for 8-bit images).
    per_image : bool, default False
        If True, return a list with one result per image of axis 0.

    Returns
    -------
    SiftSimilarity (or a list of them with ``per_image``)
        ``.value`` is ``good / matched`` in [0, 1], or ``None`` with ``.reason`` when an
        image has no SIFT keypoint.

    Examples
    --------
    >>> x = np.zeros((28, 28))
    >>> x[6:22, 10:18] = 1.0  # a bright bar
    >>> result = sift_similarity(x, x)
    >>> result.value, result.good == result.matched > 0
    (1.0, True)
    >>> blank = sift_similarity(x, np.zeros((28, 28)))
    >>> blank.value is None, blank.reason.split(":")[0]
    (True, 'no SIFT keypoint in the reconstruction')
    """
    func = "sift_similarity"
    ratio = check_real(
        "ratio", ratio, func=func, low=0, high=1, low_inclusive=False, high_inclusive=False
    )
    upsampling = check_choice("upsampling", upsampling, func=func, choices=SIFT_UPSAMPLINGS)
    data_range = check_real("data_range", data_range, func=func, low=0.0, low_inclusive=False)
    per_image = check_bool("per_image", per_image, func=func)
    a, b = _pair(original, reconstruction, func=func, per_image=per_image)
    image_ndims = (3, 4) if per_image else (2, 3)
    if a.ndim not in image_ndims:
        raise ValueError(
            f"The inputs of {func} must be images ({'B, ' if per_image else ''}[C,] H, W). "
            f"Got shape {a.shape} instead."
        )
    if min(a.shape[-2:]) * upsampling < _MIN_OCTAVE_SIDE:
        raise ValueError(
            f"The inputs of {func} must have min(H, W) * upsampling >= {_MIN_OCTAVE_SIDE} "
            f"(SIFT's smallest octave). Got shape {a.shape} with upsampling={upsampling} "
            f"instead; resize the images first."
        )
    low, _ = _check_span(a, b, data_range, func=func)
    if not per_image:
        a, b = a[None], b[None]
    if a.ndim == 3:  # (B, H, W): one channel
        a, b = a[:, None], b[:, None]
    results = []
    for x, y in zip(a, b, strict=True):
        # (value - low) / data_range lies in [0, 1] and cannot overflow (|value - low| <=
        # data_range); the channel mean stays in [0, 1]
        images = [_grayscale((z - low) / data_range) for z in (x, y)]
        original_d, reconstruction_d = (_descriptors(z, upsampling) for z in images)
        results.append(_count(original_d, reconstruction_d, ratio))
    return results if per_image else results[0]
