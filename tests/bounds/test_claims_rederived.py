"""Every registered claim's verdict against the one derived by another route.

The derivations live beside their helpers, one module per group of claims
(``test_claims_independent*.py``: mpmath quadrature, closed forms, exact fractions,
seeded Monte Carlo, scikit-learn, slow explicit loops), each returning the verdict the
truth implies without calling the claim modules; here each is compared with the
registry's verdict, and every claim must have exactly one derivation.
"""

from __future__ import annotations

import pytest
from test_claims_independent import INDEPENDENT
from test_claims_independent_fedltp import INDEPENDENT_FEDLTP
from test_claims_independent_huang import INDEPENDENT_HUANG
from test_claims_independent_priprune import INDEPENDENT as INDEPENDENT_PRIPRUNE
from test_claims_independent_steps import INDEPENDENT_STEPS

from pruneleak.bounds import claims

GROUPS = (
    INDEPENDENT,
    INDEPENDENT_FEDLTP,
    INDEPENDENT_HUANG,
    INDEPENDENT_PRIPRUNE,
    INDEPENDENT_STEPS,
)
DERIVED = {claim_id: derive for group in GROUPS for claim_id, derive in group.items()}


def test_every_registered_claim_has_exactly_one_derivation():
    assert sum(len(group) for group in GROUPS) == len(DERIVED)  # none derived twice
    assert set(DERIVED) == {c.id for c in claims.all_claims()}


@pytest.mark.parametrize("claim_id", sorted(DERIVED))
def test_registry_verdict_agrees_with_an_independent_computation(claim_id):
    expected = DERIVED[claim_id]()
    result = claims.run_claims([claims.get_claim(claim_id)], seed=0)[0]
    assert result.verdict == expected, result.summary
