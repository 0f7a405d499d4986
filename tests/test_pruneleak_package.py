"""The ``pruneleak`` import name (issue 31, scope 4): version, ``python -m pruneleak``,
and the public entry points imported on first use only.

Its source is ``sims/_toplevel/pruneleak`` (installed as ``pruneleak``); these tests put
``sims/_toplevel`` on the path, as an install does, so that they hold for an editable
install made before the package existed too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOPLEVEL = ROOT / "sims" / "_toplevel"


@pytest.fixture
def pruneleak(monkeypatch):
    """A fresh import of ``pruneleak`` from the checkout."""
    monkeypatch.syspath_prepend(str(TOPLEVEL))
    monkeypatch.delitem(sys.modules, "pruneleak", raising=False)
    import pruneleak

    yield pruneleak
    sys.modules.pop("pruneleak", None)


def _python(*args: str) -> subprocess.CompletedProcess:
    path = os.pathsep.join([str(TOPLEVEL), str(ROOT)])
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_version_is_the_installed_distributions(pruneleak):
    from importlib.metadata import version

    assert pruneleak.__version__ == version("pruneleak")


def test_audit_and_its_result_are_imported_from_sims_audit_on_first_use(pruneleak, monkeypatch):
    fake = types.ModuleType("pruneleak.sims.audit")
    fake.audit = lambda *args, **kwargs: "audited"
    fake.AuditResult = type("AuditResult", (), {})
    monkeypatch.setitem(sys.modules, "pruneleak.sims.audit", fake)
    assert pruneleak.audit() == "audited"
    assert pruneleak.AuditResult is fake.AuditResult
    assert {"audit", "AuditResult", "__version__"} <= set(dir(pruneleak))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        pruneleak.nothing  # noqa: B018


def test_import_pruneleak_imports_neither_the_audit_nor_torch():
    run = _python(
        "-c",
        "import sys, pruneleak; print(pruneleak.__file__); "
        "names = ('pruneleak.sims.audit', 'torch', 'pruneleak.sims'); "
        "print([m for m in names if m in sys.modules])",
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [str(TOPLEVEL / "pruneleak/__init__.py"), "[]"]


def test_python_m_pruneleak_runs_the_command_line():
    version = _python("-m", "pruneleak", "--version")
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith("pruneleak ")
    usage = _python("-m", "pruneleak")
    assert usage.returncode == 2
    assert "error: choose a COMMAND" in usage.stderr
