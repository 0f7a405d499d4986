"""The sweep record's NMI floor (sims.sweep.runner): per attacked upload, the mean over
its batch of each kept reconstruction's permutation null, recomputed here from the images
the job saved, one image at a time."""

from __future__ import annotations

import numpy as np
import pytest

from pruneleak.estimators.nmi import nmi_permutation_null
from pruneleak.sims.store.reconstructions import load_reconstructions
from pruneleak.sims.sweep.job import AttackJob, job_key
from pruneleak.sims.sweep.runner import run_job


def test_the_floor_is_the_mean_permutation_null_of_the_saved_reconstructions(tmp_path):
    job = AttackJob.from_fields(
        {
            "dataset": "digits",
            "num_clients": 10,
            "targets": 2,
            "fed.rounds": 1,
            "fed.batch_size": 2,
            "fed.clients_per_round": 10,
            "inversion.iterations": 3,
            "inversion.label_mode": "known",
            "device": "cpu",
        }
    )
    record = run_job(job, reconstructions_dir=tmp_path)
    originals, matched = load_reconstructions(tmp_path, job_key(job))
    b = job.fed.batch_size
    expected = [
        np.mean(
            [
                nmi_permutation_null(x, y, levels=job.nmi_levels, seed=job.seed).null_mean
                for x, y in zip(originals[k : k + b], matched[k : k + b], strict=True)
            ]
        )
        for k in range(0, len(originals), b)
    ]
    assert record["n_uploads"] == 2
    assert record["nmi_permutation_floor_per_upload"] == pytest.approx(expected, rel=1e-12)
    assert record["nmi_permutation_floor"] == pytest.approx(np.mean(expected), rel=1e-12)
