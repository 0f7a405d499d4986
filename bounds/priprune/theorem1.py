"""Theorem 1, Corollary 1 and PruneFL eq. 23 as numbers, published and corrected, step by step."""

from __future__ import annotations

import math  # noqa: F401 (the doctests use it)

from pruneleak.bounds.priprune._numeric import _bound, _sum_rounds
from pruneleak.bounds.validation import check_choice

# ---------------------------------------------------------------------------------------
# Published bound, step by step
# ---------------------------------------------------------------------------------------


def mask_entropy_published(p, *, unit="bits"):
    r"""The mask term of part A as published: :math:`1 - (p-1)/(2\ln 2)` bits (eq. 15).

    Examples
    --------
    >>> mask_entropy_published(1.0)
    1.0
    >>> mask_entropy_published(0.0) == 1 + 1 / (2 * math.log(2))
    True
    """
    return _bound("mask", False, "mask_entropy_published", unit, p=p)


def part_d_published(d_star, *, unit="bits"):
    r"""Part D as published (eq. 19): :math:`\tfrac{d^*}2\log_2(2\pi e)` bits.

    Examples
    --------
    >>> round(part_d_published(2) - math.log2(2 * math.pi * math.e), 12)
    0.0
    """
    return _bound("D", False, "part_d_published", unit, d_star=d_star)


def part_c_published(d_star, delta, *, unit="bits"):
    r"""Part C as published (eq. 18 + 19): :math:`\Delta/\ln 2 + \tfrac{d^*}2\log_2(2\pi e)` bits.

    ``delta`` (:math:`\Delta`) is in nats.

    Examples
    --------
    >>> round(part_c_published(1, math.log(2)) - part_d_published(1), 12)  # Delta = 1 bit
    1.0
    """
    return _bound("C", False, "part_c_published", unit, d_star=d_star, delta=delta)


def part_b_published(B, d_star, delta, *, unit="bits"):
    r"""Part B as published (eq. 17-19): :math:`\log_2\frac1B + \text{part C}` bits.

    Examples
    --------
    >>> round(part_b_published(2, 1, 0.0) - part_c_published(1, 0.0), 12)  # log2(1/2)
    -1.0
    """
    return _bound("B", False, "part_b_published", unit, B=B, d_star=d_star, delta=delta)


def part_a_published(p, B, d_star, delta, *, unit="bits"):
    r"""Part A as published (eq. 15): part B plus :math:`1 - (p-1)/(2\ln2)` bits.

    Examples
    --------
    >>> round(part_a_published(1.0, 2, 1, 0.0) - part_b_published(2, 1, 0.0), 12)
    1.0
    """
    return _bound("A", False, "part_a_published", unit, p=p, B=B, d_star=d_star, delta=delta)


def single_round_bound(p, B, d_star, delta, *, unit="bits"):
    r"""PriPrune Theorem 1 (eq. 4; journal Theorem 4.1, eq. 6) exactly as published.

    .. math:: I_i^t \le 1 - \frac{p-1}{2\ln 2} + 2\log_2\frac1B + 2\frac{\Delta}{\ln 2}
              + d^*\log_2(2\pi e) \quad\text{bits per round}

    Parameters
    ----------
    p : pruning rate in [0, 1].
    B : batch size >= 1.
    d_star : dimension of the non-singular part of the gradient covariance (int >= 1).
    delta : :math:`\Delta = \log|\det\Sigma^{-1/2}|` in nats.
    unit : "bits" (default, the paper's unit) or "nats".

    Examples
    --------
    >>> single_round_bound(1.0, 1, 1, 0.0) == 1 + math.log2(2 * math.pi * math.e)
    True
    """
    return _bound("single", False, "single_round_bound", unit, p=p, B=B, d_star=d_star, delta=delta)


def multi_round_bound(p, B, d_star, delta, T, *, unit="bits"):
    """PriPrune Corollary 1 (eq. 5; journal Corollary 4.2): ``T`` times the single-round bound.

    Total over ``T`` rounds (int >= 1), in ``unit`` (default bits); other arguments as in
    ``single_round_bound``.

    Examples
    --------
    >>> multi_round_bound(0.3, 8, 5, -1.0, 3) == 3 * single_round_bound(0.3, 8, 5, -1.0)
    True
    """
    return _bound(
        "multi", False, "multi_round_bound", unit, p=p, B=B, d_star=d_star, delta=delta, T=T
    )


