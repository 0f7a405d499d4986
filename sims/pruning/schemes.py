"""The six base pruning schemes of PriPrune's Table 1, behind one interface.

PriPrune (arXiv:2310.19958, appendix "Evaluation Methods", Table 1; journal version
Sec. 4.2.3) evaluates Random, SNIP, SynFlow, GraSP, FedDST and PruneFL as *base*
pruning, all at rate ``p = 0.3`` (appendix "Extra Implementation details"). Table 1:

=========  ====================  ==========  =========  =========
scheme     criterion             cycles      at server  at client
=========  ====================  ==========  =========  =========
SNIP       gradient-based        one shot    yes        no
SynFlow    gradient-based        one shot    yes        no
GraSP      gradient-based        one shot    yes        no
Random     "magnitude-based"     iterative   yes        yes
FedDST     magnitude-based       iterative   yes        yes
PruneFL    magnitude-based       iterative   yes        yes
=========  ====================  ==========  =========  =========

(Table 1 files Random under "magnitude-based", which it cannot be; see
:class:`RandomPruning` for our reading.) PriPrune gives no further detail, so each
scheme follows its own publication (and, where the paper is silent, its authors' code);
the choices are in each class's docstring.

A scheme is driven by the FL loop (:func:`sims.fl.server.run_federated`) through these
hooks, all of which default to "keep the mask":

1. :meth:`PruningScheme.initial_mask` -- the server's mask ``m^0`` before round 1,
   from the initial model and one client's data (one-shot schemes prune only here).
2. :meth:`PruningScheme.client_mask` -- the mask ``m_i^t`` client ``i`` trains under
   in round ``t`` (eq. (1)); by default the server's mask.
3. :meth:`PruningScheme.observe_client` -- receives the sum of the client's dense
   gradients over its local steps and the number of samples it processed (only called
   when ``needs_gradients``; PruneFL's importance).
4. :meth:`PruningScheme.readjust_client` -- may change the client's mask after local
   training (FedDST's prune-and-regrow) and returns what the client sends.
5. :meth:`PruningScheme.server_mask` -- the server's new mask ``m^t`` from the
   aggregate and the union of the clients' masks (FedDST's re-pruning, PruneFL's
   re-adjustment).

Rounds are counted from 1. An iterative scheme with ``readjust_every = R`` readjusts
in rounds ``R, 2R, 3R, ...``.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping
from typing import ClassVar

import numpy as np
import torch
from torch import nn

from pruneleak.bounds.validation import check_choice, check_int, check_real
from pruneleak.sims.core.functional import batch_gradient
from pruneleak.sims.core.runtime import check_seed
from pruneleak.sims.pruning.mask import (
    Mask,
    erk_keep_counts,
    mask_from_scores,
    prunable_names,
    random_mask,
    uniform_keep_counts,
)
from pruneleak.sims.pruning.readjustment import readjust_rounds
from pruneleak.sims.pruning.saliency import grasp_scores, snip_scores, synflow_scores

Params = Mapping[str, torch.Tensor]


def derived_seed(*entropy: int) -> int:
    """A 32-bit seed derived from integers (e.g. ``seed, round, client``) by numpy's
    ``SeedSequence``, so that streams of different (round, client) pairs are independent."""
    return int(np.random.SeedSequence([int(e) for e in entropy]).generate_state(1)[0])


class PruningScheme:
    """Base class: a mask at rate ``p`` from a model and a batch, plus per-round hooks.

    Subclasses set the class attributes (PriPrune Table 1) and override
    :meth:`initial_mask` and any hook they need; see the module docstring.

    Args:
        p: base pruning rate, the fraction of prunable weights pruned, in [0, 1].
        seed: seed of everything random in the scheme, >= 0.
    """

    name: ClassVar[str]
    one_shot: ClassVar[bool] = False
    at_client: ClassVar[bool] = False
    needs_gradients: ClassVar[bool] = False

    def __init__(self, p: float, *, seed: int = 0):
        func = type(self).__name__
        self.p = check_real("p", p, func=func, low=0, high=1)
        self.seed = check_seed(seed, func=func)

    def initial_mask(self, model: nn.Module, params: Params, images, labels) -> Mask:
        """The server's mask before round 1 (``images``, ``labels``: one client's data)."""
        raise NotImplementedError

    def client_mask(self, t: int, client_id: int, server_mask: Mask) -> Mask:
        """The mask client ``client_id`` trains under in round ``t``."""
        return server_mask

    def observe_client(
        self, t: int, client_id: int, gradient_sum: Params, num_samples: int
    ) -> None:
        """Sum of a client's dense gradients over its local steps (``needs_gradients``)."""

    def readjust_client(
        self, t: int, client_id: int, model: nn.Module, sent: Params, mask: Mask, images, labels
    ) -> tuple[dict[str, torch.Tensor], Mask]:
        """Change the client's mask after training; returns ``(sent, mask)`` to upload."""
        return dict(sent), mask

    def server_mask(self, t: int, params: Params, union: Mask) -> Mask:
        """The server's mask after aggregating round ``t``; ``union`` keeps every coordinate
        some client kept."""
        return union

    def _is_readjust_round(self, t: int) -> bool:
        return t % self.readjust_every == 0

    def readjust_rounds(self, rounds: int) -> list[int]:
        """The rounds ``<= rounds`` in which the scheme may change the mask (a one-shot
        scheme: none)."""
        return []


