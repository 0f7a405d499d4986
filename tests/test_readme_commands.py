"""Every command the README shows runs as written (issue 33).

The README's ```bash blocks are read line by line (a line ending in a backslash goes on
in the next one, and ``#`` starts a comment, as in bash). Each line is checked by its
kind:

* ``pruneleak ...``, ``python -m pruneleak ...`` (after optional ``NAME=value``
  assignments): run by bash, exactly as written, in a fresh folder (pytest's tmp_path,
  standing for the folder of a new user), and it must exit 0. The commands write to their
  default ``pruneleak-out/<command>/`` there. The quick ones run in the fast lane, the
  others (``LONG``) in the e2e lane.
* ``make TARGET``: TARGET must be a target of the Makefile (running it would create a
  virtual environment and install).
* ``pip install SPEC ...``: every extra a SPEC names must be declared in pyproject.toml.

Any other line fails ``test_every_readme_command_is_checked``: a new kind of command
needs a check here. The README's ```python blocks run too: a block whose first line is
``# NAME.py`` is the file NAME.py that the commands and the other blocks import; the
others are executed, in the same fresh folder, by this Python.

The files a command reads are made beside it first: the Python files of the README,
``notebooks/`` (a link to the checkout's, for ``pruneleak figures``) and a one-record
results store for ``pruneleak results check FILE``.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAX_LINES = 220
#: Seconds a README command may take, times $PRUNELEAK_TIMEOUT_SCALE on a slow host.
TIMEOUT_S = 900 * float(os.environ.get("PRUNELEAK_TIMEOUT_SCALE", "1"))
#: Commands (their first two words) quick enough for the fast lane: each took at most
#: 10 s of CPU time on the 2-core development host. Every other pruneleak command of the
#: README runs in the e2e lane.
QUICK = {"pruneleak bound", "pruneleak results", "pruneleak audit", "pruneleak verify"}
#: Commands whose last printed line must appear verbatim on a documentation page, so
#: that the numbers a page quotes cannot drift from what the command prints.
PRINTED_ON = {"pruneleak fedltp": ROOT / "docs" / "findings" / "fedltp.md"}

ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
FENCE = re.compile(r"^```(\w*)\s*$")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _blocks(text: str) -> list[tuple[str, str]]:
    """(language, content) of every fenced code block of ``text``."""
    blocks, language, lines = [], None, []
    for line in text.splitlines():
        match = FENCE.match(line.strip())
        if language is None and match:
            language, lines = match.group(1), []
        elif language is not None and line.strip() == "```":
            blocks.append((language, "\n".join(lines) + "\n"))
            language = None
        elif language is not None:
            lines.append(line)
    assert language is None, "README.md has an unclosed code block"
    return blocks


def _commands(block: str) -> list[str]:
    """The commands of a shell block: continuation lines joined, blank and comment-only
    lines dropped (a trailing comment is kept: bash ignores it)."""
    commands, pending = [], ""
    for line in block.splitlines():
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        command = (pending + line).strip()
        pending = ""
        if command and not command.startswith("#"):
            commands.append(command)
    return commands


def _words(command: str) -> list[str]:
    """The command's words without the comment and the leading NAME=value assignments."""
    words = shlex.split(command, comments=True)
    while words and ASSIGNMENT.match(words[0]):
        words.pop(0)
    return words


def _kind(command: str) -> str:
    words = _words(command)
    if words[:1] == ["pruneleak"] or words[:3] == ["python", "-m", "pruneleak"]:
        return "pruneleak"
    if words[:1] == ["make"]:
        return "make"
    if words[:2] == ["pip", "install"]:
        return "pip"
    return "unknown"


def _id(command: str) -> str:
    """A test id: the command's words after 'pruneleak' up to the first option."""
    words = _words(command)
    words = words[words.index("pruneleak") + 1 :]
    return "-".join(w for w in words[:2] if not w.startswith("-")) or "pruneleak"


def _name(command: str) -> str:
    """'pruneleak SUBCOMMAND' of a pruneleak command (python -m pruneleak as pruneleak)."""
    words = _words(command)
    if words[0] == "python":
        words = words[2:]
    return " ".join(words[:2])


README_TEXT = README.read_text(encoding="utf-8")
BLOCKS = _blocks(README_TEXT)
SHELL = [c for lang, body in BLOCKS if lang in ("bash", "sh", "shell") for c in _commands(body)]
PYTHON = [body for lang, body in BLOCKS if lang == "python"]
MODULES = {m.group(1): body for body in PYTHON if (m := re.match(r"#\s*(\w+\.py)\s*\n", body))}
SNIPPETS = [body for body in PYTHON if not re.match(r"#\s*\w+\.py\s*\n", body)]
RUN = [c for c in SHELL if _kind(c) == "pruneleak"]


