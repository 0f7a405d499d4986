"""The installed package stands on its own: no path into a checkout, configs included.

A non-editable install holds one top-level name, ``pruneleak``, with ``pruneleak.bounds``,
``pruneleak.estimators`` and ``pruneleak.sims`` mapped from the repository's folders (and
the package data of ``pyproject.toml``); no generic name such as ``bounds`` is installed.
Code that reaches ``benchmarks/``, ``notebooks/`` or
``paper_figs/`` through ``Path(__file__).parents[...]`` works in a checkout and breaks
once installed, and a sweep config left out of the package data is missing only there.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bounds", "estimators", "sims")
# What a module may not name in a string: folders of a checkout, or a step out of it.
CHECKOUT_FOLDERS = ("paper_figs", "benchmarks/", "../")


def _is_docstring(node: ast.Constant, parents: dict[int, ast.AST]) -> bool:
    statement = parents.get(id(node))
    owner = parents.get(id(statement))
    return (
        isinstance(statement, ast.Expr)
        and isinstance(owner, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and owner.body[0] is statement
    )


def paths_out_of_the_package(root: Path) -> list[str]:
    """``path:line: what`` for each module of ``root/sims`` that looks outside its package:
    ``.parents[...]``, ``.parent.parent``, or a string naming a checkout folder (docstrings
    aside)."""
    found = []
    for path in sorted((root / "sims").rglob("*.py")):
        where = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(), filename=where)
        parents = {
            id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.value, ast.Attribute)
                and node.value.attr == "parents"
            ):
                found.append(f"{where}:{node.lineno}: .parents[...]")
            elif (
                isinstance(node, ast.Attribute)
                and node.attr == "parent"
                and isinstance(node.value, ast.Attribute)
                and node.value.attr == "parent"
            ):
                found.append(f"{where}:{node.lineno}: .parent.parent")
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and not _is_docstring(node, parents)
            ):
                found.extend(
                    f"{where}:{node.lineno}: names {folder}"
                    for folder in CHECKOUT_FOLDERS
                    if folder in node.value
                )
    return found


def test_no_module_under_sims_builds_paths_outside_its_package():
    assert paths_out_of_the_package(ROOT) == []


def test_a_planted_path_into_the_checkout_is_found(tmp_path):
    planted = tmp_path / "sims" / "plots" / "figures.py"
    planted.parent.mkdir(parents=True)
    planted.write_text(
        '"""Figures go to paper_figs/ (a docstring may say so)."""\n'
        "from pathlib import Path\n"
        "ROOT = Path(__file__).resolve().parents[2]\n"
        "UP = Path(__file__).parent.parent\n"
        'FIGS = Path("paper_figs")\n'
        'CONFIGS = Path("../benchmarks/sweeps")\n'
        'OWN = Path(__file__).parent / "configs"\n'
    )
    assert paths_out_of_the_package(tmp_path) == [
        "sims/plots/figures.py:3: .parents[...]",
        "sims/plots/figures.py:4: .parent.parent",
        "sims/plots/figures.py:5: names paper_figs",
        "sims/plots/figures.py:6: names benchmarks/",
        "sims/plots/figures.py:6: names ../",
    ]


@pytest.mark.timeout(300)
def test_a_non_editable_install_works_outside_the_checkout(tmp_path):
    # Build from a copy holding only what the build reads, so that setuptools' build/
    # and *.egg-info land in tmp_path, not in the checkout.
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for name in ("LICENSE",):
        shutil.copy(ROOT / name, source / name)
    for package in PACKAGES:
        shutil.copytree(
            ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    site = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-compile"]
    subprocess.run(
        [*pip, "--no-build-isolation", "--target", str(site), str(source)],
        check=True,
        capture_output=True,
    )
    configs = sorted(p.name for p in (ROOT / "sims/sweep/configs").glob("*.toml"))
    assert "quick_digits.toml" in configs
    installed = site / "pruneleak/sims/sweep/configs"
    assert sorted(p.name for p in installed.glob("*.toml")) == configs
    # One import name, from sims/_toplevel/pruneleak, over the three folders; nothing
    # else at the top of site-packages (no generic bounds / sims), every package typed.
    assert (site / "pruneleak/__main__.py").is_file()
    top = {p.name for p in site.iterdir() if p.suffix not in (".dist-info", ".egg-info")}
    top.discard("bin")  # the console script
    assert top == {"pruneleak"}, top
    assert not (site / "pruneleak/sims/_toplevel").exists()
    assert all((site / "pruneleak" / name / "py.typed").is_file() for name in PACKAGES)
    assert (site / "pruneleak/py.typed").is_file()

    # One interpreter (torch and sympy take seconds to import) runs the installed
    # command line twice from a folder outside the checkout.
    script = (
        "import importlib.util, sys, pruneleak.sims.cli as cli\n"
        "print(cli.__file__)\n"
        "print('generic names', [n for n in PACKAGES if importlib.util.find_spec(n)])\n"
        "print('verify exit', cli.main(['verify', '--claim', 'huang.A5']))\n"
        "try:\n"
        "    cli.main(['figures'])\n"
        "except SystemExit as stop:\n"
        "    print('figures exit', stop.code)\n"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run = subprocess.run(
        [sys.executable, "-c", f"PACKAGES = {PACKAGES!r}\n" + script],
        cwd=elsewhere,
        env={**os.environ, "PYTHONPATH": str(site)},  # the installed copy, not the checkout
        capture_output=True,
        text=True,
        timeout=240,
    )
    lines = run.stdout.splitlines()
    assert lines[0] == str(site / "pruneleak/sims/cli/__init__.py"), run.stderr
    assert lines[1] == "generic names []", lines
    assert "verify exit 0" in lines and "figures exit 2" in lines, run.stderr
    report = elsewhere / "pruneleak-out/verify/verification_report.md"
    assert "huang.A5" in report.read_text()
    assert run.stderr.startswith("pruneleak figures: error: no notebooks")
    assert run.stderr.count("\n") == 1 and "--notebooks DIR" in run.stderr
