r"""Empirical privacy of Fed-LTP's DP, pruned uploads: what an attacker recovers against epsilon.

Fed-LTP (``papers/fed-ltp-lottery-ticket-zcdp.txt``) reports an epsilon and never attacks its
own uploads. This module attacks them and puts four numbers about the same secret side by
side, per noise multiplier :math:`\sigma`:

* **epsilon** of the attacked release (:mod:`bounds.accounting`, nats, at ``delta``);
* **Hayes et al.'s bound** on the success of naming the secret (Hayes, Mahloujifar, Balle
  2023, arXiv 2302.07225; :func:`bounds.leakage.gdp_reconstruction_bound` and
  :func:`bounds.leakage.dp_reconstruction_bound`);
* **what attacks achieve**: SGI (mask-aware) and GI (dense view) of
  :mod:`sims.attacks` with known labels, scored by identification (does
  :func:`sims.attacks.identify` name the true batch among the client's records?) and PSNR;
  beside them the Bayes-optimal (MAP) attacker's success, computed exactly;
* **bits**: the exact :math:`I(\text{batch}; \text{upload})` by Monte Carlo over the noise
  with the exact posterior over all :math:`N` candidate batches
  (:func:`bounds.leakage.batch_leakage`), against :math:`\log_2 N`, and Fano's lower bound
  from each attack's identification errors (:func:`sims.sweep.leakage_bits.fano_bits`).

The release, as Fed-LTP's client makes it (:class:`sims.fedltp.DPLocalTrainer`,
``clipping="per_example"``, Opacus). One round of **tau = 1** local DP-SGD step, so the
attacked quantity is one noisy gradient:

.. math::

    \hat w = m\odot\Big(m\odot w - \eta\,\frac1B\Big(\sum_{i\in S}
    \mathrm{clip}_C(m\odot\nabla\ell_i(m\odot w)) + N(0, \sigma^2C^2 I)\Big)\Big),

:math:`\mathrm{clip}_C(g) = g\min(1, C/(\|g\| + 10^{-6}))` (Opacus' factor), :math:`m` the
ticket (here: magnitude pruning of the broadcast weights at rate ``pruning_rate`` through
:func:`sims.fedltp.prune_remaining`, the rule Fed-LTP's tickets and fed-iterative masks
use; the mask does not depend on the client's data). The server reads
:math:`(w - \hat w)/\eta` on the kept coordinates: the mean of the batch's clipped
single-record releases :math:`r_i` plus :math:`N(0, (\sigma C/B)^2 I)`.

Sampling. The batch is **one fixed-size batch**: a uniformly random :math:`B`-subset
:math:`S` of the client's :math:`n` records (:class:`FixedBatchTrainer` replaces only the
Poisson draw of :meth:`DPLocalTrainer.draw_batches`; everything else is the trainer's own
``train``). The secret is :math:`S`, one of :math:`N = \binom nB` equally likely values,
so the blind guess succeeds with :math:`\kappa = 1/N`. With Poisson batches the secret
would be a subset of random size with a non-uniform prior; not done here.

Neighbouring relation of the bound. Two candidate batches differ by **replacing** records
(the batch size is fixed), :math:`\min(B, n - B)` of them at most. Replacing one record
moves the clipped sum by at most :math:`2C`, so between any two candidates the release is
the Gaussian mechanism with sensitivity :math:`2C\min(B, n-B)` and noise :math:`\sigma C`:
:math:`\mu = 2\min(B, n-B)/\sigma`-GDP (Dong, Roth, Su 2022, Thm. 2.7), and Hayes' bound
is :math:`\Phi(\Phi^{-1}(1/N) + \mu)`. ``hayes_gdp_data`` uses the data's own largest
distance between two candidates' clipped sums instead of :math:`2C\min(B, n-B)` (valid
for this client's candidate set, tighter). ``hayes_dp`` is the (epsilon, delta) form
:math:`\min(1, e^\epsilon/N + \delta)` with the replace-one epsilon of the step (a
Gaussian of noise multiplier :math:`\sigma/(2\min(B, n-B))`, RDP converted at ``delta``,
no subsampling). ``epsilon`` is what Fed-LTP's accountant reports for the step under its
add/remove relation (noise multiplier :math:`\sigma`, sampling rate 1: the fixed batch is
not amplified by Poisson sampling).

The measured table and what it says are in docs/findings/fedltp.md ("Does epsilon predict
what an attacker recovers?").
"""

