"""The end-to-end demo on the digits: leakage in bits with its bounds, and SGI/GI quality.

For each base pruning rate ``p`` the demo

1. prunes a freshly initialised small sigmoid ConvNet (:data:`sims.attacks.DIGITS_ATTACK_MODEL`)
   with a random mask at rate ``p`` (one mask per ``p``, shared by every target: it is
   the client's mask);
2. lets each target image (B = 1 by default) go through one FedSGD round of
   :func:`sims.fl.client.client_update` (PriPrune eq. (1));
3. attacks the sent weights with SGI (mask-aware, PriPrune Algorithm 2) and with GI (not
   mask-aware) and scores the reconstruction with NMI (beside its chance level) and PSNR;
4. estimates ``d*`` and ``Delta`` of the per-sample gradient covariance over the kept
   coordinates (:func:`sims.core.gradstats.gradient_statistics`) and evaluates Theorem 1 as
   published and corrected (:mod:`bounds.priprune`);
5. on the same model, masks, learning rate and seed, runs the leakage study of issue 12
   (:func:`sims.experiments.leakage.run_leakage`, B = 1) on ``leakage_rates`` and
   ``noise_stds``: the exact ``I(X; Y)`` of a target drawn uniformly from ``candidates``
   digits, its ceiling, the Gaussian-channel bound, Theorem 1 with its status and the
   Fano lower bounds of SGI and GI, all in bits (:func:`run_demo_leakage`);
6. on ``estimate_candidates`` candidates (few: the estimators need few) and the positive
   noise levels, the same study with KSG, MINE and H-MINE estimates beside the exact
   value they estimate (:func:`run_demo_estimates`).

Each finished job appends one record to a :class:`sims.core.store.ResultStore`; keys carry a
fingerprint of the configuration, so a rerun of the same configuration resumes and a
changed configuration never mixes with old records. The leakage part writes its records
(one per (p, s), keyed by the fingerprint of its :class:`LeakageConfig`) to the same
store, so it resumes too; its settings are not part of the attack jobs' fingerprint.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace

import numpy as np
import torch
from tqdm.auto import tqdm

from bounds import priprune
from bounds.validation import check_choice, check_distinct, check_int, check_real
from estimators.device import check_device, resolve_device
from estimators.image import score_reconstruction
from estimators.nmi import nmi_permutation_null
from sims.attacks import AttackConfig, gi_attack, sgi_attack
from sims.core.functional import check_lr
from sims.core.gradstats import gradient_statistics
from sims.core.runtime import check_seed, fingerprint
from sims.core.store import ResultStore
from sims.data.datasets import load_digits_dataset
from sims.experiments.digits_model import digits_attack_model
from sims.experiments.leakage import DATASET_SIZES, MAX_NOISE_STD, LeakageConfig, run_leakage
from sims.fl.client import client_update
from sims.pruning.mask import magnitude_mask, random_mask

logger = logging.getLogger(__name__)

DEFAULT_RATES = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)
ATTACKS = {"sgi": sgi_attack, "gi": gi_attack}
PRUNING = ("random", "magnitude")
#: Images of the embedded digits, the pool of targets, statistics samples and candidates.
POOL_SIZE = DATASET_SIZES["digits"]
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


@dataclass(frozen=True)
class DemoConfig:
    """Configuration of the bound-versus-attack demo on the embedded digits.

    Attributes:
        pruning_rates: distinct base pruning rates p, each in [0, 1].
        attacks: subset of ``("sgi", "gi")``, each once.
        num_images: target batches per (attack, p), each attacked as its own client
            batch; the targets and the ``stats_samples`` images are distinct digits, so
            ``num_images * batch_size + stats_samples <= 1797``.
        batch_size: client batch size B (images inverted jointly).
        client_lr: the client's learning rate r of eq. (1), > 0 (PriPrune uses 0.25).
        pruning: base pruning scheme, ``"random"`` or ``"magnitude"``.
        attack_iterations: L-BFGS iterations per attack (squared-L2 matching, DLG's
            optimiser; both attacks use the same optimiser so that only mask-awareness
            differs).
        stats_samples: samples of per-sample gradients for ``d*`` and ``Delta``.
        nmi_levels: quantisation levels of NMI on [0, 1].
        seed: seeds the model, masks, targets and attacks.
        device: ``"auto"``, ``"cpu"``, ``"cuda"``.
        leakage_rates: distinct pruning rates of the leakage part, each in [0, 1]; ``()``
            skips it. It needs ``batch_size == 1`` and ``pruning == "random"`` (the
            leakage study's secret is one image, its mask data-independent).
        noise_stds: distinct noise standard deviations s of the leakage part, in
            ``[0, MAX_NOISE_STD]`` (:mod:`sims.experiments.leakage`; units of the weights;
            0 is plain FedSGD).
        candidates: M, candidate digits of the leakage part, in [2, 1797].
        leakage_samples: Monte Carlo draws of the exact leakage per (p, s), >= 2.
        leakage_targets: targets attacked per (p, s) for the Fano bounds, >= 1.
        leakage_iterations: batched L-BFGS iterations of those attacks, >= 1.
        estimate_candidates: M of the estimator part, in [2, 1797]: a second leakage study
            on ``estimate_rates`` and the positive ``noise_stds`` whose KSG, MINE and H-MINE
            estimates are compared with its exact value (the estimators need few
            candidates: the release has up to M - 1 informative dimensions).
        estimate_rates: distinct pruning rates of the estimator part; ``()`` skips it.
        estimate_draws: pairs (image, noisy release) per estimate, >= 16.
        estimate_steps: Adam steps of MINE and H-MINE, >= 1.
    """

    pruning_rates: tuple[float, ...] = DEFAULT_RATES
    attacks: tuple[str, ...] = ("sgi", "gi")
    num_images: int = 8
    batch_size: int = 1
    client_lr: float = 0.25
    pruning: str = "random"
    attack_iterations: int = 100
    stats_samples: int = 256
    nmi_levels: int = 256
    seed: int = 0
    device: str = "auto"
    leakage_rates: tuple[float, ...] = DEFAULT_LEAKAGE_RATES
    noise_stds: tuple[float, ...] = DEFAULT_NOISE_STDS
    candidates: int = 1797
    leakage_samples: int = 1024
    leakage_targets: int = 16
    leakage_iterations: int = 50
    estimate_candidates: int = 32
    estimate_rates: tuple[float, ...] = (0.0, 0.5, 0.9)
    estimate_draws: int = 1024
    estimate_steps: int = 300

    def __post_init__(self) -> None:
        func = "DemoConfig"
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
        check_lr("client_lr", self.client_lr, func=func)
        check_choice("pruning", self.pruning, func=func, choices=PRUNING)
        check_int("attack_iterations", self.attack_iterations, func=func, low=1)
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
            check_int("candidates", self.candidates, func=func, low=2, high=POOL_SIZE)
            check_int("leakage_samples", self.leakage_samples, func=func, low=2)
            check_int("leakage_targets", self.leakage_targets, func=func, low=1)
            check_int("leakage_iterations", self.leakage_iterations, func=func, low=1)
            for p in self.estimate_rates:
                check_real("estimate_rates", p, func=func, low=0, high=1)
            check_int(
                "estimate_candidates", self.estimate_candidates, func=func, low=2, high=POOL_SIZE
            )
            check_int("estimate_draws", self.estimate_draws, func=func, low=16)
            check_int("estimate_steps", self.estimate_steps, func=func, low=1)

    def _check_pool(self) -> None:
        """The targets (``num_images`` batches of ``batch_size``) and the ``stats_samples``
        images behind ``d*`` and ``Delta`` are distinct digits of the pool."""
        targets = self.num_images * self.batch_size
        if targets + self.stats_samples > POOL_SIZE:
            raise ValueError(
                f"The 'num_images' and 'batch_size' parameters of DemoConfig ask for "
                f"num_images * batch_size = {self.num_images} * {self.batch_size} = {targets} "
                f"target images, and 'stats_samples' for {self.stats_samples} more, but the "
                f"digits candidate pool has {POOL_SIZE} images: num_images * batch_size + "
                f"stats_samples must be <= {POOL_SIZE}. Got {targets + self.stats_samples} "
                f"instead."
            )

    def fingerprint(self) -> str:
        """Short hash of what changes the attack jobs' numbers (not the device, not the
        leakage part, which :meth:`leakage_config` fingerprints)."""
        return fingerprint(asdict(self), exclude=LEAKAGE_FIELDS)

    def leakage_config(self) -> LeakageConfig | None:
        """The leakage part as a :class:`LeakageConfig` on the demo's model, masks (random,
        seeded like the attack jobs'), learning rate, seed and device; None without it.

        Theorem 1's ``d*`` and ``Delta`` come from ``min(stats_samples, candidates)``
        per-sample gradients of the candidates (the leakage study's convention).
        """
        if not self.leakage_rates:
            return None
        return LeakageConfig(
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
            return f"{fingerprint}/bound/p={self.p:g}"
        return f"{fingerprint}/{self.attack}/p={self.p:g}/target={self.target}"


def _jobs(config: DemoConfig) -> Iterator[_Job]:
    for p in config.pruning_rates:
        yield _Job("bound", p)
        for attack in config.attacks:
            for target in range(config.num_images):
                yield _Job("attack", p, attack, target)


class _DemoWorld:
    """The model, data, targets and masks every job of one configuration shares."""

    def __init__(self, config: DemoConfig):
        self.config = config
        self.device = resolve_device(config.device)
        data = load_digits_dataset()
        self.model, self.params = digits_attack_model(
            data.num_classes, seed=config.seed, device=self.device
        )
        self.num_classes = data.num_classes
        generator = torch.Generator().manual_seed(config.seed)
        order = torch.randperm(len(data), generator=generator)
        needed = config.num_images * config.batch_size
        self.targets = data.subset(order[:needed])
        self.stats_data = data.subset(order[needed : needed + config.stats_samples])

    def mask(self, p: float):
        if self.config.pruning == "random":
            return random_mask(self.params, p, seed=self.config.seed)
        return magnitude_mask(self.params, p)

    def batch(self, target: int) -> tuple[torch.Tensor, torch.Tensor]:
        b = self.config.batch_size
        rows = slice(target * b, (target + 1) * b)
        return (
            self.targets.images[rows].to(self.device),
            self.targets.labels[rows].to(self.device),
        )


def _bound_record(world: _DemoWorld, p: float) -> dict:
    config = world.config
    stats = gradient_statistics(
        world.model,
        world.params,
        world.stats_data.images.to(world.device),
        world.stats_data.labels.to(world.device),
        mask=world.mask(p).to(world.device),
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


def _attack_record(world: _DemoWorld, job: _Job) -> dict:
    config = world.config
    images, labels = world.batch(job.target)
    mask = world.mask(job.p).to(world.device)
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


def run_demo(config: DemoConfig, store: ResultStore, *, progress: bool | None = None) -> list[dict]:
    """Run every job of ``config`` not yet in ``store``; return this configuration's records.

    ``progress=None`` shows a bar only on a terminal.
    """
    fingerprint = config.fingerprint()
    done = store.done()
    todo = [job for job in _jobs(config) if job.key(fingerprint) not in done]
    if todo:
        world = _DemoWorld(config)
        for job in tqdm(
            todo, desc="demo", unit="job", disable=None if progress is None else not progress
        ):
            record = (
                _bound_record(world, job.p) if job.kind == "bound" else _attack_record(world, job)
            )
            store.append({"key": job.key(fingerprint), "config": fingerprint, **record})
    return [r for r in store.records() if r.get("config") == fingerprint]


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


def plot_demo(summary: dict[str, list[dict]]):
    """Two panels: Theorem 1 (published, corrected) versus p; NMI (+ chance) and PSNR versus p."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="notebook")
    fig, (ax_bound, ax_nmi) = plt.subplots(1, 2, figsize=(12, 4.5))
    bound = summary["bound"]
    ps = [r["p"] for r in bound]
    ax_bound.plot(
        ps, [r["bound_published_bits"] for r in bound], "o-", label="Theorem 1 as published"
    )
    ax_bound.plot(ps, [r["bound_corrected_bits"] for r in bound], "s--", label="corrected")
    ax_bound.set(
        xlabel="base pruning rate p",
        ylabel="leakage bound per round (bits)",
        title="Information-theoretic bound",
        yscale="symlog",
    )
    ax_bound.legend()

    ax_psnr = ax_nmi.twinx()
    palette = dict(zip(("sgi", "gi"), sns.color_palette(n_colors=2), strict=True))
    for attack in ("sgi", "gi"):
        rows = [r for r in summary["attack"] if r["attack"] == attack]
        if not rows:
            continue
        ps = [r["p"] for r in rows]
        ax_nmi.errorbar(
            ps,
            [r["nmi"] for r in rows],
            yerr=[r["nmi_std"] for r in rows],
            fmt="o-",
            color=palette[attack],
            capsize=3,
            label=f"{attack.upper()} NMI",
        )
        ax_psnr.plot(
            ps,
            [r["psnr"] for r in rows],
            ":",
            marker="x",
            color=palette[attack],
            label=f"{attack.upper()} PSNR",
        )
    chance = [r for r in summary["attack"] if r["attack"] == summary["attack"][0]["attack"]]
    ax_nmi.plot(
        [r["p"] for r in chance],
        [r["nmi_chance"] for r in chance],
        color="grey",
        linestyle="--",
        label="NMI chance (vs uniform noise)",
    )
    for attack in ("sgi", "gi"):
        rows = [r for r in summary["attack"] if r["attack"] == attack]
        ax_nmi.plot(
            [r["p"] for r in rows],
            [r["nmi_permutation_floor"] for r in rows],
            color=palette[attack],
            linestyle="-.",
            alpha=0.6,
            label=f"{attack.upper()} permutation floor",
        )
    ax_nmi.set(
        xlabel="base pruning rate p",
        ylabel="NMI (original vs reconstruction)",
        ylim=(0, 1.05),
        title="Empirical leakage (error bars: std over targets)",
    )
    ax_psnr.set_ylabel("PSNR (dB)")
    ax_psnr.grid(False)
    handles = ax_nmi.get_legend_handles_labels()
    more = ax_psnr.get_legend_handles_labels()
    fig.legend(
        handles[0] + more[0],
        handles[1] + more[1],
        loc="lower center",
        ncol=4,
        fontsize="small",
        frameon=False,
    )
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return fig
