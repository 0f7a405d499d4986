"""MkDocs hook: the source tree in which griffe finds ``pruneleak`` and its subpackages.

pyproject.toml's package-dir maps the one import name ``pruneleak`` onto four folders of
the repository (``sims/_toplevel/pruneleak``, ``bounds``, ``estimators``, ``sims``).
griffe reads the sources without importing them (no torch at build time) and looks a
package's submodules up in the package's own folder, where ``pruneleak.bounds`` is not.
Before anything is collected, this hook lays the installed layout out as symbolic links
under ``build/docs/src`` (the ``paths`` of the Python handler in mkdocs.yml), read from
pyproject.toml so that the two cannot disagree.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from mkdocs.plugins import event_priority

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

SOURCES = Path("build", "docs", "src")


def package_dirs(root: Path) -> dict[str, Path]:
    """pyproject.toml's package-dir: dotted package name -> its folder."""
    with (root / "pyproject.toml").open("rb") as file:
        mapping = tomllib.load(file)["tool"]["setuptools"]["package-dir"]
    return {name: root / folder for name, folder in mapping.items()}


def link_tree(root: Path, dest: Path) -> Path:
    """Lay the packages of the repository at ``root`` out under ``dest`` as they are
    installed: a package mapped onto a folder is a link to that folder; a package with
    mapped subpackages is a folder of links to its own files. Returns ``dest``."""
    dirs = package_dirs(root)
    if dest.exists():
        shutil.rmtree(dest)
    for name, folder in sorted(dirs.items()):
        target = dest.joinpath(*name.split("."))
        children = {other.rsplit(".", 1)[1] for other in dirs if other.startswith(name + ".")}
        if not children:
            target.symlink_to(folder.resolve(), target_is_directory=True)
            continue
        target.mkdir(parents=True)
        for entry in folder.iterdir():
            if entry.name not in children and entry.name != "__pycache__":
                (target / entry.name).symlink_to(entry.resolve())
    return dest


@event_priority(100)  # before mkdocstrings creates its handler, which reads the tree
def on_config(config):
    root = Path(config.config_file_path).parent
    link_tree(root, root / SOURCES)
    return config
