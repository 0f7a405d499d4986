"""PriPrune's further arms (issue 34, item 2): the lambda rescaling of Table A1's grid
against eq. (17)'s optimum found numerically, the packaged TOML values against the rule,
the transcription of Table A1 against the paper's text, Mix's combined rate against the
masks it builds and the independent-masks closed form, the CIFAR-10 config and its
stand-in, and the messages of bad input."""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy import optimize

from pruneleak.sims.defenses.lambdas import (
    DIGITS_CONV1_WEIGHTS,
    PAPER_FEMNIST_CONV2_WEIGHTS,
    mean_alpha_star,
    rescale_lambdas,
)
from pruneleak.sims.defenses.masks import defense_mask
from pruneleak.sims.plots import defense_arms as arms
from pruneleak.sims.pruning.mask import Mask, prunable_names
from pruneleak.sims.store.results import ResultStore
from pruneleak.sims.sweep import SweepConfig, packaged_config, run_sweep
from pruneleak.sims.sweep.job import ModelSpec

CONFIGS = Path(__file__).resolve().parents[2] / "sims" / "sweep" / "configs"
# Table A1 as the paper's text has it (priprune-journal-version.txt lines 3063-3071),
# parsed here independently of the module's transcription.
TABLE_A1_TEXT = "\n".join(
    [
        "λpri = 1 λpri = 10 λpri = 15",
        "Parameter " + " ".join(["λsha = 2e-04 λsha = 2e-05 λsha = 2e-06"] * 3),
        "λacc = 1 0.166 0.171 0.156 0.138 0.153 0.154 0.138 0.159 0.151",
        "λacc = 5 0.154 0.158 0.136 0.125 0.121 0.123 0.135 0.123 0.130",
        "λacc = 10 0.148 0.142 0.140 0.132 0.126 0.118 0.135 0.132 0.140",
    ]
)


def _prunable_count(model: ModelSpec, shape, classes) -> int:
    with torch.device("meta"):
        net = model.build(image_shape=shape, num_classes=classes)
    params = dict(net.named_parameters())
    return sum(params[n].numel() for n in prunable_names(params))


def _numeric_mean_alpha(weights: np.ndarray, lambda_pri: float, lambda_sha: float) -> float:
    """Mean over weights of argmin over alpha in (0, 1] of
    -lambda_pri w log(alpha) + lambda_sha alpha (eq. (16) without L_acc, eq. (17) per
    weight), by scipy's bounded scalar minimiser: no closed form used."""
    alphas = []
    for w in weights:
        res = optimize.minimize_scalar(
            lambda a, w=w: -lambda_pri * w * np.log(a) + lambda_sha * a,
            bounds=(1e-12, 1.0),
            method="bounded",
            options={"xatol": 1e-13},
        )
        alphas.append(res.x)
    return float(np.mean(alphas))


# --------------------------------------------------------------------------- lambdas


def test_the_weight_counts_are_those_of_the_models():
    paper = ModelSpec(name="conv2", width=32, hidden=2048)
    ours = ModelSpec(name="conv1", width=32, hidden=64, activation="tanh")
    assert _prunable_count(paper, (1, 28, 28), 62) == PAPER_FEMNIST_CONV2_WEIGHTS
    assert _prunable_count(ours, (1, 8, 8), 10) == DIGITS_CONV1_WEIGHTS


@pytest.mark.parametrize("cell", list(arms.PAPER_TABLE_A1))
def test_rescaling_keeps_the_mean_alpha_star_of_every_table_a1_cell(cell):
    _, pri, sha = rescale_lambdas(*cell)
    assert mean_alpha_star(pri, sha, DIGITS_CONV1_WEIGHTS) == pytest.approx(
        mean_alpha_star(cell[1], cell[2], PAPER_FEMNIST_CONV2_WEIGHTS), rel=1e-12
    )


