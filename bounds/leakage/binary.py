r"""Two candidates: the binary-input Gaussian channel, computed by one-dimensional quadrature.

Two releases at distance :math:`d` and noise :math:`N(0, s^2 I_k)`: only the projection of
the noise on :math:`r_1 - r_2` matters, so the channel is binary-input with signal-to-noise
ratio :math:`a = d/s`. Given the true candidate, the log-likelihood ratio in its favour is

.. math:: L = \tfrac{a^2}{2} + a\,t,\qquad t \sim N(0, 1),

the posterior of the truth is :math:`\sigma(L) = 1/(1 + e^{-L})`, and (uniform prior)

.. math::

    I(X; Y) = 1 - \mathbb E\,h_2(\sigma(L))\ \text{bits},\qquad
    \Pr[\text{Bayes success}] = \mathbb E\max(\sigma(L), 1 - \sigma(L)) = \Phi(a/2),

with :math:`h_2` the binary entropy in bits (e.g. Richardson & Urbanke, *Modern Coding
Theory*, 2008, Sec. 4.2, the BAWGN channel; its capacity is this :math:`I` at uniform input).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import integrate, special

from pruneleak.bounds.validation import check_real

# |t| > 40 carries Gaussian mass below 1e-340: the integral over [-40, 40] is complete.
_T_SPAN = 40.0
# Beyond a = d/s = 40 the equivocation E h_2(sigma(L)) is below 2 exp(-a^2/8) = 2e-87 bits
# (h_2(q) <= 2 sqrt(q(1-q)) = 1/cosh(L/2) <= exp(-L/2) for L >= 0, and <= 1 < exp(-L/2) for
# L < 0; E exp(-L/2) = exp(-a^2/8) for L ~ N(a^2/2, a^2)): 1 bit to float64 precision.
_SNR_ONE_BIT = 40.0
_QUAD_TOL = 1e-13
_QUAD_LIMIT = 400


def _check(distance, noise_std, func):
    return (
        check_real("distance", distance, func=func, low=0),
        check_real("noise_std", noise_std, func=func, low=0),
    )


def _information_bits(t: float, a: float) -> float:
    r""":math:`\varphi(t)\,(1 - h_2(\sigma(L)))` at :math:`L = a^2/2 + a t`, in log space."""
    llr = a * a / 2 + a * t
    p = special.expit(llr)
    entropy_nats = p * np.logaddexp(0.0, -llr) + (1 - p) * np.logaddexp(0.0, llr)
    return math.exp(-t * t / 2) / math.sqrt(2 * math.pi) * (1 - entropy_nats / math.log(2))


def binary_channel_bits(distance: float, noise_std: float) -> float:
    r"""Exact :math:`I(X; Y)` in bits for two equiprobable releases at ``distance``.

    .. math:: I = 1 - \int \varphi(t)\, h_2\big(\sigma(a^2/2 + a t)\big)\,dt,\quad a = d/s

    by adaptive quadrature (``scipy.integrate.quad`` on :math:`[-40, 40]`, absolute
    tolerance 1e-13, a break point where :math:`L = 0`); see the module docstring.
    Assumptions: uniform prior on two candidates, noise :math:`N(0, s^2 I)`. ``s = 0``
    gives 1 bit for ``d > 0``; ``d = 0`` gives 0; :math:`d/s > 40` gives 1 bit (the
    missing part is below 2e-87 bits, ``_SNR_ONE_BIT``). If the quadrature reports an
    error estimate above 1e-9 it warns (the value is still returned).

    Parameters
    ----------
    distance : :math:`d = \|r_1 - r_2\|_2 \ge 0`.
    noise_std : :math:`s \ge 0`.

    Returns
    -------
    float, bits in [0, 1].

    Examples
    --------
    >>> binary_channel_bits(1.0, 0.0), binary_channel_bits(0.0, 1.0)
    (1.0, 0.0)
    >>> round(binary_channel_bits(2.0, 1.0), 6)
    0.485944
    """
    d, s = _check(distance, noise_std, "binary_channel_bits")
    if d == 0:
        return 0.0
    return bits_at_snr(math.inf if s == 0 else d / s)


def bits_at_snr(a: float) -> float:
    r""":math:`I(X;Y)` in bits at signal-to-noise ratio :math:`a = d/s \in [0, \infty]`.

    :math:`a = \infty` (zero noise, or :math:`d/s` beyond the largest float) gives 1 bit,
    as does every :math:`a > 40` (``_SNR_ONE_BIT``); otherwise the quadrature of
    :func:`binary_channel_bits`.

    Examples
    --------
    >>> bits_at_snr(math.inf), bits_at_snr(0.0)
    (1.0, 0.0)
    """
    if a == 0:
        return 0.0
    if a > _SNR_ONE_BIT:
        return 1.0
    peak = -a / 2  # L = 0: where h_2 is largest
    points = [peak] if -_T_SPAN < peak < _T_SPAN else None
    value, err = integrate.quad(
        _information_bits,
        -_T_SPAN,
        _T_SPAN,
        args=(a,),
        points=points,
        epsabs=_QUAD_TOL,
        epsrel=_QUAD_TOL,
        limit=_QUAD_LIMIT,
    )
    if err > 1e-9:
        warnings.warn(
            f"binary_channel_bits: quadrature error estimate {err:.2e} bits at d/s = {a:g}",
            RuntimeWarning,
            stacklevel=3,
        )
    return float(min(max(value, 0.0), 1.0))


def binary_channel_success(distance: float, noise_std: float) -> float:
    r"""Bayes-optimal identification success :math:`\Phi(d/(2s))` for two candidates.

    The maximum-a-posteriori rule picks the nearer release; it errs when the noise's
    projection on the difference exceeds :math:`d/2`, so
    :math:`\Pr[\text{success}] = \Phi(d/(2s))` (e.g. Proakis & Salehi, *Digital
    Communications*, 5th ed., Sec. 4.2, binary antipodal signalling). Assumptions as in
    :func:`binary_channel_bits`. ``s = 0`` gives 1 for ``d > 0``; ``d = 0`` gives 1/2.

    Parameters
    ----------
    distance : :math:`d \ge 0`.
    noise_std : :math:`s \ge 0`.

    Returns
    -------
    float, a probability in [1/2, 1].

    Examples
    --------
    >>> round(binary_channel_success(2.0, 1.0), 6)
    0.841345
    """
    d, s = _check(distance, noise_std, "binary_channel_success")
    if d == 0:
        return 0.5
    return success_at_snr(math.inf if s == 0 else d / s)


def success_at_snr(a: float) -> float:
    r""":math:`\Phi(a/2)` at signal-to-noise ratio :math:`a = d/s \in [0, \infty]`.

    Examples
    --------
    >>> success_at_snr(math.inf), success_at_snr(0.0)
    (1.0, 0.5)
    """
    return float(special.ndtr(a / 2))
