"""The end-to-end demo: leakage in bits with its bounds, and SGI/GI quality.

It runs on the embedded 8x8 digits by default, or on any data set of
:data:`sims.experiments.leakage.DATASET_SIZES` (``dataset``: scikit-image's 25x25 faces and
32x32 RGB photograph patches need no files; MNIST, Fashion-MNIST and CIFAR-10 are read
from ``data_dir``), the model built for its image shape and classes
(:func:`sims.experiments.attack_model.attack_model`).

The attack jobs and the leakage part draw the model, the images and the masks from the
seed one way (:mod:`sims.experiments.world`, :func:`demo_world`): the targets are the
leakage part's first candidates. For each base pruning rate ``p`` the demo

1. prunes a freshly initialised small sigmoid ConvNet (:data:`sims.attacks.DIGITS_ATTACK_MODEL`)
   with a random mask at rate ``p`` (one mask per ``p``, shared by every target: it is
   the client's mask);
2. lets each target image (B = 1 by default) go through one FedSGD round of
   :func:`sims.fl.client.client_update` (PriPrune eq. (1));
3. attacks the sent weights with SGI (mask-aware, PriPrune Algorithm 2) and with GI (not
   mask-aware) and scores the reconstruction with NMI (beside its chance level) and PSNR;
   with a ``reconstructions_dir`` the target and its reconstruction are kept there
   (:mod:`sims.store.reconstructions`) for the figure of originals against reconstructions
   (:func:`reconstruction_rows`);
4. estimates ``d*`` and ``Delta`` of the per-sample gradient covariance over the kept
   coordinates (:func:`sims.gradients.statistics.gradient_statistics`) and evaluates Theorem 1 as
   published and corrected (:mod:`bounds.priprune`);
5. on the same model, masks, learning rate and seed, runs the leakage study of issue 12
   (:func:`sims.experiments.leakage.run_leakage`, B = 1) on ``leakage_rates`` and
   ``noise_stds``: the exact ``I(X; Y)`` of a target drawn uniformly from ``candidates``
   digits, its ceiling, the Gaussian-channel bound, Theorem 1 with its status and the
   Fano lower bounds of SGI and GI, all in bits (:func:`run_demo_leakage`);
6. on ``estimate_candidates`` candidates (few: the estimators need few) and the positive
   noise levels, the same study with KSG, MINE and H-MINE estimates beside the exact
   value they estimate (:func:`run_demo_estimates`).

Each finished job appends one record to a :class:`sims.store.results.ResultStore`; keys carry a
fingerprint of the configuration, so a rerun of the same configuration resumes and a
changed configuration never mixes with old records. The leakage part writes its records
(one per (p, s), keyed by the fingerprint of its :class:`LeakageConfig`) to the same
store, so it resumes too; its settings are not part of the attack jobs' fingerprint. The
data set is part of the fingerprint only when it is not the digits, so that stores written
before other data sets existed keep their keys; every record names its ``dataset``.

:data:`QUICK` is a CPU-minutes version of the defaults (``pruneleak demo --quick``), what
``make figures`` runs on the faces.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace

import numpy as np
import torch

from pruneleak.bounds import priprune
from pruneleak.bounds.progress import progress as show_progress
from pruneleak.bounds.validation import check_choice, check_distinct, check_int, check_real
from pruneleak.estimators.device import check_device
from pruneleak.estimators.image import score_reconstruction
from pruneleak.estimators.nmi import nmi_permutation_null
from pruneleak.sims.attacks import AttackConfig, gi_attack, sgi_attack
from pruneleak.sims.core.fields import device_field, documented, seed_field
from pruneleak.sims.core.functional import check_lr
from pruneleak.sims.core.runtime import check_seed, fingerprint
from pruneleak.sims.experiments.leakage import (
    DATASET_SIZES,
    MAX_COUNTS,
    MAX_NOISE_STD,
    LeakageConfig,
    check_count,
    run_leakage,
)
from pruneleak.sims.experiments.world import ExperimentWorld
from pruneleak.sims.fl.client import client_update
from pruneleak.sims.gradients.statistics import gradient_statistics
from pruneleak.sims.store.keys import key_number
from pruneleak.sims.store.reconstructions import load_reconstructions, save_reconstructions
from pruneleak.sims.store.results import ResultStore

logger = logging.getLogger(__name__)

DEFAULT_RATES = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)
ATTACKS = {"sgi": sgi_attack, "gi": gi_attack}
PRUNING = ("random", "magnitude")
#: The data sets the demo runs on: those whose size is known before they are read (the
#: pool of targets, statistics samples and candidates is checked first).
DATASETS = tuple(DATASET_SIZES)
#: Per-sample gradients behind d* and Delta when the data set has room for them.
DEFAULT_STATS_SAMPLES = 256
#: Pruning rates of the leakage part (a subset of DEFAULT_RATES, chosen for time).
DEFAULT_LEAKAGE_RATES = (0.0, 0.3, 0.5, 0.7, 0.9, 0.99)
#: s = 0.1 leaves about log2 10 bits (the label) at every p on this model; 0.001 and 0.01
#: show where pruning and noise cut the leakage.
DEFAULT_NOISE_STDS = (0.0, 0.001, 0.01)
#: DemoConfig fields of the leakage part only: left out of the attack jobs' fingerprint.
LEAKAGE_FIELDS = (
    "leakage_rates",
    "noise_stds",
    "candidates",
    "leakage_samples",
    "leakage_targets",
    "leakage_iterations",
    "estimate_candidates",
    "estimate_rates",
    "estimate_draws",
    "estimate_steps",
)
#: ``pruneleak demo --quick``: the defaults cut to about a minute on two CPU cores for the
#: 25x25 faces (61 s measured): 3 attack rates and 6 targets, 64 statistics samples, the
#: leakage part at the same 3 rates on 64 candidates with 256 Monte Carlo draws and 4
#: attacked targets (20 iterations), no estimator part. The attacks get 200 L-BFGS
#: iterations, more than the default 100: on the faces SGI's PSNR at p = 0 is about 16 dB
#: after 50 iterations and about 26 dB after 200 (a checkerboard left by the 3x3
#: convolution fades), which is what the faces figure (paper_figs/faces/) shows.
QUICK = {
    "pruning_rates": (0.0, 0.5, 0.9),
    "num_images": 6,
    "attack_iterations": 200,
    "stats_samples": 64,
    "leakage_rates": (0.0, 0.5, 0.9),
    "candidates": 64,
    "leakage_samples": 256,
    "leakage_targets": 4,
    "leakage_iterations": 20,
    "estimate_rates": (),
}


@dataclass(frozen=True)
class DemoConfig:
    """Configuration of the bound-versus-attack demo.

    Attributes:
        dataset: the images, a name of :data:`DATASETS` (default the embedded digits).
        data_dir: folder of the data set's files (MNIST, Fashion-MNIST, CIFAR-10); not
            part of the fingerprint.
        pruning_rates: distinct base pruning rates p, each in [0, 1].
        attacks: subset of ``("sgi", "gi")``, each once.
        num_images: target batches per (attack, p), each attacked as its own client
            batch; the targets and the ``stats_samples`` images are distinct images, so
            ``num_images * batch_size + stats_samples`` is at most the data set's size
            (1,797 digits, 200 faces, 755 patches).
        batch_size: client batch size B (images inverted jointly).
        client_lr: the client's learning rate r of eq. (1), > 0 (PriPrune uses 0.25).
        pruning: base pruning scheme, ``"random"`` or ``"magnitude"``.
        attack_iterations: L-BFGS iterations per attack (squared-L2 matching, DLG's
            optimiser; both attacks use the same optimiser so that only mask-awareness
            differs).
        stats_samples: samples of per-sample gradients for ``d*`` and ``Delta``, >= 2; None
            (default): 256, or the images left beside the targets when fewer.
        nmi_levels: quantisation levels of NMI on [0, 1].
        seed: seeds the model, masks, targets and attacks.
        device: ``"auto"``, ``"cpu"``, ``"cuda"``.
        leakage_rates: distinct pruning rates of the leakage part, each in [0, 1]; ``()``
            skips it. It needs ``batch_size == 1`` and ``pruning == "random"`` (the
            leakage study's secret is one image, its mask data-independent).
        noise_stds: distinct noise standard deviations s of the leakage part, in
            ``[0, MAX_NOISE_STD]`` (:mod:`sims.experiments.leakage`; units of the weights;
            0 is plain FedSGD).
        candidates: M, candidate images of the leakage part, in [2, the data set's size];
            None (default): all of them.
        leakage_samples: Monte Carlo draws of the exact leakage per (p, s), >= 2.
        leakage_targets: targets attacked per (p, s) for the Fano bounds, >= 1.
        leakage_iterations: batched L-BFGS iterations of those attacks, >= 1.
        estimate_candidates: M of the estimator part, in [2, size]: a second leakage study
            on ``estimate_rates`` and the positive ``noise_stds`` whose KSG, MINE and H-MINE
            estimates are compared with its exact value (the estimators need few
            candidates: the release has up to M - 1 informative dimensions).
        estimate_rates: distinct pruning rates of the estimator part; ``()`` skips it.
        estimate_draws: pairs (image, noisy release) per estimate, >= 16.
        estimate_steps: Adam steps of MINE and H-MINE, >= 1.
    """

    dataset: str = documented(
        "digits",
        "the images (faces: 25x25 grey LFW, patches: 32x32 RGB photograph tiles; mnist, "
        "fashion_mnist, cifar10 need a data folder)",
        choices=DATASETS,
    )
    data_dir: str | None = None
    pruning_rates: tuple[float, ...] = documented(
        DEFAULT_RATES,
        "pruning rates of the attack jobs: fractions of the weights pruned",
        low=0,
        high=1,
    )
    attacks: tuple[str, ...] = ("sgi", "gi")
    num_images: int = documented(8, "target images per p and attack", low=1)
    batch_size: int = documented(1, "client batch size B", low=1, unit="images")
    client_lr: float = 0.25
    pruning: str = documented("random", "base pruning scheme", choices=PRUNING)
    attack_iterations: int = documented(
        100, "L-BFGS iterations per attack", low=1, high=MAX_COUNTS["attack_iterations"]
    )
    stats_samples: int | None = documented(
        None,
        "per-sample gradients behind Theorem 1's d* and Delta",
        low=2,
        unset="256, or the images left beside the targets",
    )
    nmi_levels: int = 256
    seed: int = seed_field()
    device: str = device_field()
    leakage_rates: tuple[float, ...] = documented(
        DEFAULT_LEAKAGE_RATES, "pruning rates of the leakage part", low=0, high=1
    )
    noise_stds: tuple[float, ...] = documented(
        DEFAULT_NOISE_STDS,
        "standard deviations of the Gaussian noise on the kept coordinates (0: plain FedSGD)",
        low=0,
        high=MAX_NOISE_STD,
        unit="weight units",
    )
    candidates: int | None = documented(
        None,
        "candidate images the target is drawn from",
        low=2,
        high="the data set's size",
        unset="all of them",
    )
    leakage_samples: int = documented(
        1024,
        "Monte Carlo draws of the exact leakage per (p, s)",
        low=2,
        high=MAX_COUNTS["samples"],
    )
    leakage_targets: int = documented(
        16,
        "targets attacked per (p, s) for the Fano bounds",
        low=1,
        high=MAX_COUNTS["attack_targets"],
    )
    leakage_iterations: int = documented(
        50,
        "L-BFGS iterations of those attacks",
        low=1,
        high=MAX_COUNTS["attack_iterations"],
    )
    estimate_candidates: int = documented(
        32,
        "candidates of the estimator part: KSG, MINE and H-MINE against the exact value "
        "at the positive noise levels",
        low=2,
        high="the data set's size",
    )
    estimate_rates: tuple[float, ...] = documented(
        (0.0, 0.5, 0.9), "pruning rates of the estimator part", low=0, high=1
    )
    estimate_draws: int = documented(
        1024,
        "(image, noisy release) pairs per estimate",
        low=16,
        high=MAX_COUNTS["estimate_draws"],
    )
    estimate_steps: int = documented(
        300, "Adam steps of MINE and H-MINE", low=1, high=MAX_COUNTS["estimate_steps"]
    )

    def __post_init__(self) -> None:
        func = "DemoConfig"
        check_choice("dataset", self.dataset, func=func, choices=DATASETS)
        for name in ("pruning_rates", "attacks", "leakage_rates", "noise_stds", "estimate_rates"):
            object.__setattr__(self, name, check_distinct(name, getattr(self, name), func=func))
        if not self.pruning_rates:
            raise ValueError("The 'pruning_rates' parameter of DemoConfig must not be empty.")
        for p in self.pruning_rates:
            check_real("pruning_rates", p, func=func, low=0, high=1)
        if not self.attacks:
            raise ValueError("The 'attacks' parameter of DemoConfig must not be empty.")
        for attack in self.attacks:
            check_choice("attacks", attack, func=func, choices=tuple(ATTACKS))
        check_int("num_images", self.num_images, func=func, low=1)
        check_int("batch_size", self.batch_size, func=func, low=1)
        if self.stats_samples is None:
            left = self.pool_size - self.num_images * self.batch_size
            object.__setattr__(self, "stats_samples", max(2, min(DEFAULT_STATS_SAMPLES, left)))
        if self.candidates is None:
            object.__setattr__(self, "candidates", self.pool_size)
        check_lr("client_lr", self.client_lr, func=func)
        check_choice("pruning", self.pruning, func=func, choices=PRUNING)
        check_count("attack_iterations", self.attack_iterations, func=func, low=1)
        check_int("stats_samples", self.stats_samples, func=func, low=2)
        check_int("nmi_levels", self.nmi_levels, func=func, low=2)
        check_seed(self.seed, func=func)
        check_device(self.device, func=func)
        self._check_pool()
        for p in self.leakage_rates:
            check_real("leakage_rates", p, func=func, low=0, high=1)
        if self.leakage_rates:
            if self.batch_size != 1 or self.pruning != "random":
                raise ValueError(
                    "The 'leakage_rates' parameter of DemoConfig must be empty (no leakage "
                    "part, --no-leakage) unless batch_size == 1 and pruning == 'random'. Got "
                    f"{self.leakage_rates!r} with batch_size={self.batch_size!r}, "
                    f"pruning={self.pruning!r}."
                )
            if not self.noise_stds:
                raise ValueError("The 'noise_stds' parameter of DemoConfig must not be empty.")
            for s in self.noise_stds:
                check_real("noise_stds", s, func=func, low=0, high=MAX_NOISE_STD)
            check_int("candidates", self.candidates, func=func, low=2, high=self.pool_size)
            check_count("leakage_samples", self.leakage_samples, func=func, low=2, limit="samples")
            check_count(
                "leakage_targets", self.leakage_targets, func=func, low=1, limit="attack_targets"
            )
            check_count(
                "leakage_iterations",
                self.leakage_iterations,
                func=func,
                low=1,
                limit="attack_iterations",
            )
            for p in self.estimate_rates:
                check_real("estimate_rates", p, func=func, low=0, high=1)
            check_int(
                "estimate_candidates",
                self.estimate_candidates,
                func=func,
                low=2,
                high=self.pool_size,
            )
            check_count("estimate_draws", self.estimate_draws, func=func, low=16)
            check_count("estimate_steps", self.estimate_steps, func=func, low=1)

    @property
    def pool_size(self) -> int:
        """Images of the data set: the pool of targets, statistics samples, candidates."""
        return DATASET_SIZES[self.dataset]

    def _check_pool(self) -> None:
        """The targets (``num_images`` batches of ``batch_size``) and the ``stats_samples``
        images behind ``d*`` and ``Delta`` are distinct images of the pool."""
        targets = self.num_images * self.batch_size
        pool = self.pool_size
        if targets + self.stats_samples > pool:
            raise ValueError(
                f"The 'num_images' and 'batch_size' parameters of DemoConfig ask for "
                f"num_images * batch_size = {self.num_images} * {self.batch_size} = {targets} "
                f"target images, and 'stats_samples' for {self.stats_samples} more, but the "
                f"{self.dataset} candidate pool has {pool} images: num_images * batch_size + "
                f"stats_samples must be <= {pool}. Got {targets + self.stats_samples} "
                f"instead."
            )

    def fingerprint(self) -> str:
        """Short hash of what changes the attack jobs' numbers (not the device, not where
        the data are read from, not the leakage part, which :meth:`leakage_config`
        fingerprints; the data set only when it is not the digits: module docstring)."""
        exclude = (*LEAKAGE_FIELDS, "data_dir", *(("dataset",) if self.dataset == "digits" else ()))
        return fingerprint(asdict(self), exclude=exclude)

    def leakage_config(self) -> LeakageConfig | None:
        """The leakage part as a :class:`LeakageConfig` on the demo's model, masks (random,
        seeded like the attack jobs'), learning rate, seed and device; None without it.

        Theorem 1's ``d*`` and ``Delta`` come from ``min(stats_samples, candidates)``
        per-sample gradients of the candidates (the leakage study's convention).
        """
        if not self.leakage_rates:
            return None
        return LeakageConfig(
            dataset=self.dataset,
            data_dir=self.data_dir,
            rates=self.leakage_rates,
            noise_stds=self.noise_stds,
            candidates=self.candidates,
            samples=self.leakage_samples,
            attack_targets=self.leakage_targets,
            attack_iterations=self.leakage_iterations,
            stats_samples=min(self.stats_samples, self.candidates),
            client_lr=self.client_lr,
            seed=self.seed,
            device=self.device,
        )

    def estimate_config(self) -> LeakageConfig | None:
        """The estimator part: :meth:`leakage_config` on ``estimate_candidates`` candidates,
        ``estimate_rates`` and the positive noise levels, with KSG, MINE and H-MINE
        estimates; None without a leakage part, estimate rates or positive noise.

        Theorem 1 is evaluated at one sample size (all candidates): its study against the
        sample size is the main part's.
        """
        leakage_config = self.leakage_config()
        noisy = tuple(s for s in self.noise_stds if s > 0)
        if leakage_config is None or not self.estimate_rates or not noisy:
            return None
        m = self.estimate_candidates
        return replace(
            leakage_config,
            rates=self.estimate_rates,
            noise_stds=noisy,
            candidates=m,
            stats_samples=min(self.stats_samples, m),
            theorem1_sample_sizes=(m,),
            estimate_draws=self.estimate_draws,
            estimate_steps=self.estimate_steps,
        )


@dataclass(frozen=True)
class _Job:
    kind: str  # "bound" or "attack"
    p: float
    attack: str = ""
    target: int = -1

    def key(self, fingerprint: str) -> str:
        if self.kind == "bound":
            return f"{fingerprint}/bound/p={key_number(self.p)}"
        return f"{fingerprint}/{self.attack}/p={key_number(self.p)}/target={self.target}"


def _jobs(config: DemoConfig) -> Iterator[_Job]:
    for p in config.pruning_rates:
        yield _Job("bound", p)
        for attack in config.attacks:
            for target in range(config.num_images):
                yield _Job("attack", p, attack, target)


def demo_world(config: DemoConfig) -> ExperimentWorld:
    """The experiment world of the attack jobs (:mod:`sims.experiments.world`): the demo's
    model on its data set, masks of its pruning scheme, and as candidates the
    ``num_images`` target batches followed by the ``stats_samples`` images behind ``d*``
    and ``Delta``; drawn as its leakage part draws (:meth:`DemoConfig.leakage_config`), so
    the targets are that part's first candidates."""
    return ExperimentWorld(
        dataset=config.dataset,
        data_dir=config.data_dir,
        candidates=config.num_images * config.batch_size + config.stats_samples,
        candidates_name="'num_images' * 'batch_size' + 'stats_samples' of DemoConfig",
        seed=config.seed,
        device=config.device,
        pruning=config.pruning,
    )


def _batch(
    config: DemoConfig, world: ExperimentWorld, target: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The images and labels of target batch ``target``, on the world's device."""
    rows = slice(target * config.batch_size, (target + 1) * config.batch_size)
    return world.images[rows], world.labels[rows]


def _bound_record(config: DemoConfig, world: ExperimentWorld, p: float) -> dict:
    """The bound job's record: Theorem 1 on ``d*`` and ``Delta`` of the statistics samples
    (the candidates after the targets) at rate ``p``."""
    targets = config.num_images * config.batch_size
    stats = gradient_statistics(
        world.model,
        world.params,
        world.images[targets:],
        world.labels[targets:],
        mask=world.mask(p),
    )
    inputs = {"p": p, "B": config.batch_size, "d_star": stats.d_star, "delta": stats.delta}
    mask_size = sum(t.numel() for t in world.params.values())
    return {
        "kind": "bound",
        "p": p,
        "d_kept": stats.d,
        "d_star": stats.d_star,
        "log_pseudo_det_nats": stats.log_pseudo_det,
        "delta_nats": stats.delta,
        "bound_published_bits": priprune.single_round_bound(**inputs, unit="bits"),
        "bound_corrected_bits": priprune.single_round_bound_corrected(
            d=mask_size, **inputs, unit="bits"
        ),
    }


def _attack_record(
    config: DemoConfig, world: ExperimentWorld, job: _Job, key: str, reconstructions_dir
) -> dict:
    """The attack job's record; its target and matched reconstruction go to
    ``reconstructions_dir`` under ``key`` unless that is None."""
    images, labels = _batch(config, world, job.target)
    mask = world.mask(job.p)
    sent = client_update(world.model, world.params, mask, images, labels, lr=config.client_lr)
    attack_config = AttackConfig.dlg(
        iterations=config.attack_iterations,
        label_mode="idlg" if config.batch_size == 1 else "known",
        seed=config.seed + job.target,
        device=str(world.device),
    )
    start = time.perf_counter()
    result = ATTACKS[job.attack](
        world.model,
        world.params,
        sent,
        lr=config.client_lr,
        batch_shape=tuple(images.shape),
        num_classes=world.num_classes,
        labels=None if config.batch_size == 1 else labels,
        config=attack_config,
    )
    seconds = time.perf_counter() - start
    originals = images.cpu()
    scores = score_reconstruction(
        originals, result.images, levels=config.nmi_levels, seed=config.seed + job.target
    )
    nulls = [
        nmi_permutation_null(x, y, levels=config.nmi_levels, seed=config.seed + job.target)
        for x, y in zip(originals, result.images[scores["assignment"]], strict=True)
    ]
    if reconstructions_dir is not None:
        matched = result.images[scores["assignment"]]
        save_reconstructions(reconstructions_dir, key, originals, matched)
    return {
        "kind": "attack",
        "attack": job.attack,
        "p": job.p,
        "target": job.target,
        "nmi": float(np.mean(scores["nmi"])),
        "nmi_chance": float(np.mean(scores["nmi_chance"])),
        "nmi_permutation_floor": float(np.mean([n.null_mean for n in nulls])),
        "nmi_p_value": float(np.max([n.p_value for n in nulls])),
        "psnr": float(np.mean(scores["psnr"])),
        "label_correct": bool(torch.equal(result.labels.sort().values, labels.cpu().sort().values)),
        "matching_loss": result.loss,
        "seconds": seconds,
    }


def run_demo(
    config: DemoConfig,
    store: ResultStore,
    *,
    progress: bool | None = None,
    reconstructions_dir=None,
) -> list[dict]:
    """Run every job of ``config`` not yet in ``store``; return this configuration's records.

    ``progress`` False shows nothing, True or None a bar on a terminal, else a line per
    finished job on stderr (:func:`bounds.progress.progress`). With ``reconstructions_dir``
    each attack job keeps its target and reconstruction there, under its key
    (:func:`sims.store.reconstructions.save_reconstructions`; :func:`reconstruction_rows`
    reads them back).
    """
    fingerprint = config.fingerprint()
    done = store.done()
    todo = [job for job in _jobs(config) if job.key(fingerprint) not in done]
    if todo:
        world = demo_world(config)
        with show_progress(todo, desc="demo", unit="job", enabled=progress) as bar:
            for job in bar:
                key = job.key(fingerprint)
                if job.kind == "bound":
                    record = _bound_record(config, world, job.p)
                else:
                    record = _attack_record(config, world, job, key, reconstructions_dir)
                store.append(
                    {"key": key, "config": fingerprint, "dataset": config.dataset, **record}
                )
    return [r for r in store.records() if r.get("config") == fingerprint]


def reconstruction_rows(
    config: DemoConfig, reconstructions_dir
) -> tuple[np.ndarray, dict[str, np.ndarray]] | None:
    """The attack jobs' kept images (:func:`run_demo`) for
    :func:`sims.plots.reconstructions.plot_reconstruction_grid`: the targets in order
    (their batches' images one after the other) and, per (attack, p) in the configuration's
    order (label ``"SGI p=0.5"``), the reconstructions matched to them. A setting with a
    target's file missing (its job ran without ``reconstructions_dir``) is left out; None
    when no setting has all of them."""
    fingerprint = config.fingerprint()
    rows = {}
    for p in config.pruning_rates:
        for attack in config.attacks:
            found = [
                load_reconstructions(
                    reconstructions_dir, _Job("attack", p, attack, t).key(fingerprint)
                )
                for t in range(config.num_images)
            ]
            if all(f is not None for f in found):
                rows[f"{attack.upper()} p={p:g}"] = (
                    np.concatenate([f[0] for f in found]),
                    np.concatenate([f[1] for f in found]),
                )
    if not rows:
        return None
    originals = next(iter(rows.values()))[0]
    return originals, {label: recs for label, (_, recs) in rows.items()}


def run_demo_leakage(
    config: DemoConfig, store: ResultStore, *, progress: bool | None = None
) -> list[dict]:
    """The leakage part: :func:`sims.experiments.leakage.run_leakage` of
    :meth:`DemoConfig.leakage_config` into ``store`` (finished (p, s) are read back); one
    record per (p, s) in grid order, ``[]`` when the configuration has no leakage part."""
    leakage_config = config.leakage_config()
    if leakage_config is None:
        return []
    return run_leakage(leakage_config, store, progress=progress)


def run_demo_estimates(
    config: DemoConfig, store: ResultStore, *, progress: bool | None = None
) -> list[dict]:
    """The estimator part: :func:`sims.experiments.leakage.run_leakage` of
    :meth:`DemoConfig.estimate_config` into ``store``; ``[]`` when there is none."""
    estimate_config = config.estimate_config()
    if estimate_config is None:
        return []
    return run_leakage(estimate_config, store, progress=progress)


def summarize(records: list[dict]) -> dict[str, list[dict]]:
    """Per-p rows: ``{"bound": [...], "attack": [...]}`` with mean and std over targets."""
    bound_rows = sorted((r for r in records if r["kind"] == "bound"), key=lambda r: r["p"])
    attack_rows = []
    attacks = sorted({r["attack"] for r in records if r["kind"] == "attack"}, reverse=True)
    for attack in attacks:
        for p in sorted({r["p"] for r in records if r.get("attack") == attack}):
            group = [r for r in records if r.get("attack") == attack and r["p"] == p]
            row = {"attack": attack, "p": p, "n": len(group)}
            for metric in ("nmi", "nmi_chance", "nmi_permutation_floor", "psnr"):
                values = np.array([r[metric] for r in group])
                row[metric] = float(values.mean())
                row[f"{metric}_std"] = float(values.std(ddof=1)) if len(values) > 1 else 0.0
            attack_rows.append(row)
    return {"bound": bound_rows, "attack": attack_rows}


def format_table(summary: dict[str, list[dict]]) -> str:
    """Plain-text table: one line per (attack, p), then the bound per p."""
    lines = [
        f"{'attack':>6} {'p':>5} {'n':>3} {'NMI':>13} {'chance':>7} {'perm.floor':>10} "
        f"{'PSNR dB':>14}"
    ]
    for row in summary["attack"]:
        lines.append(
            f"{row['attack']:>6} {row['p']:>5.2f} {row['n']:>3d} "
            f"{row['nmi']:>6.3f}±{row['nmi_std']:<6.3f} {row['nmi_chance']:>7.3f} "
            f"{row['nmi_permutation_floor']:>10.3f} {row['psnr']:>7.1f}±{row['psnr_std']:<6.1f}"
        )
    lines.append("")
    lines.append(
        f"{'p':>5} {'d*':>5} {'Delta nats':>11} {'published bits':>15} {'corrected bits':>15}"
    )
    for row in summary["bound"]:
        lines.append(
            f"{row['p']:>5.2f} {row['d_star']:>5d} {row['delta_nats']:>11.1f} "
            f"{row['bound_published_bits']:>15.1f} {row['bound_corrected_bits']:>15.1f}"
        )
    return "\n".join(lines)


#: Legend of an attack's NMI chance reference in :func:`plot_demo`.
ATTACK_FLOOR = "its chance (permutation floor)"


def plot_demo(summary: dict[str, list[dict]]):
    """Three panels against ``p``: Theorem 1 (published, corrected) in bits on a linear
    axis; NMI of each attack beside its chance reference; PSNR of each attack.

    Colour is the attack (SGI, GI) or the form of Theorem 1, line style the kind of
    quantity (solid a measured value, dashed a bound, dotted a chance reference); error
    bars are the standard deviation over targets. Every line has a gid naming what it
    shows (``"theorem1_published"``, ``"nmi/sgi"``, ``"nmi_floor/gi"``, ``"psnr/sgi"``).

    The NMI's chance reference is each reconstruction's permutation floor (the NMI after
    shuffling the reconstruction's pixels, which keeps both histograms: the record's
    ``nmi_permutation_floor``), not the NMI against uniform noise (``nmi_chance``): the
    plug-in NMI is biased upwards by about ``(L_U - 1)(L_V - 1) / 2N`` nats for ``L``
    occupied levels of ``N`` pixels, and uniform noise occupies every level, so its NMI
    with the original sits above that of a smooth reconstruction whatever the
    reconstruction's quality (on the 25x25 faces, 0.69 against 0.65 for SGI at 26 dB). The
    figure says so under its legend."""
    import matplotlib.pyplot as plt

    from pruneleak.sims.plots.style import (
        COLOURS,
        KIND_STYLES,
        TEXT_WIDTH,
        dodge,
        use_style,
        wrap,
    )

    use_style()
    fig = plt.figure(figsize=(TEXT_WIDTH, 3.6), layout="constrained")
    ax_bound, ax_nmi, ax_psnr = fig.subplots(1, 3)
    bound = summary["bound"]
    ps = [r["p"] for r in bound]
    for kind, label, marker in (
        ("published", "Theorem 1 as published", "o"),
        ("corrected", "Theorem 1 corrected", "s"),
    ):
        ax_bound.plot(
            ps,
            [r[f"bound_{kind}_bits"] for r in bound],
            linestyle=KIND_STYLES["upper"],
            marker=marker,
            color=COLOURS[f"theorem1_{kind}"],
            label=label,
            gid=f"theorem1_{kind}",
        )
    ax_bound.axhline(0, color="0.3", linewidth=0.8, zorder=0)
    ax_bound.set(xlabel="base pruning rate p", ylabel="bound per round (bits)", title="Theorem 1")
    ax_bound.ticklabel_format(axis="y", style="sci", scilimits=(-3, 4))

    attacks = [a for a in ("sgi", "gi") if any(r["attack"] == a for r in summary["attack"])]
    for index, attack in enumerate(attacks):
        rows = [r for r in summary["attack"] if r["attack"] == attack]
        xs = [r["p"] for r in rows]
        colour = COLOURS[attack]
        name = attack.upper()
        container = ax_nmi.errorbar(
            xs,
            [r["nmi"] for r in rows],
            yerr=[r["nmi_std"] for r in rows],
            linestyle=KIND_STYLES["value"],
            marker="o",
            color=colour,
            capsize=2,
            label=f"{name}: NMI",
        )
        container.lines[0].set_gid(f"nmi/{attack}")
        ax_nmi.plot(
            xs,
            [r["nmi_permutation_floor"] for r in rows],
            linestyle=KIND_STYLES["lower"],
            marker="x",
            color=colour,
            label=f"{name}: {ATTACK_FLOOR}",
            gid=f"nmi_floor/{attack}",
        )
        container = ax_psnr.errorbar(
            xs,
            [r["psnr"] for r in rows],
            yerr=[r["psnr_std"] for r in rows],
            linestyle=KIND_STYLES["value"],
            marker="o",
            color=colour,
            capsize=2,
        )
        container.lines[0].set_gid(f"psnr/{attack}")
        # SGI and GI coincide where the mask is empty (p = 0): move them apart a little
        for axis_container in (ax_nmi.containers[-1], container):
            data, caps, bars = axis_container.lines
            for artist in (data, *caps, *bars):
                dodge(artist.axes, artist, index, len(attacks), step_points=4.0)
    ax_nmi.set(
        xlabel="base pruning rate p",
        ylabel="NMI (original, reconstruction)",
        ylim=(0, 1.02),
        title="NMI against its chance",
    )
    ax_psnr.set(xlabel="base pruning rate p", ylabel="PSNR (dB)", title="PSNR")
    ax_psnr.set_ylim(bottom=0)
    ticks = sorted({r["p"] for r in summary["attack"]} | set(ps))
    for ax in (ax_bound, ax_nmi, ax_psnr):
        ax.set_xticks(ticks, [f"{p:g}" for p in ticks])
    found = dict(zip(*reversed(ax_nmi.get_legend_handles_labels()), strict=True))
    found.update(zip(*reversed(ax_bound.get_legend_handles_labels()), strict=True))
    order = [f"{a.upper()}: {what}" for a in attacks for what in ("NMI", ATTACK_FLOOR)]
    order += ["Theorem 1 as published", "Theorem 1 corrected"]
    chance = sorted({f"{r['nmi_chance']:.2f}" for r in summary["attack"]}, key=float)
    note = "Error bars: std over targets."
    if chance:
        seen = chance[0] if len(chance) == 1 else f"{chance[0]} to {chance[-1]}"
        note += (
            " Chance of the NMI: the reconstruction's pixels shuffled (same histograms). Not"
            f" drawn: the NMI against uniform noise ({seen} here), which is no floor: noise "
            "fills every level, and the plug-in NMI's upward bias grows with the occupied "
            "levels."
        )
    fig.legend(
        [found[label] for label in order],
        order,
        loc="outside lower center",
        ncols=3,
        frameon=False,
        title=wrap(note, 110),
        title_fontsize=8,
    )
    return fig
