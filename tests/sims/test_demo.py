"""The demo sweep: records, resume after a kill, tables and both figures."""

import json
import math
import signal
import subprocess
import sys
import time
from collections import Counter

import matplotlib.pyplot as plt
import pytest
import torch
from matplotlib.legend import Legend

from pruneleak.sims import cli
from pruneleak.sims.experiments.demo import (
    LEAKAGE_FIELDS,
    DemoConfig,
    demo_world,
    format_table,
    plot_demo,
    run_demo,
    summarize,
)
from pruneleak.sims.experiments.leakage import World
from pruneleak.sims.plots.leakage import bits_data_range, plot_leakage_bits
from pruneleak.sims.plots.style import compact, readability_problems
from pruneleak.sims.store.results import ResultStore

#: The leakage part on 8 candidates, one rate, two noise levels: 2 records, < 1 s; the
#: estimator part on 4 candidates at the one positive noise level: 1 record.
TINY_LEAKAGE = [
    "--leakage-rates", "0.5", "--noise", "0", "0.01", "--candidates", "8", "--samples", "16",
    "--leakage-targets", "2", "--leakage-iterations", "1", "--estimate-candidates", "4",
    "--estimate-rates", "0.5", "--estimate-draws", "32", "--estimate-steps", "2",
]  # fmt: skip
FIGURES = ("demo_leakage_bits", "demo_bound_vs_nmi", "demo_reconstructions")

TINY = {
    "pruning_rates": (0.0, 0.9),
    "num_images": 2,
    "attack_iterations": 15,
    "stats_samples": 16,
    "seed": 3,
}


def test_tiny_demo_records_every_job_once_and_resumes(tmp_path):
    config = DemoConfig(**TINY)
    store = ResultStore(tmp_path / "demo.jsonl")
    records = run_demo(config, store, progress=False)
    kinds = Counter(r["kind"] for r in records)
    assert kinds == {"bound": 2, "attack": 2 * 2 * 2}
    assert len({r["key"] for r in records}) == len(records)
    for record in records:
        if record["kind"] == "attack":
            assert 0.0 <= record["nmi"] <= 1.0 and 0.0 <= record["nmi_chance"] <= 1.0
        else:
            assert 1 <= record["d_star"] <= TINY["stats_samples"] - 1
    again = run_demo(config, store, progress=False)
    assert again == records  # nothing re-run, nothing appended
    summary = summarize(records)
    assert [row["p"] for row in summary["bound"]] == [0.0, 0.9]
    assert {(row["attack"], row["p"]) for row in summary["attack"]} == {
        (a, p) for a in ("sgi", "gi") for p in (0.0, 0.9)
    }
    assert "published bits" in format_table(summary)
    assert plot_demo(summary).axes


def _summary_row(attack, p, nmi, floor, psnr):
    return {
        "attack": attack, "p": p, "n": 6, "nmi": nmi, "nmi_std": 0.05,
        "nmi_chance": 0.694, "nmi_chance_std": 0.0, "nmi_permutation_floor": floor,
        "nmi_permutation_floor_std": 0.01, "psnr": psnr, "psnr_std": 1.0,
    }  # fmt: skip


