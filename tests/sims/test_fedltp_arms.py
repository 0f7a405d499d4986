"""The arms of Fed-LTP's Sec. 6 (non-IID, seeds, Fig. 5's retention rates, the ablations of
Figs. 6-9) and the accountants and statistics they rest on."""

from __future__ import annotations

import math
from dataclasses import replace

import dp_accounting as dpa
import numpy as np
import pytest
from dp_accounting.rdp import rdp_privacy_accountant as dp_rdp

from pruneleak.bounds.accounting import fedltp_epsilon_composition, fedltp_epsilon_corrected
from pruneleak.sims.data.datasets import load_digits_dataset
from pruneleak.sims.fedltp import Ablation, epsilon_after, retention_rates, run_fedltp
from pruneleak.sims.fedltp.data import split_for_config
from pruneleak.sims.fedltp.experiment import (
    PAPER_FIG5_ITERATIVE_IID,
    PAPER_FIG6_GAIN,
    PRESETS,
    FedLTPStudy,
    Method,
    StudyResult,
    prune_degree_for_retention,
)
from tests.sims.fedltp_helpers import logreg_factory, tiny_config

# integer orders only: dp-accounting's fractional-order RDP is faulty (verification page)
ORDERS = tuple(float(a) for a in range(2, 65))
SCHEDULE = {"q": 0.05, "noise_multiplier": 1.1, "lambda_val": 8.0, "delta": 1e-3}


# ---- accounting -----------------------------------------------------------------------------


@pytest.mark.parametrize("t, steps", [(0, 1), (4, 10), (19, 3)])
@pytest.mark.parametrize("validation", ["exact", "none"])
def test_basic_composition_matches_dp_accounting_step_by_step(t, steps, validation):
    n = (t + 1) * steps
    accountant = dp_rdp.RdpAccountant(list(ORDERS))
    accountant.compose(dpa.PoissonSampledDpEvent(0.05, dpa.GaussianDpEvent(1.1)))
    step_eps = accountant.get_epsilon(1e-3 / n)  # one step's epsilon at its share of delta
    laplace = 0.0 if validation == "none" else (t + 1) / 8.0  # pure 1/lambda-DP releases
    ours, _ = fedltp_epsilon_composition(
        t, steps_per_round=steps, orders=ORDERS, validation=validation, **SCHEDULE
    )
    # both convert one step's RDP tightly at the same orders: rounding only
    assert ours == pytest.approx(n * step_eps + laplace, rel=1e-9)


def test_without_validation_the_renyi_accountant_is_dp_sgd_alone():
    accountant = dp_rdp.RdpAccountant(list(ORDERS))
    accountant.compose(dpa.PoissonSampledDpEvent(0.05, dpa.GaussianDpEvent(1.1)), 60)
    ours, _ = fedltp_epsilon_corrected(
        5, steps_per_round=10, orders=ORDERS, validation="none", **SCHEDULE
    )
    assert ours == pytest.approx(accountant.get_epsilon(1e-3), rel=1e-9)


def test_basic_composition_is_looser_than_renyi_composition():
    for t in (0, 9, 49):
        kw = {"steps_per_round": 10, "orders": ORDERS, **SCHEDULE}
        assert fedltp_epsilon_composition(t, **kw)[0] > fedltp_epsilon_corrected(t, **kw)[0]


def test_composition_edges_are_inf_or_a_named_error():
    kw = {**SCHEDULE, "orders": ORDERS}
    assert fedltp_epsilon_composition(3, **{**kw, "lambda_val": 0.0})[0] == math.inf
    with pytest.raises(ValueError, match=r"'delta' parameter .* at least .* Got 1e-323"):
        fedltp_epsilon_composition(3, **{**kw, "delta": 1e-323, "steps_per_round": 10})


def test_the_ablations_change_what_a_schedule_affords():
    config = tiny_config(epsilon=4.0, rounds=200)
    kw = {"sampling_rate": 0.2}
    full = epsilon_after(config, 10, **kw)
    assert epsilon_after(config, 10, ablation=Ablation(validation=False), **kw) < full
    assert epsilon_after(config, 10, ablation=Ablation(accounting="composition"), **kw) > full


# ---- statistics and retention -------------------------------------------------------------


@pytest.mark.parametrize("p", sorted(PAPER_FIG5_ITERATIVE_IID))
def test_prune_degree_gives_the_retention_rate(p):
    one_shot = prune_degree_for_retention(p, pruning="one_shot", further_prune=0.1, clients=3)
    assert 1 - one_shot == pytest.approx(p, abs=1e-15)
    pr = prune_degree_for_retention(p, pruning="iterative", further_prune=0.1, clients=3)
    direct = sum((1 - 0.1) ** i * (1 - pr) for i in range(1, 4)) / 3  # eq. 15-16 by hand
    assert direct == pytest.approx(p, rel=1e-12)
    assert retention_rates(pr, 0.1, 3).mean() == pytest.approx(p, rel=1e-12)


def test_prune_degree_refuses_a_retention_iterative_pruning_cannot_reach():
    with pytest.raises(ValueError, match=r"'retention'.*at most 0\.813.*Got 0\.9"):
        prune_degree_for_retention(0.9, pruning="iterative", further_prune=0.1, clients=3)


