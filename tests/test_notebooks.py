"""Every notebook runs end to end in quick mode, and is committed without outputs."""

import nbformat
import pytest

from sims.plots.figures import figures_dir, notebook_paths, run_notebook

NOTEBOOKS = notebook_paths()


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebook found under notebooks/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_committed_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    code_cells = [c for c in notebook.cells if c.cell_type == "code"]
    assert code_cells
    assert all(not c.outputs and c.execution_count is None for c in code_cells)
    assert "PRUNELEAK_SCALE" in code_cells[0].source, "first cell must read the scale"


@pytest.mark.timeout(900)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_in_quick_mode_and_writes_figures(path, tmp_path, monkeypatch):
    monkeypatch.setenv("PRUNELEAK_FIG_DIR", str(tmp_path))
    run_notebook(path, scale="quick")
    written = sorted(p.name for p in figures_dir().iterdir())
    assert any(name.endswith(".png") for name in written), f"{path.name} wrote no PNG"
    assert any(name.endswith(".pdf") for name in written), f"{path.name} wrote no PDF"