def test_demo_figure_draws_each_nmi_beside_its_own_chance():
    """On the faces a 26 dB SGI reconstruction has NMI 0.645 under the uniform-noise
    chance 0.694: the figure's reference is each reconstruction's permutation floor (same
    histograms), the uniform-noise value is named in the note but drawn nowhere."""
    bound = [
        {"p": p, "bound_published_bits": 1200.0 + p, "bound_corrected_bits": c}
        for p, c in ((0.0, -683.0), (0.5, 172664.0), (0.9, 80433.0))
    ]
    attack = [
        _summary_row("sgi", 0.0, 0.645, 0.622, 25.9),
        _summary_row("sgi", 0.5, 0.644, 0.622, 26.7),
        _summary_row("sgi", 0.9, 0.568, 0.561, 8.6),
        _summary_row("gi", 0.0, 0.645, 0.622, 25.9),
        _summary_row("gi", 0.5, 0.422, 0.421, 6.6),
        _summary_row("gi", 0.9, 0.422, 0.421, 6.6),
    ]
    fig = plot_demo({"bound": bound, "attack": attack})
    assert readability_problems(fig) == []
    lines = _lines(fig)
    for kind in ("published", "corrected"):
        assert lines[f"theorem1_{kind}"] == (
            [0.0, 0.5, 0.9],
            [r[f"bound_{kind}_bits"] for r in bound],
        )
    for name in ("sgi", "gi"):
        rows = [r for r in attack if r["attack"] == name]
        for gid, field in (
            ("nmi", "nmi"),
            ("nmi_floor", "nmi_permutation_floor"),
            ("psnr", "psnr"),
        ):
            assert lines[f"{gid}/{name}"] == ([0.0, 0.5, 0.9], [r[field] for r in rows]), gid
    drawn = [y for _, ys in lines.values() for y in ys]
    assert 0.694 not in drawn  # the uniform-noise chance is no floor of a reconstruction
    assert all(a.get_yscale() == "linear" for a in fig.axes)
    texts = _legend_texts(fig)
    assert {"SGI: NMI", "SGI: its chance (permutation floor)", "GI: NMI"} <= texts
    (legend,) = fig.legends
    assert "uniform noise (0.69 here)" in legend.get_title().get_text().replace("\n", " ")
    plt.close(fig)


def test_a_changed_configuration_does_not_reuse_old_records(tmp_path):
    store = ResultStore(tmp_path / "demo.jsonl")
    run_demo(DemoConfig(**{**TINY, "pruning_rates": (0.5,)}), store, progress=False)
    other = run_demo(
        DemoConfig(**{**TINY, "pruning_rates": (0.5,), "seed": 4}), store, progress=False
    )
    assert len(other) == 1 + 2 * 2
    assert len(list(store.records())) == 2 * (1 + 2 * 2)


@pytest.mark.timeout(600)
def test_killed_demo_restarts_without_duplicates_or_losses(tmp_path):
    results = tmp_path / "demo.jsonl"
    command = [
        sys.executable,
        "-m",
        "pruneleak.sims.cli",
        "demo",
        "--out",
        str(tmp_path),
        "--rates",
        "0",
        "0.5",
        "0.9",
        "--images",
        "2",
        "--iterations",
        "15",
        *TINY_LEAKAGE,
        "--no-figure",
    ]
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and first.poll() is None:
        if results.exists() and results.read_text().count("\n") >= 3:
            break
        time.sleep(0.05)
    assert first.poll() is None, "the demo finished before it could be killed"
    first.send_signal(signal.SIGKILL)
    first.wait()
    before = [json.loads(line)["key"] for line in results.read_text().split("\n")[:-1]]
    assert 3 <= len(before) < 3 * (1 + 2 * 2)
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, timeout=500)
    keys = [record["key"] for record in ResultStore(results).records()]
    # the attack jobs, the leakage part's (p, s), the estimator part's (p, s > 0)
    assert len(keys) == 3 * (1 + 2 * 2) + 2 + 1
    assert len(set(keys)) == len(keys)
    assert keys[: len(before)] == before  # finished records kept, in place


