"""bounds.claims.checks: each kind of check reaches the right verdict on claims built here.

For every kind (grid, symbolic identity/inequality, series, limit, Monte Carlo) a claim
known to be true gets ``holds`` and one known to be false gets ``fails`` (with the
counterexample), a claim true on part of its domain gets ``holds-on-domain`` with the
domain, and the undecidable cases get ``inconclusive``.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import pytest
import sympy as sp
from montecarlo_helpers import monte_carlo_check
from scipy import optimize, stats

from pruneleak.bounds.claims import checks
from pruneleak.bounds.claims.checks import (
    FAILS,
    HOLDS,
    HOLDS_ON_DOMAIN,
    INCONCLUSIVE,
    GridCheck,
    LimitCheck,
    Param,
    SeriesCheck,
    SymbolicCheck,
)
from pruneleak.bounds.claims.checks.grid import longest_run
from pruneleak.bounds.claims.claim import Claim, run_claim

X = Param("x", 0.0, 2.0, points=41)


def sin(x):
    return np.sin(x)


def one(x):
    return 1 + 0 * x


def _grid(true, claimed, relation, **kw):
    return GridCheck(
        true=true,
        claimed=claimed,
        params=kw.pop("params", (X,)),
        relation=relation,
        true_label="t",
        claimed_label="c",
        **kw,
    )


# ---------------------------------------------------------------------------------------
# Grid
# ---------------------------------------------------------------------------------------


def test_grid_true_inequality_holds():
    result = _grid(sin, one, "<=").run()
    assert result.verdict == HOLDS
    # Tightest point is x = pi/2 where sin = 1: the optimiser finds it between grid points.
    assert result.numbers["worst_point"]["x"] == pytest.approx(math.pi / 2, abs=1e-4)
    assert result.numbers["margin"] == pytest.approx(0.0, abs=1e-8)


def test_grid_false_inequality_fails_with_counterexample():
    result = _grid(lambda x: x**2, lambda x: x, "<=").run()
    assert result.verdict == FAILS
    assert result.numbers["worst_point"]["x"] == pytest.approx(2.0)
    assert result.numbers["violation"] == pytest.approx(2.0)  # 4 - 2
    assert result.numbers["violating_fraction"] == pytest.approx(20 / 41)


def test_grid_domain_is_found_and_refined():
    result = _grid(lambda x: x**2, lambda x: x, "<=", domain_param="x").run()
    assert result.verdict == HOLDS_ON_DOMAIN
    domain = result.numbers["domain"]
    # x^2 <= x exactly on [0, 1]; bisection pins the boundary far below the grid step 0.05.
    assert domain["high"] == pytest.approx(1.0, abs=1e-8)
    assert domain["text"] == "x <= 1"


def test_grid_smallest_counterexample_is_the_violating_point_nearest_the_lower_ends():
    # x^2 <= x + 0.5 fails for x > (1 + sqrt 3)/2 = 1.366: the smallest violating grid
    # value is 1.4 (step 0.05), the worst is x = 2.
    result = _grid(lambda x: x**2, lambda x: x + 0.5, "<=").run()
    counter = result.numbers["counterexample"]
    assert counter["point"] == {"x": pytest.approx(1.4)}
    assert counter["true"] == pytest.approx(1.96) and counter["claimed"] == pytest.approx(1.9)
    assert counter["violation"] == pytest.approx(0.06)
    assert result.numbers["worst_point"]["x"] == pytest.approx(2.0)
    # Two parameters: x * y <= 1 on [0, 2]^2 fails first where x + y is smallest, x = y = 1.05.
    params = (Param("x", 0.0, 2.0, points=41), Param("y", 0.0, 2.0, points=41))
    result = _grid(lambda x, y: x * y, lambda x, y: 1 + 0 * x, "<=", params=params).run()
    point = result.numbers["counterexample"]["point"]
    assert point["x"] + point["y"] == pytest.approx(2.05)
    assert point["x"] * point["y"] > 1


def test_grid_domain_boundary_is_a_function_of_the_other_parameter():
    # x <= c holds for x <= c: at each grid value of c the domain of x ends at the last
    # grid value of x below c (grid step 0.05), and the overall domain is the worst c.
    params = (Param("x", 0.0, 2.0, points=41), Param("c", 0.5, 1.5, points=5))
    result = _grid(
        lambda x, c: x + 0 * c, lambda x, c: c + 0 * x, "<=", params=params, domain_param="x"
    ).run()
    domain = result.numbers["domain"]
    assert domain["high"] == pytest.approx(0.5, abs=1e-8)
    (boundary,) = domain["boundaries"]
    assert boundary["param"] == "c" and boundary["values"] == pytest.approx(params[1].grid())
    expected = [math.floor(c / 0.05 + 1e-9) * 0.05 for c in params[1].grid()]
    assert boundary["high"] == pytest.approx(expected)
    assert boundary["low"] == pytest.approx([0.0] * 5)


@pytest.mark.parametrize(
    ("flags", "run"),
    [
        ([1, 1, 0, 1, 1, 1, 0], (3, 5)),
        ([0, 1, 1, 0, 1, 1], (1, 2)),  # ties: the first
        ([1, 0, 1, 0], None),  # no run of two
        ([], None),
        ([1, 1, 1], (0, 2)),
    ],
)
def test_longest_run(flags, run):
    assert longest_run(np.array(flags, dtype=bool)) == run


def test_grid_domain_verdict_false_keeps_fails_but_reports_domain():
    result = _grid(lambda x: x**2, lambda x: x, "<=", domain_param="x", domain_verdict=False).run()
    assert result.verdict == FAILS
    assert "holds only for x <= 1" in result.summary


def test_grid_identity_true_and_false():
    assert (
        _grid(lambda x: np.sin(x) ** 2 + np.cos(x) ** 2, lambda x: 1 + 0 * x, "==").run().verdict
        == HOLDS
    )
    result = _grid(lambda x: (x + 1) ** 2, lambda x: x**2 + 1, "==", domain_param="x").run()
    assert result.verdict == FAILS  # equal only at the single grid value x = 0
    assert "holds only at x = 0" in result.summary


def test_grid_refinement_finds_violation_between_grid_points():
    # The bump at x = 0.525 lies strictly between grid points 0.5 and 0.55 (step 0.05).
    bump = _grid(lambda x: 1 - 50 * (x - 0.525) ** 2, lambda x: 1 - 1e-4 + 0 * x, "<=")
    assert bump.run().verdict == FAILS
    assert bump.run().numbers["worst_point"]["x"] == pytest.approx(0.525, abs=1e-4)


def test_grid_nan_points_make_it_inconclusive():
    result = _grid(
        lambda x: np.where(x > 1.5, np.nan, 0.0), lambda x: 1 + 0 * x, "<=", refine=False
    ).run()
    assert result.verdict == INCONCLUSIVE
    assert result.numbers["nan_points"] == 10


def test_grid_infinite_true_value_violates():
    result = _grid(lambda x: np.where(x == 0, np.inf, 1.0), lambda x: 2 + 0 * x, "<=").run()
    assert result.verdict == FAILS
    assert result.numbers["worst_point"]["x"] == 0.0


def test_grid_integer_parameter_reaches_function_as_ints():
    seen = []

    def true(n):
        seen.append(n.dtype.kind)
        return 1.0 / n

    result = _grid(
        true,
        lambda n: 1 + 0 * n,
        "<=",
        params=(Param("n", 1, 100, scale="log", integer=True, points=20),),
    ).run()
    assert result.verdict == HOLDS
    assert set(seen) == {"i"}


# ---------------------------------------------------------------------------------------
# Symbolic
# ---------------------------------------------------------------------------------------

x = sp.Symbol("x", positive=True)
XS = (Param("x", 0.01, 3.0, points=31),)


def _sym(true, claimed, relation, **kw):
    return SymbolicCheck(
        true=true,
        claimed=claimed,
        relation=relation,
        params=XS,
        true_label="t",
        claimed_label="c",
        **kw,
    )


def test_symbolic_identity_proved():
    result = _sym((x + 1) ** 2, x**2 + 2 * x + 1, "==").run()
    assert result.verdict == HOLDS
    assert result.numbers["sympy"] == "proved"


def test_symbolic_false_identity_refuted_with_counterexample():
    result = _sym(sp.exp(x), 1 + x, "==").run()
    assert result.verdict == FAILS
    assert result.numbers["sympy"] == "refuted"
    point = result.numbers["numeric"]["worst_point"]["x"]
    assert result.numbers["numeric"]["true_value"] == pytest.approx(math.exp(point))


def test_symbolic_inequality_proved_by_assumptions():
    result = _sym(-(x**2) - 1, 0 * x, "<=").run()  # -x^2 - 1 <= 0 for real x
    assert result.verdict == HOLDS and result.numbers["sympy"] == "proved"


def test_symbolic_inequality_refuted_by_sign():
    result = _sym(x**2 + 1, 0 * x, "<=").run()
    assert result.verdict == FAILS and result.numbers["sympy"] == "refuted"


def test_symbolic_undecided_inequality_falls_back_to_numeric():
    true_one = _sym(1 + x, sp.exp(x), "<=").run()  # 1 + x <= e^x: sympy cannot sign the gap
    assert true_one.verdict == HOLDS
    assert true_one.numbers["sympy"] == "undecided"
    assert "numeric fallback" in true_one.summary
    false_one = _sym(x**2, x, "<=").run()  # fails for x > 1
    assert false_one.verdict == FAILS
    assert false_one.numbers["numeric"]["worst_point"]["x"] == pytest.approx(3.0)


def _sin_series(claimed, order):
    return SeriesCheck(
        true=sp.sin(x),
        claimed=claimed,
        var=x,
        order=order,
        param=XS[0],
        true_label="sin",
        claimed_label=str(claimed),
    )


def test_series_check():
    assert _sin_series(x, 3).run().verdict == HOLDS
    # The cubic coefficient is -1/6, not +1/6.
    wrong = _sin_series(x + x**3 / 6, 5).run()
    assert wrong.verdict == FAILS
    assert wrong.numbers["leading_difference"] == "-x**3/3"


@pytest.mark.parametrize(
    ("expr", "expect", "verdict"),
    [
        (sp.sin(x) / x, "finite-nonzero", HOLDS),
        (1 / x, "finite", FAILS),
        (sp.log(1 / x), "infinite", HOLDS),
        (x, "finite-nonzero", FAILS),
    ],
)
def test_limit_check(expr, expect, verdict):
    check = LimitCheck(expr=expr, var=x, point=0, expect=expect, param=XS[0], true_label="f")
    assert check.run().verdict == verdict


def test_limit_without_a_value_is_inconclusive():
    check = LimitCheck(
        expr=sp.sin(1 / x), var=x, point=0, expect="finite", param=XS[0], true_label="sin(1/x)"
    )
    assert check.run().verdict == INCONCLUSIVE


# ---------------------------------------------------------------------------------------
# Monte Carlo
# ---------------------------------------------------------------------------------------


_mc = partial(monte_carlo_check, samples=4000)


def _tail(rng, n, t):
    return rng.standard_normal(n) > t


def test_monte_carlo_probability_true_and_false():
    # Pr[Z > 3] = 0.00135 <= 0.01: true. Pr[Z > 1] = 0.159 <= 0.05: false.
    ok = _mc(_tail, lambda t: 0.01, "<=", ({"t": 3.0},)).run(rng=1)
    assert ok.verdict == HOLDS
    bad = _mc(_tail, lambda t: 0.05, "<=", ({"t": 1.0},), exact=lambda t: stats.norm.sf(t))
    result = bad.run(rng=1)
    assert result.verdict == FAILS
    row = result.numbers["points"][0]
    assert row["ci"][0] > 0.05 and row["exact"] == pytest.approx(0.1587, abs=1e-4)


def test_monte_carlo_straddling_interval_is_inconclusive():
    coin = _mc(lambda rng, n, p: rng.random(n) < p, lambda p: 0.5, "<=", ({"p": 0.5},))
    assert coin.run(rng=2).verdict == INCONCLUSIVE


def test_monte_carlo_domain():
    check = _mc(
        _tail,
        lambda t: 0.05,
        "<=",
        tuple({"t": t} for t in (0.5, 1.0, 2.0, 3.0, 4.0)),
        domain_param="t",
    )
    result = check.run(rng=3)
    assert result.verdict == HOLDS_ON_DOMAIN
    assert result.numbers["domain"]["low"] == 2.0  # Pr[Z > 2] = 0.023, Pr[Z > 1] = 0.16
    # The smallest failing point is t = 0.5 (Pr = 0.31), not the first one that fails.
    assert result.numbers["counterexample"]["point"] == {"t": 0.5}


def test_monte_carlo_means_and_estimates():
    def uniform(rng, n, c):
        return rng.random(n)

    assert _mc(uniform, lambda c: 0.5, "==", ({"c": 0},), "mean").run(rng=4).verdict == HOLDS
    assert _mc(uniform, lambda c: 0.6, "==", ({"c": 0},), "mean").run(rng=4).verdict == FAILS

    def estimate(rng, n, c):
        values = rng.random(n)
        return values.mean(), values.std(ddof=1) / math.sqrt(n)

    assert _mc(estimate, lambda c: 0.6, "<=", ({"c": 0},), "estimate").run(rng=5).verdict == HOLDS
    assert _mc(estimate, lambda c: 0.4, "<=", ({"c": 0},), "estimate").run(rng=5).verdict == FAILS


def test_monte_carlo_effort_scales_samples_and_seed_reproduces():
    check = _mc(_tail, lambda t: 0.2, "<=", ({"t": 1.0},), samples=1000)
    assert check.run(rng=7, effort=3).numbers["samples_per_point"] == 3000
    a, b = check.run(rng=7).numbers["points"][0], check.run(rng=7).numbers["points"][0]
    assert a["estimate"] == b["estimate"]


def test_wilson_interval_solves_its_defining_quadratic():
    # The Wilson bounds are the roots of (phat - p)^2 = z^2 p (1 - p)/n.
    k, n, conf = 7, 50, 0.95
    z = stats.norm.isf((1 - conf) / 2)

    def score(p):
        return (k / n - p) ** 2 - z**2 * p * (1 - p) / n

    lo, hi = checks.wilson_interval(k, n, confidence=conf)
    assert lo == pytest.approx(optimize.brentq(score, 1e-12, k / n), abs=1e-12)
    assert hi == pytest.approx(optimize.brentq(score, k / n, 1 - 1e-12), abs=1e-12)
    assert checks.wilson_interval(0, n, confidence=conf)[1] == pytest.approx(z**2 / (n + z**2))


# ---------------------------------------------------------------------------------------
# Negation, combination, validation
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "check",
    [
        _grid(sin, one, "<="),
        _grid(lambda x: np.sin(x) ** 2 + np.cos(x) ** 2, lambda x: 1 + 0 * x, "=="),
        _sym((x + 1) ** 2, x**2 + 2 * x + 1, "=="),
        _sym(-(x**2) - 1, 0 * x, "<="),
        _sin_series(x, 3),
        LimitCheck(
            expr=sp.sin(x) / x, var=x, point=0, expect="finite", param=XS[0], true_label="f"
        ),
        _mc(_tail, lambda t: 0.01, "<=", ({"t": 3.0},)),
        _mc(lambda rng, n, c: rng.random(n), lambda c: 0.5, "==", ({"c": 0},), "mean"),
    ],
    ids=["grid-ineq", "grid-eq", "sym-eq", "sym-ineq", "series", "limit", "mc-prob", "mc-mean"],
)
def test_negation_of_a_holding_check_does_not_hold(check):
    assert check.run(rng=0).verdict == HOLDS
    assert check.negated().run(rng=0).verdict in (FAILS, INCONCLUSIVE)


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        ([HOLDS, HOLDS], HOLDS),
        ([HOLDS, INCONCLUSIVE], INCONCLUSIVE),
        ([HOLDS_ON_DOMAIN, INCONCLUSIVE, HOLDS], HOLDS_ON_DOMAIN),
        ([HOLDS, FAILS, HOLDS_ON_DOMAIN], FAILS),
        ([], INCONCLUSIVE),
    ],
)
def test_combine_verdicts(verdicts, expected):
    assert checks.combine_verdicts(verdicts) == expected


def test_claim_runs_all_checks_and_combines():
    claim = Claim(
        id="test.claim",
        paper="huang",
        location="Lemma X",
        statement="s",
        checks=(_grid(sin, one, "<="), _grid(lambda x: x**2, lambda x: x, "<=", domain_param="x")),
    )
    result = run_claim(claim)
    assert result.verdict == HOLDS_ON_DOMAIN
    assert result.evidence()["domain"] == "x <= 1"
    assert result.summary.startswith("holds for x <= 1")


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        (lambda: Param("x", 0.0, 1.0, scale="log"), "'low' parameter of Param"),
        (lambda: Param("x", 1.0, 0.5), "'high' parameter of Param"),
        (lambda: Param("x", 0.0, 1.0, scale="cubic"), "'scale' parameter of Param"),
        (lambda: _grid(sin, one, "<"), "'relation' parameter of GridCheck"),
        (lambda: _grid(sin, one, "<=", domain_param="y"), "'y' is not one of"),
        (
            lambda: _mc(_tail, lambda t: 0.1, "<=", ({"t": 1.0},), statistic="median"),
            "'statistic' parameter of MonteCarloCheck",
        ),
        (
            lambda: _mc(_tail, lambda t: 0.1, "<=", ({"t": 1.0},), confidence=1.0),
            "'confidence' parameter of MonteCarloCheck",
        ),
        (lambda: _mc(_tail, lambda t: 0.1, "<=", ()), "at least one point"),
        (
            lambda: LimitCheck(
                expr=x, var=x, point=0, expect="bounded", param=XS[0], true_label="f"
            ),
            "'expect' parameter of LimitCheck",
        ),
        (
            lambda: Claim(
                id="c", paper="nature", location="l", statement="s", checks=(_grid(sin, one, "<="),)
            ),
            "'paper' parameter of Claim",
        ),
        (
            lambda: Claim(id="c", paper="huang", location="l", statement="s", checks=()),
            "needs at least one check",
        ),
        (lambda: checks.combine_verdicts(["maybe"]), "'verdict' parameter"),
    ],
)
def test_bad_arguments_raise(factory, message):
    with pytest.raises(ValueError, match=message):
        factory()