def test_readme_is_a_short_manual():
    lines = README_TEXT.splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines (at most {MAX_LINES})"


def test_readme_links_stay_inside_the_repository_and_resolve():
    assert "../shared" not in README_TEXT
    for target in LINK.findall(README_TEXT):
        if re.match(r"^[a-z]+://", target) or target.startswith("#"):
            continue
        path = target.split("#")[0]
        assert not path.startswith(("/", "..")), f"README links outside the checkout: {target}"
        assert (ROOT / path).exists(), f"README links to a missing file: {target}"


def test_the_readme_shows_commands():
    kinds = {_kind(c) for c in SHELL}
    assert {"pruneleak", "make", "pip"} <= kinds
    assert len(RUN) >= 10 and SNIPPETS and MODULES


def test_every_readme_command_is_checked():
    unknown = [c for c in SHELL if _kind(c) == "unknown"]
    assert not unknown, f"README commands no test checks (extend this file): {unknown}"


def test_readme_make_commands_name_makefile_targets():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([A-Za-z][\w-]*)\s*:", makefile, flags=re.MULTILINE))
    for command in (c for c in SHELL if _kind(c) == "make"):
        for target in _words(command)[1:]:
            assert target in targets, f"{command!r}: no target {target!r} in the Makefile"
    # "Set-up is two commands": the README's set-up block names demo and test.
    assert "Set-up is two commands" in README_TEXT
    assert {"make demo", "make test"} <= {" ".join(_words(c)) for c in SHELL}


def test_readme_pip_commands_name_declared_extras():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    declared = set(pyproject["project"]["optional-dependencies"])
    for command in (c for c in SHELL if _kind(c) == "pip"):
        specs = [w for w in _words(command)[2:] if not w.startswith("-")]
        assert specs, command
        for spec in specs:
            match = re.fullmatch(r"(\.|pruneleak)(?:\[([\w,-]+)\])?", spec)
            assert match, f"{command!r}: {spec!r} is neither the checkout nor pruneleak"
            for extra in filter(None, (match.group(2) or "").split(",")):
                assert extra in declared, f"{command!r}: no extra {extra!r} in pyproject.toml"


@pytest.fixture
def user_folder(tmp_path):
    """A fresh folder holding what the README's commands read, and the environment that
    runs them: this Python's ``pruneleak`` and ``python`` first on PATH."""
    for name, body in MODULES.items():
        (tmp_path / name).write_text(body, encoding="utf-8")
    (tmp_path / "notebooks").symlink_to(ROOT / "notebooks", target_is_directory=True)
    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "pruneleak").exists():  # an interpreter without the console script
        bin_dir = tmp_path / ".bin"
        bin_dir.mkdir()
        for name, line in (("pruneleak", "-m pruneleak"), ("python", "")):
            script = bin_dir / name
            script.write_text(f'#!/bin/sh\nexec "{sys.executable}" {line} "$@"\n')
            script.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("PRUNELEAK_FIG_DIR", None)  # a user's shell has none: figures go to --out
    return tmp_path, env


def _run(argv: list[str], folder: Path, env: dict) -> subprocess.CompletedProcess:
    """``argv`` in the user's ``folder`` and environment, no input, output captured."""
    return subprocess.run(
        argv,
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )


def _results_store(folder: Path, command: str) -> None:
    """``pruneleak results check|repair FILE`` reads FILE: a one-record store if absent."""
    from pruneleak.sims.store.results import ResultStore

    words = _words(command)
    path = folder / words[3]
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        ResultStore(path).append({"key": "readme/example", "value": 1})


@pytest.mark.timeout(TIMEOUT_S)
@pytest.mark.parametrize(
    "command",
    [pytest.param(c, marks=() if _name(c) in QUICK else pytest.mark.e2e) for c in RUN],
    ids=[_id(c) for c in RUN],
)
def test_readme_command_runs_as_written(command, user_folder):
    folder, env = user_folder
    if _name(command) == "pruneleak results":
        _results_store(folder, command)
    done = _run(["bash", "-c", command], folder, env)
    assert done.returncode == 0, f"{command}\nexit {done.returncode}\n{done.stderr[-4000:]}"
    page = PRINTED_ON.get(_name(command))
    if page is not None:
        last = done.stdout.strip().splitlines()[-1]
        assert last in page.read_text(encoding="utf-8"), (
            f"{command} printed\n{last}\nwhich {page.relative_to(ROOT)} does not quote: "
            "update the page with the new numbers"
        )


@pytest.mark.timeout(TIMEOUT_S)
@pytest.mark.parametrize("code", SNIPPETS, ids=[f"block{i}" for i in range(len(SNIPPETS))])
def test_readme_python_block_runs(code, user_folder):
    folder, env = user_folder
    done = _run([sys.executable, "-c", code], folder, env)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stderr[-4000:]}"
