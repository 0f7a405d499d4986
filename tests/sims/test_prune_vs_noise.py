"""Tests of sims.experiments.prune_vs_noise (Huang et al., Sections 4.1-4.3, Figure 6)."""

import itertools
import math

import numpy as np
import pytest
import torch
from scipy import stats

from pruneleak.estimators.image import psnr
from pruneleak.sims.attacks.priors import total_variation
from pruneleak.sims.core.runtime import seeded
from pruneleak.sims.data.datasets import load_digits_dataset
from pruneleak.sims.experiments import prune_vs_noise as pvn
from pruneleak.sims.fl.server import evaluate
from pruneleak.sims.models import VGG_CONFIGS, lenet5, vgg
from pruneleak.sims.pruning.mask import Mask
from pruneleak.sims.pruning.schedule import train_sgd


def _tiny_lenet(seed=0):
    with seeded(seed):
        return lenet5(image_size=8)


@pytest.fixture(scope="module")
def digits8():
    data = load_digits_dataset()
    return data.images[:256], data.labels[:256]


# --------------------------------------------------------------------------- representation


@pytest.mark.parametrize("layer", list(pvn.LAYERS))
@pytest.mark.parametrize("after_activation", [False, True])
def test_split_at_layer_composes_back_to_the_model(digits8, layer, after_activation):
    model = _tiny_lenet()
    phi, head = pvn.split_at_layer(model, layer, after_activation=after_activation)
    x = digits8[0][:5]
    with torch.no_grad():
        torch.testing.assert_close(head(phi(x)), model(x))
        if layer == "c5":
            assert phi(x).shape == (5, 120)


@pytest.mark.parametrize("layer", ["c7", "fc", 5])
def test_split_at_layer_rejects_unknown_layers(layer):
    with pytest.raises(ValueError, match="split_at_layer"):
        pvn.split_at_layer(_tiny_lenet(), layer)


def test_laplace_noise_is_standard_laplace():
    draws = pvn.laplace_noise((200, 100), seed=5).numpy().ravel()
    # Kolmogorov-Smirnov against scipy's Laplace(0, 1); seeded, so the p-value is fixed
    # (0.2 here); 1e-3 would flag a wrong scale or location for n = 20,000 draws
    assert stats.kstest(draws, stats.laplace().cdf).pvalue > 1e-3
    torch.testing.assert_close(
        pvn.laplace_noise((3, 4), seed=5), pvn.laplace_noise((3, 4), seed=5), rtol=0, atol=0
    )


# --------------------------------------------------------------------------- noise matching


def _margin_task(n=400, seed=0):
    """Two classes, one logit ``z`` against 0, every label 0 and every margin ``r_i > 0``.

    With noise ``b e``, image i is misclassified iff ``e_i < 0`` and ``b > r_i / |e_i|``,
    so the accuracy is monotone in b and its steps are at the thresholds ``r_i / |e_i|``.
    """
    g = torch.Generator().manual_seed(seed)
    r = 0.1 + torch.rand((n, 1), generator=g)
    labels = torch.zeros(n, dtype=torch.int64)

    def head(z):
        return torch.cat([z, torch.zeros_like(z)], dim=1)

    return head, r, labels


@pytest.mark.parametrize("target", [0.95, 0.8, 0.6])
def test_noise_bisection_finds_the_exact_accuracy_boundary(target):
    head, r, labels = _margin_task()
    match = pvn.match_noise_scale(head, r, labels, target, tolerance=0.01, seed=11)
    e = pvn.laplace_noise(tuple(r.shape), seed=11).numpy().ravel()
    thresholds = np.sort((r.numpy().ravel() / np.abs(e))[e < 0])
    flips_allowed = math.floor(len(r) * (1 - target) + 1e-9)
    boundary = thresholds[flips_allowed]  # the first b whose accuracy drops below target
    assert match.matched
    assert abs(match.accuracy - target) <= 0.01
    # image i stays correct iff its logit r_i + b e_i is positive (label 0 against logit 0)
    correct = r.numpy().ravel() + match.scale * e > 0
    assert match.accuracy == correct.mean()
    # the bisection stops at relative bracket width 1e-3 just below the boundary
    assert boundary * (1 - 2e-3) <= match.scale < boundary


