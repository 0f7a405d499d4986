"""Leakage and privacy bounds of the source papers: pure math (sympy, numpy, scipy), no torch.

Units. Information (leakage) defaults to **bits** everywhere: every public function with
a ``unit=`` parameter (``bounds.priprune``, ``bounds.gaussian``) has ``unit="bits"`` as
its default, because the papers' plots (PriPrune's Theorem 1 is stated in bits) and the
leakage comparisons of this toolkit (exact leakage, bounds, Fano and attack estimates on
one axis) use bits; pass ``unit="nats"`` for natural units. Inputs that are logarithms of
determinants (``delta``, ``log_pdet``) are in nats. Privacy parameters (epsilon, RDP and
zCDP values of ``bounds.equivalence`` and ``bounds.accounting``) are in nats, the unit of
differential privacy, and those functions take no ``unit``.

One source per formula: each closed-form bound is one sympy expression; the numeric
function is that expression lambdified (tests compare both with mpmath).
"""
