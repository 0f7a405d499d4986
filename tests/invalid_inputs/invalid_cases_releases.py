"""Invalid inputs of releases: rows of test_invalid_inputs."""

from invalid_case import ApiCase

CASES: list[ApiCase] = []
