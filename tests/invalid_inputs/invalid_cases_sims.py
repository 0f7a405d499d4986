"""Invalid inputs of sims: rows of test_invalid_inputs.

Configurations (DemoConfig, TrainConfig, LeakageConfig, FedConfig, AttackConfig,
AttackJob and sweep files), models, masks and pruning schemes, the FL loop and the
training loops. Models "too large to fit" are refused from their shapes alone (built on
torch's meta device), so these rows allocate nothing.
"""

import math

import numpy as np
import torch
from invalid_case import ApiCase, CliCase

from pruneleak.sims.attacks import (
    DIGITS_ATTACK_MODEL,
    AttackConfig,
    DefenseAwareObserver,
    pseudo_gradient,
    recover_labels,
    sgi_attack,
)
from pruneleak.sims.core.runtime import generator
from pruneleak.sims.data.datasets import ImageDataset
from pruneleak.sims.experiments.consistency import consistency_rows, stratified_bootstrap_spearman
from pruneleak.sims.experiments.demo import DemoConfig
from pruneleak.sims.experiments.hmine import (
    HMineExperimentConfig,
    HMinePoint,
    make_client_task,
    run_study,
)
from pruneleak.sims.experiments.identifiability import IdentifiabilityConfig
from pruneleak.sims.experiments.leakage import LeakageConfig
from pruneleak.sims.experiments.prune_vs_noise import PruneVsNoiseConfig
from pruneleak.sims.experiments.train import TrainConfig, run_training
from pruneleak.sims.experiments.width_closeness import WidthClosenessConfig
from pruneleak.sims.experiments.width_closeness.errors import closeness_errors
from pruneleak.sims.fl.client import client_update
from pruneleak.sims.fl.server import FedConfig, run_federated
from pruneleak.sims.models import build_model, conv_net, lenet5, logistic_regression
from pruneleak.sims.pruning.mask import Mask, magnitude_mask, mask_from_scores, random_mask
from pruneleak.sims.pruning.schedule import train_sgd
from pruneleak.sims.pruning.schemes import PruneFL, RandomPruning, build_scheme
from pruneleak.sims.sweep.job import AttackJob
from pruneleak.sims.sweep.loading import load_config, read_config

_SWEEP = """name = "bad"
[base.model]
{model}
[base.fed]
{fed}
[[grid]]
pruning.p = [0.3]
"""


def _toml(tmp_path, name: str, content: str) -> str:
    path = tmp_path / name
    path.write_text(content)
    return str(path)


def _sweep_file(tmp_path, name: str, *, model: str = "", fed: str = "") -> str:
    return _toml(tmp_path, name, _SWEEP.format(model=model, fed=fed))


def _tiny_training(lr: float):
    """One FedSGD round of a small Conv-2 on the digits at learning rate ``lr``."""
    config = TrainConfig(
        model_options=(("width", 4), ("hidden", 16)),
        num_clients=4,
        fed=FedConfig(rounds=2, clients_per_round=2, batch_size=10, lr=lr),
        device="cpu",
    )
    return run_training(config, progress=False)


def _toy_federation(batch_size: int):
    """Two clients of 3 and 9 toy images under FedSGD with ``batch_size``."""
    data = ImageDataset(
        images=torch.rand(12, 1, 4, 4), labels=torch.arange(12) % 3, num_classes=3, name="toy"
    )
    model = logistic_regression(in_channels=1, image_size=4, num_classes=3)
    config = FedConfig(rounds=1, clients_per_round=2, batch_size=batch_size)
    clients = [np.arange(0, 3), np.arange(3, 12)]
    return run_federated(model, RandomPruning(0.5), data, clients, data, config, device="cpu")


def _tiny_sgd(images, labels, **options):
    model = lenet5(in_channels=1, image_size=8, num_classes=10)
    return train_sgd(model, images, labels, **{"epochs": 1, "batch_size": 4, **options})


def _digits8():
    return torch.rand(8, 1, 8, 8), torch.arange(8) % 10


