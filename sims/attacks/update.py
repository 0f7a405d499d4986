"""What an honest-but-curious server reads off one pruned FedSGD update.

The server holds the global weights ``w`` it broadcast and the pruned weights
``w_hat = m ⊙ (w - lr * g)`` a client sent back after one step (PriPrune,
arXiv:2310.19958, eq. (1); :func:`sims.fl.client.client_update`). From them it reads

* the mask, from the zeros of ``w_hat`` (:func:`recover_mask`, Algorithm 2 line 3);
* the gradient, ``(w - w_hat) / lr`` (:func:`pseudo_gradient`, line 4, with the sign
  and the reference corrected: deviation 1 in :mod:`sims.attacks.attack`), masked for SGI, dense for
  GI, where a pruned coordinate shows ``w / lr`` instead of a gradient;
* the label of a single image, from the signs of the last layer's gradient
  (:func:`idlg_label`, iDLG: Zhao, Mopuri and Bilen 2020, arXiv:2001.02610);
* the B labels of a batch, with multiplicity, from the same gradient's row sums
  (:func:`recover_labels`, LLG: Wainakh et al. 2022, arXiv:2105.09369).
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from pruneleak.bounds.validation import check_int
from pruneleak.sims.attacks.checks import check_param_dict, check_same_layout
from pruneleak.sims.core.functional import check_lr
from pruneleak.sims.pruning.mask import Mask

#: Most labels :func:`recover_labels` reads off one gradient. Its step 3 takes one label
#: per pass (about 6 us each on a CPU, measured: 0.4 s at this limit; 10**9 labels would
#: take hours), and the counts are already off by one at B = 8 on the digits model
#: (docs/deviations.md, "SGI: PriPrune's Algorithm 2"): 65,536 is far beyond any batch whose labels
#: the gradient identifies.
MAX_LABELS = 2**16


def recover_mask(sent_params: Mapping[str, torch.Tensor]) -> Mask:
    """The pruning mask read off the zeros of the sent weights (PriPrune Alg. 2, line 3).

    ``m_rec[j] = 1 if w_hat[j] != 0 else 0`` for the prunable tensors (``ndim >= 2``);
    biases are never pruned (:mod:`sims.pruning`), so their mask is all-True whatever
    their values.

    Caveat: a kept weight whose update lands exactly on 0.0 is read as pruned. With
    continuous weights and gradients this has probability zero, but it can happen
    (e.g. a weight initialised to 0 in a layer with zero gradient), so the recovered
    mask is exact almost surely, not always.
    """
    return mask_from_zeros(check_param_dict("sent_params", sent_params, func="recover_mask"))


def mask_from_zeros(sent: dict[str, torch.Tensor]) -> Mask:
    """:func:`recover_mask` of sent weights that :func:`sims.attacks.checks.check_param_dict`
    already returned (the attack checks each input once)."""
    return Mask(
        {
            name: (t != 0) if t.ndim >= 2 else torch.ones_like(t, dtype=torch.bool)
            for name, t in sent.items()
        }
    )


def pseudo_gradient(
    global_params: Mapping[str, torch.Tensor],
    sent_params: Mapping[str, torch.Tensor],
    *,
    lr: float,
    mask: Mask | None = None,
) -> dict[str, torch.Tensor]:
    """The gradient a one-step FedSGD update reveals: ``(w - w_hat) / lr``, masked.

    With ``mask`` (SGI, PriPrune Alg. 2 line 4, sign and reference corrected -- deviation
    1 in :mod:`sims.attacks.attack`) the result is ``m ⊙ (w - w_hat) / lr``, which equals
    the client's ``m ⊙ g`` up to float round-off. With ``mask=None`` (GI's view) every
    coordinate is kept, so a pruned coordinate shows ``w / lr``. ``lr`` is the client's
    learning rate, > 0.
    """
    func = "pseudo_gradient"
    lr = check_lr("lr", lr, func=func)
    w = check_param_dict("global_params", global_params, func=func)
    sent = check_param_dict("sent_params", sent_params, func=func)
    return revealed_gradient(w, sent, lr=lr, mask=mask, func=func)


def revealed_gradient(
    w: dict[str, torch.Tensor],
    sent: dict[str, torch.Tensor],
    *,
    lr: float,
    mask: Mask | None,
    func: str,
) -> dict[str, torch.Tensor]:
    """:func:`pseudo_gradient` of weights that :func:`sims.attacks.checks.check_param_dict`
    already returned and a checked ``lr``; only the layouts are checked here."""
    check_same_layout("global_params", w, "sent_params", sent, func=func)
    revealed = {name: (w[name] - sent[name].to(w[name].device)) / lr for name in w}
    if mask is None:
        return revealed
    check_same_layout("mask.keep", mask.keep, "global_params", w, func=func)
    return mask.to(next(iter(w.values())).device).apply(revealed)


def _last_linear_weight(grads: Mapping[str, torch.Tensor], num_classes: int, *, func: str) -> str:
    names = [n for n, t in grads.items() if t.ndim == 2 and t.shape[0] == num_classes]
    if not names:
        raise ValueError(
            f"{func} needs a 2-D weight with {num_classes} rows (the last linear layer) in "
            f"the gradient. Got shapes {[tuple(t.shape) for t in grads.values()]} instead."
        )
    return names[-1]


def idlg_label(
    target_grad: Mapping[str, torch.Tensor], *, num_classes: int, mask: Mask | None = None
) -> torch.Tensor:
    """Label of a single image from its gradient (iDLG, Zhao et al. 2020, Section 3).

    For cross-entropy the gradient of the last linear layer's row ``i`` is
    ``(softmax_i - 1[i = y]) * h``, with ``h`` the layer's input. If every entry of ``h``
    is >= 0 -- **required**: the activation before the last linear layer must be
    non-negative (sigmoid, ReLU; not tanh) -- the true label's row sum is <= 0 and every
    other row sum is >= 0, so ``y = argmin_i sum_j grad[i, j]``. With ``mask`` the sums
    run over kept coordinates only. The last linear layer is the last 2-D tensor with
    ``num_classes`` (>= 2) rows in ``target_grad``'s order.

    Returns an int64 tensor of shape ``(1,)`` on the gradient's device.
    """
    func = "idlg_label"
    num_classes = check_int("num_classes", num_classes, func=func, low=2)
    grads = check_param_dict("target_grad", target_grad, func=func)
    name = _last_linear_weight(grads, num_classes, func=func)
    return _revealed_row_sums(grads, name, mask).argmin().reshape(1)


def _revealed_row_sums(grads: dict[str, torch.Tensor], name: str, mask: Mask | None):
    """Row sums of the last layer's weight gradient over its kept (revealed) entries."""
    g = grads[name] if mask is None else grads[name] * mask.keep[name].to(grads[name].device)
    return g.sum(dim=1)


