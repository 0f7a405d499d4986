"""Invalid inputs of estimators: rows of test_invalid_inputs."""

from invalid_case import ApiCase, CliCase

CASES: list[ApiCase | CliCase] = []
