"""pruneleak: privacy leakage in pruned federated learning.

The one installed name of the toolkit. ``pruneleak.audit``, ``pruneleak.AuditResult`` and
``pruneleak.AuditingStrategy`` (from :mod:`pruneleak.sims.audit`; the last needs the
``flower`` extra) are imported on first access, so that ``import pruneleak`` stays light
(no torch); ``python -m pruneleak`` runs the command line.

The bounds, estimators and simulations are the subpackages ``pruneleak.bounds``,
``pruneleak.estimators`` and ``pruneleak.sims`` (the repository's folders ``bounds/``,
``estimators/`` and ``sims/``, mapped by ``pyproject.toml``'s package-dir).
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("pruneleak")  # single source: pyproject.toml's version
except PackageNotFoundError:  # a checkout on sys.path that was never installed
    __version__ = "unknown"

# Public name -> the module that defines it, imported when the name is first used.
_LAZY = {
    "audit": "pruneleak.sims.audit",
    "AuditResult": "pruneleak.sims.audit",
    "AuditingStrategy": "pruneleak.sims.audit",
}

__all__ = ["AuditResult", "AuditingStrategy", "__version__", "audit"]


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # later accesses skip __getattr__
        return value
    raise AttributeError(f"module 'pruneleak' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
