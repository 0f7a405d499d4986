r"""PriPrune's proof of Theorem 1 step by step (``papers/priprune-aaai-arxiv2310.19958.txt``).

Each claim takes one labelled step of the appendix "Proof of Theorem" on its own: its
premise is taken as given and only its conclusion is checked, so that a wrong step fails
even where the end result happens to hold. The steps are those of the multi-round chain
(lines 354-367: steps (a)-(d) and the identity eq. 9), of part A (eq. 15: the
nonnegativity line, steps (a) and (b)), of part B (eq. 17-19 combined, the Gaussian
entropy formula before eq. 19) and the final summation into eq. (4). The journal version
prints the same steps (eq. 2, 8-9, 14, 20, 24).

Where a step mixes quantities whose value depends on a unit (differential entropies change
by ``log c`` when a variable is measured in units ``1/c``; the learning rate ``r`` scales
the weights against the gradient), its check sweeps that unit; a step stating an
inequality is checked in its printed direction, and the registry's negation test runs the
reversed one.

The model of the multi-round chain is the scalar Gaussian one in which every quantity has a
closed form: data ``D ~ N(0, 1)``, gradient ``x_t = D + sigma_g eps_t``, weights
``w_t = w_0 - r x_t`` (``w_0`` the global model the server sent, known), release
``y_t = w_t + s nu_t`` (a kept coordinate plus release noise ``s``; without noise every
mutual information is infinite, see ``priprune.finite_leakage``). Mutual informations are
computed from log-determinants of the joint covariance (nats).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import sympy as sp
from scipy import stats

from pruneleak.bounds import priprune
from pruneleak.bounds.claims.checks import GridCheck, Param, SymbolicCheck
from pruneleak.bounds.claims.claim import Claim
from pruneleak.bounds.claims.priprune import _covariance, _entropy, _vectorize

LN2 = math.log(2)

# ---------------------------------------------------------------------------------------
# The Gaussian multi-round model and its conditional mutual informations
# ---------------------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _chain_covariance(T: int, sigma_g: float, s: float, r: float) -> np.ndarray:
    """Joint covariance of (D, x_1..x_T, w_1..w_T, y_1..y_T) in the model of the docstring.

    Rows of the linear map from the independent standard normals (D, eps_1..T, nu_1..T).
    """
    n = 1 + 2 * T
    rows = []
    for kind in ("x", "w", "y"):
        for t in range(T):
            row = np.zeros(n)
            row[0], row[1 + t] = 1.0, sigma_g  # x_t = D + sigma_g eps_t
            if kind != "x":
                row = -r * row  # w_t = w_0 - r x_t (w_0 known: a constant)
            if kind == "y":
                row[1 + T + t] = s  # y_t = w_t + s nu_t
            rows.append(row)
    linear = np.vstack([np.eye(1, n), *rows])
    return linear @ linear.T


def _index(T: int, kind: str, t: int) -> int:
    """Position of D (``kind="D"``) or of x_t, w_t, y_t (t = 1..T) in the covariance."""
    return 0 if kind == "D" else 1 + {"x": 0, "w": 1, "y": 2}[kind] * T + (t - 1)


def _logdet(cov, idx) -> float:
    return float(np.linalg.slogdet(cov[np.ix_(idx, idx)])[1]) if idx else 0.0


def _cmi(cov, a, b, c=()) -> float:
    """I(A; B | C) in nats from the log-determinants of the Gaussian joint covariance."""
    a, b, c = list(a), list(b), list(c)
    return 0.5 * (
        _logdet(cov, a + c) + _logdet(cov, b + c) - _logdet(cov, c) - _logdet(cov, a + b + c)
    )


def _rounds(T, sigma_g, s, r=1.0):
    """Covariance and index helpers of one model instance."""
    T = int(T)
    cov = _chain_covariance(T, float(sigma_g), float(s), float(r))

    def at(kind, t=0):
        return _index(T, kind, t)

    return T, cov, at


@_vectorize
def _joint_leakage(T, sigma_g, s):
    """I(D; y_1..y_T), the left-hand side of the chain (eq. 2 with the rounds' releases)."""
    T, cov, at = _rounds(T, sigma_g, s)
    return _cmi(cov, [at("D")], [at("y", t) for t in range(1, T + 1)])


def _past(at, t):
    return [at("y", k) for k in range(1, t)]


@_vectorize
def _chain_sum(T, sigma_g, s):
    """sum_t I(D; y_t | y_<t): the right-hand side of step (a)."""
    T, cov, at = _rounds(T, sigma_g, s)
    return sum(_cmi(cov, [at("D")], [at("y", t)], _past(at, t)) for t in range(1, T + 1))


@_vectorize
def _step_b_printed(T, sigma_g, s):
    """The right-hand side of step (b) as printed: sum_t I(w_t; y_t | y_<t) +
    I(D; y_t | w_t, y_<t) - I(D; w_t | y_<=t)."""
    T, cov, at = _rounds(T, sigma_g, s)
    total = 0.0
    for t in range(1, T + 1):
        past, d, w, y = _past(at, t), [at("D")], [at("w", t)], [at("y", t)]
        total += _cmi(cov, w, y, past) + _cmi(cov, d, y, w + past) - _cmi(cov, d, w, past + y)
    return total


@_vectorize
def _weights_leakage(T, sigma_g, s, r=1.0):
    """sum_t I(w_t; y_t | y_<t): the right-hand side of step (c)."""
    T, cov, at = _rounds(T, sigma_g, s, r)
    return sum(_cmi(cov, [at("w", t)], [at("y", t)], _past(at, t)) for t in range(1, T + 1))


@_vectorize
def _gradient_leakage(T, sigma_g, s, r=1.0):
    """sum_t I(x_t; y_t | y_<t): the right-hand side of step (d) (eq. 12 summed)."""
    T, cov, at = _rounds(T, sigma_g, s, r)
    return sum(_cmi(cov, [at("x", t)], [at("y", t)], _past(at, t)) for t in range(1, T + 1))


_CHAIN_PARAMS = (
    Param("T", 1, 4, integer=True, points=4, label="rounds T"),
    Param("sigma_g", 0.05, 20.0, scale="log", points=9, label="gradient noise sigma_g"),
    Param("s", 0.05, 20.0, scale="log", points=9, label="release noise s"),
)
_CHAIN_MODEL = "D ~ N(0, 1), x_t = D + sigma_g eps_t, w_t = w_0 - r x_t, y_t = w_t + s nu_t (nats)"

STEP_A = Claim(
    id="priprune.proof_step_a",
    paper="priprune",
    location="Appendix, proof of Theorem 1, step (a) (chain rule)",
    statement=(
        "I(D_i; {w^t (.) m^t}_{t in [T]}) <= sum_t I(D_i; w^t (.) m^t | {w^k (.) m^k}_{k in "
        "[t-1]}) (step (a), 'from the chain rule'; the chain rule gives equality)."
    ),
    checks=(
        GridCheck(
            true=_joint_leakage,
            claimed=_chain_sum,
            params=_CHAIN_PARAMS,
            relation="==",
            true_label=f"I(D; y_1..y_T), {_CHAIN_MODEL}",
            claimed_label="sum_t I(D; y_t | y_<t)",
            rtol=1e-7,
        ),
    ),
    notes="Checked as the identity it is; the printed '<=' follows.",
)

STEP_B = Claim(
    id="priprune.proof_step_b",
    paper="priprune",
    location="Appendix, proof of Theorem 1, step (b) (chain rule)",
    statement=(
        "sum_t I(D_i; w^t (.) m^t | past) = sum_t I(w^t; w^t (.) m^t | past) + sum_t "
        "I(D_i; w^t (.) m^t | w^t, past) - sum_t I(D_i; w^t | past, w^t (.) m^t)."
    ),
    checks=(
        GridCheck(
            true=_chain_sum,
            claimed=_step_b_printed,
            params=_CHAIN_PARAMS,
            relation="==",
            true_label=f"sum_t I(D; y_t | y_<t), {_CHAIN_MODEL}",
            claimed_label="step (b) right-hand side as printed",
            rtol=1e-7,
        ),
    ),
    notes=(
        "The chain rule gives I(D; y | P) = I(D; w | P) + I(D; y | w, P) - I(D; w | y, P): "
        "the first sum needs I(D_i; w^t | past), not I(w^t; w^t (.) m^t | past)."
    ),
    corrected=(
        "sum_t I(D; y_t | P_t) = sum_t [I(D; w_t | P_t) + I(D; y_t | w_t, P_t) - I(D; w_t | "
        "y_t, P_t)] (P_t the past releases); with the Markov chain D -> w_t -> y_t, I(D; y_t "
        "| P_t) <= I(w_t; y_t | P_t) follows from the data processing inequality instead."
    ),
)

STEP_C = Claim(
    id="priprune.proof_step_c",
    paper="priprune",
    location="Appendix, proof of Theorem 1, step (c) (data processing inequality)",
    statement=(
        "Given the line after step (b), dropping I(D_i; w^t (.) m^t | w^t, past) = 0 and "
        "the subtracted I(D_i; w^t | past, w^t (.) m^t) >= 0 leaves at most "
        "sum_t I(w^t; w^t (.) m^t | past)."
    ),
    checks=(
        GridCheck(
            true=_step_b_printed,
            claimed=_weights_leakage,
            params=_CHAIN_PARAMS,
            relation="<=",
            true_label=f"step (b) right-hand side as printed, {_CHAIN_MODEL}",
            claimed_label="sum_t I(w_t; y_t | y_<t)",
            rtol=1e-7,
        ),
    ),
)

STEP_D = Claim(
    id="priprune.proof_step_d",
    paper="priprune",
    location="Appendix, proof of Theorem 1, step (d) (invariance of mutual information)",
    statement=(
        "sum_t I(w^t; w^t (.) m^t | past) = sum_t I(x^t; w^t (.) m^t | past) for the update "
        "w^t = w^{t-1} - r x^t (eq. 1, eq. 11), for every learning rate r > 0."
    ),
    checks=(
        GridCheck(
            true=_weights_leakage,
            claimed=_gradient_leakage,
            params=(
                Param("T", 1, 3, integer=True, points=3, label="rounds T"),
                Param("sigma_g", 0.1, 10.0, scale="log", points=5, label="gradient noise"),
                Param("s", 0.1, 10.0, scale="log", points=5, label="release noise s"),
                Param("r", 1e-3, 1e3, scale="log", points=13, label="learning rate r"),
            ),
            relation="==",
            true_label=f"sum_t I(w_t; y_t | y_<t), {_CHAIN_MODEL}",
            claimed_label="sum_t I(x_t; y_t | y_<t)",
            rtol=1e-7,
        ),
    ),
    notes=(
        "Holds because w^{t-1} is the global model the server sent (known): w^t is an "
        "invertible affine function of x^t, and mutual information does not change under "
        "such maps, whatever the unit of the gradient (r sweeps it)."
    ),
)

# ---------------------------------------------------------------------------------------
# eq. 9: the mutual information as entropies
# ---------------------------------------------------------------------------------------


@_vectorize
def _entropy_difference(rho, sx, sy):
    """h(X) + h(Y) - h(X, Y) from scipy's entropies of the bivariate Gaussian."""
    cov = np.array([[sx**2, rho * sx * sy], [rho * sx * sy, sy**2]])
    return (
        stats.norm(scale=sx).entropy()
        + stats.norm(scale=sy).entropy()
        - stats.multivariate_normal(cov=cov).entropy()
    )


EQ9 = Claim(
    id="priprune.eq9_mi_identity",
    paper="priprune",
    location="Appendix, eq. (9) (journal eq. 2)",
    statement=(
        "I(X; Y) = int log dP_XY/(dP_X (x) dP_Y) dP_XY = H(X) - H(X|Y) = H(X) + H(Y) - H(X, Y)."
    ),
    checks=(
        GridCheck(
            true=lambda rho, sx, sy: -0.5 * np.log1p(-(rho**2)) + 0 * sx * sy,
            claimed=_entropy_difference,
            params=(
                Param("rho", -0.99, 0.99, points=23, label="correlation rho"),
                Param("sx", 0.1, 10.0, scale="log", points=5, label="unit of X"),
                Param("sy", 0.1, 10.0, scale="log", points=5, label="unit of Y"),
            ),
            relation="==",
            true_label="KL(P_XY || P_X P_Y) = -log(1 - rho^2)/2, bivariate Gaussian (nats)",
            claimed_label="h(X) + h(Y) - h(X, Y) (scipy)",
            rtol=1e-8,
            atol=1e-10,
        ),
    ),
    notes=(
        "Holds with differential entropies too: each entropy shifts with the unit of its "
        "variable and the shifts cancel (the check sweeps both units)."
    ),
)

# ---------------------------------------------------------------------------------------
# Part A (eq. 15): nonnegativity, step (a), step (b)
# ---------------------------------------------------------------------------------------


def _gaussian_bits(s, d=1):
    """Differential entropy of N(0, s^2 I_d) in bits (closed form)."""
    return d * 0.5 * np.log2(2 * math.pi * math.e * np.asarray(s, dtype=float) ** 2)


EQ15_NONNEGATIVE = Claim(
    id="priprune.eq15_nonnegative",
    paper="priprune",
    location="Appendix, eq. (15), first line (journal eq. 8)",
    statement=(
        "0 <= H(w^t, m^t, w^t (.) m^t | past): the joint entropy of the weights and the "
        "mask is nonnegative."
    ),
    checks=(
        GridCheck(
            true=lambda s, p, d: _gaussian_bits(s, d) + d * priprune.binary_entropy(p),
            claimed=lambda s, p, d: 0 * (s + p + d),
            params=(
                Param("s", 1e-3, 1e3, scale="log", points=61, label="unit (std) of w"),
                Param("p", 0.0, 1.0, points=11),
                Param("d", 1, 1000, scale="log", integer=True, points=7),
            ),
            relation=">=",
            true_label="H(w, m) = h(N(0, s^2 I_d)) + d H_b(p), i.i.d. Bernoulli mask, bits",
            claimed_label="0",
            domain_param="s",
        ),
    ),
    notes=(
        "w^t is continuous, so its entropy is a differential entropy, which is negative "
        "when w is measured in a unit in which it is small."
    ),
    corrected=(
        "H(w, m) = h(w) + H(m | w) can be negative for continuous w: here it is >= 0 iff "
        "s >= (2 pi e)^(-1/2) 2^(-H_b(p)), a condition on the unit of w; the step needs "
        "discrete (quantised) weights."
    ),
)


def _mask_bits(s, tau):
    """H(m) in bits for m = 1{|w| > tau}, w ~ N(0, s^2)."""
    return priprune.binary_entropy(2 * stats.norm.sf(tau / s))


EQ15_STEP_A = Claim(
    id="priprune.eq15_step_a",
    paper="priprune",
    location="Appendix, eq. (15), step (a) (journal eq. 9)",
    statement=(
        "H(w^t, m^t | past) <= H(w^t | past) + H(m^t | past) ('conditioning reduces "
        "entropy'), here for a magnitude mask m = 1{|w| > tau} that depends on w."
    ),
    checks=(
        GridCheck(
            true=lambda s, tau: _gaussian_bits(s),
            claimed=lambda s, tau: _gaussian_bits(s) + _mask_bits(s, tau),
            params=(
                Param("s", 1e-3, 1e3, scale="log", points=31, label="unit (std) of w"),
                Param("tau", 1e-2, 10.0, scale="log", points=31, label="threshold tau"),
            ),
            relation="<=",
            true_label="H(w, m) = h(w) (m a function of w), w ~ N(0, s^2), bits",
            claimed_label="h(w) + H(m)",
            atol=0.0,
        ),
    ),
    notes=(
        "Subadditivity holds for mixed discrete-continuous pairs in every unit of w: the "
        "unit shifts both sides by the same amount."
    ),
)

EQ15_STEP_B = Claim(
    id="priprune.eq15_step_b",
    paper="priprune",
    location="Appendix, eq. (15), step (b), first term (journal eq. 9)",
    statement=(
        "H(w^t | past) = H(x^t | past) ('from zero conditional entropy'), for the update "
        "w^t = w^{t-1} - r x^t of eq. (1) with learning rate r."
    ),
    checks=(
        GridCheck(
            true=_vectorize(
                lambda r, d: (
                    stats.multivariate_normal(
                        cov=r**2 * _covariance(int(d), unit_det=False)
                    ).entropy()
                    - _entropy(_covariance(int(d), unit_det=False))
                )
            ),
            claimed=lambda r, d: 0 * (r + d),
            params=(
                Param("r", 1e-3, 1e3, scale="log", points=25, label="learning rate r"),
                Param("d", 1, 8, integer=True, points=8, label="dimension d"),
            ),
            relation="==",
            true_label="h(w) - h(x), x ~ N(0, Sigma), w = w_0 - r x (scipy), nats",
            claimed_label="0",
            curve_param="r",
        ),
    ),
    notes=(
        "Differential entropy is not invariant under scaling: h(c - r x) = h(x) + d log r. "
        "PriPrune's experiments use r = 0.25 (appendix 'Extra Implementation details')."
    ),
    corrected="H(w^t | past) = H(x^t | past) + d log r: equal only for r = 1.",
)

# ---------------------------------------------------------------------------------------
# Part B: the Gaussian entropy formula and the combined bound (eq. 17-19)
# ---------------------------------------------------------------------------------------


@_vectorize
def _scaled_entropy(n, c):
    return _entropy(c**2 * _covariance(int(n), unit_det=False))


@_vectorize
def _entropy_formula(n, c):
    cov = c**2 * _covariance(int(n), unit_det=False)
    return 0.5 * (n * math.log(2 * math.pi * math.e) + np.linalg.slogdet(cov)[1])


GAUSSIAN_ENTROPY = Claim(
    id="priprune.gaussian_entropy_formula",
    paper="priprune",
    location="Appendix, formula before eq. (19) (journal before eq. 13)",
    statement="h(N_n(mu, K)) = (1/2) log((2 pi e)^n |K|).",
    checks=(
        GridCheck(
            true=_scaled_entropy,
            claimed=_entropy_formula,
            params=(
                Param("n", 1, 12, integer=True, points=12),
                Param("c", 1e-3, 1e3, scale="log", points=25, label="unit of the vector"),
            ),
            relation="==",
            true_label="entropy of N(0, c^2 K) (scipy), nats",
            claimed_label="(1/2) log((2 pi e)^n |c^2 K|)",
            rtol=1e-10,
            atol=1e-10,
        ),
    ),
)


@_vectorize
def _part_b_true(c, B, d_star):
    """h(x) for x = (1/B) sum_b g_b, g_b ~ N(0, c^2 Sigma) i.i.d.: N(0, c^2 Sigma / B)."""
    return _entropy(c**2 * _covariance(int(d_star), unit_det=False) / B)


@_vectorize
def _delta_in_unit(c, d_star):
    """Delta = log|det(Sigma^(-1/2))| (nats) of the covariance c^2 Sigma (units 1/c)."""
    cov = c**2 * _covariance(int(d_star), unit_det=False)
    return priprune.delta_from_log_pseudo_det(np.linalg.slogdet(cov)[1])


def _part_b_claimed(c, B, d_star):
    return priprune.part_b_published(B, d_star, _delta_in_unit(c, d_star), unit="nats")


PART_B = Claim(
    id="priprune.part_b_bound",
    paper="priprune",
    location="Appendix, bound on part B after eq. (19) (journal eq. 14 and 24)",
    statement=(
        "H(x^t | past) <= log(1/B) + log|det(Sigma^(-1/2))| + (d*/2) log(2 pi e), "
        "combining eq. (17), (18) and (19)."
    ),
    checks=(
        GridCheck(
            true=_part_b_true,
            claimed=_part_b_claimed,
            params=(
                Param("c", 1e-3, 1e3, scale="log", points=37, label="unit of the gradient c"),
                Param("B", 1.0, 1024.0, scale="log", points=6),
                Param("d_star", 1, 8, integer=True, points=8, label="d*"),
            ),
            relation="<=",
            true_label="h(x), x = mean of B i.i.d. N(0, c^2 Sigma) (scipy), nats",
            claimed_label="part B as published (bounds.priprune.part_b_published)",
            domain_param="c",
        ),
    ),
    notes=(
        "For Gaussian gradients h(x) = (d*/2) log(2 pi e) + (1/2) log det Sigma - d* log B: "
        "the published bound has the opposite sign of log det Sigma and log B once, so it "
        "holds only in units in which the gradient is small."
    ),
    corrected=(
        "H(x^t | past) <= (d*/2) log(2 pi e) + (1/2) log det Sigma - d* log B (maximum "
        "entropy for the covariance Sigma/B), i.e. -Delta where the paper has +Delta "
        "(bounds.priprune.part_b_corrected)."
    ),
)

# ---------------------------------------------------------------------------------------
# Theorem 1: the summation and the unit of the gradient
# ---------------------------------------------------------------------------------------

_p, _B, _dstar, _Delta = sp.symbols("p B d_star Delta", positive=True)
_U = sp.log(1 / _B, 2) + _Delta / sp.log(2) + _dstar / 2 * sp.log(2 * sp.pi * sp.E, 2)
_MASK = 1 - (_p - 1) / (2 * sp.log(2))

ASSEMBLY = Claim(
    id="priprune.theorem1_assembly",
    paper="priprune",
    location="Appendix, 'After summing part A and part B' (eq. 4; journal eq. 6)",
    statement=(
        "Given I <= A + B, A <= B + 1 - (p-1)/(2 ln 2) and B <= log(1/B) + Delta + (d*/2) "
        "log(2 pi e), their sum is the right-hand side of eq. (4): 1 - (p-1)/(2 ln 2) + "
        "2 log(1/B) + 2 Delta + d* log(2 pi e)."
    ),
    checks=(
        SymbolicCheck(
            true=_MASK + 2 * _U,
            claimed=1
            - (_p - 1) / (2 * sp.log(2))
            + 2 * sp.log(1 / _B, 2)
            + 2 * _Delta / sp.log(2)
            + _dstar * sp.log(2 * sp.pi * sp.E, 2),
            relation="==",
            params=(
                Param("p", 0.0, 1.0, points=11),
                Param("B", 1.0, 1024.0, scale="log", points=11),
                Param("d_star", 1.0, 64.0, points=9),
                Param("Delta", 0.1, 50.0, scale="log", points=9),
            ),
            true_label="mask term + 2 x (part B bound), bits (Delta in nats)",
            claimed_label="eq. (4)",
        ),
    ),
    notes="Every term in bits: log base 2, Delta (nats) divided by ln 2.",
)


def _theorem1_in_unit(c, p, B, d_star):
    return priprune.single_round_bound(p, B, d_star, _delta_in_unit(c, d_star))


THEOREM1_UNIT = Claim(
    id="priprune.theorem1_unit",
    paper="priprune",
    location="Theorem 1, eq. (4) (journal Theorem 4.1, eq. 6), unit of the gradient",
    statement=(
        "The bound of eq. (4) holds whatever the unit in which the gradient is measured: "
        "I^t_i, which does not depend on the unit, is at most the right-hand side computed "
        "with Delta = log|det(Sigma^(-1/2))| in that unit."
    ),
    checks=(
        GridCheck(
            true=lambda c, p, B, d_star: 0 * (c + p + B + d_star),
            claimed=_theorem1_in_unit,
            params=(
                Param("c", 1e-3, 1e3, scale="log", points=49, label="unit of the gradient c"),
                Param("p", 0.0, 1.0, points=5),
                Param("B", 1.0, 256.0, scale="log", points=5),
                Param("d_star", 1, 8, integer=True, points=8, label="d*"),
            ),
            relation="<=",
            true_label="0, a lower bound of every mutual information (bits)",
            claimed_label="eq. (4) with Sigma measured in units 1/c (Sigma -> c^2 Sigma)",
            domain_param="c",
        ),
    ),
    notes=(
        "Measuring the gradient in units 1/c multiplies Sigma by c^2 and adds -2 d* log2 c "
        "bits to the bound; a mutual information does not change. The bound turns negative, "
        "below every mutual information, once the gradient is large in its unit."
    ),
    corrected=(
        "A bound on a mutual information must be invariant under a change of unit of the "
        "gradient; eq. (4) is not. The Gaussian example's exact leakage with release noise "
        "s, (1/2) log det(I + Sigma_KK/(B s^2)), depends on Sigma only through Sigma/s^2, "
        "which is unit-free (bounds.gaussian.masked_update_mi)."
    ),
)

CLAIMS = (
    EQ9,
    STEP_A,
    STEP_B,
    STEP_C,
    STEP_D,
    EQ15_NONNEGATIVE,
    EQ15_STEP_A,
    EQ15_STEP_B,
    GAUSSIAN_ENTROPY,
    PART_B,
    ASSEMBLY,
    THEOREM1_UNIT,
)
