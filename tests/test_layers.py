"""The layers of ARCHITECTURE.md, read from the import statements of every module.

``bounds`` never imports torch, ``estimators`` or ``sims``; ``estimators`` never imports
``sims``; nothing outside ``sims/cli`` imports the command line; and library code
(``bounds``, ``estimators``, ``sims`` but its command line) changes nothing process-wide:
thread counts, global seeds and the C allocator (through ``ctypes``) are touched only by
the opt-in context managers of ``sims/core/runtime.py``. One exception: the global torch
seed may be set inside a ``with torch.random.fork_rng(...)`` block, which restores the
generator on exit (``estimators`` seeds a network's initialisation so, since it may not
import ``sims.core.runtime``). The scan reads the syntax tree (AST), so a name in a
comment or docstring does not count and an alias does not hide a call.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ("bounds", "estimators", "sims")
COMMAND_LINE = "sims/cli"
# `python -m pruneleak` (the installed package's source lives in sims/_toplevel/): the
# command line too.
COMMAND_LINE_ENTRY = "sims/_toplevel/pruneleak/__main__.py"
RUNTIME = "sims/core/runtime.py"
# Packages each layer must not import (ARCHITECTURE.md, "Layers and the direction of imports").
FORBIDDEN_IMPORTS = {"bounds": ("torch", "estimators", "sims"), "estimators": ("sims",)}
# Calls that change the whole process: allowed in RUNTIME (inside its context managers)
# and in the command line, which opts into them.
PROCESS_WIDE_CALLS = frozenset(
    {
        "torch.set_num_threads",
        "torch.set_num_interop_threads",
        "torch.manual_seed",
        "torch.random.manual_seed",
        "torch.cuda.manual_seed",
        "torch.cuda.manual_seed_all",
        "numpy.random.seed",
        "random.seed",
    }
)
# Seeding calls that are harmless inside ``with FORKED_RNG(...)``: the state is restored.
SEEDING_CALLS = frozenset(name for name in PROCESS_WIDE_CALLS if name.endswith("manual_seed"))
FORKED_RNG = "torch.random.fork_rng"


def _module_name(relative: Path) -> str:
    parts = relative.with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package(relative: Path) -> str:
    """The package a relative import of this file (module or ``__init__``) starts from."""
    return ".".join(relative.with_suffix("").parts[:-1])


def _folder_name(module: str) -> str:
    """``module`` named by the repository's folders: ``pruneleak.sims.cli`` (the installed
    name, ``pyproject.toml``'s package-dir) is ``sims.cli`` here."""
    for layer in LIBRARY:
        if _within(module, f"pruneleak.{layer}"):
            return module.removeprefix("pruneleak.")
    return module


def _imports(tree: ast.Module, package: str) -> tuple[dict[str, str], list[tuple[int, str]]]:
    """``(aliases, imported)``: local name -> dotted name, and (line, module) per import,
    modules named by the repository's folders (:func:`_folder_name`)."""
    aliases: dict[str, str] = {}
    imported: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = _folder_name(alias.name)
                imported.append((node.lineno, name))
                if alias.asname:
                    aliases[alias.asname] = name
                else:
                    top = alias.name.split(".")[0]
                    aliases[top] = top
        elif isinstance(node, ast.ImportFrom):
            base = _folder_name(node.module or "")
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            imported.append((node.lineno, base))
            for alias in node.names:
                imported.append((node.lineno, f"{base}.{alias.name}"))
                aliases[alias.asname or alias.name] = f"{base}.{alias.name}"
    return aliases, imported


def _dotted(node: ast.expr, aliases: dict[str, str]) -> str | None:
    """``torch.cuda.manual_seed`` for a chain of attributes on an imported name, else None."""
    attributes = []
    while isinstance(node, ast.Attribute):
        attributes.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases:
        return None
    return ".".join([aliases[node.id], *reversed(attributes)])