def files_under(folder) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize(
    ("options", "out"),
    [([], "pruneleak-out/demo"), (["--out", "elsewhere/run1"], "elsewhere/run1")],
)
def test_demo_command_writes_its_results_and_figure_under_out_only(
    tmp_path, monkeypatch, capsys, options, out
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli, "SUBCOMMANDS", ("demo",))  # the others are not needed
    argv = ["demo", "--rates", "0", "--images", "1", "--iterations", "1", "--stats-samples", "8"]
    assert cli.main([*argv, *TINY_LEAKAGE, *options]) == 0
    results = tmp_path / out / "demo.jsonl"
    records = list(ResultStore(results).records())
    names = ("demo.jsonl", *(f"{f}.{e}" for f in FIGURES for e in ("png", "pdf")))
    kept = (f"reconstructions/{r['key']}.npz" for r in records if r.get("kind") == "attack")
    assert files_under(tmp_path) == {f"{out}/{name}" for name in (*names, *kept)}
    printed = capsys.readouterr().out
    assert f"Results: {out}/demo.jsonl" in printed
    assert "exact [95% CI]" in printed  # the leakage part's table
    kinds = Counter(r.get("kind", "leakage") for r in records)
    assert kinds == {"bound": 1, "attack": 2, "leakage": 3}
    leaks = [r for r in records if "kind" not in r]
    assert [(r["p"], r["noise_std"], r["candidates"]) for r in leaks] == [
        (0.5, 0, 8),
        (0.5, 0.01, 8),
        (0.5, 0.01, 4),
    ]
    assert all(v is None for v in leaks[1]["estimates_bits"].values())
    assert all(v is not None for v in leaks[2]["estimates_bits"].values())
    assert "HMINE bits" in printed  # the estimator part's table
    before = results.read_text()
    rerun = [*argv, *TINY_LEAKAGE, *options, "--no-figure"]
    assert cli.main(rerun) == 0  # resumes: nothing appended, the leakage part included
    assert results.read_text() == before


def test_no_leakage_skips_the_leakage_part_and_its_figure(tmp_path, monkeypatch):
    monkeypatch.setattr(cli, "SUBCOMMANDS", ("demo",))
    argv = ["demo", "--rates", "0", "--images", "1", "--iterations", "1", "--stats-samples", "8"]
    assert cli.main([*argv, "--no-leakage", "--out", str(tmp_path)]) == 0
    assert {f for f in files_under(tmp_path) if not f.startswith("reconstructions/")} == {
        "demo.jsonl",
        "demo_bound_vs_nmi.png",
        "demo_bound_vs_nmi.pdf",
        "demo_reconstructions.png",
        "demo_reconstructions.pdf",
    }
    assert all("kind" in r for r in ResultStore(tmp_path / "demo.jsonl").records())


def test_leakage_part_settings_leave_the_attack_jobs_fingerprint_alone():
    # Old demo stores (written before the leakage part existed) resume: the leakage
    # fields are not hashed into the attack jobs' keys, and every one of them is a field.
    base = DemoConfig(**TINY)
    assert set(LEAKAGE_FIELDS) <= set(base.__dataclass_fields__)
    changed = DemoConfig(
        **TINY,
        leakage_rates=(0.2,),
        noise_stds=(0.5,),
        candidates=9,
        leakage_samples=7,
        leakage_targets=3,
        leakage_iterations=2,
        estimate_candidates=5,
        estimate_rates=(0.1,),
        estimate_draws=20,
        estimate_steps=3,
    )
    assert changed.fingerprint() == base.fingerprint()
    assert changed.leakage_config().fingerprint() != base.leakage_config().fingerprint()
    assert DemoConfig(**{**TINY, "seed": 4}).fingerprint() != base.fingerprint()
    assert DemoConfig(**TINY, leakage_rates=()).leakage_config() is None


def test_estimator_part_is_the_leakage_part_on_few_candidates_and_positive_noise():
    config = DemoConfig(**TINY, noise_stds=(0.0, 0.01, 0.1), estimate_candidates=6)
    main, estimates = config.leakage_config(), config.estimate_config()
    assert estimates.candidates == 6 and estimates.noise_stds == (0.01, 0.1)
    assert estimates.rates == config.estimate_rates and estimates.estimate_draws > 0
    assert (estimates.seed, estimates.client_lr) == (main.seed, main.client_lr)
    assert estimates.fingerprint() != main.fingerprint()  # its records never mix with main's
    assert DemoConfig(**TINY, noise_stds=(0.0,)).estimate_config() is None  # no noise
    assert DemoConfig(**TINY, estimate_rates=()).estimate_config() is None
    assert DemoConfig(**TINY, leakage_rates=()).estimate_config() is None


