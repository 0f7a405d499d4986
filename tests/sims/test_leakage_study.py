"""The torch side of the leakage study: release vectors, configuration, command line.

The study's numbers (the order of the bounds, the DP bound, Theorem 1 per sample size)
are checked in ``test_leakage_command.py``.
"""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest
import torch

from pruneleak.bounds import leakage
from pruneleak.sims.cli import build_parser
from pruneleak.sims.cli.leakage import config_from_args
from pruneleak.sims.data.datasets import load_dataset
from pruneleak.sims.experiments.leakage import DATASET_SIZES, LeakageConfig
from pruneleak.sims.fl.client import client_update
from pruneleak.sims.fl.release import release_gram, release_vectors
from pruneleak.sims.pruning.mask import random_mask


def _slow_releases(model, params, mask, images, labels, lr, gradient_at):
    """One client_update per candidate, kept coordinates only: the obvious reference."""
    keep = mask.flatten()
    rows = []
    for i in range(images.shape[0]):
        batch = (images[i : i + 1], labels[i : i + 1])
        sent = client_update(model, params, mask, *batch, lr=lr, gradient_at=gradient_at)
        flat = torch.cat([t.reshape(-1) for t in sent.values()])
        assert not bool(flat[~keep].any()), "a pruned coordinate of w_hat is not 0"
        rows.append(flat[keep])
    return torch.stack(rows)


def _double(model):
    model64 = copy.deepcopy(model).double()
    return model64, {n: t.detach() for n, t in model64.named_parameters()}


@pytest.mark.parametrize(
    ("p", "gradient_at"), [(0.0, "masked"), (0.5, "masked"), (0.9, "masked"), (0.5, "dense")]
)
def test_release_vectors_equal_a_loop_of_client_update(model, weights, digits, p, gradient_at):
    # The float32 model and images go in; release_vectors computes in float64 (default
    # dtype) from copies, so the reference is the loop on a float64 copy of the model. The
    # batched (vmap, chunked) and the looped gradients differ only by the round-off of
    # different kernels, ~1e-16 relative; 1e-12 leaves room for accumulation over the
    # 64-wide fc layer and still catches any wrong coordinate, order, sign, evaluation
    # point, learning rate (all O(1e-3) or larger) or a float32 computation (~1e-8).
    model64, params64 = _double(model)
    mask = random_mask(weights, p, seed=3)
    images, labels = digits.images[:7], digits.labels[:7]
    fast = release_vectors(
        model, weights, mask, images, labels, lr=0.25, gradient_at=gradient_at, chunk_size=3
    )
    slow = _slow_releases(
        model64, params64, mask, images.double(), labels, lr=0.25, gradient_at=gradient_at
    )
    assert fast.dtype == torch.float64 and fast.device.type == "cpu"
    assert fast.shape == (7, mask.num_kept())
    torch.testing.assert_close(fast, slow, rtol=1e-12, atol=1e-12)
    assert all(t.dtype == torch.float32 for t in model.parameters())  # the caller's model
    assert all(t.dtype == torch.float32 for t in weights.values())


def test_float32_releases_are_those_of_a_float32_client(model, weights, digits):
    # dtype=float32 is the old route: float32 gradients and update, then widened. Same
    # float32 kernels as the loop, so equal up to batched round-off (1e-6 relative), and
    # every value is a float32 number.
    mask = random_mask(weights, 0.5, seed=3)
    images, labels = digits.images[:5], digits.labels[:5]
    fast = release_vectors(model, weights, mask, images, labels, lr=0.25, dtype=torch.float32)
    slow = _slow_releases(model, weights, mask, images, labels, lr=0.25, gradient_at="masked")
    torch.testing.assert_close(fast, slow.double(), rtol=1e-6, atol=1e-7)
    assert torch.equal(fast.float().double(), fast)


def test_float64_releases_keep_apart_candidates_that_float32_merges(model, weights, digits):
    # Digits 706 and 449 at p = 0.99 (mask seed 0, the study's model and mask): found by
    # comparing the float32 and float64 releases of all 1,797 digits, where 59 such pairs
    # exist. Their float32 releases are equal in every coordinate; in float64 they differ
    # (by about 3.5e-10, below float32's resolution of about 6e-8 |w|), and the difference
    # is the loop's (client_update on a float64 model), not round-off.
    mask = random_mask(weights, 0.99, seed=0)
    pair = [706, 449]
    images, labels = digits.images[pair], digits.labels[pair]
    single = release_vectors(model, weights, mask, images, labels, lr=0.25, dtype=torch.float32)
    double = release_vectors(model, weights, mask, images, labels, lr=0.25)
    assert torch.equal(single[0], single[1])
    model64, params64 = _double(model)
    slow = _slow_releases(model64, params64, mask, images.double(), labels, 0.25, "masked")
    gap = double[0] - double[1]
    assert float(gap.abs().max()) > 1e-10
    torch.testing.assert_close(gap, slow[0] - slow[1], rtol=0, atol=1e-13)