def _inside_forked_rng(tree: ast.Module, aliases: dict[str, str]) -> set[int]:
    """``id`` of every node in the body of a ``with torch.random.fork_rng(...)`` block."""
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.With) and any(
            isinstance(item.context_expr, ast.Call)
            and _dotted(item.context_expr.func, aliases) == FORKED_RNG
            for item in node.items
        ):
            inside.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    return inside


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def layer_violations(root: Path) -> tuple[list[str], int]:
    """Every breach of the layers under ``root`` as ``path:line: what``, and the modules read."""
    violations = []
    modules = 0
    for layer in LIBRARY:
        for path in sorted((root / layer).rglob("*.py")):
            relative = path.relative_to(root)
            where = relative.as_posix()
            modules += 1
            tree = ast.parse(path.read_text(), filename=where)
            aliases, imported = _imports(tree, _package(relative))
            in_cli = (
                _within(_module_name(relative), COMMAND_LINE.replace("/", "."))
                or where == COMMAND_LINE_ENTRY
            )
            for line, module in imported:
                for forbidden in FORBIDDEN_IMPORTS.get(layer, ()):
                    if _within(module, forbidden):
                        violations.append(f"{where}:{line}: {layer} imports {module}")
                if not in_cli and _within(module, "sims.cli"):
                    violations.append(f"{where}:{line}: library code imports {module}")
                if not in_cli and where != RUNTIME and _within(module, "ctypes"):
                    violations.append(f"{where}:{line}: imports ctypes")
            if in_cli or where == RUNTIME:
                continue
            forked = _inside_forked_rng(tree, aliases)
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call):
                    continue
                name = _dotted(node.func, aliases)
                if name in PROCESS_WIDE_CALLS and not (
                    name in SEEDING_CALLS and id(node) in forked
                ):
                    violations.append(f"{where}:{node.lineno}: calls {name}")
    return sorted(set(violations)), modules


def test_every_library_module_keeps_to_its_layer():
    violations, modules = layer_violations(ROOT)
    assert violations == []
    assert modules > 50  # every package was read (66 modules when this was written)


PLANTED = {
    "bounds/leak.py": "import math\nimport torch\n",
    "bounds/relative.py": "from ..estimators import nmi\n",
    "bounds/sub/__init__.py": "from sims.store import results\n",
    "estimators/uses_sims.py": "from sims.models import conv_net\n",
    "estimators/fine.py": "import torch\nfrom bounds import validation\n",
    "sims/threads.py": "import torch as t\n\nt.set_num_threads(4)\n",
    "sims/seed.py": "from torch import manual_seed\n\nmanual_seed(0)\n",
    "sims/generator.py": "import torch\n\ng = torch.Generator().manual_seed(0)\n",
    "sims/forked.py": (
        "import torch\n\nwith torch.random.fork_rng(devices=[]):\n    torch.manual_seed(0)\n"
        "    torch.set_num_threads(2)\ntorch.cuda.manual_seed_all(1)\n"
    ),
    "sims/malloc.py": "import ctypes\n",
    "sims/upward.py": "from sims.cli import main\n",
    "sims/installed_name.py": "from pruneleak.sims.cli import main\n",
    "sims/core/runtime.py": "import ctypes\nimport torch\n\ntorch.manual_seed(0)\n",
    "sims/cli/tune.py": "import torch\n\ntorch.set_num_threads(2)\n",
}


def test_planted_breaches_are_found_and_allowed_uses_are_not(tmp_path):
    for name, source in PLANTED.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    violations, modules = layer_violations(tmp_path)
    assert modules == len(PLANTED)
    assert violations == [
        "bounds/leak.py:2: bounds imports torch",
        "bounds/relative.py:1: bounds imports estimators",
        "bounds/relative.py:1: bounds imports estimators.nmi",
        "bounds/sub/__init__.py:1: bounds imports sims.store",
        "bounds/sub/__init__.py:1: bounds imports sims.store.results",
        "estimators/uses_sims.py:1: estimators imports sims.models",
        "estimators/uses_sims.py:1: estimators imports sims.models.conv_net",
        "sims/forked.py:5: calls torch.set_num_threads",
        "sims/forked.py:6: calls torch.cuda.manual_seed_all",
        "sims/installed_name.py:1: library code imports sims.cli",
        "sims/installed_name.py:1: library code imports sims.cli.main",
        "sims/malloc.py:1: imports ctypes",
        "sims/seed.py:3: calls torch.manual_seed",
        "sims/threads.py:3: calls torch.set_num_threads",
        "sims/upward.py:1: library code imports sims.cli",
        "sims/upward.py:1: library code imports sims.cli.main",
    ]
