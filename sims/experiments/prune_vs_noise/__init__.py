r"""Pruning versus Laplace noise at matched accuracy: Huang et al., Sections 4.1-4.3,
Figures 6 (LeNet-5 on MNIST) and 7 (VGG-19 on CIFAR-10).

Source: Huang, Su, Ravi, Song, Arora, Li, *Privacy-preserving Learning via Deep Net
Pruning*, arXiv:2003.01876 (``papers/huang-pruning-as-dp-noise-arxiv2003.01876.txt``).

Pipeline (one call of :func:`run_prune_vs_noise`):

1. **Training stage** (Algorithm 2, lines 5-8): LeNet-5 (:func:`sims.models.lenet5`) is
   trained densely with SGD (momentum 0.9, batch 64 as in Table 2; learning rate 0.03,
   see below) for ``train_epochs``; Figure 7's VGG-19 (:func:`sims.models.vgg`) with
   Adam at Table 2's 0.001 (:meth:`PruneVsNoiseConfig.figure7_for_scale`).
2. **Pruning stage** (Algorithm 2, lines 9-15), once per target sparsity :math:`k_T`: from
   the training-stage weights, ``prune_epochs`` more epochs of SGD under gradual magnitude
   pruning with Zhu and Gupta's cubic schedule (Section 4.1,
   :class:`sims.pruning.schedule.CubicSchedule`). The *dense* model is the same stage
   with :math:`k_T = 0`, so it gets exactly the same number of SGD steps as every pruned
   model.
3. **Representation** :math:`\Phi`: the network up to the released layer (default
   ``"c5"``, LeCun's C5, the 120-unit layer that Figure 6 inverts; :func:`split_at_layer`).
   :math:`\Phi'_{\text{prune}}(x) = \tilde\Phi(x)` uses the pruned weights;
   :math:`\Phi'_{\text{noise}}(x) = \Phi(x) + e` uses the dense weights and i.i.d.
   :math:`e_i \sim \mathrm{Lap}(0, b)` (Section 4.2).
4. **Matched accuracy** (Section 4.3, "we tune the amount of noise"): for each sparsity,
   :func:`match_noise_scale` bisects the largest :math:`b` at which the dense network with
   noisy representation still reaches the pruned network's test accuracy; the match is
   accepted when the two accuracies differ by at most ``accuracy_tolerance``.
5. **Inversion attack** (Section 4.2, after Mahendran and Vedaldi 2015):
   :math:`x^* = \arg\min_x \|\Phi_{\text{att}}(x) - \Phi'(x_0)\|_2^2 + \lambda\,\mathcal R(x)`
   with the isotropic total variation :math:`\mathcal R`
   (:func:`sims.attacks.priors.total_variation`), by
   Adam on the box :math:`[0, 1]^d` (:func:`invert_representation`).
6. **Similarity** between :math:`x^*` and :math:`x_0` (Section 4.2): normalised SSIM,
   SIFT similarity (:mod:`estimators.sift`; undefined, and left out of the averages, for
   an image whose original or reconstruction has no SIFT keypoint), pHash similarity,
   INFE (the dense model's accuracy on :math:`x^*`), plus PSNR and PriPrune's NMI, all
   from :mod:`estimators`; a higher value means more leakage. The similarities describe
   the reconstructions; whether pruning protects is the paired comparison of
   :meth:`PruneVsNoiseResult.comparison`, not any single score.

Readings and deviations (the paper leaves these open or is inconsistent):

* **Which attacker.** Section 4.2 releases :math:`\Phi'(x)`, keeps :math:`\Phi'` private
  and lets the attacker invert with the *public* dense :math:`\Phi` in both cases
  (condition ``"prune_public"``). An attacker who also knows the pruned weights inverts
  :math:`\tilde\Phi` itself (``"prune_informed"``); it is the stronger attack and is
  reported beside the paper's. Against noise both attackers use the dense :math:`\Phi`
  (they know the noise distribution, not the draw); the paper's squared-L2 loss is kept
  although it is not the Laplace likelihood.
* **Pre-activation representation.** "Conv5 layer" does not say whether the ReLU is
  included; by default :math:`\Phi(x)` is the layer's output *before* its activation
  (``after_activation=False``): after the ReLU most of C5's units are zero on digits and
  even the undefended dense network is no longer inverted to a recognisable digit, unlike
  Figures 1 and 6(e).
* **Layer-wise sparsity.** Algorithm 2's THPRUNE uses one threshold :math:`a^{(t)}` for
  all layers, but Section 4.3 says the experiments prune "layers with the same target
  sparsity"; each prunable layer (all conv and linear weights, biases kept) is pruned to
  sparsity :math:`k_t` (:func:`sims.pruning.mask.magnitude_mask`).
* **Mask between updates.** Algorithm 2 re-applies THPRUNE at every step; as in Zhu and
  Gupta the mask is recomputed from the current weights at the schedule's update steps
  and held (pruned weights stay zero) in between; a final THPRUNE at :math:`k_T` ends
  the stage (line 15), so the final sparsity is exactly :math:`k_T` in every layer.
* **Schedule constants.** :math:`k_0 = 0` (Section 4.1), :math:`t_0 = 0` (start of the
  pruning stage), ``prune_updates`` = :math:`n` updates spread over the first
  ``ramp_fraction`` of the stage; the rest fine-tunes at :math:`k_T`. The paper gives
  neither :math:`n`, :math:`\Delta t` nor the split of Table 2's 20 epochs between the
  two stages.
* **Digits.** scikit-learn's 8x8 digits are resized bilinearly to ``image_size`` (28 by
  default, MNIST's size) before anything else, so LeNet-5 is the classic 61,706-parameter
  network, C5 sees a 16x5x5 map as on MNIST, and SSIM's 7x7 window and pHash's 7x7 mean
  filter act on digit-sized strokes; all metrics are computed at that resolution.
* **Learning rate.** Table 2's 0.1 (with momentum 0.9) diverges on digits with PyTorch's
  default initialisation, and 0.05 fails at the restart of the pruning stage for some
  seeds; the default is 0.03, cosine-annealed within each stage (the seeds tried and the
  accuracies reached are on the results page).
* **SIFT similarity.** The paper names neither the matcher nor the "good pair" filter;
  the reconstruction's descriptors are matched to their nearest neighbours in the
  original and filtered by Lowe's ratio test at 0.8 (:mod:`estimators.sift`). SIFT is
  reported beside the other metrics but does not vote on the verdict
  (:data:`VOTING_METRICS`).

* **Figure 7's stand-in.** Without CIFAR-10's files (``data_dir``), the quick arm runs
  on scikit-image's 32x32 RGB photograph patches (4 classes) with VGG-19 slimmed to
  ``width=8``; the full VGG-19 runs at ``PRUNELEAK_SCALE=paper``. Huang et al. give
  neither VGG-19's classifier nor whether it has BatchNorm: it has none here, the
  512-512-10 classifier of the common CIFAR-10 adaptation, and He-normal initial weights.

Modules: :mod:`.representation` (the released layer, Laplace noise, matching the noise to
an accuracy), :mod:`.inversion` (the attack and its similarity scores), :mod:`.study`
(configuration, the run, the summary and the verdict), :mod:`.paper` (the paper's
statements on Figures 5-7 beside a run's numbers); the schedule and the pruning-stage
SGD are in :mod:`sims.pruning.schedule`, the figures in :mod:`sims.plots.prune_vs_noise`.
"""

