"""The result every mutual-information estimator returns, and its warnings.

One record for all estimators (closed form, KSG, the neural bounds), so that a study can
swap estimators by name (:mod:`estimators.registry`) and read the same fields: the value
and its interval in nats (``.bits`` converts), what the estimator saw (training trace,
trained critic), numbers worth checking (``diagnostics``) and the reasons to distrust the
value (``warnings``). Each warning is also issued through :mod:`warnings` with the
category :class:`MIWarning`, so that it reaches a user who never looks at the record and
can be filtered or turned into an error like any other Python warning.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

__all__ = ["MIEstimate", "MIWarning", "make_estimate"]

#: Nats per bit: a value in nats divided by this is in bits.
NATS_PER_BIT = math.log(2.0)


class MIWarning(UserWarning):
    """A mutual-information estimate that may be unreliable (the message says why)."""


@dataclass(frozen=True)
class MIEstimate:
    """An estimate of ``I(X; Y)`` with its interval, trace, critic and diagnostics.

    Attributes
    ----------
    value : float
        The estimate in nats, finite. Negative values are reported as they are (an
        estimator's noise around 0 is information; clipping would bias the mean of many
        estimates upwards).
    ci_low, ci_high : float
        Two-sided interval at level ``confidence``, in nats. What it covers (evaluation
        noise, training variance across fits, resampling) is stated by each estimator and
        repeated in ``diagnostics["interval"]``.
    confidence : float
        Level of the interval, in (0, 1).
    method : str
        Registry name of the estimator (``"ksg"``, ``"mine"``, ...).
    n_samples : int
        Paired samples the estimate used, all splits together.
    trace : mapping of str to ndarray
        Training history (e.g. ``"step"``, ``"train"``, ``"validation"``, in nats);
        empty for estimators without training.
    critic : object or None
        The trained critic (a ``torch.nn.Module``) of a neural estimator, else None.
    diagnostics : mapping of str to float, int or str
        Estimator-specific numbers (steps run, stopping step, train/validation gap, ...).
    warnings : tuple of str
        Messages of the :class:`MIWarning` issued for this estimate.

    Examples
    --------
    >>> est = MIEstimate(1.0, 0.9, 1.1, 0.95, "ksg", 100)
    >>> round(est.bits, 4), [round(b, 4) for b in est.interval_bits]
    (1.4427, [1.2984, 1.587])
    """

    value: float
    ci_low: float
    ci_high: float
    confidence: float
    method: str
    n_samples: int
    trace: Mapping[str, np.ndarray] = field(default_factory=dict, repr=False)
    critic: object | None = field(default=None, repr=False)
    diagnostics: Mapping[str, float | int | str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    @property
    def bits(self) -> float:
        """The estimate in bits."""
        return self.value / NATS_PER_BIT

    @property
    def interval_bits(self) -> tuple[float, float]:
        """``(ci_low, ci_high)`` in bits."""
        return self.ci_low / NATS_PER_BIT, self.ci_high / NATS_PER_BIT

    def covers(self, truth: float) -> bool:
        """Whether ``truth`` (nats) lies in ``[ci_low, ci_high]``."""
        return self.ci_low <= truth <= self.ci_high


def make_estimate(
    method: str,
    value: float,
    interval: tuple[float, float],
    *,
    confidence: float,
    n_samples: int,
    trace: Mapping[str, np.ndarray] | None = None,
    critic: object | None = None,
    diagnostics: Mapping[str, float | int | str] | None = None,
    warnings_found: tuple[str, ...] | list[str] = (),
    stacklevel: int = 3,
) -> MIEstimate:
    """Build an :class:`MIEstimate`, add the checks shared by all estimators, issue warnings.

    Shared checks: a non-finite value or interval is a bug of the estimator and raises
    ValueError (never a silent NaN); an interval that does not contain the value is
    widened to contain it; a negative estimate (``value < 0``) adds a warning, since the
    true MI is non-negative (noise of an estimate near 0, or a critic worse than a
    constant). Every message in the result is issued once as an :class:`MIWarning`.

    Examples
    --------
    >>> import warnings as w
    >>> with w.catch_warnings(record=True) as caught:
    ...     w.simplefilter("always")
    ...     est = make_estimate("ksg", -0.01, (-0.03, 0.01), confidence=0.95, n_samples=50)
    >>> est.warnings[0].startswith("ksg: negative estimate")
    True
    >>> caught[0].category.__name__
    'MIWarning'
    """
    low, high = (float(bound) for bound in interval)
    value = float(value)
    if not all(math.isfinite(v) for v in (value, low, high)):
        raise ValueError(
            f"{method} produced a non-finite estimate {value!r} with interval "
            f"[{low!r}, {high!r}]; this is a bug of the estimator, please report it."
        )
    messages = list(warnings_found)
    if value < 0:
        messages.append(
            f"{method}: negative estimate {value:.4g} nats; the true mutual information is "
            "non-negative, so this is noise around 0 (or a critic worse than a constant)."
        )
    for message in messages:
        warnings.warn(message, MIWarning, stacklevel=stacklevel)
    return MIEstimate(
        value=value,
        ci_low=min(low, value),
        ci_high=max(high, value),
        confidence=float(confidence),
        method=method,
        n_samples=int(n_samples),
        trace=dict(trace or {}),
        critic=critic,
        diagnostics=dict(diagnostics or {}),
        warnings=tuple(messages),
    )
