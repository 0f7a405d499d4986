r"""H-MINE / MINE: the Donsker-Varadhan (DV) bound, its minibatch estimate, the input layer.

Three claims: the DV bound itself (Section 2.2, below); the minibatch value of Algorithm 1
line 15 read as a lower bound (its upward Jensen bias, at the optimal critic on the same
Gaussians); and the "reduced by B times" input layer of Section 2.3 (parameter counts of a
fully connected first layer of 200 neurons, Section 3.1).

H-MINE (``papers/h-mine-quantitative-leakage-metric.txt``, Section 2.2, after Belghazi et
al. 2018, eq. 5) estimates :math:`I(X_B; G)` by maximising

.. math:: \mathrm{DV}(T) = \mathbb E_{P_{XY}}[T] - \log\mathbb E_{P_X\otimes P_Y}[e^T]
          \;\le\; I(X; Y)

over a network family. Here the bound is checked in numpy for a bivariate Gaussian with
correlation :math:`\rho` (:math:`I = -\tfrac12\log(1-\rho^2)` nats, from
``bounds.gaussian.masked_update_mi``): the optimal critic
:math:`T^* = \log dP_{XY}/d(P_X\otimes P_Y)` attains it, and other critics stay below it
(a scaled :math:`T^*/2` and the bilinear family :math:`T = a\,xy` fitted by scipy on a
training sample and evaluated on fresh samples). The torch estimators of
``estimators.neural`` (MINE, H-MINE) optimise the same objective with a network.

Each Monte Carlo estimate of DV(T) comes with a delta-method standard error:
:math:`\mathrm{Var}\,\widehat{\mathrm{DV}} \approx \mathrm{Var}_P T/n +
\mathrm{Var}_Q e^T/(n(\mathbb E_Q e^T)^2)`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from pruneleak.bounds import gaussian
from pruneleak.bounds.claims.checks import GridCheck, MonteCarloCheck, Param
from pruneleak.bounds.claims.claim import Claim

# e^{T*} under the product of marginals has a finite third moment only for rho < 1/2
# (moments of order k < (1 + rho)/rho): the CLT interval is reliable below that.
_RHOS = (0.2, 0.3, 0.4)
_TRAIN_FRACTION = 4


def gaussian_mi(rho: float) -> float:
    """I(X; Y) in nats for a standard bivariate Gaussian with correlation ``rho``."""
    cov = np.array([[rho**2]])  # Y = rho X + sqrt(1 - rho^2) N
    return gaussian.masked_update_mi(
        cov, np.array([True]), batch_size=1, noise_std=math.sqrt(1 - rho**2), unit="nats"
    )


def _draw(rng, n, rho):
    """n joint pairs and n pairs from the product of the marginals."""
    x, noise, x_marg, y_marg = rng.standard_normal((4, n))
    return (x, rho * x + math.sqrt(1 - rho**2) * noise), (x_marg, y_marg)


def _optimal_critic(rho):
    def critic(x, y):
        quad = rho**2 * x**2 - 2 * rho * x * y + rho**2 * y**2
        return -0.5 * math.log1p(-(rho**2)) - quad / (2 * (1 - rho**2))

    return critic


def _dv(t_joint, t_marginal):
    """DV estimate and its delta-method standard error."""
    n = t_joint.size
    shift = float(t_marginal.max())
    w = np.exp(t_marginal - shift)
    estimate = float(t_joint.mean() - (shift + math.log(w.mean())))
    variance = t_joint.var(ddof=1) / n + w.var(ddof=1) / (n * w.mean() ** 2)
    return estimate, math.sqrt(variance)


def _fit_bilinear(rng, n, rho):
    """The a maximising the empirical DV of T = a x y on a training sample (|a| < 1)."""
    (x, y), (xm, ym) = _draw(rng, n, rho)

    def negative_dv(a):
        return -(a * np.mean(x * y) - (special.logsumexp(a * xm * ym) - math.log(n)))

    return optimize.minimize_scalar(negative_dv, bounds=(-0.99, 0.99), method="bounded").x


def _dv_sampler(rng, n, rho, critic):
    """DV(T) on fresh samples for the named critic: (estimate, standard error)."""
    if critic == "optimal":
        func = _optimal_critic(rho)
    elif critic == "half":
        optimal = _optimal_critic(rho)

        def func(x, y):
            return 0.5 * optimal(x, y)
    else:
        a = _fit_bilinear(rng, max(n // _TRAIN_FRACTION, 100), rho)

        def func(x, y):
            return a * x * y

    (x, y), (xm, ym) = _draw(rng, n, rho)
    return _dv(func(x, y), func(xm, ym))


def _dv_check(relation, points):
    return MonteCarloCheck(
        sampler=_dv_sampler,
        claimed=lambda rho, critic: gaussian_mi(rho),
        points=tuple({"rho": r, "critic": c} for c, r in points),
        relation=relation,
        statistic="estimate",
        samples=100_000,
        true_label="DV(T) (Monte Carlo, fresh samples)",
        claimed_label="I(X;Y) = -log(1 - rho^2)/2",
    )


DV_BOUND = Claim(
    id="hmine.dv_bound",
    paper="hmine",
    location="Section 2.2 (Donsker-Varadhan representation)",
    statement=(
        "I(X_B; G) = D_KL(P_{X_B G} || P_{X_B} x P_G) >= sup_T E_P[T] - log E_{P x P}[e^T] "
        "for any class of critics T, with equality for T* = log dP/d(P x P)."
    ),
    checks=(
        _dv_check("==", [("optimal", r) for r in _RHOS]),
        # At small rho the best bilinear critic is within noise of T* (T* = rho x y + O(rho^2)).
        _dv_check("<=", [("half", r) for r in _RHOS] + [("bilinear", 0.4), ("bilinear", 0.45)]),
    ),
    notes=(
        "Critics: T* (equality), T*/2 and the best bilinear critic a x y (strictly below: "
        "neither family contains T*)."
    ),
)


def _minibatch_dv_sampler(rng, n, rho, batch):
    """n minibatch estimates V of Algorithm 1 (line 15) with S = ``batch`` and T = T*."""
    critic = _optimal_critic(rho)
    (x, y), (xm, ym) = _draw(rng, n * batch, rho)
    joint = critic(x, y).reshape(n, batch)
    marginal = critic(xm, ym).reshape(n, batch)
    return joint.mean(axis=1) - (special.logsumexp(marginal, axis=1) - math.log(batch))


MINIBATCH_DV = Claim(
    id="hmine.alg1_minibatch_lower_bound",
    paper="hmine",
    location="Algorithm 1, line 15 ('Evaluate the lower-bound'), with Section 2.2",
    statement=(
        "The minibatch value V(phi) = (1/S) sum_k v_k - log((1/S) sum_k e^{v_hat_k}) of "
        "Algorithm 1 is a lower bound on I(X_B; G)."
    ),
    checks=(
        MonteCarloCheck(
            sampler=_minibatch_dv_sampler,
            claimed=lambda rho, batch: gaussian_mi(rho),
            points=tuple({"rho": 0.3, "batch": s} for s in (1, 2, 4)),
            relation="<=",
            statistic="mean",
            samples=40_000,
            true_label="E[V] of Algorithm 1 at the optimal critic T* (Monte Carlo)",
            claimed_label="I(X;Y) = -log(1 - rho^2)/2",
            labels={"rho": "rho", "batch": "S"},
        ),
    ),
    notes=(
        "By Jensen, E[-log mean_S e^T] >= -log E[e^T], so E[V] >= DV(T): at T = T* and S = 1, "
        "E[V] = rho^2/(1 - rho^2) > I. The bias shrinks like Var_Q(e^T)/(2 S (E_Q e^T)^2)."
    ),
    corrected=(
        "E[V] >= DV(T), with an upward bias ~ Var_Q(e^T) / (2 S (E_Q e^T)^2) (at T*: "
        "rho^2 / (2 S (1 - rho^2)) for Gaussians): V is a lower bound on I only as S -> oo; "
        "NWJ (MINE-f), E_P[T] - E_Q[e^(T-1)], is a lower bound on I in expectation."
    ),
)

# Adult (Section 3.1): 14 attributes; the gradient of the logistic-regression task model has
# 14 weights and a bias. The first layer of the BlockModel has 200 neurons.
_ADULT_FEATURES = 14
_FIRST_LAYER = 200


def _input_layer_parameters(inputs):
    """Weights and biases of a fully connected layer from ``inputs`` to 200 neurons."""
    return (inputs + 1) * _FIRST_LAYER


def _input_layer_ratio(B, d_g):
    """Naive statistic network on (X_B, G) over the shared BlockModel on (x_m, G)."""
    naive = _input_layer_parameters(B * _ADULT_FEATURES + d_g)
    return naive / _input_layer_parameters(_ADULT_FEATURES + d_g)


INPUT_LAYER = Claim(
    id="hmine.input_layer_reduction",
    paper="hmine",
    location="Section 2.3, last paragraph ('reduced by B times')",
    statement=(
        "The number of parameters in the input layer of H-MINE is reduced by B times, "
        "compared to a naive fully connected layer on (X_B, G)."
    ),
    checks=(
        GridCheck(
            true=_input_layer_ratio,
            claimed=lambda B, d_g: B + 0 * d_g,
            params=(
                Param("B", 1, 64, integer=True, points=64),
                Param("d_g", 1, 100_000, scale="log", integer=True, points=11, label="dim G"),
            ),
            relation="==",
            true_label="input-layer parameters, naive ((B d_x + d_G + 1) x 200) / H-MINE",
            claimed_label="B",
            domain_param="B",
        ),
    ),
    notes=(
        f"d_x = {_ADULT_FEATURES} (Adult), 200 neurons; the gradient G enters every block, "
        "so it is not divided by B (for the paper's logistic regression d_G = 15)."
    ),
    corrected=(
        "The input layer shrinks by (B d_x + d_G + 1) / (d_x + d_G + 1) times, which is B "
        "only for B = 1 and tends to 1 as d_G / (B d_x) grows (1.97 for Adult, B = 3, d_G = 15)."
    ),
)

CLAIMS = (DV_BOUND, MINIBATCH_DV, INPUT_LAYER)
