"""Optional dependencies, each named by the extra of ``pruneleak`` that installs it.

A documented command or notebook that needs a package outside the plain install imports
it through :func:`require`, which fails with one line naming what to install, e.g.
``pip install 'pruneleak[faces]'``. :class:`MissingExtraError` is an ``ImportError``
(what a library caller expects) and a ``ValueError`` (which the command line reports in
one line with exit status 2, as any user error, never as an internal error).

The extras (``[project.optional-dependencies]`` in ``pyproject.toml``):

* ``faces``: scikit-image, whose wheel ships the faces and photographs of
  ``--dataset faces|patches``;
* ``notebooks``: Google's dp-accounting, the peer of the ``bounds_explorer`` notebook;
* ``ray``: Ray, for ``pruneleak sweep --executor ray``;
* ``flower``: Flower, for auditing a Flower federation (:mod:`sims.audit.flower`).
"""

from __future__ import annotations

import importlib
from types import ModuleType

#: Module -> (the distribution that provides it, the extra of pruneleak that installs it).
EXTRAS = {
    "skimage": ("scikit-image", "faces"),
    "dp_accounting": ("dp-accounting", "notebooks"),
    "ray": ("ray", "ray"),
    "flwr": ("flwr", "flower"),
}


class MissingExtraError(ImportError, ValueError):
    """An optional dependency is not installed; the message names the extra to install."""


def install_hint(module: str) -> str:
    """``pip install 'pruneleak[EXTRA]'`` for ``module`` (a key of :data:`EXTRAS`)."""
    return f"pip install 'pruneleak[{EXTRAS[module][1]}]'"


def require(module: str, *, purpose: str) -> ModuleType:
    """Import and return ``module`` (a key of :data:`EXTRAS`), or raise
    :class:`MissingExtraError` saying that ``purpose`` needs it and how to install it.

    ``purpose`` starts the message, e.g. ``"--dataset faces"``.
    """
    if module not in EXTRAS:
        raise KeyError(f"{module!r} is not an optional dependency; known: {sorted(EXTRAS)}.")
    try:
        return importlib.import_module(module)
    except ImportError as err:
        distribution = EXTRAS[module][0]
        raise MissingExtraError(
            f"{purpose} needs {distribution}, which cannot be imported ({err}): "
            f"{install_hint(module)} (or pip install {distribution}).",
            name=module,
        ) from err
