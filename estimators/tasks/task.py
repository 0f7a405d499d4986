"""One benchmark task: a joint distribution of ``(X, Y)`` that can be sampled, and its MI.

A task only *describes* a problem with a known answer (the estimators never see it): a
seeded sampler and the true mutual information in nats. The truth is a closed form
(``truth_stderr = 0``) or a Monte Carlo average of exact log densities, whose standard
error is ``truth_stderr``. The families follow the benchmark of Czyz, Grabowski, Vogt,
Beerenwinkel and Marx, "Beyond normal: on the evaluation of mutual information
estimators", NeurIPS 2023 (arXiv:2306.11078): multivariate normal, Student-t, normals seen
through invertible maps, mixtures; plus the batch-and-gradient tasks of this toolkit
(:class:`estimators.mi.GaussianBatchChannel`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from pruneleak.bounds.validation import check_choice, check_int, check_real
from pruneleak.estimators._arrays import check_seed

__all__ = ["FAMILIES", "MITask", "check_correlation"]

#: Families of tasks, in the order the suite lists them.
FAMILIES = ("normal", "student", "transformed", "mixture", "batch")

#: A sampler: ``sampler(n_samples, seed) -> (x, y)``, arrays of shapes ``(n, *x_shape)``
#: and ``(n, *y_shape)``, the same arrays for the same arguments.
Sampler = Callable[[int, int], tuple[np.ndarray, np.ndarray]]


def check_correlation(value, *, func: str, name: str = "correlation") -> float:
    """A correlation coefficient in the open interval (-1, 1), as a float (a ValueError
    naming ``name``, the interval and the value otherwise)."""
    return check_real(
        name, value, func=func, low=-1.0, high=1.0, low_inclusive=False, high_inclusive=False
    )


def _shape(name: str, shape, func: str) -> tuple[int, ...]:
    if not isinstance(shape, tuple) or not shape:
        raise ValueError(
            f"The '{name}' parameter of {func} must be a non-empty tuple of positive integers. "
            f"Got {shape!r} instead."
        )
    return tuple(check_int(f"{name}[{i}]", s, func=func, low=1) for i, s in enumerate(shape))


@dataclass(frozen=True)
class MITask:
    """A distribution of ``(X, Y)`` with a known ``I(X; Y)``.

    Attributes
    ----------
    name : str
        Unique name in the suite, e.g. ``"normal-dense-5x5"``.
    family : str
        One of :data:`FAMILIES`.
    x_shape, y_shape : tuple of int
        Shape of one sample of ``X`` and of ``Y`` (``(B, dim_x)`` for a batch task, whose
        ``X`` is a batch of ``B`` inputs).
    mutual_information : float
        The true ``I(X; Y)`` in nats, finite and non-negative.
    truth_stderr : float
        0 for a closed form; otherwise the Monte Carlo standard error of
        ``mutual_information`` (nats).
    sampler : callable
        ``sampler(n_samples, seed) -> (x, y)``; use :meth:`sample`, which validates.
    description : str
        The distribution and the source of the truth, in words.

    Examples
    --------
    >>> def sampler(n, seed):
    ...     rng = np.random.default_rng(seed)
    ...     x = rng.standard_normal((n, 1))
    ...     return x, x + rng.standard_normal((n, 1))
    >>> task = MITask("toy", "normal", (1,), (1,), 0.5 * math.log(2), 0.0, sampler)
    >>> x, y = task.sample(3, seed=1)
    >>> x.shape, y.shape, task.dims
    ((3, 1), (3, 1), '1x1')
    """

    name: str
    family: str
    x_shape: tuple[int, ...]
    y_shape: tuple[int, ...]
    mutual_information: float
    truth_stderr: float
    sampler: Sampler = field(repr=False, compare=False)
    description: str = ""

    def __post_init__(self):
        func = "MITask"
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(
                f"The 'name' parameter of {func} must be a non-empty string. "
                f"Got {self.name!r} instead."
            )
        check_choice("family", self.family, func=func, choices=FAMILIES)
        _shape("x_shape", self.x_shape, func)
        _shape("y_shape", self.y_shape, func)
        object.__setattr__(
            self,
            "mutual_information",
            check_real("mutual_information", self.mutual_information, func=func, low=0.0),
        )
        object.__setattr__(
            self, "truth_stderr", check_real("truth_stderr", self.truth_stderr, func=func, low=0.0)
        )
        if not callable(self.sampler):
            raise ValueError(
                f"The 'sampler' parameter of {func} must be callable (n_samples, seed) -> "
                f"(x, y). Got {self.sampler!r} instead."
            )

    @property
    def dim_x(self) -> int:
        """Number of scalar coordinates of one ``X`` (all batch members together)."""
        return math.prod(self.x_shape)

    @property
    def dim_y(self) -> int:
        """Number of scalar coordinates of one ``Y``."""
        return math.prod(self.y_shape)

    @property
    def dims(self) -> str:
        """``"dim_x x dim_y"``, with ``B*dim_x`` for a batch, e.g. ``"10*5x10"``."""
        x = "*".join(str(s) for s in self.x_shape)
        return f"{x}x{self.dim_y}"

    def sample(self, n_samples: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """``n_samples`` i.i.d. draws: ``x`` of shape ``(n, *x_shape)``, ``y`` ``(n, *y_shape)``.

        The same ``seed`` gives the same arrays; ``n_samples >= 1`` and ``seed`` in
        ``[0, 2**63 - 1]``, else ValueError naming the parameter.
        """
        func = f"MITask.sample ({self.name})"
        n_samples = check_int("n_samples", n_samples, func=func, low=1)
        seed = check_seed(seed, func=func)
        x, y = self.sampler(n_samples, seed)
        return np.asarray(x, dtype=float), np.asarray(y, dtype=float)
