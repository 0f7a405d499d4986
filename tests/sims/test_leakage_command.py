"""``pruneleak leakage --json`` on a tiny candidate set: keys, the order of the bounds, resume."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
import torch
from scipy import stats
from scipy.special import digamma

from pruneleak.bounds.leakage import gaussian_channel_bound_bits
from pruneleak.sims.attacks import identify
from pruneleak.sims.cli import main
from pruneleak.sims.experiments.leakage import LeakageConfig, World, run_leakage
from pruneleak.sims.gradients.statistics import gradient_statistics
from pruneleak.sims.plots.leakage import leakage_reconstruction_rows

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
    "theorem1_by_samples",
    "sensitivity",
    "dp_success_bound",
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
        # any attack's success, the Bayes-optimal one included, is below the DP bound
        assert row["bayes_success_ci"][0] <= row["dp_success_bound"] <= 1
        for name, success in row["attack_success"].items():
            hits = round(success * row["attack_targets"])
            low = stats.beta.ppf(0.025, hits, row["attack_targets"] - hits + 1) if hits else 0.0
            assert low <= row["dp_success_bound"], name
        # Theorem 1 at the default sample sizes for M = 12: 8 and 12 gradients
        sizes = [t["stats_samples"] for t in row["theorem1_by_samples"]]
        assert sizes == [8, 12]
        assert all(t["d_star"] <= t["stats_samples"] - 1 for t in row["theorem1_by_samples"])
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
    # KSG (k = 3) on N = 48 draws has n_x, n_y in [k - 1, N - 1], so its value lies in
    # [psi(k) - psi(N), psi(N) - psi(k)] nats; negatives are reported, not clipped
    reach = (digamma(48) - digamma(3)) / math.log(2)
    assert ksg["ci_bits"] is None and -reach <= ksg["bits"] <= reach
    for name in ("mine", "hmine"):
        low, high = noisy["estimates_bits"][name]["ci_bits"]
        assert low <= noisy["estimates_bits"][name]["bits"] <= high


def test_sensitivity_and_dp_bound_against_brute_force():
    config = LeakageConfig(
        candidates=6, rates=(0.5,), noise_stds=(0.05,), samples=64, attack_targets=1,
        attack_iterations=1, stats_samples=4, device="cpu",
    )  # fmt: skip
    r = World(config).at_rate(0.5).mechanism.single_releases()
    brute = max(np.linalg.norm(r[i] - r[j]) for i in range(6) for j in range(6))
    (record,) = run_leakage(config, progress=False)
    assert record["sensitivity"] == pytest.approx(brute, rel=1e-12)
    # Hayes et al. 2023 for mu-GDP, mu = Delta / s: Phi(Phi^-1(1/M) + mu)
    want = stats.norm.cdf(stats.norm.ppf(1 / 6) + brute / 0.05)
    assert record["dp_success_bound"] == pytest.approx(want, rel=1e-9)


def test_theorem1_is_reevaluated_on_the_first_n_candidates():
    config = LeakageConfig(
        candidates=12, rates=(0.5,), noise_stds=(0.0,), samples=16, attack_targets=1,
        attack_iterations=1, stats_samples=6, theorem1_sample_sizes=(9, 3), device="cpu",
    )  # fmt: skip
    (record,) = run_leakage(config, progress=False)
    rows = record["theorem1_by_samples"]
    world = World(config)
    mask = world.at_rate(0.5).mask
    point = mask.apply(world.params)
    for n, row in zip((3, 9), rows, strict=True):
        stats_n = gradient_statistics(
            world.model, point, world.images[:n], world.labels[:n], mask=mask
        )
        assert row["stats_samples"] == n and row["d_star"] == n - 1 == stats_n.d_star
        assert row["delta_nats"] == pytest.approx(stats_n.delta, rel=1e-9)
    # the record's main Theorem 1 fields are those of stats_samples = 6, between the two
    assert rows[0]["delta_nats"] != record["delta_nats"] != rows[1]["delta_nats"]


def test_batches_of_two_bounds_in_order_and_the_gaussian_bound_of_the_means():
    # B = 2 of M = 8: N = C(8, 2) = 28 batches, enumerated exactly.
    config = LeakageConfig(
        candidates=8, batch_size=2, rates=(0.5,), noise_stds=(0.0, 0.05), samples=256,
        attack_targets=3, attack_iterations=3, stats_samples=4, device="cpu",
    )  # fmt: skip
    silent, noisy = run_leakage(config, progress=False)
    for row in (silent, noisy):
        assert row["ceiling_bits"] == pytest.approx(math.log2(28), abs=1e-12)
        assert row["exact_method"] in ("exact", "monte_carlo")
        low, high = row["exact_ci_bits"]
        assert max(row["fano_lower_bits"].values()) <= high and low <= row["ceiling_bits"]
    assert silent["exact_bits"] == pytest.approx(math.log2(28), abs=1e-12)  # distinct means
    # The Gaussian-channel bound on the covariance of the 28 batch means, built here by
    # enumerating the batches (the study uses the finite-population correction instead).
    r = World(config).at_rate(0.5).mechanism.single_releases()
    means = np.array([(r[i] + r[j]) / 2 for i, j in itertools.combinations(range(8), 2)])
    want = gaussian_channel_bound_bits(means, 0.05)
    assert noisy["gaussian_bound_bits"] == pytest.approx(want, rel=1e-9)
    assert noisy["gaussian_bound_bits"] >= noisy["exact_ci_bits"][0]


def test_identify_names_the_subset_of_least_total_distance():
    # against a loop over every ordered choice of 2 distinct candidates
    generator = torch.Generator().manual_seed(0)
    candidates = torch.rand((7, 4), generator=generator, dtype=torch.float64)
    for _ in range(20):
        found = torch.rand((2, 4), generator=generator, dtype=torch.float64)
        best = min(
            itertools.permutations(range(7), 2),
            key=lambda pair: sum(
                float((found[k] - candidates[j]).norm()) for k, j in enumerate(pair)
            ),
        )
        assert identify(found, candidates) == sorted(best)
    with pytest.raises(ValueError, match="'candidates' parameter of identify"):
        identify(torch.zeros(3, 4), torch.zeros(2, 4))


def test_the_attacked_targets_and_their_reconstructions_are_kept_and_drawn(tmp_path, capsys):
    """Per (p, noise) and attack the kept originals are the targets (candidate images, in
    target order), and the grid shows them above one row per (p, noise, attack)."""
    assert main(["leakage", *ARGS, "--json", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    assert (tmp_path / "leakage_reconstructions.png").is_file()
    config = LeakageConfig(
        candidates=12,
        samples=256,
        attack_targets=3,
        attack_iterations=3,
        stats_samples=6,
        rates=(0.5,),
        noise_stds=(0.0, 0.05),
        device="cpu",
    )
    world = World(config)
    originals, rows = leakage_reconstruction_rows(config, tmp_path / "reconstructions")
    expected = world.images[world.targets.flatten()].numpy()
    np.testing.assert_allclose(originals, expected, atol=2.0**-11)
    assert list(rows) == ["SGI p=0.5 s=0", "GI p=0.5 s=0", "SGI p=0.5 s=0.05", "GI p=0.5 s=0.05"]
    assert all(r.shape == originals.shape for r in rows.values())