def test_noise_bisection_on_a_tiny_model_hits_the_target_accuracy(digits8):
    images, labels = digits8
    model = _tiny_lenet()
    train_sgd(model, images, labels, epochs=20, lr=0.05)
    phi, head = pvn.split_at_layer(model, "c5")
    with torch.no_grad():
        rep = phi(images)
    clean, _ = evaluate(model, None, images, labels)
    assert clean > 0.3  # well above chance (0.1), so there is accuracy to give up
    target = (clean + 0.1) / 2
    match = pvn.match_noise_scale(head, rep, labels, target, tolerance=0.02, seed=0)
    # 256 images: the accuracy moves in steps of 1/256 < tolerance
    assert match.matched and abs(match.accuracy - target) <= 0.02 and match.scale > 0


def test_noise_bisection_returns_zero_when_the_target_exceeds_the_clean_accuracy():
    head, r, labels = _margin_task()
    labels = labels.clone()
    labels[:100] = 1  # clean accuracy 0.75
    match = pvn.match_noise_scale(head, r, labels, 0.9, tolerance=0.01)
    assert match.scale == 0.0 and match.accuracy == 0.75 and not match.matched


@pytest.mark.parametrize(
    "kwargs", [{"target_accuracy": 1.5}, {"target_accuracy": -0.1}, {"tolerance": 0.0}]
)
def test_noise_bisection_rejects_bad_values(kwargs):
    head, r, labels = _margin_task(n=10)
    with pytest.raises(ValueError, match="match_noise_scale"):
        pvn.match_noise_scale(head, r, labels, **{"target_accuracy": 0.5, **kwargs})


# --------------------------------------------------------------------------- attack


def _tv_loop(images):
    """Huang et al.'s isotropic R(a) = sum_{i<H-1, j<W-1} sqrt(di^2 + dj^2 + 1e-8) per image,
    summed over channels, one pixel at a time (differentiable: torch scalars)."""
    out = []
    for img in images:
        total = 0.0
        for c in range(img.shape[0]):
            for i in range(img.shape[1] - 1):
                for j in range(img.shape[2] - 1):
                    di = img[c, i + 1, j] - img[c, i, j]
                    dj = img[c, i, j + 1] - img[c, i, j]
                    total = total + torch.sqrt(di**2 + dj**2 + 1e-8)
        out.append(total)
    return torch.stack(out)