class RandomPruning(PruningScheme):
    """Random pruning: uniformly random masks of exactly ``round(p n)`` pruned weights
    (global-exact, :func:`random_mask`).

    By default the server draws one random mask (seeded by ``seed``), prunes ``w^0``
    with it, and every client trains under it for all rounds, as FedDST's "RandomMask"
    baseline (Bibikar et al. 2022: FedDST's masking with readjustment ratio 0; its code
    takes that mask by ERK-distributed magnitude of the random initial weights, we draw
    it uniformly). FedDST's repository also runs PruneFL and GraSP (through Tanaka et
    al.'s pruners, which provide SNIP and SynFlow too): the set PriPrune evaluates.
    Table 1 lists Random as "magnitude-based, iterative, at server and client", which
    fits no random scheme literally. ``redraw=True`` gives the iterative, client-side
    reading: each sampled client draws a fresh mask every round (seeded by ``(seed,
    round, client)``), the time-varying per-user ``m_i^t`` of eq. (1). On the small
    digits models we tried, redrawing 30 % of the weights each round kept conv models
    near chance for tens of rounds, while logistic regression trained normally.
    """

    name = "random"
    at_client = True

    def __init__(self, p: float, *, seed: int = 0, redraw: bool = False):
        super().__init__(p, seed=seed)
        self.redraw = bool(redraw)

    def initial_mask(self, model, params, images, labels) -> Mask:
        return random_mask(params, self.p, seed=self.seed)

    def client_mask(self, t, client_id, server_mask) -> Mask:
        if not self.redraw:
            return server_mask
        return random_mask(server_mask.keep, self.p, seed=derived_seed(self.seed, t, client_id))


class SNIP(PruningScheme):
    """SNIP (Lee et al. 2019): prune once, at the server, the ``round(p n)`` weights of
    lowest connection sensitivity ``|g ⊙ w|`` (global ranking) on one client's data
    (FedDST's code runs its one-shot GraSP baseline on its first client's data)."""

    name = "snip"
    one_shot = True

    def initial_mask(self, model, params, images, labels) -> Mask:
        return mask_from_scores(params, snip_scores(model, params, images, labels), self.p)


class GraSP(PruningScheme):
    """GraSP (Wang et al. 2020): prune once the ``round(p n)`` weights with the *largest*
    ``-w ⊙ Hg`` (global ranking), i.e. keep the largest ``w ⊙ Hg``; logits divided by
    ``temperature`` (200 in the authors' code). Data as :class:`SNIP`."""

    name = "grasp"
    one_shot = True

    def __init__(self, p: float, *, seed: int = 0, temperature: float = 200.0):
        super().__init__(p, seed=seed)
        self.temperature = check_real(
            "temperature", temperature, func="GraSP", low=0, low_inclusive=False
        )

    def initial_mask(self, model, params, images, labels) -> Mask:
        scores = grasp_scores(model, params, images, labels, temperature=self.temperature)
        return mask_from_scores(params, {n: -s for n, s in scores.items()}, self.p)


