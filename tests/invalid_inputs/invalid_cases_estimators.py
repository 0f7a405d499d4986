"""Invalid inputs of estimators: rows of test_invalid_inputs.

Every public function of ``estimators`` is called with wrong types, NaN / inf, values out
of range, float extremes (1e308, 1e-300), wrong shapes and dtypes, mismatched shapes,
empty or too few samples, images outside their value range, and bad k / levels / device.
Issue 13's measured cases are here: 0-255 images on the default [0, 1] range (NMI 1.0 and
a silent clip before), ``ssim(per_image=True)`` of one 8x8 image (two values before), and
mismatched shapes (numpy's broadcast message before).
"""

import numpy as np
import torch
from invalid_case import ApiCase, CliCase

from pruneleak.estimators.closed_form import GaussianMI, gaussian_plugin_bias
from pruneleak.estimators.device import check_device, resolve_device
from pruneleak.estimators.image import (
    inference_accuracy,
    match_reconstructions,
    phash,
    phash_similarity,
    psnr,
    score_reconstruction,
    ssim,
)
from pruneleak.estimators.ksg import KSG
from pruneleak.estimators.mi import (
    GaussianBatchChannel,
    correlated_gaussian_pair,
    correlation_for_mi,
    gaussian_channel_bound,
    gaussian_entropy,
    gaussian_mutual_information,
)
from pruneleak.estimators.neural import (
    HMINE,
    MINE,
    SMILE,
    ConcatCritic,
    HierarchicalCritic,
    InfoNCE,
    TrainingConfig,
)
from pruneleak.estimators.neural.objectives import dv_bound, infonce_bound
from pruneleak.estimators.nmi import (
    adjusted_nmi,
    nmi,
    nmi_chance_level,
    nmi_permutation_null,
    quantize,
    quantized_mutual_information,
)

IMAGE = np.linspace(0.0, 1.0, 64).reshape(8, 8)  # one 8x8 image on [0, 1]
OTHER = IMAGE[::-1].copy()
IMAGE_8BIT = np.round(255 * IMAGE)  # the same image as 0-255 values
BATCH = np.stack([IMAGE, OTHER, IMAGE.T])[:, None]  # (3, 1, 8, 8)
BATCH_8BIT = np.round(255 * BATCH)


def _samples(n, dim=1, seed=0):
    return np.random.default_rng(seed).normal(size=(n, dim))


def _three_classes(batch):
    return np.tile([1.0, 0.0, 0.0], (len(batch), 1))


TINY = TrainingConfig(max_steps=2, batch_size=16, n_fits=1)

