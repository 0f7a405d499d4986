"""Fixtures shared by the sims tests."""

import pytest
import torch


@pytest.fixture
def single_thread():
    """One intra-op thread, for tests that run thousands of tiny steps: there a second
    thread only adds synchronisation (3-6x slower on a shared 2-core machine)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
