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

import functools
import math
from types import SimpleNamespace

import numpy as np
import sympy as sp
from scipy import special

from bounds._vector import as_output, int_array, real_array
from bounds.validation import check_choice, check_finite_array, check_int, check_real

UNITS = ("bits", "nats")
LN2 = math.log(2)

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
# The formulas: one sympy expression each, in bits
# ---------------------------------------------------------------------------------------


class entr(sp.Function):  # lower case: named after scipy.special.entr, its numeric form
    r""":math:`-x\ln x` in nats, continuous at 0 (:math:`\mathrm{entr}(0) = 0`).

    A sympy function so that the binary entropy is one expression that differentiates and
    simplifies symbolically and lambdifies to ``scipy.special.entr`` (exact at p = 0 and 1,
    where :math:`x\ln x` would give NaN in floating point). ``rewrite(sp.log)`` gives
    :math:`-x\log x`.

    Examples
    --------
    >>> entr(0), entr(1), sp.diff(entr(SYMBOLS.p), SYMBOLS.p)
    (0, 0, -log(p) - 1)
    """

    @classmethod
    def eval(cls, x):
        if x.is_zero:
            return sp.S.Zero
        if x.is_Number:
            return -x * sp.log(x)
        return None

    def fdiff(self, argindex=1):
        return -sp.log(self.args[0]) - 1

    def _eval_rewrite_as_log(self, x, **kwargs):
        return -x * sp.log(x)


def _sym_binary_entropy(p):
    """:math:`H_b(p)` in bits."""
    return (entr(p) + entr(1 - p)) / sp.log(2)


def _sym_terms(p, B, d_star, Delta, d, corrected):
    """The mask term, parts A-D and the single-round bound, in bits: the one source.

    Every numeric function of this module is ``sp.lambdify`` of one of these (``_kernel``).
    """
    delta_bits = Delta / sp.log(2)
    log2_2pie = sp.log(2 * sp.pi * sp.E, 2)
    if corrected:
        mask = d * _sym_binary_entropy(p)
        part_d = d_star / 2 * (log2_2pie + sp.log(B, 2))
        part_c = part_d - delta_bits
        part_b = part_c - d_star * sp.log(B, 2)
    else:
        mask = 1 - (p - 1) / (2 * sp.log(2))
        part_d = d_star / 2 * log2_2pie
        part_c = delta_bits + part_d
        part_b = sp.log(1 / B, 2) + part_c
    part_a = part_b + mask
    return {
        "mask": mask,
        "A": part_a,
        "B": part_b,
        "C": part_c,
        "D": part_d,
        "single": part_a + part_b,
    }


def _bits_expr(name, corrected):
    """Sympy expression ``name`` (a key of ``_sym_terms``, "multi", "prunefl" or "hb") in bits.

    PruneFL (eq. 23) is Theorem 1 with the kept fraction :math:`|\\bar P\\cup A|/d` in place
    of :math:`1-p` (published: :math:`1 + k/(2d\\ln2)`; corrected: :math:`dH_b(k/d)`, as
    :math:`H_b` is symmetric); Corollary 1 is ``T`` times the single-round bound.
    """
    s = SYMBOLS
    if name == "hb":
        return _sym_binary_entropy(s.p)
    terms = _sym_terms(s.p, s.B, s.d_star, s.Delta, s.d, corrected)
    if name == "multi":
        return s.T * terms["single"]
    if name == "prunefl":
        return terms["single"].subs(s.p, 1 - s.kept / s.d)
    return terms[name]


def _sym_unit(expr_bits, unit, func):
    unit = _unit(unit, func)
    return expr_bits * sp.log(2) if unit == "nats" else expr_bits


# Validated argument name (see ``_args``) -> the symbol it binds.
_ARGUMENTS = {
    "p": SYMBOLS.p,
    "B": SYMBOLS.B,
    "d_star": SYMBOLS.d_star,
    "delta": SYMBOLS.Delta,
    "d": SYMBOLS.d,
    "kept": SYMBOLS.kept,
    "T": SYMBOLS.T,
}
_NUMERIC_MODULES = [{"entr": special.entr}, "numpy"]


@functools.cache
def _kernel(name, corrected, unit):
    """``sp.lambdify`` of ``_bits_expr(name, corrected)`` in ``unit``, built once per key."""
    expr = _sym_unit(_bits_expr(name, corrected), unit, "_kernel")
    names = tuple(n for n, sym in _ARGUMENTS.items() if sym in expr.free_symbols)
    return names, sp.lambdify([_ARGUMENTS[n] for n in names], expr, _NUMERIC_MODULES)


