"""Options built from documented configuration fields (sims.cli.config_options, issue 32).

Each option of demo, leakage, train and fedltp that sets a documented field
(:func:`sims.core.fields.documented`) must show that field's help, range and default in
``--help``, and the configuration must agree with the range the help states: a value
just outside it is refused (exit status 2, the last line naming the option), and the
range's ends are accepted. The expected defaults are read here with
:func:`dataclasses.fields`, not from the commands' option tables.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import math
import re

import pytest

from pruneleak.sims.cli import build_parser, main
from pruneleak.sims.cli.config_options import ConfigOption, add_config_options
from pruneleak.sims.core.fields import DOC, FieldDoc, documented
from pruneleak.sims.defenses import DefenseSpec
from pruneleak.sims.experiments.demo import DemoConfig
from pruneleak.sims.experiments.leakage import LeakageConfig
from pruneleak.sims.experiments.train import TrainConfig
from pruneleak.sims.fedltp.config import FedLTPConfig
from pruneleak.sims.fl.server import FedConfig

#: The configurations whose defaults each command's options show (the demo's --noise is
#: also declared for LeakageConfig, only so that its errors name the option).
SHOWN = {
    "demo": (DemoConfig,),
    "leakage": (LeakageConfig, DefenseSpec),
    "train": (TrainConfig, FedConfig),
    "fedltp": (FedLTPConfig,),
}
DOCUMENTED = (DemoConfig, LeakageConfig, DefenseSpec, TrainConfig, FedConfig, FedLTPConfig)


def _subparser(command: str) -> argparse.ArgumentParser:
    parser = build_parser((command,))
    (subparsers,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return subparsers.choices[command]


def _documented_options(command: str):
    """``(config, field, doc, action)`` for each option of ``command`` declared as setting
    a documented field of a configuration whose defaults it shows."""
    parser = _subparser(command)
    actions = {a.option_strings[-1]: a for a in parser._actions if a.option_strings}
    declared = parser.get_default("option_of_field")
    for config in SHOWN[command]:
        fields = {f.name: f for f in dataclasses.fields(config)}
        for name, flag in declared[config.__name__].items():
            field = fields.get(name)
            if field is not None and DOC in field.metadata:
                yield config, field, field.metadata[DOC], actions[flag]


OPTIONS = [(command, *row) for command in SHOWN for row in _documented_options(command)]


def _id(row) -> str:
    return f"{row[0]} {row[4].option_strings[-1]}"


def test_every_command_has_documented_options():
    for command in SHOWN:
        assert sum(row[0] == command for row in OPTIONS) >= 7, command


def _entry(text: str, flag: str) -> str:
    """The entry of option ``flag`` in a ``--help`` text: its line and, when its usage
    is long, the next one (the help, unwrapped at a wide COLUMNS)."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if re.match(rf"\s+{re.escape(flag)}(\s|$)", line))
    entry = [lines[at]]
    for line in lines[at + 1 :]:
        if not line.strip() or re.match(r"\s+-", line):
            break
        entry.append(line)
    return " ".join(" ".join(entry).split())


@pytest.mark.parametrize("row", OPTIONS, ids=_id)
def test_help_shows_the_fields_phrase_range_and_default(row, monkeypatch):
    command, _config, field, doc, action = row
    monkeypatch.setenv("COLUMNS", "10000")
    entry = _entry(_subparser(command).format_help(), action.option_strings[-1])
    assert doc.help in action.help
    if doc.range_text() is not None:
        assert f"in {doc.range_text()}" in action.help
    if doc.allowed() is not None:
        assert set(action.choices) == set(doc.allowed())
    assert " ".join(action.help.split()) in entry
    shown = re.search(r"\(default: ([^;)]*)", entry).group(1)
    if field.default is None:  # said in words: what None stands for
        assert shown and doc.unset.startswith(shown), f"--help shows {shown!r}"
        return
    convert = action.type or str
    if isinstance(field.default, tuple):
        assert [convert(text) for text in shown.split(" ")] == list(field.default)
    else:
        assert convert(shown) == field.default, f"--help shows {shown!r}"


