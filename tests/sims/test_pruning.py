"""Tests of sims.pruning: masks, random and magnitude pruning."""

import numpy as np
import pytest
import torch

from pruneleak.sims.models import conv_net
from pruneleak.sims.pruning.mask import Mask, magnitude_mask, prunable_names, random_mask


@pytest.fixture(scope="module")
def params() -> dict[str, torch.Tensor]:
    torch.manual_seed(0)
    model = conv_net(2, in_channels=1, image_size=8, num_classes=10, width=4, hidden=16)
    return {k: v.detach() for k, v in model.named_parameters()}


def _prunable_count(params) -> int:
    return sum(params[n].numel() for n in prunable_names(params))


def test_prunable_names_are_the_weights(params):
    assert prunable_names(params) == [n for n in params if n.endswith("weight")]


@pytest.mark.parametrize("p", [0.0, 0.1, 0.37, 0.5, 0.9, 1.0])
@pytest.mark.parametrize("kind", ["random", "magnitude"])
def test_masks_have_exact_density(params, p, kind):
    mask = random_mask(params, p, seed=1) if kind == "random" else magnitude_mask(params, p)
    n = _prunable_count(params)
    if kind == "random":
        assert mask.num_pruned() == round(p * n)
    else:
        per_layer = sum(round(p * params[k].numel()) for k in prunable_names(params))
        assert mask.num_pruned() == per_layer
    # Rates counted here from the flags themselves, not through the Mask's own counters.
    pruned_flags = sum(int((~mask.keep[k]).sum()) for k in prunable_names(params))
    kept_flags = sum(int(mask.keep[k].sum()) for k in prunable_names(params))
    assert mask.sparsity() == pytest.approx(pruned_flags / n, abs=1e-15)
    assert mask.density() == pytest.approx(kept_flags / n, abs=1e-15)
    assert mask.num_kept() == sum(int(t.sum()) for t in mask.keep.values())
    assert list(mask.keep) == list(params)
    for name, keep in mask.keep.items():
        assert keep.dtype == torch.bool and keep.shape == params[name].shape
        if params[name].ndim < 2:
            assert bool(keep.all())


def test_random_mask_is_seeded(params):
    assert random_mask(params, 0.5, seed=3).equals(random_mask(params, 0.5, seed=3))
    assert not random_mask(params, 0.5, seed=3).equals(random_mask(params, 0.5, seed=4))


def test_random_mask_prunes_every_coordinate_equally_often():
    """Global-exact uniform subset: each of n coordinates is pruned w.p. round(p n) / n."""
    small = {"w": torch.zeros(4, 25), "b": torch.zeros(4)}
    draws = 2000
    counts = sum(
        (~random_mask(small, 0.3, seed=s).keep["w"]).reshape(-1).double() for s in range(draws)
    )
    freq = counts / draws
    # Binomial(2000, 0.3): sd of a frequency is sqrt(0.21 / 2000) = 0.0102; 5 sd = 0.051
    # bounds all 100 coordinates with family-wise error ~1e-4.
    assert float((freq - 0.3).abs().max()) < 0.051


def test_magnitude_mask_keeps_the_largest_per_layer(params):
    p = 0.6
    mask = magnitude_mask(params, p)
    for name in prunable_names(params):
        magnitudes = params[name].abs().reshape(-1).numpy()
        k = round(p * magnitudes.size)
        expected_pruned = np.sort(np.argsort(magnitudes, kind="stable")[:k])
        np.testing.assert_array_equal(
            np.flatnonzero(~mask.keep[name].reshape(-1).numpy()), expected_pruned
        )


def test_apply_is_elementwise_and_pure(params):
    mask = random_mask(params, 0.5, seed=0)
    before = {k: v.clone() for k, v in params.items()}
    out = mask.apply(params)
    for name in params:
        torch.testing.assert_close(
            out[name], params[name] * mask.keep[name].float(), rtol=0, atol=0
        )
        assert torch.equal(params[name], before[name])


def test_ones_flatten_to_and_equals(params):
    ones = Mask.ones(params)
    assert ones.density() == 1.0 and ones.num_pruned() == 0
    assert ones.num_kept() == sum(t.numel() for t in params.values())
    mask = random_mask(params, 0.25, seed=2)
    flat = mask.flatten()
    assert flat.shape == (ones.num_kept(),)
    np.testing.assert_array_equal(
        flat.numpy(), np.concatenate([t.reshape(-1).numpy() for t in mask.keep.values()])
    )
    assert mask.to("cpu").equals(mask) and not mask.equals(ones)


@pytest.mark.parametrize("p", [-0.1, 1.1, float("nan"), "0.5", None])
def test_bad_rate_raises(params, p):
    with pytest.raises(ValueError, match="'p'"):
        random_mask(params, p, seed=0)
    with pytest.raises(ValueError, match="'p'"):
        magnitude_mask(params, p)


@pytest.mark.parametrize(
    "keep",
    [
        {},
        {"w": torch.ones(2, 2)},
        {"w": torch.ones(2, 2, dtype=torch.bool), "b": torch.zeros(2, dtype=torch.bool)},
    ],
)
def test_mask_rejects_bad_keep(keep):
    with pytest.raises(ValueError, match="keep"):
        Mask(keep)


def test_apply_rejects_mismatched_names(params):
    mask = Mask.ones(params)
    with pytest.raises(ValueError, match="params"):
        mask.apply({"other": torch.zeros(1)})


def test_mask_names_exactly_the_pruned_non_prunable_tensors(params):
    keep = {name: torch.ones_like(t, dtype=torch.bool) for name, t in params.items()}
    keep["classifier.0.bias"] = keep["classifier.0.bias"].clone()
    keep["classifier.0.bias"][3] = False
    with pytest.raises(
        ValueError, match=r"whole\. Got pruned entries in \['classifier\.0\.bias'\]"
    ):
        Mask(keep)


def test_magnitude_mask_names_exactly_the_non_finite_weights(params):
    broken = dict(params)
    broken["features.3.weight"] = params["features.3.weight"].clone()
    broken["features.3.weight"][0, 0, 0, 0] = float("nan")
    with pytest.raises(
        ValueError,
        match=r"finite values\. Got NaN or infinite entries in \['features\.3\.weight'\]",
    ):
        magnitude_mask(broken, 0.5)


def test_mask_to_its_own_device_is_the_mask_itself(params):
    mask = random_mask(params, 0.5, seed=0)
    assert mask.to("cpu") is mask
    assert mask.to(torch.device("cpu")).equals(mask)
