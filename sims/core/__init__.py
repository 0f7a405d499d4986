"""Building blocks every simulation shares: the functional loss and gradient of a batch,
per-sample gradient statistics, opt-in runtime tuning and seeding, job fingerprints and
the append-only results store."""
