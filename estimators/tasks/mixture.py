r"""Gaussian-mixture tasks: multimodal and nonlinear dependence, truth by Monte Carlo.

The joint density of ``Z = (X, Y)`` is a finite mixture
:math:`p(z) = \sum_k w_k\, N(z; \mu_k, \Sigma_k)`, and so are the marginals (the
sub-vectors of the means and the diagonal blocks of the covariances). The MI has no closed
form, but every density is exact, so

.. math:: I(X; Y) = E\left[\log p(X, Y) - \log p(X) - \log p(Y)\right]
          \approx \frac1N \sum_{i=1}^N \left[\log p(z_i) - \log p(x_i) - \log p(y_i)\right],

an average of ``N`` i.i.d. terms (``N = 200,000`` by default, drawn from a fixed seed,
:data:`TRUTH_SEED`) whose standard error ``std / sqrt(N)`` is the task's
``truth_stderr`` (about 0.002 nats here). Nothing is cached on disk: a task builds its
truth in well under a second.

Two shapes, after the mixtures of Czyz et al., "Beyond normal", NeurIPS 2023
(arXiv:2306.11078), with parameters of this module:

- *bimodal*: two equally likely modes at ``+-(m, m)``, each with a within-mode correlation
  ``r``; with ``m = 2, r = -0.5`` the mode makes ``X`` and ``Y`` agree globally while they
  disagree locally;
- *X*: ``Y = s rho X + sqrt(1 - rho^2) eps`` with a random sign ``s = +-1`` shared by all
  coordinates: the two components have correlations ``+rho`` and ``-rho``, so ``X`` and
  ``Y`` are uncorrelated (a linear or Gaussian estimator sees nothing) yet dependent; the
  marginals are exactly ``N(0, I)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial

import numpy as np
from scipy.linalg import solve_triangular
from scipy.special import logsumexp

from pruneleak.bounds.validation import check_int, check_real
from pruneleak.estimators._arrays import check_seed
from pruneleak.estimators.tasks.task import MITask, check_correlation

__all__ = [
    "TRUTH_DRAWS",
    "TRUTH_SEED",
    "GaussianMixture",
    "bimodal_task",
    "mixture_task",
    "monte_carlo_mutual_information",
    "x_mixture_task",
]

#: Draws of the Monte Carlo truth (standard error about 0.002 nats for the suite's tasks).
TRUTH_DRAWS = 200_000
#: Seed of the truth's draws (a constant, so that the truth is the same on every run).
TRUTH_SEED = 20_231_210


@dataclass(frozen=True)
class GaussianMixture:
    """``sum_k weights[k] N(means[k], covariances[k])`` in ``R^D``.

    ``weights`` (K,) positive summing to 1, ``means`` (K, D), ``covariances`` (K, D, D)
    symmetric positive definite.

    Examples
    --------
    >>> mix = GaussianMixture(np.array([1.0]), np.zeros((1, 1)), np.ones((1, 1, 1)))
    >>> round(float(mix.logpdf(np.zeros((1, 1)))[0]), 6)  # log N(0; 0, 1) = -log(2 pi) / 2
    -0.918939
    """

    weights: np.ndarray
    means: np.ndarray
    covariances: np.ndarray
    choleskys: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        func = "GaussianMixture"
        weights = np.asarray(self.weights, dtype=float)
        means = np.asarray(self.means, dtype=float)
        covariances = np.asarray(self.covariances, dtype=float)
        k = len(weights)
        if (
            weights.ndim != 1
            or means.ndim != 2
            or len(means) != k
            or covariances.shape != (k, means.shape[1], means.shape[1])
        ):
            raise ValueError(
                f"The 'weights', 'means' and 'covariances' parameters of {func} must have "
                f"shapes (K,), (K, D) and (K, D, D). Got {weights.shape}, {means.shape} and "
                f"{covariances.shape} instead."
            )
        if np.any(weights <= 0) or not math.isclose(weights.sum(), 1.0, abs_tol=1e-12):
            raise ValueError(
                f"The 'weights' parameter of {func} must be positive and sum to 1. "
                f"Got {weights.tolist()} instead."
            )
        try:
            choleskys = np.linalg.cholesky(covariances)
        except np.linalg.LinAlgError as err:
            raise ValueError(
                f"The 'covariances' parameter of {func} must hold symmetric positive definite "
                f"matrices ({err})."
            ) from err
        for name, value in (("weights", weights), ("means", means)):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "covariances", covariances)
        object.__setattr__(self, "choleskys", choleskys)

    @property
    def dim(self) -> int:
        """Dimension ``D`` of the mixture's space."""
        return self.means.shape[1]

    def marginal(self, start: int, stop: int) -> GaussianMixture:
        """The mixture of the coordinates ``start:stop`` (same weights, sub-blocks)."""
        block = slice(start, stop)
        return GaussianMixture(
            self.weights, self.means[:, block], self.covariances[:, block, block]
        )

    def sample(self, n_samples: int, rng: np.random.Generator) -> np.ndarray:
        """``n_samples`` draws, shape ``(n_samples, D)``: a component, then its normal."""
        component = rng.choice(len(self.weights), size=n_samples, p=self.weights)
        noise = rng.standard_normal((n_samples, self.dim))
        return self.means[component] + np.einsum("nij,nj->ni", self.choleskys[component], noise)

    def logpdf(self, z: np.ndarray) -> np.ndarray:
        """``log p(z)`` of each row of ``z`` (n, D), by a log-sum-exp over the components."""
        terms = []
        for weight, mean, chol in zip(self.weights, self.means, self.choleskys, strict=True):
            white = solve_triangular(chol, (z - mean).T, lower=True)  # L^-1 (z - mu)
            log_det = 2.0 * np.sum(np.log(np.diag(chol)))
            terms.append(
                math.log(weight)
                - 0.5 * (self.dim * math.log(2.0 * math.pi) + log_det)
                - 0.5 * np.sum(white * white, axis=0)
            )
        return logsumexp(np.stack(terms), axis=0)