def test_leakage_part_studies_the_demo_model_masks_and_targets():
    config = DemoConfig(**TINY, leakage_rates=(0.5,), candidates=8)
    leakage_config = config.leakage_config()
    assert leakage_config.rates == (0.5,) and leakage_config.candidates == 8
    assert leakage_config.stats_samples == min(TINY["stats_samples"], 8)
    assert (leakage_config.seed, leakage_config.client_lr) == (config.seed, config.client_lr)
    demo, study = demo_world(config), World(leakage_config)
    for name, weight in demo.params.items():
        torch.testing.assert_close(study.params[name], weight, rtol=0, atol=0)
    assert study.at_rate(0.5).mask.equals(demo.mask(0.5))
    assert study.at_rate(0.5).mask.num_kept() < demo.mask(0.0).num_kept()  # 0.5 really prunes
    # one seeded draw: the 2 targets and first statistics samples are the study's candidates
    assert len(demo.images) == TINY["num_images"] + TINY["stats_samples"]
    torch.testing.assert_close(study.images, demo.images[:8], rtol=0, atol=0)
    assert torch.equal(study.labels, demo.labels[:8])


def _record(p, s, *, exact, published, corrected, status, gaussian=None, estimates=None):
    return {
        "p": p,
        "noise_std": s,
        "candidates": 64,
        "ceiling_bits": 6.0,
        "exact_bits": exact,
        "exact_ci_bits": [exact - 0.1, exact + 0.2],
        "bayes_success": exact / 6.0,
        "bayes_success_ci": [exact / 6.0 - 0.05, exact / 6.0 + 0.01],
        "gaussian_bound_bits": gaussian,
        "theorem1_published_bits": published,
        "theorem1_corrected_bits": corrected,
        "theorem1_status": status,
        "fano_lower_bits": {"sgi": exact - 1.0, "gi": exact - 2.5},
        "dp_success_bound": min(1.0, exact / 6.0 + 0.3),
        "attack_success": {"sgi": 0.75 * p, "gi": 0.5 * p},
        "estimates_bits": estimates or {"ksg": None, "mine": None, "hmine": None},
    }


def _constructed_records():
    v, u, x = "valid", "vacuous", "violated"
    return [
        # out of grid order on purpose: the figure sorts by p within each s
        _record(0.5, 0.0, exact=6.0, published=6000.0, corrected=-3900.0,
                status={"published": u, "corrected": x}),
        _record(0.0, 0.0, exact=5.9, published=5000.0, corrected=4.0,
                status={"published": u, "corrected": x}),
        _record(0.9, 0.0, exact=5.0, published=7000.0, corrected=5.5,
                status={"published": u, "corrected": v}),
        _record(0.0, 0.01, exact=3.0, published=5000.0, corrected=2.0, gaussian=40.0,
                status={"published": u, "corrected": x},
                estimates={"ksg": {"bits": 2.5, "ci_bits": None}, "mine": None, "hmine": None}),
        _record(0.5, 0.01, exact=2.0, published=4.0, corrected=-10.0, gaussian=30.0,
                status={"published": v, "corrected": x},
                estimates={"ksg": {"bits": 1.5, "ci_bits": None}, "mine": None, "hmine": None}),
    ]  # fmt: skip


#: The bits axes' data range of the constructed records: ceiling 6 bits, times 1.15.
DATA_RANGE = (-0.06 * 6.9, 6.9)


def _lines(fig) -> dict[str, tuple[list, list]]:
    found = {}
    for ax in fig.axes:
        for line in ax.get_lines():
            if line.get_gid():
                assert line.get_gid() not in found, f"two lines named {line.get_gid()}"
                found[line.get_gid()] = (list(line.get_xdata()), list(line.get_ydata()))
    return found


def _legend_texts(fig) -> set[str]:
    return {t.get_text() for legend in fig.findobj(Legend) for t in legend.get_texts()}


def _axes_with(fig, gid: str):
    (ax,) = [a for a in fig.axes if any(line.get_gid() == gid for line in a.get_lines())]
    return ax


