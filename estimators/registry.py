"""Every mutual-information estimator by name, behind one protocol.

An estimator is an object configured at construction (all its settings are keyword
arguments with documented defaults, as in scikit-learn) with one method,
``estimate(x, y, *, seed=0) -> MIEstimate``: paired samples in (first axis = sample,
further axes flattened to features; H-MINE reads ``x`` as ``(n, B, ...)`` batches), an
estimate in nats out. :func:`get_estimator` builds one from its registry name, the way
the field's libraries do (``bmi``'s estimator classes, torch-mist's ``estimate_mi``
with an estimator name), and :func:`estimate_mi` is the one-call shortcut.

Estimators are imported on first use, so that asking for KSG does not import torch.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Protocol, runtime_checkable

from pruneleak.bounds.validation import check_choice
from pruneleak.estimators.estimate import MIEstimate

__all__ = ["ESTIMATORS", "MIEstimator", "estimate_mi", "get_estimator"]

#: Registry name -> "module:class" of the estimator.
ESTIMATORS = {
    "gaussian": "pruneleak.estimators.closed_form:GaussianMI",
    "ksg": "pruneleak.estimators.ksg:KSG",
    "mine": "pruneleak.estimators.neural:MINE",
    "hmine": "pruneleak.estimators.neural:HMINE",
    "infonce": "pruneleak.estimators.neural:InfoNCE",
    "nwj": "pruneleak.estimators.neural:NWJ",
    "smile": "pruneleak.estimators.neural:SMILE",
}


@runtime_checkable
class MIEstimator(Protocol):
    """What every registered estimator provides."""

    name: str

    def estimate(self, x, y, *, seed: int = 0) -> MIEstimate:
        """Estimate ``I(X; Y)`` in nats from paired samples ``x`` (n, ...) and ``y`` (n, ...)."""


def get_estimator(name: str, **params) -> MIEstimator:
    """The estimator registered as ``name``, built with ``params`` (its keyword settings).

    Raises ValueError for an unknown name (listing the known ones) and for settings the
    estimator does not take (naming them).

    Examples
    --------
    >>> get_estimator("ksg", k=5).name
    'ksg'
    """
    name = check_choice("name", name, func="get_estimator", choices=tuple(ESTIMATORS))
    module, cls = ESTIMATORS[name].split(":")
    estimator_class = getattr(importlib.import_module(module), cls)
    try:
        inspect.signature(estimator_class).bind(**params)
    except TypeError as err:  # an unknown or positional setting, named by Python's message
        raise ValueError(f"get_estimator('{name}'): {err}") from err
    return estimator_class(**params)


def estimate_mi(x, y, method: str = "ksg", *, seed: int = 0, **params) -> MIEstimate:
    """``get_estimator(method, **params).estimate(x, y, seed=seed)``: one call, one estimate.

    Examples
    --------
    >>> from pruneleak.estimators.mi import correlated_gaussian_pair
    >>> x, y = correlated_gaussian_pair(2000, 1, 0.5, seed=0)  # I(X; Y) = 0.5 nats
    >>> est = estimate_mi(x, y, "gaussian")
    >>> est.ci_low < 0.5 < est.ci_high
    True
    """
    return get_estimator(method, **params).estimate(x, y, seed=seed)