class SynFlow(PruningScheme):
    """SynFlow (Tanaka et al. 2020, Algorithm 1): data-free and iterative. Over
    ``iterations`` (100 in the paper) rounds of scoring, iteration ``k`` keeps the
    ``(1 - p)^(k / iterations)`` fraction of weights with the largest synaptic saliency
    of the currently masked network (the exponential schedule, global ranking), which
    avoids layer collapse. The data arguments are ignored; pruned weights stay pruned."""

    name = "synflow"
    one_shot = True

    def __init__(self, p: float, *, seed: int = 0, iterations: int = 100):
        super().__init__(p, seed=seed)
        self.iterations = check_int("iterations", iterations, func="SynFlow", low=1)

    def initial_mask(self, model, params, images=None, labels=None) -> Mask:
        mask = Mask.ones(params)
        for k in range(1, self.iterations + 1):
            scores = synflow_scores(model, params, mask.keep)
            # Scores are >= 0; -1 keeps already-pruned weights at the bottom of the ranking.
            ranked = {n: torch.where(mask.keep[n], s, -1.0) for n, s in scores.items()}
            rate_k = 1.0 - (1.0 - self.p) ** (k / self.iterations)
            mask = mask_from_scores(params, ranked, rate_k if k < self.iterations else self.p)
        return mask


class FedDST(PruningScheme):
    """FedDST (Bibikar et al. 2022, arXiv:2112.09824; code github.com/bibikar/feddst).

    * Initial mask: layer-wise magnitude pruning of ``w^0`` with Erdős–Rényi-Kernel
      budgets (the code's default ``--sparsity-distribution erk``; ``distribution=
      "uniform"`` prunes each layer at ``p``).
    * Clients train under the server's mask. In readjustment rounds (every
      ``readjust_every`` rounds while ``t < decay_end``) each client, after local
      training, prunes in every layer the ``round(alpha_t k_l)`` kept weights of smallest
      magnitude and regrows as many of the then-inactive weights with the largest
      gradient magnitude (gradient at its trained weights on its last batch), *with
      regrown weights set to zero* (RigL, Evci et al. 2020); per-layer counts, hence the
      density, are unchanged. As in RigL, a weight dropped and regrown in the same step
      keeps its value (FedDST's code zeroes every weight it selects by gradient, kept
      ones included), so layers that ERK leaves dense are not changed. The swapped
      fraction is annealed, ``alpha_t = alpha / 2 (1 + cos(pi t / decay_end))`` (FedDST's
      cosine schedule; its code multiplies by ``alpha`` once more, which we do not).
    * Server: each weight is averaged over the clients that keep it (the FL loop's
      aggregation, as in FedDST), then, if the union of the client masks is denser than
      the budgets, each layer is cut back to its budget by aggregate magnitude among
      the union. A weight regrown at zero by every client that kept it aggregates to
      zero and is the first to be cut, as in the code.

    Defaults ``alpha=0.01``, ``readjust_every=15`` are the FedDST README's CIFAR-10
    example; ``decay_end`` defaults (in :func:`build_scheme`) to half the rounds, the
    code's default.
    """

    name = "feddst"
    at_client = True

    def __init__(
        self,
        p: float,
        *,
        seed: int = 0,
        decay_end: int,
        alpha: float = 0.01,
        readjust_every: int = 15,
        distribution: str = "erk",
    ):
        super().__init__(p, seed=seed)
        func = "FedDST"
        self.decay_end = check_int("decay_end", decay_end, func=func, low=1)
        self.alpha = check_real("alpha", alpha, func=func, low=0, high=1)
        self.readjust_every = check_int("readjust_every", readjust_every, func=func, low=1)
        self.distribution = check_choice(
            "distribution", distribution, func=func, choices=("erk", "uniform")
        )
        self._budgets: dict[str, int] = {}

    def initial_mask(self, model, params, images, labels) -> Mask:
        budget_fn = erk_keep_counts if self.distribution == "erk" else uniform_keep_counts
        self._budgets = budget_fn(params, self.p)
        return mask_from_scores(
            params, {n: params[n].detach().abs() for n in self._budgets}, keep_counts=self._budgets
        )

    def adjustment_rate(self, t: int) -> float:
        """``alpha_t``, the fraction of each layer's kept weights swapped in round ``t``
        (0 outside readjustment rounds)."""
        if not self._is_readjust_round(t) or t >= self.decay_end:
            return 0.0
        return self.alpha / 2 * (1 + math.cos(math.pi * t / self.decay_end))

    def readjust_rounds(self, rounds: int) -> list[int]:
        """Multiples of ``readjust_every`` before ``decay_end`` (where ``alpha_t > 0``)."""
        return [t for t in readjust_rounds(self.readjust_every, rounds) if self.adjustment_rate(t)]

    def readjust_client(self, t, client_id, model, sent, mask, images, labels):
        rate = self.adjustment_rate(t)
        if rate == 0.0:
            return dict(sent), mask
        g = batch_gradient(model, sent, images, labels)
        keep, out = dict(mask.keep), dict(sent)
        for name in prunable_names(sent):
            shape = sent[name].shape
            kept = keep[name].reshape(-1)
            swap = round(rate * int(kept.sum()))
            if swap == 0:
                continue
            magnitude = torch.where(kept, sent[name].detach().abs().reshape(-1), math.inf)
            new = kept.clone()
            new[torch.sort(magnitude, stable=True).indices[:swap]] = False
            growth = torch.where(new, -1.0, g[name].abs().reshape(-1))
            grown = torch.sort(growth, stable=True, descending=True).indices[:swap]
            new[grown] = True
            weights = sent[name].detach().reshape(-1) * (new & kept)
            keep[name], out[name] = new.reshape(shape), weights.reshape(shape)
        return out, Mask(keep)

    def server_mask(self, t, params, union) -> Mask:
        if all(int(union.keep[n].sum()) <= k for n, k in self._budgets.items()):
            return union
        scores = {
            n: torch.where(union.keep[n], params[n].detach().abs(), -1.0) for n in self._budgets
        }
        counts = {n: min(k, int(union.keep[n].sum())) for n, k in self._budgets.items()}
        return mask_from_scores(params, scores, keep_counts=counts)


