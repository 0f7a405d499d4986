"""The audit of a user's own model (sims.audit, ``pruneleak audit``): its numbers against the
library functions called directly, BatchNorm, the report files and the command line."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from torch import nn

from pruneleak.bounds import leakage, priprune
from pruneleak.sims.audit import AuditResult, audit
from pruneleak.sims.cli import main
from pruneleak.sims.fl.release import release_vectors
from pruneleak.sims.gradients.statistics import gradient_statistics
from pruneleak.sims.pruning.mask import Mask

#: Few draws and iterations: the attacks' quality is not under test here.
FAST = {"samples": 512, "attack_targets": 2, "attack_iterations": 3, "device": "cpu"}
LR = 0.25


def mlp(seed: int = 0) -> nn.Module:
    """A 2-layer sigmoid MLP on 1x8x8 images, 3 classes (defined here, not packaged)."""
    torch.manual_seed(seed)
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 12), nn.Sigmoid(), nn.Linear(12, 3))


def data(n: int = 12, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return torch.rand((n, 1, 8, 8), generator=generator), torch.arange(n) % 3


def half_mask(model: nn.Module, seed: int = 1) -> Mask:
    """Keeps each weight of the linear layers with probability 1/2, every bias."""
    generator = torch.Generator().manual_seed(seed)
    keep = {
        name: torch.rand(t.shape, generator=generator) < 0.5
        if t.ndim >= 2
        else torch.ones_like(t, dtype=torch.bool)
        for name, t in model.named_parameters()
    }
    return Mask(keep)


@pytest.fixture(scope="module")
def setup():
    model = mlp()
    images, labels = data()
    mask = half_mask(model)
    # the independent route: the release vectors and Theorem 1's statistics directly
    params = {name: t.detach() for name, t in model.named_parameters()}
    releases = release_vectors(model, params, mask, images, labels, lr=LR).numpy()
    stats = gradient_statistics(model, mask.apply(params), images, labels, mask=mask)
    return model, images, labels, mask, releases, stats


def test_numbers_match_the_library_called_directly(setup):
    """Exact bits (s = 0: exact), ceiling, Theorem 1 (both) with status, the Gaussian
    bound (s > 0) and the interval of the Monte Carlo bits, against bounds.* directly."""
    model, images, labels, mask, releases, stats = setup
    m, b = len(images), 2
    result = audit(model, images, labels, mask=mask, lr=LR, batch_size=b, **FAST)
    assert isinstance(result, AuditResult)
    r = result.record
    direct = leakage.batch_leakage(releases, 0.0, b)
    assert r["exact_method"] == direct.method == "exact"
    assert r["exact_bits"] == pytest.approx(direct.bits, abs=1e-9)
    assert r["ceiling_bits"] == pytest.approx(math.log2(math.comb(m, b)), abs=1e-12)
    assert result.ceiling_bits == r["ceiling_bits"]
    p = mask.sparsity()
    inputs = {"p": p, "B": b, "d_star": stats.d_star, "delta": stats.delta}
    published = float(priprune.single_round_bound(**inputs, unit="bits"))
    d = sum(t.numel() for t in model.parameters())
    corrected = float(priprune.single_round_bound_corrected(d=d, **inputs, unit="bits"))
    # float64 per-sample gradients in another order of the same candidates: round-off only
    assert r["theorem1_published_bits"] == pytest.approx(published, rel=1e-9)
    assert r["theorem1_corrected_bits"] == pytest.approx(corrected, rel=1e-9)
    fano = max(r["fano_lower_bits"].values())
    for kind, bound in (("published", published), ("corrected", corrected)):
        expected = leakage.theorem1_status(
            bound,
            ceiling_bits=r["ceiling_bits"],
            exact_low_bits=r["exact_ci_bits"][0],
            lower_bound_bits=fano,
        )
        assert result.theorem1_status[kind] == expected
        assert expected in result.verdict()
    assert f"{r['exact_bits']:.4g} bits" in result.verdict()

    s = 0.05
    noisy = audit(model, images, labels, mask=mask, lr=LR, batch_size=b, noise_std=s, **FAST)
    n = noisy.record
    correction = (m - b) / (b * (m - 1))  # the batch mean's finite-population correction
    gaussian = leakage.gaussian_channel_bound_bits(releases * math.sqrt(correction), s)
    assert n["gaussian_bound_bits"] == pytest.approx(gaussian, rel=1e-9)
    mc = leakage.batch_leakage(releases, s, b, samples=FAST["samples"], seed=123)
    # two Monte Carlo estimates of one I(X; Y): their 95 % intervals overlap
    assert n["exact_ci_bits"][0] <= mc.ci_bits[1] and mc.ci_bits[0] <= n["exact_ci_bits"][1]
    assert n["exact_ci_bits"][1] <= n["ceiling_bits"] + 1e-12


def test_report_files(setup, tmp_path):
    model, images, labels, mask, *_ = setup
    result = audit(model, images, labels, mask=mask, noise_std=0.01, **FAST)
    paths = result.write(tmp_path / "report")
    page = paths["html"].read_text()
    assert "data:image/png;base64," in page and "http" not in page.replace("http-equiv", "")
    text = paths["markdown"].read_text()
    assert result.verdict() in text and "| bits |" in text
    saved = json.loads(paths["json"].read_text())  # allow_nan=False when written
    assert saved["record"]["exact_bits"] == result.exact_bits
    assert {p.name for p in paths["figures"]} >= {"audit_bits.png", "audit_reconstructions.png"}


def test_batchnorm_runs_in_eval_mode_and_the_model_is_untouched():
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Flatten(),
        nn.Linear(64, 12),
        nn.BatchNorm1d(12),
        nn.Dropout(0.5),
        nn.Sigmoid(),
        nn.Linear(12, 3),
    )
    model.train()(torch.rand(32, 1, 8, 8))  # running statistics of their own
    before = {k: v.clone() for k, v in model.state_dict().items()}
    images, labels = data()
    result = audit(model, images, labels, p=0.3, **FAST)
    assert result.eval_mode == ("2 (BatchNorm1d: running statistics)", "3 (Dropout: off)")
    assert math.isfinite(result.exact_bits)
    assert model.training
    for key, value in model.state_dict().items():
        torch.testing.assert_close(value, before[key])

    no_stats = nn.Sequential(
        nn.Flatten(), nn.Linear(64, 3), nn.BatchNorm1d(3, track_running_stats=False)
    )
    with pytest.raises(ValueError, match="BatchNorm module '2' without running statistics"):
        audit(no_stats, images, labels, **FAST)


def test_bad_inputs_name_the_parameter(setup):
    model, images, labels, *_ = setup
    wrong = Mask({"1.weight": torch.ones(12, 64, dtype=torch.bool)})
    with pytest.raises(ValueError, match=r"'mask' parameter of audit.*missing"):
        audit(model, images, labels, mask=wrong, **FAST)
    with pytest.raises(ValueError, match="'labels' parameter of audit must be 12 integer"):
        audit(model, images, labels[:-1], **FAST)
    with pytest.raises(ValueError, match=r"'labels' parameter of audit must be in \[0, 2\]"):
        audit(model, images, labels + 5, **FAST)
    with pytest.raises(ValueError, match="'images' parameter of audit must have finite"):
        audit(model, images * 2, labels, **FAST)


# ---- the command line ----------------------------------------------------------------

FACTORY = """
import torch
from torch import nn