def monte_carlo_mutual_information(
    mixture: GaussianMixture, dim_x: int, *, draws: int = TRUTH_DRAWS, seed: int = TRUTH_SEED
) -> tuple[float, float]:
    """``(I, stderr)`` in nats: the mean of ``log p(z) - log p(x) - log p(y)`` over ``draws``.

    ``X`` is the first ``dim_x`` coordinates. ``stderr`` is the sample standard deviation of
    the terms over ``sqrt(draws)``.

    Examples
    --------
    >>> mix = GaussianMixture(np.array([1.0]), np.zeros((1, 2)), np.array([[[1, .6], [.6, 1]]]))
    >>> mi, stderr = monte_carlo_mutual_information(mix, 1, draws=100_000)
    >>> abs(mi - 0.223144) < 4 * stderr  # closed form -log(1 - 0.36) / 2
    True
    """
    func = "monte_carlo_mutual_information"
    dim_x = check_int("dim_x", dim_x, func=func, low=1, high=mixture.dim - 1)
    draws = check_int("draws", draws, func=func, low=2)
    rng = np.random.default_rng(check_seed(seed, func=func))
    z = mixture.sample(draws, rng)
    terms = (
        mixture.logpdf(z)
        - mixture.marginal(0, dim_x).logpdf(z[:, :dim_x])
        - mixture.marginal(dim_x, mixture.dim).logpdf(z[:, dim_x:])
    )
    return float(terms.mean()), float(terms.std(ddof=1) / math.sqrt(draws))


def _sample_mixture(
    n_samples: int, seed: int, *, mixture: GaussianMixture, dim_x: int
) -> tuple[np.ndarray, np.ndarray]:
    z = mixture.sample(n_samples, np.random.default_rng(seed))
    return z[:, :dim_x], z[:, dim_x:]


def mixture_task(
    name: str,
    mixture: GaussianMixture,
    dim_x: int,
    *,
    description: str = "",
    draws: int = TRUTH_DRAWS,
    seed: int = TRUTH_SEED,
) -> MITask:
    """A task sampling ``mixture`` (``X`` = first ``dim_x`` coordinates), Monte Carlo truth."""
    truth, stderr = monte_carlo_mutual_information(mixture, dim_x, draws=draws, seed=seed)
    return MITask(
        name=name,
        family="mixture",
        x_shape=(dim_x,),
        y_shape=(mixture.dim - dim_x,),
        mutual_information=max(truth, 0.0),
        truth_stderr=stderr,
        sampler=partial(_sample_mixture, mixture=mixture, dim_x=dim_x),
        description=f"{description}; Monte Carlo truth over {draws} draws (exact log densities)",
    )


def bimodal_task(
    separation: float = 2.0, correlation: float = -0.5, *, draws: int = TRUTH_DRAWS
) -> MITask:
    """Scalars ``X, Y``: modes at ``+-(m, m)`` (``m = separation``), within-mode ``corr = r``.

    Examples
    --------
    >>> task = bimodal_task(draws=20_000)  # 0.716: the default 200,000-draw truth
    >>> task.name, abs(task.mutual_information - 0.716) < 5 * task.truth_stderr + 0.003
    ('mixture-bimodal-1v1', True)
    """
    func = "bimodal_task"
    m = check_real("separation", separation, func=func)
    r = check_correlation(correlation, func=func)
    cov = np.array([[1.0, r], [r, 1.0]])
    mixture = GaussianMixture(
        np.array([0.5, 0.5]), np.array([[-m, -m], [m, m]]), np.stack([cov, cov])
    )
    return mixture_task(
        "mixture-bimodal-1v1",
        mixture,
        1,
        description=f"two modes at +-({m:g}, {m:g}), within-mode correlation {r:g}",
        draws=draws,
    )


def x_mixture_task(dim: int, correlation: float, *, draws: int = TRUTH_DRAWS) -> MITask:
    """``X, Y`` in ``R^dim``: ``Y = s rho X + sqrt(1 - rho^2) eps``, ``s = +-1`` shared.

    Examples
    --------
    >>> task = x_mixture_task(1, 0.9, draws=20_000)  # 0.410: the 200,000-draw truth
    >>> task.name, abs(task.mutual_information - 0.410) < 5 * task.truth_stderr + 0.003
    ('mixture-x-1v1', True)
    """
    func = "x_mixture_task"
    dim = check_int("dim", dim, func=func, low=1)
    rho = check_correlation(correlation, func=func)
    eye = np.eye(dim)
    covariances = np.stack(
        [np.block([[eye, s * rho * eye], [s * rho * eye, eye]]) for s in (1, -1)]
    )
    mixture = GaussianMixture(np.array([0.5, 0.5]), np.zeros((2, 2 * dim)), covariances)
    shape = "1v1" if dim == 1 else f"{dim}x{dim}"
    return mixture_task(
        f"mixture-x-{shape}",
        mixture,
        dim,
        description=f"equal mixture of correlations +{rho:g} and -{rho:g} per coordinate pair",
        draws=draws,
    )
