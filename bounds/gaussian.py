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

Units: ``unit="bits"`` (default, the unit of every ``bounds`` module) or ``"nats"``; the
formulas above are written with natural logs and divided by :math:`\ln 2` for bits. Each
function returns the information of one round. ``gaussian_update_entropy`` gives
:math:`h(x) = \tfrac12\log((2\pi e)^{d^*}\mathrm{pdet}(\Sigma/B))`, the corrected part B of
``bounds.priprune`` (it is that function).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from pruneleak.bounds import priprune
from pruneleak.bounds._vector import as_output, int_array, real_array
from pruneleak.bounds.validation import check_choice, check_finite_array, check_int, check_real

UNITS = ("bits", "nats")
# Cells of Q_s beyond 14 standard deviations carry < 1e-44 of the mass.
_QUANT_SPAN_SD = 14.0
_QUANT_MAX_CELLS = 10_000_000
# sample_round draws n_rounds * batch_size * n normals at once: at most 2^27 (1 GiB).
_SAMPLE_MAX_DRAWS = 2**27


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


def _channel_mi(eig, b, s):
    r""":math:`\tfrac12\sum_j\log(1 + \lambda_j/(Bs^2))` nats over the last axis of ``eig``.

    ``s`` broadcasts against the leading axes; ``s = 0`` gives ``inf``, and an eigenvalue 0
    contributes 0 whatever ``s``. Where :math:`Bs^2` is a finite normal float and the ratio finite,
    each term is ``log1p`` of the ratio; elsewhere (a tiny ``s`` underflows :math:`s^2`, or
    the ratio overflows) ``logaddexp(0, log lambda - log B - 2 log s)``: every finite
    positive ``s`` gives a finite value.
    """
    s = np.asarray(s, dtype=float)[..., None]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        noise = b * s * s
        ratio = eig / noise
        direct = (noise >= np.finfo(float).tiny) & np.isfinite(noise) & np.isfinite(ratio)
        by_logs = np.logaddexp(0.0, np.log(eig) - math.log(b) - 2 * np.log(s))
        terms = np.where(direct, np.log1p(ratio), by_logs)
    return 0.5 * np.sum(np.where(eig > 0, terms, 0.0), axis=-1)


def masked_update_mi(cov, keep, *, batch_size, noise_std, unit="bits"):
    r"""Exact :math:`I(x; x_K + \varepsilon) = \tfrac12\log\det(I + \Sigma_{KK}/(Bs^2))`.

    Parameters
    ----------
    cov : (n, n) per-sample gradient covariance :math:`\Sigma` (positive semi-definite).
    keep : (n,) boolean mask of the released coordinates.
    batch_size : :math:`B \ge 1`.
    noise_std : :math:`s \ge 0`; ``s = 0`` gives ``inf`` unless nothing informative is kept.
    unit : "bits" (default) or "nats".

    Notes
    -----
    The eigenvalues come from ``eigvalsh``, accurate to about 1e-16 times the largest: an
    eigenvalue below that is numerically 0 (a covariance of condition number > 1e16 is
    singular in float64).

    Examples
    --------
    >>> masked_update_mi(np.eye(1), np.array([True]), batch_size=1, noise_std=1.0)  # log2(2)/2
    0.5
    """
    func = "masked_update_mi"
    scale = _scale(unit, func)
    cov = _covariance(cov, func)
    keep = _keep(keep, cov.shape[0], func)
    b = check_real("batch_size", batch_size, func=func, low=1)
    s = check_real("noise_std", noise_std, func=func, low=0)
    eig = np.clip(np.linalg.eigvalsh(cov[np.ix_(keep, keep)]), 0, None) if keep.any() else []
    return float(_channel_mi(np.asarray(eig, dtype=float), b, s) * scale)