class PruneFL(PruningScheme):
    """PruneFL (Jiang et al. 2022, IEEE TNNLS, arXiv:1909.12326; code
    github.com/jiangyuang/PruneFL), at the fixed rate ``p`` PriPrune uses.

    * Importance: each client accumulates ``(sum of its gradients over the round's
      local steps)^2 * (samples processed)`` for every coordinate, pruned ones included
      (PruneFL's ``AdaptiveClient``); the server sums these over clients and rounds
      since the last re-adjustment.
    * Re-adjustment every ``readjust_every`` rounds (50 in PruneFL's FEMNIST config):
      in each layer the ``1 - max_decrease`` fraction of kept weights with the largest
      magnitude stay (PruneFL's ``MAX_DEC_DIFF = 0.3``), and the rest of the budget
      ``n - round(p n)`` is filled, over all layers, by the largest importance per unit
      time ``g^2 / c_l`` among the other weights. PruneFL instead grows the set while
      this raises its importance-per-time ratio, so its density floats; PriPrune fixes
      ``p`` (= 0.3), so we fill a fixed budget. ``layer_costs`` (time per weight of each
      layer, ``c_l``) defaults to 1 for every layer; PruneFL measures them per device.
      The mask changes only in re-adjustment rounds.
      When the staying weights alone exceed the budget, those of largest magnitude
      fill it.
    * Initial pruning: PruneFL prunes on one client before FL, alternating training and
      re-adjustment until the mask settles. Here the re-adjustment is applied once to
      the dense ``w^0`` (importance: the squared gradient of that client's data); with
      ``max_decrease >= p`` the staying weights fill the budget, so this is PruneFL's
      first removal step, magnitude pruning at rate ``p``, and importance-driven
      regrowth starts at the first re-adjustment round.
    """

    name = "prunefl"
    at_client = True
    needs_gradients = True

    def __init__(
        self,
        p: float,
        *,
        seed: int = 0,
        readjust_every: int = 50,
        max_decrease: float = 0.3,
        layer_costs: Mapping[str, float] | None = None,
    ):
        super().__init__(p, seed=seed)
        func = "PruneFL"
        self.readjust_every = check_int("readjust_every", readjust_every, func=func, low=1)
        self.max_decrease = check_real("max_decrease", max_decrease, func=func, low=0, high=1)
        self.layer_costs = dict(layer_costs or {})
        for name, cost in self.layer_costs.items():
            check_real(f"layer_costs[{name!r}]", cost, func=func, low=0, low_inclusive=False)
        self._importance: dict[str, torch.Tensor] = {}

    def _readjust(self, params: Params, mask: Mask, importance: Params) -> Mask:
        names = prunable_names(params)
        unknown = sorted(set(self.layer_costs) - set(names))
        if unknown:
            raise ValueError(
                f"The 'layer_costs' parameter of PruneFL must name prunable layers of the "
                f"model ({', '.join(names)}). Got {unknown} instead."
            )
        magnitude = {n: torch.where(mask.keep[n], params[n].detach().abs(), -1.0) for n in names}
        stay = {}
        for name in names:
            kept = int(mask.keep[name].sum())
            stay[name] = kept - int(self.max_decrease * kept)
        staying = mask_from_scores(params, magnitude, keep_counts=stay)
        per_time = {n: importance[n].detach() / self.layer_costs.get(n, 1.0) for n in names}
        return mask_from_scores(params, tiered_scores(staying, magnitude, per_time), self.p)

    def initial_mask(self, model, params, images, labels) -> Mask:
        g = batch_gradient(model, params, images, labels)
        return self._readjust(params, Mask.ones(params), {n: g[n] ** 2 for n in g})

    def readjust_rounds(self, rounds: int) -> list[int]:
        """Multiples of ``readjust_every``."""
        return readjust_rounds(self.readjust_every, rounds)

    def observe_client(self, t, client_id, gradient_sum, num_samples) -> None:
        for name, g in gradient_sum.items():
            contribution = g.detach() ** 2 * num_samples
            if name in self._importance:
                self._importance[name] = self._importance[name] + contribution
            else:
                self._importance[name] = contribution

    def server_mask(self, t, params, union) -> Mask:
        if not self._is_readjust_round(t) or not self._importance:
            return union
        mask = self._readjust(params, union, self._importance)
        self._importance = {}
        return mask


