"""Invalid inputs of the leakage study: rows of test_invalid_inputs (issue 30).

``pruneleak leakage`` (and ``train``, ``demo``) on the command line and ``LeakageConfig`` /
``DPUploadRelease`` / ``per_client_mib`` from the API. Before these rows a count without
an upper limit ran for days or failed to allocate after the data and model were loaded,
a learning rate below float32's smallest normal hung, a data folder smaller than the
official files gave an IndexError, huge DP noise ended in a NaN critic, huge Gaussian
noise blamed the attack's step size, and the command line named the configuration's
field rather than the option typed. Each command-line row must name the option (and the
range or value); the rows that build the study's world use eight candidates and one
attack target, so they run in a few seconds.
"""

import math

import torch
from invalid_case import ApiCase, CliCase
from invalid_cases_files import _idx
from invalid_cases_releases import IMAGES, LABELS, _setting

from pruneleak.sims.core.functional import check_lr
from pruneleak.sims.data.formats import IDX_IMAGES_MAGIC, IDX_LABELS_MAGIC
from pruneleak.sims.defenses import FixedDefense, PriPruneDefense
from pruneleak.sims.experiments.leakage import LeakageConfig
from pruneleak.sims.fedltp import per_client_mib
from pruneleak.sims.fl.server import FedConfig
from pruneleak.sims.models import logistic_regression
from pruneleak.sims.pruning.mask import Mask
from pruneleak.sims.releases import (
    ClientSetting,
    DPUploadRelease,
    FixedDefenseRelease,
    PriPruneRelease,
)

OUT = ["--out", "{tmp}/out"]
LEAKAGE = ["leakage", *OUT]
# a study that builds its world in about a second: eight candidates, one attacked target
SMALL = ["--candidates", "8", "--p", "0.5", "--samples", "64", "--attack-targets", "1"]
SMALL += ["--iterations", "1"]


def _cli(case_id, options, *names, setup=None):
    return CliCase(f"leakage-cli-{case_id}", [*LEAKAGE, *options], names, setup)


def _api(case_id, call, *names, error=ValueError):
    """A row whose call ignores the temporary folder."""
    return ApiCase(f"leakage-api-{case_id}", lambda _tmp: call(), names, error)


def _forty_mnist_images(tmp):
    """An MNIST folder of 40 training and 40 test images (the official files hold 60,000)."""
    images = _idx(IDX_IMAGES_MAGIC, (40, 28, 28), bytes(range(40)) * 784)
    labels = _idx(IDX_LABELS_MAGIC, (40,), bytes(i % 10 for i in range(40)))
    folder = tmp / "mnist"
    folder.mkdir()
    for split in ("train", "t10k"):
        (folder / f"{split}-images-idx3-ubyte").write_bytes(images)
        (folder / f"{split}-labels-idx1-ubyte").write_bytes(labels)


def _dp_release(**options):
    """DP-SGD on a 4x4 logistic regression's one round, four candidates."""
    model = logistic_regression(in_channels=1, image_size=4, num_classes=2)
    params = {name: t.detach() for name, t in model.named_parameters()}
    setting = ClientSetting(model=model, params=params, mask=Mask.ones(params), lr=0.25)
    images = torch.rand(4, 1, 4, 4, generator=torch.Generator().manual_seed(0))
    return DPUploadRelease(setting, images, torch.tensor([0, 1, 0, 1]), **options)


