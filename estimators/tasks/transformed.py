r"""Normal and Student-t tasks seen through invertible maps: same MI, harder geometry.

Mutual information is invariant under an invertible map of ``X`` and one of ``Y``
separately: for measurable bijections ``f, g`` with measurable inverses the data
processing inequality applies in both directions, ``I(f(X); g(Y)) <= I(X; Y) =
I(f^{-1}(f(X)); g^{-1}(g(Y))) <= I(f(X); g(Y))`` (Cover and Thomas 2006, sec. 2.8 and
eq. 8.71). So a transformed task has the truth of its base task, while its marginals,
tails and shape change what an estimator sees. The maps, after Czyz et al., "Beyond
normal", NeurIPS 2023 (arXiv:2306.11078), each with its inverse (the tests check the round
trip on samples):

- ``"halfcube"``: ``v -> v |v|^{1/2}`` per coordinate (inverse ``w -> sign(w) |w|^{2/3}``):
  lighter centre, heavier tails;
- ``"asinh"``: ``v -> asinh(v)`` per coordinate (inverse ``sinh``): logarithmic tails, which
  tames a Student-t;
- ``"normcdf"``: ``v -> Phi(v)`` per coordinate (inverse ``Phi^{-1}``): a unit-variance normal
  coordinate becomes uniform on (0, 1), a bounded support;
- ``"spiral"``: ``v -> R(speed * ||v||) v``, the rotation by the angle ``speed * ||v||`` in
  each coordinate plane ``(0, 1), (2, 3), ...`` (a last odd coordinate is left as is).
  A rotation keeps the norm, so the angle can be read back from the image and
  ``w -> R(-speed * ||w||) w`` inverts it; both are continuous (smooth away from 0).

Float64 note: the round trips are exact up to rounding as long as ``|v| < 8`` for
``"normcdf"`` (``Phi(8.3)`` rounds to 1.0); a unit-variance normal coordinate exceeds 8
with probability ``1.2e-15``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
from scipy.special import ndtr, ndtri

from pruneleak.bounds.validation import check_choice, check_real
from pruneleak.estimators.tasks.task import MITask

__all__ = [
    "TRANSFORMS",
    "Transform",
    "half_cube",
    "half_cube_inverse",
    "spiral",
    "spiral_inverse",
    "transformed_task",
]

#: Default angular speed of the spiral, in radians per unit of norm.
SPIRAL_SPEED = 1.0


def half_cube(v: np.ndarray) -> np.ndarray:
    """``v |v|^{1/2}`` elementwise.

    Examples
    --------
    >>> half_cube(np.array([-4.0, 0.0, 9.0]))
    array([-8.,  0., 27.])
    """
    return v * np.sqrt(np.abs(v))


def half_cube_inverse(w: np.ndarray) -> np.ndarray:
    """``sign(w) |w|^{2/3}`` elementwise, the inverse of :func:`half_cube`."""
    return np.sign(w) * np.cbrt(w * w)


def _rotate(v: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rotate every row of ``v`` (n, d) by its ``angle`` (n,) in the planes (0, 1), (2, 3)..."""
    out = v.copy()
    cos, sin = np.cos(angle)[:, None], np.sin(angle)[:, None]
    even, odd = v[:, 0 : v.shape[1] - 1 : 2], v[:, 1::2]
    out[:, 0 : v.shape[1] - 1 : 2] = cos * even - sin * odd
    out[:, 1::2] = sin * even + cos * odd
    return out


def spiral(v: np.ndarray, speed: float = SPIRAL_SPEED) -> np.ndarray:
    """Rotate each row ``v`` (of at least 2 coordinates) by the angle ``speed * ||v||``.

    Examples
    --------
    >>> np.round(spiral(np.array([[1.0, 0.0]]), speed=np.pi / 2), 12)  # a quarter turn
    array([[0., 1.]])
    """
    return _rotate(v, speed * np.linalg.norm(v, axis=1))


def spiral_inverse(w: np.ndarray, speed: float = SPIRAL_SPEED) -> np.ndarray:
    """The inverse of :func:`spiral`: the norm is kept, so rotate back by ``speed * ||w||``."""
    return _rotate(w, -speed * np.linalg.norm(w, axis=1))


@dataclass(frozen=True)
class Transform:
    """An invertible map applied to ``X`` and to ``Y`` separately (rows are samples)."""

    forward: Callable[[np.ndarray], np.ndarray]
    inverse: Callable[[np.ndarray], np.ndarray]
    min_dim: int
    description: str


#: Name -> the map, its inverse, the smallest dimension it acts on and a description.
TRANSFORMS = {
    "halfcube": Transform(half_cube, half_cube_inverse, 1, "v |v|^(1/2) per coordinate"),
    "asinh": Transform(np.arcsinh, np.sinh, 1, "asinh per coordinate"),
    "normcdf": Transform(ndtr, ndtri, 1, "normal CDF per coordinate (uniform marginals)"),
    "spiral": Transform(spiral, spiral_inverse, 2, "rotation by speed * norm"),
}


def _sample_transformed(
    n_samples: int, seed: int, *, base_sampler, forward
) -> tuple[np.ndarray, np.ndarray]:
    x, y = base_sampler(n_samples, seed)
    return forward(x), forward(y)


def transformed_task(
    base: MITask, transform: str, *, speed: float = SPIRAL_SPEED, name: str | None = None
) -> MITask:
    """``(f(X), f(Y))`` for ``(X, Y)`` of a normal or Student-t ``base``: truth = base truth.

    ``speed`` is the spiral's angle per unit of norm (radians); other maps ignore it. The
    name defaults to the transform and the base's name, with ``normal-`` dropped
    (``normal-dense-5x5`` through ``"spiral"`` is ``spiral-dense-5x5``).

    Examples
    --------
    >>> from pruneleak.estimators.tasks.gaussian import normal_1v1_task
    >>> task = transformed_task(normal_1v1_task(), "halfcube")
    >>> task.name, task.mutual_information == normal_1v1_task().mutual_information
    ('halfcube-1v1', True)
    """
    func = "transformed_task"
    transform = check_choice("transform", transform, func=func, choices=tuple(TRANSFORMS))
    if not isinstance(base, MITask) or base.family not in ("normal", "student"):
        raise ValueError(
            f"The 'base' parameter of {func} must be a normal or Student-t MITask. "
            f"Got {base!r} instead."
        )
    spec = TRANSFORMS[transform]
    smallest = min(base.dim_x, base.dim_y)
    if smallest < spec.min_dim:
        raise ValueError(
            f"The 'base' parameter of {func} must have X and Y of at least {spec.min_dim} "
            f"coordinates for the {transform!r} transform. Got {base.dims} instead."
        )
    forward = spec.forward
    description = spec.description
    if transform == "spiral":
        speed = check_real("speed", speed, func=func)
        forward = partial(spiral, speed=speed)
        description = f"rotation by {speed:g} rad per unit norm in planes (0, 1), (2, 3), ..."
    if name is None:
        stem = base.name.removeprefix("normal-") if base.family == "normal" else base.name
        name = f"{transform}-{stem}"
    return MITask(
        name=name,
        family="transformed",
        x_shape=base.x_shape,
        y_shape=base.y_shape,
        mutual_information=base.mutual_information,
        truth_stderr=base.truth_stderr,
        sampler=partial(_sample_transformed, base_sampler=base.sampler, forward=forward),
        description=f"{description} of [{base.description}]; truth of the base (invariance)",
    )
