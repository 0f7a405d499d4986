r"""Claims of Fed-LTP's privacy analysis (``papers/fed-ltp-lottery-ticket-zcdp.txt``).

Definitions 3-4 (eq. 6, 8), Lemma 1 and Theorem 1 (eq. 20-24). All divergences and
epsilons in nats. References: the Rényi divergence of the worst-case pure-DP pair
(randomized response, closed form below) and of the Laplace mechanism
(``bounds.accounting.rdp_laplace``, Mironov 2017 Prop. 6); the sampled Gaussian RDP of
Mironov, Talwar and Zhang 2019 (``bounds.accounting.rdp_sampled_gaussian``); the exact
privacy profiles :math:`\delta(\epsilon)` of the Gaussian (Balle and Wang 2018, Thm. 8) and
Laplace mechanisms (derived in ``_laplace_log_delta``); eq. (21) evaluated literally by
quadrature (``_eq21_literal``), independently of ``bounds.accounting``.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
from scipy import integrate, special

from bounds import accounting
from bounds.claims.checks import GridCheck, Param, SymbolicCheck
from bounds.claims.claim import Claim


def _vectorize(func):
    return np.vectorize(func, otypes=[float])


def _rr_divergence(eps, alpha):
    r"""Rényi divergence of order alpha between the two outputs of eps-randomized response.

    :math:`P = (p, 1-p)`, :math:`Q = (1-p, p)`, :math:`p = e^\epsilon/(1+e^\epsilon)`; among
    all eps-DP pairs it has the largest divergences (Kairouz, Oh, Viswanath 2015).
    """
    log_p = -np.log1p(np.exp(-eps))
    log_q = log_p - eps
    both = np.logaddexp(alpha * log_p + (1 - alpha) * log_q, alpha * log_q + (1 - alpha) * log_p)
    return both / (alpha - 1)


_LEMMA1_PARAMS = (
    Param("eps", 1e-3, 20.0, scale="log", points=61, label="epsilon"),
    Param("alpha", 1.001, 1000.0, scale="log", points=61, label="alpha"),
)


def _lemma1_check(divergence, mechanism):
    return GridCheck(
        true=divergence,
        claimed=lambda eps, alpha: accounting.rdp_from_zcdp(
            accounting.zcdp_from_pure_dp(eps), alpha
        ),
        params=_LEMMA1_PARAMS,
        relation="<=",
        true_label=f"D_alpha of {mechanism}",
        claimed_label="alpha eps^2/2",
        rtol=1e-7,
    )


LEMMA1 = Claim(
    id="fedltp.lemma1",
    paper="fedltp",
    location="Lemma 1",
    statement=(
        "A mechanism satisfying epsilon-DP satisfies (epsilon^2/2)-zCDP: "
        "D_alpha(M(D) || M(D')) <= alpha epsilon^2/2 for every alpha > 1."
    ),
    checks=(
        _lemma1_check(_rr_divergence, "eps-randomized response (the worst eps-DP pair)"),
        _lemma1_check(
            _vectorize(lambda eps, alpha: accounting.rdp_laplace(alpha, 1 / eps)),
            "the Laplace mechanism, scale 1/eps (exact)",
        ),
    ),
    notes="Bun and Steinke 2016, Prop. 1.4; zCDP as D_alpha <= alpha rho (their Def. 1.1).",
)

_o = sp.Symbol("o", real=True)
_mu, _alpha = sp.symbols("mu alpha", positive=True)
# int p^alpha q^(1 - alpha) do for p = N(mu, 1), q = N(0, 1), by sympy.
_LOG_INTEGRAND = sp.expand(-_alpha * (_o - _mu) ** 2 / 2 - (1 - _alpha) * _o**2 / 2)
_RATIO_MOMENT = sp.simplify(
    sp.integrate(sp.exp(_LOG_INTEGRAND) / sp.sqrt(2 * sp.pi), (_o, -sp.oo, sp.oo), conds="none")
)

DEFINITION4 = Claim(
    id="fedltp.definition4",
    paper="fedltp",
    location="Definition 4, eq. (8)",
    statement=(
        "With the privacy loss Z = log(Pr[M(D) = o]/Pr[M(D') = o]): "
        "exp(D_alpha(M(D) || M(D'))) = E[exp((alpha - 1) Z)]."
    ),
    checks=(
        SymbolicCheck(
            true=_RATIO_MOMENT,
            claimed=sp.exp(sp.log(_RATIO_MOMENT) / (_alpha - 1)),
            relation="==",
            params=(
                Param("alpha", 1.1, 10.0, scale="log", points=21),
                Param("mu", 0.1, 3.0, scale="log", points=11),
            ),
            true_label="E_{o ~ M(D)}[exp((alpha-1) Z)] for N(mu,1) vs N(0,1) (sympy integral)",
            claimed_label="exp(D_alpha), D_alpha from eq. (6)",
            domain_param="alpha",
        ),
    ),
    notes=(
        "By eq. (6), E[exp((alpha-1) Z)] = exp((alpha-1) D_alpha); eq. (8) drops the factor "
        "alpha - 1, and with it rho-zCDP reads D_alpha <= (alpha - 1) alpha rho."
    ),
)


def _eq21_literal(alpha, q, sigma):
    r"""Eq. (21) with t = 0 as printed, by quadrature (nats).

    :math:`\frac1{\alpha-1}\log\int\mu_0(z)(1-q+q\,\mu_1(z)/\mu_0(z))^\alpha dz`,
    :math:`\mu_1 = qN(1,\sigma^2) + (1-q)N(0,\sigma^2)`, the integrand handled in log space
    and shifted by its maximum on the integration range.
    """
    log_q, log_1mq = math.log(q), math.log1p(-q)

    def log_integrand(z):
        log_ratio_1 = np.logaddexp(log_q + (2 * z - 1) / (2 * sigma**2), log_1mq)  # mu_1/mu_0
        log_mix = np.logaddexp(log_1mq, log_q + log_ratio_1)
        return -(z**2) / (2 * sigma**2) - math.log(sigma * math.sqrt(2 * math.pi)) + alpha * log_mix

    lo, hi = -40 * sigma, alpha + 40 * sigma
    shift = float(np.max(log_integrand(np.linspace(lo, hi, 2001))))
    value, _ = integrate.quad(
        lambda z: math.exp(log_integrand(z) - shift),
        lo,
        hi,
        points=[0.0, float(alpha)],
        limit=200,
        epsabs=0.0,
        epsrel=1e-12,
    )
    return (shift + math.log(value)) / (alpha - 1)


_EQ21_PARAMS = (
    Param("alpha", 2, 32, scale="log", integer=True, points=5),
    Param("q", 1e-3, 0.5, scale="log", points=7, label="q~"),
    Param("sigma", 0.7, 5.0, scale="log", points=5),
)


def _eq21_check(rate_power):
    """Literal eq. (21) against the sampled Gaussian RDP at rate q~^rate_power (t = 0)."""
    rate = "q~" if rate_power == 1 else f"q~^{rate_power}"
    return GridCheck(
        true=_vectorize(
            lambda alpha, q, sigma: accounting.rdp_sampled_gaussian(
                alpha, q=q**rate_power, noise_multiplier=sigma
            )
        ),
        claimed=_vectorize(_eq21_literal),
        params=_EQ21_PARAMS,
        relation="==",
        true_label=f"RDP of the sampled Gaussian at rate {rate} (Mironov et al. 2019), t = 0",
        claimed_label="eq. (21) as printed (quadrature), t = 0",
        curve_param="q",
        rtol=1e-6,
        refine=False,
    )


EQ21_MU1 = Claim(
    id="fedltp.eq21.mu1",
    paper="fedltp",
    location="Theorem 1, eq. (21)",
    statement=(
        "rho_s^t of eq. (21), with mu_0 = N(0, sigma^2) and mu_1 = q~ N(1, sigma^2) + "
        "(1 - q~) N(0, sigma^2), is the Rényi divergence of t + 1 rounds of the "
        "Poisson-sampled Gaussian mechanism with sampling rate q~."
    ),
    checks=(_eq21_check(rate_power=1),),
    notes="Mironov et al. 2019 define mu_1 = N(1, sigma^2); (t + 1) multiplies both sides.",
)

_z, _q, _sigma = (
    sp.Symbol("z", real=True),
    sp.Symbol("q", positive=True),
    sp.Symbol("sigma", positive=True),
)
_GAUSS_RATIO = sp.exp((2 * _z - 1) / (2 * _sigma**2))  # N(1, sigma^2)(z) / N(0, sigma^2)(z)

EQ21_RATE = Claim(
    id="fedltp.eq21.rate",
    paper="fedltp",
    location="Theorem 1, eq. (21) (the sampling rate it implies)",
    statement=(
        "As printed, 1 - q~ + q~ mu_1/mu_0 = 1 - q~^2 + q~^2 N(1, sigma^2)/mu_0, so eq. (21) "
        "is the RDP of the Poisson-sampled Gaussian mechanism at sampling rate q~^2."
    ),
    checks=(
        SymbolicCheck(
            true=1 - _q**2 + _q**2 * _GAUSS_RATIO,
            claimed=1 - _q + _q * (_q * _GAUSS_RATIO + 1 - _q),
            relation="==",
            params=(
                Param("z", -5.0, 5.0, points=11),
                Param("q", 1e-3, 1.0, scale="log", points=7),
                Param("sigma", 0.5, 5.0, scale="log", points=5),
            ),
            true_label="1 - q~^2 + q~^2 N(1)/mu_0",
            claimed_label="1 - q~ + q~ mu_1/mu_0",
        ),
        _eq21_check(rate_power=2),
    ),
    notes="A derived statement (what eq. 21 computes), recorded so that the report shows it.",
)

EQ23 = Claim(
    id="fedltp.eq23",
    paper="fedltp",
    location="Theorem 1 proof, eq. (23)-(24)",
    statement=(
        "The Laplace-noised validation score (scale lambda_val, sensitivity 1, eq. 17) has "
        "D_alpha <= alpha (alpha - 1)/(2 lambda_val^2) per round, hence rho_v^t <= "
        "(t + 1) alpha (alpha - 1)/(2 lambda_val^2)."
    ),
    checks=(
        GridCheck(
            true=_vectorize(lambda alpha, lam: accounting.rdp_laplace(alpha, lam)),
            claimed=_vectorize(
                lambda alpha, lam: accounting.fedltp_rho_v_published(0, lambda_val=lam, alpha=alpha)
            ),
            params=(
                Param("alpha", 1.01, 256.0, scale="log", points=61),
                Param("lam", 0.05, 100.0, scale="log", points=21, label="lambda_val"),
            ),
            relation="<=",
            true_label="D_alpha of the Laplace mechanism (exact)",
            claimed_label="alpha (alpha-1)/(2 lambda_val^2)",
            domain_param="alpha",
            rtol=1e-7,
        ),
    ),
    notes=(
        "Composition over t + 1 rounds multiplies both sides by t + 1, so the domain is the "
        "same for eq. (24)."
    ),
)

_eps = sp.Symbol("eps", positive=True)

EQ23_STEP = Claim(
    id="fedltp.eq23.lemma1_step",
    paper="fedltp",
    location="Theorem 1 proof, eq. (23), first inequality",
    statement=(
        "Lemma 1 (epsilon_val-DP implies (epsilon_val^2/2)-zCDP) gives "
        "D_alpha <= (1/2) alpha epsilon_val^2 (alpha - 1)."
    ),
    checks=(
        SymbolicCheck(
            true=_alpha * _eps**2 / 2,
            claimed=_alpha * _eps**2 * (_alpha - 1) / 2,
            relation="==",
            params=(
                Param("alpha", 1.01, 64.0, scale="log", points=41),
                Param("eps", 1e-2, 10.0, scale="log", points=11),
            ),
            true_label="alpha rho with rho = eps^2/2 (zCDP, Bun and Steinke Def. 1.1)",
            claimed_label="alpha eps^2 (alpha-1)/2",
        ),
    ),
    notes="Equal only at alpha = 2; the factor alpha - 1 comes from eq. (8) (fedltp.definition4).",
)


def _eq22_epsilon(rho, alpha, delta):
    """Eq. (22): epsilon = rho + (log(1/delta) - log(alpha))/(alpha - 1) + log(1 - 1/alpha)."""
    return rho + (np.log(1 / delta) - np.log(alpha)) / (alpha - 1) + np.log1p(-1 / alpha)


def _gaussian_log_delta(eps, sigma):
    r"""log of the exact delta(eps) of the Gaussian mechanism, sensitivity 1, noise sigma.

    Balle and Wang 2018, Thm. 8: :math:`\delta = \Phi(\mu/2 - \epsilon/\mu)
    - e^\epsilon\Phi(-\mu/2 - \epsilon/\mu)`, :math:`\mu = 1/\sigma`, valid for every real
    epsilon; computed as :math:`\log\Phi(a) + \log(1 - e^{\epsilon + \log\Phi(b) - \log\Phi(a)})`.
    """
    mu = 1 / sigma
    log_a = special.log_ndtr(mu / 2 - eps / mu)
    log_b = special.log_ndtr(-mu / 2 - eps / mu)
    with np.errstate(divide="ignore"):  # delta underflowing to 0 gives log delta = -inf
        return log_a + np.log(-np.expm1(eps + log_b - log_a))


def _laplace_log_delta(eps, scale):
    r"""log of the exact delta(eps) of the Laplace mechanism, sensitivity 1 (nats).

    With :math:`\epsilon_0 = 1/b` the privacy loss takes values in
    :math:`[-\epsilon_0, \epsilon_0]`, and the hockey-stick divergence is
    :math:`1 - e^{(\epsilon-\epsilon_0)/2}` for :math:`|\epsilon|\le\epsilon_0`,
    :math:`1 - e^\epsilon` below and 0 above (integrate :math:`(p - e^\epsilon q)_+` over
    the half-line where the loss exceeds epsilon).
    """
    eps0 = 1 / scale
    with np.errstate(divide="ignore"):  # log(0) = -inf at eps >= eps0 is the right value
        inside = np.log(-np.expm1(np.minimum((eps - eps0) / 2, 0)))
        below = np.log(-np.expm1(np.minimum(eps, 0)))
    return np.where(eps > eps0, -np.inf, np.where(eps < -eps0, below, inside))


_EQ22_PARAMS = (
    Param("alpha", 1.02, 256.0, scale="log", points=41),
    Param("sigma", 0.3, 30.0, scale="log", points=21, label="noise multiplier / Laplace scale"),
    Param("delta", 1e-12, 1e-2, scale="log", points=11),
)


def _eq22_gaussian(alpha, sigma, delta):
    eps = _eq22_epsilon(accounting.rdp_gaussian(alpha, 1.0) / sigma**2, alpha, delta)
    return _gaussian_log_delta(eps, sigma)


@_vectorize
def _eq22_laplace(alpha, sigma, delta):
    eps = _eq22_epsilon(accounting.rdp_laplace(alpha, sigma), alpha, delta)
    return _laplace_log_delta(eps, sigma)


def _eq22_check(log_delta, mechanism):
    return GridCheck(
        true=log_delta,
        claimed=lambda alpha, sigma, delta: np.log(delta) + 0 * alpha * sigma,
        params=_EQ22_PARAMS,
        relation="<=",
        true_label=f"log of the exact delta(epsilon) of the {mechanism} mechanism",
        claimed_label="log delta",
        rtol=1e-6,
    )


EQ22 = Claim(
    id="fedltp.eq22",
    paper="fedltp",
    location="Theorem 1 proof, eq. (22)",
    statement=(
        "A mechanism with Rényi divergence rho at order alpha is (epsilon, delta)-DP with "
        "epsilon = rho + (log(1/delta) - log(alpha))/(alpha - 1) + log(1 - 1/alpha)."
    ),
    checks=(_eq22_check(_eq22_gaussian, "Gaussian"), _eq22_check(_eq22_laplace, "Laplace")),
    notes=(
        "Canonne, Kamath, Steinke 2020, Prop. 12 (= Balle et al. 2020, Thm. 21); Theorem 1 "
        "fixes no order alpha, any alpha > 1 is valid."
    ),
)

CLAIMS = (LEMMA1, DEFINITION4, EQ21_MU1, EQ21_RATE, EQ23, EQ23_STEP, EQ22)
