"""``pruneleak leakage`` with other release mechanisms: rounds, local steps, defenses.

On tiny candidate sets, every record must keep the order that holds for any release:
0 <= Fano (each attack) <= I(X; Y) <= log2 C(M, B), the exact value's interval inside
[0, ceiling], the upper bounds that are valid for the mechanism above the interval's
lower end, and the Bayes success below the DP bound where one is given.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from pruneleak.sims.cli import main
from pruneleak.sims.defenses import DefenseSpec
from pruneleak.sims.experiments.leakage import LeakageConfig, World, attacks, run_leakage
from pruneleak.sims.experiments.leakage.defenses import nmi_rank_agreement

TINY = ["--candidates", "8", "--samples", "256", "--attack-targets", "2", "--iterations", "2"]
TINY += ["--stats-samples", "4", "--p", "0.5", "--device", "cpu", "--no-figure"]
# slack of the order checks: Monte Carlo intervals are compared, not means
SLACK = 1e-9


def _records(capsys, *args) -> list[dict]:
    assert main(["leakage", *TINY, *args, "--json"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]


def _check_order(record: dict) -> None:
    secrets_bits = math.log2(math.comb(record["candidates"], record["batch_size"]))
    low, high = record["exact_ci_bits"]
    assert 0 <= low <= record["exact_bits"] <= high <= secrets_bits + SLACK
    assert record["ceiling_bits"] == pytest.approx(secrets_bits, abs=1e-12)
    for fano in record["fano_lower_bits"].values():
        assert 0 <= fano <= high + SLACK
    for bound in ("gaussian_bound_bits",):
        if record.get(bound) is not None:
            assert record[bound] >= low - SLACK
    if record.get("dp_success_bound") is not None and record["bayes_success_ci"] is not None:
        assert record["bayes_success_ci"][0] <= record["dp_success_bound"] + SLACK
    if record["bayes_success_ci"] is not None:
        s_low, s_high = record["bayes_success_ci"]
        assert 1 / 2**secrets_bits - SLACK <= s_low <= s_high <= 1 + SLACK


def test_rounds_give_the_leakage_after_each_round_count_below_every_valid_bound(tmp_path, capsys):
    (record,) = _records(capsys, "--rounds", "4", "--noise", "0.01", "--out", str(tmp_path))
    _check_order(record)
    assert [e["rounds"] for e in record["by_rounds"]] == [1, 2, 4]
    for entry in record["by_rounds"]:
        _check_order({**record, **entry})
        low = entry["exact_ci_bits"][0]
        # rounds are independent given X: I(X; Y_1..Y_T) <= sum_t I(X; Y_t)
        assert low <= entry["per_round_sum_ci_bits"][1] + SLACK
        assert entry["corollary1_status"]["published"] in ("valid", "vacuous", "violated")
    # more rounds cannot leak less (the first T' uploads are part of the T uploads)
    lows = [e["exact_ci_bits"][0] for e in record["by_rounds"]]
    highs = [e["exact_ci_bits"][1] for e in record["by_rounds"]]
    assert all(h2 >= l1 - SLACK for l1, h2 in zip(lows, highs[1:], strict=False))
    assert record["exact_bits"] == record["by_rounds"][-1]["exact_bits"]


@pytest.mark.parametrize("defense", ["largest", "random", "mix"])
def test_fixed_defenses_exact_bits_in_order(tmp_path, capsys, defense):
    rows = _records(
        capsys, "--defense", defense, "--pseudo", "--warmup-rounds", "1", "--noise", "0", "0.05",
        "--out", str(tmp_path),
    )  # fmt: skip
    for record in rows:
        _check_order(record)
        assert record["exact_method"] == "monte_carlo" and record["defense"] == defense
        assert set(record["attack_success"]) == {"sgi", "sgi_aware"}
        assert 0 <= record["nmi_chance"] <= 1


def test_priprune_bracket_in_order(tmp_path, capsys):
    rows = _records(
        capsys, "--defense", "priprune", "--noise", "0", "0.01", "--randomness-draws", "16",
        "--out", str(tmp_path),
    )  # fmt: skip
    for record in rows:
        _check_order(record)
        assert record["exact_method"] == "bracket"
        lower, upper = record["exact_bracket_bits"]
        assert lower <= upper + 0.5  # the two means, each within its Monte Carlo error


def test_defense_with_several_rounds_is_refused():
    with pytest.raises(ValueError, match=r"'rounds' parameter of LeakageConfig must be 1"):
        LeakageConfig(rounds=2, defense=DefenseSpec(name="largest"))


def test_pseudo_without_defense_is_a_one_line_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["leakage", *TINY, "--pseudo"])
    assert info.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "--pseudo needs a --defense" in line


def test_attacks_invert_from_the_released_round_broadcast(monkeypatch):
    """After warm-up rounds the attackers start from the model the server broadcast in the
    released round, not from the initial weights (a spy on the attack)."""
    seen = []

    def spy(model, global_params, sent, **options):
        seen.append(global_params)
        return real(model, global_params, sent, **options)

    real = attacks.sgi_attack_batched
    monkeypatch.setattr(attacks, "sgi_attack_batched", spy)
    config = LeakageConfig(
        candidates=6, rates=(0.5,), noise_stds=(0.0,), samples=16, attack_targets=1,
        attack_iterations=1, stats_samples=4, warmup_rounds=2, other_clients=1, device="cpu",
    )  # fmt: skip
    run_leakage(config, progress=False)
    state = World(config).at_rate(0.5)
    (broadcast,) = seen
    assert any(not torch.equal(state.broadcast[n], w) for n, w in World(config).params.items())
    for name, value in state.broadcast.items():
        assert torch.equal(broadcast[name], value)


def test_nmi_rank_agreement_counts_only_pairs_the_bits_certify():
    def row(defense, pseudo, bits, ci, nmi):
        return {
            "p": 0.5, "noise_std": 0.1, "defense": defense, "pseudo": pseudo,
            "exact_bits": bits, "exact_ci_bits": ci, "nmi": {"sgi": nmi},
            "attack_success": {"sgi": 0.0},
        }  # fmt: skip

    rows = [
        row("none", None, 5.0, [4.9, 5.1], 0.2),
        row("largest", True, 3.0, [2.9, 3.1], 0.5),
        row("random", False, 1.0, [0.5, 3.0], 0.8),  # overlaps Largest's interval
    ]
    agreement, aware = nmi_rank_agreement(rows)
    assert (agreement["attacker"], aware["attacker"]) == ("unaware", "aware")
    assert aware == {**agreement, "attacker": "aware"}  # no record has an aware attack
    # certified pairs: none > Largest (Pseudo) and none > Random by the bits; NMI orders
    # both the other way; Largest and Random overlap, so they are not a pair
    assert agreement["pairs"] == 2 and agreement["tau"] == -1.0
    assert sorted(agreement["contradictions"]) == [
        ("none", "Largest (Pseudo)"),
        ("none", "Random"),
    ]
    # Random now leaks most by both: one pair of three agrees, tau = (2 - 1) / 3
    rows[2]["exact_bits"], rows[2]["exact_ci_bits"], rows[2]["nmi"]["sgi"] = 6.0, [5.9, 6.1], 0.9
    agreement = nmi_rank_agreement(rows)[0]
    assert agreement["pairs"] == 3 and agreement["tau"] == pytest.approx(1 / 3)
    assert agreement["contradictions"] == [("none", "Largest (Pseudo)")]
    for r in rows:  # every interval overlapping: nothing is ordered, no tau
        r["exact_ci_bits"] = [0.0, 6.0]
    assert nmi_rank_agreement(rows)[0]["tau"] is None


def test_dp_upload_bracket_in_order_and_below_the_dp_bound(tmp_path, capsys):
    from pruneleak.sims.releases import dp_sgd_bits_bound

    rows = _records(
        capsys, "--dp-noise", "2", "--dp-clip", "0.1", "--local-steps", "2", "--noise", "0",
        "--randomness-draws", "16", "--out", str(tmp_path),
    )  # fmt: skip
    (record,) = rows
    _check_order(record)
    assert record["exact_method"] == "bracket"
    assert record["exact_ci_bits"][1] <= dp_sgd_bits_bound(2, 2.0, 1) + SLACK


def test_large_models_use_the_gram_route_with_the_same_numbers(monkeypatch):
    """Past DENSE_VALUES the one-step study works on a matrix with the releases' distances
    (from their Gram matrix): exactly the same bits at s = 0, and within the Monte Carlo
    intervals at s > 0, as the dense releases."""
    from pruneleak.sims.experiments.leakage import study

    config = LeakageConfig(
        candidates=10, batch_size=2, rates=(0.5,), noise_stds=(0.0, 0.02), samples=1024,
        attack_targets=1, attack_iterations=1, stats_samples=4, device="cpu",
    )  # fmt: skip
    dense = run_leakage(config, progress=False)
    routes = []
    real = study._single_releases

    def spy(world, state):
        out, resolved = real(world, state)
        routes.append((out.shape[1], resolved))
        return out, resolved

    monkeypatch.setattr(study, "DENSE_VALUES", 1)
    monkeypatch.setattr(study, "_single_releases", spy)
    gram = run_leakage(config, progress=False)
    assert routes and routes[0][0] < 10  # an (M, rank <= M - 1) matrix, not (M, k)
    assert routes[0][1]  # the Gram tells every release apart: s = 0 is exact
    assert gram[0]["exact_bits"] == dense[0]["exact_bits"] == pytest.approx(math.log2(45))
    low, high = gram[1]["exact_ci_bits"]
    assert low <= dense[1]["exact_ci_bits"][1] and dense[1]["exact_ci_bits"][0] <= high
    assert gram[1]["sensitivity"] == pytest.approx(dense[1]["sensitivity"], rel=1e-6)
    assert gram[1]["gaussian_bound_bits"] == pytest.approx(
        dense[1]["gaussian_bound_bits"], rel=1e-6
    )


def test_releases_the_gram_cannot_separate_give_a_bracket_at_zero_noise(monkeypatch):
    from pruneleak.sims.experiments.leakage import study

    def merge_first_two(gram, *, rtol):
        del rtol
        return np.array([0, *range(len(gram) - 1)])

    monkeypatch.setattr(study, "DENSE_VALUES", 1)
    monkeypatch.setattr(study.leakage, "gram_groups", merge_first_two)
    config = LeakageConfig(
        candidates=8, rates=(0.5,), noise_stds=(0.0,), samples=16, attack_targets=1,
        attack_iterations=1, stats_samples=4, device="cpu",
    )  # fmt: skip
    (record,) = run_leakage(config, progress=False)
    merged = math.log2(8) - 2 / 8  # two of eight candidates in one group
    assert record["exact_method"] == "bracket"
    assert record["exact_bracket_bits"] == pytest.approx([merged, 3.0])
    assert record["exact_ci_bits"] == pytest.approx([merged, 3.0])
