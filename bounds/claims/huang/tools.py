r"""The probability tools Huang et al. state and cite: Lemmas A.1-A.3, A.7, Theorem C.1,
Theorems E.6 and E.7 (``papers/huang-pruning-as-dp-noise-arxiv2003.01876.txt``, lines
423-472, 712-714 and 915-921).

Each is checked as printed against an exact reference: binomial tails of ``scipy.stats``
(Chernoff, Hoeffding, Bernstein with two-point variables, Littlewood-Offord with equal
coefficients, the most concentrated case), a Monte Carlo mean and tail of the spectral
norm of a sum of random sign matrices (matrix Bernstein), the exact privacy loss of the
Laplace mechanism and the exact delta of the Gaussian mechanism (Balle and Wang 2018,
Theorem 8). Where a statement names a scale (sigma, M, the unit of f), the check sweeps it;
a universal constant that the paper leaves unnamed is checked with a stated witness.

Part of :mod:`bounds.claims.huang`; ``CLAIMS`` lists the claims in the paper's order.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special, stats

from pruneleak.bounds.claims.checks import GridCheck, MonteCarloCheck, Param
from pruneleak.bounds.claims.claim import Claim

_CHERNOFF_N = 1000
_UNIT = Param("c", 1e-3, 1e3, scale="log", points=5, label="unit (scale) of the variables")


def _chernoff_upper(mu, delta):
    """log Pr[X >= (1 + delta) mu], X ~ Binomial(1000, mu/1000) (scipy, exact)."""
    k = np.ceil((1 + delta) * mu)
    return stats.binom.logsf(k - 1, _CHERNOFF_N, mu / _CHERNOFF_N)


def _chernoff_lower(mu, delta):
    """log Pr[X <= (1 - delta) mu], X ~ Binomial(1000, mu/1000) (scipy, exact)."""
    return stats.binom.logcdf(np.floor((1 - delta) * mu), _CHERNOFF_N, mu / _CHERNOFF_N)


_MU = Param("mu", 0.5, 50.0, scale="log", points=13, label="mu = E[X]")

A1_UPPER = Claim(
    id="huang.A1.upper",
    paper="huang",
    location="Lemma A.1, part 1 (Chernoff)",
    statement=(
        "For X a sum of independent Bernoulli variables with mean mu, Pr[X >= (1 + delta) "
        "mu] <= exp(-delta^2 mu / 3) for every delta > 0."
    ),
    checks=(
        GridCheck(
            true=_chernoff_upper,
            claimed=lambda mu, delta: -(delta**2) * mu / 3,
            params=(_MU, Param("delta", 0.01, 20.0, scale="log", points=61)),
            relation="<=",
            true_label=f"log Pr[X >= (1 + delta) mu], X ~ Binomial({_CHERNOFF_N}, mu/n) (exact)",
            claimed_label="-delta^2 mu / 3",
            domain_param="delta",
        ),
    ),
    notes=(
        "The form exp(-delta^2 mu/3) is the Chernoff bound for 0 < delta <= 1; for large "
        "delta the upper tail decays like exp(-delta mu log delta), slower than exp(-delta^2)."
    ),
    corrected=(
        "Pr[X >= (1 + delta) mu] <= exp(-delta^2 mu/(2 + delta)) for every delta > 0, which "
        "is at most exp(-delta^2 mu/3) only for delta <= 1."
    ),
)

A1_LOWER = Claim(
    id="huang.A1.lower",
    paper="huang",
    location="Lemma A.1, part 2 (Chernoff)",
    statement=(
        "For X a sum of independent Bernoulli variables with mean mu, Pr[X <= (1 - delta) "
        "mu] <= exp(-delta^2 mu / 2) for every 0 < delta < 1."
    ),
    checks=(
        GridCheck(
            true=_chernoff_lower,
            claimed=lambda mu, delta: -(delta**2) * mu / 2,
            params=(_MU, Param("delta", 0.01, 0.99, points=50)),
            relation="<=",
            true_label=f"log Pr[X <= (1 - delta) mu], X ~ Binomial({_CHERNOFF_N}, mu/n) (exact)",
            claimed_label="-delta^2 mu / 2",
        ),
    ),
)

_N_SUM = Param("n", 1, 200, scale="log", integer=True, points=15, label="number of terms n")


def _hoeffding_true(n, u, c):
    """log Pr[|X - E X| >= t], X = c K, K ~ Binomial(n, 1/2), t = u c sqrt(n) (exact)."""
    k = u * np.sqrt(n)  # t / c
    upper = stats.binom.logsf(np.ceil(n / 2 + k) - 1, n, 0.5)
    lower = stats.binom.logcdf(np.floor(n / 2 - k), n, 0.5)
    return np.logaddexp(upper, lower) + 0 * c


A2 = Claim(
    id="huang.A2",
    paper="huang",
    location="Lemma A.2 (Hoeffding)",
    statement=(
        "For independent X_i in [a_i, b_i] and X = sum_i X_i: Pr[|X - E X| >= t] <= "
        "2 exp(-2 t^2 / sum_i (b_i - a_i)^2)."
    ),
    checks=(
        GridCheck(
            true=_hoeffding_true,
            claimed=lambda n, u, c: np.log(2) - 2 * (u * c * np.sqrt(n)) ** 2 / (n * c**2),
            params=(_N_SUM, Param("u", 0.01, 4.0, scale="log", points=41), _UNIT),
            relation="<=",
            true_label="log Pr[|X - E X| >= t], X_i = c Bernoulli(1/2) in [0, c] (exact)",
            claimed_label="log 2 - 2 t^2/(n c^2)",
        ),
    ),
)


def _bernstein_true(n, u, c):
    """log Pr[sum X_i > t], X_i = +-c with probability 1/2, t = u c sqrt(n) (exact)."""
    k = (n + u * np.sqrt(n)) / 2  # sum > t iff the number of +c exceeds k
    return stats.binom.logsf(np.floor(k), n, 0.5) + 0 * c


A3 = Claim(
    id="huang.A3",
    paper="huang",
    location="Lemma A.3 (Bernstein)",
    statement=(
        "For independent zero-mean X_i with |X_i| <= M: Pr[sum_i X_i > t] <= "
        "exp(-(t^2/2) / (sum_j E[X_j^2] + M t / 3)) for every t > 0."
    ),
    checks=(
        GridCheck(
            true=_bernstein_true,
            claimed=lambda n, u, c: (
                -((u * c * np.sqrt(n)) ** 2 / 2) / (n * c**2 + c * (u * c * np.sqrt(n)) / 3)
            ),
            params=(_N_SUM, Param("u", 0.01, 8.0, scale="log", points=41), _UNIT),
            relation="<=",
            true_label="log Pr[sum X_i > t], X_i = +-M (M = c) equally likely (exact)",
            claimed_label="-(t^2/2)/(n M^2 + M t/3)",
        ),
    ),
)

_MATRIX_POINTS = tuple(
    {"m": m, "n": n, "c": c} for m, n in ((100, 2), (400, 8), (50, 25)) for c in (1e-3, 1e3)
)


def _sign_matrix_norms(rng, draws, m, n, c):
    """||sum_i X_i|| for X_i = c eps_i E_{j_i j_i}: eps_i = +-1, j_i uniform in [n] (diagonal,
    so the spectral norm is c max_j |sum of the signs landing on j|)."""
    coords = rng.integers(0, n, size=(draws, m))
    signs = rng.choice((-1.0, 1.0), size=(draws, m))
    sums = np.zeros((draws, n))
    np.add.at(sums, (np.arange(draws)[:, None], coords), signs)
    return c * np.abs(sums).max(axis=1)


def _matrix_variance(m, n, c):
    """Var[X] = ||sum_i E[X_i X_i^T]|| = m c^2 / n for these X_i."""
    return m * c**2 / n


A7_EXPECTATION = Claim(
    id="huang.A7.expectation",
    paper="huang",
    location="Lemma A.7 (matrix Bernstein), expectation bound",
    statement=(
        "For i.i.d. zero-mean n1 x n2 matrices with ||X_i|| <= M and X = sum_i X_i: "
        "E||X|| <= (2 Var[X] log(n1 + n2))^(1/2) + M log(n1 + n2) / 3."
    ),
    checks=(
        MonteCarloCheck(
            sampler=_sign_matrix_norms,
            claimed=lambda m, n, c: (
                math.sqrt(2 * _matrix_variance(m, n, c) * math.log(2 * n)) + c * math.log(2 * n) / 3
            ),
            points=_MATRIX_POINTS,
            relation="<=",
            statistic="mean",
            samples=2000,
            true_label="E||sum_i c eps_i E_{j_i j_i}|| (n1 = n2 = n, M = c)",
            claimed_label="(2 Var log 2n)^(1/2) + M log(2n)/3",
            labels={"m": "m", "n": "n", "c": "M"},
        ),
    ),
)


def _tail_indicator(rng, draws, m, n, c, u):
    """||X|| >= t at t = u sqrt(Var[X]) (one boolean per draw)."""
    return _sign_matrix_norms(rng, draws, m, n, c) >= u * math.sqrt(_matrix_variance(m, n, c))


def _matrix_tail_bound(m, n, c, u):
    var = _matrix_variance(m, n, c)
    t = u * math.sqrt(var)
    return min(1.0, 2 * n * math.exp(-(t**2 / 2) / (var + c * t / 3)))


A7_TAIL = Claim(
    id="huang.A7.tail",
    paper="huang",
    location="Lemma A.7 (matrix Bernstein), tail bound",
    statement=(
        "For the X of Lemma A.7 and every t >= 0: Pr[||X|| >= t] <= (n1 + n2) "
        "exp(-(t^2/2) / (Var[X] + M t / 3))."
    ),
    checks=(
        MonteCarloCheck(
            sampler=_tail_indicator,
            claimed=_matrix_tail_bound,
            points=tuple(
                {"m": 400, "n": 8, "c": c, "u": u} for c in (1e-3, 1e3) for u in (2.5, 3.0, 3.5)
            ),
            relation="<=",
            statistic="probability",
            samples=4000,
            true_label="Pr[||sum_i c eps_i E_{j_i j_i}|| >= u Var^(1/2)]",
            claimed_label="min(1, 2n exp(-(t^2/2)/(Var + M t/3)))",
            labels={"c": "M", "u": "t/Var^(1/2)"},
        ),
    ),
    notes="The bound is checked where it is below 1 (u >= 2.5), so that it could fail.",
)


def _most_concentrated(d):
    """max over open intervals I of length 1 of Pr[sum_i x_i in I], x uniform on {-1, 1}^d
    (a_i = 1: the sums are spaced by 2, so one interval holds at most one of them)."""
    return stats.binom.pmf(np.floor(d / 2), d, 0.5)


_C1_WITNESS = 2.0

C1 = Claim(
    id="huang.C1",
    paper="huang",
    location="Theorem C.1 (Littlewood-Offord)",
    statement=(
        "There is a universal C > 0 such that for every linear form p(x) = sum_i a_i x_i "
        "with |a_i| >= 1 and every open interval I of length 1, Pr_{x ~ {-1,1}^d}[p(x) in "
        "I] <= C log(d) / sqrt(d)."
    ),
    checks=(
        GridCheck(
            true=_most_concentrated,
            claimed=lambda d: _C1_WITNESS * np.log(d) / np.sqrt(d),
            params=(Param("d", 1, 10_000, scale="log", integer=True, points=60),),
            relation="<=",
            true_label="max_I Pr[sum_i x_i in I] = max binomial(d, 1/2) probability (exact)",
            claimed_label=f"C log(d)/sqrt(d) with the witness C = {_C1_WITNESS:g}",
            domain_param="d",
        ),
    ),
    notes=(
        "The constant is unnamed; C = 2 is a witness for d >= 2. At d = 1 the right-hand "
        "side is 0 for every C while the probability is 1/2."
    ),
    corrected=(
        "Pr[p(x) in I] <= C / sqrt(d) (Erdős 1945), or C log(d)/sqrt(d) for d >= 2 only; "
        "at d = 1 the printed bound is 0."
    ),
)


def _laplace_loss(phi, eps, d, c):
    """The largest privacy loss of f + Lap(GS_1/eps)^d over outputs, for neighbours whose
    outputs differ by phi GS_1 in l1 norm (GS_1 = c, spread evenly over d coordinates),
    evaluated on a grid of outputs along the difference (scipy log-densities)."""
    scale = c / eps
    shift = phi * c / d
    y = np.linspace(-3 * scale, shift + 3 * scale, 401)
    loss = d * (stats.laplace.logpdf(y, scale=scale) - stats.laplace.logpdf(y, shift, scale))
    return float(np.abs(loss).max())


E6 = Claim(
    id="huang.E6",
    paper="huang",
    location="Theorem E.6 (Laplace mechanism)",
    statement=(
        "A(D) = f(D) + Lap(GS_1(f)/eps)^d is eps-differentially private: the output "
        "density ratio of neighbours is at most exp(eps)."
    ),
    checks=(
        GridCheck(
            true=np.vectorize(_laplace_loss, otypes=[float]),
            claimed=lambda phi, eps, d, c: eps + 0 * (phi + d + c),
            params=(
                Param("phi", 0.05, 1.0, points=5, label="||f(D1) - f(D2)||_1 / GS_1"),
                Param("eps", 0.01, 10.0, scale="log", points=7),
                Param("d", 1, 64, scale="log", integer=True, points=4),
                Param("c", 1e-3, 1e3, scale="log", points=3, label="GS_1 (unit of f)"),
            ),
            relation="<=",
            true_label="max_y |log p_A(D1)(y) / p_A(D2)(y)| (scipy)",
            claimed_label="eps",
            refine=False,
        ),
    ),
)


def _gaussian_mechanism_delta(eps, delta):
    """Exact delta of the Gaussian mechanism with sigma = c GS_2/eps at c = 2 sqrt(log(1/
    delta)) (Balle and Wang 2018, Theorem 8): Phi(eps/(2c) - c) - e^eps Phi(-eps/(2c) - c)."""
    c = 2 * np.sqrt(np.log(1 / delta))
    first = special.ndtr(eps / (2 * c) - c)
    second = np.exp(eps + special.log_ndtr(-eps / (2 * c) - c))
    return np.maximum(first - second, 0.0)


E7 = Claim(
    id="huang.E7",
    paper="huang",
    location="Theorem E.7 (Gaussian mechanism)",
    statement=(
        "For c > 2 sqrt(log(1/delta)), the Gaussian mechanism with sigma >= c GS_2(f)/eps is "
        "(eps, delta)-differentially private."
    ),
    checks=(
        GridCheck(
            true=_gaussian_mechanism_delta,
            claimed=lambda eps, delta: delta,
            params=(
                Param("eps", 0.01, 100.0, scale="log", points=61),
                Param("delta", 1e-10, 0.5, scale="log", points=21),
            ),
            relation="<=",
            true_label="exact delta at eps for sigma = c GS_2/eps, c = 2 sqrt(log(1/delta))",
            claimed_label="delta",
            domain_param="eps",
            atol=0.0,
        ),
    ),
    notes=(
        "Dwork and Roth's Theorem A.1 has c^2 > 2 log(1.25/delta) and requires eps < 1; the "
        "printed statement drops the condition on eps, and the exact delta exceeds the "
        "claimed one for large eps."
    ),
    corrected=(
        "The Gaussian mechanism with sigma = c GS_2/eps, c^2 > 2 log(1.25/delta), is "
        "(eps, delta)-DP for eps in (0, 1) (Dwork and Roth 2014, Theorem A.1); for larger "
        "eps calibrate sigma by the exact condition of Balle and Wang (2018, Theorem 8)."
    ),
)

CLAIMS_A = (A1_UPPER, A1_LOWER, A2, A3, A7_EXPECTATION, A7_TAIL)
CLAIMS_C = (C1,)
CLAIMS_E = (E6, E7)
