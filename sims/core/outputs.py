"""Where commands and notebooks write their files.

Every command writes under a folder its user names (``--out DIR``), by default
``pruneleak-out/<command>`` under the current directory, which ``.gitignore`` lists: no
command overwrites a file tracked in git unless it is pointed there explicitly
(``make figures`` passes ``--out paper_figs``).
"""

from __future__ import annotations

from pathlib import Path

#: Parent of every default output folder, relative to the current directory.
OUTPUT_ROOT = Path("pruneleak-out")


def output_dir(path: str | Path) -> Path:
    """Create ``path`` (and its parents) for a command's files and return it as a Path.

    Raises ValueError, which the command line reports in one line, when the folder
    cannot be created (a file in the way, no permission).
    """
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ValueError(f"cannot create the output folder {path}: {err.strerror}.") from err
    return path
