"""Tests of sims.gradients.per_sample: per-layer per-sample gradients and Gram matrix.

The slow reference forms the ``(n, d)`` per-sample gradient matrix one sample at a time
(:func:`sims.core.functional.batch_gradient` on a batch of one, itself checked against
``loss.backward()`` in test_fl.py) and multiplies it out; the Gram is checked whole and
assembled from chunks of samples. Models run in float64, so the
routes agree to round-off (1e-10 relative).
"""

import copy

import pytest
import torch
from torch import nn

import pruneleak.sims.gradients.per_sample as per_sample_module
from pruneleak.sims.core.functional import batch_gradient
from pruneleak.sims.gradients.per_sample import per_sample_gradients, per_sample_gram
from pruneleak.sims.models import conv_net, vgg
from pruneleak.sims.pruning.mask import Mask, random_mask


class _Patchwise(nn.Module):
    """A model outside the fast path's common case: a strided, dilated convolution, a
    grouped convolution (vmap fallback), a linear layer applied at every image row
    (``T > 1`` positions), a LayerNorm (vmap fallback), a layer called twice and a
    linear layer without bias."""

    def __init__(self):
        super().__init__()
        self.strided = nn.Conv2d(2, 4, 3, stride=2, dilation=2, padding=1)
        self.grouped = nn.Conv2d(4, 4, 1, groups=2)
        self.rows = nn.Linear(12, 5)
        self.norm = nn.LayerNorm(5)
        self.twice = nn.Linear(5, 5)
        self.head = nn.Linear(15, 3, bias=False)
        self.input_shape, self.num_classes = (2, 7, 7), 3

    def forward(self, x):
        h = torch.tanh(self.grouped(torch.tanh(self.strided(x))))  # (n, 4, 3, 3)
        h = self.norm(torch.tanh(self.rows(h.permute(0, 2, 1, 3).flatten(2))))  # (n, 3, 5)
        h = self.twice(torch.tanh(self.twice(h)))
        return self.head(h.flatten(1))


