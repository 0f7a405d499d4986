"""Finite inputs in the documented domain give finite outputs in the documented range.

Issue 13's acceptance: a hypothesis property test for every public function of
``estimators``. The public callables are enumerated from the modules themselves
(``__all__``, or the module's own non-underscore callables), and
:func:`test_every_public_callable_is_covered_or_exempt` fails when one is neither covered
by a property test below (registered with :func:`covers`) nor listed in :data:`EXEMPT`
with a reason.

Magnitudes are drawn log-uniformly from 1e-300 to 1e300 (plus outliers), which is where
the old code overflowed (``ssim`` of a 1e308 image was nan, KSG with a 1e308 outlier
standardised a whole variable to 0, MINE cast 1e308 to float32 inf); the data themselves
come from a seeded numpy generator so that they are continuous and duplicate-free where
the domain asks for it.
"""

from __future__ import annotations

import importlib
import math
import pkgutil
import warnings

import numpy as np
import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from mi_warnings import estimate_quietly

from pruneleak import estimators
from pruneleak.estimators import (
    closed_form,
    estimate,
    image,
    ksg,
    mi,
    neural,
    nmi,
    replicates,
    samples,
    sift,
)
from pruneleak.estimators.neural import interval, objectives

COVERED: set[str] = set()


def _short(module: str) -> str:
    """``pruneleak.estimators.nmi`` as the tables below name it: ``estimators.nmi``."""
    return module.removeprefix("pruneleak.")


#: Public callables without a numeric property of their own, with the reason.
EXEMPT = {
    "estimators.device.check_device": "validates a device name; returns it unchanged",
    "estimators.device.resolve_device": "returns a torch.device, no numeric output",
    "estimators.nmi.PermutationNull": "result record of nmi_permutation_null",
    "estimators.replicates.SeedInterval": "result record of seed_interval",
    "estimators.replicates.PairedComparison": "result record of paired_seed_comparison",
    "estimators.replicates.mean_interval_text": "formats a SeedInterval as text",
    "estimators.neural.estimators.CriticPreset": (
        "the critic sizes of a named H-MINE preset; HMINE(preset=...) is covered"
    ),
    "estimators.sift.SiftSimilarity": "result record of sift_similarity",
    "estimators.estimate.MIEstimate": "result record of every MI estimator",
    "estimators.estimate.MIWarning": "warning category, no numeric output",
    "estimators.registry.MIEstimator": "typing protocol, no behaviour of its own",
    "estimators.registry.get_estimator": (
        "builds an estimator; estimates property-tested in tests/estimators/test_registry.py"
    ),
    "estimators.registry.estimate_mi": (
        "get_estimator(...).estimate(...); property-tested in tests/estimators/test_registry.py"
    ),
    "estimators.neural.critics.ConcatCritic": "torch module; checked via the estimators",
    "estimators.neural.critics.HierarchicalCritic": "torch module; checked via HMINE",
    "estimators.neural.evaluation.Evaluation": "result record of the fold evaluations",
    "estimators.neural.evaluation.evaluate_infonce": "a step of InfoNCE.estimate, checked there",
    "estimators.neural.evaluation.evaluate_marginal": "a step of every estimate, checked there",
    "estimators.neural.training.TrainingConfig": "configuration record; validation only",
    "estimators.neural.training.TrainingResult": "result record of train_critic",
    "estimators.neural.training.train_critic": "the training loop of every estimate, checked there",
}

#: Subpackages exempt as a whole, with the reason.
EXEMPT_PACKAGES = {
    "estimators.tasks": (
        "benchmark task constructors with known truth; the truths are tested against "
        "closed forms, mpmath and Monte Carlo in tests/estimators/test_task_truths.py"
    ),
}


def covers(*functions):
    """Register the decorated test as the property test of ``functions``."""

    def register(test):
        COVERED.update(f"{_short(f.__module__)}.{f.__qualname__}" for f in functions)
        return test

    return register


