r"""Status of a claimed upper bound (PriPrune's Theorem 1) against what is known about I(X; Y)."""

from __future__ import annotations

import math
from numbers import Real

import numpy as np

from pruneleak.bounds.validation import check_real

STATUSES = ("valid", "vacuous", "violated")
# Relative (and absolute, in bits) slack of the check "lower limit <= ceiling".
_SLACK = 1e-12


def _optional_limit(name, value, func):
    if value is None:
        return None
    return check_real(name, value, func=func)


def theorem1_status(
    bound_bits: float,
    *,
    ceiling_bits: float,
    exact_low_bits: float | None = None,
    lower_bound_bits: float | None = None,
) -> str:
    r"""``"violated"``, ``"vacuous"`` or ``"valid"`` for a claimed upper bound on I(X; Y).

    .. math::

        L = \max(0, \text{exact\_low}, \text{lower\_bound});\quad
        \text{status} = \begin{cases}
            \text{violated} & \text{bound} < L,\\
            \text{vacuous} & \text{bound} \ge \text{ceiling},\\
            \text{valid} & \text{otherwise.}
        \end{cases}

    :math:`L` is the largest known lower limit of :math:`I(X; Y)` in bits: 0 always
    (mutual information is non-negative, Cover & Thomas 2nd ed., Thm. 2.6.3), the lower
    end of the exact value's confidence interval (``exact_low_bits``, from
    :func:`bounds.leakage.exact_leakage`) and an attack's Fano lower bound
    (``lower_bound_bits``, :func:`bounds.leakage.fano_lower_confidence_bits`). A bound
    below :math:`L` is false at this point; one at or above the ceiling
    (:func:`bounds.leakage.ceiling_bits`, the secret's entropy) says nothing;
    :math:`-\infty` is "violated", :math:`+\infty` "vacuous". A NaN bound (an undefined
    formula) is no claim at all and raises ValueError: it is not the claim being false.
    Used for PriPrune's Theorem 1
    (``bounds.priprune``, published and corrected), in bits per round.

    A lower limit above the ceiling is impossible (:math:`I(X;Y)` would exceed the
    secret's entropy) and raises ValueError; a relative slack of ``_SLACK`` (1e-12) lets
    the same :math:`\log_2 N` computed by two routes differ in its last bits.

    Parameters
    ----------
    bound_bits : the claimed upper bound, bits (a float, infinities allowed, not NaN).
    ceiling_bits : the entropy ceiling, finite bits :math:`\ge 0`.
    exact_low_bits : lower end of the exact leakage's interval, finite bits, or None.
    lower_bound_bits : a lower bound from an attack (Fano), finite bits, or None.

    Returns
    -------
    str, one of "valid", "vacuous", "violated".

    Examples
    --------
    >>> theorem1_status(5.0, ceiling_bits=10.8, exact_low_bits=2.0)
    'valid'
    >>> theorem1_status(6036.0, ceiling_bits=10.8)
    'vacuous'
    >>> theorem1_status(-3946.0, ceiling_bits=10.8)
    'violated'
    """
    func = "theorem1_status"
    if isinstance(bound_bits, bool) or not isinstance(bound_bits, Real | np.number):
        raise ValueError(
            f"The 'bound_bits' parameter of {func} must be a real number (infinities "
            f"allowed). Got {bound_bits!r} instead."
        )
    bound = float(bound_bits)
    if math.isnan(bound):
        raise ValueError(
            f"The 'bound_bits' parameter of {func} must be a number in [-inf, inf], not NaN "
            f"(an undefined bound claims nothing). Got {bound!r} instead."
        )
    ceiling = check_real("ceiling_bits", ceiling_bits, func=func, low=0)
    limits = {
        "exact_low_bits": _optional_limit("exact_low_bits", exact_low_bits, func),
        "lower_bound_bits": _optional_limit("lower_bound_bits", lower_bound_bits, func),
    }
    for name, value in limits.items():
        if value is not None and value > ceiling * (1 + _SLACK) + _SLACK:
            raise ValueError(
                f"The '{name}' parameter of {func} must be at most ceiling_bits (a lower "
                f"limit of I(X; Y) cannot exceed the entropy ceiling). Got {name}={value!r} "
                f"> ceiling_bits={ceiling!r} instead."
            )
    lower = max([0.0, *(v for v in limits.values() if v is not None)])
    if bound < lower:
        return "violated"
    if bound >= ceiling:
        return "vacuous"
    return "valid"