def masked_update_mi_small_noise(cov, keep, *, batch_size, noise_std, unit="bits"):
    r"""Small-noise form of ``masked_update_mi``: :math:`\log\det(\Sigma_{KK}/B)/2 + k\log(1/s)`.

    Requires :math:`\Sigma_{KK}` non-singular; the difference from the exact value is
    :math:`\tfrac12\sum_i\log(1 + Bs^2/\lambda_i) = O(s^2)`. Arguments as in
    ``masked_update_mi`` (``noise_std > 0``); the result is in ``unit`` (default bits).

    Examples
    --------
    >>> masked_update_mi_small_noise(np.eye(1), np.array([True]), batch_size=1, noise_std=0.5)
    1.0
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
    return float((0.5 * np.sum(np.log(eig) - math.log(b)) - keep.sum() * math.log(s)) * scale)


def random_mask_mi(variances, *, keep_prob, batch_size, noise_std, unit="bits"):
    r"""Exact :math:`I(x; (m, y))` for a random mask independent of x (diagonal covariance).

    .. math:: (1-p)\sum_j \tfrac12\log\big(1 + \lambda_j/(Bs^2)\big),\qquad 1-p = \text{keep\_prob}.

    ``variances``: diagonal of :math:`\Sigma`; ``noise_std`` may be an array (broadcast);
    ``s = 0`` gives ``inf`` when ``keep_prob > 0``. In ``unit`` (default bits).

    Examples
    --------
    >>> random_mask_mi([3.0], keep_prob=0.5, batch_size=1, noise_std=1.0)  # (1/2) log2(4) / 2
    0.5
    """
    func = "random_mask_mi"
    scale = _scale(unit, func)
    var = _variances(variances, func)
    q = check_real("keep_prob", keep_prob, func=func, low=0, high=1)
    b = check_real("batch_size", batch_size, func=func, low=1)
    s = real_array("noise_std", noise_std, func=func, low=0)
    mi = _channel_mi(var, b, s)
    return as_output((q * mi if q > 0 else np.zeros_like(mi)) * scale)  # q = 0: 0, even at s = 0


def quantised_coordinate_entropy(std, step, *, unit="bits"):
    r"""Exact entropy of :math:`Q_s(X) = s\,\mathrm{round}(X/s)`, :math:`X\sim N(0,\sigma^2)`.

    :math:`H = -\sum_l P_l\log P_l`,
    :math:`P_l = \Phi((l+\tfrac12)s/\sigma) - \Phi((l-\tfrac12)s/\sigma)`,
    summed over :math:`|l| s \le 14\sigma` (the rest carries less than :math:`10^{-44}`);
    cell probabilities are differences of ``ndtr`` on the side away from the mode to keep
    relative accuracy in the tails. Scalars only; in ``unit`` (default bits).

    Examples
    --------
    >>> quantised_coordinate_entropy(1.0, 100.0)  # one cell holds all the mass
    0.0
    >>> h = 0.5 * math.log(2 * math.pi * math.e)  # h(N(0, 1)) in nats
    >>> abs(quantised_coordinate_entropy(1.0, 0.01, unit="nats") - (h - math.log(0.01))) < 1e-4
    True
    """
    func = "quantised_coordinate_entropy"
    scale = _scale(unit, func)
    sigma = check_real("std", std, func=func, low=0, low_inclusive=False)
    s = check_real("step", step, func=func, low=0, low_inclusive=False)
    max_ratio = (_QUANT_MAX_CELLS - 3) / (2 * _QUANT_SPAN_SD)  # 2 ceil(14 r) + 3 cells
    if not sigma / s <= max_ratio:  # also catches sigma / s = inf
        raise ValueError(
            f"The parameters 'std', 'step' of {func} must have std / step <= {max_ratio:g} "
            f"(an exact sum over at most {_QUANT_MAX_CELLS} cells). Got std={sigma!r}, "
            f"step={s!r} instead."
        )
    n_cells = math.ceil(_QUANT_SPAN_SD * sigma / s) + 1
    l_abs = np.arange(0, n_cells + 1, dtype=float)
    upper = special.ndtr(-(l_abs - 0.5) * s / sigma)
    lower = special.ndtr(-(l_abs + 0.5) * s / sigma)
    prob = upper - lower
    prob[0] = 1 - 2 * special.ndtr(-0.5 * s / sigma)
    weights = np.where(l_abs == 0, 1.0, 2.0)
    return float(np.sum(weights * special.entr(prob)) * scale)


def quantised_update_mi(variances, keep, *, batch_size, step, unit="bits"):
    r"""Exact :math:`I(x; Q_s(x_K)) = \sum_{j\in K} H(Q_s(x_j))` for independent coordinates.

    ``variances``: diagonal of :math:`\Sigma` (per-sample variances); :math:`x_j` has
    variance :math:`\lambda_j/B`. ``keep``: boolean mask of the released coordinates. In
    ``unit`` (default bits).

    Examples
    --------
    >>> both = quantised_update_mi([1.0, 1.0], np.array([True, True]), batch_size=1, step=0.5)
    >>> both == 2 * quantised_coordinate_entropy(1.0, 0.5)
    True
    """
    func = "quantised_update_mi"
    var = _variances(variances, func)
    keep = _keep(keep, var.size, func)
    b = check_real("batch_size", batch_size, func=func, low=1)
    _scale(unit, func)
    return float(
        sum(quantised_coordinate_entropy(math.sqrt(v / b), step, unit=unit) for v in var[keep])
    )


def gaussian_update_entropy(d_star, log_pdet, *, batch_size, unit="bits"):
    r"""Differential entropy of :math:`x\sim N(0,\Sigma/B)` on its d*-dimensional support.

    .. math:: h(x) = \tfrac12\big(d^*\log(2\pi e/B) + \log\mathrm{pdet}\,\Sigma\big)

    ``log_pdet`` (natural log of the pseudo-determinant of :math:`\Sigma`) in nats, with
    :math:`|\log\mathrm{pdet}| \le 745\,d^*` (the range of a float64 spectrum; beyond it
    is refused); the result in ``unit`` (default bits). Evaluated as
    ``bounds.priprune.part_b_corrected``
    with :math:`\Delta = -\log\mathrm{pdet}(\Sigma)/2`, the one copy of the formula.

    Examples
    --------
    >>> value = gaussian_update_entropy(1, 0.0, batch_size=1)  # N(0, 1)
    >>> round(value - 0.5 * math.log2(2 * math.pi * math.e), 12)
    0.0
    """
    func = "gaussian_update_entropy"
    check_choice("unit", unit, func=func, choices=UNITS)
    d_star = int_array("d_star", d_star, func=func, low=1)
    b = real_array("batch_size", batch_size, func=func, low=1)
    delta = priprune.delta_from_log_pseudo_det(real_array("log_pdet", log_pdet, func=func))
    return priprune.part_b_corrected(b, d_star, delta, unit=unit)


def sample_round(cov, *, batch_size, n_rounds, seed):
    r"""Draw ``n_rounds`` round gradients x = mean of B per-sample gradients (Monte Carlo checks).

    Per-sample gradients are :math:`N(0, \Sigma)` (``cov``) from ``numpy``'s generator
    seeded with ``seed``; returns an array of shape ``(n_rounds, n)``. At most 2^27
    draws (``n_rounds * batch_size * n``) in one call, refused before allocating.

    Examples
    --------
    >>> sample_round(np.eye(2), batch_size=4, n_rounds=3, seed=0).shape
    (3, 2)
    """
    func = "sample_round"
    cov = _covariance(cov, func)
    b = check_int("batch_size", batch_size, func=func, low=1)
    n = check_int("n_rounds", n_rounds, func=func, low=1)
    draws = n * b * cov.shape[0]
    if draws > _SAMPLE_MAX_DRAWS:
        raise ValueError(
            f"The parameters 'n_rounds', 'batch_size' of {func} ask for n_rounds * batch_size "
            f"* n = {draws} normal draws, more than {_SAMPLE_MAX_DRAWS} (1 GiB). "
            f"Got n_rounds={n}, batch_size={b}, n={cov.shape[0]} instead."
        )
    rng = np.random.default_rng(check_int("seed", seed, func=func, low=0))
    g = rng.multivariate_normal(np.zeros(cov.shape[0]), cov, size=(n, b), method="eigh")
    return g.mean(axis=1)
