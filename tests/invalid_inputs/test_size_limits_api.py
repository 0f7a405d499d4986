"""Calls of the library API that used to run for hours on an oversized input finish within
their stated limit: refused at once, and the largest allowed size runs within it too.

``recover_labels`` took one pass per label (about 6 us each: 10**6 labels ran for
seconds, 10**9 for hours); it now refuses ``batch_size`` beyond ``MAX_LABELS`` before any
work, and the largest allowed batch finishes in well under the time limit.
"""

import pytest
import torch

from pruneleak.sims.attacks import recover_labels
from pruneleak.sims.attacks.update import MAX_LABELS

# A 10-class last layer whose row sums are all nonzero, so that the labels can be read.
GRADIENT = {"w": torch.linspace(-1.0, 1.0, 30).reshape(10, 3)}


@pytest.mark.timeout(5)
@pytest.mark.parametrize("batch_size", [MAX_LABELS + 1, 10**9])
def test_recover_labels_refuses_a_batch_beyond_the_limit_at_once(batch_size):
    with pytest.raises(ValueError, match=rf"'batch_size'.*\[1, {MAX_LABELS}\].*{batch_size}"):
        recover_labels(GRADIENT, num_classes=10, batch_size=batch_size)


@pytest.mark.timeout(10)
def test_recover_labels_reads_the_largest_allowed_batch_within_the_limit():
    labels = recover_labels(GRADIENT, num_classes=10, batch_size=MAX_LABELS)
    assert labels.shape == (MAX_LABELS,)