class _TiedAndFolded(nn.Module):
    """Tied weights (one tensor in two linear layers) and a convolution that sees each
    image as two half-images folded into the batch (not batch-first): both need vmap."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 3, 2)
        self.first = nn.Linear(9, 9)
        self.second = nn.Linear(9, 9)
        self.second.weight = self.first.weight
        self.head = nn.Linear(18, 2)
        self.input_shape, self.num_classes = (1, 8, 4), 2

    def forward(self, x):
        halves = torch.tanh(self.conv(x.reshape(-1, 1, 4, 4)))  # (2n, 3, 3, 3)
        h = halves.reshape(x.shape[0], 2, 3, 9).mean(dim=2)  # (n, 2, 9)
        h = self.second(torch.tanh(self.first(h)))
        return self.head(h.flatten(1))


class _SharedOffset(nn.Module):
    """A linear layer applied to one learned row shared by all samples: batch-first (and
    recorded) only for a batch of one sample."""

    def __init__(self):
        super().__init__()
        self.row = nn.Parameter(torch.randn(1, 3))
        self.offset = nn.Linear(3, 4)
        self.head = nn.Linear(4, 2)
        self.input_shape, self.num_classes = (1, 2, 2), 2

    def forward(self, x):
        return self.head(torch.tanh(x.flatten(1) + self.offset(self.row)))


def _double(model):
    model = model.double()
    return model, {name: p.detach() for name, p in model.named_parameters()}


def _loop_gradients(model, params, images, labels, mask):
    rows = []
    for x, y in zip(images, labels, strict=True):
        g = batch_gradient(model, params, x[None], y[None])
        rows.append(torch.cat([g[name].reshape(-1) for name in params]))
    flat = torch.stack(rows).detach()
    if mask is None:
        return flat
    return flat[:, torch.cat([mask.keep[name].reshape(-1) for name in params])]


def _explicit_gram(model, params, images, labels, mask):
    g = _loop_gradients(model, params, images, labels, mask).double()
    return g @ g.T


def _check(model, params, images, labels, mask=None):
    torch.testing.assert_close(
        per_sample_gradients(model, params, images, labels, mask=mask).detach(),
        _loop_gradients(model, params, images, labels, mask),
        rtol=1e-10,
        atol=1e-12,
    )
    expected = _explicit_gram(model, params, images, labels, mask)
    # Chunks of 3 split every batch here unevenly (7 -> 3 + 3 + 1, 5 -> 3 + 2, 4 -> 3 + 1):
    # blocks K(A, B) of chunks of different sizes, on both sides of the diagonal.
    for chunk_size in (None, 3):
        fast, d = per_sample_gram(model, params, images, labels, mask=mask, chunk_size=chunk_size)
        assert fast.dtype == torch.float64 and fast.shape == expected.shape
        kept = mask.num_kept() if mask is not None else sum(p.numel() for p in params.values())
        assert d == kept
        scale = float(expected.abs().max())
        torch.testing.assert_close(fast, expected, rtol=1e-10, atol=1e-12 * scale)


@pytest.fixture(scope="module")
def conv2():
    torch.manual_seed(0)
    model, params = _double(
        conv_net(2, in_channels=1, image_size=8, num_classes=10, width=4, hidden=16)
    )
    images = torch.rand(7, 1, 8, 8, dtype=torch.float64)
    labels = torch.tensor([0, 3, 3, 9, 1, 7, 2])
    return model, params, images, labels


def test_unmasked_gradients_and_gram_match_the_loop(conv2):
    _check(*conv2)


# p = 0.1 subtracts the formed pruned coordinates from the factorised Gram, p = 0.9 forms
# the kept ones, p = 0.5 pairs the samples through the mask; p = 0 is the unmasked case
# given as a mask.
@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 0.9, 1.0])
def test_masked_gradients_and_gram_match_the_loop(conv2, p):
    model, params, images, labels = conv2
    _check(model, params, images, labels, random_mask(params, p, seed=3))


def test_blocks_of_one_output_row_give_the_same_gram(conv2, monkeypatch):
    model, params, images, labels = conv2
    mask = random_mask(params, 0.6, seed=1)
    monkeypatch.setattr(per_sample_module, "BLOCK_ELEMENTS", 1)
    _check(model, params, images, labels, mask)


@pytest.mark.parametrize("p", [None, 0.4])
def test_strided_grouped_positional_and_shared_layers(p):
    torch.manual_seed(1)
    model, params = _double(_Patchwise())
    images = torch.randn(5, 2, 7, 7, dtype=torch.float64)
    labels = torch.tensor([0, 2, 1, 1, 0])
    mask = None if p is None else random_mask(params, p, seed=2)
    _check(model, params, images, labels, mask)


@pytest.mark.parametrize("p", [None, 0.5])
def test_tied_weights_and_folded_batches(p):
    torch.manual_seed(3)
    model, params = _double(_TiedAndFolded())
    assert "second.weight" not in params  # named_parameters lists a tied tensor once
    images = torch.randn(4, 1, 8, 4, dtype=torch.float64)
    labels = torch.tensor([0, 1, 1, 0])
    mask = None if p is None else random_mask(params, p, seed=4)
    _check(model, params, images, labels, mask)


def test_vgg_and_a_subset_of_parameters():
    """Only the parameters passed are differentiated (the others are constants)."""
    torch.manual_seed(2)
    model, params = _double(vgg(4, in_channels=1, image_size=8, num_classes=4))
    subset = {name: t for name, t in params.items() if name != "features.0.weight"}
    images = torch.rand(4, 1, 8, 8, dtype=torch.float64)
    labels = torch.tensor([0, 1, 2, 3])
    _check(model, subset, images, labels)


def test_chunks_that_record_different_layers_are_refused():
    # n = 4 in chunks of 3 and 1: the shared-row layer is batch-first in the chunk of one
    # only, so the chunks' layers (and routes) differ; one chunk of 4 is fine.
    torch.manual_seed(5)
    model, params = _double(_SharedOffset())
    images = torch.randn(4, 1, 2, 2, dtype=torch.float64)
    labels = torch.tensor([0, 1, 1, 0])
    whole, _ = per_sample_gram(model, params, images, labels)
    torch.testing.assert_close(whole, _explicit_gram(model, params, images, labels, None))
    with pytest.raises(ValueError, match=r"'chunk_size' parameter of per_sample_gram .* Got 3"):
        per_sample_gram(model, params, images, labels, chunk_size=3)


def test_float32_gram_agrees_to_float32_round_off(conv2):
    model, params, images, labels = conv2
    model32 = copy.deepcopy(model).float()
    params32 = {name: t.float() for name, t in params.items()}
    fast, _ = per_sample_gram(model32, params32, images.float(), labels)
    expected = _explicit_gram(model, params, images, labels, None)
    torch.testing.assert_close(fast, expected, rtol=1e-5, atol=1e-6 * float(expected.abs().max()))


def test_bad_masks_are_refused(conv2):
    model, params, images, labels = conv2
    with pytest.raises(ValueError, match="'mask' parameter of per_sample_gram must be a Mask"):
        per_sample_gram(model, params, images, labels, mask={"x": 1})
    partial = Mask({name: torch.ones_like(t, dtype=torch.bool) for name, t in params.items()})
    del partial.keep["classifier.2.bias"]
    with pytest.raises(ValueError, match=r"names and shapes of 'params'.*classifier\.2\.bias"):
        per_sample_gram(model, params, images, labels, mask=partial)
    with pytest.raises(ValueError, match="'images' parameter of per_sample_gram"):
        per_sample_gram(model, params, images[:, :, :4], labels)
    with pytest.raises(ValueError, match=r"'chunk_size' parameter of per_sample_gram .* Got 0"):
        per_sample_gram(model, params, images, labels, chunk_size=0)


def test_per_sample_gradients_match_opacus(conv2):
    """Peer library: Opacus' GradSampleModule (hooks on the same layers) gives the same
    per-sample gradients of the summed cross-entropy."""
    from opacus import GradSampleModule

    model, params, images, labels = conv2
    peer = copy.deepcopy(model)
    sampled = GradSampleModule(peer, loss_reduction="sum")
    nn.functional.cross_entropy(sampled(images), labels, reduction="sum").backward()
    expected = torch.cat([p.grad_sample.reshape(len(images), -1) for p in peer.parameters()], dim=1)
    torch.testing.assert_close(
        per_sample_gradients(model, params, images, labels), expected, rtol=1e-10, atol=1e-12
    )
