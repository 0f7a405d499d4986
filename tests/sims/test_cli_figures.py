"""``pruneleak figures`` (issue 33, scope 5): a whole-notebook ``--timeout``, no limit per
cell, carries on past a failing notebook and ends with what failed and why.

The command runs tiny notebooks written into ``tmp_path``: one passes, one raises, one
imports a missing optional package, one sleeps past ``--timeout``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import nbformat
import pytest
from nbclient.exceptions import CellExecutionError
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from pruneleak.bounds.progress import HEARTBEAT_ENV
from pruneleak.sims.cli.figures import QUICK_TIMEOUT_S, notebook_timeout
from pruneleak.sims.core.extras import MissingExtraError, require
from pruneleak.sims.plots.figures import (
    NotebookTimeoutError,
    missing_extra,
    notebook_client,
    notebook_outcome,
)


def write_notebook(path, *sources, markdown: bool = True):
    cells = [new_markdown_cell("# a test notebook")] if markdown else []
    nbformat.write(new_notebook(cells=cells + [new_code_cell(s) for s in sources]), path)
    return path


FIGURES = (sys.executable, "-m", "pruneleak", "figures")
NOTEBOOKS = {
    "a_passes": (
        "import os, pathlib",
        "folder = pathlib.Path(os.environ['PRUNELEAK_FIG_DIR'])\n"
        "(folder / 'passes.txt').write_text(os.environ['PRUNELEAK_SCALE'])",
    ),
    "b_raises": ("x = 1", "raise ValueError('boom in the second cell')"),
    # what a notebook sees without scikit-image (the `faces` extra)
    "c_needs_faces": ("import sys", "sys.modules['skimage'] = None\nimport skimage"),
    "d_sleeps": ("import time", "time.sleep(600)"),
}


@pytest.mark.e2e
def test_figures_reports_each_failure_with_its_reason_and_keeps_the_others(tmp_path):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    for name, sources in NOTEBOOKS.items():
        write_notebook(folder / f"{name}.ipynb", *sources)
    out = tmp_path / "out"
    log = tmp_path / "stderr.log"
    with log.open("w") as stderr:  # a file, not a terminal: progress lines
        run = subprocess.run(
            [*FIGURES, "--notebooks", str(folder), "--out", str(out), "--timeout", "2"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env={**os.environ, HEARTBEAT_ENV: "0.5"},
            timeout=300,  # the sleeping notebook would take 10 minutes
        )
    err = log.read_text()
    assert run.returncode == 1, run.stdout + err
    rows = {line.split()[0]: line for line in run.stdout.splitlines()}
    assert rows["notebook"].split() == ["notebook", "result", "seconds", "reason"]
    assert re.fullmatch(r"a_passes\.ipynb +ok +[\d.]+", rows["a_passes.ipynb"])
    assert re.search(
        r" failed +[\d.]+  cell 2: ValueError: boom in the second cell$", rows["b_raises.ipynb"]
    )
    assert re.search(
        r" needs extra +[\d.]+  cell 2: needs extra faces: pip install 'pruneleak\[faces\]' "
        r"\(ModuleNotFoundError: import of skimage halted",
        rows["c_needs_faces.ipynb"],
    )
    assert re.search(
        r" timeout +[\d.]+  cell 2: ran past the whole-notebook limit of 2 s$",
        rows["d_sleeps.ipynb"],
    )
    # the passing notebook's output is there, written in quick scale
    assert (out / "passes.txt").read_text() == "quick"
    assert err.rstrip().endswith(
        "3 of 4 notebooks failed (listed above); the others' figures were written."
    )
    progress = [line for line in err.splitlines() if line.startswith("figures: ")]
    assert any(re.match(r"figures: [1-3]/4 notebooks .*, ETA \d+s", line) for line in progress)
    assert any("(d_sleeps.ipynb, cell 2/2)" in line and "running for" in line for line in progress)
    assert re.match(r"figures: 4/4 notebooks .*done in \d+s$", progress[-1])


def test_no_cell_has_a_limit_of_its_own(tmp_path):
    path = write_notebook(tmp_path / "n.ipynb", "1", "2")
    unlimited = notebook_client(path)
    cell = unlimited.nb.cells[1]
    assert unlimited.timeout is None and unlimited._get_timeout(cell) is None
    limited = notebook_client(path, timeout=100)
    assert limited.timeout is None  # nbclient's fixed per-cell limit stays off
    assert 99 < limited._get_timeout(cell) <= 100  # what is left of the notebook's 100 s


def test_the_default_limit_depends_on_the_scale():
    assert notebook_timeout(None, "quick") == QUICK_TIMEOUT_S
    assert notebook_timeout(None, "paper") is None  # paper-scale cells run for hours
    assert notebook_timeout(0.0, "quick") is None
    assert notebook_timeout(5.0, "paper") == 5.0


def test_outcomes_name_the_extra_to_install(tmp_path, monkeypatch):
    path = tmp_path / "n.ipynb"
    monkeypatch.setitem(sys.modules, "flwr", None)  # Flower not installed
    with pytest.raises(MissingExtraError) as raised:
        require("flwr", purpose="this notebook")
    outcome = notebook_outcome(path, raised.value, seconds=1.0, cell=3)
    assert (outcome.status, outcome.extra) == ("needs extra", "flower")
    assert outcome.reason.startswith("cell 3: needs extra flower: pip install 'pruneleak[flower]'")

    cell_error = CellExecutionError("Traceback ...", "ModuleNotFoundError", "No module named 'ray'")
    outcome = notebook_outcome(path, cell_error, seconds=1.0, cell=1)
    assert outcome.status == "needs extra" and outcome.extra == "ray"
    assert outcome.traceback == "Traceback ..."

    unknown = CellExecutionError("", "ModuleNotFoundError", "No module named 'numpyy'")
    outcome = notebook_outcome(path, unknown, seconds=1.0, cell=1)
    assert outcome.status == "failed"  # no extra installs it: reported as it is
    assert outcome.reason == "cell 1: ModuleNotFoundError: No module named 'numpyy'"

    timeout = NotebookTimeoutError("ran past the whole-notebook limit of 2 s", timeout=2.0)
    outcome = notebook_outcome(path, timeout, seconds=2.1, cell=None)
    assert (outcome.status, outcome.reason) == (
        "timeout",
        "ran past the whole-notebook limit of 2 s",
    )
    assert notebook_outcome(path, None, seconds=0.5).ok


def test_missing_extra_reads_the_module_of_the_message():
    assert missing_extra("ModuleNotFoundError", "No module named 'skimage.data'") == "faces"
    assert missing_extra("ImportError", "import of dp_accounting halted; None in sys.modules") == (
        "notebooks"
    )
    assert missing_extra("ValueError", "No module named 'skimage'") is None
    assert missing_extra("ModuleNotFoundError", "No module named 'torchh'") is None
