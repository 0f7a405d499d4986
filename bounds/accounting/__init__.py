r"""Renyi/zCDP privacy accounting, and Fed-LTP's Theorem 1 published beside a corrected accountant.

Units: every epsilon, RDP value and zCDP rho is in nats (natural logarithms), the unit of
differential privacy. ``noise_multiplier`` is the noise scale divided by the sensitivity
(Gaussian: :math:`\sigma/C` with :math:`\ell_2` sensitivity :math:`C`; Laplace: scale
:math:`b` divided by the :math:`\ell_1` sensitivity). Orders :math:`\alpha` must be > 1.
Neighbouring datasets: add/remove one record (Fed-LTP Definition 1, dp-accounting's default).

Infinity. A noise scale of 0 (no noise) is allowed and gives an infinite RDP, zCDP or
epsilon: the mechanism releases the record and there is no privacy guarantee (dp-accounting
returns ``inf`` for the Gaussian as well). A privacy loss whose value lies beyond the float
range (about 1.8e308 nats, e.g. a noise multiplier of 1e-300) is returned as ``inf`` for the
same reason, rather than raising: every epsilon that large is equally vacuous. ``nan`` is
never returned, and an impossible input (a negative RDP, an empty order list) is refused
with a ValueError naming the parameter, its allowed range and the value.

Modules (one idea each; every public name is re-exported here, so
``from bounds.accounting import X`` works for all of them):

- ``rdp``: the RDP curves of single mechanisms (Gaussian, Laplace, sampled Gaussian).
- ``zcdp``: zCDP from pure DP and of the Gaussian, and zCDP to RDP.
- ``conversion``: composition and RDP to (epsilon, delta); the DP-SGD accountant.
- ``fedltp``: Fed-LTP's Theorem 1 as published, and the corrected accountant.

Mechanisms (vectorised over ``orders``; a scalar order gives a float)
    ``rdp_gaussian(orders, noise_multiplier)``: :math:`\alpha/(2\sigma^2)` (Mironov 2017, Prop. 7).
    ``rdp_laplace(orders, noise_multiplier)``: exact (Mironov 2017, Prop. 6).
    ``rdp_sampled_gaussian(orders, *, q, noise_multiplier)``: Poisson-sampled Gaussian
    (Mironov, Talwar, Zhang 2019, arXiv 1908.10530): binomial expansion for integer orders
    (Sec. 3.2), the two-sided series of Sec. 3.3 for fractional orders (the trapezoidal rule
    on A - 1 where it falls short), all in log space.
    ``log_a_sampled_gaussian_quad(alpha, *, q, noise_multiplier)``: the defining integral by
    adaptive quadrature (the reference; order over noise multiplier at most 2000).
zCDP (Bun and Steinke 2016)
    ``zcdp_from_pure_dp(epsilon)`` (Prop. 1.4, Fed-LTP Lemma 1), ``zcdp_gaussian``,
    ``rdp_from_zcdp(rho, orders)``.
Composition and conversion
    ``compose(*rdp_curves, counts=None)``;
    ``epsilon_from_rdp(orders, rdp, delta, *, conversion="tight")`` and
    ``delta_from_rdp(orders, rdp, epsilon, *, conversion="tight")``:
    ``"classic"`` is Mironov 2017 Prop. 3,
    :math:`\epsilon = \mathrm{rdp} + \log(1/\delta)/(\alpha-1)`;
    ``"tight"`` is Canonne, Kamath, Steinke 2020 (arXiv 2004.00010, Prop. 12) = Balle et al.
    2020 (arXiv 1905.09982, Thm. 21), :math:`\epsilon = \mathrm{rdp} + \log(1-1/\alpha)
    - (\log\delta + \log\alpha)/(\alpha-1)`, with the same KL short-cut and
    :math:`\alpha > 1.01` guard as Google's dp-accounting (which uses "tight").
    ``epsilon_sampled_gaussian(q, noise_multiplier, steps, delta, *, orders, conversion)``.
Fed-LTP (Shi et al., ``papers/fed-ltp-lottery-ticket-zcdp.txt``, Theorem 1, eq. 20-24)
    ``fedltp_rho_s_published``, ``fedltp_rho_v_published``, ``fedltp_epsilon_published``
    (one order, as printed), ``fedltp_epsilon_published_optimal`` (minimised over orders),
    ``fedltp_epsilon_corrected`` (this package's accountant), ``fedltp_epsilon_composition``
    (the same schedule by basic composition of each step's (epsilon, delta), Fig. 9's
    "without zCDP"), ``fedltp_epsilon_published_expr`` (sympy).

Fed-LTP Theorem 1 checked term by term against the definitions it cites:

* eq. 8 (Definition 4) writes :math:`e^{D_\alpha} = \mathbb E[e^{(\alpha-1)Z}]`; by eq. 6,
  :math:`\mathbb E[e^{(\alpha-1)Z}] = e^{(\alpha-1)D_\alpha}`. With the correct identity,
  :math:`\rho`-zCDP means :math:`D_\alpha \le \alpha\rho`.
* eq. 23 uses eq. 8 as printed and gets
  :math:`D_\alpha \le \tfrac12\alpha(\alpha-1)\epsilon_{val}^2`; Lemma 1
  (:math:`\tfrac12\epsilon^2`-zCDP) gives :math:`D_\alpha \le \tfrac12\alpha\epsilon_{val}^2`.
  The published term is too small for :math:`\alpha < 2` and too large for :math:`\alpha > 2`
  (factor :math:`\alpha - 1`). With :math:`\epsilon_{val} = 1/\lambda_{val}` (eq. 17,
  sensitivity 1) the exact Laplace RDP (``rdp_laplace``) is smaller still.
* eq. 21 puts the sampling mixture into
  :math:`\mu_1 = \tilde q N(1,\sigma^2) + (1-\tilde q)N(0,\sigma^2)`
  *and* again into :math:`(1-\tilde q+\tilde q\mu_1/\mu_0)^\alpha`; Mironov et al. 2019 use
  :math:`\mu_1 = N(1,\sigma^2)`. As printed the term is the RDP of sampling rate
  :math:`\tilde q^2`, an under-estimate (``fedltp_rho_s_published`` evaluates it literally).
* eq. 21 composes one sampled-Gaussian step per round, while Algorithm 2 runs
  :math:`\tau` noisy local steps per round (:math:`\tau = 300` in Sec. 6): the corrected
  accountant composes ``steps_per_round`` steps per round.
* eq. 22 is the tight conversion above (correct), but Theorem 1 fixes no order; the
  published epsilon depends on :math:`\alpha`, and the optimum over orders is reported.
* ``t`` is read as the 0-based round index, so both forms compose ``t + 1`` rounds as the
  paper's :math:`(t+1)` factors do.
"""

