"""Per-sample gradient statistics behind PriPrune's Theorem 1 (arXiv:2310.19958).

Theorem 1 bounds the single-round leakage through ``d*``, the size of the largest
sub-vector of the per-sample gradient ``g_i(w, b)`` with a non-singular covariance
``Sigma_i`` (Assumption 1: that sub-vector has mean 0 and non-singular covariance), and
``Delta = |log det(Sigma_i^(-1/2))|``. Here ``Sigma`` is estimated from the n
per-sample gradients of a batch; ``d*`` is its rank and ``log det`` its
pseudo-determinant (product of the non-zero eigenvalues), obtained from the ``n x n``
Gram matrix so that the ``d x d`` covariance is never formed.

The sample can see at most ``n - 1`` directions (``n`` without centring): ``d* <= n - 1``
is a limit of the sample, not of the model, whose true ``d*`` may be far larger.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import torch
from torch import nn

from pruneleak.bounds.priprune import delta_from_log_pseudo_det
from pruneleak.bounds.validation import check_real
from pruneleak.sims.gradients.per_sample import per_sample_gram
from pruneleak.sims.pruning.mask import Mask

# Columns of the (n, d) gradient matrix converted to float64 at a time: bounds the extra
# memory of the Gram accumulation to about 2**25 float64 numbers (256 MiB).
_GRAM_CHUNK_ELEMENTS = 2**25


def gram_log_pseudo_determinant(
    gradients: torch.Tensor, *, center: bool = True, rtol: float | None = None
) -> tuple[int, float]:
    """Rank ``d*`` and natural log pseudo-determinant of the gradient covariance.

    With ``G`` the ``(n, d)`` gradients and ``Gc`` its column-centred version
    (``center=True``), ``Sigma = Gc^T Gc / (n - 1)`` (the sample covariance); with
    ``center=False``, ``Sigma = G^T G / n`` (second moments, Assumption 1's zero mean
    taken literally). The non-zero eigenvalues of ``Sigma`` are those of the ``n x n``
    Gram matrix ``Gc Gc^T / (n - 1)`` (resp. ``G G^T / n``), which is accumulated in
    float64 over column chunks on ``gradients``' device and diagonalised with
    ``torch.linalg.eigvalsh``.

    Eigenvalues ``<= tol`` count as zero, ``tol = lambda_max * max(n, d) * eps_float64``
    (numpy.linalg.matrix_rank's default rule applied to ``Sigma``'s eigenvalues) or
    ``tol = lambda_max * rtol`` when ``rtol`` is given. Float32 gradients are converted
    exactly, so only their own rounding matters: a column that is an exact linear
    combination of others before float32 rounding left an eigenvalue near
    ``2e-16 * lambda_max`` in our tests, below the default tolerance.

    Returns:
        ``(d_star, log_pdet)``: the number of eigenvalues above ``tol`` (Python int) and
        the sum of their natural logs (Python float, nats; 0.0 when ``d_star == 0``).
    """
    func = "gram_log_pseudo_determinant"
    if not isinstance(gradients, torch.Tensor) or gradients.ndim != 2:
        raise ValueError(
            f"The 'gradients' parameter of {func} must be a 2-D torch.Tensor (n, d). "
            f"Got {type(gradients).__name__} of shape "
            f"{tuple(getattr(gradients, 'shape', ()))} instead."
        )
    n, d = gradients.shape
    if n < (2 if center else 1) or d < 1:
        raise ValueError(
            f"The 'gradients' parameter of {func} must have n >= {2 if center else 1} rows "
            f"and d >= 1 columns. Got shape {(n, d)} instead."
        )
    if not bool(torch.isfinite(gradients).all()):
        raise ValueError(f"The 'gradients' parameter of {func} must contain only finite values.")
    if rtol is not None:
        rtol = check_real("rtol", rtol, func=func, low=0, low_inclusive=False)
    gram = torch.zeros(n, n, dtype=torch.float64, device=gradients.device)
    for chunk in gradients.split(max(1, _GRAM_CHUNK_ELEMENTS // n), dim=1):
        c = chunk.to(torch.float64)
        if center:
            c = c - c.mean(dim=0, keepdim=True)
        gram += c @ c.T
    return _spectrum_statistics(gram / ((n - 1) if center else n), d, rtol=rtol)


def _spectrum_statistics(sigma_gram: torch.Tensor, d: int, *, rtol: float | None):
    """``(d_star, log_pdet)`` from the ``(n, n)`` matrix whose non-zero eigenvalues are
    ``Sigma``'s, with the tolerance rule of :func:`gram_log_pseudo_determinant`."""
    eigenvalues = torch.linalg.eigvalsh(sigma_gram)
    largest = eigenvalues[-1].clamp(min=0)
    n = sigma_gram.shape[0]
    tol = largest * (max(n, d) * torch.finfo(torch.float64).eps if rtol is None else rtol)
    nonzero = eigenvalues[eigenvalues > tol]
    return int(nonzero.numel()), float(torch.log(nonzero).sum())


