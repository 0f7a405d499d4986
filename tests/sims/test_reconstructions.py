"""Reconstructions kept beside the results, the grid of originals against them, and the
demo on the faces that draws one."""

import math
from importlib import resources

import matplotlib.pyplot as plt
import numpy as np
import pytest

from pruneleak.sims import cli
from pruneleak.sims.cli.sweep import main as sweep_main
from pruneleak.sims.data.datasets import load_faces, load_patches
from pruneleak.sims.experiments.demo import DemoConfig
from pruneleak.sims.plots.reconstructions import plot_reconstruction_grid, shared_original_rows
from pruneleak.sims.plots.style import readability_problems
from pruneleak.sims.store.reconstructions import (
    load_reconstructions,
    reconstruction_path,
    save_reconstructions,
)
from pruneleak.sims.store.results import ResultStore
from pruneleak.sims.sweep import load_config


def _images(seed: int, shape) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0, 1, size=shape).astype(np.float32)


def test_saved_reconstructions_round_trip_under_their_key(tmp_path):
    batch, recs = _images(0, (3, 3, 5, 5)), _images(1, (3, 3, 5, 5))
    path = save_reconstructions(tmp_path, "fp/sgi/p=0.5/target=1", batch, recs)
    assert path == tmp_path / "fp" / "sgi" / "p=0.5" / "target=1.npz"
    assert [p.name for p in path.parent.iterdir()] == ["target=1.npz"]  # no temporary left
    originals, reconstructions = load_reconstructions(tmp_path, "fp/sgi/p=0.5/target=1")
    # float16 keeps 11 significant bits: rounding moves a value in [0, 1] by <= 2**-12
    np.testing.assert_allclose(originals, batch, rtol=0, atol=2**-12)
    np.testing.assert_allclose(reconstructions, recs, rtol=0, atol=2**-12)
    assert np.abs(originals - reconstructions).max() > 0.1  # not the same array twice
    assert load_reconstructions(tmp_path, "fp/gi/p=0.5/target=1") is None


@pytest.mark.parametrize("key", ["", "../x", "/abs", "a/./b"])
def test_keys_outside_the_folder_are_refused(tmp_path, key):
    with pytest.raises(ValueError, match="'key' parameter of reconstruction_path"):
        reconstruction_path(tmp_path, key)


def test_saving_refuses_images_outside_the_unit_interval_or_of_another_shape(tmp_path):
    good = _images(0, (2, 1, 4, 4))
    with pytest.raises(ValueError, match=r"'originals' .* \[0, 1\]"):
        save_reconstructions(tmp_path, "k", good + 1, good)
    with pytest.raises(ValueError, match=r"'reconstructions' .* shape of 'originals'"):
        save_reconstructions(tmp_path, "k", good, good[:1])


def _tiles(fig) -> list[np.ndarray]:
    return [ax.get_images()[0].get_array() for ax in fig.axes if ax.get_images()]


@pytest.mark.parametrize("channels", [1, 3])
def test_grid_draws_originals_on_top_and_one_row_per_setting_with_psnr(channels):
    originals = _images(2, (5, channels, 6, 6))
    noisy = np.clip(originals + 0.1 * (_images(3, originals.shape) - 0.5), 0, 1)
    settings = {"SGI p=0": originals, "GI p=0.9": noisy}
    fig = plot_reconstruction_grid(originals, settings, max_images=4)
    assert readability_problems(fig) == []
    tiles = _tiles(fig)
    assert len(tiles) == (1 + 2) * 4  # 4 of the 5 columns, originals and two settings
    tile_shape = (6, 6) if channels == 1 else (6, 6, 3)
    assert all(tile.shape == tile_shape for tile in tiles)
    np.testing.assert_array_equal(
        np.asarray(tiles[4 + 4 + 1]).reshape(-1), noisy[1].transpose(1, 2, 0).reshape(-1)
    )
    labels = [ax.get_xlabel() for ax in fig.axes if ax.get_images()]
    assert labels[:4] == [""] * 4 and labels[4:8] == ["inf dB"] * 4  # exact: infinite PSNR
    for k in range(4):  # PSNR on [0, 1]: 10 log10(1 / MSE), computed here independently
        mse = float(np.mean((noisy[k].astype(np.float64) - originals[k]) ** 2))
        assert labels[8 + k] == f"{10 * math.log10(1 / mse):.1f} dB"
    plt.close(fig)


