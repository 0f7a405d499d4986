"""Invalid inputs of Fed-LTP: rows of test_invalid_inputs (issue 30)."""

from __future__ import annotations

CASES = []
