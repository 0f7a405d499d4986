"""What a study stores, job by job: the records of its results and the reconstructed
images beside them, both under each job's key.

* :mod:`~sims.store.results` -- the resumable JSON-lines results file
  (:class:`~sims.store.results.ResultStore`: one record per finished job, each key once,
  one lock per file, damaged files checked and repaired);
* :mod:`~sims.store.reconstructions` -- the originals and reconstructions of a job, one
  ``.npz`` file per store key."""