def make():
    torch.manual_seed(0)
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 12), nn.Sigmoid(), nn.Linear(12, 3))
"""
CLI_FAST = ["--samples", "256", "--attack-targets", "2", "--iterations", "2", "--device", "cpu"]


@pytest.fixture
def factory(tmp_path, monkeypatch):
    folder = tmp_path / "code"
    folder.mkdir()
    (folder / "audit_tiny_model.py").write_text(FACTORY)
    monkeypatch.syspath_prepend(str(folder))
    return "audit_tiny_model:make"


def _printed_matches_json(out: str, folder) -> None:
    saved = json.loads((folder / "audit.json").read_text())
    for row in saved["summary"]:
        value = "n/a" if row["value"] is None else f"{row['value']:.6g}"
        line = f"{row['quantity']:<42} {value:>12}  {row['unit']}"
        assert line in out.splitlines()
    assert saved["verdict"] in out


def test_cli_on_an_npz(factory, tmp_path, capsys):
    images, labels = data(10)
    np.savez(tmp_path / "c.npz", images=images.numpy(), labels=labels.numpy())
    out = tmp_path / "out"
    argv = ["audit", "--model", factory, "--data", str(tmp_path / "c.npz"), "--out", str(out)]
    assert main([*argv, "--noise", "0.01", "--batch-size", "2", *CLI_FAST]) == 0
    for name in ("audit.md", "audit.html", "audit.json"):
        assert (out / name).is_file()
    _printed_matches_json(capsys.readouterr().out, out)


def test_cli_on_a_folder_of_pngs_with_a_mask_file(factory, tmp_path, capsys):
    from PIL import Image

    images, labels = data(9)
    for k, (x, y) in enumerate(zip(images, labels, strict=True)):
        folder = tmp_path / "png" / f"class{int(y)}"
        folder.mkdir(parents=True, exist_ok=True)
        Image.fromarray((x[0].numpy() * 255).astype(np.uint8), mode="L").save(folder / f"{k}.png")
    model = mlp()
    mask = half_mask(model)
    np.savez(tmp_path / "mask.npz", **{k: v.numpy() for k, v in mask.keep.items()})
    out = tmp_path / "out"
    argv = ["audit", "--model", factory, "--data", str(tmp_path / "png"), "--out", str(out)]
    assert main([*argv, "--mask", str(tmp_path / "mask.npz"), *CLI_FAST]) == 0
    _printed_matches_json(capsys.readouterr().out, out)
    saved = json.loads((out / "audit.json").read_text())
    assert saved["record"]["candidates"] == 9
    assert saved["record"]["p"] == pytest.approx(mask.sparsity())


@pytest.mark.parametrize(
    ("model", "data_kind", "message"),
    [
        ("nomodule_xyz:make", "npz", "--model option ('model' of audit) must name an importable"),
        ("missing.py", "npz", "missing.py: No such file"),
        (None, "mismatch", "--data option ('images' of audit) must hold one label per"),
        (None, "badmask", "--mask option ('mask' of audit) must have the model's parameter"),
    ],
)
def test_cli_bad_inputs_exit_2_naming_the_option(
    factory, tmp_path, capsys, model, data_kind, message
):
    images, labels = data(10)
    if data_kind == "mismatch":
        labels = labels[:-1]
    np.savez(tmp_path / "c.npz", images=images.numpy(), labels=labels.numpy())
    argv = ["audit", "--model", model or factory, "--data", str(tmp_path / "c.npz")]
    if data_kind == "badmask":
        np.savez(tmp_path / "m.npz", **{"1.weight": np.ones((3, 3), dtype=bool)})
        argv += ["--mask", str(tmp_path / "m.npz")]
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--out", str(tmp_path / "out"), *CLI_FAST])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.filterwarnings("ignore:`torch.jit:DeprecationWarning")
def test_cli_refuses_a_torchscript_model_in_one_line(tmp_path, capsys):
    """A TorchScript file loads (torch.jit.load) but cannot be called with substituted
    weights: exit 2, the message says so and names --model."""
    torch.jit.save(torch.jit.script(mlp()), tmp_path / "model.pt")
    images, labels = data(6)
    np.savez(tmp_path / "c.npz", images=images.numpy(), labels=labels.numpy())
    argv = ["audit", "--model", str(tmp_path / "model.pt"), "--data", str(tmp_path / "c.npz")]
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--out", str(tmp_path / "out"), *CLI_FAST])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--model option" in err and "TorchScript" in err


def test_a_dataset_of_pairs_gives_the_numbers_of_its_tensors(setup):
    """A torch Dataset of (image, label) pairs is the same candidate set as its tensors."""
    model, images, labels, mask, *_ = setup
    dataset = torch.utils.data.TensorDataset(images, labels)
    options = {**FAST, "attack_iterations": 1}
    from_tensors = audit(model, images, labels, mask=mask, **options)
    from_dataset = audit(model, dataset, mask=mask, **options)
    assert from_dataset.exact_bits == from_tensors.exact_bits
    assert from_dataset.record["theorem1_published_bits"] == pytest.approx(
        from_tensors.record["theorem1_published_bits"], rel=1e-12
    )