def _evaluate(name, corrected, a):
    """Evaluate a formula on the validated arguments ``a`` (from ``_args``), broadcast."""
    names, func = _kernel(name, corrected, a.unit)
    inputs = [value for key, value in vars(a).items() if key != "unit"]
    shape = np.broadcast_shapes(*(np.shape(v) for v in inputs))
    return np.broadcast_to(func(*(getattr(a, n) for n in names)), shape)


# ---------------------------------------------------------------------------------------
# Validation and units
# ---------------------------------------------------------------------------------------


def _unit(unit, func):
    return check_choice("unit", unit, func=func, choices=UNITS)


def _d(d, d_star, func):
    d = int_array("d", d, func=func, low=1)
    if np.any(d < d_star):
        raise ValueError(
            f"The 'd' parameter of {func} must be at least d_star (the mask covers all "
            f"d parameters, d* <= d). Got d={np.min(d)} < d_star={np.max(d_star)} instead."
        )
    return d


def _args(func, unit, **kwargs):
    """Validate the named arguments of ``func`` at its public boundary."""
    out = SimpleNamespace(unit=_unit(unit, func))
    checks = {
        "p": lambda v: real_array("p", v, func=func, low=0, high=1),
        "B": lambda v: real_array("B", v, func=func, low=1),
        "d_star": lambda v: int_array("d_star", v, func=func, low=1),
        "delta": lambda v: real_array("delta", v, func=func),
        "T": lambda v: int_array("T", v, func=func, low=1),
    }
    for name, value in kwargs.items():
        if name in checks:
            setattr(out, name, checks[name](value))
    if "d" in kwargs:
        out.d = _d(kwargs["d"], out.d_star if "d_star" in kwargs else 1, func)
    if "kept" in kwargs:
        out.kept = int_array("kept", kwargs["kept"], func=func, low=0)
        d = out.d if "d" in kwargs else 1
        if np.any(out.kept > d):
            raise ValueError(
                f"The 'kept' parameter of {func} must be at most d. "
                f"Got {np.max(out.kept)} > {np.min(d)} instead."
            )
    return out


def _bound(name, corrected, func, unit, **kwargs):
    """Validate ``kwargs`` for ``func`` and evaluate formula ``name``: a float or an array."""
    return as_output(_evaluate(name, corrected, _args(func, unit, **kwargs)))


def _sum_rounds(name, corrected, func, unit, **kwargs):
    """Sum formula ``name`` over the last axis (one entry per round)."""
    values = _evaluate(name, corrected, _args(func, unit, **kwargs))
    if values.ndim == 0:
        raise ValueError(
            f"{func} needs per-round sequences (one entry per round). Got scalars instead."
        )
    return as_output(np.sum(values, axis=-1))


# ---------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------


def delta_from_log_pseudo_det(log_pdet):
    r""":math:`\Delta = \log|\det\Sigma^{-1/2}| = -\tfrac12\log\mathrm{pdet}(\Sigma)` in nats.

    ``log_pdet``: natural log of the pseudo-determinant (product of the non-zero
    eigenvalues) of the centred per-sample gradient covariance (scalar or array).

    Examples
    --------
    >>> delta_from_log_pseudo_det(2.0)
    -1.0
    """
    return as_output(-0.5 * real_array("log_pdet", log_pdet, func="delta_from_log_pseudo_det"))


