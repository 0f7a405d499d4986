r"""PriPrune's leakage bounds (Theorem 1, Corollary 1, PruneFL eq. 23), published and corrected.

Source: Chu, Yang, Laoutaris, Markopoulou, *PriPrune* (``papers/priprune-aaai-arxiv2310.19958.txt``
Theorem 1, Corollary 1, appendix "Proof of Theorem", eq. 12-23; the journal version
``papers/priprune-journal-version.txt`` states the same bounds as Theorem 4.1, Corollary 4.2
and eq. 25). The published single-round bound on
:math:`I(x_i^t; w_i^t\odot m_i^t \mid \{w_i^k\odot m_i^k\}_{k<t})` is

.. math:: I_i^t \le 1 - \frac{p-1}{2\ln 2} + 2\log\frac1B + 2\Delta + d^*\log(2\pi e),
          \qquad \Delta = \log|\det(\Sigma^{-1/2})|.

Units. The term :math:`1 - (p-1)/(2\ln 2)` is the appendix's Taylor series of the binary
entropy around 1/2, :math:`H_b(p) = 1 - \frac1{2\ln2}\sum_{n\ge1}\frac{(1-2p)^{2n}}{n(2n-1)}`,
which is in **bits**; the maximum-entropy step cites Cover and Thomas's
:math:`h(N_n(\mu,K)) = \tfrac12\log(2\pi e)^n|K|`, stated there in bits. This module
therefore reads every "log" of the paper as :math:`\log_2`: the published bound is a
number of bits, and ``unit="nats"`` multiplies it by :math:`\ln 2`. (Reading "log" as the
natural log would add bits to nats.)

Inputs. :math:`\Delta` is passed in **nats** (``delta``) because the simulations hand
over the natural log of the pseudo-determinant of :math:`\Sigma`, the covariance of the
per-sample gradient restricted to its non-singular part (dimension :math:`d^*`):
``delta_from_log_pseudo_det(log_pdet) = -log_pdet / 2``, or ``spectrum_summary(eigvals)``
from the eigenvalues. Assumption 1 takes the per-sample gradient to have mean zero; the
covariance must be formed from **centred** gradients (subtract the mean over samples):
the uncentred second moment :math:`\Sigma + \mu\mu^\top` has a larger determinant and does
not match the theorem. ``d`` is the number of model parameters the mask covers.

Public functions (scalars or arrays, broadcast; a 0-d result is a float; ``unit`` is
``"bits"`` or ``"nats"`` everywhere):

* Published: ``mask_entropy_published``, ``part_a_published``, ``part_b_published``,
  ``part_c_published``, ``part_d_published``, ``single_round_bound``,
  ``multi_round_bound`` (T x single), ``multi_round_bound_per_round`` (sum over rounds),
  ``prunefl_single_round_bound`` (``form="union"`` or ``"pbar"``).
* Corrected: ``mask_entropy_corrected``, ``part_a_corrected`` ... ``part_d_corrected``,
  ``single_round_bound_corrected``, ``multi_round_bound_corrected``,
  ``multi_round_bound_corrected_per_round``, ``prunefl_single_round_bound_corrected``.
* Entropy helpers: ``binary_entropy``, ``binary_entropy_taylor``.
* Inputs: ``delta_from_log_pseudo_det``, ``spectrum_summary``.
* Symbolic (sympy, symbols in ``SYMBOLS``): ``single_round_bound_expr``,
  ``multi_round_bound_expr``, ``multi_round_bound_per_round_expr``,
  ``prunefl_single_round_bound_expr``, ``part_expr``.

Where the corrected bound differs from the published one (each a step of the appendix):

1. **Part B, scaling by 1/B** (eq. 17): :math:`x = \tfrac1B\sum_b g_b` is a
   :math:`d^*`-dimensional vector, so :math:`h(x) = h(\sum_b g_b) - d^*\log B`, not
   :math:`-\log B`.
2. **Part C, sign of the whitening** (eq. 18): ZCA whitening is
   :math:`z = \Sigma^{-1/2}\hat g`, i.e. :math:`\hat g = \Sigma^{1/2}z` (the paper writes
   :math:`\Sigma^{-1/2}z`), so :math:`h(\hat g) = h(z) + \tfrac12\log\det\Sigma = h(z) - \Delta`.
3. **Part D, covariance of the sum** (eq. 19): :math:`\sum_{b=1}^B z_b` of :math:`B` independent
   whitened vectors has covariance :math:`B I_{d^*}`, so the Gaussian maximum entropy is
   :math:`\tfrac{d^*}2\log(2\pi e B)`, not :math:`\tfrac{d^*}2\log(2\pi e)`.
   Together 1-3 give :math:`h(x) \le \tfrac12\log\big((2\pi e)^{d^*}\det(\Sigma/B)\big)`,
   the entropy of :math:`N(0,\Sigma/B)`, as they must.
4. **Part A, entropy of the mask** (eq. 15): :math:`m` has :math:`d` binary entries, so
   :math:`H(m) \le d\,H_b(p)` bits (the maximum over masks with expected pruned fraction
   :math:`p`), not :math:`H_b(p)`. The published :math:`1-(p-1)/(2\ln2) = 1 + (1-p)/(2\ln 2)`
   is not the Taylor series of step (b): the first term of that series gives
   :math:`H_b(p) \le 1 - (1-2p)^2/(2\ln2)`; the published term is still an upper bound on
   :math:`H_b(p)` (it is at least 1), but it grows as the pruning rate *decreases*
   only through a term that has nothing to do with the entropy.
5. **PruneFL, eq. 23 / 25**: the second inequality replaces :math:`|\bar P\cup A|` by
   :math:`|\bar P| \le |\bar P\cup A|`, which makes the right-hand side smaller: the
   inequality points the wrong way (it holds only when :math:`A\subseteq\bar P`).

Not corrected (structure kept, stated here): the first step
:math:`I \le H(w\odot m\mid Z) + H(x\mid Z)` drops :math:`-H(x, w\odot m\mid Z)`, which is
valid for discrete entropies but not for differential ones; for a noiseless release of
continuous coordinates the true mutual information is infinite (``bounds.gaussian``
shows it), so neither form is an upper bound without noise or quantisation. Step (d) of
eq. 10 identifies :math:`H(w^t\mid Z)` with :math:`H(x^t\mid Z)` although :math:`Z` holds
only the *masked* past weights.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import sympy as sp
from scipy import special

from bounds._vector import as_output, int_array, real_array
from bounds.validation import check_choice, check_finite_array, check_int, check_real

UNITS = ("bits", "nats")
LN2 = math.log(2)
LOG2_2PIE = math.log2(2 * math.pi * math.e)

SYMBOLS = SimpleNamespace(
    p=sp.Symbol("p", nonnegative=True),
    B=sp.Symbol("B", positive=True),
    d_star=sp.Symbol("d^*", positive=True, integer=True),
    Delta=sp.Symbol("Delta", real=True),
    T=sp.Symbol("T", positive=True, integer=True),
    d=sp.Symbol("d", positive=True, integer=True),
    kept=sp.Symbol("k", nonnegative=True, integer=True),
    t=sp.Symbol("t", positive=True, integer=True),
)
"""Sympy symbols: ``Delta`` is in nats, ``kept`` is :math:`|\\bar P\\cup A|` (PruneFL)."""


# ---------------------------------------------------------------------------------------
# Validation and units
# ---------------------------------------------------------------------------------------


def _unit(unit, func):
    return check_choice("unit", unit, func=func, choices=UNITS)


def _from_bits(value_bits, unit):
    return as_output(value_bits * (LN2 if unit == "nats" else 1.0))


def _p(p, func):
    return real_array("p", p, func=func, low=0, high=1)


def _b(b, func):
    return real_array("B", b, func=func, low=1)


def _d_star(d_star, func):
    return int_array("d_star", d_star, func=func, low=1)


def _delta(delta, func):
    return real_array("delta", delta, func=func)


def _d(d, d_star, func):
    d = int_array("d", d, func=func, low=1)
    if np.any(d < d_star):
        raise ValueError(
            f"The 'd' parameter of {func} must be at least d_star (the mask covers all "
            f"d parameters, d* <= d). Got d={np.min(d)} < d_star={np.max(d_star)} instead."
        )
    return d


def delta_from_log_pseudo_det(log_pdet):
    r""":math:`\Delta = \log|\det\Sigma^{-1/2}| = -\tfrac12\log\mathrm{pdet}(\Sigma)` in nats.

    ``log_pdet``: natural log of the pseudo-determinant (product of the non-zero
    eigenvalues) of the centred per-sample gradient covariance.
    """
    return as_output(-0.5 * real_array("log_pdet", log_pdet, func="delta_from_log_pseudo_det"))


def spectrum_summary(eigenvalues, *, rtol=None):
    r"""``(d_star, log_pdet)`` from the eigenvalues of a covariance matrix.

    Eigenvalues above ``rtol * max(eigenvalues)`` (default ``n * eps``, numpy's
    ``matrix_rank`` rule) form the non-singular part: :math:`d^*` is their number and
    ``log_pdet`` the sum of their natural logs. Raises ValueError for a spectrum that is
    not positive semi-definite (an eigenvalue below ``-rtol * max``) or has no positive
    eigenvalue.
    """
    func = "spectrum_summary"
    eig = check_finite_array("eigenvalues", eigenvalues, func=func, ndim=1)
    if eig.size == 0 or eig.max() <= 0:
        raise ValueError(
            f"The 'eigenvalues' parameter of {func} must contain a positive eigenvalue "
            f"(positive semi-definite covariance). Got max {eig.max() if eig.size else None!r}."
        )
    if rtol is None:
        rtol = eig.size * np.finfo(float).eps
    rtol = check_real("rtol", rtol, func=func, low=0, high=1, low_inclusive=False)
    tol = rtol * eig.max()
    if eig.min() < -tol:
        raise ValueError(
            f"The 'eigenvalues' parameter of {func} must describe a positive semi-definite "
            f"matrix. Got eigenvalue {eig.min()!r} < -{tol:g} instead."
        )
    kept = eig[eig > tol]
    return int(kept.size), float(np.sum(np.log(kept)))


# ---------------------------------------------------------------------------------------
# Numeric kernels (bits, validated inputs) and the public boundary
# ---------------------------------------------------------------------------------------


def _hb(p):
    return (special.entr(p) + special.entr(1 - p)) / LN2


def _mask_pub(p):
    return 1 - (p - 1) / (2 * LN2)


def _d_pub(d_star):
    return d_star / 2 * LOG2_2PIE


def _c_pub(d_star, delta):
    return delta / LN2 + _d_pub(d_star)


def _b_pub(b, d_star, delta):
    return -np.log2(b) + _c_pub(d_star, delta)


def _d_cor(b, d_star):
    return d_star / 2 * (LOG2_2PIE + np.log2(b))


def _c_cor(b, d_star, delta):
    return _d_cor(b, d_star) - delta / LN2


def _b_cor(b, d_star, delta):
    return _c_cor(b, d_star, delta) - d_star * np.log2(b)


def _args(func, unit, **kwargs):
    """Validate the named arguments of ``func`` at its public boundary."""
    out = SimpleNamespace(unit=_unit(unit, func))
    checks = {"p": _p, "B": _b, "d_star": _d_star, "delta": _delta}
    for name, value in kwargs.items():
        if name in checks:
            setattr(out, name, checks[name](value, func))
    if "d" in kwargs:
        out.d = _d(kwargs["d"], out.d_star if "d_star" in kwargs else 1, func)
    if "T" in kwargs:
        out.T = int_array("T", kwargs["T"], func=func, low=1)
    if "kept" in kwargs:
        out.kept = int_array("kept", kwargs["kept"], func=func, low=0)
        d = out.d if "d" in kwargs else 1
        if np.any(out.kept > d):
            raise ValueError(
                f"The 'kept' parameter of {func} must be at most d. "
                f"Got {np.max(out.kept)} > {np.min(d)} instead."
            )
    return out


def _sum_rounds(values, func):
    values = np.asarray(values)
    if values.ndim == 0:
        raise ValueError(
            f"{func} needs per-round sequences (one entry per round). Got scalars instead."
        )
    return as_output(np.sum(values, axis=-1))


# ---------------------------------------------------------------------------------------
# Entropy helpers
# ---------------------------------------------------------------------------------------


def binary_entropy(p, *, unit="bits"):
    r"""Binary entropy :math:`H_b(p) = -p\log p - (1-p)\log(1-p)`."""
    a = _args("binary_entropy", unit, p=p)
    return _from_bits(_hb(a.p), a.unit)


def binary_entropy_taylor(p, n_terms, *, unit="bits"):
    r"""Taylor series of :math:`H_b` around 1/2, truncated after ``n_terms`` terms (eq. 15 (b)).

    .. math:: H_b(p) = 1 - \frac{1}{2\ln2}\sum_{n\ge1}\frac{(1-2p)^{2n}}{n(2n-1)} \quad\text{bits}.

    Every term is non-negative, so each truncation is an upper bound on :math:`H_b(p)`.
    """
    func = "binary_entropy_taylor"
    a = _args(func, unit, p=p)
    n_terms = check_int("n_terms", n_terms, func=func, low=0)
    n = np.arange(1, n_terms + 1)
    x = (1 - 2 * a.p)[..., None] ** (2 * n) / (n * (2 * n - 1))
    return _from_bits(1 - np.sum(x, axis=-1) / (2 * LN2), a.unit)


# ---------------------------------------------------------------------------------------
# Published bound, step by step
# ---------------------------------------------------------------------------------------


def mask_entropy_published(p, *, unit="bits"):
    r"""The mask term of part A as published: :math:`1 - (p-1)/(2\ln 2)` (eq. 15, bits)."""
    a = _args("mask_entropy_published", unit, p=p)
    return _from_bits(_mask_pub(a.p), a.unit)


def part_d_published(d_star, *, unit="bits"):
    r"""Part D as published (eq. 19): :math:`\tfrac{d^*}2\log(2\pi e)`."""
    a = _args("part_d_published", unit, d_star=d_star)
    return _from_bits(_d_pub(a.d_star), a.unit)


def part_c_published(d_star, delta, *, unit="bits"):
    r"""Part C as published (eq. 18 + 19): :math:`\Delta + \tfrac{d^*}2\log(2\pi e)`."""
    a = _args("part_c_published", unit, d_star=d_star, delta=delta)
    return _from_bits(_c_pub(a.d_star, a.delta), a.unit)


def part_b_published(B, d_star, delta, *, unit="bits"):
    r"""Part B as published (eq. 17-19): :math:`\log\frac1B + \Delta + \frac{d^*}2\log(2\pi e)`."""
    a = _args("part_b_published", unit, B=B, d_star=d_star, delta=delta)
    return _from_bits(_b_pub(a.B, a.d_star, a.delta), a.unit)


def part_a_published(p, B, d_star, delta, *, unit="bits"):
    r"""Part A as published (eq. 15): part B plus :math:`1 - (p-1)/(2\ln2)`."""
    a = _args("part_a_published", unit, p=p, B=B, d_star=d_star, delta=delta)
    return _from_bits(_b_pub(a.B, a.d_star, a.delta) + _mask_pub(a.p), a.unit)


def single_round_bound(p, B, d_star, delta, *, unit="bits"):
    r"""PriPrune Theorem 1 (eq. 4; journal Theorem 4.1, eq. 6) exactly as published.

    .. math:: I_i^t \le 1 - \frac{p-1}{2\ln 2} + 2\log_2\frac1B + 2\Delta + d^*\log_2(2\pi e)

    Parameters
    ----------
    p : pruning rate in [0, 1].
    B : batch size >= 1.
    d_star : dimension of the non-singular part of the gradient covariance (int >= 1).
    delta : :math:`\Delta = \log|\det\Sigma^{-1/2}|` in nats.
    unit : "bits" (the paper's unit) or "nats".
    """
    a = _args("single_round_bound", unit, p=p, B=B, d_star=d_star, delta=delta)
    return _from_bits(2 * _b_pub(a.B, a.d_star, a.delta) + _mask_pub(a.p), a.unit)


def multi_round_bound(p, B, d_star, delta, T, *, unit="bits"):
    """PriPrune Corollary 1 (eq. 5; journal Corollary 4.2): ``T`` times the single-round bound."""
    a = _args("multi_round_bound", unit, p=p, B=B, d_star=d_star, delta=delta, T=T)
    single = 2 * _b_pub(a.B, a.d_star, a.delta) + _mask_pub(a.p)
    return _from_bits(a.T * single, a.unit)


def multi_round_bound_per_round(p, B, d_star, delta, *, unit="bits"):
    r"""Corollary 1 with per-round parameters: the sum over rounds of the single-round bound.

    Round :math:`t` uses :math:`(p_t, B_t, d^*_t, \Delta_t)`. Arguments broadcast; the
    last axis indexes the rounds and is summed.
    """
    a = _args("multi_round_bound_per_round", unit, p=p, B=B, d_star=d_star, delta=delta)
    single = 2 * _b_pub(a.B, a.d_star, a.delta) + _mask_pub(a.p)
    return _sum_rounds(_from_bits(single, a.unit), "multi_round_bound_per_round")


def prunefl_single_round_bound(kept, d, B, d_star, delta, *, form="union", unit="bits"):
    r"""PruneFL single-round bound (AAAI eq. 23, journal eq. 25) as published.

    .. math:: 1 + \frac{|\bar P\cup A|}{2d\ln2} + 2\log\frac1B + 2\Delta + d^*\log(2\pi e)
              \;\le\; 1 + \frac{|\bar P|}{2d\ln2} + \ldots

    ``kept`` is :math:`|\bar P\cup A|` (``form="union"``) or :math:`|\bar P|`
    (``form="pbar"``, the right-hand side). The term replaces :math:`1-p` by
    :math:`|\cdot|/d`. Deviation: the second inequality points the wrong way (module
    docstring, item 5).
    """
    func = "prunefl_single_round_bound"
    check_choice("form", form, func=func, choices=("union", "pbar"))
    a = _args(func, unit, B=B, d_star=d_star, delta=delta, d=d, kept=kept)
    value = 1 + a.kept / (2 * a.d * LN2) + 2 * _b_pub(a.B, a.d_star, a.delta)
    return _from_bits(value, a.unit)


# ---------------------------------------------------------------------------------------
# Corrected bound, step by step
# ---------------------------------------------------------------------------------------


def mask_entropy_corrected(p, d, *, unit="bits"):
    r"""Entropy bound of a :math:`d`-entry mask with pruned fraction :math:`p`: :math:`d\,H_b(p)`.

    The maximum entropy of a binary vector with :math:`\mathbb E\,|\{j: m_j = 0\}| = pd` is
    attained by i.i.d. Bernoulli entries; a mask with exactly :math:`pd` zeros has
    :math:`\log_2\binom{d}{pd} \le d H_b(p)`.
    """
    a = _args("mask_entropy_corrected", unit, p=p, d=d)
    return _from_bits(a.d * _hb(a.p), a.unit)


def part_d_corrected(B, d_star, *, unit="bits"):
    r"""Part D corrected: :math:`\frac{d^*}2\log(2\pi eB)`.

    :math:`\sum_{b\le B} z_b` of independent whitened vectors has covariance :math:`BI`.
    """
    a = _args("part_d_corrected", unit, B=B, d_star=d_star)
    return _from_bits(_d_cor(a.B, a.d_star), a.unit)


def part_c_corrected(B, d_star, delta, *, unit="bits"):
    r"""Part C corrected: :math:`\hat g = \Sigma^{1/2}z` adds :math:`\log\det\Sigma/2 = -\Delta`."""
    a = _args("part_c_corrected", unit, B=B, d_star=d_star, delta=delta)
    return _from_bits(_c_cor(a.B, a.d_star, a.delta), a.unit)


def part_b_corrected(B, d_star, delta, *, unit="bits"):
    r"""Part B corrected: scaling a :math:`d^*`-vector by :math:`1/B` adds :math:`-d^*\log B`.

    Equals :math:`\tfrac12\log\big((2\pi e)^{d^*}\det(\Sigma/B)\big)`, the entropy of
    :math:`N(0, \Sigma/B)` (``bounds.gaussian.gaussian_update_entropy``).
    """
    a = _args("part_b_corrected", unit, B=B, d_star=d_star, delta=delta)
    return _from_bits(_b_cor(a.B, a.d_star, a.delta), a.unit)


def part_a_corrected(p, d, B, d_star, delta, *, unit="bits"):
    r"""Part A corrected: part B plus :math:`d\,H_b(p)`."""
    a = _args("part_a_corrected", unit, p=p, B=B, d_star=d_star, delta=delta, d=d)
    return _from_bits(_b_cor(a.B, a.d_star, a.delta) + a.d * _hb(a.p), a.unit)


def single_round_bound_corrected(p, d, B, d_star, delta, *, unit="bits"):
    r"""Theorem 1 with consistent units and dimensions (module docstring, items 1-4).

    .. math:: I_i^t \le d\,H_b(p) + d^*\log_2\frac{2\pi e}{B} - 2\Delta \quad\text{bits}
              = d\,H_b(p) + 2\,h\big(N(0,\Sigma/B)\big).

    Parameters as in ``single_round_bound``, plus ``d`` (parameters covered by the mask,
    ``d >= d_star``). The paper's first step is kept, so this is not an upper bound on the
    mutual information of a noiseless release (see ``bounds.gaussian``).
    """
    a = _args("single_round_bound_corrected", unit, p=p, B=B, d_star=d_star, delta=delta, d=d)
    return _from_bits(2 * _b_cor(a.B, a.d_star, a.delta) + a.d * _hb(a.p), a.unit)


def multi_round_bound_corrected(p, d, B, d_star, delta, T, *, unit="bits"):
    """Corollary 1 corrected, constant parameters: ``T`` times ``single_round_bound_corrected``."""
    func = "multi_round_bound_corrected"
    a = _args(func, unit, p=p, B=B, d_star=d_star, delta=delta, d=d, T=T)
    single = 2 * _b_cor(a.B, a.d_star, a.delta) + a.d * _hb(a.p)
    return _from_bits(a.T * single, a.unit)


def multi_round_bound_corrected_per_round(p, d, B, d_star, delta, *, unit="bits"):
    """Corrected Corollary 1 with per-round parameters (last axis = rounds, summed)."""
    func = "multi_round_bound_corrected_per_round"
    a = _args(func, unit, p=p, B=B, d_star=d_star, delta=delta, d=d)
    single = 2 * _b_cor(a.B, a.d_star, a.delta) + a.d * _hb(a.p)
    return _sum_rounds(_from_bits(single, a.unit), func)


def prunefl_single_round_bound_corrected(kept, d, B, d_star, delta, *, unit="bits"):
    r"""PruneFL corrected: :math:`d\,H_b(|\bar P\cup A|/d)` plus twice the corrected part B."""
    func = "prunefl_single_round_bound_corrected"
    a = _args(func, unit, B=B, d_star=d_star, delta=delta, d=d, kept=kept)
    value = a.d * _hb(a.kept / a.d) + 2 * _b_cor(a.B, a.d_star, a.delta)
    return _from_bits(value, a.unit)


# ---------------------------------------------------------------------------------------
# Symbolic forms
# ---------------------------------------------------------------------------------------


def _sym_unit(expr_bits, unit, func):
    unit = _unit(unit, func)
    return expr_bits * sp.log(2) if unit == "nats" else expr_bits


def _sym_log2(x):
    return sp.log(x, 2)


def _sym_binary_entropy(p):
    return -(p * _sym_log2(p) + (1 - p) * _sym_log2(1 - p))


def _sym_parts(p, B, d_star, Delta, d, corrected):
    """Parts A-D (bits) as sympy expressions, published or corrected."""
    delta_bits = Delta / sp.log(2)
    log2_2pie = _sym_log2(2 * sp.pi * sp.E)
    if corrected:
        part_d = d_star / 2 * (log2_2pie + _sym_log2(B))
        part_c = part_d - delta_bits
        part_b = part_c - d_star * _sym_log2(B)
        part_a = part_b + d * _sym_binary_entropy(p)
    else:
        part_d = d_star / 2 * log2_2pie
        part_c = delta_bits + part_d
        part_b = _sym_log2(1 / B) + part_c
        part_a = part_b + 1 - (p - 1) / (2 * sp.log(2))
    return {"A": part_a, "B": part_b, "C": part_c, "D": part_d}


def part_expr(part, *, unit="bits", corrected=False):
    """Sympy expression of proof part ``"A"``, ``"B"``, ``"C"`` or ``"D"`` in ``SYMBOLS``."""
    check_choice("part", part, func="part_expr", choices=("A", "B", "C", "D"))
    s = SYMBOLS
    parts = _sym_parts(s.p, s.B, s.d_star, s.Delta, s.d, corrected)
    return _sym_unit(parts[part], unit, "part_expr")


def single_round_bound_expr(*, unit="bits", corrected=False):
    r"""Theorem 1 (published or corrected) as a sympy expression in p, B, d*, Delta (and d).

    :math:`\Delta` is in nats, the result in ``unit``. Differentiate, substitute or
    ``sp.lambdify`` it; ``sp.latex`` gives the LaTeX.
    """
    s = SYMBOLS
    parts = _sym_parts(s.p, s.B, s.d_star, s.Delta, s.d, corrected)
    return _sym_unit(parts["A"] + parts["B"], unit, "single_round_bound_expr")


def multi_round_bound_expr(*, unit="bits", corrected=False):
    """Corollary 1 with constant parameters: ``T`` times the single-round expression."""
    return SYMBOLS.T * single_round_bound_expr(unit=unit, corrected=corrected)


def multi_round_bound_per_round_expr(*, unit="bits", corrected=False):
    r"""Sum over rounds :math:`t = 1..T` of the single-round expression at indexed parameters.

    Indexed bases :math:`p_t, B_t, d^*_t, \Delta_t` (and :math:`d_t` when corrected).
    """
    t = SYMBOLS.t
    p, B, d_star, Delta, d = (sp.IndexedBase(n) for n in ("p", "B", "d^*", "Delta", "d"))
    parts = _sym_parts(p[t], B[t], d_star[t], Delta[t], d[t], corrected)
    body = _sym_unit(parts["A"] + parts["B"], unit, "multi_round_bound_per_round_expr")
    return sp.Sum(body, (t, 1, SYMBOLS.T))


def prunefl_single_round_bound_expr(*, unit="bits", corrected=False):
    r"""PruneFL bound (eq. 23) in :math:`k = |\bar P\cup A|, d, B, d^*, \Delta`."""
    s = SYMBOLS
    parts = _sym_parts(s.kept / s.d, s.B, s.d_star, s.Delta, s.d, corrected)
    if corrected:
        expr = s.d * _sym_binary_entropy(s.kept / s.d) + 2 * parts["B"]
    else:
        expr = 1 + s.kept / (2 * s.d * sp.log(2)) + 2 * parts["B"]
    return _sym_unit(expr, unit, "prunefl_single_round_bound_expr")
