"""Progress off a terminal (issue 33, scope 4): a command whose stderr goes to a file
writes progress lines with counts and an ETA, where a tqdm bar would write nothing.

The rate itself (a line at least once a minute, not more than one every few seconds) is
tested with a fake clock in tests/bounds/test_progress.py; here the heartbeat's period is
shortened through ``$PRUNELEAK_PROGRESS_SECONDS`` so that a run of seconds shows lines.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from pruneleak.bounds.progress import HEARTBEAT_ENV

# Three of the slower claims (about a second each): the lines come between them.
CLAIMS = ("fedltp.algorithm2.local_steps", "fedltp.eq22", "huang.E3")


def test_verify_with_stderr_in_a_file_logs_progress_lines(tmp_path):
    log = tmp_path / "stderr.log"
    args = [a for claim in CLAIMS for a in ("--claim", claim)]
    with log.open("w") as stderr:  # a file: not a terminal
        run = subprocess.run(
            [sys.executable, "-m", "pruneleak", "verify", *args, "--format", "json"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env={**os.environ, HEARTBEAT_ENV: "0.1"},
            timeout=300,
        )
    text = log.read_text()
    assert run.returncode == 0, text
    ids = [r["id"] for r in json.loads(run.stdout)]  # stdout stays JSON
    assert sorted(ids) == sorted(CLAIMS)
    lines = [line for line in text.splitlines() if line.startswith("verify: ")]
    counted = r"verify: ([0-3])/3 claims \((?P<claim>[\w.]+)\), \d+s elapsed"
    assert any(re.fullmatch(counted + r", ETA \d+s", line) for line in lines), text
    assert any(re.fullmatch(counted + r".*; claim \d running for \d+s", line) for line in lines)
    assert lines[-1] == f"verify: 3/3 claims ({ids[-1]}), done in {lines[-1].split()[-1]}"
    assert re.fullmatch(r"\d+s", lines[-1].split()[-1]), text
    assert "\r" not in text  # no bar
