"""The API reference (docs/reference/) documents every public name of ``pruneleak.bounds``,
``pruneleak.estimators`` and ``pruneleak.sims``, and the docstrings' RST becomes Markdown.

Public, precisely (docs/reference/index.md states the same rule to readers):

* a module is public when no part of its dotted path below ``pruneleak`` starts with an
  underscore (``pruneleak.bounds.leakage._releases`` is not); a public module is itself a
  public name;
* a public module that defines ``__all__`` has exactly those public names; one without
  has every name it binds at module level by a definition or an assignment (not an
  import) that does not start with an underscore, except ``logger``, its handle in the
  logging hierarchy;
* a name of ``__all__`` that the module binds only lazily, in a module ``__getattr__``
  (``pruneleak.sims.audit.AuditingStrategy``), is the object of that name defined in one
  of the package's public submodules.

A name is documented when a ``::: identifier`` block of a page under docs/reference/
renders the object it names: the block of its module, or, for a re-export (an import
listed in ``__all__``), the block of the module that defines it, where the re-exported path
links (a re-export from a private module is rendered in the block of the re-exporter).
A block's rendered members are selected as mkdocstrings selects them
(``do_filter_objects`` with mkdocs.yml's options and the block's own), on griffe's static
reading of the sources with the site's griffe extension.
"""

from __future__ import annotations

import importlib.util
import re
import textwrap
from pathlib import Path

import griffe
import pytest
import yaml
from mkdocstrings_handlers.python import do_filter_objects

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SUBPACKAGES = ("bounds", "estimators", "sims")
BLOCK = re.compile(r"^::: (?P<identifier>\S+)\n(?P<options>(?:(?: {4}.*)?\n)*)", re.MULTILINE)


