r"""The three kinds of check behind every claim, and how each reaches a verdict.

A check compares a **true** quantity (exact, closed form, quadrature or Monte Carlo) with
the **claimed** expression of a paper under a relation: ``"<="`` (the paper claims
true <= claimed, e.g. a tail bound), ``">="`` (true >= claimed, e.g. a lower bound on a
mean) or ``"=="`` (an identity). Each ``run(rng=..., effort=...)`` returns a
:class:`CheckResult` with one of the verdicts

``holds``
    proved symbolically, or no violation anywhere on a dense grid after an optimiser
    searched for the worst point, or every Monte Carlo confidence interval agrees;
``holds-on-domain``
    violated on part of the stated domain but holding on a non-degenerate interval of
    one parameter, which is reported (e.g. ``a/sigma_A <= 0.8601``);
``fails``
    a concrete counterexample (point, true value, claimed value, size of the violation),
    or a Monte Carlo interval that excludes the claimed value;
``inconclusive``
    sympy could not decide and no numeric check settled it, points could not be
    evaluated, or a confidence interval straddles the claimed value.

Kinds (``CheckResult.kind``):

* ``"symbolic"``: :class:`SymbolicCheck` (identity or inequality, sympy with the symbols'
  assumptions, numeric fallback on a grid when sympy cannot decide),
  :class:`SeriesCheck` (an expansion to a stated order) and :class:`LimitCheck`;
* ``"grid"``: :class:`GridCheck` (dense grid, then Nelder-Mead from the worst grid point);
* ``"monte-carlo"``: :class:`MonteCarloCheck` (Wilson intervals for probabilities, CLT
  intervals for means and for estimators returning ``(estimate, standard_error)``),
  family-wise confidence 99 % by default (Bonferroni over the points).

Every check has a failure path; ``negated()`` returns the check of a claim that contradicts
it (relation reversed, or the claimed value shifted), which the tests run to show that
a check reported as holding could have failed.

Modules: :mod:`.results` (verdicts, :class:`Param`, :class:`Curve`, :class:`CheckResult`),
:mod:`.grid`, :mod:`.symbolic` and :mod:`.montecarlo` (one per kind); this package
re-exports their names.
"""

from pruneleak.bounds.claims.checks.grid import GridCheck
from pruneleak.bounds.claims.checks.montecarlo import (
    MonteCarloCheck,
    mean_interval,
    wilson_interval,
)
from pruneleak.bounds.claims.checks.results import (
    FAILS,
    HOLDS,
    HOLDS_ON_DOMAIN,
    INCONCLUSIVE,
    RELATIONS,
    VERDICTS,
    CheckResult,
    Curve,
    Param,
    combine_verdicts,
    fmt,
    fmt_point,
)
from pruneleak.bounds.claims.checks.symbolic import LimitCheck, SeriesCheck, SymbolicCheck

CHECK_TYPES = (GridCheck, SymbolicCheck, SeriesCheck, LimitCheck, MonteCarloCheck)

__all__ = [
    "CHECK_TYPES",
    "FAILS",
    "HOLDS",
    "HOLDS_ON_DOMAIN",
    "INCONCLUSIVE",
    "RELATIONS",
    "VERDICTS",
    "CheckResult",
    "Curve",
    "GridCheck",
    "LimitCheck",
    "MonteCarloCheck",
    "Param",
    "SeriesCheck",
    "SymbolicCheck",
    "combine_verdicts",
    "fmt",
    "fmt_point",
    "mean_interval",
    "wilson_interval",
]
