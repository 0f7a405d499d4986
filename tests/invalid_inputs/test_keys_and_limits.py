"""Record keys are exact, oversized work is refused before it starts, and the documented
minimum of a count runs (issue 30).

Keys were written with ``{:g}``, six significant digits, so ``--p 0.5 0.5000001`` stored
one record for two rates and printed them as two identical rows;
:func:`sims.store.keys.key_number` keeps the short form where it
reads back as the same float and the exact ``repr`` otherwise. A sweep of a million jobs
spent minutes expanding its grid before refusing nothing; a Ray address where nothing
listens was retried by Ray for minutes. ``--estimate-draws 16``, the documented minimum,
failed after MINE ran: H-MINE's minibatch of ``draws // 4 = 4`` could not hold its four
re-paired samples.
"""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pruneleak.sims.experiments.identifiability import IdentifiabilityConfig, labelled_keys
from pruneleak.sims.experiments.leakage import LeakageConfig, format_table, run_leakage
from pruneleak.sims.experiments.leakage.study import job_key
from pruneleak.sims.fedltp.empirical import EmpiricalConfig, reconstruction_key
from pruneleak.sims.store.keys import key_number
from pruneleak.sims.store.results import ResultStore
from pruneleak.sims.sweep import SweepConfig

CLOSE = (0.5, 0.5000001)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_key_number_reads_back_as_the_same_float(value):
    text = key_number(value)
    assert float(text) == value and math.copysign(1, float(text)) == math.copysign(1, value)
    if float(f"{value:g}") == value:  # the keys written before stay as they were
        assert text == f"{value:g}"


def test_close_rates_get_distinct_keys_in_every_study():
    identifiability = IdentifiabilityConfig(pruning_rates=CLOSE, gradient_points=("masked",))
    assert len({key for _, key in labelled_keys(identifiability)}) == 2
    empirical = EmpiricalConfig()
    assert len({reconstruction_key(empirical, s, "sgi") for s in CLOSE}) == 2
    assert len({job_key("f", p, 0.0) for p in CLOSE}) == 2


def test_close_rates_are_two_records_and_two_distinct_rows(tmp_path):
    config = LeakageConfig(
        candidates=8, rates=CLOSE, noise_stds=(0.0,), samples=64, attack_targets=1
    )
    records = run_leakage(config, ResultStore(tmp_path / "leakage.jsonl"))
    assert sorted(r["p"] for r in records) == list(CLOSE)
    assert len(list(ResultStore(tmp_path / "leakage.jsonl").records())) == 2
    rows = format_table(records).splitlines()[1:]
    assert len(set(rows)) == 2 and any("0.5000001" in row for row in rows)


@pytest.mark.timeout(5)
def test_a_million_job_sweep_is_refused_before_its_grid_is_expanded():
    grid = {"seed": list(range(1000)), "pruning.p": [k / 1000 for k in range(1000)]}
    with pytest.raises(ValueError, match=r"MAX_JOBS.*Got 1000000"):
        SweepConfig(name="big", base={"dataset": "digits"}, grids=[grid])


@pytest.mark.timeout(60)
def test_sweep_on_a_ray_address_where_nothing_listens_exits_2(tmp_path, capsys):
    pytest.importorskip("ray")
    from pruneleak.sims.cli import main

    argv = ["sweep", "quick_digits", "--executor", "ray", "--address", "127.0.0.1:1"]
    with pytest.raises(SystemExit) as info:
        main([*argv, "--out", str(tmp_path)])
    assert info.value.code == 2
    assert "--address" in capsys.readouterr().err


def test_the_documented_minimum_of_estimate_draws_runs(tmp_path):
    config = LeakageConfig(
        candidates=16,
        rates=(0.5,),
        noise_stds=(0.1,),
        samples=64,
        attack_targets=1,
        attack_iterations=1,
        estimate_draws=16,
        estimate_steps=2,
    )
    (record,) = run_leakage(config, ResultStore(tmp_path / "leakage.jsonl"))
    estimates = record["estimates_bits"]
    assert all(math.isfinite(estimates[name]["bits"]) for name in ("ksg", "mine", "hmine"))
