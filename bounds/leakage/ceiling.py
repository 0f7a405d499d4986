r"""The ceiling: no release can leak more than the secret's entropy, :math:`B\log_2 M` bits
(batch drawn with replacement) or :math:`\log_2\binom{M}{B}` (without)."""

from __future__ import annotations

import math

import mpmath  # a dependency of sympy

from pruneleak.bounds.validation import check_bool, check_int


def ceiling_bits(candidates: int, batch_size: int = 1, *, replacement: bool = True) -> float:
    r"""Entropy ceiling :math:`I(X; Y) \le H(X) \le B \log_2 M` bits (or
    :math:`\log_2\binom{M}{B}` for a batch of distinct candidates, ``replacement=False``).

    .. math::

        I(X; Y) = H(X) - H(X \mid Y) \le H(X) \le
        \begin{cases} B \log_2 M & \text{replacement}\\
        \log_2\binom{M}{B} & \text{no replacement}\end{cases}

    Assumptions: the secret :math:`X` is a batch of :math:`B` candidates, each from a
    set of :math:`M`; :math:`H(X)` is at most :math:`\log_2 M^B` whatever the prior and
    whatever the release (Cover & Thomas, *Elements of Information Theory*, 2nd ed.,
    Thm. 2.6.4, :math:`H(X) \le \log|\mathcal X|`). It is exact for :math:`B` independent
    uniform draws (with replacement, ordered); a batch of :math:`B` distinct candidates
    (without replacement, unordered) has the smaller entropy
    :math:`\log_2\binom{M}{B}`, so the ceiling is valid but not tight there;
    ``replacement=False`` gives that smaller value, exact for a uniformly random
    :math:`B`-subset (the secret of :func:`~bounds.leakage.batches.batch_leakage`).

    Computation: :math:`\log_2\binom{M}{B}` from the exact integer when
    :math:`\min(B, M-B) \le 256` (``math.comb`` is then fast), else as
    :math:`(\ln\Gamma(M+1) - \ln\Gamma(B+1) - \ln\Gamma(M-B+1))/\ln 2` in ``mpmath``
    with as many bits as :math:`M` has plus 64, so the differences of the huge log-gammas
    lose nothing (``math.comb(2**62, 2**16)`` alone takes seconds).

    Parameters
    ----------
    candidates : :math:`M \ge 1`, a Python or numpy integer of any size.
    batch_size : :math:`B \ge 1`; with ``replacement=False`` also :math:`B \le M`.
    replacement : True (default): :math:`B` independent draws, ordered; False: a set of
        :math:`B` distinct candidates, unordered.

    Returns
    -------
    float, in bits (total over the batch, one round). ValueError when
    :math:`B\log_2 M` exceeds the largest float, 1.8e308 (only for astronomically large
    ``batch_size``).

    Examples
    --------
    >>> round(ceiling_bits(1797), 4)
    10.8114
    >>> ceiling_bits(16, batch_size=3)
    12.0
    >>> ceiling_bits(16, batch_size=3, replacement=False)  # log2 560
    9.129283016944967
    """
    func = "ceiling_bits"
    m = check_int("candidates", candidates, func=func, low=1)
    replacement = check_bool("replacement", replacement, func=func)
    if replacement:
        b = check_int("batch_size", batch_size, func=func, low=1)
        bits = math.log2(b) + math.log2(math.log2(m)) if m > 1 else -math.inf
        if bits >= 1024:  # B log2 M >= 2**1024
            raise ValueError(
                f"The 'batch_size' parameter of {func} must keep B log2 M below the largest "
                f"float, 1.8e308 bits. Got batch_size = 10**{math.log10(b):.1f} with "
                f"candidates = 10**{math.log10(m):.1f} instead."
            )
        return b * math.log2(m)
    b = check_int("batch_size", batch_size, func=func, low=1, high=m)
    return _log2_binomial(m, b)


# Below this, log2 C(M, B) comes from the exact integer (math.comb is then fast).
_EXACT_BINOMIAL = 256


def _log2_binomial(m: int, b: int) -> float:
    """:math:`\\log_2\\binom{m}{b}` (see ``ceiling_bits``)."""
    k = min(b, m - b)
    if k <= _EXACT_BINOMIAL:
        return math.log2(math.comb(m, k))
    with mpmath.workprec(m.bit_length() + 64):
        nats = mpmath.loggamma(m + 1) - mpmath.loggamma(k + 1) - mpmath.loggamma(m - k + 1)
        return float(nats / mpmath.log(2))