def _check_bits_series(fig, lines, name, tag, xs, values):
    """A series of a bits panel: on-scale values on its line, each off-scale one an arrow
    on the edge at its x with its value printed, never a point off the axis."""
    gid = f"{name}/{tag}"
    ax = _axes_with(fig, gid)
    low, high = DATA_RANGE
    line_x, line_y = lines[gid]
    assert line_x == xs, gid
    arrows = {
        side: lines.get(f"off_scale/{gid}/{side}", ([], []))[0] for side in ("above", "below")
    }
    texts = [t.get_text() for t in ax.texts]
    for x, value, drawn in zip(xs, values, line_y, strict=True):
        if low <= value <= high:
            assert drawn == value and x not in arrows["above"] + arrows["below"], (gid, x)
        else:
            assert math.isnan(drawn), (gid, x)  # off scale: the line breaks there
            assert x in arrows["above" if value > high else "below"], (gid, x)
            assert compact(value) in texts, (gid, value)


def test_leakage_figure_draws_every_quantity_from_the_records():
    records = _constructed_records()
    fig = plot_leakage_bits(records)
    assert readability_problems(fig) == []
    lines = _lines(fig)
    drawn = set()
    for s in (0.0, 0.01):
        tag = f"s={s:g}"
        rows = sorted((r for r in records if r["noise_std"] == s), key=lambda r: r["p"])
        ps = [r["p"] for r in rows]
        bits = {
            "exact": [r["exact_bits"] for r in rows],
            "fano_sgi": [r["fano_lower_bits"]["sgi"] for r in rows],
            "fano_gi": [r["fano_lower_bits"]["gi"] for r in rows],
            "theorem1_published": [r["theorem1_published_bits"] for r in rows],
            "theorem1_corrected": [r["theorem1_corrected_bits"] for r in rows],
        }
        expected = {
            "ceiling": [r["ceiling_bits"] for r in rows],
            "bayes_success": [r["bayes_success"] for r in rows],
            "dp_success_bound": [r["dp_success_bound"] for r in rows],
            "attack_success_sgi": [r["attack_success"]["sgi"] for r in rows],
            "attack_success_gi": [r["attack_success"]["gi"] for r in rows],
            "chance": [1 / 64] * len(rows),
        }
        if s > 0:
            bits["gaussian_bound"] = [r["gaussian_bound_bits"] for r in rows]
            bits["estimate_ksg"] = [r["estimates_bits"]["ksg"]["bits"] for r in rows]
        for name, values in expected.items():
            assert lines[f"{name}/{tag}"] == (ps, values), name
            drawn.add(f"{name}/{tag}")
        for name, values in bits.items():
            _check_bits_series(fig, lines, name, tag, ps, values)
            drawn |= {
                g for g in lines if g.startswith((f"{name}/{tag}", f"off_scale/{name}/{tag}"))
            }
        # the status markers: each on-scale Theorem 1 point once, under its record's status
        low, high = DATA_RANGE
        for kind in ("published", "corrected"):
            for status in ("valid", "vacuous", "violated"):
                want = [
                    (r["p"], r[f"theorem1_{kind}_bits"])
                    for r in rows
                    if r["theorem1_status"][kind] == status
                    and low <= r[f"theorem1_{kind}_bits"] <= high
                ]
                gid = f"theorem1_{kind}/{status}/{tag}"
                assert list(zip(*lines.get(gid, ([], [])), strict=True)) == want, gid
                if want:
                    drawn.add(gid)
        # the bands are the records' intervals
        for band, field in (
            ("exact_ci", "exact_ci_bits"),
            ("bayes_success_ci", "bayes_success_ci"),
        ):
            (collection,) = [c for a in fig.axes for c in a.collections
                             if c.get_gid() == f"{band}/{tag}"]  # fmt: skip
            # the band's outline at each p is that record's interval (and only that)
            outline = collection.get_paths()[0].vertices
            for r in rows:
                at_p = {float(y) for x, y in outline if x == r["p"]}
                assert at_p == set(r[field]), (band, r["p"])
    # nothing drawn that the records lack: no Gaussian bound at s = 0, no MINE at all
    assert drawn == set(lines)
    # bits on a linear axis scaled to the leakage (the ceiling, 6 bits, and a margin),
    # with a shaded band above and below for the arrows of what lies beyond
    assert bits_data_range(records) == pytest.approx(DATA_RANGE)
    band = 0.3 * (DATA_RANGE[1] - DATA_RANGE[0])
    bit_axes = [_axes_with(fig, f"exact/s={s:g}") for s in (0.0, 0.01)]
    assert all(a.get_yscale() == "linear" for a in fig.axes)
    for ax in bit_axes:
        assert ax.get_ylim() == pytest.approx((DATA_RANGE[0] - band, DATA_RANGE[1] + band))
        assert all(DATA_RANGE[0] <= t <= DATA_RANGE[1] for t in ax.get_yticks())
        shaded = {p.get_gid(): p.get_y() for p in ax.patches if p.get_gid()}
        assert shaded["off_scale_band/above"] == pytest.approx(DATA_RANGE[1])
    # the ceiling is drawn as a band wider than the exact line, so that it shows behind it
    ceiling = next(line for line in bit_axes[0].get_lines() if line.get_gid() == "ceiling/s=0")
    exact = next(line for line in bit_axes[0].get_lines() if line.get_gid() == "exact/s=0")
    assert ceiling.get_linewidth() >= 3 * exact.get_linewidth()
    assert ceiling.get_zorder() < exact.get_zorder()
    # one encoding per meaning: the DP bound and GI differ in line style and colour
    dp = lines["dp_success_bound/s=0"]
    dp_line, gi_line = (
        next(line for a in fig.axes for line in a.get_lines() if line.get_gid() == gid)
        for gid in ("dp_success_bound/s=0", "attack_success_gi/s=0")
    )
    assert dp and dp_line.get_linestyle() != gi_line.get_linestyle()
    assert dp_line.get_color() != gi_line.get_color()
    assert len(fig.axes) == 2 + 2
    assert {
        "exact I(X; Y) (95% CI band)",
        "Theorem 1 corrected",
        "off scale (value printed)",
        "Fano lower bound from GI",
        "DP bound on any attack (Hayes et al. 2023)",
    } <= _legend_texts(fig)
    assert "digit" in fig._suptitle.get_text()
    plt.close(fig)


