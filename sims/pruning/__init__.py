"""Pruning: the mask type and one-shot masks (:mod:`~sims.pruning.mask`), saliency scores
(:mod:`~sims.pruning.saliency`), the stateful FL pruning schemes with their registry
(:mod:`~sims.pruning.schemes`), the iterative schemes' re-adjustment schedules
(:mod:`~sims.pruning.readjustment`) and gradual pruning during centralised training
(:mod:`~sims.pruning.schedule`)."""
