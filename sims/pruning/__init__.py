"""Pruning: the mask type and one-shot masks (:mod:`~sims.pruning.mask`), saliency scores
(:mod:`~sims.pruning.saliency`) and the stateful FL pruning schemes with their registry
(:mod:`~sims.pruning.schemes`)."""