@dataclass(frozen=True)
class GradientStatistics:
    """Sufficient statistics of the per-sample gradients for PriPrune's Theorem 1.

    Attributes:
        n_samples: number of per-sample gradients n.
        d: number of gradient coordinates (after masking).
        d_star: rank of the estimated covariance, ``d*`` of Theorem 1 (``<= n - 1``
            when centred, a limit of the sample).
        log_pseudo_det: natural log of the covariance's pseudo-determinant (nats).
        centered: whether the sample covariance (True) or the second-moment matrix
            (False) was used.
    """

    n_samples: int
    d: int
    d_star: int
    log_pseudo_det: float
    centered: bool

    @property
    def delta(self) -> float:
        """Theorem 1's ``Delta = log|det(Sigma^(-1/2))|`` in nats (signed; positive when det < 1).

        Computed by :func:`bounds.priprune.delta_from_log_pseudo_det`, the one definition.
        """
        return float(delta_from_log_pseudo_det(self.log_pseudo_det))


def gradient_statistics(
    model: nn.Module,
    params: Mapping[str, torch.Tensor],
    images,
    labels,
    *,
    mask: Mask | None = None,
    center: bool = True,
    rtol: float | None = None,
) -> GradientStatistics:
    """``d*`` and ``Delta`` of PriPrune Theorem 1 estimated from one batch.

    Assumption 1 takes the gradient's mean to be zero. By default we centre (sample
    covariance, ``center=True``), which estimates the covariance whatever the mean;
    ``center=False`` uses the second-moment matrix ``E[g g^T]``, the literal reading of
    the zero-mean assumption. ``params`` are used as given; ``mask`` keeps only the
    transmitted coordinates.

    The result is that of :func:`gram_log_pseudo_determinant` on
    :func:`sims.gradients.per_sample.per_sample_gradients`, computed without the ``(n, d)``
    gradient matrix: the Gram matrix ``K = G G^T`` is accumulated layer by layer
    (:func:`sims.gradients.per_sample.per_sample_gram`) and, with ``center=True``, double-centred,
    ``H K H`` with ``H = I - 11^T / n``, which is the Gram matrix of the column-centred
    gradients. Non-finite gradients are detected on ``K``: any NaN or infinite gradient
    coordinate makes its sample's diagonal entry non-finite.
    """
    func = "gradient_statistics"
    if rtol is not None:
        rtol = check_real("rtol", rtol, func=func, low=0, low_inclusive=False)
    gram, d = per_sample_gram(model, params, images, labels, mask=mask)
    n = gram.shape[0]
    if n < (2 if center else 1) or d < 1:
        raise ValueError(
            f"The gradients of {func} must have n >= {2 if center else 1} samples ('images') "
            f"and d >= 1 kept coordinates ('mask'). Got n = {n}, d = {d} instead."
        )
    if not bool(torch.isfinite(gram).all()):
        raise ValueError(
            f"The per-sample gradients of {func} must be finite. Got NaN or infinite values "
            f"at 'params' with these 'images' instead."
        )
    if center:
        means = gram.mean(dim=0)
        gram = gram - means[None, :] - means[:, None] + means.mean()
    d_star, log_pdet = _spectrum_statistics(gram / ((n - 1) if center else n), d, rtol=rtol)
    return GradientStatistics(
        n_samples=n, d=d, d_star=d_star, log_pseudo_det=log_pdet, centered=center
    )