def tiered_scores(first: Mask, first_key: Params, second_key: Params) -> dict[str, torch.Tensor]:
    """Scores that rank every coordinate kept by ``first`` above all others, ordering
    each tier by its own key (``first_key`` inside ``first``, ``second_key`` outside),
    as ranks ``0 .. n-1`` over the prunable weights (ties by position)."""
    names = prunable_names(first.keep)
    in_first = torch.cat([first.keep[n].reshape(-1) for n in names])
    keys = [torch.cat([k[n].reshape(-1) for n in names]) for k in (second_key, first_key)]
    ranks = torch.empty(in_first.numel(), dtype=torch.float64, device=in_first.device)
    offset = 0
    for tier, key in zip((~in_first, in_first), keys, strict=True):
        where = torch.nonzero(tier).reshape(-1)
        order = torch.sort(key[where], stable=True).indices
        ranks[where[order]] = torch.arange(
            offset, offset + where.numel(), dtype=torch.float64, device=ranks.device
        )
        offset += where.numel()
    chunks = ranks.split([first.keep[n].numel() for n in names])
    return {n: c.reshape(first.keep[n].shape) for n, c in zip(names, chunks, strict=True)}


# name -> scheme class; a new base pruning scheme is one class and one line here.
SCHEMES: dict[str, type[PruningScheme]] = {
    cls.name: cls for cls in (RandomPruning, SNIP, SynFlow, GraSP, FedDST, PruneFL)
}


def available_schemes() -> tuple[str, ...]:
    """Names accepted by :func:`build_scheme`."""
    return tuple(SCHEMES)


def build_scheme(
    name: str,
    p: float,
    *,
    seed: int = 0,
    rounds: int | None = None,
    readjust_every: int | None = None,
    **options,
) -> PruningScheme:
    """The scheme registered as ``name`` at rate ``p``.

    ``rounds`` (the FL horizon) sets FedDST's ``decay_end`` to ``rounds // 2`` unless
    ``options`` give one; ``readjust_every`` (when not None) goes to the iterative
    schemes that have it (FedDST, PruneFL); other ``options`` go to the class, which
    must take them (a ValueError names the ones it does not).
    """
    func = "build_scheme"
    check_choice("name", name, func=func, choices=available_schemes())
    cls = SCHEMES[name]
    accepted = [key for key in inspect.signature(cls).parameters if key not in ("p", "seed")]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise ValueError(
            f"The 'options' parameter of {func} must name options of {name!r} "
            f"({', '.join(accepted) or 'none'}). Got {unknown} instead."
        )
    if readjust_every is not None and cls in (FedDST, PruneFL):
        options["readjust_every"] = readjust_every
    if cls is FedDST and "decay_end" not in options:
        if rounds is None:
            raise ValueError("build_scheme('feddst', ...) needs 'rounds' or 'decay_end'.")
        options["decay_end"] = max(1, check_int("rounds", rounds, func="build_scheme", low=1) // 2)
    return cls(p, seed=seed, **options)
