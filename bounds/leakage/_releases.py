"""Shared by the modules of ``bounds.leakage``: the release matrix, validated and centred."""

from __future__ import annotations

import hashlib
import itertools
import math

import numpy as np

from pruneleak.bounds.validation import check_finite_array


def release_matrix(releases, func: str) -> np.ndarray:
    """``releases`` as a finite float (M, k) array with M >= 1 rows, one per candidate.

    Examples
    --------
    >>> release_matrix([[1, 2], [3, 4]], "f").shape
    (2, 2)
    """
    arr = check_finite_array("releases", releases, func=func, ndim=2)
    if arr.shape[0] < 1:
        raise ValueError(
            f"The 'releases' parameter of {func} must have at least one row (candidate). "
            f"Got shape {arr.shape} instead."
        )
    return arr


def centred_scaled(releases: np.ndarray) -> tuple[np.ndarray, int]:
    r"""``(c, e)`` with :math:`c\,2^e` = ``releases`` minus their mean row, :math:`|c| < 1`.

    The posterior, the covariance and the distances are translation invariant, and centring
    keeps the inner products small (less cancellation in :math:`\langle y, r_j\rangle`).
    ``e`` is the exponent of the largest :math:`|r_{ij} - \bar r_j|` (it lies in
    :math:`[2^{e-1}, 2^e)`), so every step stays finite for any finite input: each column's
    mean is taken in units of a power of two above its largest entry, and the differences
    are halved first when an entry reaches :math:`2^{1022}` (where :math:`r - \bar r` could
    exceed 1.8e308). Scaling by a power of two is exact outside the subnormal range. All
    rows equal: ``c`` = 0 and ``e`` = 0.

    Examples
    --------
    >>> centred_scaled(np.array([[1.0, 5.0], [3.0, 5.0]]))
    (array([[-0.5,  0. ],
           [ 0.5,  0. ]]), 1)
    """
    if releases.size == 0:
        return np.zeros(releases.shape), 0
    column_exponent = np.frexp(np.abs(releases).max(axis=0))[1]
    mean = np.ldexp(np.ldexp(releases, -column_exponent).mean(axis=0), column_exponent)
    shift = 1 if np.abs(releases).max() >= 2.0**1022 else 0
    diff = np.ldexp(releases, -shift) - np.ldexp(mean, -shift)
    largest = np.abs(diff).max()
    if largest == 0:
        return np.zeros(releases.shape), 0
    exponent = int(np.frexp(largest)[1])
    return np.ldexp(diff, -exponent), exponent + shift


def gram_eigenvalues(c: np.ndarray) -> np.ndarray:
    r"""Eigenvalues (ascending) of the smaller of :math:`cc^\top` (:math:`M\times M`) and
    :math:`c^\top c` (:math:`k\times k`): both have the non-zero spectrum :math:`\sigma_i(c)^2`,
    and the smaller costs :math:`O(\min(M,k)^2\max(M,k))`. Empty for an empty ``c``.

    Examples
    --------
    >>> gram_eigenvalues(np.array([[3.0, 0.0, 0.0], [0.0, 4.0, 0.0]]))
    array([ 9., 16.])
    """
    gram = c @ c.T if c.shape[0] <= c.shape[1] else c.T @ c
    return np.linalg.eigvalsh(gram) if gram.size else gram.ravel()


def difference_norm(a: np.ndarray, b: np.ndarray) -> tuple[float, int]:
    r"""``(x, e)`` with :math:`\|a - b\|_2 = x\,2^e` for finite vectors (``(0.0, 0)`` when
    equal): no overflow or underflow, although the norm itself may exceed 1.8e308. For
    (q, k) arrays, the norm of the sum of the q row differences,
    :math:`\|\sum_t (a_t - b_t)\|_2`.

    The differences are formed directly (halved first only when one would overflow) and
    scaled by a power of two before they are summed and squared, so ``x`` carries the
    rounding of one subtraction, of the sum over rows and of ``np.linalg.norm`` alone (no
    cancellation of large common parts of :math:`a_t` and :math:`b_t`).

    Examples
    --------
    >>> difference_norm(np.array([0.0, 0.0]), np.array([3.0, 4.0]))
    (0.625, 3)
    >>> difference_norm(np.array([1.7e308]), np.array([-1.7e308]))[1]
    1025
    >>> difference_norm(np.array([[1e9, 3.0], [5.0, 0.0]]), np.array([[1e9, 0.0], [1.0, 0.0]]))
    (0.625, 3)
    """
    with np.errstate(over="ignore"):
        diff = a - b
    shift = 0
    if not np.all(np.isfinite(diff)):
        diff, shift = np.ldexp(a, -1) - np.ldexp(b, -1), 1
    largest = np.abs(diff).max(initial=0.0)
    if largest == 0:
        return 0.0, 0
    exponent = int(np.frexp(largest)[1])
    scaled = np.ldexp(diff, -exponent)
    total = scaled.sum(axis=0) if scaled.ndim == 2 else scaled
    return float(np.linalg.norm(total)), exponent + shift


def representable(x: float, exponent: int) -> bool:
    r"""Whether :math:`x\,2^e` is at most the largest float, 1.8e308 (``math.ldexp`` is
    exact, so the largest float itself counts; a log2 comparison would round it away)."""
    try:
        math.ldexp(x, exponent)
    except OverflowError:
        return False
    return True


