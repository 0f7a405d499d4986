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
:math:`h(N_n(\mu,K)) = \tfrac12\log(2\pi e)^n|K|`, stated there in bits. This package
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

Domain (issue 13: valid finite inputs give finite outputs, the rest is refused with a
ValueError naming the parameter). ``p`` in [0, 1]; ``B`` in [1, 1.8e308]; the integers
``d_star``, ``d``, ``T``, ``kept`` up to 2**63 - 1 (with ``d_star <= d``, ``kept <= d``);
:math:`|\Delta| \le 372.5\,d^*` nats: every positive float64 eigenvalue has
:math:`|\ln\lambda| < 745`, so no float64 covariance has a log pseudo-determinant beyond
:math:`745\,d^*` (``spectrum_summary`` always gives one inside). On this domain every bound
is finite, below about 1e41 bits in magnitude.

Modules (one idea each; every public name is re-exported here, so
``from bounds.priprune import X`` works for all of them):

- ``expressions``: every formula once, as a sympy expression in bits, and the public
  symbolic forms (``*_expr``).
- ``theorem1``: the numeric bounds (Theorem 1, Corollary 1, PruneFL eq. 23), published
  and corrected, step by step; each evaluates an expression lambdified by ``_numeric``.
- ``entropy``: the binary entropy and its Taylor series.
- ``gradstats``: the gradient statistics the bounds take (:math:`\Delta`, :math:`d^*`).

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

from pruneleak.bounds.priprune.entropy import (
    binary_entropy,
    binary_entropy_taylor,
)
from pruneleak.bounds.priprune.expressions import (
    LN2,
    SYMBOLS,
    UNITS,
    entr,
    multi_round_bound_expr,
    multi_round_bound_per_round_expr,
    part_expr,
    prunefl_single_round_bound_expr,
    single_round_bound_expr,
)
from pruneleak.bounds.priprune.gradstats import (
    delta_from_log_pseudo_det,
    spectrum_summary,
)
from pruneleak.bounds.priprune.theorem1 import (
    mask_entropy_corrected,
    mask_entropy_published,
    multi_round_bound,
    multi_round_bound_corrected,
    multi_round_bound_corrected_per_round,
    multi_round_bound_per_round,
    part_a_corrected,
    part_a_published,
    part_b_corrected,
    part_b_published,
    part_c_corrected,
    part_c_published,
    part_d_corrected,
    part_d_published,
    prunefl_single_round_bound,
    prunefl_single_round_bound_corrected,
    single_round_bound,
    single_round_bound_corrected,
)

__all__ = [
    "LN2",
    "SYMBOLS",
    "UNITS",
    "binary_entropy",
    "binary_entropy_taylor",
    "delta_from_log_pseudo_det",
    "entr",
    "mask_entropy_corrected",
    "mask_entropy_published",
    "multi_round_bound",
    "multi_round_bound_corrected",
    "multi_round_bound_corrected_per_round",
    "multi_round_bound_expr",
    "multi_round_bound_per_round",
    "multi_round_bound_per_round_expr",
    "part_a_corrected",
    "part_a_published",
    "part_b_corrected",
    "part_b_published",
    "part_c_corrected",
    "part_c_published",
    "part_d_corrected",
    "part_d_published",
    "part_expr",
    "prunefl_single_round_bound",
    "prunefl_single_round_bound_corrected",
    "prunefl_single_round_bound_expr",
    "single_round_bound",
    "single_round_bound_corrected",
    "single_round_bound_expr",
    "spectrum_summary",
]
