"""Command-line options built from the documented fields of a configuration dataclass.

A command lists which option sets which field (:class:`ConfigOption`: the flag, the
field, a metavar); :func:`add_config_options` reads everything else from the field
(:mod:`sims.core.fields`): a tuple field takes one or more values, a field with choices
takes one of them, a number is parsed as the field's type (``int`` or ``float``); the
default is the field's; the help is the field's phrase with its range, unit and default.
Help and configuration cannot drift apart: there is nothing to copy.

A number is checked at parse time for its sign only (:mod:`sims.cli.arguments`: a count,
a value that may be zero), so a negative count or a NaN is refused before any work
starts. The rest of the range is the configuration's to check when the command builds it:
its message states the whole range, a bound known only at run time included ("[2, 1797]"
candidates of the digits), and :func:`sims.cli.options.name_options` names the option in
it, which :func:`add_config_options` declares.
"""

from __future__ import annotations

import argparse
import dataclasses
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from pruneleak.sims.cli import as_typed
from pruneleak.sims.cli.arguments import integer, real
from pruneleak.sims.cli.options import declare_options
from pruneleak.sims.core.fields import FieldDoc, field_doc


@dataclass(frozen=True)
class ConfigOption:
    """The option ``flag`` sets the configuration's field ``field``.

    ``metavar`` names its value in the usage line (default: argparse's, the destination
    in capitals); ``dest`` is the attribute of the parsed arguments (default: the flag
    without its dashes, argparse's); ``note`` is added to the field's help where the
    command line has more to say ("(B > 1 needs --no-leakage)").
    """

    flag: str
    field: str
    metavar: str | None = None
    dest: str | None = None
    note: str = ""

    @property
    def destination(self) -> str:
        return self.dest or self.flag.removeprefix("--").replace("-", "_")


def add_config_options(
    container,
    config: type,
    options: Iterable[ConfigOption],
    *,
    preset: tuple[str, Mapping[str, object]] | None = None,
) -> None:
    """Add ``options``, fields of the dataclass ``config``, to ``container`` (a parser or
    an argument group) and declare them as setting those fields (:func:`declare_options`).

    With ``preset = (flag, values)`` (``("--quick", QUICK)``) every option is None unless
    given, so that the command can start from ``values`` when ``flag`` is given; the help
    then states both the field's default and the preset's value.
    """
    fields = {field.name: field for field in dataclasses.fields(config)}
    hints = typing.get_type_hints(config)
    options = tuple(options)
    for option in options:
        field = fields[option.field]
        doc = field_doc(field)
        kind, many = _value_type(hints[field.name])
        help_text = doc.describe(each=many, note=option.note)
        if preset is not None:
            flag, values = preset
            shown = _shown(field.default, doc)
            if field.name in values:
                shown += f"; {flag}: {_shown(values[field.name], doc)}"
            help_text += f" (default: {shown})"
        elif field.default is None:
            help_text += f" (default: {_shown(None, doc)})"
        default = None if preset is not None else field.default
        container.add_argument(
            option.flag,
            dest=option.destination,
            metavar=option.metavar,
            nargs="+" if many else None,
            default=list(default) if many and default is not None else default,
            choices=doc.allowed(),
            type=None if kind is str else _sign_checked(kind, doc),
            help=help_text,
        )
    declare_options(container, {config.__name__: fields_set_by(options)})


def fields_set_by(options: Iterable[ConfigOption]) -> dict[str, str]:
    """Destination -> field, for :func:`declare_options` and a command's own reading."""
    return {option.destination: option.field for option in options}


def config_values(
    args: argparse.Namespace, options: Iterable[ConfigOption], *, given_only: bool = False
) -> dict[str, object]:
    """Field -> value of each of ``options`` in the parsed ``args``, lists as tuples (a
    configuration's sequences are tuples); with ``given_only``, only the options given
    (not None)."""
    values = {}
    for option in options:
        value = getattr(args, option.destination)
        if value is not None or not given_only:
            values[option.field] = tuple(value) if isinstance(value, list) else value
    return values


def _value_type(hint) -> tuple[type, bool]:
    """``(type of one value, whether the field is a tuple of them)`` for a field's
    annotation, an optional one's ``None`` aside: ``tuple[float, ...] | None`` is
    ``(float, True)``."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        (hint,) = (arg for arg in typing.get_args(hint) if arg is not type(None))
    if typing.get_origin(hint) is tuple:
        return typing.get_args(hint)[0], True
    return hint, False


def _sign_checked(kind: type, doc: FieldDoc) -> Callable[[str], object]:
    """The option's type: a number of ``kind`` (int or float) of the sign the field's
    lower bound gives (a count is at least 1; zero may be allowed); the configuration
    checks the rest of the range (module docstring)."""
    unsigned = doc.low is None or doc.low < 0
    if kind is int:
        return integer() if unsigned else integer(low=min(doc.low, 1))
    if kind is float:
        return real() if unsigned else real(low=0, low_open=doc.low > 0 or doc.low_open)
    raise TypeError(f"No command-line type for a field of type {kind!r}.")


def _shown(value, doc: FieldDoc) -> str:
    """``value`` as the help states a default: as one would type it, None as what it
    stands for (the field's ``unset``), an empty tuple as "none"."""
    if value is None:
        if not doc.unset:
            raise ValueError(f"A default of None needs a FieldDoc.unset ({doc.help!r}).")
        return doc.unset
    return as_typed(value) or "none"