def _public_callables() -> set[str]:
    names = set()
    for info in pkgutil.walk_packages(estimators.__path__, prefix="estimators."):
        parts = info.name.split(".")
        if any(part.startswith("_") for part in parts) or ".".join(parts[:2]) in EXEMPT_PACKAGES:
            continue
        module = importlib.import_module(info.name)
        candidates = getattr(module, "__all__", None) or [
            name for name in vars(module) if not name.startswith("_")
        ]
        for name in candidates:
            obj = getattr(module, name)
            if callable(obj) and getattr(obj, "__module__", None) == module.__name__:
                names.add(f"{_short(module.__name__)}.{name}")
    return names


def test_every_public_callable_is_covered_or_exempt():
    public = _public_callables()
    assert "estimators.nmi.nmi" in public and "estimators.device.resolve_device" in public
    missing = public - COVERED - set(EXEMPT)
    assert not missing, f"public callables with neither a property test nor an exemption: {missing}"
    stale = (COVERED | set(EXEMPT)) - public
    assert not stale, f"covered or exempt names that are not public callables: {stale}"
    assert not COVERED & set(EXEMPT)


# ---------------------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------------------

SEEDS = st.integers(0, 2**32 - 1)


def _log_uniform(low_exp: float, high_exp: float):
    return st.floats(low_exp, high_exp).map(lambda e: 10.0**e)


@st.composite
def value_ranges(draw):
    """``(low, high)`` with a width from 1e-300 to 1e300 and an offset up to 1e6 widths."""
    width = draw(_log_uniform(-300, 300))
    low = draw(st.floats(-1e6, 1e6)) * width
    return low, low + width


@st.composite
def image_pairs(draw, *, batch: bool = False, min_side: int = 1):
    """An original and a reconstruction inside a drawn value range, plus the range.

    The reconstruction is independent noise, a noisy copy, or the original itself.
    """
    low, high = draw(value_ranges())
    channels = draw(st.sampled_from([(), (1,), (3,)]))
    sides = draw(st.tuples(st.integers(min_side, min_side + 5), st.integers(min_side, 12)))
    shape = ((draw(st.integers(1, 3)),) if batch else ()) + channels + sides
    rng = np.random.default_rng(draw(SEEDS))
    u = rng.uniform(size=shape)
    kind = draw(st.sampled_from(["independent", "noisy", "same"]))
    v = {"independent": rng.uniform(size=shape), "noisy": 0.9 * u + 0.1 * rng.uniform(size=shape)}
    v = v.get(kind, u)
    width = high - low
    return low + width * u, low + width * v, (low, high)


LEVELS = st.one_of(st.integers(2, 300), st.sampled_from([2**20, 2**53]))
# the NMI family takes at most max(256, pixels) levels (estimators.nmi); these images are small
NMI_LEVELS = st.integers(2, 256)


# ---------------------------------------------------------------------------------------
# estimators.nmi
# ---------------------------------------------------------------------------------------


@covers(nmi.quantize)
@settings(max_examples=40, deadline=None)
@given(pair=image_pairs(), levels=LEVELS)
def test_quantize_gives_codes_in_range(pair, levels):
    x, _, value_range = pair
    codes = nmi.quantize(x, levels, value_range)
    assert codes.shape == x.shape and codes.dtype == np.int64
    assert codes.min() >= 0 and codes.max() <= levels - 1


@covers(nmi.nmi, nmi.quantized_mutual_information, nmi.adjusted_nmi)
@settings(max_examples=40, deadline=None)
@given(pair=image_pairs(), levels=NMI_LEVELS, average=st.sampled_from(nmi.AVERAGE_METHODS))
def test_nmi_family_is_finite_and_in_range(pair, levels, average):
    x, y, value_range = pair
    score = nmi.nmi(x, y, levels=levels, value_range=value_range, average=average)
    assert 0.0 <= score <= 1.0
    mutual = nmi.quantized_mutual_information(x, y, levels=levels, value_range=value_range)
    # I(U; V) <= min(H(U), H(V)) <= log(number of pixels); 1e-12 for summation rounding
    assert 0.0 <= mutual <= math.log(x.size) + 1e-12
    adjusted = nmi.adjusted_nmi(x, y, levels=levels, value_range=value_range)
    assert math.isfinite(adjusted) and adjusted <= 1.0 + 1e-9


