"""PriPrune's eq. (16) weights moved from the paper's model to ours: one explicit rule.

PriPrune (journal version, Sec. 5.2, eq. (16)-(17); Appendix D.3 and Table A1) weights
its client loss as

.. math::

    L_{local} = \\lambda_{acc} L_{acc} + \\lambda_{pri} L_{pri}
                + \\lambda_{sha} \\sum_{l, j} \\alpha(l, j)

and tunes ``(lambda_acc, lambda_pri, lambda_sha)`` on its own models (FEMNIST: Conv-2,
``N_paper`` = 6,601,504 prunable weights). Minimising the last two terms alone gives
``alpha*_j = min(1, lambda_pri w_j / lambda_sha)`` with eq. (17)'s weights ``w_j``
summing to 1 over all ``N`` prunable weights, so the unclipped mean is

.. math::

    \\bar\\alpha^* = \\frac{\\lambda_{pri}}{\\lambda_{sha} N}

(claim ``priprune.eq17_uniform_layer_sparsity``). :func:`rescale_lambdas` maps a setting
of the paper to our model of ``N`` prunable weights by two steps:

1. divide eq. (16) by ``lambda_acc`` (:mod:`sims.defenses.adaptive` steps the weights by
   ``lr * lambda_acc * grad L_acc``, so keeping ``lambda_acc = 5`` would multiply the
   client's learning rate by 5);
2. multiply ``lambda_sha`` by ``N_paper / N``, which keeps :func:`mean_alpha_star`.

Result: ``(1, lambda_pri / lambda_acc, lambda_sha N_paper / (lambda_acc N))``. The
packaged sweeps ``priprune_defense`` and ``priprune_lambda_grid`` write its values
rounded to :data:`SIGNIFICANT_DIGITS` digits.
"""

from __future__ import annotations

import math

from pruneleak.bounds.validation import check_int, check_real

#: Prunable weights of the paper's FEMNIST Conv-2 (width 32, hidden 2048, 62 classes,
#: 28x28: ``benchmarks/sweeps/priprune_defense_femnist.toml``), counted by
#: :func:`sims.pruning.mask.prunable_names` on :func:`sims.models.build_model`.
PAPER_FEMNIST_CONV2_WEIGHTS = 6_601_504
#: Prunable weights of our tanh Conv-1 (width 32, hidden 64) on the 8x8 digits.
DIGITS_CONV1_WEIGHTS = 13_512
#: Significant digits of the rescaled lambdas in the packaged TOML files.
SIGNIFICANT_DIGITS = 4


def mean_alpha_star(lambda_pri: float, lambda_sha: float, n_weights: int) -> float:
    """The unclipped mean ``lambda_pri / (lambda_sha N)`` of eq. (17)'s optimal alpha
    (module docstring); ``lambda_pri`` >= 0, ``lambda_sha`` > 0, ``n_weights`` >= 1."""
    func = "mean_alpha_star"
    lambda_pri = check_real("lambda_pri", lambda_pri, func=func, low=0)
    lambda_sha = check_real("lambda_sha", lambda_sha, func=func, low=0, low_inclusive=False)
    n_weights = check_int("n_weights", n_weights, func=func, low=1)
    return float(lambda_pri / (lambda_sha * n_weights))


def rescale_lambdas(
    lambda_acc: float,
    lambda_pri: float,
    lambda_sha: float,
    *,
    n_paper: int = PAPER_FEMNIST_CONV2_WEIGHTS,
    n_ours: int = DIGITS_CONV1_WEIGHTS,
    digits: int | None = None,
) -> tuple[float, float, float]:
    """The paper's eq. (16) weights on a model of ``n_paper`` prunable weights as ours on
    ``n_ours``: ``(1, lambda_pri / lambda_acc, lambda_sha n_paper / (lambda_acc n_ours))``
    (module docstring). ``digits``: round the last two to that many significant digits
    (None: exact). ``lambda_acc`` and ``lambda_sha`` > 0, ``lambda_pri`` >= 0.

    >>> rescale_lambdas(5, 15, 2e-5, digits=4)  # the paper's FEMNIST PruneFL setting
    (1.0, 3.0, 0.001954)
    """
    func = "rescale_lambdas"
    lambda_acc = check_real("lambda_acc", lambda_acc, func=func, low=0, low_inclusive=False)
    lambda_pri = check_real("lambda_pri", lambda_pri, func=func, low=0)
    lambda_sha = check_real("lambda_sha", lambda_sha, func=func, low=0, low_inclusive=False)
    n_paper = check_int("n_paper", n_paper, func=func, low=1)
    n_ours = check_int("n_ours", n_ours, func=func, low=1)
    if digits is not None:
        digits = check_int("digits", digits, func=func, low=1, high=17)
    pri = lambda_pri / lambda_acc
    sha = lambda_sha * n_paper / (lambda_acc * n_ours)
    if digits is not None:
        pri, sha = (_significant(v, digits) for v in (pri, sha))
    return 1.0, float(pri), float(sha)


def _significant(value: float, digits: int) -> float:
    """``value`` rounded to ``digits`` significant digits (0 stays 0)."""
    if value == 0:
        return 0.0
    return round(value, digits - 1 - math.floor(math.log10(abs(value))))