@pytest.mark.parametrize(
    ("command", "config"),
    [
        ("demo", DemoConfig),
        ("leakage", LeakageConfig),
        ("train", TrainConfig),
        ("fedltp", FedLTPConfig),
    ],
)
def test_no_option_gives_the_configurations_defaults(command, config):
    args = build_parser((command,)).parse_args([command])
    module = importlib.import_module(f"pruneleak.sims.cli.{command}")
    assert module.config_from_args(args) == config()


def _outside(doc: FieldDoc, kind: type) -> list:
    """The values just outside the numeric bounds of ``doc`` (a string bound is known
    only at run time)."""
    values = []
    for bound, is_open, away in ((doc.low, doc.low_open, -1), (doc.high, doc.high_open, 1)):
        if isinstance(bound, int | float):
            if kind is int:
                values.append(int(bound) + away)
            else:
                values.append(float(bound) if is_open else math.nextafter(bound, away * math.inf))
    return values


def _inside(doc: FieldDoc, kind: type) -> list:
    """The ends of the numeric range of ``doc`` that belong to it, or the nearest values
    inside for an open end."""
    values = []
    for bound, is_open, towards in ((doc.low, doc.low_open, 1), (doc.high, doc.high_open, -1)):
        if isinstance(bound, int | float):
            if kind is int:
                values.append(int(bound))
            else:
                values.append(math.nextafter(bound, towards * math.inf) if is_open else bound)
    return values


def _kind(field: dataclasses.Field) -> type:
    """int or float: the type of a numeric field's values, read from its annotation
    (``"tuple[int, ...] | None"`` is int)."""
    return int if re.search(r"\bint\b", str(field.type)) else float


def _defense_reading(field: str) -> list[str]:
    """``--defense`` naming a defense that reads the DefenseSpec ``field``."""
    name = next(name for name, reads in DefenseSpec.READS.items() if field in reads)
    return ["--defense", name]


OUTSIDE = [
    pytest.param(
        command,
        action.option_strings[-1],
        value,
        _defense_reading(field.name) if config is DefenseSpec else [],
        id=f"{command} {action.option_strings[-1]} {value!r}",
    )
    for command, config, field, doc, action in OPTIONS
    if doc.allowed() is None
    for value in _outside(doc, _kind(field))
]


def test_every_bounded_option_is_probed():
    assert len(OUTSIDE) >= 100


@pytest.mark.parametrize(("command", "flag", "value", "context"), OUTSIDE)
def test_a_value_just_outside_the_range_exits_2_naming_the_option(
    command, flag, value, context, monkeypatch, capsys
):
    module = importlib.import_module(f"pruneleak.sims.cli.{command}")

    def build_only(args) -> int:
        module.config_from_args(args)  # where the configuration checks the range
        return 0

    monkeypatch.setattr(module, "run", build_only)
    with pytest.raises(SystemExit) as info:
        main([command, *context, flag, repr(value)])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"pruneleak {command}: error: ") and flag in last, last


#: Other fields a value needs (the configuration checks them together).
TOGETHER = {
    (DemoConfig, "pruning"): {"leakage_rates": ()},  # the leakage part prunes at random
    (TrainConfig, "num_clients"): {"fed": FedConfig(clients_per_round=1)},
    (TrainConfig, "readjust_every"): {"pruning": "feddst"},
}


def _documented_fields():
    for config in DOCUMENTED:
        for field in dataclasses.fields(config):
            if DOC in field.metadata:
                yield config, field, field.metadata[DOC]


@pytest.mark.parametrize(
    ("config", "field", "doc"),
    [
        pytest.param(config, field, doc, id=f"{config.__name__}.{field.name}")
        for config, field, doc in _documented_fields()
    ],
)
def test_the_configuration_accepts_the_documented_range_and_choices(config, field, doc):
    together = dict(TOGETHER.get((config, field.name), {}))
    if config is DefenseSpec and field.name != "name":
        together["name"] = _defense_reading(field.name)[1]
    values = doc.allowed() or _inside(doc, _kind(field))
    assert values or (doc.low is None and doc.high is None), field.name
    for value in values:
        given = (value,) if str(field.type).startswith("tuple") else value
        config(**{**together, field.name: given})


def test_a_default_of_none_needs_its_meaning():
    @dataclasses.dataclass(frozen=True)
    class Settings:
        limit: int | None = documented(None, "the limit", low=1)

    with pytest.raises(ValueError, match="unset"):
        add_config_options(argparse.ArgumentParser(), Settings, [ConfigOption("--limit", "limit")])