@pytest.mark.parametrize("shape", [(2, 1, 5, 4), (1, 3, 4, 4)])
def test_total_variation_matches_a_loop(shape):
    images = torch.rand(shape, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    # float64 both ways: agreement to rounding
    tv = total_variation(images, "isotropic_sum")
    torch.testing.assert_close(tv, _tv_loop(images), rtol=1e-12, atol=0)


def test_inversion_descends_the_isotropic_total_variation_of_the_paper():
    """With a representation that carries nothing (phi = 0), one Adam step moves each pixel
    by -lr * g / (|g| + 1e-8), g the gradient of lambda R(x) at the seeded uniform start
    (Adam's first step; cosine annealing starts at lr). R from the pixel loop above."""
    shape, lr, seed = (2, 1, 6, 5), 0.01, 3
    start = torch.rand(shape, generator=torch.Generator().manual_seed(seed))
    x = start.double().requires_grad_(True)
    (0.1 * _tv_loop(x).sum()).backward()
    g = x.grad.float()
    expected = (start - lr * g / (g.abs() + 1e-8)).clamp(0, 1)

    def phi(images):
        return 0.0 * images.flatten(1)

    step = pvn.invert_representation(
        phi, torch.zeros(2, 30), shape[1:], iterations=1, lr=lr, tv_weight=0.1, seed=seed
    )
    # float32 arithmetic on values in [0, 1]: a few ulps
    torch.testing.assert_close(step, expected, rtol=0, atol=1e-6)


def test_inversion_recovers_the_images_from_a_clean_injective_layer(digits8):
    # C1 before its ReLU is linear and injective on 8x8 (6 x 8 x 8 outputs for 64 pixels),
    # so the clean representation determines the image: measured 106 dB; 40 dB is far above
    # what a partial recovery reaches (the noisy runs below give 6-21 dB)
    phi, _ = pvn.split_at_layer(_tiny_lenet(), "c1")
    x0 = digits8[0][:8]
    with torch.no_grad():
        target = phi(x0)
    rec = pvn.invert_representation(phi, target, (1, 8, 8), iterations=200, tv_weight=0.0)
    assert psnr(x0, rec) > 40.0
    assert float(rec.min()) >= 0.0 and float(rec.max()) <= 1.0


def test_inversion_recovers_worse_as_the_noise_grows(digits8):
    phi, _ = pvn.split_at_layer(_tiny_lenet(), "c1")
    x0 = digits8[0][:8]
    with torch.no_grad():
        target = phi(x0)
    noise = pvn.laplace_noise(tuple(target.shape), seed=1)
    scales = [0.0, 0.3, 1.0, 3.0]
    values = [
        psnr(
            x0,
            pvn.invert_representation(
                phi, target + b * float(target.std()) * noise, (1, 8, 8), tv_weight=0.0
            ),
        )
        for b in scales
    ]
    # measured 106, 21, 11, 6 dB: each step loses several dB, so 1 dB of slack is safe
    assert all(later < earlier - 1.0 for earlier, later in itertools.pairwise(values))


def test_inversion_of_a_batch_is_the_inversion_of_each_image(digits8):
    phi, _ = pvn.split_at_layer(_tiny_lenet(), "c5")
    x = digits8[0][:3]
    with torch.no_grad():
        target = phi(x)
    # image 0 gets the same start in every call (the uniform start is drawn image by image)
    alone = pvn.invert_representation(phi, target[:1], (1, 8, 8), iterations=30)
    batch = pvn.invert_representation(phi, target, (1, 8, 8), iterations=30)
    other = pvn.invert_representation(phi, target[[0, 2]], (1, 8, 8), iterations=30)
    # float32 batched vs single-image convolutions differ in rounding only
    torch.testing.assert_close(batch[:1], alone, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(other[:1], alone, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"iterations": 0},
        {"lr": 0.0},
        {"tv_weight": -1.0},
        {"seed": -1},
        {"image_shape": (8, 8)},
        {"image_shape": (1, 0, 8)},
        {"target": torch.zeros(5)},
    ],
)
def test_inversion_rejects_bad_values(kwargs):
    phi, _ = pvn.split_at_layer(_tiny_lenet(), "c1")
    args = {"target": torch.zeros(2, 6, 8, 8), "image_shape": (1, 8, 8), **kwargs}
    with pytest.raises(ValueError, match="invert_representation"):
        pvn.invert_representation(phi, **args)


# --------------------------------------------------------------------------- experiment

TINY = {
    "image_size": 8,
    "sparsities": (0.5, 0.9),
    "train_epochs": 2,
    "prune_epochs": 1,
    "prune_updates": 2,
    "num_images": 4,
    "attack_iterations": 10,
    "device": "cpu",
}


@pytest.fixture(scope="module")
def tiny_result():
    return pvn.run_prune_vs_noise(pvn.PruneVsNoiseConfig(**TINY), progress=False)


def test_experiment_rows_cover_every_condition_and_sparsity(tiny_result):
    rows = tiny_result.rows
    assert len(rows) == 1 + 3 * len(TINY["sparsities"])
    assert tiny_result.row("none", 0.0)["accuracy"] == tiny_result.dense_accuracy
    for k in TINY["sparsities"]:
        for condition in ("noise", *pvn.PRUNE_CONDITIONS):
            row = tiny_result.row(condition, k)
            for metric in pvn.METRICS:
                low, mean, high = (row[f"{metric}_{s}"] for s in ("min", "mean", "max"))
                if metric == "sift" and row["sift_defined"] == 0:
                    # 8x8 inversions rarely have a SIFT keypoint: no value, no number made up
                    assert low is mean is high is None
                else:
                    assert low <= mean <= high
        pruned = tiny_result.row("prune_informed", k)
        # layer-wise rounding of k * n_layer: within half a weight per layer (5 layers) of k
        num_prunable = Mask.ones(lenet5(image_size=8)).num_prunable()
        assert pruned["pruned_fraction"] == pytest.approx(k, abs=5 * 0.5 / num_prunable)
        noise = tiny_result.row("noise", k)
        if noise["matched"]:
            assert abs(noise["accuracy"] - pruned["accuracy"]) <= 0.01
        assert tiny_result.reconstructions[("noise", k)].shape == (4, 1, 8, 8)
    assert "prune_public" in tiny_result.table()


