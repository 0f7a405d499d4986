"""Shared test set-up: quiet, deterministic, CPU-sized, and no files outside tmp dirs."""

import os

import matplotlib
import pytest

matplotlib.use("Agg")
os.environ.setdefault("PRUNELEAK_SCALE", "quick")
# One thread per process in the processes the tests start too (notebook kernels, the
# commands): the stages run two test workers on two cores (pytest -n 2), and two workers
# of two spinning threads each slowed a notebook tenfold.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch

torch.set_num_threads(1)  # tiny models: a second thread only adds synchronisation
torch.use_deterministic_algorithms(True, warn_only=True)


@pytest.fixture(autouse=True, scope="session")
def _figures_in_a_temporary_folder(tmp_path_factory):
    """Figures saved without a directory go to a temporary folder, not the current one."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PRUNELEAK_FIG_DIR", str(tmp_path_factory.mktemp("figures")))
        yield
