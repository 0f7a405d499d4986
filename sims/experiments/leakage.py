"""Bounds and attacks on one axis: the exact leakage of a real pruned update, in bits.

Issue 12. The secret ``X`` is the client's batch: ``B`` distinct images drawn uniformly
from ``M`` candidates (a uniform ``B``-subset, what a shuffled loader draws; ``N =
C(M, B)`` equally likely values, one image when ``B = 1``); the release ``Y`` is what the
server sees of one FedSGD round, the kept coordinates of ``w_hat = m ⊙ (w - lr g(m ⊙ w))``
(PriPrune eq. (1), :func:`sims.fl.client.client_update`, ``g`` the batch's mean gradient,
so the release of a batch is the mean of its members' single releases), plus Gaussian
noise ``N(0, s^2 I)`` in the units of the weights (``s = 0``: plain FedSGD). The mask is
random, drawn from the seed before any data are seen, so which coordinates are kept is
public and carries no information about ``X``: the release is the vector of kept
coordinates alone.

For each pruning rate ``p`` and noise ``s`` one record holds, all in bits:

* the ceiling ``log2 N`` (the secret's entropy; ``log2 M`` for ``B = 1``) and the exact
  ``I(X; Y)`` with its Monte Carlo interval and the Bayes-optimal identification success
  (:func:`bounds.leakage.batch_leakage` on the ``M`` release vectors of
  :func:`sims.fl.release.release_vectors`: exact posterior over all ``N`` batches up to
  its ``max_enumerated``, beyond that a bracket of two bounds, ``exact_method`` says
  which; the bracket has no Bayes success, None);
* the Gaussian-channel upper bound (``s > 0``; the covariance of a batch's mean release
  is that of one release times ``(M - B) / (B (M - 1))``, the finite-population
  correction of a mean drawn without replacement, Cochran, *Sampling Techniques*, 3rd
  ed., Thm. 2.2) and the bound of Hayes et al. (2023) on any attack's identification
  success for the Gaussian mechanism, with the sensitivity ``max_ij ||r_i - r_j||`` over
  the candidates (:mod:`bounds.leakage.reconstruction`; for ``B > 1`` it bounds the
  batches' sensitivity too: ``r_S - r_S'`` is ``1/B`` times a sum of at most ``B`` differences
  of two single releases);
* PriPrune's Theorem 1 as published and corrected, ``d*`` and ``Delta`` estimated from
  ``stats_samples`` per-sample gradients of the kept coordinates at ``m ⊙ w`` (the point
  where the release's gradient is taken), labelled valid / vacuous / violated, and
  re-evaluated at every sample size of ``theorem1_sample_sizes`` (``d*`` is the rank of
  a sample covariance, at most ``n - 1``: the bound moves with ``n`` while the leakage
  cannot);
* SGI and GI on ``attack_targets`` noisy releases (iDLG labels for ``B = 1``, labels
  optimised jointly otherwise: an attacker given the labels would bound ``I(X; Y,
  labels)``, not ``I(X; Y)``): the attacker names the candidates nearest (L2) to its
  reconstruction (:func:`sims.attacks.identify`); the Clopper-Pearson upper limit of the
  error gives Fano's lower bound on ``I(X; Y)``;
* optionally (``estimate_draws > 0``, small ``M``) KSG, MINE and H-MINE estimates of the
  same ``I(X; Y)`` from draws of ``(X, Y)``.

Records go to a :class:`sims.core.store.ResultStore`, keyed by a fingerprint of the
fields that change the numbers (the grid of ``p`` and ``s`` excepted: every ``(p, s)``
draws its own noise from a seed of its own, so adding a noise level resumes).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
from tqdm.auto import tqdm

from bounds import leakage, priprune
from bounds.validation import check_choice, check_distinct, check_int, check_real
from estimators.device import check_device, resolve_device
from estimators.image import match_reconstructions
from estimators.ksg import KSG
from estimators.neural import HMINE, MINE, TrainingConfig
from sims.attacks import (
    AttackConfig,
    gi_attack_batched,
    identify,
    sgi_attack_batched,
)
from sims.core.functional import check_lr
from sims.core.gradstats import gradient_statistics
from sims.core.reconstructions import save_reconstructions
from sims.core.runtime import check_seed, fingerprint
from sims.core.store import ResultStore
from sims.data.datasets import load_dataset
from sims.experiments.attack_model import attack_model
from sims.fl.release import release_vectors
from sims.pruning.mask import Mask, random_mask

ATTACKS = {"sgi": sgi_attack_batched, "gi": gi_attack_batched}
#: Images of each data set a study may draw its candidates from (:mod:`sims.data`), known
#: before any file is read so that a configuration is checked first: the embedded digits
#: (1,797), scikit-image's faces (200) and photograph patches (755), and the official
#: training splits of the file-based MNIST, Fashion-MNIST (60,000) and CIFAR-10 (50,000).
#: FEMNIST is left out: its size depends on the LEAF sample in its folder.
DATASET_SIZES = {
    "digits": 1797,
    "faces": 200,
    "patches": 755,
    "mnist": 60000,
    "fashion_mnist": 60000,
    "cifar10": 50000,
}
DATASETS = tuple(DATASET_SIZES)
#: Confidence of every interval of a record (exact leakage, Clopper-Pearson).
CONFIDENCE = 0.95
#: Largest noise standard deviation: the attacked upload is float32, and ``s * z`` stays
#: finite for every draw ``|z| < 64`` (a larger draw has probability below 1e-800).
MAX_NOISE_STD = float(torch.finfo(torch.float32).max) / 64


@dataclass(frozen=True)
class LeakageConfig:
    """One leakage study: the candidate set, the model, the grid of ``p`` and ``s``.

    Attributes:
        dataset: candidate images, a name of :data:`DATASET_SIZES` (default the 1,797
            8x8 digits of the demo); the model is built for its image shape and classes
            (:func:`sims.experiments.attack_model.attack_model`).
        data_dir: folder of the data set's files for the file-based ones (MNIST,
            Fashion-MNIST, CIFAR-10); ignored by the others. Not part of the fingerprint.
        rates: distinct base pruning rates p, each in [0, 1] (one random mask per p).
        noise_stds: distinct standard deviations s in ``[0, MAX_NOISE_STD]`` of the
            Gaussian noise added to the kept coordinates, in the units of the weights.
        batch_size: client batch size B, in [1, candidates]: the secret is a uniform
            B-subset of the candidates.
        candidates: M, the first M images of a seeded permutation of the data set, in [2,
            its size]; None (default): all of them.
        samples: Monte Carlo draws of the exact leakage, >= 2.
        attack_targets: target batches, each a uniform B-subset of the candidates (drawn
            independently), attacked per (p, s) with SGI and GI, >= 1.
        attack_iterations: iterations of the batched L-BFGS of each attack, >= 1
            (squared-L2 matching as :meth:`sims.attacks.AttackConfig.dlg`; few by default).
        stats_samples: per-sample gradients (the first candidates) behind ``d*`` and
            ``Delta`` of Theorem 1, in [2, candidates]; None (default): min(256,
            candidates).
        theorem1_sample_sizes: further distinct sample sizes n, each in [2, candidates],
            at which Theorem 1 is re-evaluated (record field ``theorem1_by_samples``); None
            (default): the powers of two from 8 below ``candidates``, and ``candidates``.
        estimate_draws: pairs (image, noisy release) drawn per (p, s > 0) for the KSG,
            MINE and H-MINE estimates; 0 (default) skips them, else >= 16. Meant for
            small ``candidates``: the projected release has up to ``candidates - 1``
            dimensions.
        estimate_steps: cap on the Adam steps of each MINE and H-MINE fit (early stopping
            on the validation bound usually ends a fit sooner), >= 1.
        client_lr: the client's learning rate r of eq. (1), > 0 (PriPrune uses 0.25).
        seed: seeds the model, the masks, the candidate order, targets, noise, attacks.
        device: ``"auto"``, ``"cpu"``, ``"cuda"``, ``"cuda:N"`` (resolved at run time).
    """

    dataset: str = "digits"
    data_dir: str | None = None
    rates: tuple[float, ...] = (0.5,)
    noise_stds: tuple[float, ...] = (0.0, 0.01, 0.1)
    batch_size: int = 1
    candidates: int | None = None
    samples: int = 4096
    attack_targets: int = 16
    attack_iterations: int = 50
    stats_samples: int | None = None
    theorem1_sample_sizes: tuple[int, ...] | None = None
    estimate_draws: int = 0
    estimate_steps: int = 500
    client_lr: float = 0.25
    seed: int = 0
    device: str = "auto"

    def __post_init__(self) -> None:
        func = "LeakageConfig"
        check_choice("dataset", self.dataset, func=func, choices=DATASETS)
        for name in ("rates", "noise_stds"):
            object.__setattr__(self, name, check_distinct(name, getattr(self, name), func=func))
            if not getattr(self, name):
                raise ValueError(f"The '{name}' parameter of {func} must not be empty.")
        for p in self.rates:
            check_real("rates", p, func=func, low=0, high=1)
        for s in self.noise_stds:
            check_real("noise_stds", s, func=func, low=0, high=MAX_NOISE_STD)
        if self.candidates is None:
            object.__setattr__(self, "candidates", DATASET_SIZES[self.dataset])
        check_int("candidates", self.candidates, func=func, low=2, high=DATASET_SIZES[self.dataset])
        check_int("batch_size", self.batch_size, func=func, low=1, high=self.candidates)
        check_int("samples", self.samples, func=func, low=2)
        check_int("attack_targets", self.attack_targets, func=func, low=1)
        check_int("attack_iterations", self.attack_iterations, func=func, low=1)
        if self.stats_samples is None:
            object.__setattr__(self, "stats_samples", min(256, self.candidates))
        check_int("stats_samples", self.stats_samples, func=func, low=2, high=self.candidates)
        if self.theorem1_sample_sizes is not None:
            sizes = check_distinct("theorem1_sample_sizes", self.theorem1_sample_sizes, func=func)
            object.__setattr__(self, "theorem1_sample_sizes", sizes)
            for n in sizes:
                check_int("theorem1_sample_sizes", n, func=func, low=2, high=self.candidates)
        if self.estimate_draws != 0:
            check_int("estimate_draws", self.estimate_draws, func=func, low=16)
        check_int("estimate_steps", self.estimate_steps, func=func, low=1)
        check_lr("client_lr", self.client_lr, func=func)
        check_seed(self.seed, func=func)
        check_device(self.device, func=func)

    def sample_sizes(self) -> tuple[int, ...]:
        """The sample sizes of ``theorem1_by_samples``, ascending, each once: the given
        ones, or the powers of two from 8 below ``candidates`` and ``candidates``."""
        if self.theorem1_sample_sizes is not None:
            return tuple(sorted(self.theorem1_sample_sizes))
        m = self.candidates
        return (*(2**e for e in range(3, m.bit_length()) if 2**e < m), m)

    def fingerprint(self) -> str:
        """Hash of the fields that change a record (not the grid, not the device, not
        where the data are read from)."""
        return fingerprint(asdict(self), exclude=("rates", "noise_stds", "data_dir"))


def _subsets(generator, m: int, b: int, n: int) -> torch.Tensor:
    """``n`` independent uniform ``b``-subsets of ``range(m)``, ``(n, b)`` indices: the first
    ``b`` of a uniformly random permutation (an argsort of i.i.d. uniforms) per row."""
    return torch.rand((n, m), generator=generator).argsort(dim=1)[:, :b]


def _job_key(config_fingerprint: str, p: float, s: float) -> str:
    return f"{config_fingerprint}/p={p:g}/noise={s:g}"


def _seed_of(*parts) -> int:
    """A 63-bit seed of its own for each (seed, p, s, use), stable across grids."""
    return int(fingerprint({"parts": list(parts)}), 16) % 2**63


class _World:
    """The model, candidates, targets and per-p releases one configuration shares."""

    def __init__(self, config: LeakageConfig):
        self.config = config
        self.device = resolve_device(config.device)
        data = load_dataset(config.dataset, config.data_dir)
        self.model, self.params = attack_model(
            data.image_shape, data.num_classes, seed=config.seed, device=self.device
        )
        self.num_classes = data.num_classes
        generator = torch.Generator().manual_seed(config.seed)
        order = torch.randperm(len(data), generator=generator)[: config.candidates]
        self.images = data.images[order].to(self.device)
        self.labels = data.labels[order].to(self.device)
        self.targets = _subsets(
            generator, config.candidates, config.batch_size, config.attack_targets
        )
        self._per_p: dict[float, tuple[Mask, torch.Tensor, dict]] = {}

    def at_rate(self, p: float) -> tuple[Mask, torch.Tensor, dict]:
        """(mask, release vectors, per-p record fields) of rate ``p``, computed once.

        The per-p fields: Theorem 1 at ``stats_samples`` and at every size of
        ``theorem1_sample_sizes``, and the sensitivity over the candidates.
        """
        if p not in self._per_p:
            config = self.config
            mask = random_mask(self.params, p, seed=config.seed).to(self.device)
            releases = release_vectors(
                self.model, self.params, mask, self.images, self.labels, lr=config.client_lr
            )
            sizes = config.sample_sizes()
            by_size = {n: self._theorem1(mask, p, n) for n in {*sizes, config.stats_samples}}
            fields = dict(by_size[config.stats_samples])
            fields["theorem1_by_samples"] = [by_size[n] for n in sizes]
            fields["sensitivity"] = leakage.max_pairwise_distance(releases.numpy())
            self._per_p[p] = (mask, releases, fields)
        return self._per_p[p]

    def _theorem1(self, mask: Mask, p: float, n: int) -> dict:
        """Theorem 1 (bits) on ``d*`` and ``Delta`` of the first ``n`` candidates."""
        stats = gradient_statistics(
            self.model, mask.apply(self.params), self.images[:n], self.labels[:n], mask=mask
        )
        inputs = {"p": p, "B": self.config.batch_size, "d_star": stats.d_star, "delta": stats.delta}
        return {
            "kept": stats.d,
            "stats_samples": stats.n_samples,
            "d_star": stats.d_star,
            "delta_nats": stats.delta,
            "theorem1_published_bits": float(priprune.single_round_bound(**inputs, unit="bits")),
            "theorem1_corrected_bits": float(
                priprune.single_round_bound_corrected(
                    d=sum(t.numel() for t in self.params.values()), **inputs, unit="bits"
                )
            ),
        }

    def sent(self, mask: Mask, release: torch.Tensor) -> dict[str, torch.Tensor]:
        """The upload the server sees: ``release`` on the kept coordinates, 0 elsewhere."""
        keep = mask.flatten()
        reference = next(iter(self.params.values()))
        flat = torch.zeros(keep.numel(), dtype=reference.dtype, device=self.device)
        flat[keep] = release.to(self.device, reference.dtype)
        sizes = [t.numel() for t in self.params.values()]
        return {
            name: chunk.reshape(t.shape)
            for (name, t), chunk in zip(self.params.items(), flat.split(sizes), strict=True)
        }


def _attack_successes(
    world: _World, mask: Mask, noisy: torch.Tensor, seed: int
) -> tuple[dict, dict]:
    """Target batches identified by SGI and GI (:func:`sims.attacks.identify` names them),
    and per attack the targets' images with their reconstructions matched to them
    (:func:`estimators.image.match_reconstructions`), concatenated over the targets."""
    config = world.config
    sent = [world.sent(mask, row) for row in noisy]
    attack_config = AttackConfig.dlg(
        optimizer="lbfgs_backtracking",
        iterations=config.attack_iterations,
        label_mode="idlg" if config.batch_size == 1 else "optimize",
        device=str(world.device),
    )
    truth = [sorted(row.tolist()) for row in world.targets]
    successes, kept = {}, {}
    for name, attack in ATTACKS.items():
        results = attack(
            world.model,
            world.params,
            sent,
            lr=config.client_lr,
            batch_shape=(config.batch_size, *world.images.shape[1:]),
            num_classes=world.num_classes,
            config=attack_config,
            seeds=[(seed + k) % 2**63 for k in range(len(sent))],
        )
        named = [identify(r.images, world.images) for r in results]
        successes[name] = sum(guess == true for guess, true in zip(named, truth, strict=True))
        originals = [world.images[row].cpu() for row in world.targets]
        kept[name] = (
            torch.cat(originals),
            torch.cat(
                [
                    r.images[match_reconstructions(x.numpy(), r.images.numpy())]
                    for x, r in zip(originals, results, strict=True)
                ]
            ),
        )
    return successes, kept


def reconstruction_key(config_fingerprint: str, p: float, s: float, attack: str) -> str:
    """Where :func:`run_leakage` keeps ``attack``'s (``"sgi"``, ``"gi"``) reconstructions
    at (p, s) (:mod:`sims.core.reconstructions`): under the job's store key."""
    return f"leakage/{_job_key(config_fingerprint, p, s)}/{attack}"