CASES: list[ApiCase | CliCase] = [
    # --- estimators.nmi ---------------------------------------------------------------
    ApiCase(
        "estimators-nmi-8bit-images-on-unit-range",
        lambda tmp: nmi(IMAGE_8BIT, np.round(255 * OTHER)),
        ["'original'", "value_range=[0, 1]", "Got values in [0, 255]"],
    ),
    ApiCase(
        "estimators-nmi-negative-values",
        lambda tmp: nmi(IMAGE - 0.5, IMAGE),
        ["'original'", "value_range=[0, 1]", "[-0.5, 0.5]"],
    ),
    ApiCase(
        "estimators-nmi-reconstruction-overshoots",
        lambda tmp: nmi(IMAGE, 1.2 * IMAGE),
        ["'reconstruction'", "value_range=[0, 1]", "[0, 1.2]"],
    ),
    ApiCase(
        "estimators-nmi-mismatched-shapes",
        lambda tmp: nmi(IMAGE, IMAGE[:, :7]),
        ["'original'", "'reconstruction'", "(8, 8)", "(8, 7)"],
    ),
    ApiCase(
        "estimators-nmi-nan-pixel",
        lambda tmp: nmi(np.where(IMAGE > 0.5, np.nan, IMAGE), IMAGE),
        ["'original'", "finite", "32 NaN or infinite"],
    ),
    ApiCase(
        "estimators-nmi-inf-reconstruction",
        lambda tmp: nmi(IMAGE, np.full((8, 8), np.inf)),
        ["'reconstruction'", "finite"],
    ),
    ApiCase(
        "estimators-nmi-string-data",
        lambda tmp: nmi(["a", "b"], ["a", "b"]),
        ["'original'", "real numbers", "<U1"],
    ),
    ApiCase(
        "estimators-nmi-complex-data",
        lambda tmp: nmi(IMAGE, IMAGE + 0.5j),
        ["'reconstruction'", "real numbers", "complex128"],
    ),
    ApiCase(
        "estimators-nmi-ragged-data",
        lambda tmp: nmi([[0.1, 0.2], [0.3]], [[0.1, 0.2], [0.3]]),
        ["'original'", "rectangular", "ragged"],
    ),
    ApiCase(
        "estimators-nmi-empty",
        lambda tmp: nmi([], []),
        ["'original'", "empty", "(0,)"],
    ),
    ApiCase(
        "estimators-nmi-one-level",
        lambda tmp: nmi(IMAGE, OTHER, levels=1),
        ["'levels'", "[2, 9007199254740992]", "Got 1"],
    ),
    ApiCase(
        "estimators-nmi-levels-beyond-float64-integers",
        lambda tmp: nmi(IMAGE, OTHER, levels=2**62),
        ["'levels'", "[2, 9007199254740992]", "4611686018427387904"],
    ),
    ApiCase(
        "estimators-nmi-fractional-levels",
        lambda tmp: nmi(IMAGE, OTHER, levels=2.5),
        ["'levels'", "integer", "2.5"],
    ),
    ApiCase(
        "estimators-nmi-inverted-value-range",
        lambda tmp: nmi(IMAGE, OTHER, value_range=(1.0, 0.0)),
        ["'value_range[1]'", "(1, inf)", "0.0"],
    ),
    ApiCase(
        "estimators-nmi-value-range-width-overflows",
        lambda tmp: nmi(IMAGE, OTHER, value_range=(-1e308, 1e308)),
        ["'value_range'", "finite float", "(-1e+308, 1e+308)"],
    ),
    ApiCase(
        "estimators-nmi-value-range-not-a-pair",
        lambda tmp: nmi(IMAGE, OTHER, value_range=1.0),
        ["'value_range'", "pair (low, high)", "1.0"],
    ),
    ApiCase(
        "estimators-nmi-value-range-nan",
        lambda tmp: nmi(IMAGE, OTHER, value_range=(0.0, float("nan"))),
        ["'value_range[1]'", "nan"],
    ),
    ApiCase(
        "estimators-nmi-unknown-average",
        lambda tmp: nmi(IMAGE, OTHER, average="mean"),
        ["'average'", "'arithmetic'", "'mean'"],
    ),
    ApiCase(
        "estimators-quantize-8bit-on-unit-range",
        lambda tmp: quantize(np.arange(256, dtype=np.uint8)),
        ["'x'", "value_range=[0, 1]", "[0, 255]"],
    ),
    ApiCase(
        "estimators-quantized-mi-mismatched-shapes",
        lambda tmp: quantized_mutual_information(IMAGE, IMAGE.ravel()),
        ["'original'", "'reconstruction'", "(8, 8)", "(64,)"],
    ),
    ApiCase(
        "estimators-adjusted-nmi-average-not-a-string",
        lambda tmp: adjusted_nmi(IMAGE, OTHER, average=3),
        ["'average'", "Got 3"],
    ),
    ApiCase(
        "estimators-adjusted-nmi-1e308-on-unit-range",
        lambda tmp: adjusted_nmi(1e308 * IMAGE, OTHER),
        ["'original'", "value_range=[0, 1]", "1e+308"],
    ),
    ApiCase(
        "estimators-nmi-chance-negative-seed",
        lambda tmp: nmi_chance_level(IMAGE, seed=-1),
        ["'seed'", "[0, 9223372036854775807]", "-1"],
    ),
    ApiCase(
        "estimators-nmi-chance-fractional-seed",
        lambda tmp: nmi_chance_level(IMAGE, seed=1.5),
        ["'seed'", "integer", "1.5"],
    ),
    ApiCase(
        "estimators-nmi-chance-zero-draws",
        lambda tmp: nmi_chance_level(IMAGE, n_draws=0),
        ["'n_draws'", "[1, inf)", "Got 0"],
    ),
    ApiCase(
        "estimators-nmi-chance-8bit-original",
        lambda tmp: nmi_chance_level(IMAGE_8BIT),
        ["'original'", "value_range=[0, 1]", "[0, 255]"],
    ),
    ApiCase(
        "estimators-nmi-permutation-zero-permutations",
        lambda tmp: nmi_permutation_null(IMAGE, OTHER, n_permutations=0),
        ["'n_permutations'", "[1, inf)", "Got 0"],
    ),
    ApiCase(
        "estimators-nmi-permutation-string-seed",
        lambda tmp: nmi_permutation_null(IMAGE, OTHER, seed="7"),
        ["'seed'", "integer", "'7'"],
    ),
    # --- estimators.image --------------------------------------------------------------
    ApiCase(
        "estimators-psnr-8bit-images-default-data-range",
        lambda tmp: psnr(IMAGE_8BIT, np.round(255 * OTHER)),
        ["'original'", "'reconstruction'", "data_range=1", "[0, 255]"],
    ),
    ApiCase(
        "estimators-psnr-zero-data-range",
        lambda tmp: psnr(IMAGE, OTHER, data_range=0.0),
        ["'data_range'", "(0, inf)", "0.0"],
    ),
    ApiCase(
        "estimators-psnr-infinite-data-range",
        lambda tmp: psnr(IMAGE, OTHER, data_range=float("inf")),
        ["'data_range'", "(0, inf)", "inf"],
    ),
    ApiCase(
        "estimators-psnr-string-data-range",
        lambda tmp: psnr(IMAGE, OTHER, data_range="255"),
        ["'data_range'", "real number", "'255'"],
    ),
    ApiCase(
        "estimators-psnr-string-per-image",
        lambda tmp: psnr(IMAGE, OTHER, per_image="no"),
        ["'per_image'", "True or False", "'no'"],
    ),
    ApiCase(
        "estimators-psnr-per-image-without-batch-axis",
        lambda tmp: psnr(IMAGE[0], OTHER[0], per_image=True),
        ["per_image=True", "(8,)"],
    ),
    ApiCase(
        "estimators-psnr-mismatched-shapes",
        lambda tmp: psnr(BATCH, BATCH[:2]),
        ["'original'", "'reconstruction'", "(3, 1, 8, 8)", "(2, 1, 8, 8)"],
    ),
    ApiCase(
        "estimators-ssim-per-image-on-one-image",
        lambda tmp: ssim(IMAGE, OTHER, per_image=True),
        ["(B, [C,] H, W)", "(8, 8)"],
    ),
    ApiCase(
        "estimators-ssim-image-smaller-than-window",
        lambda tmp: ssim(IMAGE[:5, :5], OTHER[:5, :5]),
        ["win_size=7", "(5, 5)"],
    ),
    ApiCase(
        "estimators-ssim-even-window",
        lambda tmp: ssim(IMAGE, OTHER, win_size=4),
        ["'win_size'", "odd", "4"],
    ),
    ApiCase(
        "estimators-ssim-boolean-window",
        lambda tmp: ssim(IMAGE, OTHER, win_size=True),
        ["'win_size'", "integer", "True"],
    ),
    ApiCase(
        "estimators-ssim-1e308-image-default-data-range",
        lambda tmp: ssim(np.full((8, 8), 1e308), OTHER),
        ["'original'", "data_range=1", "1e+308"],
    ),
    ApiCase(
        "estimators-ssim-string-normalized",
        lambda tmp: ssim(IMAGE, OTHER, normalized="yes"),
        ["'normalized'", "True or False", "'yes'"],
    ),
    ApiCase(
        "estimators-ssim-four-axes-without-batch",
        lambda tmp: ssim(BATCH, BATCH),
        ["([C,] H, W)", "(3, 1, 8, 8)"],
    ),
    ApiCase(
        "estimators-phash-one-dimensional",
        lambda tmp: phash(np.zeros(5)),
        ["'image'", "(H, W) or (C, H, W)", "(5,)"],
    ),
    ApiCase(
        "estimators-phash-nan",
        lambda tmp: phash(np.where(IMAGE > 0.9, np.nan, IMAGE)),
        ["'image'", "finite"],
    ),
    ApiCase(
        "estimators-phash-similarity-per-image-on-one-image",
        lambda tmp: phash_similarity(IMAGE, OTHER, per_image=True),
        ["phash_similarity", "(B, [C,] H, W) with per_image=True", "(8, 8)"],
    ),
    ApiCase(
        "estimators-inference-accuracy-fractional-label",
        lambda tmp: inference_accuracy(_three_classes, BATCH, [0, 1.7, 2]),
        ["'labels'", "integers in [0, 2]", "1.7"],
    ),
    ApiCase(
        "estimators-inference-accuracy-label-beyond-classes",
        lambda tmp: inference_accuracy(_three_classes, BATCH, [0, 3, 2]),
        ["'labels'", "integers in [0, 2]", "Got 3"],
    ),
    ApiCase(
        "estimators-inference-accuracy-negative-label",
        lambda tmp: inference_accuracy(_three_classes, BATCH, [0, -1, 2]),
        ["'labels'", "integers in [0, 2]", "Got -1"],
    ),
    ApiCase(
        "estimators-inference-accuracy-classifier-not-callable",
        lambda tmp: inference_accuracy(3, BATCH, [0, 1, 2]),
        ["'classifier'", "callable", "int"],
    ),
    ApiCase(
        "estimators-inference-accuracy-scalar-scores",
        lambda tmp: inference_accuracy(lambda batch: 1.0, BATCH, [0, 1, 2]),
        ["(B, n_classes)", "B=3", "shape ()"],
    ),
    ApiCase(
        "estimators-inference-accuracy-no-classes",
        lambda tmp: inference_accuracy(lambda batch: np.zeros((len(batch), 0)), BATCH, [0, 1, 2]),
        ["'classifier output'", "empty", "(3, 0)"],
    ),
    ApiCase(
        "estimators-inference-accuracy-batch-mismatch",
        lambda tmp: inference_accuracy(_three_classes, BATCH, [0, 1]),
        ["'reconstructions'", "'labels'", "(3, 1, 8, 8)", "(2,)"],
    ),
    ApiCase(
        "estimators-match-unknown-score",
        lambda tmp: match_reconstructions(BATCH, BATCH, score="l1"),
        ["'score'", "'mse', 'psnr'", "'l1'"],
    ),
    ApiCase(
        "estimators-match-mismatched-batches",
        lambda tmp: match_reconstructions(BATCH, BATCH[:2]),
        ["'originals'", "'reconstructions'", "(3, 1, 8, 8)", "(2, 1, 8, 8)"],
    ),
    ApiCase(
        "estimators-score-reconstruction-8bit-on-unit-range",
        lambda tmp: score_reconstruction(BATCH_8BIT, BATCH_8BIT[::-1]),
        ["'originals'", "value_range=[0, 1]", "[0, 255]"],
    ),
    ApiCase(
        "estimators-score-reconstruction-overshooting-reconstruction",
        lambda tmp: score_reconstruction(BATCH, 1.5 * BATCH),
        ["'reconstructions'", "value_range=[0, 1]", "[0, 1.5]"],
    ),
    ApiCase(
        "estimators-score-reconstruction-unknown-match",
        lambda tmp: score_reconstruction(BATCH, BATCH, match="l1"),
        ["'match'", "'mse', 'psnr', None", "'l1'"],
    ),
    ApiCase(
        "estimators-score-reconstruction-not-a-batch",
        lambda tmp: score_reconstruction(IMAGE, OTHER),
        ["'originals'", "(B, H, W) or (B, C, H, W)", "(8, 8)"],
    ),
    ApiCase(
        "estimators-score-reconstruction-zero-chance-draws",
        lambda tmp: score_reconstruction(BATCH, BATCH, chance_draws=0),
        ["'chance_draws'", "[1, inf)", "Got 0"],
    ),
    ApiCase(
        "estimators-score-reconstruction-seed-beyond-64-bits",
        lambda tmp: score_reconstruction(BATCH, BATCH, seed=2**70),
        ["'seed'", "[0, 9223372036854775807]", "1180591620717411303424"],
    ),
    # --- estimators.ksg ----------------------------------------------------------------
    ApiCase(
        "estimators-ksg-k-not-below-sample-count",
        lambda tmp: KSG(k=5).estimate(_samples(5), _samples(5, seed=1)),
        ["'k'", "[1, 4]", "Got 5"],
    ),
    ApiCase(
        "estimators-ksg-zero-k",
        lambda tmp: KSG(k=0),
        ["'k'", "[1, inf)", "Got 0"],
    ),
    ApiCase(
        "estimators-ksg-float-k",
        lambda tmp: KSG(k=3.0),
        ["'k'", "integer", "3.0"],
    ),
    ApiCase(
        "estimators-ksg-sample-count-mismatch",
        lambda tmp: KSG().estimate(_samples(10), _samples(9, seed=1)),
        ["'x'", "'y'", "same number of samples", "10 and 9"],
    ),
    ApiCase(
        "estimators-ksg-constant-x",
        lambda tmp: KSG().estimate(np.ones(20), _samples(20)),
        ["'x'", "constant"],
    ),
    ApiCase(
        "estimators-ksg-scalar-input",
        lambda tmp: KSG().estimate(1.0, 2.0),
        ["'x'", "(n, ...)", "scalar"],
    ),
    ApiCase(
        "estimators-ksg-discrete-duplicates",
        lambda tmp: KSG().estimate(np.repeat([0.0, 1.0], 5), np.repeat([0.0, 1.0], 5)),
        ["'x'", "'y'", "k=3 or more exact duplicates"],
    ),
    ApiCase(
        "estimators-ksg-string-standardize",
        lambda tmp: KSG(standardize="no"),
        ["'standardize'", "True or False", "'no'"],
    ),
    ApiCase(
        "estimators-ksg-inf-in-y",
        lambda tmp: KSG().estimate(_samples(20), np.r_[_samples(19)[:, 0], np.inf]),
        ["'y'", "finite", "1 NaN or infinite"],
    ),
    ApiCase(
        "estimators-ksg-one-sample",
        lambda tmp: KSG().estimate([1.0], [2.0]),
        ["'x'", "'y'", "at least 2 samples", "Got 1"],
    ),
    ApiCase(
        "estimators-ksg-unknown-transform",
        lambda tmp: KSG(transform="log"),
        ["'transform'", "'none', 'asinh', 'rank'", "'log'"],
    ),
    ApiCase(
        "estimators-ksg-unknown-interval",
        lambda tmp: KSG(interval="bootstrap"),
        ["'interval'", "'half-sampling', 'none'", "'bootstrap'"],
    ),
    ApiCase(
        "estimators-ksg-one-resample",
        lambda tmp: KSG(n_resamples=1),
        ["'n_resamples'", "[2, 10000]", "Got 1"],
    ),
    ApiCase(
        "estimators-ksg-float-resamples",
        lambda tmp: KSG(n_resamples=20.0),
        ["'n_resamples'", "integer", "20.0"],
    ),
    ApiCase(
        "estimators-ksg-confidence-one",
        lambda tmp: KSG(confidence=1.0),
        ["'confidence'", "(0, 1)", "1.0"],
    ),
    ApiCase(
        "estimators-ksg-confidence-nan",
        lambda tmp: KSG(confidence=float("nan")),
        ["'confidence'", "(0, 1)", "nan"],
    ),
    ApiCase(
        "estimators-ksg-unknown-algorithm",
        lambda tmp: KSG(algorithm="ball_tree"),
        ["'algorithm'", "'auto', 'tree', 'brute'", "'ball_tree'"],
    ),
    ApiCase(
        "estimators-ksg-negative-seed",
        lambda tmp: KSG().estimate(_samples(20), _samples(20, seed=1), seed=-1),
        ["'seed'", "[0, 9223372036854775807]", "Got -1"],
    ),
    ApiCase(
        "estimators-ksg-positional-setting",
        lambda tmp: KSG(3),
        ["positional"],
        TypeError,
    ),
    # --- estimators.closed_form --------------------------------------------------------
    ApiCase(
        "estimators-gaussian-mi-unknown-transform",
        lambda tmp: GaussianMI(transform="copula"),
        ["'transform'", "'none', 'asinh', 'rank'", "'copula'"],
    ),
    ApiCase(
        "estimators-gaussian-mi-confidence-zero",
        lambda tmp: GaussianMI(confidence=0),
        ["'confidence'", "(0, 1)", "0"],
    ),
    ApiCase(
        "estimators-gaussian-mi-one-resample",
        lambda tmp: GaussianMI(n_resamples=1),
        ["'n_resamples'", "[2, 100000]", "Got 1"],
    ),
    ApiCase(
        "estimators-gaussian-mi-string-bias-correct",
        lambda tmp: GaussianMI(bias_correct="yes"),
        ["'bias_correct'", "True or False", "'yes'"],
    ),
    ApiCase(
        "estimators-gaussian-mi-fewer-samples-than-dimensions",
        lambda tmp: GaussianMI().estimate(_samples(4, dim=2), _samples(4, dim=2, seed=1)),
        ["'x'", "'y'", "N > dim_x + dim_y = 4", "Got N = 4"],
    ),
    ApiCase(
        "estimators-gaussian-mi-singular-covariance",
        lambda tmp: GaussianMI().estimate(
            np.hstack([_samples(50), 2.0 * _samples(50)]), _samples(50, seed=1)
        ),
        ["'x'", "'y'", "singular sample covariance", "linear function"],
    ),
    ApiCase(
        "estimators-gaussian-mi-nan-in-x",
        lambda tmp: GaussianMI().estimate(np.r_[_samples(19)[:, 0], np.nan], _samples(20)),
        ["'x'", "finite", "1 NaN or infinite"],
    ),
    ApiCase(
        "estimators-gaussian-mi-seed-beyond-64-bits",
        lambda tmp: GaussianMI().estimate(_samples(20), _samples(20, seed=1), seed=2**70),
        ["'seed'", "[0, 9223372036854775807]", "1180591620717411303424"],
    ),
    ApiCase(
        "estimators-gaussian-plugin-bias-too-few-samples",
        lambda tmp: gaussian_plugin_bias(5, 2, 3),
        ["'n'", "[6, inf)", "Got 5"],
    ),
    ApiCase(
        "estimators-gaussian-plugin-bias-zero-dimension",
        lambda tmp: gaussian_plugin_bias(100, 0, 3),
        ["'dim_x'", "[1, inf)", "Got 0"],
    ),
    # --- estimators.mi -----------------------------------------------------------------
    ApiCase(
        "estimators-gaussian-entropy-indefinite",
        lambda tmp: gaussian_entropy([[1.0, 2.0], [2.0, 1.0]]),
        ["'cov'", "positive definite", "-1.0"],
    ),
    ApiCase(
        "estimators-gaussian-entropy-tiny-asymmetric",
        lambda tmp: gaussian_entropy([[1e-20, 1e-14], [0.0, 1e-20]]),
        ["'cov'", "symmetric", "1e-14"],
    ),
    ApiCase(
        "estimators-gaussian-entropy-not-square",
        lambda tmp: gaussian_entropy(np.ones((2, 3))),
        ["'cov'", "square", "(2, 3)"],
    ),
    ApiCase(
        "estimators-gaussian-mi-one-by-one",
        lambda tmp: gaussian_mutual_information([[1.0]], 1),
        ["'cov'", "at least 2 x 2", "(1, 1)"],
    ),
    ApiCase(
        "estimators-gaussian-mi-dim-x-too-large",
        lambda tmp: gaussian_mutual_information(np.eye(3), 3),
        ["'dim_x'", "[1, 2]", "Got 3"],
    ),
    ApiCase(
        "estimators-correlation-for-negative-mi",
        lambda tmp: correlation_for_mi(-0.1, 3),
        ["'mi'", "[0, inf)", "-0.1"],
    ),
    ApiCase(
        "estimators-correlated-pair-mi-beyond-float64",
        lambda tmp: correlated_gaussian_pair(10, 1, 40.0),
        ["'mi'", "[0, 30]", "40.0"],
    ),
    ApiCase(
        "estimators-correlated-pair-negative-seed",
        lambda tmp: correlated_gaussian_pair(10, 1, 1.0, seed=-1),
        ["'seed'", "[0, 9223372036854775807]", "-1"],
    ),
    ApiCase(
        "estimators-batch-channel-noise-std-1e308",
        lambda tmp: GaussianBatchChannel(2, 2, 2, 1e308),
        ["'noise_std'", "(0, 1e+150]", "1e+308"],
    ),
    ApiCase(
        "estimators-batch-channel-mixing-too-large",
        lambda tmp: GaussianBatchChannel(2, 10**6, 10**6, 1.0),
        ["mixing matrix", "(1000000, 1000000)", "GiB"],
    ),
    ApiCase(
        "estimators-batch-channel-joint-covariance-too-large",
        lambda tmp: GaussianBatchChannel(1000, 100, 10, 1.0).joint_covariance(),
        ["joint covariance", "(100010, 100010)", "GiB"],
    ),
    ApiCase(
        "estimators-batch-channel-sample-string-seed",
        lambda tmp: GaussianBatchChannel(2, 2, 2, 1.0).sample(3, seed="x"),
        ["'seed'", "GaussianBatchChannel.sample", "'x'"],
    ),
    ApiCase(
        "estimators-channel-bound-indefinite",
        lambda tmp: gaussian_channel_bound([[1e-20, 0.0], [0.0, -1e-12]], 1.0),
        ["'signal_cov'", "semi-definite", "-1e-12"],
    ),
    ApiCase(
        "estimators-channel-bound-zero-noise",
        lambda tmp: gaussian_channel_bound([[1.0]], 0.0),
        ["'noise_std'", "(0, inf)", "0.0"],
    ),
    # --- estimators.neural -------------------------------------------------------------
    ApiCase(
        "estimators-dv-bound-not-a-tensor",
        lambda tmp: dv_bound([1.0, 2.0], torch.tensor([0.0])),
        ["'t_joint'", "floating-point torch.Tensor", "list"],
    ),
    ApiCase(
        "estimators-dv-bound-empty-marginal",
        lambda tmp: dv_bound(torch.tensor([1.0]), torch.tensor([])),
        ["'t_marginal'", "empty"],
    ),
    ApiCase(
        "estimators-infonce-bound-not-square",
        lambda tmp: infonce_bound(torch.zeros(3, 4)),
        ["'scores'", "square", "(3, 4)"],
    ),
    ApiCase(
        "estimators-mine-training-not-a-config",
        lambda tmp: MINE(training="fast"),
        ["'training'", "TrainingConfig", "str"],
    ),
    ApiCase(
        "estimators-mine-hidden-not-a-sequence",
        lambda tmp: MINE(hidden=5),
        ["'hidden'", "sequence of layer widths", "5"],
    ),
    ApiCase(
        "estimators-mine-unknown-transform",
        lambda tmp: MINE(transform="log"),
        ["'transform'", "'rank'", "'log'"],
    ),
    ApiCase(
        "estimators-mine-ema-rate-zero",
        lambda tmp: MINE(ema_rate=0.0),
        ["'ema_rate'", "(0, 1]", "0.0"],
    ),
    ApiCase(
        "estimators-smile-zero-clip",
        lambda tmp: SMILE(clip=0.0),
        ["'clip'", "(0, inf)", "0.0"],
    ),
    ApiCase(
        "estimators-critic-too-large",
        lambda tmp: ConcatCritic(2, 2, hidden=(10**6, 10**6)),
        ["1000007000001 parameters", "268435456"],
    ),
    ApiCase(
        "estimators-infonce-minibatch-too-large",
        lambda tmp: InfoNCE(hidden=(4096,), training=TrainingConfig(batch_size=8192)),
        ["'batch_size'", "'hidden'", "274877906944"],
    ),
    ApiCase(
        "estimators-mine-negative-seed",
        lambda tmp: MINE(training=TINY).estimate(_samples(64), _samples(64, seed=1), seed=-1),
        ["'seed'", "[0, 9223372036854775807]", "-1"],
    ),
    ApiCase(
        "estimators-mine-unknown-device",
        lambda tmp: MINE(device="gpu"),
        ["'device'", "'cuda:N'", "'gpu'"],
    ),
    ApiCase(
        "estimators-mine-too-few-samples",
        lambda tmp: MINE().estimate(_samples(100), _samples(100, seed=1)),
        ["batch_size=64", "Got 100 samples"],
    ),
    ApiCase(
        "estimators-mine-nan-sample",
        lambda tmp: MINE(training=TINY).estimate(np.r_[_samples(63), [[np.nan]]], _samples(64)),
        ["'x'", "finite"],
    ),
    ApiCase(
        "estimators-mine-beyond-float32-without-standardizing",
        lambda tmp: MINE(
            transform="none", training=TrainingConfig(max_steps=2, batch_size=16, standardize=False)
        ).estimate(1e39 * _samples(64), _samples(64, seed=1)),
        ["'x'", "float32", "standardize=True"],
    ),
    ApiCase(
        "estimators-mine-diverging-learning-rate",
        lambda tmp: MINE(
            hidden=(4,),
            training=TrainingConfig(max_steps=3, batch_size=16, learning_rate=1e308, n_fits=1),
            device="cpu",
        ).estimate(_samples(64), _samples(64, seed=1)),
        ["diverged", "learning_rate=1e+308"],
    ),
    ApiCase(
        "estimators-hmine-too-many-marginal-shifts",
        lambda tmp: HMINE(training=TINY, marginal_shifts=16),
        ["'marginal_shifts'", "[1, 15]", "16"],
    ),
    ApiCase(
        "estimators-hmine-one-dimensional-batch",
        lambda tmp: HMINE(training=TINY).estimate(_samples(64)[:, 0], _samples(64, seed=1)),
        ["'x'", "(n, B, ...)", "(64,)"],
    ),
    ApiCase(
        "estimators-hmine-sample-count-mismatch",
        lambda tmp: HMINE(training=TINY).estimate(_samples(64, 2)[:, :, None], _samples(63)),
        ["'x'", "'y'", "64 and 63"],
    ),
    ApiCase(
        "estimators-training-config-string-standardize",
        lambda tmp: TrainingConfig(standardize="no"),
        ["'standardize'", "True or False", "'no'"],
    ),
    ApiCase(
        "estimators-training-config-zero-steps",
        lambda tmp: TrainingConfig(max_steps=0),
        ["'max_steps'", "[1, inf)", "Got 0"],
    ),
    ApiCase(
        "estimators-training-config-averaging-one",
        lambda tmp: TrainingConfig(averaging=1.0),
        ["'averaging'", "[0, 1)", "1.0"],
    ),
    ApiCase(
        "estimators-training-config-unknown-schedule",
        lambda tmp: TrainingConfig(schedule="step"),
        ["'schedule'", "'plateau'", "'step'"],
    ),
    ApiCase(
        "estimators-hierarchical-zero-embedding",
        lambda tmp: HierarchicalCritic(2, 2, 4, embedding_dim=0),
        ["'embedding_dim'", "[1, inf)", "Got 0"],
    ),
    # --- estimators.device -------------------------------------------------------------
    ApiCase(
        "estimators-check-device-meta",
        lambda tmp: check_device("meta", func="MINE"),
        ["'device'", "MINE", "'meta'"],
    ),
    ApiCase(
        "estimators-resolve-device-none",
        lambda tmp: resolve_device(None),
        ["'device'", "'cpu'", "None"],
    ),
]