from pruneleak.sims.experiments.prune_vs_noise.inversion import (
    METRICS,
    invert_representation,
    score_inversions,
)
from pruneleak.sims.experiments.prune_vs_noise.paper import PAPER_STATEMENTS, beside_paper
from pruneleak.sims.experiments.prune_vs_noise.representation import (
    LAYERS,
    NoiseMatch,
    conv_layer_names,
    laplace_noise,
    match_noise_scale,
    split_at_layer,
)
from pruneleak.sims.experiments.prune_vs_noise.study import (
    CONDITIONS,
    FIG7_QUICK_SPARSITIES,
    MODELS,
    PAPER_METRICS,
    PAPER_SPARSITIES,
    PRUNE_CONDITIONS,
    QUICK_SPARSITIES,
    VOTING_METRICS,
    PruneVsNoiseConfig,
    PruneVsNoiseResult,
    run_prune_vs_noise,
)

__all__ = [
    "CONDITIONS",
    "FIG7_QUICK_SPARSITIES",
    "LAYERS",
    "METRICS",
    "MODELS",
    "PAPER_METRICS",
    "PAPER_SPARSITIES",
    "PAPER_STATEMENTS",
    "PRUNE_CONDITIONS",
    "QUICK_SPARSITIES",
    "VOTING_METRICS",
    "NoiseMatch",
    "PruneVsNoiseConfig",
    "PruneVsNoiseResult",
    "beside_paper",
    "conv_layer_names",
    "invert_representation",
    "laplace_noise",
    "match_noise_scale",
    "run_prune_vs_noise",
    "score_inversions",
    "split_at_layer",
]
