"""Bounds and attacks on one axis: the exact leakage of a pruned FL release, in bits.

The secret ``X`` is the target client's batch: ``B`` distinct images drawn uniformly
from ``M`` candidates (a uniform ``B``-subset, what a shuffled loader draws; ``N =
C(M, B)`` equally likely values, one image when ``B = 1``). The release ``Y`` is what the
server sees (:mod:`sims.releases`, chosen by the configuration): by default one FedSGD
step, the kept coordinates of ``w_hat = m ⊙ (w - lr g(m ⊙ w))`` (PriPrune eq. (1), ``g``
the batch's mean gradient, so the release of a batch is the mean of its members' single
releases); with ``rounds`` or ``local_steps`` the target's uploads over ``T`` rounds of
``tau`` steps; with a ``defense`` one round under PriPrune's defenses after
``warmup_rounds`` of FL; with ``dp_noise_multiplier`` one round of Fed-LTP's DP-SGD. The
server sees every value with Gaussian noise ``N(0, s^2)`` in the units of the weights
(``s = 0``: plain FL). The base mask is random, drawn from the seed before any data are
seen, so which coordinates it keeps is public.

For each pruning rate ``p`` and noise ``s`` one record holds (``study``):

* the ceiling ``log2 N`` and ``I(X; Y)`` in bits with its interval, the method behind it
  (``exact_method``: exact, Monte Carlo, a certified bracket) and the Bayes-optimal
  identification success; with ``rounds > 1`` the value after each ``T' = 1, 2, 4, ...``
  (``by_rounds``) beside the per-round sum and PriPrune's Corollary 1 with its status;
* the valid upper bounds the release admits: the Gaussian-channel bound (for one step
  the covariance of a batch's mean release is that of one release times ``(M - B) /
  (B (M - 1))``, the finite-population correction of a mean drawn without replacement,
  Cochran, *Sampling Techniques*, 3rd ed., Thm. 2.2) and the bound of Hayes et al.
  (2023) on any attack's identification success, with the tightest sensitivity valid for
  the prior (:func:`bounds.leakage.batch_sensitivity`);
* PriPrune's Theorem 1 as published and corrected, ``d*`` and ``Delta`` estimated from
  ``stats_samples`` per-sample gradients of the kept coordinates at the round's point,
  labelled valid / vacuous / violated, and re-evaluated at every sample size of
  ``theorem1_sample_sizes``;
* the attacks on the released upload (``attacks``: SGI and GI, or with a defense SGI as
  PriPrune runs it and the defense-aware SGI): identification success, Fano's lower
  bound on ``I(X; Y)`` at the Clopper-Pearson limit of the error, NMI with its chance
  level, PSNR, and the model's accuracy;
* optionally (``estimate_draws > 0``, one step, small ``M``) KSG, MINE and H-MINE
  estimates of the same ``I(X; Y)`` (``estimates``).

Records go to a :class:`sims.store.results.ResultStore`, keyed by a fingerprint of the
fields that change the numbers (the grid of ``p`` and ``s`` excepted: every ``(p, s)``
draws its own Monte Carlo streams from a seed of its own, so adding a noise level
resumes). ``defenses`` runs every defense of PriPrune's defense study this way and says
whether NMI ranks them as the bits do.
"""

from pruneleak.sims.experiments.attack_model import CONV2_IMAGE_SIZE, MODELS
from pruneleak.sims.experiments.leakage.config import (
    CONFIDENCE,
    DATASET_SIZES,
    DATASETS,
    MAX_COUNTS,
    MAX_NOISE_STD,
    LeakageConfig,
    check_count,
)
from pruneleak.sims.experiments.leakage.study import job_key, reconstruction_key, run_leakage
from pruneleak.sims.experiments.leakage.tables import (
    format_attacks_table,
    format_estimates_table,
    format_rounds_table,
    format_table,
)
from pruneleak.sims.experiments.leakage.world import World
from pruneleak.sims.experiments.world import GivenSetup

__all__ = [
    "CONFIDENCE",
    "CONV2_IMAGE_SIZE",
    "DATASETS",
    "DATASET_SIZES",
    "MAX_COUNTS",
    "MAX_NOISE_STD",
    "MODELS",
    "GivenSetup",
    "LeakageConfig",
    "World",
    "check_count",
    "format_attacks_table",
    "format_estimates_table",
    "format_rounds_table",
    "format_table",
    "job_key",
    "reconstruction_key",
    "run_leakage",
]
