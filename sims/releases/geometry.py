"""The sufficient statistics of a deterministic release for its exact leakage at every noise.

For ``Y = r_X + N(0, s^2 I)`` with ``X`` uniform on ``n`` secrets, ``I(X; Y)`` depends on the
release vectors ``r_i`` only through their pairwise distances (the noise is isotropic, so
the leakage is invariant under translations and isometries), and at ``s = 0`` only through
which releases are equal. :class:`ReleaseGeometry` keeps exactly that, block of
coordinates by block (e.g. round by round): the centred Gram matrix ``sum_blocks C C^T``
(``n x n``, float64) and the classes of equal releases, refined by each block. A release
of ``T`` rounds of many coordinates is thus never held whole. The leakage is then
:func:`bounds.leakage.exact_leakage` on an ``(n, rank)`` matrix with that Gram matrix
(:func:`bounds.leakage.releases_from_gram`) for ``s > 0``, and the entropy of the classes
for ``s = 0``.
"""

from __future__ import annotations

import numpy as np

from pruneleak.bounds import leakage
from pruneleak.bounds.leakage._releases import group_entropy_bits
from pruneleak.sims.releases.value import LeakageValue

# Columns of a block centred and multiplied at a time (float64): 2**25 values, 256 MiB.
_BLOCK_VALUES = 1 << 25


class ReleaseGeometry:
    """Gram matrix and equality classes of ``n`` release vectors, built block by block.

    Args:
        n: the number of secrets (rows), >= 1.
    """

    def __init__(self, n: int):
        self.gram = np.zeros((n, n))
        self.groups = np.zeros(n, dtype=np.int64)
        self._factor: np.ndarray | None = None

    @classmethod
    def of_rows(cls, rows: np.ndarray) -> ReleaseGeometry:
        """The geometry of the ``(n, k)`` float64 release vectors ``rows``: their centred
        Gram matrix (in blocks of columns) and their classes of equal rows."""
        n, k = rows.shape
        geometry = cls(n)
        width = max(1, _BLOCK_VALUES // max(n, 1))
        for lo in range(0, k, width):
            block = rows[:, lo : lo + width]
            centred = block - block.mean(axis=0)
            geometry.gram += centred @ centred.T
        if k:
            geometry.groups = np.unique(rows, axis=0, return_inverse=True)[1].reshape(-1)
        return geometry

    def combine(self, other: ReleaseGeometry) -> None:
        """Append ``other``'s coordinates to every release vector: the Gram matrices add
        and two releases stay equal only if they are equal in both."""
        if len(other.groups) != len(self.groups):
            raise ValueError(
                f"The 'other' parameter of ReleaseGeometry.combine must have "
                f"{len(self.groups)} rows. Got {len(other.groups)} instead."
            )
        self.gram = self.gram + other.gram
        pairs = np.stack([self.groups, other.groups], axis=1)
        self.groups = np.unique(pairs, axis=0, return_inverse=True)[1].reshape(-1)
        self._factor = None

    def add(self, rows: np.ndarray) -> None:
        """Append the coordinates ``rows`` (``(n, k)`` float64) to every release vector."""
        self.combine(ReleaseGeometry.of_rows(rows))

    def copy(self) -> ReleaseGeometry:
        """An independent copy (the releases so far)."""
        other = ReleaseGeometry(len(self.groups))
        other.gram, other.groups, other._factor = self.gram.copy(), self.groups.copy(), self._factor
        return other

    def leakage(
        self, noise_std: float, *, samples: int, confidence: float, seed: int
    ) -> LeakageValue:
        """``I(X; Y)`` in bits for ``X`` uniform on the ``n`` secrets (module docstring):
        exact at ``s = 0`` (entropy of the classes of equal releases, success = classes /
        n), else Monte Carlo (:func:`bounds.leakage.exact_leakage`)."""
        n = len(self.groups)
        if noise_std == 0:
            counts = np.bincount(self.groups)
            bits = group_entropy_bits(counts) if n > 1 else 0.0
            success = counts.size / n
            return LeakageValue(
                bits=bits,
                ci_bits=(bits, bits),
                bayes_success=success,
                bayes_success_ci=(success, success),
                secrets=n,
                method="exact",
                samples=0,
            )
        result = leakage.exact_leakage(
            self.factor(), noise_std, samples=samples, confidence=confidence, seed=seed
        )
        return LeakageValue.of(result)

    def factor(self) -> np.ndarray:
        """An ``(n, rank)`` matrix whose rows have the releases' pairwise distances
        (:func:`bounds.leakage.releases_from_gram`): the releases for every bound that,
        like the leakage, depends on their geometry only (Gaussian channel, sensitivity).
        Computed once per state of the geometry (one eigendecomposition)."""
        if self._factor is None:
            self._factor = leakage.releases_from_gram(self.gram)
        return self._factor