@covers(nmi.nmi_chance_level, nmi.nmi_permutation_null)
@settings(max_examples=20, deadline=None)
@given(pair=image_pairs(), levels=NMI_LEVELS, seed=SEEDS)
def test_nmi_floors_are_finite_and_in_range(pair, levels, seed):
    x, y, value_range = pair
    chance = nmi.nmi_chance_level(x, levels=levels, value_range=value_range, n_draws=2, seed=seed)
    assert 0.0 <= chance <= 1.0
    null = nmi.nmi_permutation_null(
        x, y, levels=levels, value_range=value_range, n_permutations=3, seed=seed
    )
    assert 0.0 <= null.observed <= 1.0 and 0.0 <= null.null_mean <= 1.0
    assert math.isfinite(null.null_std) and null.null_std >= 0.0
    assert 0.25 <= null.p_value <= 1.0  # (1 + k) / (1 + 3)


# ---------------------------------------------------------------------------------------
# estimators.image
# ---------------------------------------------------------------------------------------


@covers(image.psnr)
@settings(max_examples=40, deadline=None)
@given(pair=image_pairs(batch=True), per_image=st.booleans())
def test_psnr_is_finite_unless_the_images_are_equal(pair, per_image):
    x, y, (low, high) = pair
    value = np.atleast_1d(image.psnr(x, y, data_range=high - low, per_image=per_image))
    rows = [(x, y)] if not per_image else list(zip(x, y, strict=True))
    for v, (a, b) in zip(value, rows, strict=True):
        assert v == math.inf if np.array_equal(a, b) else math.isfinite(v)


@covers(image.ssim)
@settings(max_examples=40, deadline=None)
@given(pair=image_pairs(batch=True, min_side=7), normalized=st.booleans())
def test_ssim_is_finite_and_in_range(pair, normalized):
    x, y, (low, high) = pair
    values = image.ssim(x, y, data_range=high - low, normalized=normalized, per_image=True)
    assert values.shape == (len(x),)
    lower = 0.0 if normalized else -1.0
    # local SSIM is a product of two terms in [-1, 1] up to rounding of the filtered sums
    assert np.all((values >= lower - 1e-9) & (values <= 1.0 + 1e-9))


@covers(image.phash, image.phash_similarity)
@settings(max_examples=30, deadline=None)
@given(pair=image_pairs(batch=True))
def test_phash_is_64_bits_and_similarity_in_range(pair):
    x, y, _ = pair
    assert image.phash(x[0]).shape == (64,)
    similarity = image.phash_similarity(x, y, per_image=True)
    assert np.all((similarity >= 0.0) & (similarity <= 1.0))


@covers(sift.sift_similarity)
@settings(max_examples=30, deadline=None)
@given(pair=image_pairs(batch=True, min_side=6))
def test_sift_similarity_is_in_unit_interval_or_undefined_with_a_reason(pair):
    x, y, (low, high) = pair
    for result in sift.sift_similarity(x, y, data_range=high - low, per_image=True):
        assert 0 <= result.good <= result.matched
        if result.defined:
            assert 0.0 <= result.value <= 1.0 and result.reason == ""
        else:
            assert result.value is None and result.reason.startswith("no SIFT keypoint")


@covers(image.inference_accuracy)
@settings(max_examples=20, deadline=None)
@given(pair=image_pairs(batch=True), seed=SEEDS)
def test_inference_accuracy_is_in_unit_interval(pair, seed):
    x, _, _ = pair
    labels = np.random.default_rng(seed).integers(0, 2, len(x))

    def classifier(batch):  # scores: the first two pixels of each image (finite data)
        return batch.reshape(len(batch), -1)[:, [0, -1]]

    accuracy = image.inference_accuracy(classifier, x, labels)
    assert 0.0 <= accuracy <= 1.0


