"""Tests of the base pruning schemes (sims.schemes) and mask construction (sims.pruning)."""

import math

import numpy as np
import pytest
import torch
from torch.func import functional_call

from pruneleak.sims.core.functional import batch_gradient
from pruneleak.sims.models import conv_net
from pruneleak.sims.pruning.mask import (
    Mask,
    erk_keep_counts,
    mask_from_scores,
    prunable_names,
    random_mask,
    uniform_keep_counts,
)
from pruneleak.sims.pruning.schemes import (
    SCHEMES,
    FedDST,
    PruneFL,
    RandomPruning,
    SynFlow,
    available_schemes,
    build_scheme,
    tiered_scores,
)


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return conv_net(2, in_channels=1, image_size=8, num_classes=10, width=4, hidden=16)


@pytest.fixture(scope="module")
def params(model):
    return {n: p.detach().clone() for n, p in model.named_parameters()}


def _batch(seed, n=12):
    generator = torch.Generator().manual_seed(seed)
    return torch.rand(n, 1, 8, 8, generator=generator), torch.randint(
        0, 10, (n,), generator=generator
    )


def _num_prunable(params):
    return sum(params[n].numel() for n in prunable_names(params))


def test_registry_holds_the_six_schemes_of_table_1():
    assert set(available_schemes()) == {"random", "snip", "synflow", "grasp", "feddst", "prunefl"}
    one_shot = {name for name, cls in SCHEMES.items() if cls.one_shot}
    at_client = {name for name, cls in SCHEMES.items() if cls.at_client}
    # PriPrune Table 1: SNIP, SynFlow, GraSP one shot at the server only; the others also
    # prune at the clients.
    assert one_shot == {"snip", "synflow", "grasp"}
    assert at_client == {"random", "feddst", "prunefl"}


@pytest.mark.parametrize("name", sorted(SCHEMES))
@pytest.mark.parametrize("p", [0.1, 0.3, 0.9])
def test_every_initial_mask_has_the_requested_density(model, params, name, p):
    scheme = build_scheme(name, p, seed=1, rounds=20)
    mask = scheme.initial_mask(model, params, *_batch(0))
    n = _num_prunable(params)
    assert mask.num_pruned() == round(p * n)
    assert list(mask.keep) == list(params)
    for tensor_name, keep in mask.keep.items():
        assert keep.shape == params[tensor_name].shape
        if params[tensor_name].ndim < 2:
            assert bool(keep.all())


def test_synflow_is_data_free(model, params):
    scheme = SynFlow(0.7, iterations=20)
    masks = [scheme.initial_mask(model, params, *_batch(seed)) for seed in (0, 1)]
    masks.append(scheme.initial_mask(model, params, None, None))
    assert masks[0].equals(masks[1]) and masks[0].equals(masks[2])


def _path_flow(model, params, mask):
    """Synaptic flow through the kept weights only (biases zeroed): > 0 iff some
    input-to-output path of kept weights exists."""
    theta = {
        n: (t.abs() * mask.keep[n]).double() if t.ndim >= 2 else torch.zeros_like(t).double()
        for n, t in params.items()
    }
    ones = torch.ones((1, *model.input_shape), dtype=torch.float64)
    return float(functional_call(model, theta, (ones,)).sum())


def test_synflow_keeps_a_path_alive_at_99_percent_sparsity(model, params):
    mask = SynFlow(0.99).initial_mask(model, params, None, None)
    n = _num_prunable(params)
    assert mask.num_pruned() == round(0.99 * n)
    assert _path_flow(model, params, mask) > 0
    # Every prunable layer keeps at least one weight (no layer collapse).
    assert all(int(mask.keep[name].sum()) >= 1 for name in prunable_names(params))


