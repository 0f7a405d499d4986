"""The claims registry: coverage of the papers, verdicts with evidence, and reproducibility.

Property tests run over every registered claim (one quick run shared by the module): each
verdict comes with the evidence its kind needs, and each verdict of ``holds`` is shown to
be falsifiable: the negated claim (relation reversed or value shifted) does not hold.
A failing or domain-restricted verdict carries its counterexample or domain and the
corrected statement. Whether a verdict is *right* is decided independently of the
registry's own checks, in ``test_claims_independent*.py``: nothing here pins a verdict.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import optimize

from pruneleak.bounds import claims
from pruneleak.bounds.claims.checks import CHECK_TYPES, FAILS, HOLDS, HOLDS_ON_DOMAIN, VERDICTS

# Every claim the verification issue lists, by registry id.
REQUIRED = {
    "priprune": [
        "priprune.taylor_series",
        "priprune.mask_term_bound",
        "priprune.eq17_scaling",
        "priprune.eq18_whitening",
        "priprune.eq19_max_entropy",
        "priprune.mask_entropy_dimension",
        "priprune.theorem1_gaussian",
        "priprune.mi_le_entropies",
        "priprune.finite_leakage",
        "priprune.monotone_p",
        "priprune.monotone_B",
        "priprune.monotone_dstar",
        "priprune.nmi_chance",
    ],
    "huang": [
        "huang.A4",
        "huang.A5",
        "huang.A6",
        "huang.B1",
        "huang.B2",
        "huang.B3",
        "huang.B4",
        "huang.B5.mean",
        "huang.B5.second_moment",
        "huang.B5.constant_C",
        "huang.C4.variance",
        "huang.C4.small_a",
        "huang.C4.large_a",
        "huang.D1",
        "huang.D2",
        "huang.D3",
        "huang.E3",
        "huang.E2.laplace_fourth_moment",
    ],
    "fedltp": [
        "fedltp.lemma1",
        "fedltp.eq21.mu1",
        "fedltp.eq21.rate",
        "fedltp.eq23",
        "fedltp.eq22",
        "fedltp.algorithm2.local_steps",
        "fedltp.algorithm2.clipping",
        "fedltp.table3.epsilon",
    ],
    "hmine": ["hmine.dv_bound"],
}

ALL = claims.all_claims()
RECORD_KEYS = {"id", "paper", "location", "statement", "verdict", "evidence"}


@pytest.fixture(scope="module")
def results():
    return {r.claim.id: r for r in claims.run_claims(seed=0)}


def test_registry_covers_every_required_claim():
    ids = {c.id for c in ALL}
    for paper, required in REQUIRED.items():
        missing = set(required) - ids
        assert not missing, f"{paper}: missing {missing}"
        assert all(claims.get_claim(i).paper == paper for i in required)


@pytest.mark.parametrize("claim", ALL, ids=[c.id for c in ALL])
def test_claim_record_is_complete(claim):
    assert claim.id and claim.location and claim.statement
    assert claim.paper in claims.PAPERS
    assert claim.checks and all(isinstance(c, CHECK_TYPES) for c in claim.checks)


@pytest.mark.parametrize("claim_id", [c.id for c in ALL])
def test_verdict_and_evidence(results, claim_id):
    result = results[claim_id]
    assert result.verdict in VERDICTS
    evidence = result.evidence()
    assert evidence["summary"] and all(c["summary"] for c in evidence["checks"])
    if result.verdict == HOLDS_ON_DOMAIN:
        assert evidence["domain"]
    if result.verdict == FAILS:  # a counterexample with its size, or a refuting series/limit
        failing = [c for c in result.checks if c.verdict == FAILS]
        assert any(
            {"violation", "leading_difference", "limit"} & set(c.numbers)
            or "violation" in c.numbers.get("numeric", {})
            for c in failing
        )
    record = claims.to_records([result])[0]
    required = {FAILS: {"counterexample", "corrected"}, HOLDS_ON_DOMAIN: {"domain", "corrected"}}
    allowed = {
        FAILS: required[FAILS],
        HOLDS_ON_DOMAIN: required[HOLDS_ON_DOMAIN] | {"counterexample"},
    }
    assert set(record) - RECORD_KEYS <= allowed.get(result.verdict, set())
    assert required.get(result.verdict, set()) <= set(record)
    json.dumps(record, allow_nan=False)  # no NaN/inf leaks into the JSON
    if result.verdict in (FAILS, HOLDS_ON_DOMAIN):  # what holds instead, in words
        assert record["corrected"], f"{claim_id} needs Claim.corrected"
    if result.verdict == FAILS:
        assert record["counterexample"]["text"]


def test_every_holding_claim_could_have_failed(results):
    """No claim is reported as holding without checks that could have failed: the negation
    of each of its checks (relation reversed or claimed value shifted) does not hold."""
    holding = [r.claim for r in results.values() if r.verdict == HOLDS]
    assert holding
    for claim in holding:
        for check in claim.checks:
            negated = check.negated().run(rng=np.random.default_rng(0))
            assert negated.verdict != HOLDS, claim.id


def test_domains_match_independent_solutions(results):
    # B.5 mean: (1 - exp(-r^2/2))/sqrt(2 pi) = r^2/6, solved here by brentq.
    root = optimize.brentq(
        lambda r: -math.expm1(-(r**2) / 2) / math.sqrt(2 * math.pi) - r**2 / 6, 0.1, 2.0
    )
    domain = results["huang.B5.mean"].checks[0].numbers["domain"]
    assert domain["high"] == pytest.approx(root, rel=1e-6)
    # I(X; X + N) = log(2)/2 <= h(X) + h(X + N) iff sigma >= (2 pi e)^(-1/2).
    domain = results["priprune.mi_le_entropies"].checks[0].numbers["domain"]
    assert domain["low"] == pytest.approx(1 / math.sqrt(2 * math.pi * math.e), rel=1e-6)
    # Fed-LTP eq. 23: alpha (alpha - 1) eps^2/2 >= D_alpha(Laplace) from alpha = 2 (D_2 <= eps^2)
    # down to where the exact divergence takes over; the boundary lies just below 2.
    domain = results["fedltp.eq23"].checks[0].numbers["domain"]
    assert 1.9 < domain["low"] <= 2.0


def test_same_seed_same_numbers_alone_or_in_a_full_run(results):
    alone = claims.run_claims([claims.get_claim("hmine.dv_bound")], seed=0)[0]
    full = results["hmine.dv_bound"]
    assert alone.checks[0].numbers["points"] == full.checks[0].numbers["points"]
    other = claims.run_claims([claims.get_claim("hmine.dv_bound")], seed=1)[0]
    assert other.checks[0].numbers["points"] != full.checks[0].numbers["points"]


def test_selection():
    assert {c.paper for c in claims.select_claims(paper="Huang et al.")} == {"huang"}
    assert len(claims.select_claims(paper="FEDLTP")) == len([c for c in ALL if c.paper == "fedltp"])
    chosen = claims.select_claims(claim_ids=["hmine.dv_bound", "huang.A4"])
    assert [c.id for c in chosen] == ["huang.A4", "hmine.dv_bound"]  # report order


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"paper": "nature"}, "'paper' parameter of select_claims"),
        ({"claim_ids": ["huang.Z9"]}, "Unknown claim id 'huang.Z9'"),
        ({"paper": "fedltp", "claim_ids": ["huang.A4"]}, "None of the claims"),
    ],
)
def test_bad_selection_raises(kwargs, message):
    with pytest.raises(ValueError, match=message):
        claims.select_claims(**kwargs)


def test_reports_render_every_claim(results):
    ordered = [results[c.id] for c in ALL]
    markdown = claims.render_markdown(
        ordered, seed=0, mode="quick", seconds=1.0, findings=claims.FINDINGS
    )
    table = claims.render_table(ordered)
    records = json.loads(claims.render_json(ordered))
    for claim in ALL:
        assert f"`{claim.id}`" in markdown and claim.id in table
        assert f"pruneleak verify --claim {claim.id}" in markdown
    for paper in claims.PAPERS.values():  # one section per paper, in registry order
        assert f"\n## {paper} (" in markdown
    for result in ordered:
        if result.verdict == FAILS:
            row = next(line for line in markdown.splitlines() if f"| `{result.claim.id}` |" in line)
            assert result.claim.corrected.replace("|", "\\|") in row
    assert "## Findings about peer libraries" in markdown
    assert all(f.evidence in markdown for f in claims.FINDINGS)
    assert [r["id"] for r in records] == [c.id for c in ALL]
    counts = claims.verdict_counts(ordered)
    assert sum(counts.values()) == len(ALL)
    note = claims.closing_note(ordered, 1.0)
    assert all(f"{n} {v}" in note for v, n in counts.items())


def test_failing_claims_have_curves_to_plot(results):
    for result in results.values():
        if result.verdict == FAILS:
            curve = result.curve
            assert curve.x.size >= 2 and curve.true.shape == curve.x.shape
            assert curve in [c.curve for c in result.checks if c.verdict == FAILS]
