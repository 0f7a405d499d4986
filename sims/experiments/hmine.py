r"""H-MINE's leakage-risk experiments: estimated I(X_B; G) beside a DLG inference error.

Source: Liu, Zhu, Wang and Xiao, "A quantitative metric for privacy leakage in federated
learning" (ICASSP 2021; ``papers/h-mine-quantitative-leakage-metric.txt``), Section 3,
Figures 4 and 5. A client computes the gradient ``G`` of the task model at ``theta^t`` on a
batch ``X_B`` of its data; the leakage risk is ``I(X_B; G)``, estimated by H-MINE
(:class:`estimators.neural.HMINE`) from sampled ``(X_B, G)`` pairs
(:func:`sample_batch_gradients`). The paper's four studies are :data:`STUDIES`:

``batch_size`` (Fig. 4 left), ``noise_std`` (Gaussian noise on the gradient, Fig. 4 right),
``train_steps`` (the step ``t`` at which the gradient is taken, Fig. 5a) and
``positive_fraction`` (class imbalance of the client's data, Fig. 5b; binary task only).
Fig. 3 (the convergence of H-MINE against a conventional statistics network, at batch
sizes 1 and 3, gradients at epoch 1) is :func:`run_convergence`.

Each point also runs a DLG-style inversion (:func:`inference_error`, Section 3.3): the
paper attacks the gradient 5 times from random initialisations and reports the variance
of the 5 reconstructions, ``epsilon = var(X_hat_B^(k))``; the mean squared error to the
true batch is reported beside it, because a spread across restarts is not an error (5
restarts that agree on a wrong answer have epsilon = 0).

Substitutions and readings (the paper's data and some settings are unavailable):

* **Tabular task**: scikit-learn's breast-cancer data (569 records, 30 features, binary)
  replaces Adult (not downloadable); features are min-max scaled to [0, 1], and the task
  model is a logistic regression (:func:`tabular_logistic_regression`, a single linear
  layer; sims.models' ``logistic_regression`` only takes square images). A record is
  stored as a ``(1, 1, 30)`` "image" so that the gradient and attack code of ``sims``
  applies unchanged.
* **Image task**: the 8x8 digits with the small sigmoid Conv-2 of the demo
  (``sims.models.conv_net(2, width=8, hidden=64, activation="sigmoid")``). Its gradient has
  ~8k coordinates; ``projection_dim`` projects it onto that many orthonormal random
  directions before estimation, which by the data-processing inequality can only lower
  ``I(X_B; G)``.
* **Client data**: ``client_size`` records drawn once from the data set; batches are drawn
  without replacement from them, uniformly and independently for every pair. Training to
  step ``t`` is plain minibatch SGD on the client data (a stand-in for ``t`` FedSGD rounds).
* **What is being estimated**: with a finite client data set ``X_B`` is discrete, and a
  noiseless gradient is (almost surely) an injective function of the unordered batch, so
  ``I(X_B; G) = H(G) = log C(N, B)`` exactly (``N = client_size``); the population version
  (a continuous batch) is infinite. A DV estimate from ``n`` pairs cannot certify much more
  than ``log n``, so noiseless estimates measure the estimator's reach, not the truth. With
  noise ``sigma > 0`` the truth is finite and below both ``log C(N, B)`` and the Gaussian
  channel bound ``1/2 log det(I + Cov(G) / sigma^2)``
  (:func:`estimators.mi.gaussian_channel_bound`); each record carries both bounds
  (``bound_gaussian_channel`` is None without noise).
* The paper's baseline "sum of all elements of cov(X_B, G)" is reported as ``cov_sum``.
* **The critic**: H-MINE's tuned defaults unless ``critic="paper"``
  (:data:`estimators.neural.HMINE_PRESETS`: the paper's (200, 200), 5, (500,) and Adam's
  learning rate 5e-5, which then replaces ``estimator.learning_rate``).
* **Fig. 3's conventional statistics network** ("a three layer MLP [17]", i.e. MINE's):
  :class:`estimators.neural.MINE` on the flattened batch with hidden widths 200, 200 (the
  paper gives no widths; these are its BlockModel's), trained exactly as H-MINE is (same
  pairs, folds, Adam learning rate, steps). "Epoch 1" is the task model after one pass of
  SGD over the client's data, ``ceil(client_size / train_batch)`` steps.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import torch
from torch import nn

from pruneleak.bounds.progress import progress as show_progress
from pruneleak.bounds.validation import check_choice, check_distinct, check_int, check_real
from pruneleak.estimators.device import check_device, resolve_device
from pruneleak.estimators.image import match_reconstructions
from pruneleak.estimators.mi import gaussian_channel_bound
from pruneleak.estimators.neural import HMINE, HMINE_PRESETS, MINE, TrainingConfig
from pruneleak.sims.attacks import AttackConfig, invert_gradient
from pruneleak.sims.core.functional import batch_gradient, check_lr
from pruneleak.sims.core.runtime import check_seed, fingerprint, seeded
from pruneleak.sims.data.datasets import load_digits_dataset
from pruneleak.sims.fl.client import local_sgd
from pruneleak.sims.gradients.per_sample import per_sample_gradients
from pruneleak.sims.models import ConvNet, conv_net
from pruneleak.sims.pruning.mask import Mask
from pruneleak.sims.store.results import ResultStore

logger = logging.getLogger(__name__)

TASKS = ("tabular", "digits")
#: Records of each task's data set (breast cancer, the embedded digits).
TASK_SIZES = {"tabular": 569, "digits": 1797}
STUDIES = ("batch_size", "noise_std", "train_steps", "positive_fraction")


@dataclass(frozen=True)
class HMinePoint:
    """One point of a study: what the client does.

    Attributes:
        batch_size: B >= 1 (the paper's Fig. 4 noise study and Fig. 5 use 3).
        noise_std: standard deviation of the Gaussian noise added to every gradient
            coordinate, >= 0.
        train_steps: SGD steps taken before the gradient is computed, >= 0 (the paper
            evaluates "at epoch 3").
        positive_fraction: share of class 1 in the client data, in (0, 1), or None for
            the data set's own mix; tabular task only.
    """

    batch_size: int = 3
    noise_std: float = 0.0
    train_steps: int = 30
    positive_fraction: float | None = None

    def __post_init__(self) -> None:
        func = "HMinePoint"
        check_int("batch_size", self.batch_size, func=func, low=1)
        check_real("noise_std", self.noise_std, func=func, low=0.0)
        check_int("train_steps", self.train_steps, func=func, low=0)
        if self.positive_fraction is not None:
            check_real(
                "positive_fraction",
                self.positive_fraction,
                func=func,
                low=0.0,
                high=1.0,
                low_inclusive=False,
                high_inclusive=False,
            )


@dataclass(frozen=True)
class HMineExperimentConfig:
    """Everything but the studied value.

    Attributes:
        task: ``"tabular"`` (breast cancer, logistic regression) or ``"digits"`` (ConvNet).
        client_size: records held by the client, in [2, records of the task's data set]
            (569 tabular, 1797 digits).
        n_pairs: sampled ``(X_B, G)`` pairs per point (a share is held out by H-MINE).
        estimator: H-MINE training settings (:class:`estimators.neural.TrainingConfig`;
            the defaults, not the paper's Adam learning rate 5e-5, which under-trains).
        projection_dim: project the gradient onto this many orthonormal random directions
            (None: the full gradient; ~128 keeps H-MINE affordable on the digits ConvNet).
        train_lr, train_batch: SGD of the task model up to ``train_steps``.
        attack_runs: DLG restarts from random initialisations (paper: 5).
        attack_iterations: L-BFGS iterations per restart.
        seed: seed of the client data, the model, the sampling, H-MINE and the attack.
        device: ``"auto"``, ``"cpu"``, ``"cuda"``, ...
        critic: H-MINE's preset, ``"default"`` or ``"paper"`` (module docstring).
    """

    task: str = "tabular"
    client_size: int = 200
    n_pairs: int = 4000
    estimator: TrainingConfig = field(default_factory=TrainingConfig)
    projection_dim: int | None = None
    train_lr: float = 0.1
    train_batch: int = 16
    attack_runs: int = 5
    attack_iterations: int = 100
    seed: int = 0
    device: str = "auto"
    critic: str = "default"

    def __post_init__(self) -> None:
        func = "HMineExperimentConfig"
        check_choice("critic", self.critic, func=func, choices=tuple(HMINE_PRESETS))
        check_choice("task", self.task, func=func, choices=TASKS)
        check_int("client_size", self.client_size, func=func, low=2, high=TASK_SIZES[self.task])
        check_int("n_pairs", self.n_pairs, func=func, low=2)
        if not isinstance(self.estimator, TrainingConfig):
            raise ValueError(
                f"The 'estimator' parameter of {func} must be a TrainingConfig. "
                f"Got {type(self.estimator).__name__} instead."
            )
        if self.projection_dim is not None:
            check_int("projection_dim", self.projection_dim, func=func, low=1)
        check_lr("train_lr", self.train_lr, func=func)
        check_int("train_batch", self.train_batch, func=func, low=1)
        check_int("attack_runs", self.attack_runs, func=func, low=1)
        check_int("attack_iterations", self.attack_iterations, func=func, low=1)
        check_seed(self.seed, func=func)
        check_device(self.device, func=func)


# ------------------------------------------------------------------------------ the task


def tabular_logistic_regression(num_features: int, num_classes: int = 2) -> ConvNet:
    """Logistic regression on records stored as ``(1, 1, num_features)`` "images".

    A minimal stand-in until ``sims.models`` offers a non-square logistic regression.
    """
    func = "tabular_logistic_regression"
    num_features = check_int("num_features", num_features, func=func, low=1)
    num_classes = check_int("num_classes", num_classes, func=func, low=2)
    return ConvNet(
        nn.Sequential(),
        nn.Sequential(nn.Linear(num_features, num_classes)),
        (1, 1, num_features),
        num_classes,
    )


def _breast_cancer() -> tuple[torch.Tensor, torch.Tensor]:
    from sklearn.datasets import load_breast_cancer

    data, target = load_breast_cancer(return_X_y=True)
    low, high = data.min(axis=0), data.max(axis=0)
    scaled = (data - low) / (high - low)
    images = torch.as_tensor(scaled, dtype=torch.float32).reshape(-1, 1, 1, data.shape[1])
    return images, torch.as_tensor(target, dtype=torch.int64)


def _client_indices(labels: torch.Tensor, size: int, fraction: float | None, rng) -> np.ndarray:
    y = labels.numpy()
    if fraction is None:
        return rng.choice(len(y), size=size, replace=False)
    n_pos = round(fraction * size)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    if not 0 < n_pos < size or n_pos > len(pos) or size - n_pos > len(neg):
        raise ValueError(
            f"The 'positive_fraction' parameter of HMinePoint, {fraction} with client_size="
            f"{size}, needs {n_pos} records of class 1 (of {len(pos)}) and {size - n_pos} of "
            f"class 0 (of {len(neg)}), each at least 1."
        )
    chosen = [rng.choice(pos, n_pos, replace=False), rng.choice(neg, size - n_pos, replace=False)]
    return rng.permutation(np.concatenate(chosen))


@dataclass(frozen=True, eq=False)
class ClientTask:
    """A client's data and the task model at step ``train_steps`` (on the chosen device)."""

    model: nn.Module
    params: dict[str, torch.Tensor]
    images: torch.Tensor
    labels: torch.Tensor


def make_client_task(config: HMineExperimentConfig, point: HMinePoint) -> ClientTask:
    """Draw the client data, initialise the model from the seed and train it ``t`` steps."""
    device = resolve_device(config.device)
    if config.task == "tabular":
        images, labels = _breast_cancer()
        with seeded(config.seed):
            model = tabular_logistic_regression(images.shape[-1], 2)
    else:
        if point.positive_fraction is not None:
            raise ValueError(
                "The 'positive_fraction' parameter of HMinePoint applies to the binary "
                f"tabular task only. Got {point.positive_fraction!r} with task='digits'."
            )
        digits = load_digits_dataset()
        images, labels = digits.images, digits.labels
        with seeded(config.seed):
            model = conv_net(
                2,
                in_channels=1,
                image_size=8,
                num_classes=10,
                width=8,
                hidden=64,
                activation="sigmoid",
            )
    rng = np.random.default_rng(config.seed)
    idx = torch.as_tensor(_client_indices(labels, config.client_size, point.positive_fraction, rng))
    images, labels = images[idx].to(device), labels[idx].to(device)
    model = model.to(device)
    params = {name: p.detach() for name, p in model.named_parameters()}
    generator = torch.Generator(device=device).manual_seed(config.seed)
    batches = [
        (images[b], labels[b])
        for b in (
            torch.randint(len(labels), (config.train_batch,), generator=generator, device=device)
            for _ in range(point.train_steps)
        )
    ]
    params = local_sgd(model, params, Mask.ones(params), batches, lr=config.train_lr)
    if not bool(torch.stack([torch.isfinite(t).all() for t in params.values()]).all()):
        raise ValueError(
            f"Training diverged in the {point.train_steps} SGD steps of make_client_task: "
            f"the weights are not finite. The 'train_lr' parameter of HMineExperimentConfig "
            f"is too large; got train_lr={config.train_lr!r}."
        )
    return ClientTask(model=model, params=params, images=images, labels=labels)


# ------------------------------------------------------------------------------ sampling


def _orthonormal_rows(k: int, d: int, generator: torch.Generator, device) -> torch.Tensor:
    gaussian = torch.randn(d, k, generator=generator, device=device)
    return torch.linalg.qr(gaussian).Q.T  # (k, d) with orthonormal rows


def sample_batch_gradients(
    task: ClientTask,
    *,
    batch_size: int,
    n_pairs: int,
    noise_std: float = 0.0,
    projection_dim: int | None = None,
    seed: int = 0,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Sample ``n_pairs`` pairs ``(X_B, G)`` of a batch and its (noisy, projected) gradient.

    Each batch is ``batch_size`` distinct records of the client drawn uniformly; ``G`` is
    the mean cross-entropy gradient at ``task.params`` (the mean of the per-sample
    gradients, ``sims.gradients.per_sample.per_sample_gradients``), optionally projected onto
    ``projection_dim`` orthonormal random directions, plus ``noise_std * N(0, I)``. Noise
    added before or after an orthonormal projection has the same law.

    Returns:
        ``x_batch`` (n_pairs, B, features), ``g`` (n_pairs, P) and the noiseless ``g``, all
        on the task's device.
    """
    func = "sample_batch_gradients"
    n_records = len(task.labels)
    batch_size = check_int("batch_size", batch_size, func=func, low=1, high=n_records)
    n_pairs = check_int("n_pairs", n_pairs, func=func, low=1)
    noise_std = check_real("noise_std", noise_std, func=func, low=0.0)
    device = task.images.device
    generator = torch.Generator(device=device).manual_seed(seed)
    per_sample = per_sample_gradients(task.model, task.params, task.images, task.labels)
    if projection_dim is not None:
        basis = _orthonormal_rows(projection_dim, per_sample.shape[1], generator, device)
        per_sample = per_sample @ basis.T
    keys = torch.rand(n_pairs, n_records, generator=generator, device=device)
    idx = keys.argsort(dim=1)[:, :batch_size]  # B distinct records per pair
    clean = per_sample[idx].mean(dim=1)
    noisy = clean + noise_std * torch.randn(clean.shape, generator=generator, device=device)
    return task.images[idx].flatten(2), noisy, clean


def _cov_sum(x_batch: torch.Tensor, g: torch.Tensor) -> float:
    """The paper's baseline: the sum of all entries of cov(flattened X_B, G)."""
    x = x_batch.flatten(1).double()
    g = g.double()
    x, g = x - x.mean(0), g - g.mean(0)
    return float((x.sum(1) * g.sum(1)).sum() / (x.shape[0] - 1))


# ------------------------------------------------------------------------------ attack


def inference_error(
    task: ClientTask,
    *,
    batch_size: int,
    noise_std: float,
    runs: int,
    iterations: int,
    seed: int = 0,
    device: str = "auto",
) -> dict[str, float]:
    """DLG on the (noisy) gradient of one batch, ``runs`` times from random starts.

    Returns ``{"inference_error": epsilon, "reconstruction_mse": mse}``: ``epsilon`` is the
    paper's ``var(X_hat_B^(k))`` (Section 3.3) -- the variance over the runs, averaged over
    entries -- and ``mse`` the mean squared error to the true batch. Reconstructions are
    matched to the true records (:func:`estimators.image.match_reconstructions`) first.
    Labels are known to the attacker (the paper does not say; DLG can also recover them).
    """
    generator = torch.Generator().manual_seed(seed)
    idx = torch.randperm(len(task.labels), generator=generator)[:batch_size].to(task.labels.device)
    images, labels = task.images[idx], task.labels[idx]
    target = batch_gradient(task.model, task.params, images, labels)
    target = {
        name: t + noise_std * torch.randn(t.shape, generator=generator).to(t.device)
        for name, t in target.items()
    }
    truth = images.cpu()
    recon = []
    for run in range(runs):
        result = invert_gradient(
            task.model,
            task.params,
            target,
            batch_shape=tuple(images.shape),
            num_classes=task.model.num_classes,
            labels=labels,
            config=AttackConfig.dlg(
                iterations=iterations, seed=seed + run, device=device, box=True
            ),
        )
        recon.append(result.images[match_reconstructions(truth, result.images)])
    stacked = torch.stack(recon).double()
    return {
        "inference_error": float(stacked.var(dim=0, unbiased=runs > 1).mean()),
        "reconstruction_mse": float(((stacked - truth.double()) ** 2).mean()),
    }


# ------------------------------------------------------------------------------ studies


def hmine_estimator(config: HMineExperimentConfig, training: TrainingConfig | None = None) -> HMINE:
    """H-MINE of ``config.critic``'s preset, trained with ``training`` (default
    ``config.estimator``), whose learning rate the paper preset replaces by its own."""
    training = config.estimator if training is None else training
    if config.critic != "default":
        training = replace(training, learning_rate=HMINE_PRESETS[config.critic].learning_rate)
    return HMINE(preset=config.critic, training=training, device=config.device)


def run_point(config: HMineExperimentConfig, point: HMinePoint) -> dict:
    """One point: sample pairs, estimate I(X_B; G) with H-MINE, attack, and bound."""
    task = make_client_task(config, point)
    x_batch, g, clean = sample_batch_gradients(
        task,
        batch_size=point.batch_size,
        n_pairs=config.n_pairs,
        noise_std=point.noise_std,
        projection_dim=config.projection_dim,
        seed=config.seed,
    )
    estimate = hmine_estimator(config).estimate(x_batch, g, seed=config.seed)
    batches_bound = _log_binomial(config.client_size, point.batch_size)
    channel_bound = None  # no finite bound for a noiseless gradient
    if point.noise_std > 0:
        signal_cov = np.atleast_2d(np.cov(clean.double().cpu().numpy(), rowvar=False))
        channel_bound = gaussian_channel_bound(signal_cov, point.noise_std)
    attack = inference_error(
        task,
        batch_size=point.batch_size,
        noise_std=point.noise_std,
        runs=config.attack_runs,
        iterations=config.attack_iterations,
        seed=config.seed,
        device=config.device,
    )
    return {
        **asdict(point),
        "mi": estimate.value,
        "mi_ci_low": estimate.ci_low,
        "mi_ci_high": estimate.ci_high,
        "bound_batches": batches_bound,
        "bound_gaussian_channel": channel_bound,
        "log_n_test": math.log(estimate.diagnostics["n_test"]),
        "cov_sum": _cov_sum(x_batch, g),
        **attack,
    }


def _fingerprinted(config: HMineExperimentConfig) -> dict:
    """The fields that key a record: all, ``critic`` only when not the default (records
    stored before the field existed keep their keys)."""
    fields = asdict(config)
    if fields["critic"] == "default":
        del fields["critic"]
    return fields


def run_study(
    config: HMineExperimentConfig,
    study: str,
    values,
    *,
    base: HMinePoint | None = None,
    store: ResultStore | None = None,
    progress: bool | None = None,
) -> list[dict]:
    """Run one of :data:`STUDIES` over ``values``, a list or tuple of distinct values
    (other settings from ``base``).

    With a ``store`` every finished point is appended as a record and a rerun of the same
    configuration skips it (resume). Returns one record per value, in order, with
    ``"study"`` and ``"value"`` added.
    """
    check_choice("study", study, func="run_study", choices=STUDIES)
    values = check_distinct("values", values, func="run_study")
    base = HMinePoint() if base is None else base
    done = {} if store is None else {r["key"]: r for r in store.records()}
    records = []
    with show_progress(values, desc=f"H-MINE {study}", unit="point", enabled=progress) as bar:
        for value in bar:
            point = replace(base, **{study: value})
            digest = fingerprint({**_fingerprinted(config), "point": asdict(point)})
            key = f"hmine/{config.task}/{study}={value}/{digest}"
            if key in done:
                records.append(done[key])
                continue
            record = {
                "key": key,
                "task": config.task,
                "study": study,
                "value": value,
                **run_point(config, point),
            }
            logger.info(
                "%s=%s: I = %.3f nats, epsilon = %.3g",
                study,
                value,
                record["mi"],
                record["inference_error"],
            )
            if store is not None:
                store.append(record)
            records.append(record)
    return records


# ------------------------------------------------------------------------------ Fig. 3

#: The critics Fig. 3 compares: H-MINE and the conventional statistics network (MINE's
#: concat critic on the flattened batch).
CONVERGENCE_CRITICS = ("hmine", "mine")


@dataclass(frozen=True)
class ConvergenceConfig:
    """Fig. 3: each critic trained on the same pairs, its bound recorded over training.

    Attributes:
        batch_sizes: the task's B values, distinct, each >= 1 (paper: 1 and 3).
        training: the training of both critics; the default is the paper's Adam learning
            rate 5e-5, held constant, without weight averaging or early stopping, one fit,
            2,000 steps with the bound evaluated every 50.
        mine_hidden: hidden widths of the conventional network (default (200, 200)).
    """

    batch_sizes: tuple[int, ...] = (1, 3)
    training: TrainingConfig = field(
        default_factory=lambda: TrainingConfig(
            max_steps=2000,
            eval_every=50,
            patience=41,
            schedule="constant",
            learning_rate=HMINE_PRESETS["paper"].learning_rate,
            averaging=0.0,
            n_fits=1,
        )
    )
    mine_hidden: tuple[int, ...] = (200, 200)

    def __post_init__(self) -> None:
        func = "ConvergenceConfig"
        check_distinct("batch_sizes", self.batch_sizes, func=func)
        for b in self.batch_sizes:
            check_int("batch_sizes", b, func=func, low=1)
        if not isinstance(self.training, TrainingConfig):
            raise ValueError(
                f"The 'training' parameter of {func} must be a TrainingConfig. "
                f"Got {type(self.training).__name__} instead."
            )


def epoch_steps(config: HMineExperimentConfig) -> int:
    """SGD steps of one pass over the client's data: ``ceil(client_size / train_batch)``."""
    return math.ceil(config.client_size / config.train_batch)


def run_convergence(config: HMineExperimentConfig, convergence: ConvergenceConfig) -> list[dict]:
    """Fig. 3: for each batch size B, ``config.n_pairs`` pairs ``(X_B, G)`` with the task
    model at epoch 1 (:func:`epoch_steps`), then H-MINE (``config.critic``'s
    architecture) and MINE (``convergence.mine_hidden``) trained on them with
    ``convergence.training`` (same seed, so the same folds).

    Returns one record per (critic, B): ``critic``, ``batch_size``, ``step``, ``epoch``
    (critic training epochs, step x minibatch / training samples), ``train`` and
    ``validation`` (the DV bound on the training probe and the validation fold at each
    evaluation, nats), ``estimate`` (the test-fold value of the best critic, nats),
    ``bound_batches`` (log C(N, B), the truth for a noiseless gradient) and ``seconds``.
    """
    if not isinstance(convergence, ConvergenceConfig):
        raise ValueError(
            "The 'convergence' parameter of run_convergence must be a ConvergenceConfig. "
            f"Got {type(convergence).__name__} instead."
        )
    training = convergence.training
    records = []
    for b in convergence.batch_sizes:
        point = HMinePoint(batch_size=b, train_steps=epoch_steps(config))
        task = make_client_task(config, point)
        x_batch, g, _ = sample_batch_gradients(
            task,
            batch_size=b,
            n_pairs=config.n_pairs,
            projection_dim=config.projection_dim,
            seed=config.seed,
        )
        critics = {
            "hmine": (hmine_estimator(config, training), x_batch),
            "mine": (
                MINE(hidden=convergence.mine_hidden, training=training, device=config.device),
                x_batch.flatten(1),
            ),
        }
        for name, (estimator, x) in critics.items():
            started = time.perf_counter()
            estimate = estimator.estimate(x, g, seed=config.seed)
            trace = estimate.trace
            n_train = estimate.diagnostics["n_train"]
            records.append(
                {
                    "critic": name,
                    "batch_size": b,
                    "step": trace["step"].tolist(),
                    "epoch": (trace["step"] * training.batch_size / n_train).tolist(),
                    "train": trace["train"].tolist(),
                    "validation": trace["validation"].tolist(),
                    "estimate": estimate.value,
                    "bound_batches": _log_binomial(config.client_size, b),
                    "seconds": time.perf_counter() - started,
                }
            )
            logger.info("Fig. 3 %s B=%d: %.3f nats", name, b, estimate.value)
    return records


def _log_binomial(n: int, k: int) -> float:
    """log C(n, k) in nats."""
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