def spectrum_summary(eigenvalues, *, rtol=None):
    r"""``(d_star, log_pdet)`` from the eigenvalues of a covariance matrix.

    Eigenvalues above ``rtol * max(eigenvalues)`` (default ``n * eps``, numpy's
    ``matrix_rank`` rule) form the non-singular part: :math:`d^*` is their number and
    ``log_pdet`` the sum of their natural logs (nats). Raises ValueError for a spectrum that
    is not positive semi-definite (an eigenvalue below ``-rtol * max``) or has no positive
    eigenvalue.

    Examples
    --------
    >>> d_star, log_pdet = spectrum_summary([4.0, 1.0, 0.0])
    >>> d_star, log_pdet == math.log(4.0)
    (2, True)
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
# Entropy helpers
# ---------------------------------------------------------------------------------------


def binary_entropy(p, *, unit="bits"):
    r"""Binary entropy :math:`H_b(p) = -p\log p - (1-p)\log(1-p)`, in ``unit``.

    Examples
    --------
    >>> binary_entropy(0.5), binary_entropy(0.0)
    (1.0, 0.0)
    >>> binary_entropy(0.5, unit="nats") == math.log(2)
    True
    """
    return _bound("hb", False, "binary_entropy", unit, p=p)


def binary_entropy_taylor(p, n_terms, *, unit="bits"):
    r"""Taylor series of :math:`H_b` around 1/2, truncated after ``n_terms`` terms (eq. 15 (b)).

    .. math:: H_b(p) = 1 - \frac{1}{2\ln2}\sum_{n\ge1}\frac{(1-2p)^{2n}}{n(2n-1)} \quad\text{bits}.

    Every term is non-negative, so each truncation is an upper bound on :math:`H_b(p)`.
    A series, not a closed form: its only copy is this one (tests check it against
    ``binary_entropy``).

    Examples
    --------
    >>> binary_entropy_taylor(0.5, 3)  # every term vanishes at 1/2
    1.0
    >>> binary_entropy_taylor(0.25, 1) == 1 - 0.25 / (2 * math.log(2))
    True
    """
    func = "binary_entropy_taylor"
    a = _args(func, unit, p=p)
    n_terms = check_int("n_terms", n_terms, func=func, low=0)
    n = np.arange(1, n_terms + 1)
    x = (1 - 2 * a.p)[..., None] ** (2 * n) / (n * (2 * n - 1))
    bits = 1 - np.sum(x, axis=-1) / (2 * LN2)
    return as_output(bits * (LN2 if a.unit == "nats" else 1.0))


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
    the wrong way (module docstring, item 5).

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
    r"""Theorem 1 with consistent units and dimensions (module docstring, items 1-4).

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


# ---------------------------------------------------------------------------------------
# Symbolic forms
# ---------------------------------------------------------------------------------------


def part_expr(part, *, unit="bits", corrected=False):
    """Sympy expression of proof part ``"A"``, ``"B"``, ``"C"`` or ``"D"`` in ``SYMBOLS``.

    :math:`\\Delta` in nats, the result in ``unit``; the numeric ``part_*`` functions are
    this expression lambdified.

    Examples
    --------
    >>> part_expr("A") - part_expr("B")
    -(p - 1)/(2*log(2)) + 1
    """
    check_choice("part", part, func="part_expr", choices=("A", "B", "C", "D"))
    return _sym_unit(_bits_expr(part, corrected), unit, "part_expr")


def single_round_bound_expr(*, unit="bits", corrected=False):
    r"""Theorem 1 (published or corrected) as a sympy expression in p, B, d*, Delta (and d).

    :math:`\Delta` is in nats, the result in ``unit`` (per round). Differentiate,
    substitute or ``sp.lambdify`` it (with ``{"entr": scipy.special.entr}`` for the
    corrected form); ``sp.latex`` gives the LaTeX.

    Examples
    --------
    >>> sp.diff(single_round_bound_expr(), SYMBOLS.p)
    -1/(2*log(2))
    """
    return _sym_unit(_bits_expr("single", corrected), unit, "single_round_bound_expr")


def multi_round_bound_expr(*, unit="bits", corrected=False):
    """Corollary 1 with constant parameters: ``T`` times the single-round expression (total).

    Examples
    --------
    >>> sp.simplify(multi_round_bound_expr() / single_round_bound_expr())
    T
    """
    return _sym_unit(_bits_expr("multi", corrected), unit, "multi_round_bound_expr")


def multi_round_bound_per_round_expr(*, unit="bits", corrected=False):
    r"""Sum over rounds :math:`t = 1..T` of the single-round expression at indexed parameters.

    Indexed bases :math:`p_t, B_t, d^*_t, \Delta_t` (and :math:`d_t` when corrected).

    Examples
    --------
    >>> multi_round_bound_per_round_expr().limits
    ((t, 1, T),)
    """
    t = SYMBOLS.t
    p, B, d_star, Delta, d = (sp.IndexedBase(n) for n in ("p", "B", "d^*", "Delta", "d"))
    single = _sym_terms(p[t], B[t], d_star[t], Delta[t], d[t], corrected)["single"]
    body = _sym_unit(single, unit, "multi_round_bound_per_round_expr")
    return sp.Sum(body, (t, 1, SYMBOLS.T))


def prunefl_single_round_bound_expr(*, unit="bits", corrected=False):
    r"""PruneFL bound (eq. 23) in :math:`k = |\bar P\cup A|, d, B, d^*, \Delta`.

    Theorem 1 with :math:`1 - p` replaced by :math:`k/d`.

    Examples
    --------
    >>> s = SYMBOLS
    >>> prunefl = prunefl_single_round_bound_expr()
    >>> sp.simplify(prunefl.subs(s.kept, s.d * (1 - s.p)) - single_round_bound_expr())
    0
    """
    return _sym_unit(_bits_expr("prunefl", corrected), unit, "prunefl_single_round_bound_expr")
