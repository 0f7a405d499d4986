"""Fed-LTP's baselines (sims.fedltp.baselines): DP-Fed dense, Fed-SPA's kept fraction, bytes
against a hand count, the budget stop for every variant, and the quick study."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from fedltp_helpers import logreg_factory, tiny_config

import pruneleak.sims.fedltp.training as training
from pruneleak.sims.core.runtime import seeded
from pruneleak.sims.fedltp import FedLTPConfig, epsilon_after, split_for_config
from pruneleak.sims.fedltp.baselines import (
    VARIANTS,
    per_client_mib,
    run_dp_fed,
    run_fed_spa,
    run_variant,
)
from pruneleak.sims.fedltp.experiment import PAPER_TABLE3, FedLTPStudy, Method, run_study
from pruneleak.sims.fedltp.masks import random_upload_mask
from pruneleak.sims.fedltp.tickets import current_params
from pruneleak.sims.models import build_model

# logistic regression on 8x8 digits: one 10 x 64 weight (prunable) and 10 biases
WEIGHTS, BIASES = 640, 10
WEIGHT = "classifier.0.weight"


def _w0(config):
    with seeded(config.seed * config.num_tickets):
        return current_params(logreg_factory())


# ---- DP-Fed ------------------------------------------------------------------------------


def test_dp_fed_uploads_are_dense_and_its_epsilon_is_fedltps(digits):
    config = tiny_config()
    data = split_for_config(digits, config)
    dense = run_dp_fed(config, data, logreg_factory, device="cpu")
    ticket = run_variant("fedltp", config, data, logreg_factory, device="cpu")
    per_client = 4 * (WEIGHTS + BIASES)
    for r in dense.records:
        assert r["density_clients"] == r["density_upload"] == r["density_global"] == 1.0
        assert r["bytes_up"] == r["bytes_down"] == 2 * per_client
    # one round moves every coordinate (dense noisy update), from the w0 of ticket 0
    one = run_dp_fed(tiny_config(rounds=1), data, logreg_factory, device="cpu")
    w0 = _w0(config)
    for name, value in one.final_params.items():
        assert bool((value != w0[name]).all()), name
    assert ticket.records[0]["density_clients"] < 1  # Fed-LTP is sparse on the same data
    rate = 5 / min(len(c) for c in data.clients_train)
    expected = [epsilon_after(config, t, sampling_rate=rate) for t in (1, 2, 3)]
    assert [r["epsilon"] for r in dense.records] == [r["epsilon"] for r in ticket.records]
    np.testing.assert_allclose([r["epsilon"] for r in dense.records], expected, rtol=1e-12)
    assert dense.run != ticket.run  # the variant is part of the run key


# ---- Fed-SPA -----------------------------------------------------------------------------


@pytest.mark.parametrize("keep", [0.05, 0.3, 0.6, 1.0])
def test_random_upload_mask_keeps_the_stated_count_of_weights_and_every_bias(keep):
    params = current_params(build_model("conv1", image_shape=(1, 8, 8), num_classes=10))
    mask = random_upload_mask(params, keep, seed=3)
    n = sum(p.numel() for p in params.values() if p.ndim >= 2)
    assert mask.num_prunable() == n
    assert n - mask.num_pruned() == n - round((1 - keep) * n)  # exact count
    assert all(bool(mask.keep[k].all()) for k, p in params.items() if p.ndim < 2)


def test_random_upload_mask_is_uniform_over_the_coordinates():
    # each of the 640 weights kept with probability 0.3 over 4000 seeds: every frequency
    # within 5 binomial standard errors (sqrt(0.21 / 4000) = 0.0072) of 0.3
    params = current_params(logreg_factory())
    draws = 4000
    counts = torch.zeros(10, 64)
    for seed in range(draws):
        counts += random_upload_mask(params, 0.3, seed=seed).keep[WEIGHT].float()
    freq = counts / draws
    assert float((freq - 0.3).abs().max()) < 5 * math.sqrt(0.3 * 0.7 / draws)


def test_fed_spa_uploads_keep_the_stated_fraction_and_only_those_move(digits, monkeypatch):
    config = tiny_config(rounds=1)
    data = split_for_config(digits, config)
    drawn = []
    original = training.random_upload_mask

    def spy(params, keep, *, seed):
        mask = original(params, keep, seed=seed)
        drawn.append(mask)
        return mask

    aggregated = []
    aggregate = training._aggregate

    def spy_aggregate(global_params, deltas, masks):
        out = aggregate(global_params, deltas, masks)
        aggregated.append((global_params, deltas, out))
        return out

    monkeypatch.setattr(training, "random_upload_mask", spy)
    monkeypatch.setattr(training, "_aggregate", spy_aggregate)
    result = run_fed_spa(config, data, logreg_factory, keep=0.3, device="cpu")
    assert len(drawn) == config.clients_per_round == 2
    kept = WEIGHTS - round(0.7 * WEIGHTS)  # 192
    for mask in drawn:
        assert mask.num_kept() == kept + BIASES
    assert not drawn[0].equals(drawn[1])  # a fresh subset per client
    assert result.records[0]["density_upload"] == pytest.approx(kept / WEIGHTS)
    # coordinates no client uploaded keep w0; uploaded ones moved
    w0 = _w0(config)
    union = drawn[0].keep[WEIGHT] | drawn[1].keep[WEIGHT]
    moved = result.final_params[WEIGHT] != w0[WEIGHT]
    assert torch.equal(moved, union)
    # each coordinate moves by the mean update of the clients that uploaded it (a slow loop)
    ((start, deltas, out),) = aggregated
    for i in range(10):
        for j in range(64):
            senders = [c for c in range(2) if drawn[c].keep[WEIGHT][i, j]]
            step = sum(float(deltas[c][WEIGHT][i, j]) for c in senders) / max(1, len(senders))
            assert float(out[WEIGHT][i, j]) == pytest.approx(
                float(start[WEIGHT][i, j]) + step, rel=1e-6, abs=1e-7
            )
    assert any(
        int(drawn[0].keep[WEIGHT][i, j]) + int(drawn[1].keep[WEIGHT][i, j]) == 1
        for i in range(10)
        for j in range(64)
    )  # the mean is not over all K here


def test_upload_keep_is_required_for_fed_spa_and_refused_otherwise(digits):
    config = tiny_config()
    data = split_for_config(digits, config)
    for variant, keep in (("fed-spa", None), ("dp-fed", 0.5), ("fedltp", 0.5), ("fed-spa", 0)):
        with pytest.raises(ValueError, match="upload_keep"):
            run_variant(variant, config, data, logreg_factory, keep=keep, device="cpu")
    with pytest.raises(ValueError, match="variant"):
        run_variant("fedavg", config, data, logreg_factory, device="cpu")


# ---- bytes against a hand count ------------------------------------------------------------


def test_bytes_equal_a_hand_count(digits):
    config = tiny_config(rounds=2, prune_degree=0.5)
    data = split_for_config(digits, config)
    k, value = 2, 4  # clients per round, bytes per float32
    ticket = WEIGHTS - round(0.5 * WEIGHTS) + BIASES  # 330 values
    nested = [288 + BIASES, 259 + BIASES]  # P2 = 0.1: 320 -> 320 - 32 = 288 -> 288 - 29 = 259
    spa_up = WEIGHTS - round(0.7 * WEIGHTS) + BIASES  # keep 0.3: 202
    dense = WEIGHTS + BIASES
    cases = {
        ("fedltp", "one_shot", None): (k * ticket, k * ticket),
        ("fedltp", "iterative", None): (sum(nested), sum(nested)),
        ("dp-fed", "one_shot", None): (k * dense, k * dense),
        ("fed-spa", "one_shot", 0.3): (k * dense, k * spa_up),
    }
    for (variant, pruning, keep), (down, up) in cases.items():
        c = tiny_config(rounds=2, prune_degree=0.5, pruning=pruning)
        result = run_variant(variant, c, data, logreg_factory, keep=keep, device="cpu")
        assert [r["bytes_down"] for r in result.records] == [value * down] * 2, variant
        assert [r["bytes_up"] for r in result.records] == [value * up] * 2, variant
        assert result.records[-1]["bytes_cumulative"] == 2 * value * (down + up), variant
    assert per_client_mib(2**20 * 6, 6) == 1.0


# ---- every variant stops at the budget -------------------------------------------------------


@pytest.mark.parametrize(
    ("variant", "keep"), [("fedltp", None), ("dp-fed", None), ("fed-spa", 0.5)]
)
def test_every_variant_stops_before_exceeding_the_budget(digits, variant, keep):
    assert variant in VARIANTS
    base = tiny_config(rounds=10, noise_multiplier=3.0)
    data = split_for_config(digits, base)
    rate = 5 / min(len(c) for c in data.clients_train)
    eps = [epsilon_after(base, t, sampling_rate=rate) for t in range(1, 11)]
    budget = (eps[2] + eps[3]) / 2  # rounds 1-3 fit, round 4 would exceed it
    config = FedLTPConfig(**{**base.as_dict(), "epsilon": budget})
    result = run_variant(variant, config, data, logreg_factory, keep=keep, device="cpu")
    assert result.stopped_by_budget and result.rounds_run == 3
    assert result.epsilon == eps[2] <= budget


# ---- the quick study -------------------------------------------------------------------------


def test_quick_study_rows_share_the_budget_and_carry_the_paper_numbers():
    study = FedLTPStudy.for_scale("quick")
    small = FedLTPStudy(
        config=study.config,
        budgets=(3.0,),
        methods=(
            Method("Fed-LTP (one-shot)", "fedltp"),
            Method("Fed-SPA p=0.6", "fed-spa", keep=0.6),
            Method("DP-Fed", "dp-fed"),
        ),
    )
    result = run_study(small)
    rounds = {r["rounds"] for r in result.rows}
    eps = {r["epsilon"] for r in result.rows}
    assert len(rounds) == 1 and len(eps) == 1 and max(eps) <= 3.0
    comm = {r["method"]: r["comm_bytes"] for r in result.rows}
    assert comm["Fed-LTP (one-shot)"] < comm["Fed-SPA p=0.6"] < comm["DP-Fed"]
    row = result.rows[-1]
    assert (
        row["comm_mib"] == row["comm_bytes"] / 2**20 and row["comm_mb"] == row["comm_bytes"] / 1e6
    )
    table = result.table()
    assert "| DP-Fed | iid | 0 | 3 |" in table and "70.41 / 68.89 | 64.36 | 9.71" in table
    assert PAPER_TABLE3["Fed-SPA p=0.2"] == (65.26, 68.96, 38.62, 5.16)  # Table III, line 509
    with pytest.raises(ValueError, match="MNIST"):
        FedLTPStudy.for_scale("paper")
