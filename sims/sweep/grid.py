"""A sweep of PriPrune's attack study: a base job and grids that expand into jobs.

A :class:`SweepConfig` holds a ``base`` (job fields every job shares) and a list of
``grids``. Each grid overrides some fields of the base and expands the Cartesian product
of its list-valued fields; a grid may name the ``panel`` of the figure it feeds
(``"p"``, ``"B"``, ``"d"``, ``"T"``, ``"attacks"`` ...). The union of all grids, without
repeats, is the list of :class:`sims.sweep.job.AttackJob` s, so a job shared by several
panels runs once. Within one grid, a value listed twice for a field (``pruning.p = [0.5,
0.5]``) is refused rather than merged: it is a typo or a wrong value, and a panel drawn
from it would show one job as two points. Fields are named by their dotted path in the job
(:data:`sims.sweep.job.FIELD_PATHS`: ``"pruning.p"``, ``"fed.batch_size"``, ``"seed"``).

A sweep also says what each of its jobs asks of a worker when it runs on Ray
(:class:`Resources`, the TOML's ``[resources]``); that is not part of any job.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from itertools import product

from pruneleak.bounds.validation import check_int, check_real
from pruneleak.sims.sweep.job import FIELD_PATHS, OWNED_PATHS, AttackJob

#: The key of a grid that names its panel rather than a job field.
PANEL = "panel"

#: The most jobs one sweep may list, summed over its grids before repeats are merged: a
#: job takes seconds to minutes, so a larger grid is a typo (an extra axis), and expanding
#: it alone would take minutes before the first job starts.
MAX_JOBS = 10_000


@dataclass(frozen=True)
class Resources:
    """What one job of a sweep reserves on a Ray worker (:mod:`sims.sweep.ray_executor`).

    Attributes:
        cpus: CPU cores per job, an integer >= 1; the job also computes on that many torch
            intra-op threads, so its record equals a local run's on as many threads
            (:mod:`sims.sweep.ray_executor`, "Same records").
        gpus: GPUs per job, in [0, 1]: a job computes on one device, and a fraction lets
            jobs share a GPU (0.5: two at a time on each GPU). Set the jobs' ``device``
            to ``"cuda"``: Ray shows each task only the GPU it reserved.

    Neither enters a job's key: like the ``device``, where a job runs does not change what
    it computes. The local executor ignores them.
    """

    cpus: int = 1
    gpus: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "cpus", check_int("cpus", self.cpus, func="Resources", low=1))
        gpus = check_real("gpus", self.gpus, func="Resources", low=0, high=1)
        object.__setattr__(self, "gpus", gpus)


@dataclass(frozen=True)
class SweepConfig:
    """A named grid of :class:`AttackJob` s (see the module docstring).

    Attributes:
        name: the sweep's name (recorded with every record it writes).
        base: job fields (dotted paths) shared by every job.
        grids: each a mapping of job fields to a value or a non-empty list of values,
            plus an optional ``"panel"`` name; expanded as a Cartesian product.
        resources: what each job reserves on a Ray worker (:class:`Resources`).
    """

    name: str
    base: Mapping = field(default_factory=dict)
    grids: tuple[Mapping, ...] = ()
    resources: Resources = field(default_factory=Resources)

    def __post_init__(self) -> None:
        func = "SweepConfig"
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(
                f"The 'name' parameter of {func} must be a non-empty string. "
                f"Got {self.name!r} instead."
            )
        _check_fields("base", self.base, allowed=FIELD_PATHS)
        if not isinstance(self.grids, tuple | list) or not self.grids:
            raise ValueError(
                f"The 'grids' parameter of {func} must be a sequence of at least one grid "
                f"(a table of job fields). Got {self.grids!r} instead."
            )
        for i, grid in enumerate(self.grids):
            _check_fields(f"grids[{i}]", grid, allowed=(*FIELD_PATHS, PANEL))
        sizes = [
            math.prod(len(v) for k, v in grid.items() if k != PANEL and isinstance(v, list))
            for grid in self.grids
        ]
        if sum(sizes) > MAX_JOBS:
            raise ValueError(
                f"The 'grids' parameter of {func} must list at most MAX_JOBS = {MAX_JOBS} jobs "
                f"(summed over its grids). Got {sum(sizes)} (grids of {sizes} jobs) instead: "
                "split the sweep or shorten an axis."
            )
        for i, grid in enumerate(self.grids):
            if PANEL in grid and (not isinstance(grid[PANEL], str) or not grid[PANEL]):
                raise ValueError(
                    f"The 'grids[{i}].{PANEL}' parameter of {func} must be a non-empty "
                    f"string. Got {grid[PANEL]!r} instead."
                )
            for key, value in grid.items():
                if isinstance(value, list):
                    _check_axis(f"grids[{i}].{key}", value)
        if not isinstance(self.resources, Resources):
            raise ValueError(
                f"The 'resources' parameter of {func} must be a Resources. "
                f"Got {type(self.resources).__name__} instead."
            )
        self.jobs()  # every job must be valid

    def with_base(self, **overrides) -> SweepConfig:
        """The same sweep with ``overrides`` applied to every job (e.g. ``device``)."""
        return replace(self, base={**self.base, **overrides})

    def _expand(self, index: int) -> list[AttackJob]:
        grid = self.grids[index]
        axes = {k: v if isinstance(v, list) else [v] for k, v in grid.items() if k != PANEL}
        jobs = []
        for values in product(*axes.values()):
            try:
                jobs.append(
                    AttackJob.from_fields({**self.base, **dict(zip(axes, values, strict=True))})
                )
            except ValueError as err:
                raise ValueError(f"Sweep {self.name!r}, grids[{index}]: {err}") from err
        return jobs

    def jobs(self) -> list[AttackJob]:
        """Every job of the sweep, in grid order, each once."""
        return list(dict.fromkeys(job for i in range(len(self.grids)) for job in self._expand(i)))

    def panels(self) -> dict[str, list[AttackJob]]:
        """Jobs by panel name (grids without a name are called ``"grid<i>"``)."""
        out: dict[str, list[AttackJob]] = {}
        for i, grid in enumerate(self.grids):
            out.setdefault(str(grid.get(PANEL, f"grid{i}")), []).extend(self._expand(i))
        return {name: list(dict.fromkeys(jobs)) for name, jobs in out.items()}

    def job_panels(self) -> dict[AttackJob, tuple[str, ...]]:
        """Every job of the sweep -> the names of the panels it belongs to, in panel order
        (a job that several grids share, such as the base point of two axes, is in each):
        the ``panels`` of its record (:func:`sims.sweep.runner.append_record`)."""
        names: dict[AttackJob, list[str]] = {}
        for name, jobs in self.panels().items():
            for job in jobs:
                names.setdefault(job, []).append(name)
        return {job: tuple(found) for job, found in names.items()}


def _check_axis(name: str, values: list) -> None:
    """A grid's list of values for one field: non-empty, each value once."""
    if not values:
        raise ValueError(
            f"The '{name}' parameter of SweepConfig must be a non-empty list or a single "
            f"value. Got [] instead."
        )
    hashable, other = set(), []  # a set keeps a long axis linear; a table is compared by ==
    for value in values:
        try:
            repeated = value in hashable
            hashable.add(value)
        except TypeError:
            repeated = value in other
            other.append(value)
        if repeated:
            raise ValueError(
                f"The '{name}' parameter of SweepConfig lists the value {value!r} twice; "
                f"each value of a grid axis must appear once. Got {values!r} instead."
            )


def _check_fields(name: str, mapping, *, allowed) -> None:
    if not isinstance(mapping, Mapping):
        raise ValueError(
            f"The '{name}' parameter of SweepConfig must be a table of job fields. "
            f"Got {type(mapping).__name__} instead."
        )
    unknown = sorted(set(mapping) - set(allowed))
    owned = [key for key in unknown if key in OWNED_PATHS]
    if owned:
        raise ValueError(
            f"The '{name}' parameter of SweepConfig sets {owned}, which the job sets itself "
            f"(from its 'seed' and 'device'; FedSGD; evaluation after the last round)."
        )
    if unknown:
        raise ValueError(
            f"The '{name}' parameter of SweepConfig names unknown job fields {unknown}; "
            f"known fields: {', '.join(allowed)}."
        )
