"""The scale a study runs at: ``quick`` (minutes on a laptop CPU, what the tests and
notebooks use by default) or ``paper`` (the papers' own sizes, a GPU advised), read from
``$PRUNELEAK_SCALE``."""

from __future__ import annotations

import os

from pruneleak.bounds.validation import check_choice

SCALES = ("quick", "paper")


def current_scale() -> str:
    """The scale notebooks and experiments run at: ``$PRUNELEAK_SCALE``, default ``quick``."""
    return check_choice(
        "PRUNELEAK_SCALE",
        os.environ.get("PRUNELEAK_SCALE", "quick"),
        func="current_scale",
        choices=SCALES,
    )
