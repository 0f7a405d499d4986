"""PriPrune's client-side defenses, applied after the base pruning scheme, with client state.

PriPrune (arXiv:2310.19958, "Pruning as a Privacy Defense for FL"; journal version
Sec. 5, Algorithm 3) lets each client withhold part of the weights its base mask keeps.
The FL loop (:func:`sims.fl.server.run_federated` with ``defense=``) calls, for client
``i`` in round ``t``:

1. :meth:`Defense.start` -- the weights the client starts from. With **Pseudo-Pruning**
   the weights it withheld the last time it took part are loaded back into the
   broadcast model, ``w_init = w^t ⊙ m_hat + w_tilde ⊙ (1 - m_hat)`` (the text after
   AAAI eq. 8; journal Sec. 5.2); with real pruning, and at a client's first round, it
   is ``w^t``.
2. :meth:`Defense.local_update` -- local training: eq. (1) under the base mask
   (:func:`sims.fl.client.local_sgd`); the adaptive defense
   (:mod:`sims.defenses.adaptive`) trains its mask probabilities with the weights.
3. :meth:`Defense.upload` -- the shared weights ``w_hat = w_bar ⊙ m_hat`` the server
   receives, zeros at the withheld coordinates, which are not sent: the server averages
   each coordinate over the clients that sent it; with Pseudo-Pruning the client keeps
   ``w_tilde = w_bar ⊙ (1 - m_hat)`` (Algorithm 3 line 13).

Every client round's defense rate, the withheld fraction of the base-kept prunable
weights, is appended to :attr:`Defense.records`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import ClassVar, NamedTuple

import torch
from torch import nn

from pruneleak.bounds.validation import check_bool, check_real
from pruneleak.sims.core.runtime import check_seed
from pruneleak.sims.defenses.masks import STRATEGIES, defense_mask
from pruneleak.sims.fl.client import local_sgd
from pruneleak.sims.pruning.mask import Mask, prunable_names
from pruneleak.sims.pruning.schemes import derived_seed

Params = Mapping[str, torch.Tensor]


def withheld_fraction(base: Mask, shared: Mask) -> float:
    """Fraction of the base-kept prunable weights that ``shared`` withholds (0 when the
    base mask keeps none); ``shared`` must hold every prunable tensor of ``base``, with
    its shape (ValueError otherwise)."""
    names = prunable_names(base.keep)
    for n in names:
        got = shared.keep.get(n)
        if got is None or got.shape != base.keep[n].shape:
            raise ValueError(
                f"The 'shared' parameter of withheld_fraction must have the tensor {n!r} of "
                f"'base', of shape {tuple(base.keep[n].shape)}. "
                f"Got {'none' if got is None else tuple(got.shape)} instead."
            )
    if not names:
        return 0.0
    counts = torch.stack(
        [torch.stack([base.keep[n].sum(), (base.keep[n] & ~shared.keep[n]).sum()]) for n in names]
    )
    kept, withheld = counts.sum(0).tolist()  # one device synchronisation
    return withheld / kept if kept else 0.0


class Withheld(NamedTuple):
    """What Pseudo-Pruning keeps of a client's prunable tensor after its round: the
    ``flags`` of the base-kept weights it withheld, and its trained ``values``, from which
    its next round starts on those weights (module docstring)."""

    flags: torch.Tensor
    values: torch.Tensor


class Defense:
    """Base class: a client-side defense after the base scheme (module docstring).

    Subclasses set ``name`` and implement :meth:`shared_mask`; one that trains its own
    mask overrides :meth:`local_update` too.

    Args:
        pseudo: Pseudo-Pruning (withheld weights kept for the client's next round) or
            real pruning (withheld weights dropped).
        seed: seed of everything random in the defense, >= 0.
    """

    name: ClassVar[str]

    def __init__(self, *, pseudo: bool = True, seed: int = 0):
        self.pseudo = check_bool("pseudo", pseudo, func=type(self).__name__)
        self.seed = check_seed(seed, func=type(self).__name__)
        self.records: list[dict] = []
        self._withheld: dict[int, dict[str, Withheld]] = {}

    @property
    def label(self) -> str:
        """The defense's name as in PriPrune's figures, e.g. ``"Largest (Pseudo)"``."""
        return f"{self.name}{' (Pseudo)' if self.pseudo else ''}"

    def start(self, client_id: int, global_params: Params) -> dict[str, torch.Tensor]:
        """The weights client ``client_id`` starts its round from (module docstring)."""
        saved = self._withheld.get(client_id, {})
        return {
            name: torch.where(saved[name].flags, saved[name].values, value)
            if name in saved
            else value
            for name, value in global_params.items()
        }

    def local_update(
        self,
        t: int,
        client_id: int,
        model: nn.Module,
        start: Params,
        mask: Mask,
        batches: Iterable[tuple[torch.Tensor, torch.Tensor]],
        *,
        lr: float,
        gradient_at: str,
        on_gradient: Callable[[dict[str, torch.Tensor]], None] | None = None,
        on_loss: Callable[[torch.Tensor], None] | None = None,
    ) -> dict[str, torch.Tensor]:
        """Local training from ``start`` under the base mask ``mask``: eq. (1) steps."""
        del t, client_id
        return local_sgd(
            model,
            start,
            mask,
            batches,
            lr=lr,
            gradient_at=gradient_at,
            on_gradient=on_gradient,
            on_loss=on_loss,
        )

    def shared_mask(
        self, t: int, client_id: int, start: Params, trained: Params, base: Mask
    ) -> Mask:
        """The weights client ``client_id`` shares in round ``t`` (a subset of ``base``)."""
        raise NotImplementedError

    def upload(
        self, t: int, client_id: int, start: Params, trained: Params, base: Mask
    ) -> tuple[dict[str, torch.Tensor], Mask]:
        """``(w_bar ⊙ m_hat, m_hat)``: what the server receives and which coordinates it
        holds; records the rate and, with Pseudo-Pruning, keeps the withheld weights
        (module docstring)."""
        shared = self.shared_mask(t, client_id, start, trained, base)
        self.records.append(
            {"round": t, "client": client_id, "rate": withheld_fraction(base, shared)}
        )
        if self.pseudo:
            self._withheld[client_id] = {
                n: Withheld(base.keep[n] & ~shared.keep[n], trained[n].detach())
                for n in prunable_names(shared.keep)
            }
        return shared.apply(trained), shared


class FixedDefense(Defense):
    """Largest, Random or Mix at a fixed defense rate (:mod:`sims.defenses.masks`).

    Args:
        strategy: ``"largest"``, ``"random"`` or ``"mix"``.
        rate: the defense rate ``p_hat`` in [0, 1] (PriPrune: 0.3; Fig. 4a sweeps
            0.1-0.6 for Largest (Pseudo)).
        largest_fraction: for Mix, the share of ``rate`` chosen by gradient (0.5).
        pseudo, seed: as in :class:`Defense`; the random choices of client ``i`` in
            round ``t`` are seeded by ``(seed, t, i)``.
    """

    def __init__(
        self,
        strategy: str,
        rate: float = 0.3,
        *,
        largest_fraction: float = 0.5,
        pseudo: bool = True,
        seed: int = 0,
    ):
        func = "FixedDefense"
        if strategy not in STRATEGIES:
            raise ValueError(
                f"The 'strategy' parameter of {func} must be one of {STRATEGIES}. "
                f"Got {strategy!r} instead."
            )
        super().__init__(pseudo=pseudo, seed=seed)
        self.strategy = strategy
        self.rate = check_real("rate", rate, func=func, low=0, high=1)
        self.largest_fraction = check_real(
            "largest_fraction", largest_fraction, func=func, low=0, high=1
        )

    @property
    def name(self) -> str:
        return self.strategy.capitalize()

    def shared_mask(self, t, client_id, start, trained, base) -> Mask:
        update = {name: start[name] - trained[name] for name in prunable_names(base.keep)}
        generator = torch.Generator().manual_seed(derived_seed(self.seed, t, client_id))
        return defense_mask(
            self.strategy,
            base,
            update,
            rate=self.rate,
            largest_fraction=self.largest_fraction,
            generator=generator,
        )
