"""What a study stores, job by job: the records of its results and the reconstructed
images beside them, both under each job's key.

The results file, one idea per module:

* :mod:`~sims.store.results` -- :class:`~sims.store.results.ResultStore`, the resumable
  JSON-lines store: one record per finished job, each key once, read without a lock;
* :mod:`~sims.store.records` -- one record per line: what a record may hold, how a line
  is written and read back, and the error that names a damaged line;
* :mod:`~sims.store.locking` -- the ``flock`` on the file that its writers (and a repair)
  share;
* :mod:`~sims.store.repair` -- :func:`~sims.store.repair.check` and
  :func:`~sims.store.repair.repair` of a damaged file (``pruneleak results check|repair``);
* :mod:`~sims.store.keys` -- :func:`~sims.store.keys.key_number`, how a number is written
  in a record key.

Beside it, :mod:`~sims.store.reconstructions`: the originals and reconstructions of a job,
one ``.npz`` file per store key."""
