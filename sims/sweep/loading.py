"""Sweep configurations as TOML files, and the ones packaged with pruneleak.

A file has a ``name``, a ``[base]`` table and ``[[grid]]`` tables. Fields of the
configurations a job composes sit in sub-tables named after the job's field and keep the
building block's own names (``[base.fed] batch_size = 1``, ``[base.inversion]
iterations = 50``); in a grid, TOML's dotted keys say the same on one line
(``pruning.p = [0.3, 0.6, 0.9]``). See ``configs/quick_digits.toml``. An optional
``[resources]`` table (``cpus``, ``gpus``) says what each job reserves on a Ray worker
(:class:`sims.sweep.grid.Resources`).

Packaged configurations are package data of :mod:`sims.sweep` (``configs/*.toml``), found
through :mod:`importlib.resources`, so ``pruneleak sweep quick_digits`` works from any
directory after a plain ``pip install``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from importlib import resources
from pathlib import Path

from pruneleak.sims.sweep.grid import Resources, SweepConfig

_TOP_KEYS = ("name", "base", "grid", "resources")
_RESOURCE_KEYS = ("cpus", "gpus")


def config_from_dict(data: Mapping) -> SweepConfig:
    """From ``{"name": ..., "base": {...}, "grid": [{...}, ...], "resources": {...}}``
    (the TOML layout; ``resources`` optional); nested tables become dotted field paths."""
    unknown = sorted(set(data) - set(_TOP_KEYS))
    if unknown:
        raise ValueError(
            f"A sweep configuration has the keys 'name', 'base', 'grid' and 'resources'. "
            f"Got unknown keys {unknown} instead."
        )
    grids = data.get("grid", [])
    if not isinstance(grids, list | tuple):
        raise ValueError(
            f"The 'grid' entry of a sweep configuration must be an array of tables, one "
            f"[[grid]] header per grid. Got {grids!r} instead."
        )
    return SweepConfig(
        name=data.get("name", ""),
        base=_flatten(data.get("base", {}), "base"),
        grids=tuple(_flatten(g, f"grid[{i}]") for i, g in enumerate(grids)),
        resources=_resources(data.get("resources", {})),
    )


def _resources(table) -> Resources:
    """The ``[resources]`` table as :class:`Resources` (absent keys at their defaults)."""
    if not isinstance(table, Mapping):
        raise ValueError(
            f"The 'resources' entry of a sweep configuration must be a table with the keys "
            f"{', '.join(_RESOURCE_KEYS)}. Got {table!r} instead."
        )
    unknown = sorted(set(table) - set(_RESOURCE_KEYS))
    if unknown:
        raise ValueError(
            f"The 'resources' table of a sweep configuration has the keys "
            f"{', '.join(_RESOURCE_KEYS)}. Got unknown keys {unknown} instead."
        )
    return Resources(**table)


def _flatten(table, where: str, prefix: str = "") -> dict:
    if not isinstance(table, Mapping):
        raise ValueError(
            f"The '{where}' entry of a sweep configuration must be a table of job fields. "
            f"Got {table!r} instead."
        )
    out = {}
    for key, value in table.items():
        if isinstance(value, Mapping):
            out.update(_flatten(value, where, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def read_config(path: str | os.PathLike) -> SweepConfig:
    """Read a sweep from a TOML file; a ValueError names the file and what is wrong."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            content = fh.read()
    except FileNotFoundError as err:
        raise ValueError(f"The sweep configuration {path} does not exist.") from err
    except OSError as err:
        raise ValueError(f"The sweep configuration {path} cannot be read: {err.strerror}.") from err
    return _parse(content, str(path))


def _parse(content: bytes, source: str) -> SweepConfig:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        try:
            import tomli as tomllib
        except ModuleNotFoundError as err:
            raise ValueError(
                "Reading a sweep configuration needs Python >= 3.11 (tomllib) or the "
                "'tomli' package on Python 3.10."
            ) from err
    try:
        data = tomllib.loads(content.decode())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise ValueError(f"The sweep configuration {source} is not valid TOML: {err}") from err
    try:
        return config_from_dict(data)
    except ValueError as err:
        raise ValueError(f"In the sweep configuration {source}: {err}") from err


def packaged_configs() -> tuple[str, ...]:
    """Names of the sweep configurations shipped with pruneleak (sorted)."""
    files = resources.files(__package__).joinpath("configs").iterdir()
    return tuple(sorted(f.name[: -len(".toml")] for f in files if f.name.endswith(".toml")))


def packaged_config(name: str) -> SweepConfig:
    """The packaged configuration ``name`` (:func:`packaged_configs`)."""
    names = packaged_configs()
    if name not in names:
        raise ValueError(
            f"The 'name' parameter of packaged_config must be one of {list(names)}. "
            f"Got {name!r} instead."
        )
    resource = resources.files(__package__).joinpath("configs").joinpath(f"{name}.toml")
    return _parse(resource.read_bytes(), f"{name} (packaged)")


def load_config(name_or_path: str | os.PathLike) -> SweepConfig:
    """A packaged configuration by name (``"quick_digits"``), else a TOML file by path."""
    if not isinstance(name_or_path, str | os.PathLike):
        raise ValueError(
            f"The 'name_or_path' parameter of load_config must be a packaged configuration's "
            f"name or a path. Got {name_or_path!r} instead."
        )
    if isinstance(name_or_path, str) and name_or_path in packaged_configs():
        return packaged_config(name_or_path)
    if Path(name_or_path).suffix != ".toml" and not Path(name_or_path).exists():
        raise ValueError(
            f"The sweep configuration {name_or_path!r} is neither a packaged one "
            f"({', '.join(packaged_configs())}) nor a TOML file."
        )
    return read_config(name_or_path)
