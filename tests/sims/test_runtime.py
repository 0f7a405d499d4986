"""sims.core.runtime: opt-in tuning leaves nothing behind; seeding and fingerprints."""

import pytest
import torch

from pruneleak.sims.core.runtime import cpu_tuning, fingerprint, generator, seeded


def test_cpu_tuning_sets_threads_inside_and_restores_them():
    before = torch.get_num_threads()
    inside = 2 if before != 2 else 1
    with cpu_tuning(threads=inside):
        assert torch.get_num_threads() == inside
    assert torch.get_num_threads() == before


def test_cpu_tuning_restores_threads_when_the_block_raises():
    before = torch.get_num_threads()
    with pytest.raises(RuntimeError, match="boom"), cpu_tuning(threads=before + 1):
        raise RuntimeError("boom")
    assert torch.get_num_threads() == before


def test_cpu_tuning_none_leaves_threads_alone():
    before = torch.get_num_threads()
    with cpu_tuning(threads=None, keep_freed_memory=False):
        assert torch.get_num_threads() == before


@pytest.mark.parametrize("threads", [0, -1, 1.5, "2"])
def test_cpu_tuning_rejects_bad_thread_counts(threads):
    with (
        pytest.raises(ValueError, match="'threads' parameter of cpu_tuning"),
        cpu_tuning(threads=threads),
    ):
        pass


def test_seeded_reproduces_draws_and_restores_the_global_generator():
    torch.manual_seed(123)
    expected_after = torch.rand(3)  # what the caller's stream gives next, untouched
    torch.manual_seed(123)
    with seeded(7):
        first = torch.rand(4)
    after = torch.rand(3)
    with seeded(7):
        again = torch.rand(4)
    # Reference draws of seed 7 from a private generator: independent of the global one.
    reference = torch.rand(4, generator=torch.Generator().manual_seed(7))
    torch.testing.assert_close(first, reference, rtol=0, atol=0)
    torch.testing.assert_close(again, reference, rtol=0, atol=0)
    torch.testing.assert_close(after, expected_after, rtol=0, atol=0)


def test_seeded_model_initialisation_is_reproducible():
    with seeded(3):
        a = torch.nn.Linear(5, 2).weight.detach().clone()
    with seeded(3):
        b = torch.nn.Linear(5, 2).weight.detach().clone()
    with seeded(4):
        c = torch.nn.Linear(5, 2).weight.detach().clone()
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert not torch.equal(a, c)


def test_generator_is_seeded_and_private():
    state = torch.random.get_rng_state()
    draws = torch.rand(3, generator=generator(11))
    torch.testing.assert_close(
        draws, torch.rand(3, generator=torch.Generator().manual_seed(11)), rtol=0, atol=0
    )
    assert torch.equal(torch.random.get_rng_state(), state)


def test_fingerprint_ignores_device_and_excluded_fields_only():
    base = {"p": 0.3, "seed": 1, "device": "cpu", "data_dir": "/a"}
    same = fingerprint(base, exclude=("data_dir",))
    assert fingerprint({**base, "device": "cuda:3"}, exclude=("data_dir",)) == same
    assert fingerprint({**base, "data_dir": "/b"}, exclude=("data_dir",)) == same
    assert fingerprint({**base, "p": 0.31}, exclude=("data_dir",)) != same
    assert fingerprint({**base, "seed": 2}, exclude=("data_dir",)) != same
    # without the exclusion the data directory counts
    assert fingerprint(base) != fingerprint({**base, "data_dir": "/b"})


def test_fingerprint_is_independent_of_key_order_and_has_the_asked_length():
    a = fingerprint({"x": 1, "y": [1, 2]}, length=12)
    b = fingerprint({"y": [1, 2], "x": 1}, length=12)
    assert a == b
    assert len(a) == 12
    assert all(ch in "0123456789abcdef" for ch in a)
