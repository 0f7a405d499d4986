"""Every notebook runs end to end in quick mode, and is committed without outputs."""

import os
from pathlib import Path

import nbformat
import pytest

from pruneleak.sims.plots.figures import notebook_paths, run_notebook

pytestmark = pytest.mark.e2e

NOTEBOOKS = notebook_paths(Path(__file__).resolve().parents[1] / "notebooks")


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebook found under notebooks/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_committed_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    code_cells = [c for c in notebook.cells if c.cell_type == "code"]
    assert code_cells
    assert all(not c.outputs and c.execution_count is None for c in code_cells)
    assert "PRUNELEAK_SCALE" in code_cells[0].source, "first cell must read the scale"
    assert "current_scale()" in code_cells[0].source, "through current_scale, which checks it"


# The whole notebook is bounded, never one cell (a loaded CI host slows cells unevenly):
# 1800 s in quick mode, times $PRUNELEAK_TIMEOUT_SCALE on a slower host.
NOTEBOOK_TIMEOUT_S = 1800 * float(os.environ.get("PRUNELEAK_TIMEOUT_SCALE", "1"))


@pytest.mark.timeout(NOTEBOOK_TIMEOUT_S)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_in_quick_mode_and_writes_figures_where_asked(path, tmp_path, monkeypatch):
    # A folder relative to the caller's directory: the kernel runs in notebooks/, so
    # run_notebook must hand it over as an absolute path.
    monkeypatch.chdir(tmp_path)
    run_notebook(path, scale="quick", figure_dir="figures")
    written = sorted(p.name for p in (tmp_path / "figures").iterdir())
    assert any(name.endswith(".png") for name in written), f"{path.name} wrote no PNG"
    assert any(name.endswith(".pdf") for name in written), f"{path.name} wrote no PDF"