def _logreg_batch():
    """A logistic regression, its parameters and a batch of two 4x4 images."""
    model = logistic_regression(in_channels=1, image_size=4, num_classes=3)
    params = dict(model.named_parameters())
    return model, params, torch.rand(2, 1, 4, 4), torch.tensor([0, 1])


def _update(lr: float):
    model, params, images, labels = _logreg_batch()
    return client_update(model, params, Mask.ones(params), images, labels, lr=lr)


def _closeness(**options) -> WidthClosenessConfig:
    return WidthClosenessConfig(widths=(10,), trials=5, input_dim=10, device="cpu", **options)


def _write_big_sweep(tmp_path) -> None:
    _sweep_file(tmp_path, "big.toml", model="hidden = 1000000000")


def _attack_with_classes(num_classes):
    """SGI on a one-digit update of the 10-class digits attack model, told ``num_classes``."""
    model = conv_net(in_channels=1, image_size=8, num_classes=10, **DIGITS_ATTACK_MODEL)
    weights = {name: t.detach() for name, t in model.named_parameters()}
    x, y = torch.rand(1, 1, 8, 8), torch.tensor([3])
    sent = client_update(model, weights, random_mask(weights, 0.3, seed=0), x, y, lr=0.25)
    config = AttackConfig.dlg(iterations=1)
    shape = (1, 1, 8, 8)
    return sgi_attack(
        model, weights, sent, batch_shape=shape, num_classes=num_classes, lr=0.25, config=config
    )