def multi_round_bound_per_round(p, B, d_star, delta, *, unit="bits"):
    r"""Corollary 1 with per-round parameters: the sum over rounds of the single-round bound.

    Round :math:`t` uses :math:`(p_t, B_t, d^*_t, \Delta_t)`. Arguments broadcast; the
    last axis indexes the rounds and is summed (total, in ``unit``).

    Examples
    --------
    >>> total = multi_round_bound_per_round([0.2, 0.6], [4, 16], 5, -1.0)
    >>> total == single_round_bound(0.2, 4, 5, -1.0) + single_round_bound(0.6, 16, 5, -1.0)
    True
    """
    return _sum_rounds(
        "single", False, "multi_round_bound_per_round", unit, p=p, B=B, d_star=d_star, delta=delta
    )


def prunefl_single_round_bound(kept, d, B, d_star, delta, *, form="union", unit="bits"):
    r"""PruneFL single-round bound (AAAI eq. 23, journal eq. 25) as published, in ``unit``.

    .. math:: 1 + \frac{|\bar P\cup A|}{2d\ln2} + 2\log_2\frac1B + 2\frac{\Delta}{\ln 2}
              + d^*\log_2(2\pi e) \;\le\; 1 + \frac{|\bar P|}{2d\ln2} + \ldots

    ``kept`` is :math:`|\bar P\cup A|` (``form="union"``) or :math:`|\bar P|`
    (``form="pbar"``, the right-hand side); ``d`` the number of parameters. The term
    replaces :math:`1-p` by :math:`|\cdot|/d`. Deviation: the second inequality points
    the wrong way (package docstring, item 5).

    Examples
    --------
    >>> prunefl_single_round_bound(300, 1000, 8, 5, -1.0) == single_round_bound(0.7, 8, 5, -1.0)
    True
    """
    func = "prunefl_single_round_bound"
    check_choice("form", form, func=func, choices=("union", "pbar"))
    return _bound("prunefl", False, func, unit, B=B, d_star=d_star, delta=delta, d=d, kept=kept)


# ---------------------------------------------------------------------------------------
# Corrected bound, step by step
# ---------------------------------------------------------------------------------------


def mask_entropy_corrected(p, d, *, unit="bits"):
    r"""Entropy bound of a :math:`d`-entry mask with pruned fraction :math:`p`: :math:`d\,H_b(p)`.

    The maximum entropy of a binary vector with :math:`\mathbb E\,|\{j: m_j = 0\}| = pd` is
    attained by i.i.d. Bernoulli entries; a mask with exactly :math:`pd` zeros has
    :math:`\log_2\binom{d}{pd} \le d H_b(p)` bits.

    Examples
    --------
    >>> mask_entropy_corrected(0.5, 8)  # 8 fair coins
    8.0
    """
    return _bound("mask", True, "mask_entropy_corrected", unit, p=p, d=d)


def part_d_corrected(B, d_star, *, unit="bits"):
    r"""Part D corrected: :math:`\frac{d^*}2\log_2(2\pi eB)` bits.

    :math:`\sum_{b\le B} z_b` of independent whitened vectors has covariance :math:`BI`.

    Examples
    --------
    >>> round(part_d_corrected(4, 1) - part_d_published(1), 12)  # (1/2) log2 4
    1.0
    """
    return _bound("D", True, "part_d_corrected", unit, B=B, d_star=d_star)


def part_c_corrected(B, d_star, delta, *, unit="bits"):
    r"""Part C corrected: :math:`\hat g = \Sigma^{1/2}z` adds :math:`\log\det\Sigma/2 = -\Delta`.

    ``delta`` in nats; result :math:`\text{part D} - \Delta/\ln 2` bits.

    Examples
    --------
    >>> round(part_c_corrected(4, 1, math.log(2)) - part_d_corrected(4, 1), 12)
    -1.0
    """
    return _bound("C", True, "part_c_corrected", unit, B=B, d_star=d_star, delta=delta)