from __future__ import annotations

import logging

from pruneleak.bounds.accounting.conversion import (
    DEFAULT_ORDERS,
    compose,
    delta_from_rdp,
    epsilon_from_rdp,
    epsilon_sampled_gaussian,
)
from pruneleak.bounds.accounting.fedltp import (
    fedltp_epsilon_composition,
    fedltp_epsilon_corrected,
    fedltp_epsilon_published,
    fedltp_epsilon_published_expr,
    fedltp_epsilon_published_optimal,
    fedltp_rho_s_published,
    fedltp_rho_v_published,
)
from pruneleak.bounds.accounting.rdp import (
    log_a_sampled_gaussian_quad,
    rdp_gaussian,
    rdp_laplace,
    rdp_sampled_gaussian,
)
from pruneleak.bounds.accounting.zcdp import (
    rdp_from_zcdp,
    zcdp_from_pure_dp,
    zcdp_gaussian,
)

__all__ = [
    "DEFAULT_ORDERS",
    "compose",
    "delta_from_rdp",
    "epsilon_from_rdp",
    "epsilon_sampled_gaussian",
    "fedltp_epsilon_composition",
    "fedltp_epsilon_corrected",
    "fedltp_epsilon_published",
    "fedltp_epsilon_published_expr",
    "fedltp_epsilon_published_optimal",
    "fedltp_rho_s_published",
    "fedltp_rho_v_published",
    "log_a_sampled_gaussian_quad",
    "rdp_from_zcdp",
    "rdp_gaussian",
    "rdp_laplace",
    "rdp_sampled_gaussian",
    "zcdp_from_pure_dp",
    "zcdp_gaussian",
]

logger = logging.getLogger(__name__)
