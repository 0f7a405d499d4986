"""Configuration fields that say what they hold: a phrase, the range, the unit, the choices.

A configuration dataclass declares each field a user sets with :func:`documented` instead
of a bare default; the field then carries a :class:`FieldDoc` in its ``metadata``. The
command line builds its options from it (:mod:`sims.cli.config_options`): an option's
type, range, unit, default and help are read from the field, so they cannot drift from
the configuration. The configuration's ``__post_init__`` stays the check of every value,
its message naming the field; tests (``tests/sims/test_cli_config_options.py``) check that
it refuses a value just outside the documented range and accepts the range's ends.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pruneleak.bounds.validation import MAX_SEED, interval_text

#: Key of a field's :class:`FieldDoc` in its ``metadata``.
DOC = "doc"


@dataclass(frozen=True)
class FieldDoc:
    """What one field of a configuration holds.

    Attributes:
        help: what the value means, in a phrase; its range, unit and default are added
            where it is shown (:meth:`describe`).
        low, high: the range of the value (of each element of a tuple); None: unbounded.
            A string bound is known only at run time (``"M"``) and is shown as written.
        low_open, high_open: whether the range excludes that bound.
        unit: the value's unit as a plural noun (``"nats"``, ``"images"``), or "".
        unset: what a default of None stands for (``"min(256, M)"``); required for such a
            field, since "None" tells the reader nothing.
        choices: the allowed strings, or a function returning them (a registry, read when
            asked); None: any value of the field's type.
    """

    help: str
    low: float | None = None
    high: float | str | None = None
    low_open: bool = False
    high_open: bool = False
    unit: str = ""
    unset: str = ""
    choices: tuple[str, ...] | Callable[[], Iterable[str]] | None = None

    def range_text(self) -> str | None:
        """The range as the configuration's messages write it (``"(0, 1]"``), or None
        for an unbounded field."""
        if self.low is None and self.high is None:
            return None
        return interval_text(self.low, self.high, not self.low_open, not self.high_open)

    def allowed(self) -> tuple[str, ...] | None:
        """The allowed strings (a registry read now), or None when any value is."""
        if self.choices is None:
            return None
        return tuple(self.choices() if callable(self.choices) else self.choices)

    def describe(self, *, each: bool = False, note: str = "") -> str:
        """``help``, then ``note`` (what the reader's context adds), then the range and
        unit: ``"privacy budget; in (0, inf) nats"``; ``each`` says the range is that of
        every element (a tuple field)."""
        text = f"{self.help} {note}" if note else self.help
        interval = self.range_text()
        if interval is None:
            return f"{text} ({self.unit})" if self.unit else text
        unit = f" {self.unit}" if self.unit else ""
        return f"{text}; {'each ' if each else ''}in {interval}{unit}"


def documented(default: Any, help: str, **doc: Any) -> Any:
    """A dataclass field with ``default`` and a :class:`FieldDoc` of ``help`` and ``doc``
    (its other attributes) in its metadata: ``rounds: int = documented(1, "rounds", low=1)``."""
    return dataclasses.field(default=default, metadata={DOC: FieldDoc(help, **doc)})


def field_doc(field: dataclasses.Field) -> FieldDoc:
    """The :class:`FieldDoc` of ``field``; KeyError naming it if it was declared bare."""
    try:
        return field.metadata[DOC]
    except KeyError:
        raise KeyError(
            f"The field {field.name!r} has no FieldDoc: declare it with "
            "sims.core.fields.documented(default, help, ...)."
        ) from None


def seed_field() -> Any:
    """A configuration's ``seed``: of every draw, in ``[0, MAX_SEED]`` (its check is
    :func:`bounds.validation.check_seed`)."""
    return documented(0, "seed of every draw", low=0, high=MAX_SEED)


def device_field() -> Any:
    """A configuration's torch ``device``, resolved at run time (its check is
    :func:`estimators.device.check_device`)."""
    return documented("auto", "auto, cpu, cuda or cuda:N")