@covers(image.match_reconstructions)
@settings(max_examples=30, deadline=None)
@given(pair=image_pairs(batch=True), score=st.sampled_from(image.MATCH_SCORES), seed=SEEDS)
def test_matching_is_a_permutation(pair, score, seed):
    x, y, _ = pair
    shuffled = y[np.random.default_rng(seed).permutation(len(y))]
    perm = image.match_reconstructions(x, shuffled, score=score)
    assert sorted(perm.tolist()) == list(range(len(x)))


@covers(image.score_reconstruction)
@settings(max_examples=20, deadline=None)
@given(pair=image_pairs(batch=True, min_side=7), levels=st.integers(2, 64), seed=SEEDS)
def test_score_reconstruction_is_finite_and_in_range(pair, levels, seed):
    x, y, value_range = pair
    x, y = x.reshape(len(x), -1, *x.shape[-2:]), y.reshape(len(y), -1, *y.shape[-2:])
    scores = image.score_reconstruction(
        x, y, levels=levels, value_range=value_range, chance_draws=1, seed=seed
    )
    for key in ("nmi", "nmi_chance", "ssim"):
        assert np.all((scores[key] >= 0.0) & (scores[key] <= 1.0 + 1e-9)), key
    matched = y[scores["assignment"]]
    for value, a, b in zip(scores["psnr"], x, matched, strict=True):
        assert value == math.inf if np.array_equal(a, b) else math.isfinite(value)


# ---------------------------------------------------------------------------------------
# estimators.ksg
# ---------------------------------------------------------------------------------------


@st.composite
def continuous_pairs(draw, *, n_min: int = 10, n_max: int = 60):
    """Dependent continuous samples, each variable scaled by 1e-150..1e150, maybe an outlier
    up to 1e150 times its scale (all ratios within 1e300, the documented domain)."""
    rng = np.random.default_rng(draw(SEEDS))
    n = draw(st.integers(n_min, n_max))
    dim_x, dim_y = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    x = rng.standard_normal((n, dim_x))
    y = x[:, :1] * draw(st.floats(0.0, 1.0)) + rng.standard_normal((n, dim_y))
    scaled = []
    for arr in (x, y):
        scale = draw(_log_uniform(-150, 150))
        arr = arr * scale
        if draw(st.booleans()):
            arr[0, 0] = scale * draw(_log_uniform(0, 150)) * draw(st.sampled_from([-1.0, 1.0]))
        scaled.append(arr)
    return scaled[0], scaled[1]


def _issue_pair(outlier: bool):
    """Issue 13's inputs: data scaled to 1e308 (MINE gave nan), or one 1e308 outlier among
    unit-scale data (KSG standardised the variable to zeros)."""
    rng = np.random.default_rng(13)
    x = rng.uniform(size=(50, 2))
    y = x[:, :1] + 0.1 * rng.uniform(size=(50, 1))
    if outlier:
        x[0, 0] = 1e308
        return x, y
    return 1e308 * x, 1e308 * y


def _assert_finite_estimate(est, n):
    assert all(math.isfinite(v) for v in (est.value, est.ci_low, est.ci_high))
    assert est.ci_low <= est.value <= est.ci_high and est.n_samples == n