def test_the_paper_numbers_are_transcribed():
    # Fig. 5(a), line 406; Fig. 6, line 414
    assert PAPER_FIG5_ITERATIVE_IID == {0.54: 72.0, 0.40: 70.0, 0.29: 66.0, 0.20: 58.0}
    assert PAPER_FIG6_GAIN == {"iterative": (5.0, 1.0), "one_shot": (5.0, 4.0)}


# ---- the ablations in the loop ------------------------------------------------------------


@pytest.fixture(scope="module")
def digits():
    return load_digits_dataset()


def _run(digits, ablation, **overrides):
    config = tiny_config(**overrides)
    data = split_for_config(digits, config)
    return run_fedltp(config, data, logreg_factory, device="cpu", ablation=ablation)


def test_without_validation_the_last_model_is_released(digits):
    result = _run(digits, Ablation(validation=False))
    assert [r["validation_score"] for r in result.records] == [None] * 3
    assert [r["best_round"] for r in result.records] == [1, 2, 3]
    assert all((result.best_params[n] == result.final_params[n]).all() for n in result.final_params)
    assert result.records[0]["ablation"] == {"validation": False}


def test_the_unpruned_global_model_is_dense_and_client_tickets_differ(digits):
    unpruned = _run(digits, Ablation(global_model="unpruned"))
    assert unpruned.ticket_mask.density() == 1.0 and unpruned.ticket_index == -1
    full = _run(digits, Ablation())
    assert full.ticket_mask.density() == pytest.approx(0.5, abs=0.01)
    assert full.run != unpruned.run
    client = _run(digits, Ablation(tickets="client"))
    density = client.records[0]["density_global"]  # the union of six 50 % masks
    assert 0.5 < density <= 1.0


def test_basic_composition_stops_earlier_at_the_same_budget(digits):
    full = _run(digits, Ablation(), epsilon=3.0, rounds=30)
    composed = _run(digits, Ablation(accounting="composition"), epsilon=3.0, rounds=30)
    assert composed.rounds_run < full.rounds_run and composed.stopped_by_budget


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"global_model": "none"}, r"'global_model'.*'ticket', 'unpruned'.*'none'"),
        ({"validation": "no"}, r"'validation'.*True or False.*'no'"),
        ({"tickets": "both"}, r"'tickets'.*'both'"),
        ({"accounting": "zcdp"}, r"'accounting'.*'rdp', 'composition'.*'zcdp'"),
        ({"global_model": "unpruned", "tickets": "client"}, r"'tickets'.*'server'.*'client'"),
    ],
)
def test_ablation_refuses_bad_switches(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Ablation(**kwargs)


def test_run_fedltp_refuses_ablations_it_cannot_run(digits):
    config = tiny_config()
    data = split_for_config(digits, config)
    with pytest.raises(ValueError, match=r"'ablation'.*variant 'dp-fed'"):
        run_fedltp(
            config, data, logreg_factory, variant="dp-fed", ablation=Ablation(validation=False)
        )
    with pytest.raises(ValueError, match=r"tickets='client'.*pruning='iterative'"):
        run_fedltp(
            replace(config, pruning="iterative"),
            data,
            logreg_factory,
            ablation=Ablation(tickets="client"),
        )


# ---- the study's presets and summary -------------------------------------------------------


def test_presets_are_the_papers_arms():
    assert set(PRESETS) == {"table3", "non_iid", "seeds", "retention", "ablations"}
    seeds = FedLTPStudy.for_scale("quick", preset="seeds")
    assert seeds.seeds == (0, 1, 2) and seeds.partitions == ("iid", "dirichlet")
    assert seeds.config.dirichlet_alpha == 1.0  # Sec. 6.1, line 352
    retention = FedLTPStudy.for_scale("quick", preset="retention")
    assert sorted({m.retention for m in retention.methods}) == [0.2, 0.29, 0.4, 0.54]
    ablations = {m.ablation for m in FedLTPStudy.for_scale("quick", preset="ablations").methods}
    assert len(ablations) == 5
    with pytest.raises(ValueError, match=r"'preset'.*'table3'.*'table4'"):
        FedLTPStudy.for_scale("quick", preset="table4")


def test_summary_averages_the_seeds_with_the_t_interval():
    study = FedLTPStudy.for_scale("quick", preset="seeds")
    result = StudyResult(study=study)
    accuracies = [0.5, 0.6, 0.8]
    for seed, acc in enumerate(accuracies):
        result.rows.append(
            {
                "method": "M",
                "budget": 5.35,
                "partition": "iid",
                "seed": seed,
                "rounds": 8,
                "retention": 0.5,
                "released_accuracy": acc,
                "best_accuracy": acc + 0.1,
                "paper": "-",
            }
        )
    (summary,) = result.summary()
    assert summary["seeds"] == 3
    half = 4.302652729749464 * np.std(accuracies, ddof=1) / math.sqrt(3)  # t_{2, 0.975}
    mean = np.mean(accuracies)
    assert summary["released_accuracy"] == pytest.approx((mean, mean - half, mean + half))
    assert "| M | iid | 5.35 | 3 | 8 | 0.50 | 63.3 [" in result.summary_table()


def test_a_retention_method_sets_the_pruning_degree():
    config = tiny_config()
    method = Method("p", "fedltp", pruning="iterative", retention=0.4)
    chosen = method.config_for(config)
    k = config.clients_per_round
    assert retention_rates(chosen.prune_degree, 0.1, k).mean() == pytest.approx(0.4)