def test_grid_refuses_reconstructions_of_other_images():
    with pytest.raises(ValueError, match=r"'reconstructions_by_setting' .* originals' shape"):
        plot_reconstruction_grid(_images(0, (2, 1, 4, 4)), {"a": _images(1, (3, 1, 4, 4))})
    with pytest.raises(ValueError, match="at least one setting"):
        plot_reconstruction_grid(_images(0, (2, 1, 4, 4)), {})


def test_rows_keep_only_the_settings_that_attacked_the_first_entrys_images():
    a, b, r = _images(0, (2, 1, 4, 4)), _images(1, (2, 1, 4, 4)), _images(2, (2, 1, 4, 4))
    originals, rows = shared_original_rows(
        [("x", a, r), ("y", b, r), ("z", a.copy(), b), ("w", a[:1], r[:1])]
    )
    assert originals is a and list(rows) == ["x", "z"] and rows["z"] is b
    assert shared_original_rows([]) is None


def test_digits_fingerprints_are_those_of_the_stores_written_before_other_data_sets():
    # Literals printed by the code of commit 4e3b861 (before --dataset): old demo stores
    # must resume under the same keys, as long as the computation behind them is the same.
    tiny = DemoConfig(
        pruning_rates=(0.0, 0.9), num_images=2, attack_iterations=15, stats_samples=16, seed=3
    )
    assert DemoConfig().fingerprint() == "3cc8ed2de471a37d"
    assert tiny.fingerprint() == "f7b9ca265dce1577"
    # The leakage parts' records changed with issue 29 (float64 releases, intervals that
    # cover, an independent Monte Carlo stream per (p, s), the release mechanism in the
    # configuration): new keys, so that a rerun recomputes them instead of reading back
    # records this code would not write (the old ones stay, under their old keys).
    assert DemoConfig().leakage_config().fingerprint() == "9fc1ef071ce960c5"
    assert DemoConfig().estimate_config().fingerprint() == "7136c591f9ca9470"
    assert DemoConfig(dataset="faces").fingerprint() != DemoConfig().fingerprint()


def test_quick_demo_on_the_faces_writes_records_reconstructions_and_figures(tmp_path, capsys):
    argv = [
        "demo", "--dataset", "faces", "--quick", "--out", str(tmp_path),
        # the quick settings cut further, for the test's time: one rate, two faces
        "--rates", "0", "--images", "2", "--iterations", "3", "--stats-samples", "8",
        "--leakage-rates", "0.5", "--noise", "0", "--candidates", "8", "--samples", "16",
        "--leakage-targets", "1", "--leakage-iterations", "1",
    ]  # fmt: skip
    assert cli.main(argv) == 0
    records = list(ResultStore(tmp_path / "demo.jsonl").records())
    assert {r.get("kind", "leakage") for r in records} == {"bound", "attack", "leakage"}
    assert all(r["dataset"] == "faces" for r in records)
    attacks = [r for r in records if r.get("kind") == "attack"]
    assert sorted(r["attack"] for r in attacks) == ["gi", "gi", "sgi", "sgi"]
    faces = load_faces().images.numpy()
    for record in attacks:
        originals, reconstructions = load_reconstructions(
            tmp_path / "reconstructions", record["key"]
        )
        assert originals.shape == reconstructions.shape == (1, 1, 25, 25)
        # the kept target is one of the 200 faces (to float16's rounding)
        assert np.abs(faces - originals).reshape(200, -1).max(axis=1).min() <= 2**-12
    for name in ("demo_reconstructions", "demo_bound_vs_nmi", "demo_leakage_bits"):
        assert (tmp_path / f"{name}.png").is_file() and (tmp_path / f"{name}.pdf").is_file()
    assert "demo_reconstructions.png" in capsys.readouterr().out


