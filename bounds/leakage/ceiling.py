r"""The ceiling: no release can leak more than the secret's entropy, :math:`B\log_2 M` bits
(batch drawn with replacement) or :math:`\log_2\binom{M}{B}` (without)."""

from __future__ import annotations

import math

import numpy as np

from bounds.validation import check_int


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

    Parameters
    ----------
    candidates : :math:`M \ge 1`.
    batch_size : :math:`B \ge 1`; with ``replacement=False`` also :math:`B \le M`.
    replacement : True (default): :math:`B` independent draws, ordered; False: a set of
        :math:`B` distinct candidates, unordered.

    Returns
    -------
    float, in bits (total over the batch, one round).

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
    if not isinstance(replacement, bool | np.bool_):
        raise ValueError(
            f"The 'replacement' parameter of {func} must be True or False. "
            f"Got {replacement!r} instead."
        )
    if replacement:
        b = check_int("batch_size", batch_size, func=func, low=1)
        return b * math.log2(m)
    b = check_int("batch_size", batch_size, func=func, low=1, high=m)
    return math.log2(math.comb(m, b))
