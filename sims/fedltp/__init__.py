"""Fed-LTP (Shi et al., ``papers/fed-ltp-lottery-ticket-zcdp.txt``): Algorithms 1 and 2.

Modules (one idea each):

- ``config``: :class:`FedLTPConfig`, every parameter with the paper's values as defaults.
- ``ablation``: :class:`Ablation`, the components the paper's Figs. 6-9 remove.
- ``data``: :func:`split_fedltp_data` (or :func:`split_for_config`), disjoint public and
  private parts and the clients (IID or Dirichlet).
- ``masks``: magnitude pruning of the remaining weights; fed-iterative masks (eq. 12-16).
- ``tickets``: Algorithm 1, winning tickets with rewinding, score V, softmax (eq. 10).
- ``dp_local``: :class:`DPLocalTrainer`, tau DP-SGD iterations through Opacus.
- ``privacy``: the schedule's epsilon and the rounds the budget affords.
- ``training``: :func:`run_fedltp`, Algorithm 2 with Laplace validation and the stop rule
  (one round: :func:`~sims.fedltp.training.run_round`).
- ``server_state``: the server's state between rounds, and its checkpoints on disk.
- ``baselines``: DP-Fed and Fed-SPA (Sec. 6.1) on the same loop (``variant=``).
- ``experiment``: the Table-III-like study of the three at equal budgets.
- ``empirical`` (import it from there): attacks on the DP, pruned uploads against epsilon,
  Hayes et al.'s reconstruction bound and the exact bits.
"""

from pruneleak.sims.fedltp.ablation import Ablation
from pruneleak.sims.fedltp.baselines import per_client_mib, run_dp_fed, run_fed_spa, run_variant
from pruneleak.sims.fedltp.config import FedLTPConfig
from pruneleak.sims.fedltp.data import FedLTPData, split_fedltp_data, split_for_config
from pruneleak.sims.fedltp.dp_local import DPLocalTrainer
from pruneleak.sims.fedltp.masks import (
    iterative_client_masks,
    prune_remaining,
    random_upload_mask,
    retention_rates,
)
from pruneleak.sims.fedltp.privacy import affordable_rounds, epsilon_after
from pruneleak.sims.fedltp.tickets import (
    Ticket,
    find_ticket,
    find_tickets,
    select_ticket,
    selection_probabilities,
)
from pruneleak.sims.fedltp.training import VARIANTS, FedLTPResult, noisy_scores, run_fedltp

__all__ = [
    "VARIANTS",
    "Ablation",
    "DPLocalTrainer",
    "FedLTPConfig",
    "FedLTPData",
    "FedLTPResult",
    "Ticket",
    "affordable_rounds",
    "epsilon_after",
    "find_ticket",
    "find_tickets",
    "iterative_client_masks",
    "noisy_scores",
    "per_client_mib",
    "prune_remaining",
    "random_upload_mask",
    "retention_rates",
    "run_dp_fed",
    "run_fed_spa",
    "run_fedltp",
    "run_variant",
    "select_ticket",
    "selection_probabilities",
    "split_fedltp_data",
    "split_for_config",
]
