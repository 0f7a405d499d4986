"""Per-sample gradients and the statistics PriPrune's Theorem 1 takes from them.

* :mod:`~sims.gradients.per_sample` -- the per-sample gradients of a batch, and their
  ``n x n`` Gram matrix over the transmitted coordinates built layer by layer, without the
  ``n x d`` matrix;
* :mod:`~sims.gradients.statistics` -- ``d*`` (the rank of the per-sample gradients'
  covariance) and ``Delta`` (its log pseudo-determinant), from that Gram matrix.

The loss and gradient of a whole batch, which both build on, are
:mod:`sims.core.functional`."""
