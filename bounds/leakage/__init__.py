r"""Leakage of a finite candidate set through a noisy release, in bits: exact value and bounds.

The secret :math:`X` is uniform on :math:`M` candidates (one release vector
:math:`r_i\in\mathbb R^k` each, computed by ``sims``), the server sees
:math:`Y = r_X + N(0, s^2 I_k)`. Everything here is in **bits** (one release, one round);
probabilities are plain numbers in [0, 1]. Pure numpy/scipy: ``sims`` hands over the
(M, k) array of releases, or their (M, M) Gram matrix (``isometry``).

Modules (one idea each; every public name is re-exported here):

- ``exact``: ``exact_leakage(releases, noise_std, *, samples, confidence, seed)`` ->
  ``ExactLeakage``: :math:`I(X;Y) = \log_2 M - \mathbb E H(\text{posterior})` and the
  Bayes-optimal success :math:`\mathbb E\max_j \pi_j`, Monte Carlo in log space with an
  empirical Bernstein interval (coverage at least the confidence for every number of
  draws); exact for equal releases, :math:`s = 0` and :math:`M = 2`.
- ``batches``: ``batch_leakage(releases, noise_std, batch_size, ...)`` -> ``BatchLeakage``:
  the secret is a uniform :math:`B`-subset of the candidates (:math:`N = \binom{M}{B}`),
  the release the noisy mean of its members' releases; exact posterior over all :math:`N`
  subsets when :math:`N` is small enough, else an InfoNCE / leave-one-out bracket (each
  with an empirical Bernstein interval).
- ``posterior``: releases that are random given the secret, or not one vector plus
  isotropic noise: from per-draw log-likelihoods over the candidates (computed by
  ``sims``), ``posterior_leakage`` (exact likelihood: Monte Carlo value) and
  ``posterior_bracket`` (hidden randomness: :math:`I(X;Y,U)` above, Barber-Agakov with
  any critic below) -> ``PosteriorLeakage``.
- ``binary``: two candidates, the binary-input Gaussian channel by quadrature
  (``binary_channel_bits``) and :math:`\Phi(d/(2s))` (``binary_channel_success``).
- ``ceiling``: ``ceiling_bits(M, B)`` :math:`= B\log_2 M`, the secret's entropy bound
  (:math:`\log_2\binom{M}{B}` with ``replacement=False``).
- ``gaussian_channel``: ``gaussian_channel_bound_bits``,
  :math:`\tfrac12\log_2\det(I + \Sigma/s^2)` (maximum entropy; any release distribution).
- ``reconstruction``: ``gaussian_mechanism_success_bound`` (Hayes et al. 2023, ReRo of
  :math:`\mu`-GDP), its general-prior form ``gdp_reconstruction_bound(kappa, mu)``, the
  :math:`(\epsilon,\delta)`-DP form ``dp_reconstruction_bound(kappa, epsilon, delta)``,
  ``max_pairwise_distance`` (the sensitivity over candidates) and
  ``batch_sensitivity(releases, batch_size)`` -> ``BatchSensitivity``: the diameter
  :math:`D_B` of the batch means (exact for small :math:`N`, else the smallest of several
  valid upper bounds), the tightest sensitivity for a batch of :math:`B > 1`.
- ``isometry``: ``releases_from_gram(gram)``, an :math:`(M, r)` matrix (:math:`r < M`) whose
  rows have the pairwise distances of the releases whose Gram matrix is given (classical
  multidimensional scaling): the leakage depends on the releases only through those
  distances, so it replaces the :math:`(M, k)` releases at :math:`s > 0`;
  ``gram_groups(gram, rtol=...)``, the groups of releases the Gram cannot tell apart (for
  :math:`s = 0`), and ``gram_rounding_rtol(k)``, the round-off bound that sets ``rtol``.
- ``fano``: ``fano_lower_bound_bits`` (Fano's inequality) and
  ``fano_lower_confidence_bits`` (at the worst point of the Clopper-Pearson interval).
- ``intervals``: ``clopper_pearson_interval`` and the empirical Bernstein interval of a mean
  of bounded values (``mean_interval``; coverage at least the confidence for every sample
  size), behind every Monte Carlo interval here.
- ``status``: ``theorem1_status`` -> "valid" / "vacuous" / "violated".

Order that must hold at every point (within intervals):
``fano_lower_*`` :math:`\le` ``exact_leakage().bits`` :math:`\le`
``min(ceiling_bits, gaussian_channel_bound_bits)``, and
``exact_leakage().bayes_success`` :math:`\le` ``gaussian_mechanism_success_bound`` with
``sensitivity = max_pairwise_distance(releases)``; for batches,
``batch_leakage().bayes_success`` :math:`\le` ``gaussian_mechanism_success_bound(N,
batch_sensitivity(releases, B).value, s)``.
"""

from __future__ import annotations

from pruneleak.bounds.leakage._releases import distinct_rows
from pruneleak.bounds.leakage.batches import BatchLeakage, batch_leakage
from pruneleak.bounds.leakage.binary import binary_channel_bits, binary_channel_success
from pruneleak.bounds.leakage.ceiling import ceiling_bits
from pruneleak.bounds.leakage.exact import ExactLeakage, exact_leakage
from pruneleak.bounds.leakage.fano import fano_lower_bound_bits, fano_lower_confidence_bits
from pruneleak.bounds.leakage.gaussian_channel import gaussian_channel_bound_bits
from pruneleak.bounds.leakage.intervals import clopper_pearson_interval
from pruneleak.bounds.leakage.isometry import gram_groups, gram_rounding_rtol, releases_from_gram
from pruneleak.bounds.leakage.posterior import (
    PosteriorLeakage,
    posterior_bracket,
    posterior_leakage,
)
from pruneleak.bounds.leakage.reconstruction import (
    BatchSensitivity,
    batch_sensitivity,
    dp_reconstruction_bound,
    gaussian_mechanism_success_bound,
    gdp_reconstruction_bound,
    max_pairwise_distance,
)
from pruneleak.bounds.leakage.status import STATUSES, theorem1_status

__all__ = [
    "STATUSES",
    "BatchLeakage",
    "BatchSensitivity",
    "ExactLeakage",
    "PosteriorLeakage",
    "batch_leakage",
    "batch_sensitivity",
    "binary_channel_bits",
    "binary_channel_success",
    "ceiling_bits",
    "clopper_pearson_interval",
    "distinct_rows",
    "dp_reconstruction_bound",
    "exact_leakage",
    "fano_lower_bound_bits",
    "fano_lower_confidence_bits",
    "gaussian_channel_bound_bits",
    "gaussian_mechanism_success_bound",
    "gdp_reconstruction_bound",
    "gram_groups",
    "gram_rounding_rtol",
    "max_pairwise_distance",
    "posterior_bracket",
    "posterior_leakage",
    "releases_from_gram",
    "theorem1_status",
]