from __future__ import annotations

import copy
import logging
import math
from dataclasses import asdict, dataclass, field
from itertools import combinations

import numpy as np
import torch
from torch import nn

from pruneleak.bounds.accounting import DEFAULT_ORDERS, epsilon_from_rdp, rdp_gaussian
from pruneleak.bounds.leakage import (
    batch_leakage,
    clopper_pearson_interval,
    dp_reconstruction_bound,
    gdp_reconstruction_bound,
)
from pruneleak.bounds.validation import check_int, check_real
from pruneleak.estimators.image import match_reconstructions, psnr
from pruneleak.sims.attacks import (
    DIGITS_ATTACK_MODEL,
    AttackConfig,
    gi_attack_batched,
    identify,
    sgi_attack_batched,
)
from pruneleak.sims.core.runtime import check_seed, fingerprint, seeded
from pruneleak.sims.data.datasets import load_digits_dataset
from pruneleak.sims.fedltp.dp_local import DPLocalTrainer
from pruneleak.sims.fedltp.masks import prune_remaining
from pruneleak.sims.fedltp.tickets import current_params
from pruneleak.sims.models import conv_net
from pruneleak.sims.pruning.mask import Mask
from pruneleak.sims.store.keys import key_number
from pruneleak.sims.store.reconstructions import save_reconstructions
from pruneleak.sims.sweep.leakage_bits import fano_bits

logger = logging.getLogger(__name__)

#: Opacus' clipping factor min(1, C / (||g|| + CLIP_EPS)) (opacus/optimizers/optimizer.py).
CLIP_EPS = 1e-6
#: PSNR reported for an exact reconstruction (``inf``) so that medians stay finite.
PSNR_CAP = 100.0


class FixedBatchTrainer(DPLocalTrainer):
    """:class:`DPLocalTrainer` whose every local step uses one given batch.

    Only :meth:`draw_batches` differs: it returns ``batch`` (indices into the client's
    records) for each step instead of a Poisson draw; clipping, noise, masking and the
    SGD step are the trainer's own. ``batch_size`` is ``len(batch)`` (Opacus divides the
    noisy sum by it).
    """

    def __init__(self, model: nn.Module, batch, **options):
        self.batch = torch.as_tensor(batch, dtype=torch.int64).reshape(-1)
        super().__init__(model, batch_size=len(self.batch), **options)

    def draw_batches(self, n: int, *, steps: int, seed: int) -> list[torch.Tensor]:
        """``steps`` copies of the fixed batch (``n`` and ``seed`` unused)."""
        if len(self.batch) and int(self.batch.max()) >= n:
            raise ValueError(
                f"The 'batch' parameter of FixedBatchTrainer must index the client's {n} "
                f"records. Got index {int(self.batch.max())} instead."
            )
        return [self.batch.clone() for _ in range(steps)]


def dp_upload(
    model: nn.Module,
    params: dict[str, torch.Tensor],
    mask: Mask,
    images: torch.Tensor,
    labels: torch.Tensor,
    batch,
    *,
    max_grad_norm: float,
    noise_multiplier: float,
    lr: float,
    seed: int,
    steps: int = 1,
) -> dict[str, torch.Tensor]:
    """The weights a Fed-LTP client uploads after ``steps`` DP-SGD steps on ``batch``.

    :class:`FixedBatchTrainer` (per-example clipping to ``max_grad_norm``, noise
    ``noise_multiplier * max_grad_norm``, no momentum) on a deep copy of ``model`` from
    ``params`` under ``mask``; ``seed`` drives the noise (the trainer's ``seed + 1``
    generator). Pruned weights are 0 in the result (the server reads the mask off them).
    """
    trainer = FixedBatchTrainer(
        _copy(model),
        batch,
        clipping="per_example",
        max_grad_norm=max_grad_norm,
        noise_multiplier=noise_multiplier,
        momentum=0.0,
        device=images.device,
    )
    return trainer.train(params, mask, images, labels, steps=steps, lr=lr, seed=seed)


