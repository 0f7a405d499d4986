"""Small building blocks every simulation shares, none of which needs another package of
``sims``:

* :mod:`~sims.core.functional` -- the functional loss and gradient of a model on a batch,
  and the batch and learning-rate checks that go with them;
* :mod:`~sims.core.memory` -- refusing a model or batch that cannot fit before it is
  allocated;
* :mod:`~sims.core.runtime` -- opt-in CPU tuning, seeding without global state, job
  fingerprints;
* :mod:`~sims.core.scale` -- the scale a study runs at (``quick`` or ``paper``);
* :mod:`~sims.core.fields` -- configuration fields that say what they hold;
* :mod:`~sims.core.extras` -- optional dependencies, named by the extra that installs them;
* :mod:`~sims.core.outputs` -- where commands and notebooks write their files.

Per-sample gradients and their statistics are in :mod:`sims.gradients`; a study's results
store and the reconstructions kept beside it are in :mod:`sims.store`."""