def test_rescaled_optimum_matches_the_papers_numerically_on_two_layers():
    # eq. (17)'s weights of one layer of N weights: |g_j| / sum |g| (N_l / N = 1). The
    # paper's lambdas on 400 weights and the rescaled ones on 40 give the same mean
    # alpha*, each found by a numerical minimiser, and it is lambda_pri / (lambda_sha N).
    rng = np.random.default_rng(0)
    big, small = (np.abs(rng.standard_normal(n)) + 0.5 for n in (400, 40))
    big, small = big / big.sum(), small / small.sum()
    lambda_acc, lambda_pri, lambda_sha = 5.0, 15.0, 2.0  # alpha* = 15 / (2 * 400) unclipped
    _, pri, sha = rescale_lambdas(lambda_acc, lambda_pri, lambda_sha, n_paper=400, n_ours=40)
    paper = _numeric_mean_alpha(big, lambda_pri, lambda_sha)
    ours = _numeric_mean_alpha(small, pri, sha)
    # 1e-6: the minimiser's xatol (1e-13) on alphas of order 1e-2, averaged
    assert ours == pytest.approx(paper, rel=1e-6)
    assert paper == pytest.approx(mean_alpha_star(lambda_pri, lambda_sha, 400), rel=1e-6)


def test_the_packaged_lambdas_follow_the_rule():
    grid = packaged_config("priprune_lambda_grid")
    found = {
        (j.defense.lambda_acc, j.defense.lambda_pri, j.defense.lambda_sha)
        for j in grid.panels()["lambda"]
    }
    expected = {rescale_lambdas(*cell, digits=4) for cell in arms.PAPER_TABLE_A1}
    assert found == expected and len(found) == 25  # two pairs of cells coincide
    assert {j.defense.alpha_lr for j in grid.panels()["lambda"]} == {25.0}
    main = packaged_config("priprune_defense").panels()["priprune"][0].defense
    assert (main.lambda_acc, main.lambda_pri, main.lambda_sha) == rescale_lambdas(
        5, 15, 2e-5, digits=4
    )
    cifar = packaged_config("priprune_defense_cifar10")
    job = next(j for j in cifar.jobs() if j.defense.name == "priprune")
    n_vgg = _prunable_count(ModelSpec(name="vgg11", activation="relu"), (3, 32, 32), 10)
    n_ours = _prunable_count(job.model, (3, 32, 32), 10)
    assert (job.defense.lambda_acc, job.defense.lambda_pri, job.defense.lambda_sha) == (
        rescale_lambdas(5, 10, 2e-5, n_paper=n_vgg, n_ours=n_ours, digits=4)
    )


