"""The default suite: 21 tasks with known MI, Gaussian and not, for the estimator benchmark.

Mixes every family of :mod:`estimators.tasks` (after the benchmark of Czyz et al., "Beyond
normal", NeurIPS 2023, arXiv:2306.11078, plus this toolkit's batch-and-gradient channels):

======================  ===========  =======================================================
family                  tasks        what it tests
======================  ===========  =======================================================
normal                  5            1v1, dense 5x5 / 25x25, sparse 2-pair 5x5 / 25x25
student                 3            heavy tails; dependence through a shared scale
transformed             6            half-cube, asinh of Student-t, normal CDF, spiral
mixture                 3            multimodal; uncorrelated yet dependent (X shape)
batch                   4            H-MINE's setting: ``X`` of shape ``(n, B, d_x)``
======================  ===========  =======================================================

Every true MI lies between 0.22 and 1.9 nats, within reach of a neural bound trained on
batches of 256 (the DV / InfoNCE bounds saturate near ``log 256 = 5.5`` nats). Four tasks
have 25 + 25 dimensions. The three mixture truths are Monte Carlo averages computed when
this module is imported (about 0.3 s together).
"""

from __future__ import annotations

from pruneleak.bounds.validation import check_choice
from pruneleak.estimators.tasks.batch import batch_task
from pruneleak.estimators.tasks.gaussian import (
    dense_normal_task,
    normal_1v1_task,
    sparse_normal_task,
)
from pruneleak.estimators.tasks.mixture import bimodal_task, x_mixture_task
from pruneleak.estimators.tasks.student import student_task
from pruneleak.estimators.tasks.task import MITask
from pruneleak.estimators.tasks.transformed import transformed_task

__all__ = ["BATCH_CHANNELS", "DEFAULT_SUITE", "get_task", "task_names"]

#: ``(batch_size, dim_x, dim_g, noise_std)`` of the four batch tasks (mixing seed 0); their
#: truths are 1.863, 1.346, 1.477 and 1.145 nats.
BATCH_CHANNELS = ((2, 5, 5, 0.5), (5, 3, 10, 0.5), (10, 2, 10, 0.3), (10, 5, 10, 0.5))


def _build() -> tuple[MITask, ...]:
    normal_1v1 = normal_1v1_task(0.75)
    dense_5 = dense_normal_task(5, 0.5)
    dense_25 = dense_normal_task(25, 0.5)
    sparse_5 = sparse_normal_task(5, 2, 0.8)
    sparse_25 = sparse_normal_task(25, 2, 0.8)
    tasks = [
        normal_1v1,
        dense_5,
        dense_25,
        sparse_5,
        sparse_25,
        student_task(1, 1),
        student_task(2, 2, correlation=0.5),
        student_task(5, 3),
        transformed_task(normal_1v1, "halfcube"),
        transformed_task(dense_25, "halfcube"),
        transformed_task(student_task(1, 1), "asinh"),
        transformed_task(student_task(5, 2), "asinh"),
        transformed_task(sparse_25, "normcdf"),
        transformed_task(dense_5, "spiral"),
        bimodal_task(2.0, -0.5),
        x_mixture_task(1, 0.9),
        x_mixture_task(5, 0.7),
    ]
    tasks += [batch_task(*channel) for channel in BATCH_CHANNELS]
    return tuple(tasks)


#: The suite, in family order.
DEFAULT_SUITE: tuple[MITask, ...] = _build()
_BY_NAME = {task.name: task for task in DEFAULT_SUITE}
if len(_BY_NAME) != len(DEFAULT_SUITE):  # pragma: no cover - a construction bug
    raise RuntimeError("DEFAULT_SUITE holds two tasks of the same name.")


def task_names() -> tuple[str, ...]:
    """Names of the tasks of :data:`DEFAULT_SUITE`, in order.

    Examples
    --------
    >>> len(task_names()), task_names()[0]
    (21, 'normal-1v1')
    """
    return tuple(_BY_NAME)


def get_task(name: str) -> MITask:
    """The suite's task called ``name`` (ValueError listing the names if there is none).

    Examples
    --------
    >>> round(get_task("student-1v1-dof1").mutual_information, 4)
    0.2242
    """
    return _BY_NAME[check_choice("name", name, func="get_task", choices=task_names())]