def _hook(name: str):
    """A module of docs/hooks/, which are files of the site rather than of the package."""
    spec = importlib.util.spec_from_file_location(
        f"docs_hooks_{name}", DOCS / "hooks" / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _python_options() -> dict:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    plugin = next(p["mkdocstrings"] for p in config["plugins"] if isinstance(p, dict))
    return plugin["handlers"]["python"]["options"]


@pytest.fixture(scope="module")
def package(tmp_path_factory) -> griffe.Module:
    """``pruneleak`` as the site's build reads it."""
    sources = _hook("api_sources").link_tree(ROOT, tmp_path_factory.mktemp("src"))
    paths = [str(ROOT / spec) for spec in _python_options()["extensions"]]
    loader = griffe.GriffeLoader(
        search_paths=[str(sources)], extensions=griffe.load_extensions(*paths)
    )
    package = loader.load("pruneleak")
    loader.resolve_aliases(implicit=False, external=False)
    return package


def _exists(package: griffe.Module, path: str) -> bool:
    try:
        package.modules_collection[path]
    except (KeyError, griffe.AliasResolutionError):
        return False
    return True


def _is_module(obj) -> bool:
    return not obj.is_alias and obj.is_module


def _public_modules(module: griffe.Module):
    yield module
    for member in module.members.values():
        if _is_module(member) and not member.name.startswith("_"):
            yield from _public_modules(member)


def _lazy_export(module: griffe.Module, name: str):
    """The object named ``name`` defined by one of ``module``'s public submodules."""
    for submodule in _public_modules(module):
        member = submodule.members.get(name)
        if submodule is not module and member is not None and not member.is_alias:
            return member
    return None


def public_names(package: griffe.Module) -> dict[str, str]:
    """Every public name (the module docstring's rule) -> the path of the object it names."""
    names = {}
    for name in SUBPACKAGES:
        for module in _public_modules(package[name]):
            names[module.path] = module.path
            if module.exports is not None:
                for export in map(str, module.exports):
                    member = module.members.get(export) or _lazy_export(module, export)
                    target = (
                        member.final_target if member is not None and member.is_alias else member
                    )
                    names[f"{module.path}.{export}"] = target.path if target else "(not found)"
                continue
            for member in module.members.values():
                defined = not (member.is_alias or _is_module(member))
                if defined and not member.name.startswith("_") and member.name != "logger":
                    names[member.path] = member.path
    return names


def _filters(options: dict) -> list[tuple[re.Pattern, bool]]:
    return [(re.compile(f.removeprefix("!")), f.startswith("!")) for f in options["filters"]]


def documented_paths(package: griffe.Module) -> set[str]:
    """The paths of the objects that the ``:::`` blocks of docs/reference/ render."""
    global_options = _python_options()
    collection = package.modules_collection
    paths = set()
    for page in sorted((DOCS / "reference").rglob("*.md")):
        for block in BLOCK.finditer(page.read_text()):
            options = yaml.safe_load(textwrap.dedent(block["options"])) or {}
            options = {**global_options, **options.get("options", {})}
            obj = collection[block["identifier"]]
            paths.add(obj.path)
            if not (obj.is_module or obj.is_class):
                continue
            members = do_filter_objects(
                obj.members,
                filters=_filters(options),
                members_list=options.get("members"),
                keep_no_docstrings=options["show_if_no_docstring"],
            )
            paths.update(
                member.path
                for member in members
                # the templates' own rule for imports, and modules only as submodules
                if (not member.is_imported or member.is_public)
                and (not _is_module(member) or options.get("show_submodules"))
            )
    return paths


def test_reference_documents_every_public_name(package):
    names = public_names(package)
    documented = documented_paths(package)
    missing = sorted(
        f"{name} ({path})"
        for name, path in names.items()
        if name not in documented and path not in documented
    )
    assert not missing, (
        f"{len(missing)} of {len(names)} public names are not in docs/reference/ (add a "
        "'::: module' block to the page of its package):\n" + "\n".join(missing)
    )


def test_every_reference_block_names_an_object(package):
    """A block whose identifier is gone fails the build too, but only in the e2e lane."""
    unknown = [
        f"{page.relative_to(DOCS)}: {block['identifier']}"
        for page in sorted((DOCS / "reference").rglob("*.md"))
        for block in BLOCK.finditer(page.read_text())
        if not _exists(package, block["identifier"])
    ]
    assert not unknown


@pytest.mark.parametrize(
    ("rst", "markdown"),
    [
        (r"gives :math:`\log_2 M` bits", r"gives \(\log_2 M\) bits"),
        (
            ":math:`a +\n    b` split over two lines",
            r"\(a + b\) split over two lines",
        ),
        (
            ".. math:: I \\le 1\n\nafter",
            "$$\nI \\le 1\n$$\n\nafter",
        ),
        (
            "text\n\n.. math::\n\n    x = y\n    + z\n\nafter",
            "text\n\n$$\nx = y\n+ z\n$$\n\nafter",
        ),
        (
            "Example::\n\n    pruneleak demo\n\nafter",
            "Example:\n\n```\npruneleak demo\n```\n\nafter",
        ),
        ("Example ::\n\n    code", "Example\n\n```\ncode\n```"),
        (">>> 1 + 1\n2\n\nafter", "```pycon\n>>> 1 + 1\n2\n```\n\nafter"),
        ("```\n:math:`x` in a fence\n```", "```\n:math:`x` in a fence\n```"),
    ],
)
def test_rst_blocks_and_math_become_markdown(package, rst, markdown):
    rewrite = _hook("rst_docstrings").markdown
    assert rewrite(rst, package["sims.store.results"]) == markdown


@pytest.mark.parametrize(
    ("role", "link"),
    [
        # absolute, in the docstrings' spelling without the pruneleak prefix
        (
            ":func:`sims.sweep.runner.run_job`",
            "[`sims.sweep.runner.run_job`][{P}.sims.sweep.runner.run_job]",
        ),
        (":func:`~sims.sweep.runner.run_job`", "[`run_job`][{P}.sims.sweep.runner.run_job]"),
        # a re-export links to its definition
        (":func:`~sims.sweep.run_job`", "[`run_job`][{P}.sims.sweep.runner.run_job]"),
        # relative to the docstring's module, and a member of a class there
        (":class:`ResultStore`", "[`ResultStore`][{P}.sims.store.results.ResultStore]"),
        (
            ":meth:`ResultStore.append`",
            "[`ResultStore.append`][{P}.sims.store.results.ResultStore.append]",
        ),
        (":mod:`.records`", "[`records`][{P}.sims.store.records]"),
        # outside pruneleak, or private: code, not a link
        (":func:`numpy.linalg.eigh`", "`numpy.linalg.eigh`"),
        (":class:`float`", "`float`"),
        (":func:`~pruneleak.sims.store.results._end_cleanly`", "`_end_cleanly`"),
        # nothing: a link all the same, which the strict build reports as broken
        (
            ":func:`sims.store.results.no_such`",
            "[`sims.store.results.no_such`][{P}.sims.store.results.no_such]",
        ),
        (":class:`NoSuchThing`", "[`NoSuchThing`][NoSuchThing]"),
    ],
)
def test_cross_reference_roles_become_links(package, role, link):
    rewrite = _hook("rst_docstrings").markdown
    assert rewrite(f"see {role}.", package["sims.store.results"]) == link.join(
        ["see ", "."]
    ).format(P="pruneleak")