def _copy(model: nn.Module) -> nn.Module:
    return copy.deepcopy(model)


def clipped_releases(
    model: nn.Module,
    params: dict[str, torch.Tensor],
    mask: Mask,
    images: torch.Tensor,
    labels: torch.Tensor,
    *,
    max_grad_norm: float,
) -> torch.Tensor:
    r"""``(n, k)`` float64: row ``i`` the clipped masked gradient :math:`r_i` of record ``i``
    alone at :math:`m\odot w`, on the ``k`` kept coordinates (parameter order): the release
    model of one noisy step (module docstring). A loop over records, one backward each."""
    work = _copy(model).to(torch.float64)
    point = mask.apply(params)
    with torch.no_grad():
        for name, p in work.named_parameters():
            p.copy_(point[name])
    named = list(work.named_parameters())
    keep = [mask.keep[name].to(p.device).reshape(-1) for name, p in named]
    rows = []
    for image, label in zip(images, labels, strict=True):
        loss = nn.functional.cross_entropy(work(image[None].double()), label[None])
        grads = torch.autograd.grad(loss, [p for _, p in named])
        flat = torch.cat([g.reshape(-1)[k] for g, k in zip(grads, keep, strict=True)])
        norm = torch.linalg.vector_norm(flat)
        rows.append(flat * torch.clamp(max_grad_norm / (norm + CLIP_EPS), max=1.0))
    return torch.stack(rows).detach().cpu()


def kept_vector(params: dict[str, torch.Tensor], mask: Mask) -> torch.Tensor:
    """The kept coordinates of ``params`` as one float64 vector (parameter order)."""
    return torch.cat(
        [params[n].detach().reshape(-1)[mask.keep[n].reshape(-1)] for n in mask.keep]
    ).to("cpu", torch.float64)


def read_noise_std(noise_multiplier: float, max_grad_norm: float, batch_size: int) -> float:
    """Std per kept coordinate of the noise in the read gradient ``(w - w_hat) / lr``:
    ``sigma C / B`` (Opacus adds ``N(0, sigma^2 C^2)`` to the sum and divides by B)."""
    return noise_multiplier * max_grad_norm / batch_size


def step_epsilon(noise_multiplier: float, delta: float) -> float:
    """Epsilon (nats) of one Gaussian step of ``noise_multiplier`` (sensitivity units), no
    subsampling, RDP (Mironov 2017, Prop. 7) converted at ``delta`` (tight conversion,
    :func:`bounds.accounting.epsilon_from_rdp`); ``inf`` without noise."""
    if noise_multiplier == 0:
        return math.inf
    eps, _ = epsilon_from_rdp(DEFAULT_ORDERS, rdp_gaussian(DEFAULT_ORDERS, noise_multiplier), delta)
    return float(eps)


def _subset_sum_diameter(releases: np.ndarray, b: int) -> float:
    """Largest distance between the clipped sums of two ``b``-subsets (enumerated)."""
    sums = np.array([releases[list(s)].sum(axis=0) for s in combinations(range(len(releases)), b)])
    sq = (sums**2).sum(1)
    d2 = sq[:, None] + sq[None, :] - 2 * sums @ sums.T
    return float(math.sqrt(max(0.0, d2.max())))


