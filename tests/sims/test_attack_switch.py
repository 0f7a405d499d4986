"""SGI and GI are one attack, sims.attacks.gradient_inversion, and ``mask_aware`` is the
only difference between them.

The references are built by hand: the revealed gradient of a two-tensor update written
out in numbers, and, on the digits model, the target and evaluation point each attack
must hand to sims.attacks.invert_gradient, formed from the client's own mask (not from
the recovered one) and the definitions ``(w - w_hat) / lr`` on kept and ``w / lr`` on
pruned coordinates.
"""

from __future__ import annotations

import pytest
import torch

from pruneleak.sims.attacks import (
    AttackConfig,
    gradient_inversion,
    invert_gradient,
    pseudo_gradient,
    recover_mask,
)
from pruneleak.sims.fl.client import client_update
from pruneleak.sims.pruning.mask import Mask, random_mask

CLIENT_LR = 0.25  # PriPrune's learning rate (arXiv:2310.19958, "Implementation details")
ONE_DIGIT = {"batch_shape": (1, 1, 8, 8), "num_classes": 10}
# A few unsigned Adam steps: cheap, and every input of the inversion shows in the result.
SHORT = AttackConfig(loss="l2", optimizer="adam", lr=0.1, iterations=5)


def test_revealed_gradient_of_a_small_update_worked_out_by_hand():
    """w = [[1, 2], [3, 4]], bias [0.5, -0.5]; the client pruned w[0, 1] and w[1, 0]
    (sent as 0) and kept a bias that landed on 0; lr = 0.5. All values are exact in
    binary, so the comparison is exact.

    GI reads (w - w_hat) / lr everywhere: [[(1 - 0.5) / 0.5, 2 / 0.5], [3 / 0.5,
    (4 - 3) / 0.5]] = [[1, 4], [6, 2]] (the pruned coordinates show w / lr), bias
    [(0.5 - 0.25) / 0.5, (-0.5 - 0) / 0.5] = [0.5, -1]. SGI zeroes the pruned ones:
    [[1, 0], [0, 2]], and keeps the bias (biases are never pruned)."""
    w = {"weight": torch.tensor([[1.0, 2.0], [3.0, 4.0]]), "bias": torch.tensor([0.5, -0.5])}
    sent = {"weight": torch.tensor([[0.5, 0.0], [0.0, 3.0]]), "bias": torch.tensor([0.25, 0.0])}
    dense = pseudo_gradient(w, sent, lr=0.5)
    masked = pseudo_gradient(w, sent, lr=0.5, mask=recover_mask(sent))
    assert dense["weight"].tolist() == [[1.0, 4.0], [6.0, 2.0]]
    assert masked["weight"].tolist() == [[1.0, 0.0], [0.0, 2.0]]
    assert dense["bias"].tolist() == masked["bias"].tolist() == [0.5, -1.0]


@pytest.fixture(scope="module")
def pruned_update(model, weights, digits):
    x, y = digits.images[:1], digits.labels[:1]
    mask = random_mask(weights, 0.5, seed=4)
    return mask, client_update(model, weights, mask, x, y, lr=CLIENT_LR), y


def test_gi_inverts_w_over_lr_on_pruned_coordinates_at_the_dense_weights(
    model, weights, pruned_update
):
    mask, sent, y = pruned_update
    by_hand = {
        n: torch.where(mask.keep[n], (weights[n] - sent[n]) / CLIENT_LR, weights[n] / CLIENT_LR)
        for n in weights
    }
    expected = invert_gradient(model, weights, by_hand, labels=y, config=SHORT, **ONE_DIGIT)
    gi = gradient_inversion(
        model, weights, sent, mask_aware=False, lr=CLIENT_LR, labels=y, config=SHORT, **ONE_DIGIT
    )
    assert torch.equal(gi.images, expected.images) and gi.loss == expected.loss


def test_sgi_inverts_the_masked_gradient_under_the_mask_at_the_masked_weights(
    model, weights, pruned_update
):
    mask, sent, y = pruned_update
    by_hand = {
        n: torch.where(mask.keep[n], (weights[n] - sent[n]) / CLIENT_LR, 0.0) for n in weights
    }
    expected = invert_gradient(
        model, mask.apply(weights), by_hand, labels=y, mask=mask, config=SHORT, **ONE_DIGIT
    )
    sgi = gradient_inversion(
        model, weights, sent, mask_aware=True, lr=CLIENT_LR, labels=y, config=SHORT, **ONE_DIGIT
    )
    assert torch.equal(sgi.images, expected.images) and sgi.loss == expected.loss


def test_both_settings_agree_on_an_unpruned_update(model, weights, digits):
    """Without pruning there is nothing for the switch to change: same reconstruction
    (each at its default evaluation point, m ⊙ w = w here)."""
    x, y = digits.images[:1], digits.labels[:1]
    sent = client_update(model, weights, Mask.ones(weights), x, y, lr=CLIENT_LR)
    kwargs = {"lr": CLIENT_LR, "labels": y, "config": SHORT, **ONE_DIGIT}
    sgi = gradient_inversion(model, weights, sent, mask_aware=True, **kwargs)
    gi = gradient_inversion(model, weights, sent, mask_aware=False, **kwargs)
    assert torch.equal(sgi.images, gi.images) and sgi.loss == gi.loss


def test_the_switch_must_be_a_bool(model, weights, pruned_update):
    _, sent, y = pruned_update
    with pytest.raises(ValueError, match="mask_aware"):
        gradient_inversion(
            model, weights, sent, mask_aware=1, lr=CLIENT_LR, labels=y, config=SHORT, **ONE_DIGIT
        )
