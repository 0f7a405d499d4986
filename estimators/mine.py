r"""MINE and H-MINE: neural lower bounds on I(X; Y) (Donsker-Varadhan), with held-out CIs.

(One module past 500 lines: the two estimators share the training loop, the held-out
evaluation and the bootstrap, and differ only in the statistics network.)

Both estimators maximise the Donsker-Varadhan (DV) lower bound over a statistics network
``T_phi`` (Belghazi et al., "MINE: Mutual Information Neural Estimation", ICML 2018,
arXiv 1801.04062, eq. 5; Liu, Zhu, Wang and Xiao, "A quantitative metric for privacy
leakage in federated learning", ICASSP 2021 (H-MINE), Section 2.2), in nats:

.. math::

    I(X; Y) \ge \sup_\phi\; \mathbb E_{P_{XY}}[T_\phi]
                - \log \mathbb E_{P_X \otimes P_Y}[e^{T_\phi}].

- :func:`mine_estimate`: MINE with an MLP on the concatenation ``(x, y)`` (the
  "conventional statistic network" H-MINE compares against, Fig. 3).
- :func:`hmine_estimate`: H-MINE's hierarchical network for a batch ``X_B = (x_1..x_B)``
  and its gradient ``G``: a shared BlockModel MLP (200-200-5) maps each block
  ``O_m = (x_m, G)`` to an embedding ``h_m`` and a MixModel MLP (500-1) maps the
  concatenated ``(h_1, ..., h_B)`` to the scalar ``T`` (Section 2.3, Algorithm 1; Adam with
  learning rate 5e-5, Section 3.1).

Training (:class:`DVTrainingConfig`) follows MINE's Algorithm 1 with the moving-average
bias correction of its Section 3.2: the gradient of ``log E_Q[e^T]`` is
``E_Q[e^T grad T] / E_Q[e^T]`` and the denominator is replaced by an exponential moving
average over mini-batches (kept in log space here). Samples of the product of marginals
pair each ``x`` with the ``y`` of an independently drawn index, which has the same law as
Algorithm 1's fresh batch ``X_hat_B`` and gradient ``G_hat``.

The reported estimate is the DV bound evaluated on held-out samples (not used in
training), with a percentile bootstrap confidence interval over those samples. It is
always finite: a run whose network diverges (non-finite ``T``, e.g. from a far too large
learning rate) raises ValueError instead of returning nan. The
interval covers the evaluation noise of the trained ``T``; it does not cover the
optimisation gap (a DV estimate is a lower bound only up to that noise, and an
under-trained network underestimates).

If ``Y`` is a deterministic function of a continuous ``X`` (a noiseless gradient) the true
MI is infinite; the estimate is then a finite lower bound limited by the network and the
sample size, and grows with training. Estimate ``I(X; Y + noise)`` for a finite target.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import torch
from scipy.special import logsumexp
from torch import nn
from tqdm.auto import trange

from bounds.validation import check_bool, check_choice, check_int, check_real
from estimators._arrays import check_seed, to_numpy
from estimators.device import resolve_device

__all__ = [
    "ACTIVATIONS",
    "ConcatStatistics",
    "DVTrainingConfig",
    "HierarchicalStatistics",
    "MIEstimate",
    "dv_lower_bound",
    "hmine_estimate",
    "mine_estimate",
]

logger = logging.getLogger(__name__)

ACTIVATIONS = {"relu": nn.ReLU, "elu": nn.ELU}
_EVAL_CHUNK = 4096  # samples per forward pass when evaluating the held-out bound
_BOOTSTRAP_CHUNK = 2**24  # statistics (128 MiB of float64) per chunk of bootstrap resamples
#: Largest statistics network built: 2**28 parameters are 1 GiB in float32 (4 GiB with
#: Adam's state and gradients). Larger requests are refused before any allocation.
MAX_PARAMETERS = 2**28
#: Most held-out statistics ``T`` (marginal permutations x held-out samples) kept at once:
#: 2**28 of them are 1 GiB in float32 on the device and 2 GiB in float64 on the CPU.
MAX_HELDOUT_STATISTICS = 2**28


def _check_open_unit(name: str, value, func: str) -> float:
    return check_real(
        name, value, func=func, low=0.0, high=1.0, low_inclusive=False, high_inclusive=False
    )


@dataclass(frozen=True)
class DVTrainingConfig:
    """Training and evaluation settings shared by MINE and H-MINE.

    Attributes
    ----------
    steps : int
        Adam updates (Algorithm 1's "while not converged", capped).
    batch_size : int
        Joint samples per update (``S`` in H-MINE's Algorithm 1); as many marginal samples.
    learning_rate : float
        Adam step size; H-MINE's paper uses 5e-5 (Section 3.1).
    ema_rate : float
        Weight ``alpha`` of the newest mini-batch in the moving average of ``E_Q[e^T]``
        (MINE Section 3.2); 1.0 switches the bias correction off (plain DV gradient).
    holdout_fraction : float
        Share of the samples kept out of training to evaluate the bound.
    marginal_permutations : int
        Random re-pairings of the held-out ``y`` used for the marginal term.
    n_bootstrap : int
        Bootstrap resamples of the held-out samples for the confidence interval.
    confidence : float
        Level of the two-sided percentile interval.
    standardize : bool
        Scale every feature to zero mean and unit variance over all samples (marginal
        statistics only: no pairing of the held-out split reaches training), in float64
        before the network's float32. MI is invariant to this, gradients have tiny,
        uneven scales, and standardised inputs are at most ``sqrt(n)`` in size, so
        float32 cannot overflow whatever the magnitude of the data. With False the data
        go to the network as they are and must fit in float32 (at most ~3.4e38).

    Examples
    --------
    >>> DVTrainingConfig(steps=0)
    Traceback (most recent call last):
    ...
    ValueError: The 'steps' parameter of DVTrainingConfig must be in [1, inf). Got 0 instead.
    """

    steps: int = 5000
    batch_size: int = 256
    learning_rate: float = 1e-4
    ema_rate: float = 0.01
    holdout_fraction: float = 0.25
    marginal_permutations: int = 8
    n_bootstrap: int = 200
    confidence: float = 0.95
    standardize: bool = True

    def __post_init__(self):
        func = "DVTrainingConfig"
        check_int("steps", self.steps, func=func, low=1)
        check_int("batch_size", self.batch_size, func=func, low=2)
        check_real("learning_rate", self.learning_rate, func=func, low=0.0, low_inclusive=False)
        check_real("ema_rate", self.ema_rate, func=func, low=0.0, low_inclusive=False, high=1.0)
        _check_open_unit("holdout_fraction", self.holdout_fraction, func)
        check_int("marginal_permutations", self.marginal_permutations, func=func, low=1)
        check_int("n_bootstrap", self.n_bootstrap, func=func, low=1)
        _check_open_unit("confidence", self.confidence, func)
        check_bool("standardize", self.standardize, func=func)


@dataclass(frozen=True)
class MIEstimate:
    """A DV estimate of mutual information in nats.

    Attributes
    ----------
    value : float
        DV lower bound on held-out samples.
    ci_low, ci_high : float
        Percentile bootstrap interval of ``value`` at ``confidence``.
    confidence : float
    train_curve : ndarray, shape (steps,)
        DV bound of each training mini-batch (noisy; for convergence plots).
    n_train, n_test : int
    method : str
        ``"mine"`` or ``"hmine"``.
    """

    value: float
    ci_low: float
    ci_high: float
    confidence: float
    train_curve: np.ndarray
    n_train: int
    n_test: int
    method: str


def _mlp(sizes: tuple[int, ...], activation: str, *, final_activation: bool) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (fan_in, fan_out) in enumerate(pairwise(sizes)):
        layers.append(nn.Linear(fan_in, fan_out))
        if final_activation or i < len(sizes) - 2:
            layers.append(ACTIVATIONS[activation]())
    return nn.Sequential(*layers)


def _check_hidden(name: str, sizes, func: str) -> tuple[int, ...]:
    if isinstance(sizes, str) or not isinstance(sizes, Iterable):
        raise ValueError(
            f"The '{name}' parameter of {func} must be a sequence of layer widths (ints >= 1), "
            f"e.g. (200, 200). Got {sizes!r} instead."
        )
    sizes = tuple(sizes)
    for size in sizes:
        check_int(name, size, func=func, low=1)
    return sizes


def _check_parameters(layer_sizes: list[tuple[int, ...]], func: str) -> None:
    """Refuse MLPs (each given by its layer sizes) with more than MAX_PARAMETERS weights."""
    count = sum(
        fan_in * fan_out + fan_out for sizes in layer_sizes for fan_in, fan_out in pairwise(sizes)
    )
    if count > MAX_PARAMETERS:
        raise ValueError(
            f"The statistics network of {func} would have {count} parameters "
            f"({count * 4 / 2**30:.3g} GiB in float32), more than the limit of "
            f"{MAX_PARAMETERS}; use smaller hidden widths."
        )


class ConcatStatistics(nn.Module):
    """MINE's statistics network: an MLP on the concatenation of flattened ``x`` and ``y``.

    ``hidden=(200, 200)`` gives the three-layer MLP of Belghazi et al. that H-MINE uses as
    its "conventional statistic network" baseline.
    """

    def __init__(self, dim_x: int, dim_y: int, *, hidden=(200, 200), activation: str = "elu"):
        super().__init__()
        func = "ConcatStatistics"
        check_choice("activation", activation, func=func, choices=tuple(ACTIVATIONS))
        sizes = (
            check_int("dim_x", dim_x, func=func, low=1)
            + check_int("dim_y", dim_y, func=func, low=1),
            *_check_hidden("hidden", hidden, func),
            1,
        )
        _check_parameters([sizes], func)
        self.net = _mlp(sizes, activation, final_activation=False)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """``T(x, y)`` of shape (n,) for ``x`` (n, ...) and ``y`` (n, dim_y)."""
        return self.net(torch.cat([x.flatten(1), y], dim=1)).squeeze(1)


class HierarchicalStatistics(nn.Module):
    """H-MINE's statistics network (Liu et al. 2021, Section 2.3, Fig. 2, Algorithm 1).

    ``h_m = BlockModel(x_m, G)`` for ``m = 1..B`` with one shared BlockModel (MLP
    ``dim_x + dim_g -> 200 -> 200 -> 5``) and ``T = MixModel(h_1, ..., h_B)`` (MLP
    ``5 B -> 500 -> 1``). Every hidden layer, the 5-unit embedding included, is followed by
    the activation. The paper does not name the activation (ELU is used by default here)
    and its Algorithm 1 writes ``MixModel(H, G)`` while the text feeds only the concatenated
    embeddings to the MixModel; the text's version is implemented.
    """

    def __init__(
        self,
        dim_x: int,
        dim_g: int,
        batch_size: int,
        *,
        block_hidden=(200, 200),
        embedding_dim: int = 5,
        mix_hidden=(500,),
        activation: str = "elu",
    ):
        super().__init__()
        func = "HierarchicalStatistics"
        check_choice("activation", activation, func=func, choices=tuple(ACTIVATIONS))
        dim_x = check_int("dim_x", dim_x, func=func, low=1)
        dim_g = check_int("dim_g", dim_g, func=func, low=1)
        self.batch_size = check_int("batch_size", batch_size, func=func, low=1)
        embedding_dim = check_int("embedding_dim", embedding_dim, func=func, low=1)
        block_sizes = (
            dim_x + dim_g,
            *_check_hidden("block_hidden", block_hidden, func),
            embedding_dim,
        )
        mix_sizes = (
            embedding_dim * self.batch_size,
            *_check_hidden("mix_hidden", mix_hidden, func),
            1,
        )
        _check_parameters([block_sizes, mix_sizes], func)
        self.block = _mlp(block_sizes, activation, final_activation=True)
        self.mix = _mlp(mix_sizes, activation, final_activation=False)

    def forward(self, x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        """``T(X_B, G)`` of shape (n,) for ``x`` (n, B, dim_x) and ``g`` (n, dim_g)."""
        blocks = torch.cat([x, g.unsqueeze(1).expand(-1, x.shape[1], -1)], dim=2)
        return self.mix(self.block(blocks).flatten(1)).squeeze(1)


def _log_mean_exp(t: torch.Tensor, dim: int = 0) -> torch.Tensor:
    return torch.logsumexp(t, dim=dim) - math.log(t.shape[dim])


def _stable_mean(values: np.ndarray) -> float:
    """Mean of finite values without overflow: ``peak * mean(values / peak)``."""
    peak = float(np.abs(values).max())
    return peak * float(np.mean(values / peak)) if peak > 0 else 0.0


def dv_lower_bound(t_joint, t_marginal) -> float:
    """Donsker-Varadhan bound ``mean(t_joint) - log mean(exp(t_marginal))`` in nats.

    ``t_joint`` holds ``T`` on joint samples, ``t_marginal`` on product-of-marginal samples
    (any shapes; all entries are averaged). Belghazi et al. (2018), eq. 5. Domain:
    non-empty finite real arrays; the mean is taken without overflow and the
    log-mean-exp in log space, and a bound beyond the float64 range (possible only with
    statistics near 1e308) raises ValueError.

    Examples
    --------
    >>> dv_lower_bound([1.0, 1.0], [1.0, 1.0])  # a constant statistic gives 0
    0.0
    >>> round(dv_lower_bound([2.0], [0.0, 0.0]), 12)  # 2 - log(mean(e^0))
    2.0
    """
    func = "dv_lower_bound"
    joint = to_numpy("t_joint", t_joint, func=func).ravel()
    marginal = to_numpy("t_marginal", t_marginal, func=func).ravel()
    mean_joint = _stable_mean(joint)
    log_mean_exp = float(logsumexp(marginal)) - math.log(marginal.size)
    value = mean_joint - log_mean_exp
    if not math.isfinite(value):
        raise ValueError(
            f"The DV bound of {func} overflows float64: mean(t_joint) = {mean_joint:g} and "
            f"log mean exp(t_marginal) = {log_mean_exp:g}."
        )
    return value


def _samples_array(name: str, value, func: str) -> np.ndarray:
    """Samples as float64 (n, ...), finite, with at least two distinct samples."""
    arr = to_numpy(name, value, func=func)
    if arr.ndim == 0:
        raise ValueError(
            f"The '{name}' parameter of {func} must be a non-empty array of samples (n, ...). "
            f"Got shape {arr.shape} instead."
        )
    if np.all(arr == arr[:1]):
        raise ValueError(
            f"The '{name}' parameter of {func} is constant (all samples are identical); "
            "its mutual information is 0 and cannot be estimated."
        )
    return arr


def _check_config(config, func: str) -> DVTrainingConfig:
    if not isinstance(config, DVTrainingConfig):
        raise ValueError(
            f"The 'config' parameter of {func} must be a DVTrainingConfig or None. "
            f"Got {type(config).__name__} instead."
        )
    return config


def _samples(x, y, *, func: str, config: DVTrainingConfig, names=("x", "y")):
    """Validated float64 samples: ``x`` as given, ``y`` flattened to (n, dim_y); n_test."""
    x, y = _samples_array(names[0], x, func), _samples_array(names[1], y, func)
    if x.shape[0] != y.shape[0]:
        raise ValueError(
            f"The '{names[0]}' and '{names[1]}' parameters of {func} must have the same "
            f"number of samples (first axis). Got {x.shape[0]} and {y.shape[0]} instead."
        )
    n_test = math.ceil(config.holdout_fraction * x.shape[0])
    if x.shape[0] - n_test < config.batch_size or n_test < 2:
        raise ValueError(
            f"{func} needs at least batch_size={config.batch_size} training samples and 2 "
            f"held-out samples (holdout_fraction={config.holdout_fraction}). "
            f"Got {x.shape[0]} samples in all."
        )
    if config.marginal_permutations * n_test > MAX_HELDOUT_STATISTICS:
        raise ValueError(
            f"The 'marginal_permutations' setting of {func} ({config.marginal_permutations}) "
            f"times the {n_test} held-out samples exceeds {MAX_HELDOUT_STATISTICS} statistics "
            "kept at once; use fewer permutations or a smaller holdout_fraction."
        )
    return x, y.reshape(y.shape[0], -1), n_test


def _standardize(arr: np.ndarray, dims: tuple[int, ...]) -> np.ndarray:
    """Zero mean, unit variance per feature over ``dims``, in float64 and without overflow.

    Each feature is first divided by its largest magnitude (the result is the same, and
    no sum of squares can overflow); a constant feature becomes 0.
    """
    peak = np.abs(arr).max(axis=dims, keepdims=True)
    arr = arr / np.where(peak > 0, peak, 1.0)
    centred = arr - arr.mean(axis=dims, keepdims=True)
    std = np.sqrt(np.mean(centred**2, axis=dims, keepdims=True))
    return centred / np.where(std > 0, std, 1.0)


def _network_inputs(arrays: dict[str, tuple[np.ndarray, tuple[int, ...]]], *, func, config, device):
    """float32 tensors on ``device``: standardised (over the given dims) or checked to fit."""
    limit = float(np.finfo(np.float32).max)
    tensors = []
    for name, (arr, dims) in arrays.items():
        if config.standardize:
            arr = _standardize(arr, dims)
        elif np.abs(arr).max() > limit:
            raise ValueError(
                f"The '{name}' parameter of {func} has values up to {np.abs(arr).max():g}, "
                f"beyond float32 (at most {limit:g}) in which the network computes; keep "
                "DVTrainingConfig(standardize=True) or rescale the data."
            )
        tensors.append(torch.from_numpy(np.ascontiguousarray(arr)).to(device, torch.float32))
    return tensors


def _split(x, y, n_test: int, generator: torch.Generator):
    order = torch.randperm(x.shape[0], generator=generator, device=x.device)
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]


def _train(network, x, y, config: DVTrainingConfig, generator, progress) -> torch.Tensor:
    optimizer = torch.optim.Adam(network.parameters(), lr=config.learning_rate)
    n, size = x.shape[0], config.batch_size
    curve = torch.empty(config.steps, device=x.device)
    rate = config.ema_rate
    log_keep, log_new = (math.log1p(-rate) if rate < 1 else -math.inf), math.log(rate)
    log_avg = None
    for step in trange(config.steps, disable=not progress, desc="DV training", leave=False):
        joint = torch.randint(n, (size,), generator=generator, device=x.device)
        other = torch.randint(n, (size,), generator=generator, device=x.device)
        t_joint = network(x[joint], y[joint])
        t_marg = network(x[joint], y[other])
        log_mean = _log_mean_exp(t_marg)
        new = log_mean.detach()
        log_avg = new if log_avg is None else torch.logaddexp(log_avg + log_keep, new + log_new)
        # gradient: E_P[grad T] - E_Q[e^T grad T] / (moving average of E_Q[e^T])
        loss = -(t_joint.mean() - torch.exp(log_mean - log_avg))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        curve[step] = t_joint.detach().mean() - new
    return curve


def _evaluate(network, x, y, config: DVTrainingConfig, generator) -> tuple[np.ndarray, np.ndarray]:
    def statistic(x_part, y_part):
        return torch.cat(
            [
                network(x_part[i : i + _EVAL_CHUNK], y_part[i : i + _EVAL_CHUNK])
                for i in range(0, x_part.shape[0], _EVAL_CHUNK)
            ]
        )

    with torch.no_grad():
        t_joint = statistic(x, y)
        t_marg = torch.stack(
            [
                statistic(x, y[torch.randperm(y.shape[0], generator=generator, device=y.device)])
                for _ in range(config.marginal_permutations)
            ]
        )
    return t_joint.double().cpu().numpy(), t_marg.double().cpu().numpy()


def _bootstrap(t_joint: np.ndarray, t_marg: np.ndarray, config: DVTrainingConfig, seed: int):
    """Percentile interval of the DV bound over ``n_bootstrap`` resamples of the held-out
    indices, drawn in chunks of at most ``_BOOTSTRAP_CHUNK`` statistics so that memory does
    not grow with ``n_bootstrap``."""
    rng = np.random.default_rng(seed)
    n = t_joint.shape[0]
    per_chunk = max(1, _BOOTSTRAP_CHUNK // (t_marg.shape[0] * n))
    values = []
    for start in range(0, config.n_bootstrap, per_chunk):
        idx = rng.integers(0, n, size=(min(per_chunk, config.n_bootstrap - start), n))
        marg = t_marg[:, idx]  # (permutations, resamples, n)
        peak = marg.max(axis=(0, 2))
        log_mean = peak + np.log(np.mean(np.exp(marg - peak[None, :, None]), axis=(0, 2)))
        values.append(t_joint[idx].mean(axis=1) - log_mean)
    tail = (1.0 - config.confidence) / 2.0
    return np.quantile(np.concatenate(values), [tail, 1.0 - tail])


def _fit(build, x, y, n_test, config, seed, device, progress, method) -> MIEstimate:
    func = f"{method}_estimate"
    with torch.random.fork_rng(devices=[]):  # the caller's global RNG stays untouched
        torch.manual_seed(seed)
        network = build()
    generator = torch.Generator(device=device)
    generator.manual_seed(seed)
    x_train, y_train, x_test, y_test = _split(x, y, n_test, generator)
    network = network.to(device)
    curve = _train(network, x_train, y_train, config, generator, progress)
    t_joint, t_marg = _evaluate(network, x_test, y_test, config, generator)
    if not (np.isfinite(t_joint).all() and np.isfinite(t_marg).all()):
        raise ValueError(
            f"{func} could not produce a finite estimate: the statistics network diverged "
            f"(non-finite T on held-out samples) at learning_rate={config.learning_rate:g}; "
            "lower the learning rate or keep standardize=True."
        )
    value = dv_lower_bound(t_joint, t_marg)
    ci_low, ci_high = _bootstrap(t_joint, t_marg, config, seed)
    logger.info(
        "%s: %.4f nats [%.4f, %.4f] on %d held-out samples", method, value, ci_low, ci_high, n_test
    )
    return MIEstimate(
        value=value,
        ci_low=float(ci_low),
        ci_high=float(ci_high),
        confidence=config.confidence,
        train_curve=curve.cpu().numpy(),
        n_train=int(x_train.shape[0]),
        n_test=int(n_test),
        method=method,
    )


def mine_estimate(
    x,
    y,
    *,
    hidden=(200, 200),
    activation: str = "elu",
    config: DVTrainingConfig | None = None,
    seed: int = 0,
    device: str | torch.device = "auto",
    progress: bool = False,
) -> MIEstimate:
    """MINE estimate of ``I(X; Y)`` in nats (Belghazi et al. 2018, Algorithm 1, Section 3.2).

    Parameters
    ----------
    x, y : array-like or torch.Tensor, shape (n, ...)
        Paired samples (first axis); further axes are flattened.
    hidden : tuple of int, default (200, 200)
        Hidden widths of the statistics network :class:`ConcatStatistics`.
    activation : {"elu", "relu"}, default "elu"
    config : DVTrainingConfig, optional
        Defaults to ``DVTrainingConfig()`` (5000 steps of 256 samples, Adam 1e-4).
    seed : int
        Seeds the split, the mini-batches, the network and the bootstrap; in [0, 2**63 - 1].
    device : "auto", "cpu", "cuda", ...
    progress : bool
        Show a progress bar.

    Domain: ``x`` and ``y`` finite real samples, neither constant, at least
    ``config.batch_size`` training and 2 held-out samples; any magnitude with
    ``config.standardize`` (the default), float32-sized data without it. The returned
    value and interval are finite.

    Raises
    ------
    ValueError
        NaN / inf, different sample counts, constant ``x`` or ``y``, too few samples for
        ``config``, a network above :data:`MAX_PARAMETERS`, or a diverged training run
        (no finite estimate).

    Examples
    --------
    >>> from estimators.mi import correlated_gaussian_pair
    >>> x, y = correlated_gaussian_pair(400, 1, 0.5)
    >>> tiny = DVTrainingConfig(steps=20, batch_size=32, n_bootstrap=20)  # a smoke run only
    >>> est = mine_estimate(x, y, hidden=(8,), config=tiny, device="cpu")
    >>> est.method, est.ci_low <= est.value <= est.ci_high, est.n_train + est.n_test
    ('mine', True, 400)
    """
    func = "mine_estimate"
    config = DVTrainingConfig() if config is None else _check_config(config, func)
    seed = check_seed(seed, func=func)
    progress = check_bool("progress", progress, func=func)
    device = resolve_device(device)
    x, y, n_test = _samples(x, y, func=func, config=config)
    x = x.reshape(x.shape[0], -1)

    def build():
        return ConcatStatistics(x.shape[1], y.shape[1], hidden=hidden, activation=activation)

    x, y = _network_inputs(
        {"x": (x, (0,)), "y": (y, (0,))}, func=func, config=config, device=device
    )
    return _fit(build, x, y, n_test, config, seed, device, progress, "mine")


def hmine_estimate(
    x_batch,
    g,
    *,
    block_hidden=(200, 200),
    embedding_dim: int = 5,
    mix_hidden=(500,),
    activation: str = "elu",
    config: DVTrainingConfig | None = None,
    seed: int = 0,
    device: str | torch.device = "auto",
    progress: bool = False,
) -> MIEstimate:
    """H-MINE estimate of ``I(X_B; G)`` in nats (Liu et al. 2021, Algorithm 1).

    Parameters
    ----------
    x_batch : array-like or torch.Tensor, shape (n, B, ...)
        ``n`` sampled batches of ``B`` i.i.d. inputs; axes after the second are flattened
        into the features of one input ``x_m``.
    g : array-like or torch.Tensor, shape (n, ...)
        The gradient (or any function of the batch) of each sampled batch, flattened.
    block_hidden, embedding_dim, mix_hidden, activation :
        Architecture of :class:`HierarchicalStatistics` (paper: (200, 200), 5, (500,)).
    config : DVTrainingConfig, optional
        Defaults to the paper's Adam learning rate 5e-5 (Section 3.1) and 5000 steps of
        256 samples.
    seed, device, progress :
        As in :func:`mine_estimate`.

    Raises
    ------
    ValueError
        As :func:`mine_estimate`, and ``x_batch`` with fewer than 2 axes.

    Examples
    --------
    >>> from estimators.mi import GaussianBatchChannel
    >>> x_batch, g = GaussianBatchChannel(batch_size=2, dim_x=2, dim_g=2, noise_std=0.5).sample(400)
    >>> tiny = DVTrainingConfig(steps=20, batch_size=32, n_bootstrap=20)  # a smoke run
    >>> est = hmine_estimate(
    ...     x_batch, g, block_hidden=(8,), mix_hidden=(8,), config=tiny, device="cpu")
    >>> est.method, est.ci_low <= est.value <= est.ci_high
    ('hmine', True)
    """
    func = "hmine_estimate"
    config = DVTrainingConfig(learning_rate=5e-5) if config is None else _check_config(config, func)
    seed = check_seed(seed, func=func)
    progress = check_bool("progress", progress, func=func)
    device = resolve_device(device)
    x, g, n_test = _samples(x_batch, g, func=func, config=config, names=("x_batch", "g"))
    if x.ndim < 2:
        raise ValueError(
            f"The 'x_batch' parameter of {func} must have shape (n, B, ...). "
            f"Got shape {tuple(x.shape)} instead."
        )
    x = x.reshape(x.shape[0], x.shape[1], -1)

    def build():
        return HierarchicalStatistics(
            x.shape[2],
            g.shape[1],
            x.shape[1],
            block_hidden=block_hidden,
            embedding_dim=embedding_dim,
            mix_hidden=mix_hidden,
            activation=activation,
        )

    # the B inputs are i.i.d., so every feature is standardised over samples and positions
    x, g = _network_inputs(
        {"x_batch": (x, (0, 1)), "g": (g, (0,))}, func=func, config=config, device=device
    )
    return _fit(build, x, g, n_test, config, seed, device, progress, "hmine")
