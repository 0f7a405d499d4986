"""Tasks with a known mutual information, and the default suite of the estimator benchmark.

One idea per module: :mod:`~estimators.tasks.task` (the :class:`MITask` record),
:mod:`~estimators.tasks.gaussian`, :mod:`~estimators.tasks.student`,
:mod:`~estimators.tasks.transformed`, :mod:`~estimators.tasks.mixture` and
:mod:`~estimators.tasks.batch` (the families and their truths),
:mod:`~estimators.tasks.suite` (``DEFAULT_SUITE``, ``get_task``, ``task_names``; importing it
computes the Monte Carlo truths of the mixtures, about 0.3 s).
"""

from pruneleak.estimators.tasks.task import FAMILIES, MITask

__all__ = ["FAMILIES", "MITask"]
