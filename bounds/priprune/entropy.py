"""Binary entropy and its Taylor series around 1/2 (eq. 15 (b)), in bits or nats."""

from __future__ import annotations

import math  # noqa: F401 (the doctests use it)

import numpy as np

from pruneleak.bounds._vector import as_output
from pruneleak.bounds.priprune._numeric import _args, _bound
from pruneleak.bounds.priprune.expressions import LN2
from pruneleak.bounds.validation import check_int

MAX_TAYLOR_TERMS = 1 << 20
_CHUNK_FLOATS = 1 << 20


def binary_entropy(p, *, unit="bits"):
    r"""Binary entropy :math:`H_b(p) = -p\log p - (1-p)\log(1-p)`, in ``unit``.

    Examples
    --------
    >>> binary_entropy(0.5), binary_entropy(0.0)
    (1.0, 0.0)
    >>> binary_entropy(0.5, unit="nats") == math.log(2)
    True
    """
    return _bound("hb", False, "binary_entropy", unit, p=p)


def binary_entropy_taylor(p, n_terms, *, unit="bits"):
    r"""Taylor series of :math:`H_b` around 1/2, truncated after ``n_terms`` terms (eq. 15 (b)).

    .. math:: H_b(p) = 1 - \frac{1}{2\ln2}\sum_{n\ge1}\frac{(1-2p)^{2n}}{n(2n-1)} \quad\text{bits}.

    Every term is non-negative, so each truncation is an upper bound on :math:`H_b(p)`.
    A series, not a closed form: its only copy is this one (tests check it against
    ``binary_entropy``). ``n_terms`` is at most ``MAX_TAYLOR_TERMS`` (2**20): the terms
    are at most :math:`1/(n(2n-1))`, so the tail beyond it is below 3.5e-7 bits even at
    :math:`p\in\{0, 1\}` (and vanishes in float64 for :math:`|1-2p| < 0.99`); the terms
    are summed in chunks of at most 2**20 floats.

    Examples
    --------
    >>> binary_entropy_taylor(0.5, 3)  # every term vanishes at 1/2
    1.0
    >>> binary_entropy_taylor(0.25, 1) == 1 - 0.25 / (2 * math.log(2))
    True
    """
    func = "binary_entropy_taylor"
    a = _args(func, unit, p=p)
    n_terms = check_int("n_terms", n_terms, func=func, low=0, high=MAX_TAYLOR_TERMS)
    base = (1 - 2 * a.p)[..., None]
    chunk = max(1, _CHUNK_FLOATS // max(a.p.size, 1))
    total = np.zeros(a.p.shape)
    for start in range(1, n_terms + 1, chunk):
        n = np.arange(start, min(start + chunk, n_terms + 1), dtype=float)
        total += np.sum(base ** (2 * n) / (n * (2 * n - 1)), axis=-1)
    bits = 1 - total / (2 * LN2)
    return as_output(bits * (LN2 if a.unit == "nats" else 1.0))
