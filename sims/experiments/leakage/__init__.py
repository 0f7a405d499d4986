"""Bounds and attacks on one axis: the exact leakage of a real pruned update, in bits.

Issue 12. The secret ``X`` is the client's batch: ``B`` distinct images drawn uniformly
from ``M`` candidates (a uniform ``B``-subset, what a shuffled loader draws; ``N =
C(M, B)`` equally likely values, one image when ``B = 1``); the release ``Y`` is what the
server sees of one FedSGD round, the kept coordinates of ``w_hat = m ⊙ (w - lr g(m ⊙ w))``
(PriPrune eq. (1), :func:`sims.fl.client.client_update`, ``g`` the batch's mean gradient,
so the release of a batch is the mean of its members' single releases), plus Gaussian
noise ``N(0, s^2 I)`` in the units of the weights (``s = 0``: plain FedSGD). The mask is
random, drawn from the seed before any data are seen, so which coordinates are kept is
public and carries no information about ``X``: the release is the vector of kept
coordinates alone.

For each pruning rate ``p`` and noise ``s`` one record holds, all in bits:

* the ceiling ``log2 N`` (the secret's entropy; ``log2 M`` for ``B = 1``) and the exact
  ``I(X; Y)`` with its Monte Carlo interval and the Bayes-optimal identification success
  (:func:`bounds.leakage.batch_leakage` on the ``M`` release vectors of
  :func:`sims.fl.release.release_vectors`: exact posterior over all ``N`` batches up to
  its ``max_enumerated``, beyond that a bracket of two bounds, ``exact_method`` says
  which; the bracket has no Bayes success, None);
* the Gaussian-channel upper bound (``s > 0``; the covariance of a batch's mean release
  is that of one release times ``(M - B) / (B (M - 1))``, the finite-population
  correction of a mean drawn without replacement, Cochran, *Sampling Techniques*, 3rd
  ed., Thm. 2.2) and the bound of Hayes et al. (2023) on any attack's identification
  success for the Gaussian mechanism, with the sensitivity ``max_ij ||r_i - r_j||`` over
  the candidates (:mod:`bounds.leakage.reconstruction`; for ``B > 1`` it bounds the
  batches' sensitivity too: ``r_S - r_S'`` is ``1/B`` times a sum of at most ``B`` differences
  of two single releases);
* PriPrune's Theorem 1 as published and corrected, ``d*`` and ``Delta`` estimated from
  ``stats_samples`` per-sample gradients of the kept coordinates at ``m ⊙ w`` (the point
  where the release's gradient is taken), labelled valid / vacuous / violated, and
  re-evaluated at every sample size of ``theorem1_sample_sizes`` (``d*`` is the rank of
  a sample covariance, at most ``n - 1``: the bound moves with ``n`` while the leakage
  cannot);
* SGI and GI on ``attack_targets`` noisy releases (iDLG labels for ``B = 1``, labels
  optimised jointly otherwise: an attacker given the labels would bound ``I(X; Y,
  labels)``, not ``I(X; Y)``): the attacker names the candidates nearest (L2) to its
  reconstruction (:func:`sims.attacks.identify`); the Clopper-Pearson upper limit of the
  error gives Fano's lower bound on ``I(X; Y)``;
* optionally (``estimate_draws > 0``, small ``M``) KSG, MINE and H-MINE estimates of the
  same ``I(X; Y)`` from draws of ``(X, Y)``.

Records go to a :class:`sims.core.store.ResultStore`, keyed by a fingerprint of the
fields that change the numbers (the grid of ``p`` and ``s`` excepted: every ``(p, s)``
draws its own noise from a seed of its own, so adding a noise level resumes).
"""

from sims.experiments.leakage.config import (
    CONFIDENCE,
    CONV2_IMAGE_SIZE,
    DATASET_SIZES,
    DATASETS,
    MAX_NOISE_STD,
    MODELS,
    LeakageConfig,
)
from sims.experiments.leakage.study import job_key, reconstruction_key, run_leakage
from sims.experiments.leakage.tables import (
    format_attacks_table,
    format_estimates_table,
    format_rounds_table,
    format_table,
)
from sims.experiments.leakage.world import World

__all__ = [
    "CONFIDENCE",
    "CONV2_IMAGE_SIZE",
    "DATASETS",
    "DATASET_SIZES",
    "MAX_NOISE_STD",
    "MODELS",
    "LeakageConfig",
    "World",
    "format_attacks_table",
    "format_estimates_table",
    "format_rounds_table",
    "format_table",
    "job_key",
    "reconstruction_key",
    "run_leakage",
]
