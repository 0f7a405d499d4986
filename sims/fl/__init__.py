"""Federated learning: one client's update (PriPrune eq. (1), :mod:`~sims.fl.client`) and
the multi-round server loop with aggregation (:mod:`~sims.fl.server`)."""