# Centred releases over s beyond 1e150 would overflow the squared norms (float64 max 1.8e308).
_MAX_SCALED = 1e150


def scaled_releases(releases: np.ndarray, noise_std: float, func: str) -> np.ndarray:
    r"""Centred rows divided by ``noise_std > 0``: the posterior's logits are inner products
    of these. ValueError naming ``noise_std`` when the largest row norm
    :math:`\max_i\|r_i - \bar r\|/s` exceeds 1e150 (its square, and the logits, would
    overflow).

    Examples
    --------
    >>> scaled_releases(np.array([[0.0], [2.0]]), 0.5, "f")
    array([[-2.],
           [ 2.]])
    """
    c, exponent = centred_scaled(releases)
    if not c.any():
        return c
    mantissa, s_exponent = math.frexp(noise_std)
    row_norm = math.sqrt(float(np.max(np.einsum("ij,ij->i", c, c))))
    log2_ratio = math.log2(row_norm / mantissa) + exponent - s_exponent
    if log2_ratio > math.log2(_MAX_SCALED):
        ratio = f"{2.0**log2_ratio:.3g}" if log2_ratio < 1023 else f"2**{log2_ratio:.0f}"
        raise ValueError(
            f"The 'noise_std' parameter of {func} is too small for these releases: "
            f"max ||r_i - mean|| / s = {ratio} > {_MAX_SCALED:g} would overflow the squared "
            f"norms. Got {noise_std!r} instead; pass noise_std=0 for a noiseless release."
        )
    return np.ldexp(c / mantissa, exponent - s_exponent)


def distinct_rows(releases: np.ndarray) -> np.ndarray:
    """Multiplicity of each distinct row (exact equality of values), in the order of the
    rows' first occurrence.

    Rows are grouped by a 128-bit BLAKE2b digest of their bytes after ``+ 0.0`` (which
    turns -0.0 into 0.0, so that equal finite values have equal bytes), and each row is
    then compared exactly with the first row of its group: a digest collision of unequal
    rows starts a group of its own instead of merging them. Linear in the matrix's size,
    where ``np.unique(releases, axis=0)`` sorts rows as structured records, which takes
    minutes for a few rows of millions of coordinates (one upload of a paper-size model).

    Examples
    --------
    >>> distinct_rows(np.array([[0.0], [1.0], [-0.0]]))
    array([2, 1])
    """
    if releases.shape[1] == 0:
        return np.array([releases.shape[0]])
    rows = np.ascontiguousarray(releases) + 0.0
    firsts: dict[bytes, list[int]] = {}  # digest -> first row of each group with it
    counts: dict[int, int] = {}  # first row of a group -> its multiplicity
    for i, row in enumerate(rows):
        digest = hashlib.blake2b(row.tobytes(), digest_size=16).digest()
        groups = firsts.setdefault(digest, [])
        first = next((j for j in groups if np.array_equal(rows[j], row)), None)
        if first is None:
            groups.append(i)
            counts[i] = 1
        else:
            counts[first] += 1
    return np.array([counts[i] for i in sorted(counts)])


def group_entropy_bits(counts: np.ndarray) -> float:
    r"""Entropy (bits) of a uniform secret observed through its group: groups of ``counts``
    equally likely secrets, :math:`N = \sum_g c_g`.

    .. math:: H = \sum_g \frac{c_g}{N}\log_2\frac{N}{c_g}
              = \log_2 N - \frac1N\sum_g c_g\log_2 c_g

    The second form is exactly :math:`\log_2 N` when every group is a single secret
    (no rounding from summing :math:`N` equal terms), so it never exceeds the ceiling.

    Examples
    --------
    >>> group_entropy_bits(np.array([1, 1, 1, 1]))
    2.0
    >>> group_entropy_bits(np.array([2, 1, 1]))
    1.5
    """
    n = int(counts.sum())
    value = math.log2(n) - float(np.sum(counts * np.log2(counts))) / n
    return min(max(value, 0.0), math.log2(n))


def all_subsets(m: int, b: int) -> np.ndarray:
    """(b, N) int array: column n is the n-th b-subset of range(m), lexicographic order.

    Examples
    --------
    >>> all_subsets(4, 2)
    array([[0, 0, 0, 1, 1, 2],
           [1, 2, 3, 2, 3, 3]])
    """
    n = math.comb(m, b)
    if b == 1:
        return np.arange(m, dtype=np.intp)[None, :]
    if b == 2:
        return np.stack(np.triu_indices(m, 1)).astype(np.intp)
    flat = np.fromiter(
        itertools.chain.from_iterable(itertools.combinations(range(m), b)),
        dtype=np.intp,
        count=n * b,
    )
    return np.ascontiguousarray(flat.reshape(n, b).T)


def subset_sums(values: np.ndarray, subsets: np.ndarray) -> np.ndarray:
    """Sum of ``values[i]`` over each subset; ``subsets`` (b, ...) indexes the first axis.
    Members are added in the order of the rows of ``subsets`` (index order for
    ``all_subsets``), so float sums are reproducible.

    Examples
    --------
    >>> subset_sums(np.array([1.0, 2.0, 4.0]), all_subsets(3, 2))
    array([3., 5., 6.])
    """
    total = values[subsets[0]].copy()
    for col in subsets[1:]:
        total += values[col]
    return total
