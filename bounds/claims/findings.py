"""What checking the papers' claims found about peer libraries, for the report.

A :class:`Finding` states a measured property of a library that the field uses (not a
paper's claim), where it sits, and the test that re-measures it and fails once the
statement stops being true. ``pruneleak verify`` lists them under "Findings about peer
libraries" in its Markdown report.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
    """One statement about a peer library, with the command that re-checks it."""

    library: str
    where: str
    statement: str
    evidence: str


FINDINGS = (
    Finding(
        library="dp-accounting 0.6.0",
        where="rdp_privacy_accountant, the sampled Gaussian's RDP at fractional orders",
        statement=(
            "Against a 40-digit mpmath quadrature of A_alpha = E_{z ~ N(0, sigma^2)}[(1 - q + "
            "q e^{(2z - 1)/(2 sigma^2)})^alpha] over q in {0.01, 0.1, 0.5}, sigma in {0.8, "
            "1.4}, alpha in {1.1, 1.5, 2.5}, it returns inf in 6 of the 18 cases (q = 0.1, "
            "sigma = 0.8 and q = 0.5, alpha in {1.1, 1.5}: its series does not meet its stopping "
            "rule in 1000 terms) and overstates every finite one, by up to +55 % at q = 0.1, "
            "sigma = 1.4, alpha = 1.1. The error is in the RDP log(A_alpha)/(alpha - 1), whose "
            "logarithm is near 0 there, not in A_alpha (about 2e-4 too high): its _log_comb "
            "takes gammaln of negative arguments, adding the absolute values of binomial "
            "coefficients that alternate in sign. bounds.accounting.rdp_sampled_gaussian "
            "agrees with the quadrature to 5e-15 relative in all 18 cases."
        ),
        evidence="pytest tests/bounds/test_accounting_peer_findings.py",
    ),
)