def test_the_gram_cannot_resolve_releases_closer_than_its_round_off(model, weights, digits):
    # The documented limit of the Gram route at s = 0 (bounds.leakage.gram_groups): the
    # pair above differs by ~3.5e-10 per coordinate, a squared distance ~1e-18 times the
    # squared norms, far below the round-off bound of the Gram (~1e-13): it is one group,
    # although the float64 vectors differ, so the groups' entropy is a lower bound.
    mask = random_mask(weights, 0.99, seed=0)
    pair = [706, 449]
    images, labels = digits.images[pair], digits.labels[pair]
    gram = release_gram(model, weights, mask, images, labels, lr=0.25).numpy()
    rtol = leakage.gram_rounding_rtol(mask.num_kept())
    assert leakage.gram_groups(gram, rtol=rtol).tolist() == [0, 0]
    vectors = release_vectors(model, weights, mask, images, labels, lr=0.25)
    assert not torch.equal(vectors[0], vectors[1])


@pytest.mark.parametrize(("p", "chunk_size"), [(0.0, 4), (0.5, 4), (0.9, 5), (0.5, 11)])
def test_release_gram_is_the_gram_of_the_release_vectors(model, weights, digits, p, chunk_size):
    # Compared after centring, where a translation drops out: H R R^T H of the dense
    # float64 releases against H K H. Chunks of 4 and 5 split the 11 candidates unevenly
    # (4 + 4 + 3, 5 + 5 + 1); 11 is one chunk. Both are float64 with |w| <= 0.34 and
    # entries of order 1: they agree to ~1e-15; 1e-12 relative catches a missing lr^2, a
    # misplaced or untransposed block, the wrong mask or evaluation point (all O(1e-2)).
    mask = random_mask(weights, p, seed=3)
    images, labels = digits.images[:11], digits.labels[:11]
    model64, params64 = _double(model)
    dense = release_vectors(model64, params64, mask, images.double(), labels, lr=0.25)
    centred = dense - dense.mean(dim=0)
    expected = centred @ centred.T
    gram = release_gram(model, weights, mask, images, labels, lr=0.25, chunk_size=chunk_size)
    assert gram.dtype == torch.float64 and gram.device.type == "cpu" and gram.shape == (11, 11)
    centred_gram = gram - gram.mean(dim=0) - gram.mean(dim=1, keepdim=True) + gram.mean()
    scale = float(expected.abs().max())
    torch.testing.assert_close(centred_gram, expected, rtol=0, atol=1e-12 * scale)