def test_experiment_is_reproducible(tiny_result):
    again = pvn.run_prune_vs_noise(pvn.PruneVsNoiseConfig(**TINY), progress=False)
    assert [r["ssim_mean"] for r in again.rows] == [r["ssim_mean"] for r in tiny_result.rows]
    assert [r["noise_scale"] for r in again.rows] == [r["noise_scale"] for r in tiny_result.rows]


def _synthetic_result(prune_scores, noise_scores):
    config = pvn.PruneVsNoiseConfig(sparsities=(0.5, 0.9))
    result = pvn.PruneVsNoiseResult(config=config, dense_accuracy=0.9)
    result.originals = np.zeros((len(prune_scores[0]), 1, 8, 8))
    for i, k in enumerate(config.sparsities):
        result.rows.append({"condition": "noise", "sparsity": k, "matched": True})
        for condition, values in (("noise", noise_scores[i]), ("prune_public", prune_scores[i])):
            result.scores[(condition, k)] = {m: np.asarray(values, float) for m in pvn.METRICS}
    return result


def test_sift_is_masked_where_an_image_has_no_keypoint():
    x = torch.zeros(3, 1, 28, 28)
    x[:, :, 6:22, 10:18] = 1.0  # a bright bar: SIFT keypoints
    reconstructions = x.clone()
    reconstructions[1] = 0.0  # blank: none
    classifier = lenet5(image_size=28)
    scores = pvn.score_inversions(x, reconstructions, torch.zeros(3, dtype=torch.int64), classifier)
    sift = scores["sift"]
    assert np.ma.isMaskedArray(sift) and sift.mask.tolist() == [False, True, False]
    assert sift.compressed().tolist() == [1.0, 1.0]  # identical images match every keypoint
    row = pvn.study._summary_row("noise", 0.5, 0.9, scores)
    assert (row["sift_mean"], row["sift_min"], row["sift_defined"]) == (1.0, 1.0, 2)
    blank = pvn.score_inversions(
        x, torch.zeros_like(x), torch.zeros(3, dtype=torch.int64), classifier
    )
    row = pvn.study._summary_row("noise", 0.5, 0.9, blank)
    assert (row["sift_mean"], row["sift_max"], row["sift_defined"]) == (None, None, 0)
    assert "ssim_defined" not in row  # only masked metrics count their images


def test_comparison_is_the_paired_gap_over_images():
    prune = [[0.1, 0.2, 0.3], [0.2, 0.2, 0.2]]
    noise = [[0.5, 0.4, 0.6], [0.6, 0.7, 0.5]]
    result = _synthetic_result(prune, noise)
    per_image = (np.array(noise) - np.array(prune)).mean(axis=0)  # [0.4, 0.35, 0.3]
    c = result.comparison()["ssim"]
    assert c["gap"] == pytest.approx(0.35, abs=1e-12)
    assert c["stderr"] == pytest.approx(per_image.std(ddof=1) / math.sqrt(3), abs=1e-12)
    assert c["wins"] == 2 and c["sparsities"] == 2
    assert result.leakage_calls()["overall"] == "less"
    assert "pruning leaks less than noise" in result.verdict()
    assert _synthetic_result(noise, prune).leakage_calls()["overall"] == "more"
    assert _synthetic_result(prune, prune).leakage_calls()["overall"] == "unclear"


