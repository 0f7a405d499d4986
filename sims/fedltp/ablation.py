"""The components of Fed-LTP that the paper's ablation study (Sec. 6.4, Figs. 6-9) removes.

``papers/fed-ltp-lottery-ticket-zcdp.txt``, lines 410-427. :class:`Ablation` holds one
switch per figure; :func:`sims.fedltp.training.run_fedltp` takes it (``ablation=``), and
the default, :data:`FULL`, is Fed-LTP as published (its runs keep the keys they had
before this switch existed).

- ``global_model="unpruned"`` (Fig. 6, line 414: "Fed-LTP without the global model
  generation ..., where the unpruned network is used"): no ticket search; the global model
  is the dense ``w0`` that ticket 0 would start from (DP-Fed's), which fed-iterative
  pruning still prunes per client (eq. 12) and fed-one-shot broadcasts as it is.
- ``validation=False`` (Fig. 7, line 423: "the global model in the final training process
  can be regarded as the final model"): no validation scores are computed or released,
  the last global model is the released one, and the accounting drops the Laplace
  releases (``bounds.accounting``'s ``validation="none"``), so the budget affords a few
  more rounds.
- ``tickets="client"`` (Fig. 8, scheme 1, line 421: "client-side WTs selection, where MTs
  generate and save WTs with local private data on the client side"): every client runs
  Algorithm 1 once on its own training data (one ticket, scored on its own validation
  data) from the shared ``w0`` of ticket 0, so that the global model has one coordinate
  system, and trains under its own mask in every round; the global model keeps the
  union of the clients' masks. These tickets are trained on private data without noise:
  the epsilon reported for such a run does not cover them (the paper does not account
  for them either). Fed-one-shot only (the nested masks of eq. 12 are the server's).
  Scheme 2 of Fig. 8, "client-side transfer-WTs selection", is not implemented: the text
  says only that "MTs only need to select and train a pretrained model created by the
  server side", which does not fix what a client selects from or by which score.
- ``accounting="composition"`` (Fig. 9, line 425: "without the privacy loss with zCDP"):
  the same mechanisms accounted by basic composition of each one's (epsilon, delta)
  (:func:`bounds.accounting.fedltp_epsilon_composition`) instead of Renyi composition
  (:func:`bounds.accounting.fedltp_epsilon_corrected`, this package's corrected
  counterpart of the paper's zCDP Theorem 1). At the same budget the looser accounting
  affords fewer rounds; the noise added is the same.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from pruneleak.bounds.validation import check_bool, check_choice

GLOBAL_MODELS = ("ticket", "unpruned")
TICKET_SIDES = ("server", "client")
ACCOUNTINGS = ("rdp", "composition")


@dataclass(frozen=True)
class Ablation:
    """Which of Fed-LTP's components a run keeps (module docstring; defaults: all).

    Attributes:
        global_model: ``"ticket"`` (Algorithm 1) or ``"unpruned"`` (Fig. 6).
        validation: whether the Laplace-noised validation selects the released model
            (True) or the last model is released (False, Fig. 7).
        tickets: ``"server"`` (the server-side WT broadcasting of Sec. 4.2) or
            ``"client"`` (Fig. 8's client-side WT selection).
        accounting: ``"rdp"`` (Renyi composition) or ``"composition"`` (basic
            composition, Fig. 9's "without zCDP").
    """

    global_model: str = "ticket"
    validation: bool = True
    tickets: str = "server"
    accounting: str = "rdp"

    def __post_init__(self) -> None:
        func = "Ablation"
        check_choice("global_model", self.global_model, func=func, choices=GLOBAL_MODELS)
        check_bool("validation", self.validation, func=func)
        check_choice("tickets", self.tickets, func=func, choices=TICKET_SIDES)
        check_choice("accounting", self.accounting, func=func, choices=ACCOUNTINGS)
        if self.global_model == "unpruned" and self.tickets == "client":
            raise ValueError(
                f"The 'tickets' parameter of {func} must be 'server' with "
                f"global_model='unpruned' (no ticket is searched). Got {self.tickets!r} instead."
            )

    def changed(self) -> dict:
        """The switches that differ from :data:`FULL` (empty for Fed-LTP as published)."""
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if getattr(self, f.name) != getattr(FULL, f.name)
        }

    @property
    def validation_release(self) -> str:
        """What each round's validation releases, in ``bounds.accounting``'s terms."""
        return "exact" if self.validation else "none"


#: Fed-LTP as published: every component.
FULL = Ablation()