def test_mask_from_scores_global_and_layerwise():
    params = {"a": torch.zeros(2, 3), "b": torch.zeros(3), "c": torch.zeros(1, 4)}
    scores = {
        "a": torch.tensor([[5.0, 1.0, 1.0], [0.0, 9.0, 2.0]]),
        "c": torch.tensor([[1.0, 3, 4, 1]]),
    }
    mask = mask_from_scores(
        params, scores, 0.5
    )  # prune 5 of 10: 0, 1 (a[0,1]), 1 (a[0,2]), 1 (c[0,0]), 1 (c[0,3])
    assert mask.keep["a"].tolist() == [[True, False, False], [False, True, True]]
    assert mask.keep["c"].tolist() == [[False, True, True, False]]
    assert bool(mask.keep["b"].all())
    layerwise = mask_from_scores(params, scores, keep_counts={"a": 1, "c": 3})
    assert layerwise.keep["a"].tolist() == [[False, False, False], [False, True, False]]
    # Ties by position: the earlier of the two 1.0 scores in c is pruned first.
    assert layerwise.keep["c"].tolist() == [[False, True, True, True]]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"p": 0.5, "keep_counts": {"a": 1}}, "exactly one"),
        ({}, "exactly one"),
        ({"p": 1.5}, "'p'"),
        ({"keep_counts": {"a": 7}}, "keep_counts"),
    ],
)
def test_mask_from_scores_rejects_bad_arguments(kwargs, match):
    params = {"a": torch.zeros(2, 3)}
    with pytest.raises(ValueError, match=match):
        mask_from_scores(params, {"a": torch.zeros(2, 3)}, **kwargs)
    with pytest.raises(ValueError, match="scores"):
        mask_from_scores(params, {"a": torch.zeros(3, 2)}, 0.5)


@pytest.mark.parametrize("p", [0.0, 0.3, 0.8, 0.99, 1.0])
def test_erk_budgets(params, p):
    counts = erk_keep_counts(params, p)
    n = _num_prunable(params)
    assert sum(counts.values()) == n - round(p * n)
    sizes = {k: params[k].numel() for k in counts}
    assert all(0 <= counts[k] <= sizes[k] for k in counts)
    # Non-dense layers have density proportional to sum(shape) / prod(shape), up to the
    # rounding of one weight per layer.
    sparse = [k for k in counts if counts[k] < sizes[k]]
    if len(sparse) >= 2 and 0 < p < 1:
        ratios = [counts[k] / sum(params[k].shape) for k in sparse]
        spread = [1 / sum(params[k].shape) for k in sparse]
        assert max(ratios) - min(ratios) <= 2 * max(spread) + 1e-12


def test_uniform_budgets_round_per_layer(params):
    counts = uniform_keep_counts(params, 0.3)
    assert counts == {k: params[k].numel() - round(0.3 * params[k].numel()) for k in counts}


def test_random_redraw_gives_fresh_seeded_client_masks(model, params):
    scheme = RandomPruning(0.3, seed=4, redraw=True)
    server = scheme.initial_mask(model, params, None, None)
    a, b = scheme.client_mask(1, 0, server), scheme.client_mask(1, 1, server)
    assert not a.equals(b) and a.equals(scheme.client_mask(1, 0, server))
    assert a.num_pruned() == server.num_pruned() == round(0.3 * _num_prunable(params))
    fixed = RandomPruning(0.3, seed=4)
    assert fixed.client_mask(3, 2, server) is server


@pytest.mark.parametrize("distribution", ["uniform", "erk"])
def test_feddst_readjustment_prunes_small_regrows_large_gradients_at_zero(
    model, params, distribution
):
    scheme = FedDST(0.5, decay_end=100, alpha=0.4, readjust_every=2, distribution=distribution)
    assert scheme.adjustment_rate(1) == 0.0 and scheme.adjustment_rate(100) == 0.0
    assert scheme.adjustment_rate(2) == pytest.approx(0.2 * (1 + math.cos(math.pi * 2 / 100)))
    mask = scheme.initial_mask(model, params, None, None)
    sent = mask.apply({n: t + 0.01 for n, t in params.items()})
    images, labels = _batch(5)
    out, new = scheme.readjust_client(2, 0, model, sent, mask, images, labels)
    g = batch_gradient(model, sent, images, labels)
    rate = scheme.adjustment_rate(2)
    total_grown = 0
    for name in prunable_names(params):
        old_keep, new_keep = mask.keep[name], new.keep[name]
        kept = int(old_keep.sum())
        swap = round(rate * kept)
        assert int(new_keep.sum()) == kept  # per-layer density unchanged
        dropped, grown = old_keep & ~new_keep, new_keep & ~old_keep
        assert int(grown.sum()) == int(dropped.sum()) <= swap
        total_grown += int(grown.sum())
        # Regrown weights start at zero; the others keep their trained values.
        assert bool((out[name][grown] == 0).all())
        torch.testing.assert_close(out[name][old_keep & new_keep], sent[name][old_keep & new_keep])
        assert bool((out[name][~new_keep] == 0).all())
        if int(dropped.sum()):
            # Dropped: among the `swap` smallest magnitudes of the kept weights.
            limit = torch.sort(sent[name][old_keep].abs()).values[swap - 1]
            assert float(sent[name][dropped].abs().max()) <= float(limit)
            # Grown: gradient magnitudes at least those of every weight left inactive.
            assert float(g[name][grown].abs().min()) >= float(g[name][~new_keep].abs().max())
    assert total_grown > 0
    same, same_mask = scheme.readjust_client(3, 0, model, sent, mask, images, labels)
    assert same_mask is mask and all(torch.equal(same[n], sent[n]) for n in sent)