def recover_labels(
    target_grad: Mapping[str, torch.Tensor],
    *,
    num_classes: int,
    batch_size: int,
    mask: Mask | None = None,
) -> torch.Tensor:
    """The B labels of a batch, with multiplicity, from its gradient (LLG, Wainakh et al.
    2022, "User-Level Label Leakage from Gradients in Federated Learning", PoPETs,
    arXiv:2105.09369, Section 4, the plain "LLG" variant without auxiliary data).

    For the mean cross-entropy of B images the last linear layer's gradient row ``i`` is
    ``G_i = (1/B) sum_b (softmax_bi - 1[y_b = i]) h_b`` with ``h_b`` the layer's input for
    image b. Its row sum ``s_i = sum_j G_ij`` has two parts: a positive offset
    ``(1/B) sum_b softmax_bi |h_b|_1`` and, for every occurrence of class i, an
    "impact" ``-(1/B) |h_b|_1``. LLG reads the labels off the ``s_i``:

    1. every class with ``s_i < 0`` occurs at least once (Property 1: an absent class
       has ``G_i >= 0`` entrywise); one occurrence each is taken, the most negative
       first, at most B (the authors' code, tklab-tud/LLG, takes every negative class,
       which can return more than B labels);
    2. the impact of one occurrence is estimated as ``m = (1 + 1/C) / B * sum_{s_i < 0}
       s_i`` (<= 0; the mean negative mass per image, scaled up for the offset; the
       factor as in the authors' code), and
       ``m`` is subtracted from the sum of every class taken;
    3. until B labels are found, the class with the smallest remaining sum is taken
       again and ``m`` subtracted from its sum (Property 2: the sum falls with each
       occurrence).

    Assumptions: (a) ``h_b >= 0`` entrywise -- the activation before the last linear
    layer is non-negative (ReLU, sigmoid; not tanh); (b) the gradient is that of one
    local step on the batch (a FedSGD update; after several local steps it mixes the
    weights' trajectory); (c) the impacts ``|h_b|_1`` are similar across images and the
    offsets small next to them (an untrained or early model, whose softmax is spread
    out: the paper's setting, where it is most accurate). When (a) fails absent classes
    can have negative sums and step 1 takes wrong classes (more than B negative sums
    are then common: the B most negative are kept); when (c) fails, e.g. a trained
    model confident on some images, the offsets of a frequent class can hide a repeat
    and the counts are off by one; so exactness falls as B grows (measured in
    docs/deviations.md, "SGI: PriPrune's Algorithm 2"). No step raises on a wrong answer:
    nothing in the gradient certifies it. Under a mask every revealed sum can be >= 0;
    then ``m = 0`` and step 3 takes the smallest sum B times. With B = 1 step 1 or step 3
    takes ``argmin_i s_i``, which is :func:`idlg_label`.

    With ``mask`` (an SGI update) the sums run over the revealed (kept) entries only;
    Property 1 holds on any subset of a row, and the impact estimate scales with the
    revealed fraction, so the method is unchanged, but a class whose row is pruned
    entirely is never found by step 1. If no entry of the last layer's gradient is
    revealed and nonzero there is nothing to read, and the call raises. The last linear
    layer is the last 2-D tensor with ``num_classes`` (>= 2) rows in ``target_grad``'s
    order; ``batch_size`` in [1, :data:`MAX_LABELS`].

    Returns an int64 tensor of shape ``(batch_size,)`` on the gradient's device, sorted
    by class (a gradient does not reveal the order of the images).
    """
    func = "recover_labels"
    num_classes = check_int("num_classes", num_classes, func=func, low=2)
    batch_size = check_int("batch_size", batch_size, func=func, low=1, high=MAX_LABELS)
    grads = check_param_dict("target_grad", target_grad, func=func)
    name = _last_linear_weight(grads, num_classes, func=func)
    sums = _revealed_row_sums(grads, name, mask).to("cpu", torch.float64)
    if not bool((sums != 0).any()):
        raise ValueError(
            f"The 'target_grad' parameter of {func} reveals no nonzero entry of the last "
            f"linear layer's gradient {name!r} (every row sum over the kept entries is 0): "
            "its labels cannot be read."
        )
    negative = sums < 0
    impact = (1 + 1 / num_classes) * sums[negative].sum() / batch_size
    first = sums.argsort()[: min(int(negative.sum()), batch_size)]
    remaining = sums.clone()
    remaining[first] -= impact
    found = first.tolist()
    while len(found) < batch_size:  # B - len(first) passes
        i = int(remaining.argmin())
        found.append(i)
        remaining[i] -= impact
    return torch.tensor(sorted(found), dtype=torch.int64, device=grads[name].device)
