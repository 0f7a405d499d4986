"""The gradient statistics the bounds take: Delta and d* from a covariance spectrum."""

from __future__ import annotations

import math  # noqa: F401 (the doctests use it)

import numpy as np

from pruneleak.bounds._vector import as_output, real_array
from pruneleak.bounds.validation import check_finite_array, check_open_unit


def delta_from_log_pseudo_det(log_pdet):
    r""":math:`\Delta = \log|\det\Sigma^{-1/2}| = -\tfrac12\log\mathrm{pdet}(\Sigma)` in nats.

    ``log_pdet``: natural log of the pseudo-determinant (product of the non-zero
    eigenvalues) of the centred per-sample gradient covariance (scalar or array).

    Examples
    --------
    >>> delta_from_log_pseudo_det(2.0)
    -1.0
    """
    return as_output(-0.5 * real_array("log_pdet", log_pdet, func="delta_from_log_pseudo_det"))


def spectrum_summary(eigenvalues, *, rtol=None):
    r"""``(d_star, log_pdet)`` from the eigenvalues of a covariance matrix.

    Eigenvalues above ``rtol * max(eigenvalues)`` (default ``n * eps``, numpy's
    ``matrix_rank`` rule; ``rtol`` in (0, 1), so the largest is always kept) form the
    non-singular part: :math:`d^* \ge 1` is their number and ``log_pdet`` the sum of their
    natural logs (nats; finite, :math:`|\,\cdot\,| < 745\,d^*`). Raises ValueError for an
    empty spectrum, one that is not positive semi-definite (an eigenvalue below
    ``-rtol * max``) or one with no positive eigenvalue.

    Examples
    --------
    >>> d_star, log_pdet = spectrum_summary([4.0, 1.0, 0.0])
    >>> d_star, log_pdet == math.log(4.0)
    (2, True)
    """
    func = "spectrum_summary"
    eig = check_finite_array("eigenvalues", eigenvalues, func=func, ndim=1)
    if eig.size == 0:
        raise ValueError(
            f"The 'eigenvalues' parameter of {func} must be non-empty. Got shape (0,) instead."
        )
    if eig.max() <= 0:
        raise ValueError(
            f"The 'eigenvalues' parameter of {func} must contain a positive eigenvalue "
            f"(positive semi-definite covariance). Got max {float(eig.max())!r} instead."
        )
    if rtol is None:
        rtol = eig.size * np.finfo(float).eps
    rtol = check_open_unit("rtol", rtol, func=func)
    tol = rtol * eig.max()
    if eig.min() < -tol:
        raise ValueError(
            f"The 'eigenvalues' parameter of {func} must describe a positive semi-definite "
            f"matrix. Got eigenvalue {float(eig.min())!r} < -{tol:g} instead."
        )
    kept = eig[eig > tol]
    return int(kept.size), float(np.sum(np.log(kept)))