def test_comparison_pairs_only_the_images_defined_under_both_conditions_everywhere():
    prune = [[0.1, 0.2, 0.3], [0.2, 0.2, 0.2]]
    noise = [[0.5, 0.4, 0.6], [0.6, 0.7, 0.5]]
    result = _synthetic_result(prune, noise)
    # image 1 has no SIFT value under noise at k = 0.9; the masked data must not count
    result.scores[("noise", 0.9)]["sift"] = np.ma.masked_array([0.6, 99.0, 0.5], [0, 1, 0])
    c = result.comparison()["sift"]
    per_image = [(0.4 + 0.4) / 2, (0.3 + 0.3) / 2]  # images 0 and 2: noise - prune
    assert c["images"] == 2 and result.comparison()["ssim"]["images"] == 3
    assert c["gap"] == pytest.approx(np.mean(per_image), abs=1e-12)
    assert c["prune"] == pytest.approx(np.mean([0.1, 0.3, 0.2, 0.2]), abs=1e-12)
    result.scores[("prune_public", 0.5)]["sift"] = np.ma.masked_array([0.1, 0.2, 0.3], [1, 0, 1])
    nothing = result.comparison()["sift"]
    assert nothing["images"] == 0 and math.isnan(nothing["gap"])
    assert result.leakage_calls()["sift"] == "unclear"
    assert "0 images with keypoints, no vote" in result.verdict()
    for row in result.rows:  # the noise rows, with what beside_paper reads
        row.update(accuracy=0.9, ssim_mean=0.5)
    result.rows += [
        {"condition": c, "sparsity": k, "accuracy": 0.9, "ssim_mean": 0.5, "matched": True}
        for c, k in (("none", 0.0), ("prune_public", 0.5), ("prune_public", 0.9))
    ]
    table = pvn.beside_paper(result, "figure7")
    assert "sift undefined (no image scored under both at every sparsity)" in table
    assert "ssim lower under pruning at 2 of 2 sparsities" in table


def _gap_result(per_image_gaps):
    """Two sparsities with the same per-image gaps noise - prune on every metric."""
    gaps = np.asarray(per_image_gaps, float)
    prune = [np.full(gaps.size, 0.5)] * 2
    return _synthetic_result(prune, [0.5 + gaps] * 2)


@pytest.mark.parametrize(
    ("scale", "call"),
    # per-image gaps whose mean is scale x twice their standard error: a difference is
    # called only beyond 2 standard errors (scale > 1), not at 1.9 or at one (scale 0.5)
    [
        (1.05, "less"),
        (0.95, "unclear"),
        (0.5, "unclear"),
        (0.3, "unclear"),
        (-0.5, "unclear"),
        (-0.95, "unclear"),
        (-1.05, "more"),
    ],
)
def test_leakage_is_called_only_beyond_two_standard_errors(scale, call):
    centred = np.array([-1.0, 0.0, 1.0, 2.0, -2.0])  # mean 0, sd sqrt(2.5)
    stderr = math.sqrt(2.5) / math.sqrt(5)
    gaps = centred + scale * 2 * stderr
    result = _gap_result(gaps)
    c = result.comparison()["ssim"]
    assert c["gap"] == pytest.approx(scale * 2 * stderr, abs=1e-12)
    assert c["stderr"] == pytest.approx(stderr, abs=1e-12)
    calls = result.leakage_calls()
    assert {calls[m] for m in pvn.PAPER_METRICS} == {call}
    assert calls["overall"] == call