@dataclass(frozen=True)
class EmpiricalConfig:
    """The grid of the empirical-privacy study (module docstring).

    Attributes:
        sigmas: noise multipliers sigma >= 0 (0 is the no-DP reference).
        local_size: n, the client's records (digits, drawn per trial), >= 2.
        batch_size: B in [1, n), the fixed batch of the step.
        max_grad_norm: C > 0, the per-example clipping norm.
        pruning_rate: fraction of each layer's weights the ticket prunes, in [0, 1).
        lr: client learning rate eta > 0.
        trials: clients attacked per sigma (own records, batch, weights and noise), >= 1.
        iterations: Adam iterations per inversion, >= 1.
        restarts: inversion restarts, >= 1.
        delta: delta of epsilon and of Hayes' (epsilon, delta) bound, in (0, 1).
        mc_samples: Monte Carlo draws of the exact bits, >= 2.
        seed: >= 0.
        attack: the inversion (default: :meth:`AttackConfig.inverting_gradients` with
            ``iterations``, ``restarts``, ``seed``, on the CPU).
    """

    sigmas: tuple[float, ...] = (0.0, 0.5, 1.0, 2.0, 4.0)
    local_size: int = 16
    batch_size: int = 1
    max_grad_norm: float = 1.0
    pruning_rate: float = 0.5
    lr: float = 0.1
    trials: int = 16
    iterations: int = 300
    restarts: int = 1
    delta: float = 1e-5
    mc_samples: int = 4096
    seed: int = 0
    attack: AttackConfig = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        func = "EmpiricalConfig"
        sig = tuple(check_real("sigmas", s, func=func, low=0) for s in self.sigmas)
        if not sig:
            raise ValueError(f"The 'sigmas' parameter of {func} must be non-empty. Got ().")
        object.__setattr__(self, "sigmas", sig)
        n = check_int("local_size", self.local_size, func=func, low=2)
        check_int("batch_size", self.batch_size, func=func, low=1, high=n - 1)
        check_real("max_grad_norm", self.max_grad_norm, func=func, low=0, low_inclusive=False)
        check_real(
            "pruning_rate", self.pruning_rate, func=func, low=0, high=1, high_inclusive=False
        )
        check_real("lr", self.lr, func=func, low=0, low_inclusive=False)
        check_int("trials", self.trials, func=func, low=1)
        check_int("iterations", self.iterations, func=func, low=1)
        check_int("restarts", self.restarts, func=func, low=1)
        check_real(
            "delta", self.delta, func=func, low=0, high=1, low_inclusive=False, high_inclusive=False
        )
        check_int("mc_samples", self.mc_samples, func=func, low=2)
        check_seed(self.seed, func=func)
        if self.attack is None:
            # cosine matching (clipping rescales the gradient, which l2 matching would see)
            # with signed, boxed Adam: Geiping et al.'s attack, PriPrune's SGI setting
            attack = AttackConfig.inverting_gradients(
                iterations=self.iterations, restarts=self.restarts, device="cpu", seed=self.seed
            )
            object.__setattr__(self, "attack", attack)

    @property
    def secrets(self) -> int:
        """N = C(n, B), the candidate batches."""
        return math.comb(self.local_size, self.batch_size)

    @property
    def replaced(self) -> int:
        """min(B, n - B): records two candidate batches differ in, at most."""
        return min(self.batch_size, self.local_size - self.batch_size)


@dataclass(frozen=True)
class _Client:
    images: torch.Tensor  # (n, 1, 8, 8)
    labels: torch.Tensor  # (n,)
    batch: list[int]  # sorted positions of the fixed batch
    params: dict[str, torch.Tensor]
    mask: Mask
    releases: np.ndarray  # (n, k) clipped single-record releases


def _model() -> nn.Module:
    return conv_net(in_channels=1, image_size=8, num_classes=10, **DIGITS_ATTACK_MODEL)


def _clients(config: EmpiricalConfig, model: nn.Module) -> list[_Client]:
    data = load_digits_dataset()
    rng = np.random.default_rng(config.seed)
    clients = []
    for t in range(config.trials):
        rows = rng.choice(len(data.labels), size=config.local_size, replace=False)
        batch = sorted(int(i) for i in rng.choice(config.local_size, config.batch_size, False))
        with seeded(config.seed * 100_003 + t):
            params = current_params(_model())
        mask = prune_remaining(params, Mask.ones(params), config.pruning_rate)
        images, labels = data.images[rows], data.labels[rows]
        releases = clipped_releases(
            model, params, mask, images, labels, max_grad_norm=config.max_grad_norm
        ).numpy()
        clients.append(_Client(images, labels, batch, params, mask, releases))
    return clients