def test_release_vectors_reject_bad_options(model, weights, digits):
    mask = random_mask(weights, 0.5, seed=0)
    x, y = digits.images[:2], digits.labels[:2]
    with pytest.raises(ValueError, match="'lr' parameter of release_vectors"):
        release_vectors(model, weights, mask, x, y, lr=0.0)
    with pytest.raises(ValueError, match="'gradient_at' parameter of release_vectors"):
        release_vectors(model, weights, mask, x, y, lr=0.25, gradient_at="sparse")
    with pytest.raises(ValueError, match="'chunk_size' parameter of release_vectors"):
        release_vectors(model, weights, mask, x, y, lr=0.25, chunk_size=0)
    with pytest.raises(ValueError, match=r"'dtype' parameter of release_vectors .* torch.float16"):
        release_vectors(model, weights, mask, x, y, lr=0.25, dtype=torch.float16)
    for option, value in [("lr", -1.0), ("gradient_at", "x"), ("chunk_size", 0)]:
        with pytest.raises(ValueError, match=f"'{option}' parameter of release_gram"):
            release_gram(model, weights, mask, x, y, **{"lr": 0.25, option: value})
    with pytest.raises(ValueError, match="'dtype' parameter of release_gram"):
        release_gram(model, weights, mask, x, y, lr=0.25, dtype=torch.int64)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("dataset", "femnist", "'dataset' parameter of LeakageConfig must be one of 'digits'"),
        ("rates", (), "'rates' parameter of LeakageConfig must not be empty"),
        ("rates", (0.5, 1.5), r"'rates' parameter of LeakageConfig must be in \[0, 1\]"),
        ("noise_stds", (-0.1,), r"'noise_stds' .* must be in \[0, 5.31691e\+36\]. Got -0.1"),
        ("batch_size", 0, r"'batch_size' parameter of LeakageConfig must be in \[1, 1797\]"),
        ("batch_size", 1798, r"'batch_size' parameter of LeakageConfig must be in \[1, 1797\]"),
        ("candidates", 1, r"'candidates' parameter of LeakageConfig must be in \[2, 1797\]"),
        ("samples", 1, r"'samples' parameter of LeakageConfig must be in \[2, 10000000\]"),
        ("attack_targets", 0, "'attack_targets' parameter"),
        ("attack_iterations", 0, "'attack_iterations' parameter"),
        (
            "stats_samples",
            1798,
            r"'stats_samples' parameter of LeakageConfig must be in \[2, 1797\]",
        ),
        (
            "estimate_draws",
            8,
            r"'estimate_draws' parameter of LeakageConfig must be in \[16, 1000000\]",
        ),
        (
            "theorem1_sample_sizes",
            (8, 1798),
            r"'theorem1_sample_sizes' parameter of LeakageConfig must be in \[2, 1797\]",
        ),
        ("estimate_steps", 0, "'estimate_steps' parameter"),
        ("client_lr", 0.0, "'client_lr' parameter"),
        ("seed", -1, "'seed' parameter"),
        ("device", "gpu:x", "'device' parameter of LeakageConfig"),
    ],
)
def test_config_errors_name_field_range_and_value(field, value, message):
    with pytest.raises(ValueError, match=message):
        replace(LeakageConfig(), **{field: value})


def test_fingerprint_ignores_grid_and_device_only():
    base = LeakageConfig()
    assert base.fingerprint() == replace(base, rates=(0.1, 0.9), noise_stds=(1.0,)).fingerprint()
    assert base.fingerprint() == replace(base, device="cpu").fingerprint()
    assert base.fingerprint() != replace(base, seed=1).fingerprint()
    assert base.fingerprint() != replace(base, candidates=100, stats_samples=64).fingerprint()


def test_more_candidates_than_the_dataset_is_refused_before_any_data_is_read():
    with pytest.raises(ValueError, match=r"'candidates' .* \[2, 1797\]. Got 1798"):
        LeakageConfig(candidates=1798, stats_samples=2, device="cpu")


@pytest.mark.parametrize("name", ["digits", "faces", "patches"])
def test_the_dataset_size_of_the_config_is_the_loaded_one(name):
    assert DATASET_SIZES[name] == len(load_dataset(name))
    assert LeakageConfig(dataset=name, device="cpu").candidates == DATASET_SIZES[name]


def test_command_options_reach_the_config():
    args = build_parser().parse_args(
        ["leakage", "--p", "0.1", "0.5", "--noise", "0", "0.2", "--candidates", "9", "--json"]
    )
    assert args.rates == [0.1, 0.5] and args.noise == [0.0, 0.2] and args.candidates == 9
    assert args.json and str(args.out) == "pruneleak-out/leakage"
    defaults = build_parser().parse_args(["leakage"])
    assert (defaults.candidates, defaults.batch_size, defaults.json) == (None, 1, False)
    # no --candidates: the whole data set (1,797 digits, 200 faces)
    assert config_from_args(defaults).candidates == 1797
    faces = build_parser().parse_args(["leakage", "--dataset", "faces"])
    assert config_from_args(faces).candidates == 200
    # the command's default sample count follows M (a fixed 256 rejected M < 256)
    assert config_from_args(args).stats_samples == 9
    assert config_from_args(defaults).stats_samples == 256
    assert config_from_args(faces).stats_samples == 200


def test_default_stats_samples_fit_a_small_candidate_set():
    # min(256, M): the default must not reject M < 256 (it used to, with 256 fixed)
    assert LeakageConfig(candidates=32, device="cpu").stats_samples == 32
    assert LeakageConfig(device="cpu").stats_samples == 256


def test_theorem1_sample_sizes_default_to_powers_of_two_below_m_and_m():
    assert LeakageConfig(candidates=12).sample_sizes() == (8, 12)
    assert LeakageConfig(candidates=8).sample_sizes() == (8,)
    assert LeakageConfig(candidates=3).sample_sizes() == (3,)
    assert LeakageConfig().sample_sizes() == (*(2**e for e in range(3, 11)), 1797)
    given = LeakageConfig(candidates=12, theorem1_sample_sizes=(9, 3))
    assert given.sample_sizes() == (3, 9)
