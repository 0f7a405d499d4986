"""One point of PriPrune's attack study: :class:`AttackJob`, composed of the building
blocks' own configurations.

A job holds a :class:`ModelSpec` (what :func:`sims.models.build_model` builds), a
:class:`PruningSpec` (what :func:`sims.pruning.schemes.build_scheme` builds), a
:class:`DefenseSpec` (the client-side defense of :mod:`sims.defenses`), the FL
loop's :class:`sims.fl.server.FedConfig` and the inversion's
:class:`sims.attacks.AttackConfig`, each under its own field names, plus the few fields
that belong to the study itself (data set, population, targets, seed, device). A field is
therefore defined once, where the code that uses it lives.

Some fields of the composed configurations are set by the job, not by its author, and
must stay at their defaults (:data:`JOB_OWNED`): the job's ``seed`` seeds the FL run and
the attacks, its ``device`` is where they run, the FL algorithm is FedSGD (the attacks
invert FedSGD steps), and the global model is evaluated after the last round and every
``eval_every`` rounds (the job's own field; None: the last round only).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace

import torch

from pruneleak.bounds.validation import check_choice, check_int, check_real
from pruneleak.estimators.device import check_device
from pruneleak.sims.attacks import AttackConfig, gi_attack_batched, sgi_attack_batched
from pruneleak.sims.core import memory
from pruneleak.sims.core.runtime import check_seed, fingerprint
from pruneleak.sims.data.datasets import available_datasets
from pruneleak.sims.defenses.spec import DefenseSpec
from pruneleak.sims.fl.server import FedConfig
from pruneleak.sims.models import available_models, build_model, model_options
from pruneleak.sims.pruning.readjustment import PAPER_SCHEDULES, scaled_interval
from pruneleak.sims.pruning.schemes import PruningScheme, available_schemes, build_scheme

ATTACKS = {"sgi": sgi_attack_batched, "gi": gi_attack_batched}
BATCHED_OPTIMIZERS = ("adam", "lbfgs_backtracking")
ACTIVATIONS = ("sigmoid", "tanh", "relu")
POOLINGS = ("avg", "max")
#: Image shape ``(C, H, W)`` and classes of each data set's loader (:mod:`sims.data`), so
#: that a job's model is checked to fit in memory when the job is defined, before a sweep
#: reads data or runs anything; :func:`sims.models.build_model` checks it again on the
#: data actually loaded.
DATASET_SHAPES = {
    "digits": ((1, 8, 8), 10),
    "faces": ((1, 25, 25), 2),
    "patches": ((3, 32, 32), 4),
    "mnist": ((1, 28, 28), 10),
    "fashion_mnist": ((1, 28, 28), 10),
    "cifar10": ((3, 32, 32), 10),
    "femnist": ((1, 28, 28), 62),
}
#: Fields of the composed configurations that the job sets (see the module docstring).
JOB_OWNED = {
    "fed": ("seed", "algorithm", "eval_every"),
    "inversion": ("seed", "device"),
}
#: The same as dotted paths.
OWNED_PATHS = tuple(f"{section}.{name}" for section, names in JOB_OWNED.items() for name in names)
# Fields that do not change a job's numbers (left out of its fingerprint), as dotted paths.
_NOT_FINGERPRINTED = ("data_dir", "attack_chunk", "fed.eval_batch_size")
#: The attackers (:class:`AttackJob`'s ``attacker``).
ATTACKERS = ("unaware", "aware")
#: The client splits a job can use (:func:`sims.data.split_clients`).
JOB_PARTITIONS = ("iid", "natural")


@dataclass(frozen=True)
class ModelSpec:
    """The attacked model: a name of :func:`sims.models.available_models` (``"conv1"`` ...
    ``"conv6"``: PriPrune's Conv-k) and the options of its family. The defaults are
    :data:`sims.attacks.DIGITS_ATTACK_MODEL` (twice differentiable, as DLG-style attacks
    need); options a family does not take are ignored by it."""

    name: str = "conv1"
    width: int = 64
    hidden: int = 64
    activation: str = "sigmoid"
    pooling: str = "avg"

    def __post_init__(self) -> None:
        func = "ModelSpec"
        check_choice("name", self.name, func=func, choices=available_models())
        check_int("width", self.width, func=func, low=1)
        check_int("hidden", self.hidden, func=func, low=1)
        check_choice("activation", self.activation, func=func, choices=ACTIVATIONS)
        check_choice("pooling", self.pooling, func=func, choices=POOLINGS)

    def build(self, *, image_shape: tuple[int, int, int], num_classes: int):
        """The model (:func:`sims.models.build_model`) with its family's options."""
        options = {name: getattr(self, name) for name in model_options(self.name)}
        return build_model(self.name, image_shape=image_shape, num_classes=num_classes, **options)

    def check_fits(self, dataset: str, image_size: int | None = None) -> None:
        """Raise ValueError when the model cannot fit in memory on ``dataset``'s images
        (:data:`DATASET_SHAPES`; resized to ``image_size`` when given); nothing is
        allocated (shapes only, on torch's meta device)."""
        _check_fits(self, dataset, image_size, memory.device_memory_bytes("cpu"))


@functools.cache
def _check_fits(
    model: ModelSpec, dataset: str, image_size: int | None, memory_bytes: int | None
) -> None:
    """:meth:`ModelSpec.check_fits`, once per (model, data set, size, memory size): a
    sweep builds its jobs several times, and the models of a sweep are few.
    ``memory_bytes`` (the limit the models' constructors compare with) is part of the
    cache key only."""
    (channels, height, width), num_classes = DATASET_SHAPES[dataset]
    if image_size is not None:
        height = width = image_size
    image_shape = (channels, height, width)
    with torch.device("meta"):
        model.build(image_shape=image_shape, num_classes=num_classes)


@dataclass(frozen=True)
class PruningSpec:
    """The base pruning scheme (:func:`sims.pruning.schemes.available_schemes`) at rate
    ``p`` in [0, 1]; ``readjust_every`` for FedDST / PruneFL (None: the paper's schedule
    scaled to the run's rounds, :func:`sims.pruning.readjustment.scaled_interval`);
    ``synflow_iterations``: SynFlow's scoring rounds (its paper: 100)."""

    scheme: str = "random"
    p: float = 0.3
    readjust_every: int | None = None
    synflow_iterations: int = 100

    def __post_init__(self) -> None:
        func = "PruningSpec"
        check_choice("scheme", self.scheme, func=func, choices=available_schemes())
        check_real("p", self.p, func=func, low=0, high=1)
        if self.readjust_every is not None:
            check_int("readjust_every", self.readjust_every, func=func, low=1)
        check_int("synflow_iterations", self.synflow_iterations, func=func, low=1)

    @property
    def paper_scaled(self) -> bool:
        """Whether the scheme re-adjusts on its paper's schedule scaled to the run."""
        return self.readjust_every is None and self.scheme in PAPER_SCHEDULES

    def interval(self, rounds: int) -> int | None:
        """The re-adjustment interval in a run of ``rounds`` rounds (None: one-shot)."""
        if self.scheme not in PAPER_SCHEDULES:
            return None
        return scaled_interval(self.scheme, rounds) if self.paper_scaled else self.readjust_every

    def build(self, *, seed: int, rounds: int) -> PruningScheme:
        """A fresh scheme (:func:`sims.pruning.schemes.build_scheme`) for ``rounds`` rounds."""
        options = {"iterations": self.synflow_iterations} if self.scheme == "synflow" else {}
        return build_scheme(
            self.scheme,
            self.p,
            seed=seed,
            rounds=rounds,
            readjust_every=self.interval(rounds),
            **options,
        )


def _study_fed_config() -> FedConfig:
    # One round of FedSGD on single images, every client sampled: the study's base point.
    return FedConfig(rounds=1, clients_per_round=10, batch_size=1)


def _study_attack_config() -> AttackConfig:
    # Squared L2 with our backtracking L-BFGS: the strongest batched attack we have.
    return AttackConfig(optimizer="lbfgs_backtracking")


@dataclass(frozen=True)
class AttackJob:
    """One FL run and the attacks on it (:func:`sims.sweep.runner.run_job`).

    Attributes:
        dataset: a name of :func:`sims.data.available_datasets`; ``data_dir`` for the
            file-based ones (FEMNIST, CIFAR-10, MNIST).
        image_size: the side, in pixels, the images are resized to before anything else
            (:meth:`sims.data.ImageDataset.resized`: bilinear, antialiased), e.g. the
            25x25 faces to FEMNIST's 28x28 so that a job runs PriPrune's Conv-2 at its
            published size on offline data; None: the data set's own size.
        num_clients: the FL population; targets: clients ``0 .. targets - 1`` are
            attacked whenever sampled.
        partition: how the training data are split over the clients
            (:func:`sims.data.split_clients`): ``"iid"`` (``num_clients`` random parts)
            or ``"natural"`` (one client per writer of the data set: FEMNIST, as
            PriPrune's LEAF set-up; ``num_clients`` must equal the number of writers,
            checked when the data are loaded).
        model: :class:`ModelSpec`; pruning: :class:`PruningSpec`.
        fed: the FL loop (rounds T, clients_per_round, local_epochs E, batch_size B, lr r
            of eq. (1), gradient_at ...); its :data:`JOB_OWNED` fields stay at defaults.
        attack: ``"sgi"`` or ``"gi"``.
        defense: :class:`DefenseSpec`, the clients' defense after the base scheme.
        attacker: ``"unaware"`` (PriPrune's evaluation: Algorithm 2 as published, the
            mask read off the upload's zeros) or ``"aware"``
            (:mod:`sims.attacks.defense_aware`: it knows Algorithm 3; SGI only).
        inversion: the attack's hyper-parameters (PriPrune's is cosine + TV with Adam,
            ``loss="cosine_tv", optimizer="adam"``); a batched optimizer.
        attack_chunk: attacks per batched computation (memory only).
        stats_samples: samples for ``d*`` and ``Delta``, >= 2 (``d* <= n - 1``); a target
            client holding fewer uses all of its own, and the record's
            ``stats_samples_used`` says how many.
        nmi_levels: quantisation levels of NMI.
        leakage_candidates: the largest local data set ``|D_i|`` whose release vectors
            are computed for a target's exact bits (:mod:`sims.sweep.leakage_bits`);
            larger clients get None, >= 1.
        attack_every: K >= 1: the targets' uploads are attacked in the rounds that are
            multiples of K and in the last round T (1: every round). The server still
            observes every upload (the defense-aware attacker's Pseudo-Pruning state).
        eval_every: evaluate the global model every this many rounds and after the last
            (None: after the last round only); the record's ``accuracy_per_round``.
        seed: seeds the data split, model, scheme, FL run and attacks, >= 0.
        device: ``"auto"``, ``"cpu"``, ``"cuda"``; checked here, resolved when the job runs.
    """

    dataset: str = "digits"
    data_dir: str | None = None
    image_size: int | None = None
    num_clients: int = 10
    partition: str = "iid"
    targets: int = 4
    model: ModelSpec = field(default_factory=ModelSpec)
    pruning: PruningSpec = field(default_factory=PruningSpec)
    fed: FedConfig = field(default_factory=_study_fed_config)
    attack: str = "sgi"
    defense: DefenseSpec = field(default_factory=DefenseSpec)
    attacker: str = "unaware"
    inversion: AttackConfig = field(default_factory=_study_attack_config)
    attack_chunk: int = 16
    stats_samples: int = 64
    nmi_levels: int = 256
    leakage_candidates: int = 256
    attack_every: int = 1
    eval_every: int | None = None
    seed: int = 0
    device: str = "auto"

    def __post_init__(self) -> None:
        func = "AttackJob"
        check_choice("dataset", self.dataset, func=func, choices=available_datasets())
        if self.image_size is not None:
            check_int("image_size", self.image_size, func=func, low=1)
        check_int("num_clients", self.num_clients, func=func, low=1)
        check_choice("partition", self.partition, func=func, choices=JOB_PARTITIONS)
        check_int("targets", self.targets, func=func, low=1, high=self.num_clients)
        for name, cls in (
            ("model", ModelSpec),
            ("pruning", PruningSpec),
            ("fed", FedConfig),
            ("defense", DefenseSpec),
            ("inversion", AttackConfig),
        ):
            if not isinstance(getattr(self, name), cls):
                raise ValueError(
                    f"The '{name}' parameter of {func} must be a {cls.__name__}. "
                    f"Got {getattr(self, name)!r} instead."
                )
        check_int(
            "fed.clients_per_round",
            self.fed.clients_per_round,
            func=func,
            low=1,
            high=self.num_clients,
        )
        for section, names in JOB_OWNED.items():
            config = getattr(self, section)
            default = type(config)()
            for name in names:
                if getattr(config, name) != getattr(default, name):
                    raise ValueError(
                        f"The '{section}.{name}' parameter of {func} is set by the job; "
                        f"leave it at {getattr(default, name)!r}. "
                        f"Got {getattr(config, name)!r} instead."
                    )
        check_choice("attack", self.attack, func=func, choices=tuple(ATTACKS))
        check_choice("attacker", self.attacker, func=func, choices=ATTACKERS)
        if self.attacker == "aware" and self.attack != "sgi":
            raise ValueError(
                f"The 'attacker' parameter of {func} is 'aware', a mask-aware SGI; it "
                f"needs attack='sgi'. Got attack={self.attack!r} instead."
            )
        check_choice(
            "inversion.optimizer",
            self.inversion.optimizer,
            func=func,
            choices=BATCHED_OPTIMIZERS,
        )
        if self.inversion.label_mode == "idlg" and self.fed.batch_size != 1:
            raise ValueError(
                f"The 'inversion.label_mode' parameter of {func} is 'idlg', which recovers "
                f"the label of one image only; it needs fed.batch_size == 1. "
                f"Got fed.batch_size={self.fed.batch_size!r} instead."
            )
        check_int("attack_chunk", self.attack_chunk, func=func, low=1)
        check_int("stats_samples", self.stats_samples, func=func, low=2)
        check_int("nmi_levels", self.nmi_levels, func=func, low=2)
        check_int("leakage_candidates", self.leakage_candidates, func=func, low=1)
        check_int("attack_every", self.attack_every, func=func, low=1)
        if self.eval_every is not None:
            check_int("eval_every", self.eval_every, func=func, low=1)
        check_seed(self.seed, func=func)
        check_device(self.device, func=func)
        try:
            self.model.check_fits(self.dataset, self.image_size)
        except ValueError as err:
            listed = ", ".join(
                f"model.{f.name}={getattr(self.model, f.name)!r}" for f in fields(ModelSpec)
            )
            raise ValueError(
                f"The 'model' parameter of {func} ({listed}) cannot be trained on "
                f"{self.dataset!r} images: {err}"
            ) from err

    @classmethod
    def from_fields(cls, values: Mapping) -> AttackJob:
        """The job with the given fields, keyed by dotted path (``"pruning.p"``,
        ``"fed.batch_size"``, ``"seed"``; see :data:`FIELD_PATHS`); others at defaults."""
        unknown = sorted(set(values) - set(FIELD_PATHS))
        if unknown:
            raise ValueError(
                f"AttackJob has no fields {unknown}; known fields: {', '.join(FIELD_PATHS)}."
            )
        top = {k: v for k, v in values.items() if "." not in k}
        defaults = {f.name: f.default_factory for f in fields(cls) if f.name in SECTIONS}
        for section, default in defaults.items():
            prefix = section + "."
            mine = {k[len(prefix) :]: v for k, v in values.items() if k.startswith(prefix)}
            if mine:
                try:
                    top[section] = replace(default(), **mine)
                except ValueError as err:
                    keys = ", ".join(prefix + key for key in mine)
                    raise ValueError(f"In the job fields {keys}: {err}") from err
        return cls(**top)

    def fed_config(self) -> FedConfig:
        """The :class:`FedConfig` the job runs: ``fed`` with its job-owned fields set."""
        every = self.fed.rounds if self.eval_every is None else self.eval_every
        return replace(self.fed, seed=self.seed, algorithm="fedsgd", eval_every=every)

    def attacked(self, round_: int) -> bool:
        """Whether the targets' uploads of round ``round_`` are attacked: a multiple of
        ``attack_every``, or the last round."""
        return round_ % self.attack_every == 0 or round_ == self.fed.rounds

    def attack_config(self, *, device: str) -> AttackConfig:
        """The :class:`AttackConfig` the job runs on ``device`` (per-attack seeds are
        passed to the attack beside it)."""
        return replace(self.inversion, seed=self.seed, device=device)

    def as_fields(self) -> dict:
        """The job as ``{dotted path: value}`` over :data:`FIELD_PATHS` without ``device``
        (where a job runs is not what it computes); ``from_fields`` inverts it."""
        out = {}
        for path in FIELD_PATHS:
            if path != "device":
                section, _, name = path.rpartition(".")
                out[path] = getattr(getattr(self, section) if section else self, name)
        return out

    def fingerprint(self) -> str:
        """Hash of every field that changes the numbers: the job's key in a store.

        The fields added with the defenses, ``attack_every`` and ``eval_every``
        (:data:`_ADDED_LATER`) count only when set away from their defaults, so a job
        without them keeps the key it had before they existed (its records stay found)."""
        values = self.as_fields()
        at_default = [path for path in _ADDED_LATER if values[path] == _DEFAULT_FIELDS[path]]
        if self.pruning.paper_scaled:  # FedDST / PruneFL ran their authors' intervals before
            values["pruning.schedule"] = "paper-scaled"
        return fingerprint(values, exclude=(*_NOT_FINGERPRINTED, *at_default))


#: The job's fields that hold a composed configuration, and its class.
SECTIONS = {
    "model": ModelSpec,
    "pruning": PruningSpec,
    "fed": FedConfig,
    "defense": DefenseSpec,
    "inversion": AttackConfig,
}
#: Every field a sweep may set, as a dotted path (job-owned fields left out).
FIELD_PATHS = tuple(
    path
    for f in fields(AttackJob)
    for path in (
        [
            f"{f.name}.{g.name}"
            for g in fields(SECTIONS[f.name])
            if g.name not in JOB_OWNED.get(f.name, ())
        ]
        if f.name in SECTIONS
        else [f.name]
    )
)


def job_key(job: AttackJob) -> str:
    """The store key of ``job``'s record."""
    return f"attack-job/{job.fingerprint()}"


# The fields added with the defenses and after (the inversion's dummy masking and input
# normalisation among them), left out of a fingerprint at their defaults.
_ADDED_LATER = (
    "image_size",
    "partition",
    "attacker",
    *(f"defense.{f.name}" for f in fields(DefenseSpec)),
    "attack_every",
    "eval_every",
    "inversion.mask_dummy",
    "inversion.input_mean",
    "inversion.input_std",
)
_DEFAULT_FIELDS = AttackJob().as_fields()
