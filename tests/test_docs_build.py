"""The documentation site builds with every warning an error (``make docs``), and a
cross-reference to no object, in a page or in a docstring, fails that build."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[1]


def _build(config: Path, site: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config)]
    return subprocess.run(
        [*command, "--site-dir", str(site)], capture_output=True, text=True, timeout=600
    )


def test_the_site_builds_strictly(tmp_path):
    result = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert result.returncode == 0, result.stderr[-5000:]
    assert (tmp_path / "site" / "reference" / "sims" / "sweep" / "index.html").is_file()


@pytest.mark.parametrize(
    ("reference", "broken"),
    [
        (":func:`helper`", None),
        (":func:`sims.no_such_function`", "pruneleak.sims.no_such_function"),
        ("[`helper`][pruneleak.no_such_name]", "pruneleak.no_such_name"),
    ],
)
def test_a_reference_to_no_object_fails_the_build(tmp_path, reference, broken):
    """The site's configuration on a one-module ``pruneleak`` whose docstring holds
    ``reference``."""
    package = tmp_path / "src" / "pruneleak"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        f'"""Refers to {reference}."""\n\n\ndef helper():\n    """Does nothing."""\n'
    )
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Planted\n\n::: pruneleak\n")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    python = next(p["mkdocstrings"] for p in config["plugins"] if isinstance(p, dict))
    python = python["handlers"]["python"]
    python["paths"] = [str(tmp_path / "src")]
    python["options"]["extensions"] = [str(ROOT / e) for e in python["options"]["extensions"]]
    for key in ("hooks", "nav", "extra_javascript", "exclude_docs"):
        config.pop(key)
    config["docs_dir"] = str(tmp_path / "docs")
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))

    result = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    if broken is None:
        assert result.returncode == 0, result.stderr[-5000:]
    else:
        assert result.returncode != 0
        assert f"Could not find cross-reference target '{broken}'" in result.stderr