CASES: list[ApiCase | CliCase] = [
    # --- DemoConfig
    ApiCase(
        "sims-demo-duplicate-rates",
        lambda tmp: DemoConfig(pruning_rates=(0.5, 0.5)),
        ["pruning_rates", "0.5 twice"],
    ),
    ApiCase(
        "sims-demo-rates-not-a-sequence",
        lambda tmp: DemoConfig(pruning_rates=0.5),
        ["pruning_rates", "list or tuple", "0.5"],
    ),
    ApiCase(
        "sims-demo-attacks-a-string",
        lambda tmp: DemoConfig(attacks="sgi"),
        ["attacks", "list or tuple", "'sgi'"],
    ),
    ApiCase(
        "sims-demo-duplicate-attacks",
        lambda tmp: DemoConfig(attacks=("sgi", "sgi")),
        ["attacks", "'sgi' twice"],
    ),
    ApiCase(
        "sims-demo-targets-exceed-digits",
        lambda tmp: DemoConfig(num_images=1000, batch_size=8),
        ["num_images", "batch_size", "8000", "1797"],
    ),
    ApiCase(
        "sims-demo-stats-samples-exceed-digits",
        lambda tmp: DemoConfig(stats_samples=1790),
        ["stats_samples", "1790", "1797", "1798"],
    ),
    ApiCase(
        "sims-demo-lr-overflows-float32",
        lambda tmp: DemoConfig(client_lr=1e308),
        ["client_lr", "3.40282e+38", "1e+308"],
    ),
    ApiCase(
        "sims-demo-duplicate-noise",
        lambda tmp: DemoConfig(noise_stds=(0.0, 0.01, 0.0)),
        ["noise_stds", "0.0 twice"],
    ),
    ApiCase(
        "sims-demo-nan-noise",
        lambda tmp: DemoConfig(noise_stds=(math.nan,)),
        ["noise_stds", "[0, 5.31691e+36]", "nan"],
    ),
    ApiCase(
        "sims-demo-seed-beyond-torch",
        lambda tmp: DemoConfig(seed=2**64),
        ["seed", str(2**64)],
    ),
    # --- FedConfig, TrainConfig and training runs
    ApiCase(
        "sims-fed-lr-overflows", lambda tmp: FedConfig(lr=1e308), ["lr", "FedConfig", "1e+308"]
    ),
    ApiCase("sims-fed-lr-nan", lambda tmp: FedConfig(lr=math.nan), ["lr", "FedConfig", "nan"]),
    ApiCase(
        "sims-fed-batch-size-a-string",
        lambda tmp: FedConfig(batch_size="20"),
        ["batch_size", "integer", "'20'"],
    ),
    ApiCase(
        "sims-train-unknown-model-option",
        lambda tmp: TrainConfig(model_options=(("depth", 3),)),
        ["model_options", "'conv2'", "hidden", "depth"],
    ),
    ApiCase(
        "sims-train-duplicate-model-option",
        lambda tmp: TrainConfig(model_options=(("width", 3), ("width", 4))),
        ["model_options", "'width' twice"],
    ),
    ApiCase(
        "sims-train-model-options-not-pairs",
        lambda tmp: TrainConfig(model_options=("width",)),
        ["model_options", "(name, value) pairs", "'width'"],
    ),
    ApiCase(
        "sims-train-readjust-for-a-one-shot-scheme",
        lambda tmp: TrainConfig(pruning="snip", readjust_every=5),
        ["readjust_every", "'feddst'", "pruning='snip'"],
    ),
    ApiCase(
        "sims-train-more-clients-per-round-than-clients",
        lambda tmp: TrainConfig(num_clients=5, fed=FedConfig(clients_per_round=10)),
        ["fed.clients_per_round", "[1, 5]", "10"],
    ),
    ApiCase(
        "sims-train-diverging-lr",
        lambda tmp: _tiny_training(1e30),
        ["diverged", "round 1", "'lr'", "1e+30"],
    ),
    ApiCase(
        "sims-fl-batch-larger-than-a-client",
        lambda tmp: _toy_federation(4),
        ["batch_size", "client 0 holds 3", "Got 4"],
    ),
    ApiCase(
        "sims-train-sgd-diverging-lr",
        lambda tmp: _tiny_sgd(*_digits8(), lr=1e30),
        ["diverged", "epoch 1", "'lr'", "1e+30"],
    ),
    ApiCase(
        "sims-train-sgd-no-images",
        lambda tmp: _tiny_sgd(torch.rand(0, 1, 8, 8), torch.zeros(0, dtype=torch.int64)),
        ["images", "train_sgd", "B >= 1", "(0, 1, 8, 8)"],
    ),
    ApiCase(
        "sims-train-sgd-labels-too-few",
        lambda tmp: _tiny_sgd(torch.rand(8, 1, 8, 8), torch.zeros(7, dtype=torch.int64)),
        ["labels", "train_sgd", "(8,)"],
    ),
    ApiCase(
        "sims-train-sgd-label-out-of-range",
        lambda tmp: _tiny_sgd(torch.rand(8, 1, 8, 8), torch.full((8,), 10)),
        ["labels", "[0, 9]", "[10, 10]"],
    ),
    ApiCase("sims-client-lr-inf", lambda tmp: _update(math.inf), ["lr", "client_update", "inf"]),
    # --- models: options, and sizes that cannot fit (nothing is allocated)
    ApiCase(
        "sims-model-option-of-another-family",
        lambda tmp: build_model("vgg4", image_shape=(3, 32, 32), num_classes=10, hidden=3),
        ["options", "'vgg4'", "hidden"],
    ),
    ApiCase(
        "sims-model-hidden-too-large",
        lambda tmp: build_model("conv2", image_shape=(1, 28, 28), num_classes=62, hidden=10**9),
        ["hidden=1000000000", "parameters", "memory"],
    ),
    ApiCase(
        "sims-model-too-many-classes",
        lambda tmp: logistic_regression(in_channels=1, image_size=28, num_classes=10**10),
        ["num_classes=10000000000", "7,850,000,000,000 parameters", "memory"],
    ),
    ApiCase(
        "sims-model-too-deep",
        lambda tmp: conv_net(10**6, in_channels=1, image_size=8, num_classes=10, width=1),
        ["num_conv", "[1, 32]", "1000000"],
    ),
    ApiCase(
        "sims-model-image-shape-not-square",
        lambda tmp: build_model("conv2", image_shape=(1, 28, 27), num_classes=10),
        ["image_shape", "(C, H, H)", "(1, 28, 27)"],
    ),
    # --- LeakageConfig, AttackConfig
    ApiCase(
        "sims-leakage-duplicate-rates",
        lambda tmp: LeakageConfig(rates=(0.5, 0.5)),
        ["rates", "0.5 twice"],
    ),
    ApiCase(
        "sims-leakage-duplicate-sample-sizes",
        lambda tmp: LeakageConfig(candidates=64, theorem1_sample_sizes=(8, 8)),
        ["theorem1_sample_sizes", "8 twice"],
    ),
    ApiCase(
        "sims-leakage-noise-overflows-float32",
        lambda tmp: LeakageConfig(noise_stds=(0.0, 1e308)),
        ["noise_stds", "[0, 5.31691e+36]", "1e+308"],
    ),
    ApiCase(
        "sims-leakage-more-candidates-than-digits",
        lambda tmp: LeakageConfig(candidates=5000),
        ["candidates", "[2, 1797]", "5000"],
    ),
    ApiCase(
        "sims-attack-lr-overflows",
        lambda tmp: AttackConfig(lr=1e39),
        ["lr", "AttackConfig", "1e+39"],
    ),
    ApiCase(
        "sims-attack-input-std-zero",
        lambda tmp: AttackConfig(input_mean=(0.5,), input_std=(0.0,)),
        ["input_std[0]", "AttackConfig", "(0, ", "0.0"],
    ),
    ApiCase(
        "sims-attack-input-mean-without-std",
        lambda tmp: AttackConfig(input_mean=(0.5, 0.5)),
        ["input_std", "AttackConfig", "input_mean (2)", "Got 0"],
    ),
    ApiCase(
        "sims-attack-mask-dummy-not-bool",
        lambda tmp: AttackConfig(mask_dummy="no"),
        ["mask_dummy", "AttackConfig", "'no'"],
    ),
    ApiCase(
        "sims-recover-labels-batch-size-zero",
        lambda tmp: recover_labels({"w": torch.ones(10, 3)}, num_classes=10, batch_size=0),
        ["batch_size", "recover_labels", "0"],
    ),
    # --- AttackJob and sweep files
    ApiCase(
        "sims-job-idlg-with-a-batch",
        lambda tmp: AttackJob.from_fields({"inversion.label_mode": "idlg", "fed.batch_size": 2}),
        ["inversion.label_mode", "fed.batch_size=2"],
    ),
    ApiCase(
        "sims-job-model-too-large",
        lambda tmp: AttackJob.from_fields({"model.hidden": 10**9}),
        ["model.hidden=1000000000", "'digits'", "parameters", "memory"],
    ),
    ApiCase(
        "sims-job-field-of-wrong-type",
        lambda tmp: AttackJob.from_fields({"model.hidden": "big"}),
        ["model.hidden", "'hidden'", "'big'"],
    ),
    ApiCase(
        "sims-job-defense-unknown",
        lambda tmp: AttackJob.from_fields({"defense.name": "top"}),
        ["defense.name", "'name'", "DefenseSpec", "'top'"],
    ),
    ApiCase(
        "sims-job-defense-field-not-read",
        lambda tmp: AttackJob.from_fields({"defense.name": "random", "defense.alpha_init": 0.6}),
        ["defense.alpha_init", "'alpha_init'", "'random'", "0.6"],
    ),
    ApiCase(
        "sims-job-aware-attacker-with-gi",
        lambda tmp: AttackJob.from_fields({"attacker": "aware", "attack": "gi"}),
        ["'attacker'", "AttackJob", "'gi'"],
    ),
    ApiCase(
        "sims-defense-aware-observer-gradient-at",
        lambda tmp: DefenseAwareObserver(pseudo=True, gradient_at="sent"),
        ["gradient_at", "DefenseAwareObserver", "'sent'"],
    ),
    ApiCase(
        "sims-sweep-file-model-too-large",
        lambda tmp: read_config(_sweep_file(tmp, "big.toml", model="hidden = 1000000000")),
        ["big.toml", "model.hidden=1000000000", "parameters", "memory"],
    ),
    ApiCase(
        "sims-sweep-file-lr-a-string",
        lambda tmp: read_config(_sweep_file(tmp, "lr.toml", fed='lr = "fast"')),
        ["lr.toml", "fed.lr", "'fast'"],
    ),
    ApiCase(
        "sims-sweep-file-lr-overflows",
        lambda tmp: read_config(_sweep_file(tmp, "huge.toml", fed="lr = 1e308")),
        ["huge.toml", "fed.lr", "1e+308"],
    ),
    # --- the other studies
    ApiCase(
        "sims-hmine-client-larger-than-the-data",
        lambda tmp: HMineExperimentConfig(client_size=1000),
        ["client_size", "[2, 569]", "1000"],
    ),
    ApiCase(
        "sims-hmine-duplicate-study-values",
        lambda tmp: run_study(HMineExperimentConfig(), "batch_size", (3, 3)),
        ["values", "3 twice"],
    ),
    ApiCase(
        "sims-hmine-imbalance-on-digits",
        lambda tmp: make_client_task(
            HMineExperimentConfig(task="digits", device="cpu"), HMinePoint(positive_fraction=0.7)
        ),
        ["positive_fraction", "0.7", "task='digits'"],
    ),
    ApiCase(
        "sims-identifiability-duplicate-widths",
        lambda tmp: IdentifiabilityConfig(widths=(64, 64)),
        ["widths", "64 twice"],
    ),
    ApiCase(
        "sims-width-closeness-duplicate-eps",
        lambda tmp: WidthClosenessConfig(eps_ap=(0.05, 0.05)),
        ["eps_ap", "0.05 twice"],
    ),
    ApiCase(
        "sims-width-closeness-errors-overflow",
        lambda tmp: closeness_errors(_closeness(parameterisations=("fixed",), sigma=1e20), 10),
        ["'fixed'", "sigma=1e+20", "float32", "not finite"],
    ),
    ApiCase(
        "sims-width-closeness-width-cannot-fit",
        lambda tmp: closeness_errors(_closeness(), 10**12),
        ["m x d = 1000000000000 x 10", "memory"],
    ),
    ApiCase(
        "sims-prune-vs-noise-lr-overflows",
        lambda tmp: PruneVsNoiseConfig(lr=1e308),
        ["lr", "PruneVsNoiseConfig", "1e+308"],
    ),
    ApiCase(
        "sims-consistency-nan-observation",
        lambda tmp: stratified_bootstrap_spearman([1, math.nan, 3], [1, 2, 3], [0, 0, 0]),
        ["'x'", "finite", "1 NaN"],
    ),
    ApiCase(
        "sims-consistency-resamples-cannot-fit",
        lambda tmp: stratified_bootstrap_spearman(
            [1, 2, 3], [1, 2, 3], [0, 0, 0], n_resamples=10**15
        ),
        ["n_resamples", "1000000000000000", "indices", "memory"],
    ),
    ApiCase(
        "sims-consistency-duplicate-panels",
        lambda tmp: consistency_rows(load_config("quick_digits"), [], panels=("p", "p")),
        ["panels", "'p' twice"],
    ),
    ApiCase(
        "sims-sweep-file-grid-a-single-table",
        lambda tmp: read_config(_toml(tmp, "one.toml", 'name = "x"\n[grid]\npruning.p = [0.3]\n')),
        ["one.toml", "'grid'", "[[grid]]"],
    ),
    ApiCase(
        "sims-sweep-file-a-directory",
        lambda tmp: read_config(tmp),
        ["sweep configuration", "cannot be read", "directory"],
    ),
    ApiCase(
        "sims-sweep-config-not-a-path",
        lambda tmp: load_config(5),
        ["name_or_path", "load_config", "5"],
    ),
    # --- masks and pruning schemes
    ApiCase(
        "sims-mask-apply-other-shape",
        lambda tmp: Mask({"w": torch.ones(2, 2, dtype=torch.bool)}).apply({"w": torch.ones(3, 3)}),
        ["params", "Mask.apply", "(3, 3)", "(2, 2)"],
    ),
    ApiCase(
        "sims-mask-nan-scores",
        lambda tmp: mask_from_scores(
            {"w": torch.zeros(2, 2)}, {"w": torch.tensor([[math.nan, 1.0], [2.0, 3.0]])}, 0.5
        ),
        ["scores", "mask_from_scores", "'w'"],
    ),
    ApiCase(
        "sims-magnitude-mask-nan-weights",
        lambda tmp: magnitude_mask({"w": torch.full((3, 3), math.nan)}, 0.5),
        ["params", "magnitude_mask", "'w'"],
    ),
    ApiCase(
        "sims-random-mask-nothing-prunable",
        lambda tmp: random_mask({"b": torch.zeros(3)}, 0.5, seed=0),
        ["params", "random_mask", "prunable", "'b'"],
    ),
    ApiCase(
        "sims-scheme-unknown-option",
        lambda tmp: build_scheme("snip", 0.3, temperature=3.0),
        ["options", "'snip'", "temperature"],
    ),
    ApiCase(
        "sims-prunefl-cost-of-an-unknown-layer",
        lambda tmp: PruneFL(0.3, layer_costs={"fc9.weight": 2.0}).initial_mask(*_logreg_batch()),
        ["layer_costs", "classifier.0.weight", "fc9.weight"],
    ),
    ApiCase(
        "sims-generator-seed-beyond-torch",
        lambda tmp: generator(2**64),
        ["seed", "generator", str(2**64)],
    ),
    # --- the command line, refused before any work starts
    CliCase(
        "sims-cli-demo-duplicate-rates",
        ["demo", "--rates", "0.5", "0.5", "--images", "1", "--out", "{tmp}/demo"],
        ["pruning_rates", "0.5 twice"],
    ),
    CliCase(
        "sims-cli-demo-targets-exceed-digits",
        ["demo", "--images", "1000", "--batch-size", "8", "--out", "{tmp}/demo"],
        ["num_images", "batch_size", "8000", "1797"],
    ),
    CliCase(
        "sims-cli-train-lr-overflows",
        ["train", "--lr", "1e308", "--out", "{tmp}/train"],
        ["lr", "1e+308"],
    ),
    CliCase(
        "sims-cli-train-readjust-for-snip",
        ["train", "--pruning", "snip", "--readjust-every", "3", "--out", "{tmp}/train"],
        ["readjust_every", "pruning='snip'"],
    ),
    CliCase(
        "sims-cli-sweep-model-too-large",
        ["sweep", "{tmp}/big.toml", "--out", "{tmp}/sweep"],
        ["big.toml", "model.hidden=1000000000", "parameters"],
        setup=_write_big_sweep,
    ),
    ApiCase(
        "sims-attack-adam-lr-beyond-first-step",
        lambda tmp: AttackConfig.dlg(optimizer="adam", lr=1e38),
        ["'lr'", "optimizer='adam'", "3.40282e+37", "1e+38"],
    ),
    ApiCase(
        "sims-pseudo-gradient-lr-inf",
        lambda tmp: pseudo_gradient({"w": torch.ones(2)}, {"w": torch.zeros(2)}, lr=math.inf),
        ["'lr'", "pseudo_gradient", "inf"],
    ),
    ApiCase(
        "sims-pseudo-gradient-lr-beyond-float32",
        lambda tmp: pseudo_gradient({"w": torch.ones(2)}, {"w": torch.zeros(2)}, lr=1e39),
        ["'lr'", "3.40282e+38", "1e+39"],
    ),
    ApiCase(
        "sims-attack-num-classes-not-the-models",
        lambda tmp: _attack_with_classes(11),
        ["'num_classes'", "gradient_inversion", "[10, 10]", "11"],
    ),
]