def test_overall_call_needs_two_of_the_three_voting_metrics():
    result = _gap_result([1.0, 1.1, 0.9, 1.0])  # clearly positive: "less" on every metric
    for metric in ("phash", "infe"):
        for k in result.config.sparsities:
            result.scores[("noise", k)][metric] = result.scores[("prune_public", k)][metric]
    calls = result.leakage_calls()
    assert (calls["ssim"], calls["phash"], calls["infe"]) == ("less", "unclear", "unclear")
    assert calls["overall"] == "unclear"
    result.scores[("noise", 0.5)]["infe"] = result.scores[("noise", 0.5)]["ssim"]
    result.scores[("noise", 0.9)]["infe"] = result.scores[("noise", 0.9)]["ssim"]
    assert result.leakage_calls()["overall"] == "less"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"dataset": "imagenet"},
        {"image_size": 4},
        {"sparsities": ()},
        {"sparsities": (0.9, 0.5)},
        {"sparsities": (0.5, 1.0)},
        {"layer": "c2"},
        {"train_epochs": 0},
        {"ramp_fraction": 0.0},
        {"lr": -0.1},
        {"momentum": 1.0},
        {"accuracy_tolerance": 0.0},
        {"num_images": 0},
        {"tv_weight": -1.0},
        {"seed": -1},
        {"device": "tpu"},
    ],
)
def test_config_rejects_bad_values(kwargs):
    with pytest.raises(ValueError, match=r"PruneVsNoiseConfig|device"):
        pvn.PruneVsNoiseConfig(**kwargs)


def test_for_scale_picks_mnist_only_with_a_data_dir():
    assert pvn.PruneVsNoiseConfig.for_scale("quick") == pvn.PruneVsNoiseConfig()
    paper = pvn.PruneVsNoiseConfig.for_scale("paper")
    assert paper.dataset == "digits" and paper.sparsities == pvn.PAPER_SPARSITIES
    mnist = pvn.PruneVsNoiseConfig.for_scale("paper", data_dir="/data")
    assert mnist.dataset == "mnist" and mnist.train_epochs + mnist.prune_epochs == 20
    with pytest.raises(ValueError, match="for_scale"):
        pvn.PruneVsNoiseConfig.for_scale("huge")


def test_figures_draw_every_metric_even_where_sift_is_undefined(tiny_result):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pruneleak.sims.plots.prune_vs_noise import plot_example_inversions, plot_similarity_curves

    fig = plot_similarity_curves(tiny_result)
    labels = [ax.get_ylabel() for ax in fig.axes if ax.get_visible()]
    assert all(label in labels for label in pvn.METRICS.values())
    plt.close(fig)
    plt.close(plot_example_inversions(tiny_result, num_examples=1))


# --------------------------------------------------------------------------- Figure 7 arm


def test_vgg19_layers_are_named_by_block_and_conv5_1_is_the_thirteenth_conv():
    names = pvn.conv_layer_names(VGG_CONFIGS[19][0])
    assert len(names) == 16 and names.index("conv5_1") == 12
    assert names[:4] == ("conv1_1", "conv1_2", "conv2_1", "conv2_2")
    model = vgg(19, width=4)
    phi, head = pvn.split_at_layer(model, "conv5_1")
    x = torch.rand(2, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        torch.testing.assert_close(head(phi(x)), model(x))
        # 13 convs and 4 pools: 32 -> 2 pixels, conv5_1 has 512 * 4 / 64 channels
        assert phi(x).shape == (2, 32, 2, 2)
    assert sum(isinstance(m, torch.nn.Conv2d) for m in phi) == 13
    with pytest.raises(ValueError, match=r"'layer' parameter of split_at_layer.*conv5_4"):
        pvn.split_at_layer(model, "conv6_1")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"model": "resnet"},
        {"model": "vgg19"},  # layer "c5" is LeNet-5's
        {"model": "vgg19", "layer": "conv5_1", "width": 0},
        {"layer": "conv5_1"},  # not a LeNet-5 layer
        {"optimizer": "rmsprop"},
    ],
)
def test_config_rejects_bad_model_settings(kwargs):
    with pytest.raises(ValueError, match="PruneVsNoiseConfig"):
        pvn.PruneVsNoiseConfig(**kwargs)