def test_leakage_figure_with_one_rate_draws_bits_against_the_noise():
    """One p: the x axis is s (at positions 0, 1, ... labelled with the values), not a p
    axis around one point; with one (p, s) too, every series has its own place."""
    records = [r for r in _constructed_records() if r["p"] == 0.0]
    fig = plot_leakage_bits(records)
    assert readability_problems(fig) == []
    lines = _lines(fig)
    ax = _axes_with(fig, "exact/p=0")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "0.01"]
    assert ax.get_xlabel() == "noise standard deviation s"
    rows = sorted(records, key=lambda r: r["noise_std"])
    _check_bits_series(fig, lines, "exact", "p=0", [0.0, 1.0], [r["exact_bits"] for r in rows])
    _check_bits_series(fig, lines, "fano_sgi", "p=0", [0.0, 1.0],
                       [r["fano_lower_bits"]["sgi"] for r in rows])  # fmt: skip
    plt.close(fig)

    one = [{**records[0], "dataset": "faces"}]
    fig = plot_leakage_bits(one)
    assert readability_problems(fig) == []
    ax = _axes_with(fig, "exact/p=0")
    fig.canvas.draw()
    at = {}
    for line in ax.get_lines():
        name = line.get_gid() or ""
        xs, ys = line.get_xdata(), line.get_ydata()
        if name.count("/") == 1 and "ceiling" not in name and xs.size and math.isfinite(ys[0]):
            at[name] = round(float(line.get_transform().transform((xs[0], ys[0]))[0]), 1)
    assert {"exact/p=0", "fano_sgi/p=0", "fano_gi/p=0"} <= set(at)
    assert len(set(at.values())) == len(at), at  # side by side, not on top of each other
    assert "one target face" in fig._suptitle.get_text()
    plt.close(fig)