def test_table_a1_transcription_matches_the_papers_text():
    lines = TABLE_A1_TEXT.splitlines()
    pri = [float(v) for v in re.findall(r"λpri = (\S+)", lines[0])]
    sha = [float(v) for v in re.findall(r"λsha = (\S+)", lines[1])]
    parsed = {}
    for line in lines[2:]:
        acc, *values = re.match(r"λacc = (\S+) (.*)", line).groups()
        for k, value in enumerate(values[0].split()):
            parsed[(float(acc), pri[k // 3], sha[k])] = float(value)
    assert parsed == arms.PAPER_TABLE_A1 and len(parsed) == 27
    assert arms.PAPER_TABLE_A1[(5.0, 15.0, 2e-5)] == 0.123  # the FEMNIST PruneFL choice


def _record(pri, sha, nmi, *, acc=1.0, name="priprune"):
    job = {"defense.name": name, "defense.lambda_acc": acc}
    job.update({"defense.lambda_pri": pri, "defense.lambda_sha": sha})
    return {"job": job, "nmi_per_target": [nmi, nmi + 0.02], "accuracy": 0.5}


def test_table_a1_rows_match_records_to_cells_and_name_the_shared_ones():
    records = [_record(*rescale_lambdas(*cell, digits=4)[1:], 0.3) for cell in [(1, 1, 2e-5)]]
    records.append(_record(1.0, 9.771e-4, 0.2, acc=5.0))  # another lambda_acc: not matched
    rows = {
        (r["lambda_acc"], r["lambda_pri"], r["lambda_sha"]): r for r in arms.table_a1_rows(records)
    }
    assert len(rows) == 27
    for cell in [(1.0, 1.0, 2e-5), (10.0, 10.0, 2e-4)]:
        assert rows[cell]["nmi"] == pytest.approx(0.31) and rows[cell]["n"] == 2
    assert rows[(1.0, 1.0, 2e-5)]["shared_with"] == [(10.0, 10.0, 2e-4)]
    assert rows[(1.0, 1.0, 2e-6)]["nmi"] is None
    shared = sorted(cell for cell, r in rows.items() if r["shared_with"])
    assert shared == [(1.0, 1.0, 2e-6), (1.0, 1.0, 2e-5), (10.0, 10.0, 2e-5), (10.0, 10.0, 2e-4)]
    text = arms.format_table_a1(list(rows.values()))
    assert "0.171" in text and "0.310 ± 0.014" in text


# --------------------------------------------------------------------------- Mix


@pytest.mark.parametrize(("p_largest", "p_random"), arms.PAPER_MIX_SPLITS)
def test_mix_withholds_the_sum_of_its_parts(p_largest, p_random):
    # a 20 x 30 weight with all 600 coordinates kept: every part is a whole count
    fraction = p_largest / 0.3
    base = Mask({"w": torch.ones(20, 30, dtype=torch.bool), "b": torch.ones(30, dtype=torch.bool)})
    update = {
        "w": torch.randn(20, 30, generator=torch.Generator().manual_seed(1)),
        "b": torch.zeros(30),
    }
    shared = defense_mask(
        "mix",
        base,
        update,
        rate=0.3,
        largest_fraction=fraction,
        generator=torch.Generator().manual_seed(2),
    )
    withheld = int((~shared.keep["w"]).sum())
    parts = arms.mix_parts(0.3, fraction)
    assert parts == pytest.approx((p_largest, p_random), abs=1e-12)
    assert withheld == round(arms.combined_rate(*parts) * 600)
    # the largest part is the top |update| coordinates
    top = update["w"].abs().reshape(-1).topk(round(p_largest * 600)).indices
    assert not shared.keep["w"].reshape(-1)[top].any()


@pytest.mark.parametrize(("a", "b"), [(0.15, 0.15), (0.1, 0.2), (0.3, 0.0), (0.0, 0.3)])
def test_independent_masks_withhold_one_minus_the_product_of_keeps(a, b):
    # exact expectation by a loop over 1,000 weights: the top a-fraction is withheld,
    # every other weight with probability b
    d = 1000
    expected = sum(1.0 if j < round(a * d) else b for j in range(d)) / d
    assert arms.combined_rate(a, b, independent=True) == pytest.approx(expected, abs=1e-12)


def test_mix_ratio_rows_order_the_splits_and_average_over_rounds():
    def rec(fraction, nmis, losses):
        return {
            "job": {
                "defense.name": "mix",
                "defense.rate": 0.3,
                "defense.largest_fraction": fraction,
            },
            "rounds": [5, 5, 10, 10],
            "nmi_per_upload": nmis,
            "attack_loss_per_upload": losses,
            "nmi_per_target": [max(nmis[0::2]), max(nmis[1::2])],
            "attack_loss": float(np.mean(losses)),
            "accuracy": 0.4,
            "accuracy_rounds": [0, 10],
            "accuracy_per_round": [0.1, 0.4],
            "defense_rate": 0.3,
        }

    rows = arms.mix_ratio_rows(
        [rec(1.0, [0.1, 0.2, 0.3, 0.4], [1, 2, 3, 4]), rec(0.0, [0.5] * 4, [1] * 4)]
    )
    assert [r["paper_split"] for r in rows] == [(0.0, 0.3), (0.3, 0.0)]
    assert rows[1]["nmi_by_round"] == ([5, 10], [pytest.approx(0.15), pytest.approx(0.35)])
    assert rows[1]["attack_loss_by_round"] == ([5, 10], [1.5, 3.5])
    assert "30 % largest + 0 % random" in arms.format_mix_ratio(rows)


# --------------------------------------------------------------------------- CIFAR-10


def test_the_patches_stand_in_is_the_cifar10_sweep_on_other_data():
    cifar = packaged_config("priprune_defense_cifar10")
    patches = packaged_config("priprune_defense_patches")
    assert [j.as_fields() | {"dataset": "x"} for j in cifar.jobs()] == [
        j.as_fields() | {"dataset": "x"} for j in patches.jobs()
    ]
    assert {j.dataset for j in patches.jobs()} == {"patches"}
    body = (CONFIGS / "priprune_defense_cifar10.toml").read_text()
    stand_in = (CONFIGS / "priprune_defense_patches.toml").read_text().split("\n\n", 1)[1]
    assert stand_in == body.replace(
        '"priprune_defense_cifar10"', '"priprune_defense_patches"'
    ).replace('dataset = "cifar10"', 'dataset = "patches"')


def test_the_cifar10_sweep_without_data_stops_before_any_job(tmp_path):
    store = ResultStore(tmp_path / "s.jsonl")
    with pytest.raises(ValueError, match=r"reads 'cifar10' from files: pass .*--data-dir") as err:
        run_sweep(packaged_config("priprune_defense_cifar10"), store, progress=False)
    assert "\n" not in str(err.value)
    assert not (tmp_path / "s.jsonl").exists() or not store.records()


def _write_cifar_batches(folder: Path, per_batch: int = 6) -> None:
    """The python version's files (protocol-2 pickles of dicts, as the archive holds)."""
    rng = np.random.default_rng(3)
    folder.mkdir(parents=True)
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        batch = {
            b"batch_label": name.encode(),
            b"data": rng.integers(0, 256, size=(per_batch, 3072), dtype=np.uint8),
            b"labels": rng.integers(0, 10, size=per_batch).tolist(),
        }
        with open(folder / name, "wb") as fh:
            pickle.dump(batch, fh, protocol=2)


def test_the_cifar10_sweep_runs_on_files_in_the_real_format(tmp_path):
    _write_cifar_batches(tmp_path / "data" / "cifar-10-batches-py")
    full = packaged_config("priprune_defense_cifar10")
    tiny = {"num_clients": 2, "fed.clients_per_round": 2, "targets": 1, "fed.rounds": 2}
    tiny |= {"attack_every": 2, "eval_every": 2, "inversion.iterations": 2, "stats_samples": 4}
    grids = tuple({**g, "pruning.scheme": "prunefl"} for g in full.grids)
    config = SweepConfig(name=full.name, base={**full.base, **tiny}, grids=grids)
    config = config.with_base(data_dir=str(tmp_path / "data"), device="cpu")
    records = run_sweep(config, ResultStore(tmp_path / "s.jsonl"), progress=False)
    assert [r["job"]["defense.name"] for r in records] == ["none", "priprune"]
    assert all(r["job"]["dataset"] == "cifar10" and r["n_uploads"] == 1 for r in records)
    text = arms.format_table2_cifar10(records)
    assert text.startswith("Table 2, CIFAR-10 columns. Ours on: CIFAR-10\n")
    assert "0.290 ± 0.009" in text  # the paper's PruneFL base, CIFAR-10 column
    stand_in = [{**r, "job": {**r["job"], "dataset": "patches"}} for r in records]
    assert "STAND-IN, not CIFAR-10" in arms.format_table2_cifar10(stand_in).splitlines()[0]
    with pytest.raises(ValueError, match="one data set"):
        arms.format_table2_cifar10([*records, *stand_in])
    # what the sweep command prints: the CIFAR-10 column here, FEMNIST's on other data
    assert arms.format_table2_beside_paper(records) == text
    digits = [{**r, "job": {**r["job"], "dataset": "digits"}} for r in records]
    assert "paper femnist" in arms.format_table2_beside_paper(digits)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: rescale_lambdas(0, 1, 1), r"'lambda_acc' parameter of rescale_lambdas .* Got 0"),
        (lambda: rescale_lambdas(1, -1, 1), r"'lambda_pri' parameter of rescale_lambdas .*-1"),
        (lambda: rescale_lambdas(1, 1, 1, n_ours=0), r"'n_ours' parameter of rescale_lambdas"),
        (lambda: mean_alpha_star(1, 0, 10), r"'lambda_sha' parameter of mean_alpha_star .* Got 0"),
        (lambda: arms.mix_parts(1.5, 0.5), r"'rate' parameter of mix_parts .*\[0, 1\].*1\.5"),
        (lambda: arms.mix_parts(0.3, -0.1), r"'largest_fraction' parameter of mix_parts"),
        (
            lambda: arms.combined_rate(0.8, 0.5),
            r"'p_random' parameter of combined_rate .*\[0, 0\.2\]",
        ),
        (lambda: arms.combined_rate(float("nan"), 0.1), r"'p_largest' parameter of combined_rate"),
    ],
)
def test_bad_input_names_the_parameter_the_range_and_the_value(call, match):
    with pytest.raises(ValueError, match=match):
        call()