@covers(ksg.KSG, samples.paired_samples)
@settings(max_examples=40, deadline=None)
@given(
    pair=continuous_pairs(),
    k=st.integers(1, 5),
    standardize=st.booleans(),
    transform=st.sampled_from(samples.TRANSFORMS),
    algorithm=st.sampled_from(ksg.ALGORITHMS),
    seed=SEEDS,
)
def test_ksg_is_finite_with_a_finite_interval(pair, k, standardize, transform, algorithm, seed):
    # negative values are reported (issue 14), so only finiteness and the ceiling hold:
    # n_x, n_y >= k - 1 bounds the estimate by psi(N) - psi(k)
    x, y = pair
    px, py = samples.paired_samples(x, y, func="test")
    assert px.shape[0] == py.shape[0] == len(x) and px.ndim == py.ndim == 2
    estimator = ksg.KSG(
        k=k, standardize=standardize, transform=transform, algorithm=algorithm, n_resamples=4
    )
    est = estimate_quietly(estimator, x, y, seed=seed)
    _assert_finite_estimate(est, len(x))
    assert est.value <= est.diagnostics["ceiling"] + 1e-12


def _outliers_apart(pair):
    """Swap y's first two samples: continuous_pairs puts both outliers in sample 0, and x and
    y dominated by one outlier in the same sample have a correlation 1 within float64,
    which GaussianMI refuses as singular (outside its domain; see test_closed_form)."""
    x, y = pair
    return x, y[np.r_[1, 0, 2 : len(y)]]


@covers(closed_form.GaussianMI, closed_form.gaussian_plugin_bias)
@settings(max_examples=40, deadline=None)
@given(
    pair=continuous_pairs().map(_outliers_apart),
    transform=st.sampled_from(samples.TRANSFORMS),
    bias_correct=st.booleans(),
    seed=SEEDS,
)
def test_gaussian_mi_is_finite_with_a_finite_interval(pair, transform, bias_correct, seed):
    x, y = pair
    estimator = closed_form.GaussianMI(
        transform=transform, bias_correct=bias_correct, n_resamples=10
    )
    est = estimate_quietly(estimator, x, y, seed=seed)
    _assert_finite_estimate(est, len(x))
    bias = closed_form.gaussian_plugin_bias(len(x), x.shape[1], y.shape[1])
    assert math.isfinite(bias) and bias > 0
    if not bias_correct:  # the plug-in of a covariance is non-negative up to rounding
        assert est.value >= -1e-9


@pytest.mark.parametrize(
    ("outlier", "transform"),
    [
        (True, "none"),
        (True, "asinh"),
        (True, "rank"),
        (False, "none"),
        (False, "asinh"),
        (False, "rank"),
    ],
)
@pytest.mark.parametrize("name", ["ksg", "gaussian"])
def test_issue_13_pairs_give_finite_estimates(outlier, transform, name):
    x, y = _issue_pair(outlier)
    estimator = {
        "ksg": lambda: ksg.KSG(transform=transform, n_resamples=4),
        "gaussian": lambda: closed_form.GaussianMI(transform=transform, n_resamples=10),
    }[name]()
    _assert_finite_estimate(estimate_quietly(estimator, x, y, seed=0), len(x))


# ---------------------------------------------------------------------------------------
# estimators.mi
# ---------------------------------------------------------------------------------------


@st.composite
def spd_matrices(draw, min_side: int = 1):
    """``s (A A^T + I / 10)``: symmetric positive definite, scale s from 1e-300 to 1e300."""
    side = draw(st.integers(min_side, 5))
    a = np.random.default_rng(draw(SEEDS)).standard_normal((side, side))
    return draw(_log_uniform(-300, 300)) * (a @ a.T + 0.1 * np.eye(side))


@covers(mi.gaussian_entropy, mi.gaussian_mutual_information)
@settings(max_examples=40, deadline=None)
@given(cov=spd_matrices(min_side=2), data=st.data())
def test_gaussian_closed_forms_are_finite(cov, data):
    assert math.isfinite(mi.gaussian_entropy(cov))
    dim_x = data.draw(st.integers(1, len(cov) - 1))
    value = mi.gaussian_mutual_information(cov, dim_x)
    # I >= 0 exactly; the three log-determinants round at ~1e-12 of their size
    assert math.isfinite(value) and value >= -1e-9


