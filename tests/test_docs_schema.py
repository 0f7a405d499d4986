"""docs/schema.md documents exactly the fields of the records the stores hold.

Each record shape has a section of docs/schema.md whose heading carries an id
(``### Sweep record {#sweep-record}``) and whose first table lists the shape's fields in
its first column (one or more names in backticks). A tiny run of each store checked here
(sweep, demo, leakage, train) must write records with exactly those fields: a field added
to a record and not to the page, or documented and gone, fails.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pruneleak.sims.experiments.demo import DemoConfig, run_demo
from pruneleak.sims.experiments.leakage import LeakageConfig, run_leakage
from pruneleak.sims.experiments.train import TrainConfig, run_training
from pruneleak.sims.fl.server import FedConfig
from pruneleak.sims.store.results import ResultStore
from pruneleak.sims.sweep import SweepConfig, run_sweep

SCHEMA = Path(__file__).resolve().parents[1] / "docs" / "schema.md"
# one job of well under a second: 2 clients, 1 target, 10 L-BFGS iterations
TINY_JOB = {
    "num_clients": 2,
    "fed.clients_per_round": 2,
    "targets": 1,
    "inversion.iterations": 10,
    "stats_samples": 8,
    "pruning.synflow_iterations": 2,
}
TINY_LEAKAGE = {
    "rates": (0.5,),
    "noise_stds": (0.01,),
    "candidates": 6,
    "samples": 16,
    "attack_targets": 2,
    "attack_iterations": 1,
    "stats_samples": 6,
    "device": "cpu",
}


def documented_fields(section: str) -> set[str]:
    """The field names of the table under the heading ``{#section}``."""
    text = SCHEMA.read_text()
    heading = re.search(rf"^#+ .*\{{#{re.escape(section)}\}}$", text, re.MULTILINE)
    assert heading, f"docs/schema.md has no section {{#{section}}}"
    table = []
    for block in text[heading.end() :].split("\n\n"):
        if block.startswith("#"):
            break
        if block.startswith("|"):
            table = block.splitlines()[2:]  # after the header and its rule
            break
    assert table, f"docs/schema.md has no table under {{#{section}}}"
    return {name for row in table for name in re.findall(r"`([^`]+)`", row.split("|")[1])}


def _check(record: dict, *sections: str) -> None:
    fields = set().union(*(documented_fields(s) for s in sections))
    missing, gone = sorted(set(record) - fields), sorted(fields - set(record))
    assert not missing and not gone, (
        f"docs/schema.md {sections}: fields not documented {missing}, "
        f"documented but not written {gone}"
    )


def test_a_sweep_record_has_the_documented_fields(tmp_path):
    config = SweepConfig(name="tiny", base=TINY_JOB, grids=({"panel": "p", "pruning.p": [0.5]},))
    (record,) = run_sweep(config, ResultStore(tmp_path / "tiny.jsonl"), progress=False)
    _check(record, "sweep-record")


def test_demo_records_have_the_documented_fields(tmp_path):
    config = DemoConfig(
        pruning_rates=(0.5,),
        attacks=("sgi",),
        num_images=1,
        attack_iterations=1,
        stats_samples=8,
        device="cpu",
    )
    records = run_demo(config, ResultStore(tmp_path / "demo.jsonl"), progress=False)
    bound, attack = sorted(records, key=lambda r: r["kind"], reverse=True)
    _check(bound, "demo-bound-record")
    _check(attack, "demo-attack-record")


@pytest.mark.parametrize(
    ("settings", "sections"),
    [
        ({}, ("leakage-record", "leakage-one-step")),
        ({"rounds": 2}, ("leakage-record", "leakage-rounds")),
    ],
)
def test_a_leakage_record_has_the_documented_fields(tmp_path, settings, sections):
    config = LeakageConfig(**TINY_LEAKAGE, **settings)
    (record,) = run_leakage(config, ResultStore(tmp_path / "leakage.jsonl"), progress=False)
    _check(record, *sections)


def test_a_train_record_has_the_documented_fields(tmp_path):
    config = TrainConfig(
        model_options=(("width", 4), ("hidden", 16)),
        num_clients=4,
        fed=FedConfig(rounds=1, clients_per_round=2, batch_size=10, lr=0.3),
        device="cpu",
    )
    record = run_training(config, store=ResultStore(tmp_path / "train.jsonl"), progress=False)
    _check(record, "train-record")