def part_b_corrected(B, d_star, delta, *, unit="bits"):
    r"""Part B corrected: scaling a :math:`d^*`-vector by :math:`1/B` adds :math:`-d^*\log_2 B`.

    Equals :math:`\tfrac12\log_2\big((2\pi e)^{d^*}\det(\Sigma/B)\big)`, the entropy of
    :math:`N(0, \Sigma/B)` (``bounds.gaussian.gaussian_update_entropy``).

    Examples
    --------
    >>> round(part_b_corrected(2, 3, 0.0) - part_c_corrected(2, 3, 0.0), 12)  # -3 log2 2
    -3.0
    """
    return _bound("B", True, "part_b_corrected", unit, B=B, d_star=d_star, delta=delta)


def part_a_corrected(p, d, B, d_star, delta, *, unit="bits"):
    r"""Part A corrected: part B plus :math:`d\,H_b(p)` bits.

    Examples
    --------
    >>> round(part_a_corrected(0.5, 3, 2, 1, 0.0) - part_b_corrected(2, 1, 0.0), 12)
    3.0
    """
    func = "part_a_corrected"
    return _bound("A", True, func, unit, p=p, B=B, d_star=d_star, delta=delta, d=d)


def single_round_bound_corrected(p, d, B, d_star, delta, *, unit="bits"):
    r"""Theorem 1 with consistent units and dimensions (package docstring, items 1-4).

    .. math:: I_i^t \le d\,H_b(p) + d^*\log_2\frac{2\pi e}{B} - 2\frac{\Delta}{\ln 2}
              \quad\text{bits per round} \;= d\,H_b(p) + 2\,h\big(N(0,\Sigma/B)\big).

    Parameters as in ``single_round_bound``, plus ``d`` (parameters covered by the mask,
    ``d >= d_star``). The paper's first step is kept, so this is not an upper bound on the
    mutual information of a noiseless release (see ``bounds.gaussian``).

    Examples
    --------
    >>> single_round_bound_corrected(0.5, 2, 1, 1, 0.0) == 2 + math.log2(2 * math.pi * math.e)
    True
    """
    func = "single_round_bound_corrected"
    return _bound("single", True, func, unit, p=p, B=B, d_star=d_star, delta=delta, d=d)


def multi_round_bound_corrected(p, d, B, d_star, delta, T, *, unit="bits"):
    """Corollary 1 corrected, constant parameters: ``T`` times ``single_round_bound_corrected``.

    Total over ``T`` rounds, in ``unit`` (default bits).

    Examples
    --------
    >>> value = multi_round_bound_corrected(0.3, 9, 8, 5, -1.0, 4)
    >>> value == 4 * single_round_bound_corrected(0.3, 9, 8, 5, -1.0)
    True
    """
    func = "multi_round_bound_corrected"
    return _bound("multi", True, func, unit, p=p, B=B, d_star=d_star, delta=delta, d=d, T=T)


def multi_round_bound_corrected_per_round(p, d, B, d_star, delta, *, unit="bits"):
    """Corrected Corollary 1 with per-round parameters (last axis = rounds, summed; total).

    Examples
    --------
    >>> total = multi_round_bound_corrected_per_round([0.5, 0.5], 2, 1, 1, 0.0)
    >>> total == 2 * single_round_bound_corrected(0.5, 2, 1, 1, 0.0)
    True
    """
    func = "multi_round_bound_corrected_per_round"
    return _sum_rounds("single", True, func, unit, p=p, B=B, d_star=d_star, delta=delta, d=d)


def prunefl_single_round_bound_corrected(kept, d, B, d_star, delta, *, unit="bits"):
    r"""PruneFL corrected: :math:`d\,H_b(|\bar P\cup A|/d)` plus twice the corrected part B.

    In ``unit`` (default bits) per round; ``delta`` in nats.

    Examples
    --------
    >>> prunefl_single_round_bound_corrected(1, 2, 1, 1, 0.0) == 2 + math.log2(
    ...     2 * math.pi * math.e)
    True
    """
    func = "prunefl_single_round_bound_corrected"
    return _bound("prunefl", True, func, unit, B=B, d_star=d_star, delta=delta, d=d, kept=kept)