CASES: list[ApiCase | CliCase] = [
    # --- counts without an upper limit ran for days or failed to allocate (now MAX_COUNTS)
    _cli("rounds-huge", ["--rounds", "1000000"], "--rounds", "[1, 1000]", "1000000"),
    _cli("local-steps-huge", ["--local-steps", "1e6"], "--local-steps", "[1, 1000]"),
    _cli("samples-huge", ["--samples", "1e12"], "--samples", "[2, 10000000]"),
    _cli("attack-targets-huge", ["--attack-targets", "1e8"], "--attack-targets", "[1, 10000]"),
    _cli("iterations-huge", ["--iterations", "1e9"], "--iterations", "[1, 100000]"),
    _cli("warmup-rounds-huge", ["--warmup-rounds", "1e8"], "--warmup-rounds", "[0, 10000]"),
    _cli(
        "randomness-draws-huge",
        ["--defense", "priprune", "--randomness-draws", "1e9"],
        "--randomness-draws",
        "[2, 1000000]",
    ),
    _cli(
        "estimate-draws-huge",
        ["--estimate-draws", "1e9", "--noise", "0.1"],
        "--estimate-draws",
        "[16, 1000000]",
    ),
    _cli("estimate-steps-huge", ["--estimate-steps", "1e9"], "--estimate-steps", "[1, 1000000]"),
    _cli("other-clients-huge", ["--other-clients", "1e6"], "--other-clients", "[0, 10000]"),
    # --- a learning rate float32 cannot hold hung in the attacks
    _cli("lr-subnormal", ["--lr", "1e-320"], "--lr", "1.17549e-38", "1e-320"),
    # --- the configuration's field was named instead of the option typed
    _cli("stats-samples-above-candidates", ["--stats-samples", "1e5"], "--stats-samples", "1797"),
    _cli("theorem1-samples-repeated", ["--theorem1-samples", "3", "3"], "--theorem1-samples"),
    _cli("candidates-one", ["--candidates", "1"], "--candidates", "[2, 1797]", "Got 1"),
    _cli("batch-above-candidates", ["--candidates", "4", "--batch-size", "5"], "--batch-size"),
    _cli(
        "defense-rate-above-one",
        ["--defense", "largest", "--defense-rate", "2"],
        "--defense-rate",
        "[0, 1]",
        "2.0",
    ),
    _cli(
        "lambda-acc-negative",
        ["--defense", "priprune", "--lambda-acc", "-1"],
        "--lambda-acc",
        "[0, inf)",
    ),
    _cli("alpha-lr-zero", ["--defense", "priprune", "--alpha-lr", "0"], "--alpha-lr", "(0, inf)"),
    _cli("device-unknown", ["--device", "tpu"], "--device", "'tpu'"),
    _cli(
        "dp-with-rounds",
        ["--dp-noise", "1", "--rounds", "2"],
        "--dp-noise",
        "one round without a defense",
    ),
    # --- fewer images in the data folder than the official files: IndexError before
    _cli(
        "candidates-beyond-the-files",
        ["--dataset", "mnist", "--data-dir", "{tmp}/mnist", "--candidates", "100"],
        "--candidates",
        "[2, 40]",
        "Got 100",
        setup=_forty_mnist_images,
    ),
    # ... and the demo's attack part drew fewer statistics samples than asked, saying
    # nothing (its leakage part refused the folder only after it)
    CliCase(
        "leakage-demo-targets-beyond-the-files",
        ["demo", "--dataset", "mnist", "--data-dir", "{tmp}/mnist", "--quick", *OUT],
        ["'num_images' * 'batch_size' + 'stats_samples'", "[2, 40]", "Got 70"],
        _forty_mnist_images,
    ),
    # --- the upload's DP noise overflowed the likelihoods: a NaN critic named instead
    _cli("dp-noise-overflows", ["--dp-noise", "1e308", *SMALL], "--dp-noise", "1e+308"),
    _cli("dp-clip-overflows", ["--dp-noise", "1", "--dp-clip", "1e308", *SMALL], "--dp-noise"),
    # --- noise the attacks' float32 cannot hold: the attack blamed its own lr
    _cli("noise-overflows-the-attack", ["--noise", "1e30", *SMALL], "--noise", "1e+30"),
    # --- the same through the API, naming the parameters
    _api("config-rounds-huge", lambda: LeakageConfig(rounds=10**6), "'rounds'", "[1, 1000]"),
    _api("config-samples-huge", lambda: LeakageConfig(samples=10**12), "'samples'", "10000000"),
    _api(
        "config-lr-subnormal",
        lambda: LeakageConfig(client_lr=1e-320),
        "'client_lr'",
        "1.17549e-38",
    ),
    _api("fed-lr-subnormal", lambda: FedConfig(lr=1e-40), "'lr'", "FedConfig", "1e-40"),
    _api("check-lr-zero", lambda: check_lr("lr", 0.0, func="f"), "'lr'", "Got 0.0"),
    _api(
        "dp-upload-noise-overflows",
        lambda: _dp_release(max_grad_norm=1e300, noise_multiplier=1e10),
        "'noise_multiplier'",
        "MAX_UPLOAD_NOISE_STD",
        "max_grad_norm=1e+300",
    ),
    # --- a noise whose square overflows: OverflowError from deep in the likelihood
    _api(
        "fixed-defense-noise-overflows",
        lambda: FixedDefenseRelease(_setting(), IMAGES, LABELS, FixedDefense("mix")).leakage(
            1e308, samples=4, confidence=0.9, seed=0
        ),
        "'noise_std'",
        "5.31691e+36",
        "1e+308",
    ),
    _api(
        "priprune-noise-overflows",
        lambda: PriPruneRelease(_setting(), IMAGES, LABELS, PriPruneDefense()).leakage(
            1e200, samples=4, confidence=0.9, seed=0
        ),
        "'noise_std'",
        "1e+200",
    ),
    _api(
        "per-client-mib-negative",
        lambda: per_client_mib(-1.0, 10),
        "'total_bytes'",
        "[0, inf)",
        "-1.0",
    ),
    _api("per-client-mib-no-clients", lambda: per_client_mib(100.0, 0), "'num_clients'", "0"),
    _api("per-client-mib-nan", lambda: per_client_mib(math.nan, 3), "'total_bytes'", "nan"),
    # --- train: the options typed, not TrainConfig's fields
    CliCase("leakage-train-p", ["train", "--p", "1.5", *OUT], ["--p", "[0, 1]", "1.5"]),
    CliCase(
        "leakage-train-clients-per-round",
        ["train", "--clients-per-round", "500", *OUT],
        ["--clients-per-round", "[1, 10]", "500"],
    ),
    CliCase("leakage-train-lr-subnormal", ["train", "--lr", "1e-320", *OUT], ["--lr", "1e-320"]),
    *(
        CliCase(f"leakage-train-{option}-huge", ["train", f"--{option}", "1e9", *OUT], names)
        for option, names in (
            ("rounds", ["--rounds", "[1, 100000]", "1000000000"]),
            ("local-epochs", ["--local-epochs", "[1, 10000]"]),
            ("batch-size", ["--batch-size", "client 8 holds 143"]),
            ("clients", ["--clients", "[1, 1438]"]),
        )
    ),
    # --- demo: counts of its attack, leakage and estimator parts
    *(
        CliCase(f"leakage-demo-{option}-huge", ["demo", f"--{option}", "1e9", *OUT], names)
        for option, names in (
            ("iterations", ["--iterations", "[1, 100000]", "1000000000"]),
            ("samples", ["--samples", "[2, 10000000]"]),
            ("leakage-targets", ["--leakage-targets", "[1, 10000]"]),
            ("leakage-iterations", ["--leakage-iterations", "[1, 100000]"]),
            ("estimate-draws", ["--estimate-draws", "[16, 1000000]"]),
            ("estimate-steps", ["--estimate-steps", "[1, 1000000]"]),
        )
    ),
    # --- a device file as a results store: reading /dev/zero never ends
    CliCase("leakage-results-check-dev-zero", ["results", "check", "/dev/zero"], ["/dev/zero"]),
]
