"""Error messages that name the command-line option a refused value came from.

The library's configurations refuse a value naming their own parameter ("The
'noise_stds' parameter of LeakageConfig must be in [0, 1000]..."), which is right for a
caller of the API and unhelpful on the command line, where the user typed ``--noise``. A
command declares which option sets which field of which configuration
(:func:`declare_options`; the options built from a configuration's fields are declared as
they are added, :mod:`sims.cli.config_options`); :func:`name_options` rewrites such a
message to start from the option ("The --noise option ('noise_stds' of LeakageConfig)
must be ..."), keeping the parameter's name for whoever reads the API documentation.
Parameters of other functions (an attack's own ``lr``) are left as they are: only the
declared configurations are rewritten, so an option is never blamed for a value it did
not set.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping

_PARAMETER = re.compile(r"The '(?P<field>[\w.]+)' parameter of (?P<owner>\w+)")
_QUOTED = re.compile(r"'(?P<field>\w+)'")


def declare_options(
    parser: argparse.ArgumentParser,
    owners: Mapping[str, Mapping[str, str]],
    *,
    bare: str | None = None,
) -> None:
    """Record on ``parser`` that option destination ``dest`` sets field ``owners[owner][dest]``
    of configuration ``owner`` (a class or function name, as its messages write it).

    Each call adds to what earlier calls declared (:mod:`sims.cli.config_options` declares
    each option it adds). ``parser`` may be an argument group, which shares its parser's
    options and defaults. ``bare`` names the owner whose fields are also
    rewritten where a message quotes them alone (``'lr'``): the command's own
    configuration, whose errors may name several of its fields at once ("lower 'lr' or
    'max_grad_norm'"). Call it after the options are added: each ``dest`` must be one of
    them (KeyError).
    """
    # argparse lists a parser's options (its groups' included) only in ``_actions``.
    option = {
        action.dest: max(action.option_strings, key=len)
        for action in parser._actions
        if action.option_strings
    }
    fields = dict(parser.get_default("option_of_field") or {})
    for owner, dests in owners.items():
        fields[owner] = {**fields.get(owner, {}), **{f: option[d] for d, f in dests.items()}}
    parser.set_defaults(option_of_field=fields)
    if bare is not None:
        parser.set_defaults(bare_option_owner=bare)


def name_options(message: str, args: argparse.Namespace) -> str:
    """``message`` with each declared "The 'field' parameter of Owner" written as
    "The --option option ('field' of Owner)", and each other quoted field of the ``bare``
    owner as "--option"; undeclared parameters are left as written."""
    fields = getattr(args, "option_of_field", {})
    bare = fields.get(getattr(args, "bare_option_owner", None), {})

    def rename(match: re.Match) -> str:
        option = fields.get(match["owner"], {}).get(match["field"])
        if option is None:
            return match[0]
        return f"The {option} option ('{match['field']}' of {match['owner']})"

    def rename_bare(match: re.Match) -> str:
        option = bare.get(match["field"])
        return match[0] if option is None else option

    pieces, at = [], 0
    for match in _PARAMETER.finditer(message):
        pieces += [_QUOTED.sub(rename_bare, message[at : match.start()]), rename(match)]
        at = match.end()
    pieces.append(_QUOTED.sub(rename_bare, message[at:]))
    return "".join(pieces)
