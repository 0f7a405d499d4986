"""``pruneleak leakage --json`` on a tiny candidate set: keys, the order of the bounds, resume.

"""

from __future__ import annotations

import json

import pytest

from sims.cli import main

REQUIRED = {
    "p",
    "noise_std",
    "candidates",
    "ceiling_bits",
    "exact_bits",
    "exact_ci_bits",
    "bayes_success",
    "gaussian_bound_bits",
    "theorem1_published_bits",
    "theorem1_corrected_bits",
    "stats_samples",
    "theorem1_status",
    "fano_lower_bits",
    "attack_success",
    "estimates_bits",
}
# 12 candidates, 3 attacked targets with 3 iterations: seconds on one core; the bounds'
# order must hold whatever the attacks achieve.
ARGS = ["--candidates", "12", "--samples", "256", "--attack-targets", "3", "--iterations", "3"]
ARGS += ["--stats-samples", "6", "--p", "0.5", "--noise", "0", "0.05", "--device", "cpu"]


def test_json_rows_keys_and_order_of_bounds(tmp_path, capsys):
    assert main(["leakage", *ARGS, "--json", "--out", str(tmp_path)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["p"], r["noise_std"]) for r in rows] == [(0.5, 0.0), (0.5, 0.05)]
    for row in rows:
        assert set(row) >= REQUIRED, REQUIRED - set(row)
        assert set(row["theorem1_status"]) == {"published", "corrected"}
        assert set(row["fano_lower_bits"]) == set(row["attack_success"]) == {"sgi", "gi"}
        assert set(row["estimates_bits"]) == {"ksg", "mine", "hmine"}
        assert row["stats_samples"] == 6 and row["candidates"] == 12
        low, high = row["exact_ci_bits"]
        assert row["ceiling_bits"] >= low  # ceiling >= exact
        for fano in row["fano_lower_bits"].values():
            assert fano <= high  # exact >= Fano
        if row["noise_std"] == 0:
            assert row["gaussian_bound_bits"] is None
        else:
            assert row["gaussian_bound_bits"] >= low  # Gaussian channel >= exact
    # B = 1, 12 distinct digits, no noise: the release names the digit, log2 12 bits.
    assert rows[0]["exact_bits"] == pytest.approx(rows[0]["ceiling_bits"], abs=1e-9)


def test_rerun_reads_records_back(tmp_path, capsys):
    argv = ["leakage", *ARGS, "--json", "--out", str(tmp_path)]
    main(argv)
    first = capsys.readouterr().out
    main(argv)
    assert capsys.readouterr().out == first
    assert len((tmp_path / "leakage.jsonl").read_text().splitlines()) == 2


def test_estimates_are_bits_with_intervals_and_none_without_noise(tmp_path, capsys):
    # 48 draws and 5 Adam steps: a smoke run of the plumbing (units, intervals, the
    # s = 0 rule), not of the estimators' accuracy.
    argv = ["leakage", *ARGS, "--estimate-draws", "48", "--estimate-steps", "5", "--json"]
    main([*argv, "--out", str(tmp_path)])
    silent, noisy = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert silent["estimates_bits"] == {"ksg": None, "mine": None, "hmine": None}
    ksg = noisy["estimates_bits"]["ksg"]
    assert ksg["ci_bits"] is None and 0 <= ksg["bits"] <= 64 * 64
    for name in ("mine", "hmine"):
        low, high = noisy["estimates_bits"][name]["ci_bits"]
        assert low <= noisy["estimates_bits"][name]["bits"] <= high