def test_feddst_server_cuts_a_denser_union_back_by_magnitude(model, params):
    scheme = FedDST(0.5, decay_end=10, distribution="uniform")
    mask = scheme.initial_mask(model, params, None, None)
    assert scheme.server_mask(1, params, mask) is mask
    union = Mask.ones(params)
    cut = scheme.server_mask(1, params, union)
    expected = mask_from_scores(
        params,
        {n: params[n].abs() for n in prunable_names(params)},
        keep_counts=uniform_keep_counts(params, 0.5),
    )
    assert cut.equals(expected)


def test_prunefl_readjusts_only_in_its_rounds_by_magnitude_then_importance(model, params):
    scheme = PruneFL(0.5, readjust_every=3, max_decrease=0.3)
    mask = scheme.initial_mask(model, params, *_batch(6))
    assert mask.num_pruned() == round(0.5 * _num_prunable(params))
    target = "classifier.0.weight"
    pruned_index = int(torch.nonzero(~mask.keep[target].reshape(-1))[0])
    importance = {n: torch.zeros_like(t) for n, t in params.items()}
    importance[target].view(-1)[pruned_index] = 1.0
    scheme.observe_client(1, 0, importance, num_samples=4)
    assert scheme.server_mask(1, params, mask) is mask
    assert scheme.server_mask(2, params, mask) is mask
    new = scheme.server_mask(3, params, mask)
    assert new.num_pruned() == mask.num_pruned()
    assert bool(new.keep[target].reshape(-1)[pruned_index])  # the important weight is back
    for name in prunable_names(params):  # the top 70 % by magnitude of each layer stay
        kept = int(mask.keep[name].sum())
        stay = kept - int(0.3 * kept)
        top = torch.sort(
            torch.where(mask.keep[name], params[name].abs(), -1.0).reshape(-1),
            descending=True,
            stable=True,
        ).indices[:stay]
        assert bool(new.keep[name].reshape(-1)[top].all())
    assert scheme.server_mask(6, params, new) is new  # importance was reset after use


def test_tiered_scores_rank_first_tier_above_second():
    first = Mask({"w": torch.tensor([[True, False, False, True]])})
    ranks = tiered_scores(
        first,
        {"w": torch.tensor([[2.0, 0.0, 0.0, 1.0]])},
        {"w": torch.tensor([[0.0, 5.0, 7.0, 0.0]])},
    )
    assert ranks["w"].tolist() == [[3.0, 0.0, 1.0, 2.0]]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: build_scheme("lottery", 0.3), "name"),
        (lambda: build_scheme("random", 1.3), "'p'"),
        (lambda: build_scheme("feddst", 0.3), "rounds"),
        (lambda: build_scheme("snip", 0.3, seed=-1), "seed"),
        (lambda: FedDST(0.3, decay_end=0), "decay_end"),
        (lambda: FedDST(0.3, decay_end=5, distribution="er"), "distribution"),
        (lambda: PruneFL(0.3, readjust_every=0), "readjust_every"),
        (lambda: PruneFL(0.3, layer_costs={"w": 0.0}), "layer_costs"),
        (lambda: SynFlow(0.3, iterations=0), "iterations"),
        (lambda: build_scheme("grasp", 0.3, temperature=0.0), "temperature"),
    ],
)
def test_schemes_reject_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_build_scheme_passes_the_interval_and_decay_end():
    assert build_scheme("prunefl", 0.3, readjust_every=7).readjust_every == 7
    feddst = build_scheme("feddst", 0.3, rounds=40, readjust_every=4)
    assert (feddst.readjust_every, feddst.decay_end) == (4, 20)
    assert build_scheme("snip", 0.3, readjust_every=4).p == 0.3


def test_random_mask_on_keep_dict_matches_params(params):
    keep = Mask.ones(params).keep
    np.testing.assert_array_equal(
        random_mask(keep, 0.4, seed=9).flatten().numpy(),
        random_mask(params, 0.4, seed=9).flatten().numpy(),
    )
