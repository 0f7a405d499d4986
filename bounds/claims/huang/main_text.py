r"""Main text of Huang et al.: Sections 4.1 and 4.4 (pruning schedule, budget, Figure 8).

Part of :mod:`bounds.claims.huang`; ``CLAIMS`` lists these claims in report order. The
numbers of Figure 8 are transcribed from the paper's table; the budget claim combines
Section 4.4's stated :math:`(\epsilon_{dp}, \delta_{dp}) = (0.5, 0.1)` with Theorem E.2 and
Remark E.3.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from pruneleak.bounds import equivalence as eq
from pruneleak.bounds.claims.checks import GridCheck, Param, SymbolicCheck
from pruneleak.bounds.claims.claim import Claim
from pruneleak.bounds.equivalence.width import FIG8_ERROR, FIG8_WIDTHS

# Section 4.1: gradual pruning [ZG17], k_t = k_T + (k_0 - k_T)(1 - (t - t_0)/(n dt))^3.
_t, _t0, _n, _dt, _k0, _gap = sp.symbols("t t_0 n dt k_0 g", positive=True)
_kT = _k0 + _gap  # the target sparsity is reached from below: k_T = k_0 + g, g > 0
_SCHEDULE = _kT + (_k0 - _kT) * (1 - (_t - _t0) / (_n * _dt)) ** 3
_SCHEDULE_PARAMS = (
    Param("t_0", 1.0, 1e3, scale="log", points=4),
    Param("n", 1.0, 100.0, scale="log", points=4),
    Param("dt", 1.0, 1e3, scale="log", points=4),
    Param("k_0", 1e-3, 0.5, scale="log", points=4),
    Param("g", 1e-3, 0.49, scale="log", points=4, label="k_T - k_0"),
)


def _schedule_check(at, claimed, label):
    return SymbolicCheck(
        true=_SCHEDULE.subs(_t, at),
        claimed=claimed,
        relation="==",
        params=_SCHEDULE_PARAMS,
        true_label=f"k_t at t = {label}",
        claimed_label=str(claimed),
    )


GRADUAL_PRUNING = Claim(
    id="huang.sec4_1.gradual_pruning",
    paper="huang",
    location="Section 4.1 (gradual pruning schedule k_t)",
    statement=(
        "k_t = k_T + (k_0 - k_T)(1 - (t - t_0)/(n Delta t))^3 rises from k_0 at t = t_0 to the "
        "target k_T at t = t_0 + n Delta t, never decreasing in between."
    ),
    checks=(
        _schedule_check(_t0, _k0, "t_0"),
        _schedule_check(_t0 + _n * _dt, _kT, "t_0 + n dt"),
        SymbolicCheck(
            true=sp.diff(_SCHEDULE, _t).subs(_t, _t0 + sp.Symbol("s", positive=True) * _n * _dt),
            claimed=sp.Integer(0),
            relation=">=",
            params=(*_SCHEDULE_PARAMS, Param("s", 0.0, 1.0, points=11, label="(t - t_0)/(n dt)")),
            true_label="dk_t/dt on [t_0, t_0 + n dt]",
            claimed_label="0",
        ),
    ),
)

# Section 4.4: epsilon_dp = 0.5, delta_dp = 0.1; Figure 8's widths m = 10 ... 1500.
_BUDGET_EPS, _BUDGET_DELTA = 0.5, 0.1


def _budget_epsilon(m):
    """Theorem E.2's epsilon_dp with Remark E.3's sigma = m, sigma_A = 1/sigma and GS_1 at
    its mean lower bound E ||A_(*,1)||_1 = m sigma_A sqrt(2/pi) (GS_1 >= ||A_(*,1)||_1)."""
    sigma = np.asarray(m, dtype=float)
    sigma_a = 1.0 / sigma
    return eq.epsilon_dp_theorem_e2(
        sigma, sigma_a, m, 1, _BUDGET_DELTA, gs1=sigma * sigma_a * math.sqrt(2 / math.pi)
    )


BUDGET = Claim(
    id="huang.sec4_4.budget",
    paper="huang",
    location="Section 4.4 (epsilon_dp = 0.5, delta_dp = 0.1) with Theorem E.2 and Remark E.3",
    statement=(
        "The synthetic test's budget epsilon_dp = 0.5, delta_dp = 0.1 is what Theorem E.2 "
        "gives with Remark E.3's sigma = m, sigma_A = Theta(1/sigma) at Figure 8's widths "
        "m = 10 ... 1500."
    ),
    checks=(
        GridCheck(
            true=_budget_epsilon,
            claimed=lambda m: _BUDGET_EPS + 0 * m,
            params=(
                Param("m", FIG8_WIDTHS[0], FIG8_WIDTHS[-1], scale="log", integer=True, points=41),
            ),
            relation="<=",
            true_label=(
                "Theorem E.2 epsilon_dp at sigma = m, sigma_A = 1/m, GS_1 = m sigma_A sqrt(2/pi) "
                "(a lower bound on its mean), nats"
            ),
            claimed_label="epsilon_dp = 0.5",
        ),
    ),
    notes=(
        "With sigma sigma_A = 1, Theorem E.2 reads epsilon_dp = 2 GS_1(f) log(m/delta_dp) and "
        "GS_1 >= ||A_(*,1)||_1 has mean m sigma_A sqrt(2/pi) = sqrt(2/pi): epsilon_dp >= "
        "1.6 log(10 m) >= 7.3 nats at every width of Figure 8 (bounds.equivalence, item 7)."
    ),
    corrected=(
        "Theorem E.2 gives epsilon_dp = 0.5 at delta_dp = 0.1 only for sigma sigma_A = "
        "4 GS_1(f) log(10 m), i.e. (GS_1 ~ m sigma_A sqrt(2/pi)) sigma = 4 sqrt(2/pi) m "
        "log(10 m) = 3.19 m log(10 m), 14.7 to 30.7 times Remark E.3's sigma = m for m = 10 "
        "to 1500."
    ),
)


def _fig8_error(k, m):
    """Figure 8's error at sparsity k (0.1 ... 0.9) and a width m of the table."""
    rows = np.rint(np.asarray(k) * 10).astype(int) - 1
    cols = np.searchsorted(FIG8_WIDTHS, np.asarray(m))
    return FIG8_ERROR[rows, cols]