def _estimates(world: _World, releases: torch.Tensor, p: float, s: float) -> dict:
    """KSG, MINE and H-MINE estimates of ``I(X; Y)`` in bits, each ``{"bits", "ci_bits"}``.

    ``config.estimate_draws`` pairs: ``X`` the batch's images (a uniform ``B``-subset of
    the candidates; ``(B, pixels)`` for H-MINE, a set, flattened for KSG and MINE), ``Y``
    the noisy release in an orthonormal basis of the centred releases' span (a batch's
    mean release lies in it too). The part
    of ``Y`` orthogonal to that span is noise independent of ``X``, and isotropic noise
    stays ``N(0, s^2 I)`` in an orthonormal basis, so the projection is a sufficient
    statistic and ``I(X; Y)`` is unchanged; it is drawn directly in the span. KSG gives
    no interval (``None``); MINE and H-MINE their cross-fitted interval
    (:mod:`estimators.neural.interval`). All ``None`` when
    the estimates are off or ``s = 0`` (a discrete release: these estimators assume a
    density).
    """
    config = world.config
    if config.estimate_draws == 0 or s == 0:
        return dict.fromkeys(("ksg", "mine", "hmine"))
    centred = releases - releases.mean(dim=0)
    _, singular, basis = torch.linalg.svd(centred, full_matrices=False)
    rank = int((singular > singular[0] * max(centred.shape) * 2.2e-16).sum())
    projected = centred @ basis[:rank].T
    generator = torch.Generator().manual_seed(_seed_of(config.seed, p, s, "estimates"))
    draws = config.estimate_draws
    index = _subsets(generator, config.candidates, config.batch_size, draws)
    noise = torch.randn((draws, rank), generator=generator, dtype=torch.float64)
    y = (projected[index].mean(dim=1) + s * noise).numpy()
    x = world.images[index.to(world.device)].reshape(draws, config.batch_size, -1).cpu().numpy()
    training = TrainingConfig(
        max_steps=config.estimate_steps,
        batch_size=min(64, draws // 4),
        confidence=CONFIDENCE,
    )
    options = {"training": training, "device": world.device}
    fits = {
        "mine": MINE(**options).estimate(x.reshape(draws, -1), y, seed=config.seed),
        "hmine": HMINE(**options).estimate(x, y, seed=config.seed),
    }
    ksg = KSG(interval="none").estimate(x.reshape(draws, -1), y).value / math.log(2)
    bits = {"ksg": {"bits": ksg, "ci_bits": None}}
    for name, fit in fits.items():
        ci = [fit.ci_low / math.log(2), fit.ci_high / math.log(2)]
        bits[name] = {"bits": fit.value / math.log(2), "ci_bits": ci}
    return bits


def _record(world: _World, p: float, s: float, reconstructions_dir) -> dict:
    config = world.config
    mask, releases, per_p = world.at_rate(p)
    releases_np = releases.numpy()
    m, b = config.candidates, config.batch_size
    ceiling = leakage.ceiling_bits(m, b, replacement=False)
    exact = leakage.batch_leakage(
        releases_np, s, b, samples=config.samples, confidence=CONFIDENCE, seed=config.seed
    )
    generator = torch.Generator().manual_seed(_seed_of(config.seed, p, s, "noise"))
    clean = releases[world.targets].mean(dim=1)
    noisy = clean + s * torch.randn(clean.shape, generator=generator, dtype=torch.float64)
    seed = _seed_of(config.seed, p, s, "attack")
    successes, kept = _attack_successes(world, mask, noisy, seed)
    if reconstructions_dir is not None:
        for name, (originals, reconstructions) in kept.items():
            key = reconstruction_key(config.fingerprint(), p, s, name)
            save_reconstructions(reconstructions_dir, key, originals, reconstructions)
    trials = config.attack_targets
    fano = {}
    for name, hits in successes.items():
        fano[name] = leakage.fano_lower_confidence_bits(
            exact.secrets, trials - hits, trials, CONFIDENCE
        )
    gaussian = None
    if s > 0:  # the batch mean's covariance: finite-population correction (module docstring)
        correction = (m - b) / (b * (m - 1))
        gaussian = leakage.gaussian_channel_bound_bits(releases_np * math.sqrt(correction), s)
    success, success_ci = exact.bayes_success, exact.bayes_success_ci
    status = {
        kind: leakage.theorem1_status(
            per_p[f"theorem1_{kind}_bits"],
            ceiling_bits=ceiling,
            exact_low_bits=exact.ci_bits[0],
            lower_bound_bits=max(fano.values()),
        )
        for kind in ("published", "corrected")
    }
    return {
        "dataset": config.dataset,
        "p": p,
        "noise_std": s,
        "candidates": m,
        "batch_size": b,
        "secrets_log2": math.log2(exact.secrets),
        "ceiling_bits": float(ceiling),
        "exact_bits": float(exact.bits),
        "exact_ci_bits": [float(v) for v in exact.ci_bits],
        "exact_is_exact": bool(exact.exact),
        "exact_method": exact.method,
        "bayes_success": None if success is None else float(success),
        "bayes_success_ci": None if success_ci is None else [float(v) for v in success_ci],
        "gaussian_bound_bits": None if gaussian is None else float(gaussian),
        **per_p,
        "dp_success_bound": leakage.gaussian_mechanism_success_bound(
            exact.secrets, per_p["sensitivity"], s
        ),
        "theorem1_status": status,
        "fano_lower_bits": fano,
        "attack_targets": trials,
        "attack_success": {name: hits / trials for name, hits in successes.items()},
        "estimates_bits": _estimates(world, releases, p, s),
    }


def run_leakage(
    config: LeakageConfig,
    store: ResultStore | None = None,
    *,
    progress: bool | None = None,
    reconstructions_dir=None,
) -> list[dict]:
    """One record per (p, s) of ``config``, in grid order (module docstring).

    With ``store``, finished (p, s) are read back instead of recomputed and new records
    are appended as they finish (resume). ``progress=None`` shows a bar only on a terminal.
    With ``reconstructions_dir`` the attacks' reconstructions of the targets are kept
    there, per (p, s) and attack, under :func:`reconstruction_key`
    (:func:`sims.plots.leakage.leakage_reconstruction_rows` reads them back).
    """
    fp = config.fingerprint()
    grid = [(p, s) for p in config.rates for s in config.noise_stds]
    done = {}
    if store is not None:
        done = {r["key"]: r for r in store.records() if r.get("config") == fp}
    todo = [(p, s) for p, s in grid if _job_key(fp, p, s) not in done]
    if todo:
        world = _World(config)
        bar = tqdm(
            todo, desc="leakage", unit="job", disable=None if progress is None else not progress
        )
        for p, s in bar:
            key = _job_key(fp, p, s)
            done[key] = {"key": key, "config": fp, **_record(world, p, s, reconstructions_dir)}
            if store is not None:
                store.append(done[key])
    return [done[_job_key(fp, p, s)] for p, s in grid]


def _bits(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def format_table(records: list[dict]) -> str:
    """Plain-text table, one line per (p, s), every quantity in bits (success in [0, 1]:
    the Bayes-optimal one, the DP bound on any attack's, SGI's and GI's)."""
    lines = [
        f"{'p':>5} {'s':>7} {'M':>5} {'ceiling':>7} {'exact [95% CI]':>21} {'Bayes':>5} "
        f"{'DP<=':>5} {'Gauss':>8} {'T1 published':>20} {'T1 corrected':>20} "
        f"{'Fano SGI/GI':>11} {'SGI/GI success':>14}"
    ]
    for r in records:
        lo, hi = r["exact_ci_bits"]
        status = r["theorem1_status"]
        lines.append(
            f"{r['p']:>5.2f} {r['noise_std']:>7.3g} {r['candidates']:>5d} "
            f"{r['ceiling_bits']:>7.2f} {r['exact_bits']:>6.2f} [{lo:>5.2f}, {hi:>5.2f}] "
            f"{_bits(r['bayes_success']):>5} {r['dp_success_bound']:>5.2f} "
            f"{_bits(r['gaussian_bound_bits']):>8} "
            f"{r['theorem1_published_bits']:>10.1f} {status['published']:>9} "
            f"{r['theorem1_corrected_bits']:>10.1f} {status['corrected']:>9} "
            f"{r['fano_lower_bits']['sgi']:>5.2f}/{r['fano_lower_bits']['gi']:<5.2f} "
            f"{r['attack_success']['sgi']:>6.2f}/{r['attack_success']['gi']:<6.2f}"
        )
    return "\n".join(lines)


def format_estimates_table(records: list[dict]) -> str:
    """Plain-text table of the estimates against the exact value, one line per (p, s > 0):
    each estimator's bits, its interval where it has one, and its relative error."""
    names = ("ksg", "mine", "hmine")
    lines = [
        f"{'p':>5} {'s':>7} {'M':>5} {'exact [95% CI]':>21} "
        + " ".join(f"{name.upper() + ' bits [95% CI] error':>33}" for name in names)
    ]
    for r in records:
        estimates = r.get("estimates_bits") or {}
        if not any(estimates.get(name) for name in names):
            continue
        lo, hi = r["exact_ci_bits"]
        cells = []
        for name in names:
            e = estimates.get(name)
            if e is None:
                cells.append(f"{'-':>33}")
                continue
            ci = "" if e["ci_bits"] is None else f"[{e['ci_bits'][0]:.2f}, {e['ci_bits'][1]:.2f}]"
            error = (e["bits"] - r["exact_bits"]) / r["exact_bits"] if r["exact_bits"] else math.nan
            cells.append(f"{e['bits']:>7.2f} {ci:>14} {error:>+9.0%}")
        lines.append(
            f"{r['p']:>5.2f} {r['noise_std']:>7.3g} {r['candidates']:>5d} "
            f"{r['exact_bits']:>6.2f} [{lo:>5.2f}, {hi:>5.2f}] " + " ".join(cells)
        )
    return "\n".join(lines)