def test_figure7_for_scale_is_vgg19_at_conv5_1_with_adam():
    quick = pvn.PruneVsNoiseConfig.figure7_for_scale("quick")
    assert (quick.dataset, quick.model, quick.layer, quick.optimizer, quick.lr) == (
        "patches",
        "vgg19",
        "conv5_1",
        "adam",
        0.001,
    )
    assert quick.width == 8 and quick.sparsities == pvn.FIG7_QUICK_SPARSITIES
    paper = pvn.PruneVsNoiseConfig.figure7_for_scale("paper")
    assert paper.dataset == "patches" and paper.width == 64 and paper.num_images == 100
    cifar = pvn.PruneVsNoiseConfig.figure7_for_scale("paper", data_dir="/data")
    assert cifar.dataset == "cifar10" and cifar.train_epochs + cifar.prune_epochs == 200
    assert pvn.PruneVsNoiseConfig.figure7_for_scale("quick", num_images=2).num_images == 2
    with pytest.raises(ValueError, match="figure7_for_scale"):
        pvn.PruneVsNoiseConfig.figure7_for_scale("huge")


def test_a_tiny_vgg19_run_on_the_rgb_patches_releases_conv5_1():
    config = pvn.PruneVsNoiseConfig.figure7_for_scale(
        "quick",
        width=1,
        train_epochs=1,
        prune_epochs=1,
        prune_updates=2,
        sparsities=(0.5,),
        num_images=2,
        attack_iterations=3,
        device="cpu",
    )
    result = pvn.run_prune_vs_noise(config, progress=False)
    assert len(result.rows) == 4 and result.originals.shape == (2, 3, 32, 32)
    assert result.reconstructions[("noise", 0.5)].shape == (2, 3, 32, 32)
    num_prunable = Mask.ones(vgg(19, width=1)).num_prunable()
    # layer-wise rounding: within half a weight per prunable layer (19) of k
    assert result.row("prune_public", 0.5)["pruned_fraction"] == pytest.approx(
        0.5, abs=19 * 0.5 / num_prunable
    )


def _curve_result(noise_points, prune_points, none_point):
    """Rows only: (accuracy, mean SSIM) of the undefended network, of noise and of pruning
    at each of the sparsities 0.5 and 0.9."""
    config = pvn.PruneVsNoiseConfig(sparsities=(0.5, 0.9))
    result = pvn.PruneVsNoiseResult(config=config, dense_accuracy=none_point[0])
    rows = [("none", 0.0, none_point)]
    rows += [("noise", k, p) for k, p in zip(config.sparsities, noise_points, strict=True)]
    rows += [("prune_public", k, p) for k, p in zip(config.sparsities, prune_points, strict=True)]
    for condition, k, (accuracy, ssim) in rows:
        result.rows.append(
            {
                "condition": condition,
                "sparsity": k,
                "accuracy": accuracy,
                "ssim_mean": ssim,
                "matched": True,
            }
        )
    return result


def test_accuracy_gap_at_matched_leakage_interpolates_the_noise_curve():
    # noise: SSIM 0.9 at accuracy 0.95 (undefended), 0.8 at 0.9, 0.6 at 0.5
    result = _curve_result([(0.9, 0.8), (0.5, 0.6)], [(0.9, 0.7), (0.5, 0.5)], (0.95, 0.9))
    gaps = result.accuracy_gap_at_matched_leakage("ssim")
    # pruning at SSIM 0.7 (accuracy 0.9): noise reaches 0.7 at accuracy 0.5 + 0.4 / 2 = 0.7
    assert gaps[0.5] == pytest.approx(0.9 - 0.7, abs=1e-12)
    assert gaps[0.9] is None  # SSIM 0.5 lies below the noise curve: no extrapolation
    with pytest.raises(ValueError, match="accuracy_gap_at_matched_leakage"):
        result.accuracy_gap_at_matched_leakage("lpips")


def test_the_paper_statements_cite_lines_that_say_what_they_quote(tiny_result):
    from pathlib import Path

    text = (
        Path(__file__).resolve().parents[3]
        / "shared/papers/huang-pruning-as-dp-noise-arxiv2003.01876.txt"
    )
    lines = text.read_text().splitlines() if text.exists() else None
    for figure, statements in pvn.PAPER_STATEMENTS.items():
        table = pvn.beside_paper(tiny_result, figure)
        assert table.count("\n") == len(statements) + 1
        for line, quote, _ in statements:
            assert f"| {line} | {quote} |" in table
            if lines is not None:  # the papers folder sits beside the repository
                assert " ".join(quote.split()[:4]) in lines[line - 1]
