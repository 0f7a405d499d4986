r"""Image priors of the inversion objectives: total variation.

Two forms are in use in the papers this toolkit follows:

* ``"anisotropic_mean"`` (Geiping et al. 2020, "Inverting Gradients", NeurIPS; their
  reference implementation, used by PriPrune's SGI): the mean absolute difference of
  horizontal neighbours plus that of vertical neighbours, over the whole batch,

  .. math:: \mathrm{TV}(x) = \operatorname{mean}|x_{i,j+1} - x_{i,j}|
      + \operatorname{mean}|x_{i+1,j} - x_{i,j}|;

* ``"isotropic_sum"`` (Huang et al. 2020, arXiv:2003.01876, Section 4.2), per image,

  .. math:: \mathcal R(a) = \sum_{i<H-1,\,j<W-1} \big((a_{i+1,j} - a_{i,j})^2
      + (a_{i,j+1} - a_{i,j})^2 + \epsilon\big)^{1/2},

  summed over channels, with :math:`\epsilon = 10^{-8}` under the root so that flat
  regions have a gradient.
"""

from __future__ import annotations

import torch

from pruneleak.bounds.validation import check_choice

TV_KINDS = ("anisotropic_mean", "isotropic_sum")

# Added under the square root of the isotropic form: flat regions keep a gradient.
_ISOTROPIC_EPS = 1e-8


def total_variation(
    images: torch.Tensor, kind: str = "anisotropic_mean", *, rows: bool = False
) -> torch.Tensor:
    """Total variation of ``images`` (``(..., H, W)``; see the module docstring).

    Returns a scalar for ``"anisotropic_mean"`` (over everything given) and one value per
    image, shape ``(B,)`` of a ``(B, C, H, W)`` batch, for ``"isotropic_sum"``. With
    ``rows=True`` (``"anisotropic_mean"`` only) the means run over everything but the
    leading dimension: one value per row of a stack of batches ``(N, B, C, H, W)``, the
    TV of each batch (the inversion's N problems at once).
    """
    check_choice("kind", kind, func="total_variation", choices=TV_KINDS)
    if rows and kind != "anisotropic_mean":
        raise ValueError(
            "The 'rows' parameter of total_variation must be False with "
            f"kind={kind!r} (it already returns one value per image). Got True instead."
        )
    if kind == "anisotropic_mean":
        dx = (images[..., :, 1:] - images[..., :, :-1]).abs()
        dy = (images[..., 1:, :] - images[..., :-1, :]).abs()
        if rows:
            dims = tuple(range(1, images.dim()))
            return dx.mean(dims) + dy.mean(dims)
        return dx.mean() + dy.mean()
    down = images[..., 1:, :-1] - images[..., :-1, :-1]
    right = images[..., :-1, 1:] - images[..., :-1, :-1]
    return (down**2 + right**2 + _ISOTROPIC_EPS).sqrt().sum(dim=(1, 2, 3))
