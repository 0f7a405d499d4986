"""H-MINE's paper preset (Sec. 3.1) and the Fig. 3 convergence comparison."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from torch import nn

from pruneleak.estimators.neural import HMINE, HMINE_PRESETS, TrainingConfig
from pruneleak.estimators.registry import get_estimator
from pruneleak.sims.experiments.hmine import (
    ConvergenceConfig,
    HMineExperimentConfig,
    epoch_steps,
    hmine_estimator,
    run_convergence,
)


def _linear_widths(module: nn.Module) -> list[int]:
    return [m.out_features for m in module.modules() if isinstance(m, nn.Linear)]


def test_the_paper_preset_is_the_papers_critic():
    # Liu et al. (2021), Sec. 3.1 (papers/h-mine-quantitative-leakage-metric.txt, line 135):
    # BlockModel "3 fully connected layers with 200, 200, 5 neurons", MixModel "a two-layer
    # MLP with 500, 1 neurons", Adam at 5e-5
    estimator = HMINE(preset="paper")
    critic = estimator._build(7, 11, (4, 3, 7))  # B = 3 inputs of 7 features, G of 11
    block = [critic.block_x.out_features, *_linear_widths(critic.block_rest)]
    assert block == [200, 200, 5]
    assert critic.block_g.out_features == 200 and critic.block_g.in_features == 11
    assert critic.block_x.in_features == 7
    assert _linear_widths(critic.mix) == [500, 1] and critic.mix[0].in_features == 5 * 3
    assert estimator.training.learning_rate == 5e-5
    assert get_estimator("hmine", preset="paper").block_hidden == (200, 200)


def test_explicit_arguments_win_over_the_preset():
    estimator = HMINE(preset="paper", mix_hidden=(8,), training=TrainingConfig())
    assert estimator.mix_hidden == (8,) and estimator.block_hidden == (200, 200)
    assert estimator.training.learning_rate == TrainingConfig().learning_rate
    default = HMINE()
    assert (default.block_hidden, default.embedding_dim, default.mix_hidden) == ((32,), 16, (64,))


def test_the_experiment_config_selects_the_preset():
    config = HMineExperimentConfig(critic="paper", estimator=TrainingConfig(learning_rate=1e-3))
    estimator = hmine_estimator(config)
    assert estimator.preset == "paper" and estimator.training.learning_rate == 5e-5
    assert hmine_estimator(replace(config, critic="default")).training.learning_rate == 1e-3
    with pytest.raises(ValueError, match=r"'critic'.*'default', 'paper'.*'large'"):
        HMineExperimentConfig(critic="large")
    with pytest.raises(ValueError, match=r"'preset' parameter of HMINE.*'huge'"):
        HMINE(preset="huge")


@pytest.mark.filterwarnings("ignore::pruneleak.estimators.estimate.MIWarning")  # 20 steps
def test_convergence_records_both_critics_over_training():
    config = HMineExperimentConfig(client_size=40, n_pairs=300, critic="paper", device="cpu")
    training = TrainingConfig(
        max_steps=20, eval_every=5, patience=5, schedule="constant", n_fits=1, batch_size=32
    )
    convergence = ConvergenceConfig(training=training, mine_hidden=(16,))
    records = run_convergence(config, convergence)
    assert [(r["critic"], r["batch_size"]) for r in records] == [
        ("hmine", 1),
        ("mine", 1),
        ("hmine", 3),
        ("mine", 3),
    ]
    # 300 pairs: 75 test, 225 left, 45 validate, 180 train; 32 per step
    assert records[0]["step"] == [0, 5, 10, 15, 20]
    assert records[0]["epoch"] == pytest.approx([s * 32 / 180 for s in (0, 5, 10, 15, 20)])
    assert records[2]["bound_batches"] == pytest.approx(math.log(math.comb(40, 3)))
    assert all(len(r["validation"]) == len(r["train"]) == 5 for r in records)
    assert epoch_steps(config) == 3  # ceil(40 / 16)


def test_convergence_config_refuses_bad_values():
    with pytest.raises(ValueError, match=r"'batch_sizes'.*not repeat.*3 twice"):
        ConvergenceConfig(batch_sizes=(3, 3))
    with pytest.raises(ValueError, match=r"'batch_sizes'.*\[1, inf\).*Got 0"):
        ConvergenceConfig(batch_sizes=(0,))
    with pytest.raises(ValueError, match=r"'training'.*TrainingConfig.*dict"):
        ConvergenceConfig(training={})


def test_the_presets_are_named():
    assert set(HMINE_PRESETS) == {"default", "paper"}
