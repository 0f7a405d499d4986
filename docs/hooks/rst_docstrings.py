"""Griffe extension: the docstrings' reStructuredText, rendered by a Markdown site.

The docstrings of this repository are written for Sphinx: ``:math:`...``` roles and
``.. math::`` blocks, ``:func:``/``:class:``/``:mod:`` cross-references, ``::`` literal
blocks, doctest blocks and ``#:`` comments that document attributes. mkdocstrings renders
docstrings as Markdown, so once the whole package is loaded this extension rewrites each
docstring into the Markdown equivalent:

* ``:math:`x``` -> ``\\(x\\)`` and ``.. math::`` -> a ``$$`` block (``pymdownx.arithmatex``);
* a cross-reference role -> an autorefs link ``[`name`][pruneleak.full.path]`` when the
  target is a documented object of pruneleak; a target outside pruneleak (the standard
  library, torch, numpy) or a private object of pruneleak -> inline code. A target that
  names pruneleak (``sims.x``, ``bounds.y``) or no module at all and resolves to nothing
  stays a link to that path, which ``mkdocs build --strict`` reports as a broken
  reference: a renamed function fails the build instead of leaving a dead name;
* a ``::`` literal block and a doctest block (``>>>``) -> a fenced code block;
* ``#:`` comment lines above an attribute that has no docstring -> its docstring.

It also renders each object once, where it is defined: a name that a package re-exports
(an import listed in ``__all__``) is hidden from the package's block, and links to the
re-exported path land on the definition (mkdocstrings registers every alias of an object).
A re-export from a private module, whose definition the reference leaves out, stays.
"""

from __future__ import annotations

import builtins
import importlib.util
import itertools
import re
from typing import Any

import griffe

# The top-level folders that pyproject.toml maps under pruneleak (its package-dir): the
# docstrings name modules as ``sims.fl.client``, meaning ``pruneleak.sims.fl.client``.
PACKAGE = "pruneleak"
SUBPACKAGES = ("bounds", "estimators", "sims")

_ROLE = re.compile(r":(?:func|class|mod|meth|attr|data|exc|obj):`(?P<body>[^`]+)`")
_MATH_ROLE = re.compile(r":math:`(?P<tex>[^`]+)`")
_TITLED = re.compile(r"(?P<title>.*?)\s*<(?P<target>[^>]+)>")
_FENCE = re.compile(r"\s*(```|~~~)")
_DOCTEST = re.compile(r"\s*>>>( |$)")
_MATH_DIRECTIVE = re.compile(r"(?P<indent>\s*)\.\. math::\s*(?P<inline>.*)$")
_DIRECTIVE_OPTION = re.compile(r"\s*:[\w-]+:")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _block_end(lines: list[str], start: int, indent: int) -> int:
    """Index after the block that starts at ``start``: blank lines and lines indented deeper
    than ``indent``, without the trailing blank lines."""
    end = start
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > indent):
        end += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return end


def _dedented(lines: list[str], prefix: str) -> list[str]:
    depth = min(_indent(line) for line in lines if line.strip())
    return [prefix + line[depth:] if line.strip() else "" for line in lines]


