"""sims.attacks.priors.total_variation against slow, obviously correct loops.

Each form is checked on random non-square images (H != W, so that a swapped axis shows)
in float64, where the vectorised sums and the loops agree to rounding (rtol 1e-12); the
isotropic form's epsilon is checked on a flat image, where the closed form is
``C (H - 1) (W - 1) sqrt(1e-8)`` per image and the gradient must stay finite.
"""

from __future__ import annotations

import math

import pytest
import torch

from pruneleak.sims.attacks import total_variation

EPS = 1e-8  # Huang et al. 2020 (arXiv:2003.01876), Section 4.2: epsilon under the root


def _images(shape):
    return torch.rand(shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64)


def _anisotropic_loop(images: torch.Tensor) -> float:
    """mean |right neighbour - pixel| + mean |lower neighbour - pixel|, over all images."""
    planes = images.reshape(-1, *images.shape[-2:]).tolist()
    across, down = [], []
    for plane in planes:
        for i, row in enumerate(plane):
            for j, value in enumerate(row):
                if j + 1 < len(row):
                    across.append(abs(row[j + 1] - value))
                if i + 1 < len(plane):
                    down.append(abs(plane[i + 1][j] - value))
    return sum(across) / len(across) + sum(down) / len(down)


def _isotropic_loop(images: torch.Tensor) -> list[float]:
    """Per image: sum over channels and i < H-1, j < W-1 of
    sqrt((a[i+1, j] - a[i, j])^2 + (a[i, j+1] - a[i, j])^2 + eps)."""
    totals = []
    for image in images.tolist():
        total = 0.0
        for plane in image:
            for i in range(len(plane) - 1):
                for j in range(len(plane[0]) - 1):
                    below = plane[i + 1][j] - plane[i][j]
                    right = plane[i][j + 1] - plane[i][j]
                    total += math.sqrt(below**2 + right**2 + EPS)
        totals.append(total)
    return totals


@pytest.mark.parametrize("shape", [(2, 3, 4, 6), (1, 1, 7, 3), (5, 4)])
def test_anisotropic_mean_matches_a_loop(shape):
    images = _images(shape)
    assert float(total_variation(images, "anisotropic_mean")) == pytest.approx(
        _anisotropic_loop(images), rel=1e-12
    )


@pytest.mark.parametrize("shape", [(2, 3, 4, 6), (3, 1, 7, 3)])
def test_isotropic_sum_matches_a_loop(shape):
    images = _images(shape)
    tv = total_variation(images, "isotropic_sum")
    assert tv.shape == (shape[0],)
    assert tv.tolist() == pytest.approx(_isotropic_loop(images), rel=1e-12)


def test_isotropic_sum_of_a_flat_image_is_the_epsilon_term_with_a_finite_gradient():
    """The epsilon keeps flat regions differentiable: at a constant image every term is
    sqrt(eps), and d/da sqrt(d^2 + eps) = d / sqrt(d^2 + eps) is 0, not 0/0."""
    channels, height, width = 2, 5, 4
    images = torch.full((1, channels, height, width), 0.3, dtype=torch.float64)
    images.requires_grad_(True)
    tv = total_variation(images, "isotropic_sum")
    expected = channels * (height - 1) * (width - 1) * math.sqrt(EPS)
    assert float(tv[0].detach()) == pytest.approx(expected, rel=1e-12)
    (gradient,) = torch.autograd.grad(tv.sum(), images)
    assert bool(torch.isfinite(gradient).all())
    assert bool((gradient == 0).all())


def test_total_variation_rejects_an_unknown_kind():
    with pytest.raises(ValueError, match="kind"):
        total_variation(_images((1, 1, 3, 3)), "l1")


def test_anisotropic_mean_by_rows_is_the_tv_of_each_row():
    """``rows=True`` on a stack ``(N, B, C, H, W)``: row n's value is the TV of batch n
    alone (the loop), so rows of different content must give different values."""
    images = _images((3, 2, 1, 4, 6))
    tv = total_variation(images, "anisotropic_mean", rows=True)
    assert tv.shape == (3,)
    assert tv.tolist() == pytest.approx([_anisotropic_loop(row) for row in images], rel=1e-12)


def test_rows_is_refused_with_the_isotropic_sum():
    with pytest.raises(ValueError, match="'rows' parameter of total_variation"):
        total_variation(_images((2, 1, 3, 3)), "isotropic_sum", rows=True)