def _fig8_check(width, eps_ap, width_label):
    return GridCheck(
        true=lambda k: _fig8_error(k, width(k)),
        claimed=lambda k: eps_ap + 0 * k,
        params=(Param("k", 0.1, 0.9, points=9, label="sparsity k"),),
        relation="<=",
        true_label=f"Figure 8 error at m = {width_label}",
        claimed_label=f"eps_ap = {eps_ap}",
        atol=0.0,
        refine=False,  # a table: only its grid points exist
    )


FIGURE8 = Claim(
    id="huang.sec4_4.figure8",
    paper="huang",
    location="Section 4.4 and Figure 8",
    statement=(
        "For every sparsity level, m = 20 gives eps_ap below 0.05; m = 500 gives eps_ap below "
        "0.01 for sparsity higher than 0.8 and m = 1500 for the lower ones."
    ),
    checks=(
        _fig8_check(lambda k: np.full(np.shape(k), 20), 0.05, "20"),
        _fig8_check(
            lambda k: np.where(np.asarray(k) > 0.85, 500, 1500),
            0.01,
            "500 (k > 0.8) or 1500",
        ),
    ),
    notes=(
        "Sufficiency only: for k = 0.7 the error is already 0.0094 at m = 1000, and the error "
        "is not monotone in m (k = 0.5: 0.0204 at m = 20, 0.0284 at m = 50)."
    ),
)

CLAIMS = (
    GRADUAL_PRUNING,
    BUDGET,
    FIGURE8,
)
