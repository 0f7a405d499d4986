"""Fixtures shared by the estimator tests."""

import pytest
import torch


@pytest.fixture(autouse=True)
def _one_torch_thread():
    # the critics of these tests are tiny: one intra-op thread is faster than two on a
    # loaded machine, and the setting is restored afterwards
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
