"""Paired samples for MI estimation: validation, marginal transforms, heavy-tail check.

Mutual information is invariant under any invertible transform of ``X`` and of ``Y``
separately (Cover and Thomas 2006, eq. 8.71 and its proof), so a strictly monotone map
of every feature leaves the target unchanged while it can change an estimator's finite
sample behaviour a lot: neural critics and nearest-neighbour counts both suffer from heavy
tails (a Cauchy sample of 5,000 points has a few values thousands of spreads away). Two
such maps are offered (``transform=``):

- ``"asinh"``: ``asinh((v - median) / (1.4826 MAD))`` per feature, logarithmic in the
  tails and linear near the centre (Czyz et al., "Beyond normal: on the evaluation of
  mutual information estimators", NeurIPS 2023, the asinh tasks);
- ``"rank"``: the normal scores ``Phi^{-1}(rank / (n + 1))`` per feature (a Gaussian
  copula transform; ties get their average rank).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtri
from scipy.stats import rankdata

from pruneleak.bounds.validation import check_choice
from pruneleak.estimators._arrays import to_numpy

__all__ = [
    "HEAVY_TAIL_THRESHOLD",
    "TRANSFORMS",
    "heavy_tail_warnings",
    "paired_samples",
    "transform_samples",
]

TRANSFORMS = ("none", "asinh", "rank")
#: A feature whose farthest value lies more than this many robust standard deviations
#: (1.4826 MAD) from its median is called heavy-tailed. Among 10**6 Gaussian draws the
#: farthest lies about 5 away; a Student-t with 1 degree of freedom (Cauchy) reaches
#: hundreds at n = 5,000, with 2 degrees about 50.
HEAVY_TAIL_THRESHOLD = 20.0
_MAD_TO_STD = 1.4826  # 1 / Phi^{-1}(3/4): MAD of a Gaussian times this is its std
_LOG_ASINH_SWITCH = math.log(1e8)  # beyond, asinh(r) = sign(r) (log 2 + log |r|) in float64
_LOG_MAX = math.log(np.finfo(float).max)


def paired_samples(
    x, y, *, func: str, min_samples: int = 2, flatten_x: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Validate paired samples: first axis = sample, further axes flattened to features.

    ``y`` always becomes ``(n, dim_y)``; ``x`` becomes ``(n, dim_x)``, or with
    ``flatten_x=False`` keeps its shape (for H-MINE's ``(n, B, ...)`` batches; at least 2
    axes are then required). Raises ValueError for non-real data, NaN / inf, a scalar (no
    sample axis), different sample counts, fewer than ``min_samples`` samples, or a
    variable whose samples are all identical (constant: its MI with anything is 0 and
    every estimator here would divide by a zero spread).

    Examples
    --------
    >>> x, y = paired_samples([1.0, 2.0, 3.0], [[1.0, 0.0], [2.0, 1.0], [0.0, 3.0]], func="f")
    >>> x.shape, y.shape
    ((3, 1), (3, 2))
    """
    x = to_numpy("x", x, func=func)
    y = to_numpy("y", y, func=func)
    for name, arr in (("x", x), ("y", y)):
        if arr.ndim == 0:
            raise ValueError(
                f"The '{name}' parameter of {func} must be an array of samples (n, ...). "
                f"Got a scalar instead."
            )
    if not flatten_x and x.ndim < 2:
        raise ValueError(
            f"The 'x' parameter of {func} must have shape (n, B, ...): n batches of B inputs. "
            f"Got shape {x.shape} instead."
        )
    if flatten_x:
        x = x.reshape(len(x), -1) if x.ndim > 1 else x[:, None]
    y = y.reshape(len(y), -1) if y.ndim > 1 else y[:, None]
    if len(x) != len(y):
        raise ValueError(
            f"The 'x' and 'y' parameters of {func} must have the same number of samples "
            f"(first axis). Got {len(x)} and {len(y)} instead."
        )
    if len(x) < min_samples:
        raise ValueError(
            f"The 'x' and 'y' parameters of {func} must hold at least {min_samples} samples "
            f"(first axis). Got {len(x)} instead."
        )
    for name, arr in (("x", x), ("y", y)):
        if np.all(arr == arr[0]):
            raise ValueError(
                f"The '{name}' parameter of {func} is constant (all samples are identical); "
                "its mutual information is 0 and cannot be estimated."
            )
    return x, y


