"""Release mechanisms: what the server sees of the target client, one secret at a time.

A release mechanism maps the target's secret (a batch of ``B`` of the ``M`` candidates) to
the server's view, with everything else fixed and known to the server
(:class:`ClientSetting`). Each says whether its output is a deterministic function of the
secret or random given it, and how its leakage :math:`I(X; Y)` is computed (in bits, with
the Bayes-optimal identification success beside it; :class:`LeakageValue` names the
method of every value):

- :class:`FederatedRelease` (no randomness): the target's uploads over ``T`` rounds of
  ``tau`` local steps (FedSGD: one of each), deterministic vectors plus Gaussian noise:
  exact, from their geometry (:class:`ReleaseGeometry`), or for one step
  :func:`bounds.leakage.batch_leakage` on the single releases.
- :class:`FixedDefenseRelease` (Largest: none; Random: observed; Mix: hidden): PriPrune's
  fixed defenses, real or Pseudo: the exact likelihood (a data-dependent withheld set and
  a uniform random part), Monte Carlo (:func:`bounds.leakage.posterior_leakage`).
- :class:`PriPruneRelease` (hidden): the adaptive Gumbel defense: a certified bracket
  (:mod:`sims.releases.hidden`, :func:`bounds.leakage.posterior_bracket`).
- :class:`DPUploadRelease` (hidden): Fed-LTP's DP-SGD local training: the same bracket,
  its upper end capped by the DP-SGD channel bound :func:`dp_sgd_bits_bound`.

Every mechanism computes one world per secret (all ``B``-subsets, :func:`secret_batches`)
in float64, vectorised over the worlds (:func:`train_each`).
"""

from pruneleak.sims.releases.dp_upload import DPUploadRelease, dp_sgd_bits_bound
from pruneleak.sims.releases.federated import FederatedRelease
from pruneleak.sims.releases.fixed_defense import FixedDefenseRelease
from pruneleak.sims.releases.geometry import ReleaseGeometry
from pruneleak.sims.releases.hidden import hidden_randomness_leakage
from pruneleak.sims.releases.likelihood import MAX_NOISE_STD
from pruneleak.sims.releases.priprune import PriPruneRelease
from pruneleak.sims.releases.setting import MAX_SECRETS, ClientSetting, secret_batches
from pruneleak.sims.releases.training import train_each
from pruneleak.sims.releases.value import METHODS, LeakageValue

__all__ = [
    "MAX_NOISE_STD",
    "MAX_SECRETS",
    "METHODS",
    "ClientSetting",
    "DPUploadRelease",
    "FederatedRelease",
    "FixedDefenseRelease",
    "LeakageValue",
    "PriPruneRelease",
    "ReleaseGeometry",
    "dp_sgd_bits_bound",
    "hidden_randomness_leakage",
    "secret_batches",
    "train_each",
]
