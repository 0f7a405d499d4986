r"""Releases from their Gram matrix: fewer coordinates with the same pairwise distances.

Why. The posterior of :mod:`bounds.leakage.exact` and :mod:`bounds.leakage.batches` depends
on the releases only through their pairwise distances: the noise :math:`N(0, s^2 I_k)` is
isotropic, so the leakage is invariant under translations and isometries of the
:math:`M` release vectors :math:`r_i\in\mathbb R^k`. Any :math:`F\in\mathbb R^{M\times r}`
whose rows have the distances of the releases gives the same bits, and :math:`r\le M-1`
where :math:`k` may be millions. ``sims`` computes the :math:`M\times M` Gram matrix
:math:`K_{ij} = \langle r_i, r_j\rangle` (of any translate of the releases:
:func:`sims.fl.release.release_gram`), never the :math:`M\times k` matrix.

Classical multidimensional scaling (Torgerson 1952, *Psychometrika* 17, 401-419; Gower
1966, *Biometrika* 53, 325-338): with :math:`D_{ij} = \|r_i - r_j\|^2 = K_{ii} + K_{jj} -
2K_{ij}` and :math:`H = I - \tfrac1M\mathbf 1\mathbf 1^\top`,

.. math::

    C = HKH = -\tfrac12 HDH = U\Lambda U^\top,\qquad F = U_+\Lambda_+^{1/2},\qquad
    FF^\top = C,\qquad \|f_i - f_j\|^2 = C_{ii} + C_{jj} - 2C_{ij} = D_{ij},

:math:`C` the Gram of the centred releases, :math:`U_+, \Lambda_+` its eigenpairs above a
tolerance (:func:`releases_from_gram`).

Precision. Let :math:`\kappa = \max_i K_{ii}` (the largest squared norm of the Gram as
computed; its entries' round-off is relative to it). The squared distances of :math:`F`
carry an absolute error of about :math:`M\,\epsilon\,\max(\kappa, \lambda_{\max}(C))`,
:math:`\epsilon = 2^{-52}`: the round-off of :math:`K` itself, that of centring (a few
:math:`\epsilon\kappa` per entry), the backward error of the symmetric eigensolver (a small
multiple of :math:`M\epsilon\|C\|_2`), and the dropped eigenvalues (each :math:`\le`
tolerance; together they move any squared distance by at most twice the tolerance, since
:math:`\sum_k (u_{ik} - u_{jk})^2 \le 2`). The logits of the posterior move by that error
over :math:`2s^2`: :math:`F` is for :math:`s > 0` with :math:`s^2` far above it. Distances
below :math:`\sqrt{\epsilon\kappa}` cannot be told from zero: equality of releases, which
is all that matters at :math:`s = 0`, is decided by :func:`gram_groups` with a stated
tolerance, and ``releases_from_gram(gram, groups=...)`` gives the candidates of a group one
and the same row, so that :func:`~bounds.leakage.exact.exact_leakage` and
:func:`~bounds.leakage.batches.batch_leakage` at :math:`s = 0` count the groups.

Memory and time: a few :math:`M\times M` float64 arrays (the Gram, its centred copy, the
eigenvectors and the eigensolver's workspace) and :math:`O(M^3)` operations.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from pruneleak.bounds.validation import check_finite_array, check_int, check_real

#: Unit round-off of float64, :math:`u = 2^{-53}`.
UNIT_ROUNDOFF = 2.0**-53
# Asymmetry, and negative eigenvalues, refused beyond this times the largest diagonal entry
# (times M for eigenvalues): the round-off of a float64 Gram of up to ~1e9 terms (k u) stays
# below it, so only a matrix that is no Gram (a distance matrix, misplaced blocks) is refused.
_LOOSE = 1e-6
# Entries of one block of squared distances in gram_groups (rows x M): 16 MiB.
_BLOCK_FLOATS = 1 << 21


def _gram_matrix(gram, func: str) -> tuple[np.ndarray, int]:
    r"""``gram`` validated as a finite symmetric (M, M) matrix with a non-negative diagonal,
    and no entry above its largest diagonal entry (Cauchy-Schwarz, up to round-off),
    returned as ``(k, e)``: ``k`` the symmetrised matrix times :math:`2^{-e}` (a new
    array), ``e`` even with the largest diagonal entry of ``k`` in :math:`[1/4, 1)` (0 when
    the diagonal is 0). Scaling by a power of two is exact outside the subnormal range, and
    keeps every later step finite for any finite input: entries at most about 1, so centred
    entries and squared distances stay below 4, and :math:`F = 2^{e/2} F_k` exactly."""
    k = check_finite_array("gram", gram, func=func, ndim=2)
    if k.shape[0] < 1 or k.shape[1] != k.shape[0]:
        raise ValueError(
            f"The 'gram' parameter of {func} must be a square (M, M) matrix with M >= 1. "
            f"Got shape {k.shape} instead."
        )
    diagonal = np.diag(k)
    if diagonal.min() < 0:
        raise ValueError(
            f"The 'gram' parameter of {func} must have a non-negative diagonal (squared "
            f"norms). Got {diagonal.min():g} at row {int(np.argmin(diagonal))} instead."
        )
    largest = float(diagonal.max())
    entry = float(np.abs(k).max())
    if entry > (1 + _LOOSE) * largest:
        raise ValueError(
            f"The 'gram' parameter of {func} must have no entry larger than its largest "
            f"diagonal entry {largest:g} (Cauchy-Schwarz: |K_ij| <= sqrt(K_ii K_jj)). Got "
            f"{entry:g} instead."
        )
    exponent = 0 if largest == 0 else int(np.frexp(largest)[1])
    exponent += exponent % 2
    half = np.ldexp(k, -exponent - 1)
    asymmetry = float(np.abs(half - half.T).max())  # |K - K^T| / 2^(e + 1): no overflow
    if asymmetry > _LOOSE * np.ldexp(largest, -exponent - 1):
        raise ValueError(
            f"The 'gram' parameter of {func} must be symmetric, up to {_LOOSE:g} times its "
            f"largest diagonal entry {largest:g}. Got max |K - K^T| = "
            f"{_scaled_text(asymmetry, exponent + 1)} instead."
        )
    return half + half.T, exponent


def _scaled_text(x: float, exponent: int) -> str:
    r""":math:`x\,2^e` for a message, written as such when it exceeds the largest float."""
    try:
        return f"{math.ldexp(x, exponent):g}"
    except OverflowError:
        return f"{x:g} * 2**{exponent}"


def releases_from_gram(gram, *, rtol: float | None = None, groups=None) -> np.ndarray:
    r"""An :math:`(M, r)` float64 matrix :math:`F` whose rows have the pairwise distances of
    the releases whose Gram matrix is ``gram`` (module docstring).

    .. math::

        C = HKH = U\Lambda U^\top,\qquad F = U_+\Lambda_+^{1/2},\qquad
        \|f_i - f_j\|^2 = K_{ii} + K_{jj} - 2K_{ij}

    (classical multidimensional scaling; ``numpy.linalg.eigh``). Eigenvalues at or below
    :math:`\tau = \text{rtol}\cdot\max(\kappa, \lambda_{\max})`, :math:`\kappa = \max_i
    K_{ii}`, are dropped, round-off negatives included; default :math:`\text{rtol} =
    M\epsilon`, numpy.linalg.matrix_rank's rule with the scale of the uncentred Gram, the
    scale of its round-off: eigenvalues below it are indistinguishable from 0 (Weyl's
    inequality bounds their error by :math:`M` times the largest entry error). Columns in
    decreasing order of eigenvalue; :math:`r` is the numerical rank of :math:`C`
    (:math:`\le M - 1`; 0 when all releases are equal). Squared distances are exact to
    about :math:`M\epsilon\max(\kappa, \lambda_{\max})` in squared units (module
    docstring): use :math:`F` at noise :math:`s > 0` with :math:`s^2` far above that.

    Parameters
    ----------
    gram : (M, M) finite symmetric positive semi-definite array, :math:`K_{ij} = \langle
        r_i, r_j\rangle` for the releases or any translate of them (the uncentred Gram as
        computed: its diagonal sets the round-off scale). An entry above
        :math:`(1 + 10^{-6})\kappa`, asymmetry beyond :math:`10^{-6}\kappa`, or an
        eigenvalue of :math:`C` below :math:`-10^{-6} M\kappa` means no Gram and is
        refused.
    rtol : relative eigenvalue tolerance in [0, 1) (default :math:`M\epsilon`).
    groups : None, or (M,) integer labels of groups of equal releases (e.g.
        :func:`gram_groups`): every candidate gets the row of its group's first member, so
        that equal releases have bit-identical rows, as :math:`s = 0` needs.

    Returns
    -------
    (M, r) float64 ndarray, centred (its rows sum to ~0 without ``groups``).

    Examples
    --------
    >>> r = np.array([[0.0, 0.0], [3.0, 4.0], [3.0, 4.0]])
    >>> f = releases_from_gram(r @ r.T)
    >>> f.shape, round(float(np.linalg.norm(f[0] - f[1])), 12)
    ((3, 1), 5.0)
    >>> f = releases_from_gram(r @ r.T, groups=gram_groups(r @ r.T, rtol=1e-12))
    >>> bool(np.all(f[1] == f[2]))
    True
    """
    func = "releases_from_gram"
    k, exponent = _gram_matrix(gram, func)
    scale = float(np.diag(k).max())
    m = k.shape[0]
    rtol = m * 2 * UNIT_ROUNDOFF if rtol is None else _check_rtol(rtol, func)
    labels = None if groups is None else _check_groups(groups, m, func)
    means = k.mean(axis=1)
    k -= means[:, None]
    k -= means[None, :]
    k += means.mean()
    eigenvalues, vectors = np.linalg.eigh(k)
    if eigenvalues[0] < -_LOOSE * m * scale:
        raise ValueError(
            f"The 'gram' parameter of {func} must be positive semi-definite (a Gram matrix). "
            f"Got an eigenvalue {_scaled_text(float(eigenvalues[0]), exponent)} of the centred "
            f"matrix instead (largest diagonal entry {_scaled_text(scale, exponent)})."
        )
    tolerance = rtol * max(scale, float(eigenvalues[-1]))
    kept = np.flatnonzero(eigenvalues > tolerance)[::-1]
    f = np.ldexp(vectors[:, kept] * np.sqrt(eigenvalues[kept]), exponent // 2)
    if labels is None:
        return f
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    return f[first[inverse.ravel()]]


def gram_groups(gram, *, rtol: float) -> np.ndarray:
    r"""Groups of releases the Gram matrix cannot tell apart: (M,) int labels, numbered in
    order of first member (candidate 0 is in group 0).

    Candidates :math:`i, j` are linked when

    .. math:: D_{ij} = K_{ii} + K_{jj} - 2K_{ij} \le \text{rtol}\cdot\max(K_{ii}, K_{jj}),

    and the groups are the connected components of the links (single linkage: a chain of
    links joins its ends). The right side is the scale of the round-off of :math:`D_{ij}`:
    an entry :math:`\langle x, y\rangle` summed in float64 over :math:`k` products errs by
    at most :math:`\gamma_k |x|^\top|y| \le \gamma_k\max(\|x\|^2, \|y\|^2)` (Higham,
    *Accuracy and Stability of Numerical Algorithms*, 2nd ed., 2002, eq. (3.5)), so with
    ``rtol`` at least the relative round-off of :math:`D`
    (:func:`gram_rounding_rtol`), two candidates in different groups certainly have
    different releases, while candidates in one group have equal releases or releases
    closer than the Gram can resolve (distance below about
    :math:`\sqrt{\text{rtol}\,\max K_{ii}}`). The entropy of the groups is therefore a
    **lower bound** on the :math:`s = 0` leakage of the exact releases (merging groups only
    lowers it), equal to it when every two distinct releases are farther apart than that;
    releases nearer than it need the vectors themselves (e.g. float64 release vectors and
    exact comparison).

    The tolerance must cover how ``gram`` was computed: :func:`gram_rounding_rtol` of the
    number of summed products covers a Gram summed over the coordinates directly (the
    gradients themselves taken as exact). ``sims.gradients.per_sample.per_sample_gram``
    subtracts a layer's pruned coordinates from its full Gram when at most 20% are pruned;
    there the round-off is relative to the whole layer's gradient norms: count all its
    coordinates, and raise ``rtol`` where pruned coordinates may carry most of the norm.

    Parameters
    ----------
    gram : (M, M) finite symmetric array with a non-negative diagonal (as
        :func:`releases_from_gram`; uncentred, as computed).
    rtol : relative tolerance in [0, 1); 0 links exactly (in floating point) equal squared
        norms and inner products only.

    Returns
    -------
    (M,) int64 ndarray of group labels in ``[0, G)``. ``np.bincount`` gives the group
    sizes; ``releases_from_gram(gram, groups=labels)`` releases for :math:`s = 0`.

    Examples
    --------
    >>> r = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1e-6], [1.0, 1e-9]])
    >>> gram_groups(r @ r.T, rtol=gram_rounding_rtol(2)).tolist()  # 1e-9: below resolution
    [0, 1, 0, 2, 0]
    """
    func = "gram_groups"
    k, _ = _gram_matrix(gram, func)  # scaled: the links are scale invariant
    rtol = _check_rtol(rtol, func)
    m = k.shape[0]
    diagonal = np.diag(k).copy()
    labels = np.arange(m)
    rows = max(1, _BLOCK_FLOATS // m)
    for start in range(0, m, rows):
        norms = diagonal[start : start + rows, None]
        squared = norms + diagonal[None, :] - 2 * k[start : start + rows]
        near, other = np.nonzero(squared <= rtol * np.maximum(norms, diagonal[None, :]))
        links = coo_matrix(
            (np.ones(near.size), (labels[near + start], labels[other])), shape=(m, m)
        )
        labels = connected_components(links, directed=False)[1][labels]
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[inverse.ravel()]


def gram_rounding_rtol(terms: int) -> float:
    r""":math:`4\gamma_{k+3}`, :math:`\gamma_n = nu/(1 - nu)`, :math:`u = 2^{-53}`: a bound on
    the relative round-off of :math:`D_{ij} = K_{ii} + K_{jj} - 2K_{ij}` for a float64 Gram
    whose entries are sums of :math:`k` = ``terms`` products, in any order (module
    docstring of :func:`gram_groups`).

    Each of :math:`K_{ii}, K_{jj}, K_{ij}` errs by at most :math:`\gamma_k\max(K_{ii},
    K_{jj})` (Higham 2002, eq. (3.5), and Cauchy-Schwarz), so :math:`D_{ij}` by
    :math:`4\gamma_k\max(K_{ii}, K_{jj})`; three more roundings (the sum, the difference,
    one scaling such as :math:`lr^2`) raise :math:`k` to :math:`k + 3` (Higham Lemma 3.3).
    The error of the vectors themselves (e.g. the gradients' round-off) is not included.

    Examples
    --------
    >>> f"{gram_rounding_rtol(1000):.3g}"
    '4.45e-13'
    """
    n = check_int("terms", terms, func="gram_rounding_rtol", low=1, high=2**50) + 3
    return 4 * n * UNIT_ROUNDOFF / (1 - n * UNIT_ROUNDOFF)


def _check_rtol(rtol, func: str) -> float:
    return check_real("rtol", rtol, func=func, low=0, high=1, high_inclusive=False)


def _check_groups(groups, m: int, func: str) -> np.ndarray:
    """``groups`` as (M,) int64 labels, else ValueError naming it."""
    labels = check_finite_array("groups", groups, func=func)
    if labels.shape != (m,) or not np.all(labels == np.round(labels)):
        raise ValueError(
            f"The 'groups' parameter of {func} must be {m} integer labels, one per row of "
            f"'gram'. Got an array of shape {labels.shape} instead."
        )
    return labels.astype(np.int64)