def _attack(attack, model, clients, uploads, config) -> tuple[int, list[float], torch.Tensor]:
    """(identification successes, per-trial mean PSNR, every trial's reconstructions in
    its batch's order, concatenated) of one attack over the trials."""
    b = config.batch_size
    results = attack(
        model,
        [c.params for c in clients],
        uploads,
        lr=config.lr,
        batch_shape=(b, 1, 8, 8),
        num_classes=10,
        labels=[c.labels[c.batch] for c in clients],
        config=config.attack,
        seeds=[config.seed + t for t in range(len(clients))],
    )
    hits, psnrs, matched = 0, [], []
    for c, res in zip(clients, results, strict=True):
        hits += identify(res.images, c.images) == c.batch
        originals = c.images[c.batch].numpy()
        recon = res.images.numpy()
        # each original against its closest reconstruction (optimistic for B > 1)
        value = float(np.mean([max(psnr(o, r) for r in recon) for o in originals]))
        psnrs.append(min(value, PSNR_CAP))
        matched.append(res.images[match_reconstructions(originals, recon)])
    return hits, psnrs, torch.cat(matched)


def reconstruction_key(config: EmpiricalConfig, sigma: float, attack: str) -> str:
    """The key under which :func:`empirical_privacy` keeps ``attack``'s (``"sgi"`` or
    ``"gi"``) reconstructions at ``sigma`` (:mod:`sims.store.reconstructions`): one
    folder per configuration (its fingerprint), so studies of several configurations
    can share an output folder."""
    return f"fedltp-empirical/{fingerprint(config_dict(config))}/sigma={key_number(sigma)}/{attack}"


def empirical_privacy(
    config: EmpiricalConfig | None = None, *, reconstructions_dir=None
) -> list[dict]:
    """One record per sigma of ``config`` (module docstring for every field):

    ``sigma``, ``epsilon`` (add/remove, the accountant's reading of the step),
    ``epsilon_replace``, ``mu`` (replace-one GDP), ``kappa`` = 1/N, ``hayes_gdp``,
    ``hayes_gdp_data`` (mean over trials), ``hayes_dp``, ``bayes_success`` (MAP attacker,
    mean over trials) and ``bayes_success_ci`` (the mean of the trials' 95 % Monte Carlo
    intervals), ``sgi_success`` / ``gi_success`` with 95 % Clopper-Pearson intervals,
    ``sgi_psnr`` / ``gi_psnr`` (median over trials, dB, capped at :data:`PSNR_CAP`),
    ``bits`` (mean exact I(batch; upload) over trials) and ``bits_ci`` (the mean of the
    trials' intervals), ``log2_secrets``, ``sgi_fano_bits`` / ``gi_fano_bits``, ``trials``.

    With ``reconstructions_dir`` each attack's reconstructions at each sigma (every
    trial's batch, matched to its originals) are written there under
    :func:`reconstruction_key` (:func:`sims.store.reconstructions.save_reconstructions`);
    :func:`sims.plots.fedltp.plot_empirical_reconstructions` draws them.
    """
    config = EmpiricalConfig() if config is None else config
    model = _model()
    clients = _clients(config, model)
    b, c_norm = config.batch_size, config.max_grad_norm
    diameters = [_subset_sum_diameter(c.releases, b) for c in clients]
    records = []
    for si, sigma in enumerate(config.sigmas):
        uploads = [
            dp_upload(
                model,
                c.params,
                c.mask,
                c.images,
                c.labels,
                c.batch,
                max_grad_norm=c_norm,
                noise_multiplier=sigma,
                lr=config.lr,
                seed=config.seed + 7919 * t + 104_729 * si,
            )
            for t, c in enumerate(clients)
        ]
        sgi = _attack(sgi_attack_batched, model, clients, uploads, config)
        gi = _attack(gi_attack_batched, model, clients, uploads, config)
        if reconstructions_dir is not None:
            originals = torch.cat([c.images[c.batch] for c in clients])
            for attack, (_, _, images) in (("sgi", sgi), ("gi", gi)):
                key = reconstruction_key(config, sigma, attack)
                save_reconstructions(reconstructions_dir, key, originals, images)
        noise = read_noise_std(sigma, c_norm, b)
        leaks = [
            batch_leakage(c.releases, noise, b, samples=config.mc_samples, seed=config.seed + t)
            for t, c in enumerate(clients)
        ]
        records.append(_sigma_record(config, sigma, diameters, leaks, sgi=sgi, gi=gi))
        logger.info("sigma %g: %s", sigma, records[-1])
    return records