@covers(mi.correlation_for_mi, mi.correlated_gaussian_pair)
@settings(max_examples=30, deadline=None)
@given(
    dim=st.integers(1, 4),
    fraction=st.floats(0.0, 1.0),
    large=st.floats(0.0, 1e308),
    seed=SEEDS,
)
def test_gaussian_pair_generators_are_finite(dim, fraction, large, seed):
    assert 0.0 <= mi.correlation_for_mi(large, dim) <= 1.0
    x, y = mi.correlated_gaussian_pair(7, dim, fraction * mi.MAX_MI_PER_DIM * dim, seed=seed)
    assert x.shape == y.shape == (7, dim)
    assert np.isfinite(x).all() and np.isfinite(y).all()
    assert not np.array_equal(x, y)  # the noise survives rounding on the whole domain


@covers(mi.GaussianBatchChannel)
@settings(max_examples=30, deadline=None)
@given(
    batch_size=st.integers(1, 4),
    dims=st.tuples(st.integers(1, 4), st.integers(1, 4)),
    noise_std=st.one_of(_log_uniform(-300, 150), st.just(1e150)),
    seed=SEEDS,
)
def test_batch_channel_is_finite(batch_size, dims, noise_std, seed):
    channel = mi.GaussianBatchChannel(batch_size, *dims, noise_std, seed=seed)
    value = channel.mutual_information()
    assert math.isfinite(value) and value >= 0.0
    assert np.isfinite(channel.joint_covariance()).all()
    x, g = channel.sample(3, seed=seed)
    assert np.isfinite(x).all() and np.isfinite(g).all()


@covers(mi.gaussian_channel_bound)
@settings(max_examples=40, deadline=None)
@given(cov=spd_matrices(), noise_std=_log_uniform(-300, 300), rank_one=st.booleans())
def test_channel_bound_is_finite(cov, noise_std, rank_one):
    if rank_one:  # positive semi-definite and singular, at the same scale
        scale = np.abs(cov).max()
        row = cov[0] / scale
        cov = scale * np.outer(row, row)
    value = mi.gaussian_channel_bound(cov, noise_std)
    assert math.isfinite(value) and value >= 0.0


# ---------------------------------------------------------------------------------------
# estimators.neural
# ---------------------------------------------------------------------------------------

#: Critic scores: any finite float64 for the log-sum-exp bounds; within +-80 for the bounds
#: that exponentiate a score without a matching log (NWJ, JS, MINE's surrogate), where a
#: float32 critic's scores live (exp(80) ~ 5.5e34 is below float32's maximum).
ANY_SCORE = st.floats(-1e300, 1e300)
SCORE = st.floats(-80.0, 80.0)


def _scores(values):
    return torch.tensor(values, dtype=torch.float64)


@covers(objectives.dv_bound, objectives.smile_bound, objectives.log_mean_exp)
@settings(max_examples=40, deadline=None)
@given(
    t_joint=st.lists(ANY_SCORE, min_size=1, max_size=20),
    t_marginal=st.lists(ANY_SCORE, min_size=1, max_size=20),
    clip=st.floats(1e-3, 1e3),
)
def test_log_sum_exp_bounds_are_finite(t_joint, t_marginal, clip):
    joint, marginal = _scores(t_joint), _scores(t_marginal)
    # |mean| <= 1e300 and a log-mean-exp within [min, max] of its input: finite differences
    assert math.isfinite(objectives.dv_bound(joint, marginal))
    assert math.isfinite(objectives.smile_bound(joint, marginal, clip=clip))
    # a mean of exponentials lies between their extremes; log-sum-exp rounds to ~1e-16
    # relative to max(1, |t|) (log(n) is added and subtracted)
    lme = float(objectives.log_mean_exp(marginal))
    low, high = min(t_marginal), max(t_marginal)
    assert low - 1e-12 * max(1.0, abs(low)) <= lme <= high + 1e-12 * max(1.0, abs(high))