def test_quick_patches_sweep_keeps_each_jobs_images_and_draws_its_panel(tmp_path, capsys):
    packaged = resources.files("sims.sweep").joinpath("configs", "quick_patches.toml").read_text()
    assert [job.dataset for job in load_config("quick_patches").jobs()] == ["patches"] * 6
    # the packaged sweep with 2 targets and 5 attack iterations, for the test's time
    tiny = packaged.replace("targets = 4", "targets = 2").replace(
        "iterations = 200", "iterations = 5"
    )
    assert "targets = 2" in tiny and "iterations = 5" in tiny
    path = tmp_path / "quick_patches.toml"
    path.write_text(tiny)
    out = tmp_path / "out"
    assert sweep_main([str(path), "--max-jobs", "1", "--figures", "--out", str(out)]) == 0
    assert "quick_patches: 1 of 6 jobs recorded" in capsys.readouterr().out
    (record,) = ResultStore(out / "quick_patches.jsonl").records()
    originals, reconstructions = load_reconstructions(out / "reconstructions", record["key"])
    assert originals.shape == reconstructions.shape == (record["n_uploads"], 3, 32, 32)
    patches = load_patches().images.numpy().reshape(755, -1)
    # each kept original is one of the patches (to float16's rounding), each a different one
    nearest = [np.abs(patches - image.reshape(-1)).max(axis=1) for image in originals]
    assert all(d.min() <= 2**-12 for d in nearest)
    assert len({int(d.argmin()) for d in nearest}) == len(originals)
    assert (out / "quick_patches_reconstructions_p.png").is_file()


def test_table_keeps_every_setting_with_its_own_originals_and_wraps_at_the_page(tmp_path):
    """The B panel's settings attacked 1, 2 and 4 images per target: each gets its column
    group with its own originals (none is dropped for attacking other images), the rows
    are the schemes, and groups too wide for the page wrap into a block below."""
    from pruneleak.sims.plots.reconstructions import (
        job_reconstruction_table,
        plot_reconstruction_table,
    )
    from pruneleak.sims.sweep.grid import SweepConfig
    from pruneleak.sims.sweep.job import job_key

    config = SweepConfig(
        name="table",
        grids=({"panel": "B", "pruning.scheme": ["random", "snip"],
                "fed.batch_size": [1, 2, 4]},),
    )  # fmt: skip
    jobs = config.panels()["B"]
    kept = {}
    for i, job in enumerate(jobs):
        b = job.fed.batch_size
        originals = _images(b, (2 * b, 1, 8, 8))  # two targets of B images
        reconstructions = np.clip(originals + 0.05 * _images(100 + i, originals.shape), 0, 1)
        save_reconstructions(tmp_path, job_key(job), originals, reconstructions)
        # as stored (float16): the figure shows and scores these
        kept[(job.pruning.scheme, f"B={b}")] = load_reconstructions(tmp_path, job_key(job))
    entries = job_reconstruction_table(jobs, tmp_path)
    assert [(row, column) for row, column, *_ in entries] == list(kept)
    fig = plot_reconstruction_table(entries, title="panel B")
    assert readability_problems(fig) == []
    tiles = {ax.get_gid(): ax for ax in fig.axes}
    for (scheme, column), (originals, reconstructions) in kept.items():
        n = len(originals)
        for k in range(n):
            np.testing.assert_allclose(
                tiles[f"original/{column}/{k}"].get_images()[0].get_array(),
                originals[k, 0],
            )  # fmt: skip
            ax = tiles[f"reconstruction/{scheme}/{column}/{k}"]
            np.testing.assert_allclose(ax.get_images()[0].get_array(), reconstructions[k, 0])
            mse = float(np.mean((reconstructions[k].astype(np.float64) - originals[k]) ** 2))
            assert ax.get_xlabel() == f"{10 * math.log10(1 / mse):.1f}"
        assert f"original/{column}/{n}" not in tiles
    # B = 4's eight tiles do not fit beside the others: a second block, below the first
    fig.canvas.draw()
    top = {g: tiles[f"original/{g}/0"].get_position().y0 for g in ("B=1", "B=2", "B=4")}
    assert top["B=1"] == top["B=2"] > top["B=4"]
    labels = {t.get_text() for t in fig.texts}
    assert {"random", "snip", "original", "B=1", "B=2", "B=4"} <= labels
    plt.close(fig)