def _sigma_record(config: EmpiricalConfig, sigma: float, diameters, leaks, *, sgi, gi) -> dict:
    """The record of :func:`empirical_privacy` at ``sigma``: the accountant's epsilons,
    Hayes et al.'s bounds, the exact leakage of the trials (``leaks``, one
    :func:`batch_leakage` per trial) and the two attacks' results (:func:`_attack`),
    with Fano's bound on the bits each attack's errors imply."""
    n, b, trials = config.local_size, config.batch_size, config.trials
    kappa = 1 / config.secrets
    sgi_hits, sgi_psnr, _ = sgi
    gi_hits, gi_psnr, _ = gi
    mu = math.inf if sigma == 0 else 2 * config.replaced / sigma
    mu_data = [math.inf if sigma == 0 else d / (sigma * config.max_grad_norm) for d in diameters]
    eps_replace = step_epsilon(sigma / (2 * config.replaced), config.delta)
    return {
        "sigma": sigma,
        "epsilon": step_epsilon(sigma, config.delta),
        "epsilon_replace": eps_replace,
        "mu": mu,
        "kappa": kappa,
        "hayes_gdp": gdp_reconstruction_bound(kappa, mu),
        "hayes_gdp_data": float(np.mean([gdp_reconstruction_bound(kappa, m) for m in mu_data])),
        "hayes_dp": dp_reconstruction_bound(kappa, eps_replace, config.delta),
        "bayes_success": float(np.mean([lk.bayes_success for lk in leaks])),
        "bayes_success_ci": _mean_interval([lk.bayes_success_ci for lk in leaks]),
        "sgi_success": sgi_hits / trials,
        "sgi_success_ci": clopper_pearson_interval(sgi_hits, trials),
        "gi_success": gi_hits / trials,
        "gi_success_ci": clopper_pearson_interval(gi_hits, trials),
        "sgi_psnr": float(np.median(sgi_psnr)),
        "gi_psnr": float(np.median(gi_psnr)),
        "bits": float(np.mean([lk.bits for lk in leaks])),
        "bits_ci": _mean_interval([lk.ci_bits for lk in leaks]),
        "log2_secrets": math.log2(config.secrets),
        "sgi_fano_bits": fano_bits(n, b, trials - sgi_hits, trials),
        "gi_fano_bits": fano_bits(n, b, trials - gi_hits, trials),
        "trials": trials,
    }


def _mean_interval(intervals) -> list[float]:
    """The mean of the trials' lower and of their upper limits: it contains the mean of
    the trials' values whenever every trial's interval contains its value."""
    return [
        float(np.mean([lo for lo, _ in intervals])),
        float(np.mean([hi for _, hi in intervals])),
    ]


_COLUMNS = [
    ("sigma", "sigma", "{:.2f}"),
    ("epsilon", "eps", "{:.3g}"),
    ("epsilon_replace", "eps_rep", "{:.3g}"),
    ("hayes_dp", "Hayes(eps)", "{:.3f}"),
    ("hayes_gdp", "Hayes(mu)", "{:.3f}"),
    ("hayes_gdp_data", "Hayes(data)", "{:.3f}"),
    ("bayes_success", "MAP", "{:.3f}"),
    ("sgi_success", "SGI id", "{:.3f}"),
    ("gi_success", "GI id", "{:.3f}"),
    ("sgi_psnr", "SGI dB", "{:.1f}"),
    ("gi_psnr", "GI dB", "{:.1f}"),
    ("bits", "I bits", "{:.3f}"),
    ("bits_ci", "I 95% CI", "[{0[0]:.3f}, {0[1]:.3f}]"),
    ("log2_secrets", "log2 N", "{:.2f}"),
    ("sgi_fano_bits", "Fano SGI", "{:.3f}"),
    ("gi_fano_bits", "Fano GI", "{:.3f}"),
]


def format_table(records: list[dict]) -> str:
    """The records as a fixed-width text table, one row per sigma."""
    head = [h for _, h, _ in _COLUMNS]
    rows = [[fmt.format(r[k]) for k, _, fmt in _COLUMNS] for r in records]
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(head, widths, strict=True))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(lines)


def config_dict(config: EmpiricalConfig) -> dict:
    """``config`` as plain values (the attack as its own dict)."""
    return asdict(config)