@covers(objectives.nwj_bound, objectives.js_objective, objectives.mine_surrogate)
@settings(max_examples=40, deadline=None)
@given(
    t_joint=st.lists(SCORE, min_size=1, max_size=20),
    t_marginal=st.lists(SCORE, min_size=1, max_size=20),
    average=st.one_of(st.none(), st.floats(-80.0, 80.0)),
)
def test_exponentiating_bounds_are_finite_on_float32_scores(t_joint, t_marginal, average):
    joint, marginal = _scores(t_joint), _scores(t_marginal)
    assert math.isfinite(objectives.nwj_bound(joint, marginal))
    assert math.isfinite(objectives.js_objective(joint, marginal))
    log_average = None if average is None else torch.tensor(average, dtype=torch.float64)
    surrogate, updated = objectives.mine_surrogate(joint, marginal, log_average, rate=0.1)
    assert math.isfinite(surrogate) and math.isfinite(updated)


@covers(objectives.infonce_bound, objectives.off_diagonal)
@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 8), data=st.data())
def test_infonce_is_finite_and_at_most_log_n(n, data):
    scores = _scores(data.draw(st.lists(ANY_SCORE, min_size=n * n, max_size=n * n))).reshape(n, n)
    value = float(objectives.infonce_bound(scores))
    assert math.isfinite(value) and value <= math.log(n) + 1e-9
    assert objectives.off_diagonal(scores).shape == (n * (n - 1),)


@covers(interval.cross_fit_interval)
@settings(max_examples=40, deadline=None)
@given(
    values=st.lists(st.floats(-1e150, 1e150), min_size=1, max_size=6),
    data=st.data(),
    confidence=st.floats(0.5, 0.999),
)
def test_cross_fit_interval_is_finite_and_ordered(values, data, confidence):
    k = len(values)
    ses = data.draw(st.lists(st.floats(0.0, 1e150), min_size=k, max_size=k))
    gaps = data.draw(
        st.one_of(st.none(), st.lists(st.floats(-1e150, 1e150), min_size=k, max_size=k))
    )
    value, low, high, _ = interval.cross_fit_interval(values, ses, confidence=confidence, gaps=gaps)
    assert all(math.isfinite(v) for v in (value, low, high))
    assert low <= value <= high


NEURAL_TINY = neural.TrainingConfig(max_steps=3, batch_size=16, eval_every=1, n_fits=2)
CONCAT_ESTIMATORS = [neural.MINE, neural.NWJ, neural.InfoNCE, neural.SMILE]


@covers(*CONCAT_ESTIMATORS)
@settings(max_examples=8, deadline=None)
@given(
    pair=continuous_pairs(n_min=60, n_max=80),
    cls=st.sampled_from(CONCAT_ESTIMATORS),
    transform=st.sampled_from(samples.TRANSFORMS),
    seed=SEEDS,
)
@example(pair=_issue_pair(outlier=False), cls=neural.MINE, transform="none", seed=0)
@example(pair=_issue_pair(outlier=True), cls=neural.NWJ, transform="none", seed=0)
def test_concat_estimators_are_finite(pair, cls, transform, seed):
    x, y = pair
    estimator = cls(hidden=(4,), transform=transform, training=NEURAL_TINY, device="cpu")
    est = estimate_quietly(estimator, x, y, seed=seed)
    _assert_finite_estimate(est, len(x))
    assert all(np.isfinite(est.trace[key]).all() for key in ("train", "validation"))


@covers(neural.HMINE)
@settings(max_examples=4, deadline=None)
@given(pair=continuous_pairs(n_min=60, n_max=80), seed=SEEDS)
@example(pair=_issue_pair(outlier=False), seed=0)
def test_hmine_is_finite(pair, seed):
    x, y = pair
    hmine = neural.HMINE(
        block_hidden=(4,), embedding_dim=2, mix_hidden=(4,), training=NEURAL_TINY, device="cpu"
    )
    est = estimate_quietly(hmine, x[:, :, None], y, seed=seed)  # (n, B = dim_x, 1)
    _assert_finite_estimate(est, len(x))