def test_leakage_figure_draws_theorem1_by_sample_size_and_the_estimators():
    records = _constructed_records()
    for r in records:  # per p, Theorem 1 at n = 8, 16, 32 (only the p matters)
        r["theorem1_by_samples"] = [
            {
                "stats_samples": n,
                "theorem1_published_bits": 100.0 * n + r["p"],
                "theorem1_corrected_bits": -float(n) - r["p"],
            }
            for n in (8, 16, 32)
        ]
    small = [
        {**r, "candidates": 8, "exact_bits": r["exact_bits"] / 2}
        for r in records
        if r["noise_std"] > 0
    ]
    small[1]["estimates_bits"] = {"ksg": None, "mine": None, "hmine": None}
    small[0]["estimates_bits"] = {
        "ksg": {"bits": 1.25, "ci_bits": None},
        "mine": {"bits": 1.0, "ci_bits": [0.5, 1.5]},
        "hmine": None,
    }
    fig = plot_leakage_bits(records, small)
    lines = _lines(fig)
    for p in (0.0, 0.5, 0.9):
        assert lines[f"theorem1_by_samples_published/p={p:g}"] == (
            [8, 16, 32],
            [800.0 + p, 1600.0 + p, 3200.0 + p],
        )
        assert lines[f"theorem1_by_samples_corrected/p={p:g}"] == (
            [8, 16, 32],
            [-8.0 - p, -16.0 - p, -32.0 - p],
        )
    assert lines["theorem1_by_samples_ceiling"] == ([8, 32], [6.0, 6.0])
    rows = sorted(small, key=lambda r: r["p"])
    assert lines["estimator_panel/exact/s=0.01"] == (
        [r["p"] for r in rows],
        [r["exact_bits"] for r in rows],
    )
    # an estimate is drawn where the small study has one, and nowhere else
    assert lines["estimator_panel/ksg/s=0.01"] == ([0.0], [1.25])
    assert lines["estimator_panel/mine/s=0.01"] == ([0.0], [1.0])
    assert "estimator_panel/hmine/s=0.01" not in lines
    # the panel draws the leakage it compares Theorem 1 with: the exact value per p (at
    # the lowest s), on the bound's scale and in the zoom on the leakage's scale
    for p in (0.0, 0.5, 0.9):
        exact = min((r for r in records if r["p"] == p), key=lambda r: r["noise_std"])
        for prefix in ("", "zoom/"):
            gid = f"{prefix}theorem1_by_samples_exact/p={p:g}"
            assert lines[gid] == ([8, 32], [exact["exact_bits"]] * 2), gid
    zoom = _axes_with(fig, "zoom/theorem1_by_samples_exact/p=0")
    assert zoom.get_ylim() == pytest.approx(DATA_RANGE)
    assert all(a.get_yscale() == "linear" for a in fig.axes)
    # bits panels, success panels, Theorem 1 and its zoom, the estimators
    assert len(fig.axes) == 2 + 2 + 2 + 1
    assert readability_problems(fig) == []
    assert {"exact I(X; Y)", "p = 0.5", "KSG (95% CI)", "s = 0.01"} <= _legend_texts(fig)
    plt.close(fig)


def test_leakage_figure_rejects_no_records():
    with pytest.raises(ValueError, match="records"):
        plot_leakage_bits([])


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("leakage_rates", (1.5,)),
        ("noise_stds", (-0.1,)),
        ("noise_stds", ()),
        ("candidates", 1),
        ("candidates", 1798),
        ("leakage_samples", 1),
        ("leakage_targets", 0),
        ("leakage_iterations", 0),
        ("estimate_candidates", 1),
        ("estimate_rates", (1.5,)),
        ("estimate_draws", 8),
        ("estimate_steps", 0),
        ("pruning_rates", (1.5,)),
        ("pruning_rates", (-0.1,)),
        ("pruning_rates", ()),
        ("batch_size", 0),
        ("attacks", ("dlg",)),
        ("client_lr", 0.0),
        ("num_images", 0),
        ("pruning", "snip"),
        ("device", "tpu"),
    ],
)
def test_bad_configuration_is_a_clear_value_error(field, value):
    with pytest.raises(ValueError, match=field):
        DemoConfig(**{field: value})


@pytest.mark.parametrize("changes", [{"batch_size": 2}, {"pruning": "magnitude"}])
def test_leakage_part_needs_one_image_and_random_pruning(changes):
    with pytest.raises(ValueError, match=r"'leakage_rates'.*--no-leakage"):
        DemoConfig(**changes)
    assert DemoConfig(**changes, leakage_rates=()).leakage_config() is None