def _blocks(text: str) -> list[tuple[str, bool]]:
    """The docstring's lines, its RST blocks rewritten as Markdown ones, each paired with
    whether it is code (a fence's or a formula's line, where no inline markup applies)."""
    lines = text.splitlines()
    out: list[tuple[str, bool]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if _FENCE.match(line):  # an existing Markdown fence, copied as it is
            close = next(
                (j for j in range(i + 1, len(lines)) if lines[j].strip() == line.strip()[:3]),
                len(lines) - 1,
            )
            out += [(code, True) for code in lines[i : close + 1]]
            i = close + 1
            continue
        if match := _MATH_DIRECTIVE.match(line):
            prefix = match["indent"]
            end = _block_end(lines, i + 1, len(prefix))
            # no blank line inside the formula, where TeX and arithmatex allow none
            body = [row for row in lines[i + 1 : end] if row.strip()]
            body = [row for row in body if not _DIRECTIVE_OPTION.match(row)]
            formula = ([prefix + match["inline"]] if match["inline"] else []) + (
                _dedented(body, prefix) if body else []
            )
            out += [(row, True) for row in [prefix + "$$", *formula, prefix + "$$"]]
            i = end
            continue
        if line.rstrip().endswith("::"):
            start = i + 1
            while start < len(lines) and not lines[start].strip():
                start += 1
            if start < len(lines) and _indent(lines[start]) > _indent(line):
                prefix = line[: _indent(line)]
                lead = line.rstrip()[:-2]
                lead = lead.rstrip() if lead.endswith(" ") or not lead.strip() else lead + ":"
                end = _block_end(lines, start, _indent(line))
                if lead.strip():
                    out += [(lead, False), ("", False)]
                block = [prefix + "```", *_dedented(lines[start:end], prefix), prefix + "```"]
                out += [(row, True) for row in block]
                i = end
                continue
        if _DOCTEST.match(line):
            prefix = line[: _indent(line)]
            end = i
            while end < len(lines) and lines[end].strip() and _indent(lines[end]) >= len(prefix):
                end += 1
            session = [prefix + "```pycon", *_dedented(lines[i:end], prefix), prefix + "```"]
            out += [(row, True) for row in session]
            i = end
            continue
        out.append((line, False))
        i += 1
    return out


def _one_line(text: str) -> str:
    return re.sub(r"\s*\n\s*", " ", text)


def _lookup(collection: griffe.ModulesCollection, path: str) -> Any:
    try:
        return collection[path]
    except (KeyError, ValueError, griffe.AliasResolutionError, griffe.CyclicAliasError):
        return None


def is_rendered(obj: Any) -> bool:
    """Whether the reference renders ``obj``: a pruneleak object none of whose path's parts
    below ``pruneleak`` is private (a leading underscore)."""
    parts = obj.path.split(".")
    return parts[0] == PACKAGE and not any(part.startswith("_") for part in parts[1:])


def _resolve(name: str, obj: griffe.Object) -> Any:
    """``name`` looked up as Sphinx does: absolute, then from ``obj``'s scope outwards."""
    collection = obj.modules_collection
    first = name.split(".", 1)[0]
    if first == PACKAGE:
        return _lookup(collection, name)
    if first in SUBPACKAGES and (found := _lookup(collection, f"{PACKAGE}.{name}")):
        return found
    scope: Any = obj
    while scope is not None:
        if not (scope.is_function or scope.is_attribute):
            found = _lookup(collection, f"{scope.path}.{name}")
            if found is not None:
                return found
        scope = scope.parent
    return None


def _reference(body: str, obj: griffe.Object) -> str:
    """A cross-reference role's body as a link to the documented object, or as code."""
    titled = _TITLED.fullmatch(body)
    title, target = (titled["title"], titled["target"]) if titled else (None, body)
    short = target.lstrip("!").startswith("~")
    name = target.lstrip("!~.").removesuffix("()")
    text = f"`{title or (name.rsplit('.', 1)[-1] if short else name)}`"

    found = _resolve(name, obj)
    if found is not None:
        try:
            found = found.final_target if found.is_alias else found
        except (griffe.AliasResolutionError, griffe.CyclicAliasError):
            return text  # imported from outside pruneleak
        return f"[{text}][{found.path}]" if is_rendered(found) else text
    first = name.split(".", 1)[0]
    if first in SUBPACKAGES:
        return f"[{text}][{PACKAGE}.{name}]"  # broken: the strict build reports it
    if first == PACKAGE or not (hasattr(builtins, first) or importlib.util.find_spec(first)):
        return f"[{text}][{name}]"  # broken too
    return text  # the standard library or a third-party package


def _inline(text: str, obj: griffe.Object) -> str:
    """The roles of ``text`` rewritten; a role's line breaks become spaces."""
    text = _MATH_ROLE.sub(lambda m: rf"\({_one_line(m['tex'])}\)", text)
    return _ROLE.sub(lambda m: _reference(_one_line(m["body"]), obj), text)


def markdown(text: str, obj: griffe.Object) -> str:
    """``text`` (a docstring of ``obj``, whose scope resolves its references) with its RST
    rewritten as Markdown."""
    runs = itertools.groupby(_blocks(text), key=lambda row: row[1])
    return "\n".join(
        "\n".join(lines) if code else _inline("\n".join(lines), obj)
        for code, lines in ((code, [line for line, _ in rows]) for code, rows in runs)
    )


def _attach_comment(attr: griffe.Object, loader: griffe.GriffeLoader) -> None:
    """Sphinx's ``#:`` comment lines right above an attribute, as its docstring."""
    lines = attr.module.lines
    row = attr.lineno - 2
    comment: list[str] = []
    while row >= 0 and lines[row].lstrip().startswith("#:"):
        comment.insert(0, lines[row].lstrip()[2:].removeprefix(" "))
        row -= 1
    if comment:
        attr.docstring = griffe.Docstring(
            "\n".join(comment),
            lineno=row + 2,
            endlineno=attr.lineno - 1,
            parent=attr,
            parser=loader.docstring_parser,
            parser_options=loader.docstring_options,
        )


class RstDocstrings(griffe.Extension):
    """Rewrites every docstring of the loaded ``pruneleak`` from Sphinx's RST to Markdown."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if pkg.name == PACKAGE:
            _rewrite(pkg, loader)


def _rewrite(obj: griffe.Object, loader: griffe.GriffeLoader) -> None:
    if obj.is_attribute and obj.docstring is None:
        _attach_comment(obj, loader)
    if obj.docstring is not None:
        obj.docstring.value = markdown(obj.docstring.value, obj)
    for member in obj.members.values():
        if not member.is_alias:
            _rewrite(member, loader)
        elif obj.is_module and member.is_imported and _target_rendered(member):
            member.public = False  # shown where it is defined


def _target_rendered(alias: griffe.Alias) -> bool:
    try:
        return is_rendered(alias.final_target)
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return False  # imported from outside pruneleak