# ---------------------------------------------------------------------------------------
# estimators.samples, estimators.estimate
# ---------------------------------------------------------------------------------------


@st.composite
def scaled_samples(draw):
    """``(n, d)`` samples of one magnitude (1e-300 to 1e300): normal, Cauchy, or with a
    1e308 outlier."""
    scale = draw(_log_uniform(-300, 300))
    n, dim = draw(st.integers(3, 60)), draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(SEEDS))
    kind = draw(st.sampled_from(["normal", "cauchy", "outlier"]))
    arr = rng.standard_cauchy((n, dim)) if kind == "cauchy" else rng.standard_normal((n, dim))
    arr = arr / np.abs(arr).max() * scale
    if kind == "outlier":
        arr[0, 0] = -1e308
    return arr, kind


@covers(samples.transform_samples)
@settings(max_examples=60, deadline=None)
@given(drawn=scaled_samples(), transform=st.sampled_from(samples.TRANSFORMS))
def test_transforms_are_finite_and_monotone(drawn, transform):
    arr, _ = drawn
    out = samples.transform_samples(arr, transform, func="t")
    assert out.shape == arr.shape and np.isfinite(out).all()
    for j in range(arr.shape[1]):
        order = np.argsort(arr[:, j], kind="stable")
        assert np.all(np.diff(out[order, j]) >= 0)


@covers(samples.heavy_tail_warnings)
@settings(max_examples=60, deadline=None)
@given(drawn=scaled_samples())
def test_heavy_tail_check_is_finite_and_flags_outliers(drawn):
    arr, kind = drawn
    messages = samples.heavy_tail_warnings("m", {"x": arr})
    assert all(isinstance(m, str) and "nan" not in m and "inf" not in m for m in messages)
    if kind == "outlier":
        assert len(messages) == 1


@covers(estimate.make_estimate)
@settings(max_examples=60, deadline=None)
@given(
    value=st.floats(-1e300, 1e300),
    low=st.floats(-1e300, 1e300),
    width=st.floats(0, 1e300),
)
def test_make_estimate_contains_its_value(value, low, width):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", estimate.MIWarning)
        est = estimate.make_estimate("m", value, (low, low + width), confidence=0.9, n_samples=3)
    assert est.ci_low <= est.value <= est.ci_high
    assert any("negative" in m for m in est.warnings) == (value < 0)
    assert math.isfinite(est.bits)


#: Per-target values of 1 to 4 seeds, 1 to 5 targets each, over the whole float range.
REPLICATES = st.lists(
    st.lists(st.floats(-1e300, 1e300), min_size=1, max_size=5), min_size=1, max_size=4
)


@covers(replicates.seed_interval, replicates.paired_seed_comparison, replicates.claim_verdict)
@settings(max_examples=60, deadline=None)
@given(a=REPLICATES, b=REPLICATES, claim=st.floats(-1e300, 1e300))
def test_replicate_intervals_are_ordered_around_the_mean_and_give_a_verdict(a, b, claim):
    """The mean lies in its interval (when finite: a spread of 1e300-size values may
    overflow to inf, which the interval then says), and every verdict is one of the
    documented ones."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # overflow of 1e300-size spreads
        r = replicates.seed_interval(dict(enumerate(a)))
        paired = replicates.paired_seed_comparison(dict(enumerate(a)), dict(enumerate(b)))
    assert not math.isnan(r.mean)
    for result in (r, paired.interval):
        if result.low is not None and math.isfinite(result.low + result.high):
            assert result.low <= result.mean <= result.high
    assert paired.p_value is None or (0.0 <= paired.p_value <= 1.0 or math.isnan(paired.p_value))
    if r.low is not None and math.isfinite(r.low) and math.isfinite(r.high):
        for direction in replicates.DIRECTIONS:
            verdict = replicates.claim_verdict(r.low, r.high, claim, direction=direction)
            assert verdict in {"holds", "fails", replicates.NOT_RESOLVED} | {
                "above the claim",
                "below the claim",
            }
