r"""Log-likelihoods of observed uploads under every secret, when the sent coordinates vary.

A defended upload sends the trained weights on a subset ``S_d`` of the base-kept
coordinates (the shared mask, which the server sees: a coordinate that is not sent is
not a number it receives) with Gaussian noise there:
:math:`y_d = r_x \odot S_d + N(0, s^2 I_{S_d})`. Under secret :math:`x` whose release
(on all base-kept coordinates) is :math:`r_x`,

.. math:: \log p(y_d\mid x) = -\frac{\|(y_d - r_x)\odot S_d\|^2}{2s^2} + c_d,

with :math:`c_d` the same for every :math:`x` (dropped: the posterior and the
information do not depend on it). The squares are expanded into matrix products after
centring the releases on their mean row (their differences are small next to the
weights, and centring keeps the products at the scale of the differences), so ``D``
draws cost two ``(D, k) x (k, N)`` products on the device. At ``s = 0`` the likelihood
is a point mass: :func:`shared_matches` compares the sent coordinates exactly.
"""

from __future__ import annotations

import torch

#: Largest noise standard deviation a defended release's leakage accepts: the uploads
#: are float32 where they are attacked, and ``s * z`` stays finite there for every draw
#: ``|z| < 64`` (a larger draw has probability below 1e-800); ``s^2`` is then far from
#: float64's overflow.
MAX_NOISE_STD = float(torch.finfo(torch.float32).max) / 64


def shared_log_likelihoods(
    observed: torch.Tensor, shared: torch.Tensor, table: torch.Tensor, noise_std: float
) -> torch.Tensor:
    """``(D, N)``: :math:`\\log p(y_d\\mid x)` up to a constant per row (module docstring).

    Args:
        observed: ``(D, k)`` the observed values (anything off ``shared``).
        shared: ``(D, k)`` bool, the coordinates each observation holds.
        table: ``(N, k)`` float64, the release of every secret on all ``k`` coordinates.
        noise_std: ``s > 0``.
    """
    mean = table.mean(dim=0)
    centred = table - mean
    flags = shared.to(table.dtype)
    y = (observed - mean) * flags
    return (2 * (y @ centred.T) - flags @ (centred * centred).T) / (2 * noise_std**2)


def shared_matches(
    observed: torch.Tensor, shared: torch.Tensor, table: torch.Tensor
) -> torch.Tensor:
    """``(D, N)`` bool: whether secret ``x``'s release equals observation ``d`` exactly on
    the coordinates it holds (the noiseless likelihood's support); one draw at a time,
    ``N x k`` comparisons each."""
    return torch.stack(
        [((table == y) | ~flags).all(dim=1) for y, flags in zip(observed, shared, strict=True)]
    )


def observation_log_likelihoods(
    observed: torch.Tensor, shared: torch.Tensor, table: torch.Tensor, noise_std: float
) -> torch.Tensor:
    r"""``(D, N)``: :math:`\log p(y_d\mid x)` up to a row constant for noise ``s >= 0``:
    :func:`shared_log_likelihoods` for ``s > 0``, and for ``s = 0`` the point mass (0 where
    the release matches the observation on its sent coordinates, :func:`shared_matches`,
    ``-inf`` elsewhere)."""
    if noise_std == 0:
        return torch.where(shared_matches(observed, shared, table), 0.0, -torch.inf)
    return shared_log_likelihoods(observed, shared, table, noise_std)


def consistent_withheld(forced: torch.Tensor, shared: torch.Tensor) -> torch.Tensor:
    """``(D, N)`` bool: whether secret ``x``'s forced withheld set ``forced[x]`` (``(N, k)``
    bool) lies outside observation ``d``'s shared coordinates, i.e. could have produced
    its mask. Counted with one float64 matrix product (exact for counts below 2**53)."""
    overlap = shared.to(torch.float64) @ forced.to(torch.float64).T
    return overlap == 0
