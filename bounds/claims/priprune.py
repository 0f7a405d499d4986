r"""Claims of PriPrune's proof of Theorem 1 (``papers/priprune-aaai-arxiv2310.19958.txt``).

Locations follow the AAAI/arXiv version: Theorem 1 is eq. (4); the appendix "Proof of
Theorem" numbers the single-round split (eq. 12-13), part A (eq. 14-15, steps (a)-(b)),
part B (eq. 16-17), part C (eq. 18), part D (eq. 19) and PruneFL (eq. 23). The journal
version states the same bounds (Theorem 4.1, Corollary 4.2, eq. 25).

Reference values: differential entropies of Gaussians from ``scipy.stats`` (independent of
``bounds``), the exact Gaussian leakage of ``bounds.gaussian``, and the published and
corrected terms of ``bounds.priprune``. Entropies are in nats unless a claim says bits;
the paper's "log" is base 2 (``bounds.priprune`` docstring), and each identity checked
here is compared in a single unit on both sides, so the base does not change a verdict.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import sympy as sp
from scipy import stats

from pruneleak.bounds import gaussian, priprune
from pruneleak.bounds.claims.checks import GridCheck, LimitCheck, Param, SeriesCheck, SymbolicCheck
from pruneleak.bounds.claims.claim import Claim

_TAYLOR_TERMS = 5
_GAUSSIAN_DIM = 8


@lru_cache(maxsize=64)
def _covariance(dim: int, *, unit_det: bool) -> np.ndarray:
    """A fixed random SPD matrix (eigenvalues log-uniform in [0.1, 10]); det 1 if asked."""
    rng = np.random.default_rng(20231030 + dim)
    q, _ = np.linalg.qr(rng.normal(size=(dim, dim)))
    eig = np.exp(rng.uniform(math.log(0.1), math.log(10.0), size=dim))
    if unit_det:
        eig = eig / np.exp(np.mean(np.log(eig)))
    return (q * eig) @ q.T


def _entropy(cov) -> float:
    """Differential entropy of N(0, cov) in nats (scipy, independent of ``bounds``)."""
    return float(stats.multivariate_normal(cov=cov).entropy())


def _vectorize(func):
    return np.vectorize(func, otypes=[float])


# ---------------------------------------------------------------------------------------
# Part A: the mask entropy (eq. 15)
# ---------------------------------------------------------------------------------------

_x = sp.Symbol("x", real=True)
_p = sp.Symbol("p", real=True)


def _taylor_sum(x, n_terms):
    return 1 - sum((2 * x) ** (2 * n) / (n * (2 * n - 1)) for n in range(1, n_terms + 1)) / (
        2 * sp.log(2)
    )


def _hb_sym(p):
    return -(p * sp.log(p, 2) + (1 - p) * sp.log(1 - p, 2))


TAYLOR = Claim(
    id="priprune.taylor_series",
    paper="priprune",
    location="Appendix, eq. (15), step (b)",
    statement=(
        "Around p = 1/2 the binary entropy has the Taylor series "
        "H_b(p) = 1 - (1/(2 ln 2)) sum_{n>=1} (2p - 1)^(2n) / (n (2n - 1)) bits."
    ),
    checks=(
        SeriesCheck(
            true=_hb_sym(sp.Rational(1, 2) + _x),
            claimed=_taylor_sum(_x, _TAYLOR_TERMS),
            var=_x,
            order=2 * _TAYLOR_TERMS + 2,
            param=Param("x", -0.49, 0.49, label="p - 1/2"),
            true_label="H_b(1/2 + x)",
            claimed_label=f"series truncated after {_TAYLOR_TERMS} terms",
        ),
        GridCheck(
            true=lambda p: priprune.binary_entropy(p),
            claimed=lambda p: priprune.binary_entropy_taylor(p, 400),
            params=(Param("p", 0.05, 0.95, points=181),),
            relation="==",
            true_label="H_b(p)",
            claimed_label="series with 400 terms",
        ),
    ),
)

MASK_TERM_BOUND = Claim(
    id="priprune.mask_term_bound",
    paper="priprune",
    location="Appendix, eq. (15), last inequality",
    statement="H_b(p) <= 1 - (p - 1)/(2 ln 2) bits for every pruning rate p in [0, 1].",
    checks=(
        GridCheck(
            true=lambda p: priprune.binary_entropy(p),
            claimed=lambda p: priprune.mask_entropy_published(p),
            params=(Param("p", 0.0, 1.0, points=401),),
            relation="<=",
            true_label="H_b(p)",
            claimed_label="1 - (p-1)/(2 ln 2)",
        ),
    ),
    notes="True but loose: the right-hand side is at least 1 bit, the maximum of H_b.",
)

MASK_TERM_FROM_SERIES = Claim(
    id="priprune.mask_term_from_series",
    paper="priprune",
    location="Appendix, eq. (15), steps (b) to the last line",
    statement=(
        "The published term 1 - (p - 1)/(2 ln 2) is the Taylor series of step (b) "
        "truncated after its first term, 1 - (2p - 1)^2/(2 ln 2)."
    ),
    checks=(
        SymbolicCheck(
            true=1 - (2 * _p - 1) ** 2 / (2 * sp.log(2)),
            claimed=1 - (_p - 1) / (2 * sp.log(2)),
            relation="==",
            params=(Param("p", 0.0, 1.0, points=101),),
            true_label="1 - (2p-1)^2/(2 ln 2)",
            claimed_label="1 - (p-1)/(2 ln 2)",
        ),
    ),
    corrected=(
        "Truncated after its first term the series gives H_b(p) ~ 1 - (2p - 1)^2/(2 ln 2) "
        "bits; the exact bound is H_b(p) <= 1 bit (eq. 15 step (b) needs neither)."
    ),
)

MASK_ENTROPY_DIMENSION = Claim(
    id="priprune.mask_entropy_dimension",
    paper="priprune",
    location="Appendix, eq. (15), step (b) (H(m) of the mask m in {0,1}^d)",
    statement=(
        "The entropy of the pruning mask m^t in {0,1}^d with pruning rate p is at most the "
        "single-coordinate term 1 - (p - 1)/(2 ln 2) bits."
    ),
    checks=(
        GridCheck(
            true=lambda p, d: priprune.mask_entropy_corrected(p, d),
            claimed=lambda p, d: priprune.mask_entropy_published(p) + 0 * d,
            params=(
                Param("p", 0.0, 1.0, points=41),
                Param("d", 1, 100_000, scale="log", integer=True, points=41),
            ),
            relation="<=",
            true_label="H(m) of an i.i.d. Bernoulli mask = d H_b(p) bits",
            claimed_label="1 - (p-1)/(2 ln 2)",
            domain_param="d",
        ),
    ),
    notes="A mask with i.i.d. Bernoulli(1-p) entries has pruning rate p in expectation.",
    corrected=(
        "H(m^t) <= d H_b(p) bits for a mask of d entries with pruning rate p (i.i.d. "
        "Bernoulli entries attain it; a mask with exactly pd zeros has log2 C(d, pd) <= d "
        "H_b(p)); bounds.priprune.mask_entropy_corrected."
    ),
)

# ---------------------------------------------------------------------------------------
# Parts B-D: scaling, whitening, maximum entropy (eq. 17-19)
# ---------------------------------------------------------------------------------------


@_vectorize
def _scaling_true(d_star, B):
    cov = _covariance(int(d_star), unit_det=False)
    return _entropy(cov / B) - _entropy(B * cov)


SCALING = Claim(
    id="priprune.eq17_scaling",
    paper="priprune",
    location="Appendix, eq. (17)",
    statement=(
        "Scaling the summed per-sample gradients by 1/B changes the differential entropy by "
        "log(1/B): h((1/B) sum_b g_b) = h(sum_b g_b) + log(1/B) for the d*-dimensional gradient."
    ),
    checks=(
        GridCheck(
            true=_scaling_true,
            claimed=lambda d_star, B: -np.log(B) + 0 * d_star,
            params=(
                Param("d_star", 1, 16, integer=True, points=16, label="d*"),
                Param("B", 1.0, 1024.0, scale="log", points=41),
            ),
            relation="==",
            true_label="h(x) - h(sum g) for g_b ~ N(0, Sigma) (scipy), nats",
            claimed_label="log(1/B)",
            domain_param="d_star",
            curve_param="B",
        ),
    ),
    notes="Corrected (bounds.priprune.part_b_corrected): the change is -d* log B.",
    corrected=(
        "h((1/B) sum_b g_b) = h(sum_b g_b) - d* log B: scaling a d*-dimensional vector by 1/B"
        " adds d* log(1/B) (bounds.priprune.part_b_corrected)."
    ),
)


@_vectorize
def _whitening_true(d_star, s):
    cov = s * _covariance(int(d_star), unit_det=True)
    return _entropy(cov) - _entropy(np.eye(int(d_star)))


@_vectorize
def _whitening_claimed(d_star, s):
    cov = s * _covariance(int(d_star), unit_det=True)
    return priprune.delta_from_log_pseudo_det(np.linalg.slogdet(cov)[1])


WHITENING = Claim(
    id="priprune.eq18_whitening",
    paper="priprune",
    location="Appendix, eq. (18)",
    statement=(
        "By ZCA whitening, g_hat = Sigma^(-1/2) z with z of zero mean and identity covariance, "
        "so h(sum_b g_hat_b) = log|det Sigma^(-1/2)| + h(sum_b z_b)."
    ),
    checks=(
        GridCheck(
            true=_whitening_true,
            claimed=_whitening_claimed,
            params=(
                Param("d_star", 1, 8, integer=True, points=8, label="d*"),
                Param("s", 1e-3, 1e3, scale="log", points=41, label="det(Sigma)^(1/d*)"),
            ),
            relation="==",
            true_label="h(g_hat) - h(z), g_hat ~ N(0, Sigma), z = Sigma^(-1/2) g_hat (scipy)",
            claimed_label="log|det Sigma^(-1/2)| (Delta)",
            domain_param="s",
        ),
    ),
    notes=(
        "ZCA whitening is z = Sigma^(-1/2) g_hat, so g_hat = Sigma^(1/2) z and the entropy "
        "changes by +log det(Sigma)/2 = -Delta."
    ),
    corrected=(
        "g_hat = Sigma^(1/2) z, so h(sum_b g_hat_b) = (1/2) log det Sigma + h(sum_b z_b), "
        "i.e. + log|det Sigma^(1/2)| = -Delta, not + log|det Sigma^(-1/2)|."
    ),
)


@_vectorize
def _sum_entropy(d_star, B):
    return _entropy(B * np.eye(int(d_star)))


MAX_ENTROPY = Claim(
    id="priprune.eq19_max_entropy",
    paper="priprune",
    location="Appendix, eq. (19)",
    statement=(
        "For B independent whitened vectors z_b (zero mean, identity covariance), the "
        "maximum-entropy bound gives h(sum_{b=1}^B z_b) <= (d*/2) log(2 pi e)."
    ),
    checks=(
        GridCheck(
            true=_sum_entropy,
            claimed=lambda d_star, B: priprune.part_d_published(d_star, unit="nats") + 0 * B,
            params=(
                Param("d_star", 1, 32, integer=True, points=32, label="d*"),
                Param("B", 1.0, 1024.0, scale="log", points=41),
            ),
            relation="<=",
            true_label="h(sum of B Gaussian whitened vectors) = (d*/2) log(2 pi e B) (scipy)",
            claimed_label="(d*/2) log(2 pi e)",
            domain_param="B",
        ),
    ),
    notes="The sum has covariance B I: corrected bounds.priprune.part_d_corrected.",
    corrected=(
        "h(sum_{b=1}^B z_b) <= (d*/2) log(2 pi e B): the sum of B independent whitened "
        "vectors has covariance B I (bounds.priprune.part_d_corrected)."
    ),
)

# ---------------------------------------------------------------------------------------
# The first step, the final bound and its premise
# ---------------------------------------------------------------------------------------


@_vectorize
def _noisy_mi(sigma):
    return gaussian.masked_update_mi(
        np.array([[sigma**2]]), np.array([True]), batch_size=1, noise_std=sigma, unit="nats"
    )


MI_LE_ENTROPIES = Claim(
    id="priprune.mi_le_entropies",
    paper="priprune",
    location="Appendix, eq. (13) (I <= A + B)",
    statement=(
        "Dropping the joint entropy, I(X; Y) <= H(X) + H(Y), applied to the continuous "
        "x^t and w^t (.) m^t, i.e. with differential entropies."
    ),
    checks=(
        GridCheck(
            true=_noisy_mi,
            claimed=lambda sigma: (
                stats.norm(scale=sigma).entropy() + stats.norm(scale=sigma * math.sqrt(2)).entropy()
            ),
            params=(Param("sigma", 1e-3, 1e3, scale="log", points=81),),
            relation="<=",
            true_label="I(X; X + N) = log(2)/2, X, N ~ N(0, sigma^2)",
            claimed_label="h(X) + h(X + N) (scipy), nats",
            domain_param="sigma",
        ),
    ),
    notes=(
        "Differential entropies can be negative: the inequality holds only when "
        "sigma^2 >= 1/(2 pi e), a condition that changes with the unit of measurement."
    ),
    corrected=(
        "I(X; Y) <= H(X) + H(Y) holds for discrete entropies; with differential entropies use"
        " I(X; Y) = h(Y) - h(Y | X). In the Gaussian example (X, N ~ N(0, sigma^2)) the "
        "printed step holds iff sigma >= (2 pi e)^(-1/2) = 0.242, a condition that changes "
        "with the unit of x."
    ),
)

_KEEP_DIM = _GAUSSIAN_DIM


def _keep(p):
    k = max(1, round((1 - float(p)) * _KEEP_DIM))
    return np.arange(_KEEP_DIM) < k


@_vectorize
def _theorem_true(p, B, s):
    cov = _covariance(_KEEP_DIM, unit_det=False)
    return gaussian.masked_update_mi(cov, _keep(p), batch_size=B, noise_std=s, unit="bits")


def _theorem_claimed(p, B, s):
    cov = _covariance(_KEEP_DIM, unit_det=False)
    delta = priprune.delta_from_log_pseudo_det(np.linalg.slogdet(cov)[1])
    return priprune.single_round_bound(p, B, _KEEP_DIM, delta) + 0 * s


THEOREM1_GAUSSIAN = Claim(
    id="priprune.theorem1_gaussian",
    paper="priprune",
    location="Theorem 1, eq. (4)",
    statement=(
        "I(x^t; w^t (.) m^t | past) <= 1 - (p - 1)/(2 ln 2) + 2 log(1/B) + 2 Delta "
        "+ d* log(2 pi e) bits for one round."
    ),
    checks=(
        GridCheck(
            true=_theorem_true,
            claimed=_theorem_claimed,
            params=(
                Param("p", 0.0, 0.875, points=8),
                Param("B", 1.0, 256.0, scale="log", points=3),
                Param("s", 1e-12, 10.0, scale="log", points=53, label="noise std s"),
            ),
            relation="<=",
            true_label=(
                f"exact I(x; x_K + N(0, s^2 I)), x ~ N(0, Sigma/B), d* = {_KEEP_DIM} "
                "(bounds.gaussian), bits"
            ),
            claimed_label="Theorem 1 bound (bounds.priprune.single_round_bound)",
            domain_param="s",
            domain_verdict=False,
        ),
    ),
    notes=(
        "The theorem concerns the noiseless release (s -> 0), where the exact leakage is "
        "infinite; the grid shows from which noise level down the bound is exceeded."
    ),
    corrected=(
        "The noiseless update's leakage is infinite (priprune.finite_leakage); with Gaussian "
        "noise of std s on the release, I = (1/2) log2 det(I + Sigma_KK/(B s^2)) bits exactly"
        " (bounds.gaussian.masked_update_mi), and the bound with consistent units reads d "
        "H_b(p) + d* log2(2 pi e/B) - 2 Delta/ln 2 bits "
        "(bounds.priprune.single_round_bound_corrected), which bounds the paper's first step,"
        " not this mutual information."
    ),
)

_s = sp.Symbol("s", positive=True)
_lam = sp.Symbol("lambda", positive=True)
_B = sp.Symbol("B", positive=True)

FINITE_LEAKAGE = Claim(
    id="priprune.finite_leakage",
    paper="priprune",
    location="Theorem 1 premise (eq. 3, eq. 12)",
    statement=(
        "The leakage I(x^t; w^t (.) m^t) of the deterministic, continuous update is finite, "
        "so that a finite upper bound in (p, B, d*, Delta) can hold."
    ),
    checks=(
        LimitCheck(
            expr=sp.log(1 + _lam / (_B * _s**2)) / 2,
            var=_s,
            point=0,
            expect="finite",
            param=Param("s", 1e-12, 1.0, scale="log", label="noise std s"),
            true_label="I(x_j; x_j + N(0, s^2)) for a kept coordinate of variance lambda/B",
            curve_subs={_lam: 1, _B: 1},
        ),
    ),
    notes="At s = 0 bounds.gaussian.masked_update_mi returns inf.",
    corrected=(
        "I(x_j; x_j + N(0, s^2)) = (1/2) log(1 + lambda/(B s^2)) -> infinity as s -> 0: a "
        "finite bound needs noise (or quantisation) on the release; for a kept set K, I = "
        "(1/2) log det(I + Sigma_KK/(B s^2))."
    ),
)

_PRUNEFL_D = 1000


def _prunefl(kept_fraction, extra):
    pbar = np.round(kept_fraction * _PRUNEFL_D).astype(np.int64)
    union = pbar + np.round(extra * (_PRUNEFL_D - pbar)).astype(np.int64)
    return pbar, union


def _prunefl_bound(kept):
    return priprune.prunefl_single_round_bound(kept, _PRUNEFL_D, 16.0, 10, 0.0)


PRUNEFL = Claim(
    id="priprune.eq23_prunefl",
    paper="priprune",
    location="Appendix, eq. (23) (PruneFL), second inequality",
    statement=(
        "1 + |P_bar u A|/(2 d ln 2) + ... <= 1 + |P_bar|/(2 d ln 2) + ...: the PruneFL bound "
        "with the kept set P_bar u A is at most the one with P_bar."
    ),
    checks=(
        GridCheck(
            true=lambda f, extra: _prunefl_bound(_prunefl(f, extra)[1]),
            claimed=lambda f, extra: _prunefl_bound(_prunefl(f, extra)[0]),
            params=(
                Param("f", 0.0, 1.0, points=21, label="|P_bar|/d"),
                Param("extra", 0.0, 1.0, points=21, label="|A minus P_bar|/(d - |P_bar|)"),
            ),
            relation="<=",
            true_label=f"bound with |P_bar u A| (d = {_PRUNEFL_D}), bits",
            claimed_label="bound with |P_bar|",
            domain_param="extra",
            refine=False,
        ),
    ),
    notes="|P_bar| <= |P_bar u A|: the inequality points the wrong way unless A is in P_bar.",
    corrected=(
        "|P_bar| <= |P_bar u A|, so the PruneFL bound with the kept set P_bar u A is at least"
        " the one with P_bar; with the mask term d H_b(|P_bar u A|/d) "
        "(bounds.priprune.prunefl_single_round_bound_corrected) neither ordering holds in "
        "general."
    ),
)

CLAIMS = (
    TAYLOR,
    MASK_TERM_BOUND,
    MASK_TERM_FROM_SERIES,
    MASK_ENTROPY_DIMENSION,
    SCALING,
    WHITENING,
    MAX_ENTROPY,
    MI_LE_ENTROPIES,
    THEOREM1_GAUSSIAN,
    FINITE_LEAKAGE,
    PRUNEFL,
)
