r"""Batch-and-gradient tasks: ``X`` a batch of ``B`` inputs, ``Y`` their noisy mean gradient.

The linear-Gaussian stand-in of a client's update (:class:`estimators.mi.GaussianBatchChannel`):
``B`` inputs ``x_m ~ N(0, I_{d_x})`` and ``G = (1/B) sum_m A x_m + sigma eps``, with the
closed form

.. math:: I(X_B; G) = \tfrac12 \log\det\left(I + \frac{A A^\top}{B\,\sigma^2}\right).

``X`` has shape ``(n, B, d_x)``: H-MINE reads the batch structure, the other estimators
flatten it to ``B d_x`` features. The suite's four channels use the mixing matrix of seed 0.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from pruneleak.estimators.mi import GaussianBatchChannel
from pruneleak.estimators.tasks.task import MITask

__all__ = ["batch_task"]


def _sample_channel(
    n_samples: int, seed: int, *, channel: GaussianBatchChannel
) -> tuple[np.ndarray, np.ndarray]:
    return channel.sample(n_samples, seed=seed)


def batch_task(
    batch_size: int, dim_x: int, dim_g: int, noise_std: float, *, seed: int = 0
) -> MITask:
    """The task of ``GaussianBatchChannel(batch_size, dim_x, dim_g, noise_std, seed)``.

    Named ``batch-B{batch_size}-dx{dim_x}-dg{dim_g}-s{noise_std}``; the arguments are
    validated by the channel (ValueError naming the parameter).

    Examples
    --------
    >>> task = batch_task(2, 5, 5, 0.5)
    >>> task.name, task.x_shape, round(task.mutual_information, 3)
    ('batch-B2-dx5-dg5-s0.5', (2, 5), 1.863)
    """
    channel = GaussianBatchChannel(batch_size, dim_x, dim_g, noise_std, seed=seed)
    return MITask(
        name=f"batch-B{batch_size}-dx{dim_x}-dg{dim_g}-s{noise_std:g}",
        family="batch",
        x_shape=(batch_size, dim_x),
        y_shape=(dim_g,),
        mutual_information=channel.mutual_information(),
        truth_stderr=0.0,
        sampler=partial(_sample_channel, channel=channel),
        description=(
            f"G = mean_b(A x_b) + {noise_std:g} eps, B = {batch_size}, dim_x = {dim_x}, "
            f"dim_g = {dim_g}, A of seed {seed}; closed form log det(I + A A^T / (B s^2)) / 2"
        ),
    )
