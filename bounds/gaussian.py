r"""Exact leakage of one round for jointly Gaussian per-sample gradients (reference values).

Model. Per-sample gradients :math:`g_1,\dots,g_B` are i.i.d. :math:`N(0,\Sigma)` in
:math:`\mathbb R^n`, so the round's gradient :math:`x = \tfrac1B\sum_b g_b \sim N(0,\Sigma/B)`
(PriPrune eq. 11 under Assumption 1). The client releases the kept coordinates
:math:`x_K` (mask ``keep``, :math:`k = |K|`) and the server sees either

* ``masked_update_mi``: :math:`y = x_K + \varepsilon`, :math:`\varepsilon\sim N(0, s^2 I_k)`:

  .. math:: I(x; y) = \tfrac12\log\det\big(I_k + \Sigma_{KK}/(B s^2)\big);

* ``random_mask_mi``: the same with a mask drawn independently of :math:`x`, each
  coordinate kept with probability :math:`1-p`, the mask itself visible to the server,
  for independent coordinates (diagonal :math:`\Sigma`):
  :math:`I(x; (m, y)) = \mathbb E_m I(x; y\mid m) = (1-p)\sum_j \tfrac12\log(1+\lambda_j/(Bs^2))`;

* ``quantised_update_mi``: :math:`y = s\,\mathrm{round}(x_K/s)` for independent coordinates;
  :math:`y` is a function of :math:`x`, so :math:`I(x;y) = H(y) = \sum_{j\in K} H(Q_s(x_j))` with
  :math:`\Pr[Q_s(x_j) = ls] = \Phi((l+\tfrac12)s/\sigma_j) - \Phi((l-\tfrac12)s/\sigma_j)`,
  :math:`\sigma_j^2 = \Sigma_{jj}/B`, summed exactly over every cell with non-negligible mass.

As the noise vanishes. :math:`I = \tfrac12\log\det(\Sigma_{KK}/B) + k\log(1/s) + o(1)`
(``masked_update_mi_small_noise``) and :math:`H(Q_s(x_j)) = h(x_j) - \log s + o(1)`: the leakage
of a noiseless release of continuous coordinates is infinite. No finite bound in
:math:`(p, B, d^*, \Delta)` alone (PriPrune's Theorem 1, published or corrected) can hold
without noise or quantisation: its first step drops :math:`-h(x, w\odot m\mid Z)`, which is
:math:`+\infty` here.

Units: ``unit="nats"`` (default) or ``"bits"``. ``gaussian_update_entropy`` gives
:math:`h(x) = \tfrac12\log((2\pi e)^{d^*}\mathrm{pdet}(\Sigma/B))`, the corrected part B of
``bounds.priprune``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from bounds._vector import as_output, int_array, real_array
from bounds.validation import check_choice, check_finite_array, check_int, check_real

UNITS = ("bits", "nats")
# Cells of Q_s beyond 14 standard deviations carry < 1e-44 of the mass.
_QUANT_SPAN_SD = 14.0
_QUANT_MAX_CELLS = 10_000_000


def _scale(unit, func):
    return (
        1 / math.log(2) if check_choice("unit", unit, func=func, choices=UNITS) == "bits" else 1.0
    )


def _covariance(cov, func):
    cov = check_finite_array("cov", cov, func=func, ndim=2)
    if cov.shape[0] != cov.shape[1] or not np.allclose(cov, cov.T, rtol=1e-10, atol=0):
        raise ValueError(
            f"The 'cov' parameter of {func} must be a symmetric square matrix. "
            f"Got shape {cov.shape} instead."
        )
    eig = np.linalg.eigvalsh(cov)
    tol = cov.shape[0] * np.finfo(float).eps * max(abs(eig).max(), 1e-300)
    if eig.min() < -tol:
        raise ValueError(
            f"The 'cov' parameter of {func} must be positive semi-definite. "
            f"Got eigenvalue {eig.min()!r} instead."
        )
    return cov


def _keep(keep, n, func):
    keep = np.asarray(keep)
    if keep.shape != (n,) or keep.dtype != bool:
        raise ValueError(
            f"The 'keep' parameter of {func} must be a boolean mask of shape ({n},). "
            f"Got {keep.dtype} array of shape {keep.shape} instead."
        )
    return keep


def _variances(variances, func):
    var = check_finite_array("variances", variances, func=func, ndim=1)
    if (var <= 0).any():
        raise ValueError(
            f"The 'variances' parameter of {func} must be positive (a positive definite "
            f"diagonal covariance). Got {var.min()!r} instead."
        )
    return var


def masked_update_mi(cov, keep, *, batch_size, noise_std, unit="nats"):
    r"""Exact :math:`I(x; x_K + \varepsilon) = \tfrac12\log\det(I + \Sigma_{KK}/(Bs^2))`.

    Parameters
    ----------
    cov : (n, n) per-sample gradient covariance :math:`\Sigma` (positive semi-definite).
    keep : (n,) boolean mask of the released coordinates.
    batch_size : :math:`B \ge 1`.
    noise_std : :math:`s \ge 0`; ``s = 0`` gives ``inf`` unless nothing informative is kept.
    """
    func = "masked_update_mi"
    scale = _scale(unit, func)
    cov = _covariance(cov, func)
    keep = _keep(keep, cov.shape[0], func)
    b = check_real("batch_size", batch_size, func=func, low=1)
    s = check_real("noise_std", noise_std, func=func, low=0)
    eig = np.clip(np.linalg.eigvalsh(cov[np.ix_(keep, keep)]), 0, None) if keep.any() else []
    eig = np.asarray(eig)
    if s == 0:
        return math.inf if (eig > 0).any() else 0.0
    return float(0.5 * np.sum(np.log1p(eig / (b * s**2))) * scale)


def masked_update_mi_small_noise(cov, keep, *, batch_size, noise_std, unit="nats"):
    r"""Small-noise form of ``masked_update_mi``: :math:`\log\det(\Sigma_{KK}/B)/2 + k\log(1/s)`.

    Requires :math:`\Sigma_{KK}` non-singular; the difference from the exact value is
    :math:`\tfrac12\sum_i\log(1 + Bs^2/\lambda_i) = O(s^2)`.
    """
    func = "masked_update_mi_small_noise"
    scale = _scale(unit, func)
    cov = _covariance(cov, func)
    keep = _keep(keep, cov.shape[0], func)
    b = check_real("batch_size", batch_size, func=func, low=1)
    s = check_real("noise_std", noise_std, func=func, low=0, low_inclusive=False)
    eig = np.linalg.eigvalsh(cov[np.ix_(keep, keep)])
    if (eig <= 0).any():
        raise ValueError(
            f"The 'cov' parameter of {func} must be positive definite on the kept "
            f"coordinates. Got eigenvalue {eig.min()!r} instead."
        )
    return float((0.5 * np.sum(np.log(eig / b)) - keep.sum() * math.log(s)) * scale)


def random_mask_mi(variances, *, keep_prob, batch_size, noise_std, unit="nats"):
    r"""Exact :math:`I(x; (m, y))` for a random mask independent of x (diagonal covariance).

    .. math:: (1-p)\sum_j \tfrac12\log\big(1 + \lambda_j/(Bs^2)\big),\qquad 1-p = \text{keep\_prob}.

    ``noise_std`` may be an array (broadcast); ``s = 0`` gives ``inf`` when ``keep_prob > 0``.
    """
    func = "random_mask_mi"
    scale = _scale(unit, func)
    var = _variances(variances, func)
    q = check_real("keep_prob", keep_prob, func=func, low=0, high=1)
    b = check_real("batch_size", batch_size, func=func, low=1)
    s = real_array("noise_std", noise_std, func=func, low=0)
    with np.errstate(divide="ignore"):
        per_coord = np.log1p(var / (b * s[..., None] ** 2))
    mi = 0.5 * q * np.sum(per_coord, axis=-1)
    return as_output(np.where(q > 0, mi, 0.0) * scale)


def quantised_coordinate_entropy(std, step, *, unit="nats"):
    r"""Exact entropy of :math:`Q_s(X) = s\,\mathrm{round}(X/s)`, :math:`X\sim N(0,\sigma^2)`.

    :math:`H = -\sum_l P_l\log P_l`,
    :math:`P_l = \Phi((l+\tfrac12)s/\sigma) - \Phi((l-\tfrac12)s/\sigma)`,
    summed over :math:`|l| s \le 14\sigma` (the rest carries less than :math:`10^{-44}`);
    cell probabilities are differences of ``ndtr`` on the side away from the mode to keep
    relative accuracy in the tails. Scalars only.
    """
    func = "quantised_coordinate_entropy"
    scale = _scale(unit, func)
    sigma = check_real("std", std, func=func, low=0, low_inclusive=False)
    s = check_real("step", step, func=func, low=0, low_inclusive=False)
    n_cells = math.ceil(_QUANT_SPAN_SD * sigma / s) + 1
    if 2 * n_cells + 1 > _QUANT_MAX_CELLS:
        raise ValueError(
            f"The 'step' parameter of {func} is too small for an exact sum: "
            f"{2 * n_cells + 1} cells > {_QUANT_MAX_CELLS}. Got step={s!r}, std={sigma!r}."
        )
    l_abs = np.arange(0, n_cells + 1, dtype=float)
    upper = special.ndtr(-(l_abs - 0.5) * s / sigma)
    lower = special.ndtr(-(l_abs + 0.5) * s / sigma)
    prob = upper - lower
    prob[0] = 1 - 2 * special.ndtr(-0.5 * s / sigma)
    weights = np.where(l_abs == 0, 1.0, 2.0)
    return float(np.sum(weights * special.entr(prob)) * scale)


def quantised_update_mi(variances, keep, *, batch_size, step, unit="nats"):
    r"""Exact :math:`I(x; Q_s(x_K)) = \sum_{j\in K} H(Q_s(x_j))` for independent coordinates.

    ``variances``: diagonal of :math:`\Sigma` (per-sample variances); :math:`x_j` has
    variance :math:`\lambda_j/B`.
    """
    func = "quantised_update_mi"
    var = _variances(variances, func)
    keep = _keep(keep, var.size, func)
    b = check_real("batch_size", batch_size, func=func, low=1)
    _scale(unit, func)
    return float(
        sum(quantised_coordinate_entropy(math.sqrt(v / b), step, unit=unit) for v in var[keep])
    )


def gaussian_update_entropy(d_star, log_pdet, *, batch_size, unit="nats"):
    r"""Differential entropy of :math:`x\sim N(0,\Sigma/B)` on its d*-dimensional support.

    .. math:: h(x) = \tfrac12\big(d^*\log(2\pi e/B) + \log\mathrm{pdet}\,\Sigma\big)

    ``log_pdet`` in nats. Equals ``bounds.priprune.part_b_corrected``.
    """
    func = "gaussian_update_entropy"
    scale = _scale(unit, func)
    d_star = int_array("d_star", d_star, func=func, low=1)
    log_pdet = real_array("log_pdet", log_pdet, func=func)
    b = real_array("batch_size", batch_size, func=func, low=1)
    return as_output(0.5 * (d_star * np.log(2 * np.pi * np.e / b) + log_pdet) * scale)


def sample_round(cov, *, batch_size, n_rounds, seed):
    """Draw ``n_rounds`` round gradients x = mean of B per-sample gradients (Monte Carlo checks)."""
    func = "sample_round"
    cov = _covariance(cov, func)
    b = check_int("batch_size", batch_size, func=func, low=1)
    n = check_int("n_rounds", n_rounds, func=func, low=1)
    rng = np.random.default_rng(check_int("seed", seed, func=func, low=0))
    g = rng.multivariate_normal(np.zeros(cov.shape[0]), cov, size=(n, b), method="eigh")
    return g.mean(axis=1)