def _robust_parts(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(v - median, 1.4826 MAD)`` per feature (first axis = samples), without overflow.

    Everything is computed on ``v / 2`` (exact in binary floating point), whose
    differences cannot overflow, and the mean absolute deviation as a sum of
    ``|c| / n``; the common factor 2 cancels in the ratio. A feature with MAD 0 (more
    than half its samples equal) is scaled by its mean absolute deviation instead, and
    by 1 if that is 0 too. The spread is returned separately because the ratio of an
    outlier 1e308 spreads away overflows.
    """
    flat = arr.reshape(len(arr), -1) / 2.0
    centred = flat - np.median(flat, axis=0)
    spread = _MAD_TO_STD * np.median(np.abs(centred), axis=0)
    spread = np.where(spread > 0, spread, np.sum(np.abs(centred) / len(flat), axis=0))
    return centred, np.where(spread > 0, spread, 1.0)


def _log_abs_scores(centred: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """``log(|centred| / spread)`` in log space (-inf at the median), never overflowing."""
    with np.errstate(divide="ignore"):
        return np.log(np.abs(centred)) - np.log(spread)


def transform_samples(arr: np.ndarray, transform: str, *, func: str) -> np.ndarray:
    """Apply a strictly increasing map to every feature of ``arr`` (first axis = samples).

    ``"none"`` returns ``arr``; ``"asinh"`` and ``"rank"`` are described in the module
    docstring. Both leave the mutual information between two such arrays unchanged.

    Examples
    --------
    >>> transform_samples(np.array([[1.0], [2.0], [3.0]]), "rank", func="f").ravel().round(4)
    array([-0.6745,  0.    ,  0.6745])
    """
    transform = check_choice("transform", transform, func=func, choices=TRANSFORMS)
    if transform == "none":
        return arr
    if transform == "asinh":
        centred, spread = _robust_parts(arr)
        log_abs = _log_abs_scores(centred, spread)
        # asinh(r) = sign(r) log(|r| + sqrt(r^2 + 1)), which is sign(r) (log 2 + log |r|)
        # to double precision once |r| > 1e8; the ratio itself may overflow, its log not
        small = log_abs < _LOG_ASINH_SWITCH
        moderate = np.arcsinh(np.where(small, centred, 0.0) / spread)
        tail = np.sign(centred) * (math.log(2.0) + np.maximum(log_abs, _LOG_ASINH_SWITCH))
        return np.where(small, moderate, tail).reshape(arr.shape)
    flat = arr.reshape(len(arr), -1)
    ranks = rankdata(flat, axis=0)
    return ndtri(ranks / (len(arr) + 1.0)).reshape(arr.shape)


def heavy_tail_warnings(method: str, arrays: dict[str, np.ndarray]) -> list[str]:
    """One message per array with a feature beyond :data:`HEAVY_TAIL_THRESHOLD` robust stds.

    Examples
    --------
    >>> heavy_tail_warnings("ksg", {"x": np.r_[np.linspace(-1, 1, 99), 1e4][:, None]})[0][:40]
    'ksg: heavy tails in x (a value 1.3e+04 r'
    """
    messages = []
    for name, arr in arrays.items():
        score = math.exp(min(float(_log_abs_scores(*_robust_parts(arr)).max()), _LOG_MAX))
        if score > HEAVY_TAIL_THRESHOLD:
            messages.append(
                f"{method}: heavy tails in {name} (a value {score:.2g} robust standard "
                f"deviations from the median, more than {HEAVY_TAIL_THRESHOLD:g}); the "
                "estimate can be far off. Pass transform='asinh' or transform='rank' (MI is "
                "invariant to both)."
            )
    return messages
