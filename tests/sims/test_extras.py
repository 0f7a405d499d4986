"""Optional dependencies are named by their extra (issue 31, scope 5): a documented
command that needs one fails in one line naming ``pip install 'pruneleak[EXTRA]'``, exit
status 2, never "internal error"."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pruneleak.sims.cli import main
from pruneleak.sims.core.extras import EXTRAS, MissingExtraError, require

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


def _missing(monkeypatch, module: str) -> None:
    """``import module`` (and its submodules already imported) fails as if not installed."""
    for name in [m for m in sys.modules if m == module or m.startswith(f"{module}.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, module, None)


@pytest.mark.parametrize("module", sorted(EXTRAS))
def test_a_missing_module_names_its_extra_in_one_line(module, monkeypatch):
    _missing(monkeypatch, module)
    distribution, extra = EXTRAS[module]
    with pytest.raises(MissingExtraError) as raised:
        require(module, purpose="This path")
    message = str(raised.value)
    assert message.startswith(f"This path needs {distribution}, which cannot be imported")
    assert f"pip install 'pruneleak[{extra}]'" in message and "\n" not in message
    # what a library caller catches, and what the command line reports in one line
    assert isinstance(raised.value, ImportError) and isinstance(raised.value, ValueError)
    assert raised.value.name == module


@pytest.mark.parametrize("module", sorted(EXTRAS))
def test_every_extra_named_is_declared_with_its_distribution(module):
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    distribution, extra = EXTRAS[module]
    requirements = declared["optional-dependencies"][extra]
    assert any(r.startswith(distribution) for r in requirements), requirements
    assert not any(r.startswith(distribution) for r in declared["dependencies"])


def test_an_installed_module_is_returned():
    skimage = pytest.importorskip("skimage")  # in the test extra
    assert require("skimage", purpose="x") is skimage


def test_an_unknown_module_is_a_bug_of_the_caller():
    with pytest.raises(KeyError, match="'numpy' is not an optional dependency"):
        require("numpy", purpose="x")


@pytest.mark.parametrize("dataset", ["faces", "patches"])
def test_a_command_on_faces_without_scikit_image_names_the_faces_extra(
    dataset, monkeypatch, capsys, tmp_path
):
    _missing(monkeypatch, "skimage")
    with pytest.raises(SystemExit) as stop:
        main(["leakage", "--dataset", dataset, "--out", str(tmp_path)], commands=("leakage",))
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("pruneleak leakage: error: load_")
    assert "pip install 'pruneleak[faces]'" in err
