"""Invalid inputs of sweeps: rows of test_invalid_inputs (issue 30).

A sweep of a million jobs was neither refused nor finished (expanding the grid alone took
minutes), and ``--executor ray --address`` at an address where nothing listens never
answered. A grid's size is now checked against ``MAX_JOBS`` before any job is built, and a
cluster address gets a TCP connect timeout (``CONNECT_TIMEOUT_S``) before Ray is asked.
"""

from invalid_case import ApiCase, CliCase

from pruneleak.sims.sweep import SweepConfig
from pruneleak.sims.sweep.ray_executor import check_reachable

OUT = ["--out", "{tmp}/out"]
# a port nothing listens on: the connection is refused at once
CLOSED = "127.0.0.1:1"


def _toml(name: str, grid: str):
    """A setup writing sweep ``name``.toml with one ``[[grid]]`` of ``grid``."""

    def setup(tmp):
        (tmp / f"{name}.toml").write_text(
            f'name = "{name}"\n[base]\ndataset = "digits"\n[[grid]]\n{grid}\n'
        )

    return setup


def _sweep(*grids):
    return SweepConfig(name="big", base={"dataset": "digits"}, grids=grids)


# 1000 seeds x 1000 rates: a million jobs
MILLION = "seed = [" + ", ".join(map(str, range(1000))) + "]\npruning.p = ["
MILLION += ", ".join(f"{k / 1000}" for k in range(1000)) + "]"

CASES: list[ApiCase | CliCase] = [
    CliCase(
        "sweep-cli-million-jobs",
        ["sweep", "{tmp}/million.toml", *OUT],
        ["'grids'", "MAX_JOBS = 10000", "Got 1000000"],
        setup=_toml("million", MILLION),
    ),
    ApiCase(
        "sweep-api-grids-summed-beyond-the-limit",
        lambda _tmp: _sweep({"seed": list(range(6000))}, {"seed": list(range(6000, 12000))}),
        ["'grids'", "MAX_JOBS", "Got 12000", "[6000, 6000]"],
    ),
    ApiCase(
        "sweep-api-million-jobs",
        lambda _tmp: _sweep(
            {"seed": list(range(1000)), "pruning.p": [k / 1000 for k in range(1000)]}
        ),
        ["'grids'", "Got 1000000"],
    ),
    ApiCase(
        "sweep-api-address-refused",
        lambda _tmp: check_reachable(CLOSED),
        ["'address'", "does not answer", CLOSED],
        ConnectionError,
    ),
    ApiCase(
        "sweep-api-ray-client-address-refused",
        lambda _tmp: check_reachable(f"ray://{CLOSED}", timeout_s=2.0),
        ["'address'", f"ray://{CLOSED}"],
        ConnectionError,
    ),
]
