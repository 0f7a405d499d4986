"""Resumable sweeps of PriPrune's attack study (arXiv:2310.19958, Fig. 2 / Fig. 10 and the
appendix "Comparison of Attacks", Fig. 7; journal version Fig. 3-5).

A sweep is a :class:`SweepConfig`: a ``base`` job and a list of ``grids``. Each grid
overrides some fields of the base and expands the Cartesian product of its list-valued
fields; a grid may name the ``panel`` of the figure it feeds (``"p"``, ``"B"``, ``"d"``,
``"T"``, ``"attacks"`` ...). The union of all grids, without repeats, is the list of
:class:`AttackJob` s. :func:`run_sweep` runs every job not yet in the
:class:`sims.core.store.ResultStore` and appends one record per finished job, keyed by the
job's fingerprint (so a job shared by several panels, or by several sweeps, runs once,
and a killed sweep resumes where it stopped). The same code serves ``pruneleak sweep
CONFIG.toml`` (:mod:`sims.cli.sweep`) and the notebooks.

One job (:func:`run_job`) is one FL run and the attacks on it:

1. the data set is split IID over ``num_clients`` clients; a model (:mod:`sims.models`)
   is initialised from ``seed``; the base pruning scheme (:mod:`sims.pruning.schemes`) prunes
   it at rate ``p``;
2. ``rounds`` (T) rounds of FedSGD (:func:`sims.fl.server.run_federated`, batch size
   B, ``local_steps`` local steps, client lr 0.25); the server keeps every upload of
   the target clients ``0 .. targets - 1``;
3. every kept upload is attacked by SGI or GI (:mod:`sims.attacks`), all of them in one
   batched computation (in chunks of ``attack_chunk``), with the labels the client used
   (``label_mode="known"``), iDLG labels or jointly optimised ones;
4. each reconstruction is scored against the client's batch (NMI beside its chance
   level, PSNR; :func:`estimators.image.score_reconstruction`);
5. Theorem 1 / Corollary 1 are evaluated as published and corrected
   (:mod:`bounds.priprune`) on ``d*`` and ``Delta`` of the per-sample gradients of
   ``stats_samples`` samples of target 0 at the first attacked point, under its mask.

Leakage after T rounds. PriPrune considers single-round attacks (journal version,
Threat Model) and plots NMI against T without saying how rounds combine. Here the
record's ``nmi`` is, for each target, the best NMI of the server's single-round
reconstructions of that target in rounds 1..T (the adversary keeps its best result),
averaged over targets; ``nmi_last`` is the mean NMI of the attacks in round T alone.
With T = 1 both are the single-round leakage. The per-upload values are kept too.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from itertools import product
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from bounds import priprune
from bounds.validation import check_choice, check_int, check_real
from estimators.device import check_device, resolve_device
from estimators.image import score_reconstruction
from sims.attacks import AttackConfig, gi_attack_batched, sgi_attack_batched
from sims.core.gradstats import gradient_statistics
from sims.core.runtime import fingerprint, seeded
from sims.core.store import ResultStore
from sims.data.datasets import available_datasets, load_train_test
from sims.data.partition import partition_iid
from sims.fl.server import FedConfig, run_federated
from sims.models import available_models, build_model, count_parameters
from sims.pruning.schemes import available_schemes, build_scheme

logger = logging.getLogger(__name__)

ATTACKS = {"sgi": sgi_attack_batched, "gi": gi_attack_batched}
BATCHED_OPTIMIZERS = ("adam", "lbfgs_backtracking")
ACTIVATIONS = ("sigmoid", "tanh", "relu")
POOLINGS = ("avg", "max")
# Options each model family accepts (sims.models.build_model).
_MODEL_OPTIONS = {
    "conv": ("width", "hidden", "activation", "pooling"),
    "vgg": ("activation",),
    "lenet5": ("activation", "pooling"),
    "logreg": (),
}
#: The example sweep files of the checkout (``quick_digits.toml``, ``paper_*.toml``).
SWEEP_DIR = Path(__file__).resolve().parent / "configs"
# Fields that do not change a job's numbers (left out of its fingerprint).
_NOT_FINGERPRINTED = ("device", "data_dir", "attack_chunk")


@dataclass(frozen=True)
class AttackJob:
    """One point of the attack study (see the module docstring).

    Attributes:
        dataset: a name of :func:`sims.data.available_datasets`; ``data_dir`` for the
            file-based ones (FEMNIST, CIFAR-10, MNIST).
        model: a name of :func:`sims.models.available_models` (``"conv1"`` ...
            ``"conv6"``: PriPrune's Conv-k); ``width``, ``hidden``, ``activation``,
            ``pooling`` go to the models that take them. The defaults are
            :data:`sims.attacks.DIGITS_ATTACK_MODEL` (twice differentiable, as DLG-style
            attacks need).
        scheme: base pruning scheme (:func:`sims.pruning.schemes.available_schemes`) at rate
            ``p`` in [0, 1]; ``readjust_every`` for FedDST / PruneFL (None: their
            defaults); ``synflow_iterations``: SynFlow's scoring rounds (its paper: 100).
        batch_size: B >= 1; rounds: T >= 1; local_steps: local FedSGD steps E >= 1.
        num_clients, clients_per_round: the FL population and its sample per round;
            targets: clients ``0 .. targets - 1`` are attacked whenever sampled.
        client_lr: r > 0 of eq. (1) (PriPrune: 0.25); gradient_at: ``"masked"`` or
            ``"dense"`` (:mod:`sims.fl`).
        attack: ``"sgi"`` or ``"gi"``; loss, optimizer (a batched one), attack_iterations,
            attack_lr, tv_weight, signed_gradients, box, restarts, label_mode: the
            :class:`sims.attacks.AttackConfig` (default: squared L2 with our
            backtracking L-BFGS, the strongest batched attack we have; PriPrune's is
            cosine + TV with Adam, ``loss="cosine_tv", optimizer="adam"``).
        attack_chunk: attacks per batched computation (memory only).
        stats_samples: samples for ``d*`` and ``Delta``, >= 2 (``d* <= n - 1``).
        nmi_levels: quantisation levels of NMI.
        seed: seeds the data split, model, scheme, FL run and attacks, >= 0.
        device: ``"auto"``, ``"cpu"``, ``"cuda"``.
    """

    dataset: str = "digits"
    data_dir: str | None = None
    model: str = "conv1"
    width: int = 64
    hidden: int = 64
    activation: str = "sigmoid"
    pooling: str = "avg"
    scheme: str = "random"
    p: float = 0.3
    readjust_every: int | None = None
    synflow_iterations: int = 100
    batch_size: int = 1
    rounds: int = 1
    local_steps: int = 1
    num_clients: int = 10
    clients_per_round: int = 10
    targets: int = 4
    client_lr: float = 0.25
    gradient_at: str = "masked"
    attack: str = "sgi"
    loss: str = "l2"
    optimizer: str = "lbfgs_backtracking"
    attack_iterations: int = 100
    attack_lr: float = 1.0
    tv_weight: float = 0.0
    signed_gradients: bool = False
    box: bool = False
    restarts: int = 1
    label_mode: str = "known"
    attack_chunk: int = 16
    stats_samples: int = 64
    nmi_levels: int = 256
    seed: int = 0
    device: str = "auto"

    def __post_init__(self) -> None:
        func = "AttackJob"
        check_choice("dataset", self.dataset, func=func, choices=available_datasets())
        check_choice("model", self.model, func=func, choices=available_models())
        for name in (
            "width",
            "hidden",
            "synflow_iterations",
            "batch_size",
            "rounds",
            "local_steps",
            "num_clients",
        ):
            check_int(name, getattr(self, name), func=func, low=1)
        check_choice("activation", self.activation, func=func, choices=ACTIVATIONS)
        check_choice("pooling", self.pooling, func=func, choices=POOLINGS)
        check_choice("scheme", self.scheme, func=func, choices=available_schemes())
        check_real("p", self.p, func=func, low=0, high=1)
        if self.readjust_every is not None:
            check_int("readjust_every", self.readjust_every, func=func, low=1)
        check_int(
            "clients_per_round", self.clients_per_round, func=func, low=1, high=self.num_clients
        )
        check_int("targets", self.targets, func=func, low=1, high=self.num_clients)
        check_real("client_lr", self.client_lr, func=func, low=0, low_inclusive=False)
        check_choice("gradient_at", self.gradient_at, func=func, choices=("masked", "dense"))
        check_choice("attack", self.attack, func=func, choices=tuple(ATTACKS))
        check_choice("optimizer", self.optimizer, func=func, choices=BATCHED_OPTIMIZERS)
        check_int("attack_chunk", self.attack_chunk, func=func, low=1)
        check_int("stats_samples", self.stats_samples, func=func, low=2)
        check_int("nmi_levels", self.nmi_levels, func=func, low=2)
        check_int("seed", self.seed, func=func, low=0)
        check_device(self.device, func=func)
        self.attack_config()  # validates the attack fields

    def attack_config(self, *, seed: int | None = None) -> AttackConfig:
        """The :class:`sims.attacks.AttackConfig` of this job (``seed`` defaults to the job's)."""
        return AttackConfig(
            loss=self.loss,
            optimizer=self.optimizer,
            iterations=self.attack_iterations,
            lr=self.attack_lr,
            tv_weight=self.tv_weight,
            restarts=self.restarts,
            label_mode=self.label_mode,
            box=self.box,
            signed_gradients=self.signed_gradients,
            seed=self.seed if seed is None else seed,
            device=self.device,
        )

    def model_options(self) -> dict:
        """Keyword options of :func:`sims.models.build_model` for this job's model."""
        family = next(f for f in _MODEL_OPTIONS if self.model.startswith(f))
        return {name: getattr(self, name) for name in _MODEL_OPTIONS[family]}

    def fingerprint(self) -> str:
        """Hash of every field that changes the numbers: the job's key in a store."""
        return fingerprint(asdict(self), exclude=_NOT_FINGERPRINTED)


JOB_FIELDS = tuple(f.name for f in fields(AttackJob))
# Fields that label a curve rather than an x-axis when a panel is plotted.
CURVE_FIELDS = ("scheme", "attack", "seed")


@dataclass(frozen=True)
class SweepConfig:
    """A named grid of :class:`AttackJob` s (see the module docstring).

    Attributes:
        name: the sweep's name (recorded with every record it writes).
        base: :class:`AttackJob` fields shared by every job.
        grids: each a mapping of job fields to a value or a non-empty list of values,
            plus an optional ``"panel"`` name; expanded as a Cartesian product.
    """

    name: str
    base: Mapping = field(default_factory=dict)
    grids: tuple[Mapping, ...] = ()

    def __post_init__(self) -> None:
        func = "SweepConfig"
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(
                f"The 'name' parameter of {func} must be a non-empty string. "
                f"Got {self.name!r} instead."
            )
        _check_fields("base", self.base, allowed=JOB_FIELDS)
        if not self.grids:
            raise ValueError(f"The 'grids' parameter of {func} must hold at least one grid.")
        for i, grid in enumerate(self.grids):
            _check_fields(f"grids[{i}]", grid, allowed=(*JOB_FIELDS, "panel"))
            for key, value in grid.items():
                if isinstance(value, list) and not value:
                    raise ValueError(
                        f"The 'grids[{i}].{key}' parameter of {func} must be a non-empty "
                        f"list or a single value. Got [] instead."
                    )
        self.jobs()  # every job must be valid

    @classmethod
    def from_dict(cls, data: Mapping) -> SweepConfig:
        """From ``{"name": ..., "base": {...}, "grid": [{...}, ...]}`` (the TOML layout)."""
        unknown = set(data) - {"name", "base", "grid"}
        if unknown:
            raise ValueError(
                f"A sweep configuration has the keys 'name', 'base' and 'grid'. "
                f"Got unknown keys {sorted(unknown)} instead."
            )
        return cls(
            name=data.get("name", ""),
            base=dict(data.get("base", {})),
            grids=tuple(dict(g) for g in data.get("grid", ())),
        )

    @classmethod
    def from_toml(cls, path: str | os.PathLike) -> SweepConfig:
        """Read a sweep from a TOML file (``name``, ``[base]``, ``[[grid]]`` tables)."""
        return cls.from_dict(_read_toml(Path(path)))

    def with_base(self, **overrides) -> SweepConfig:
        """The same sweep with ``overrides`` applied to every job (e.g. ``device``)."""
        return replace(self, base={**self.base, **overrides})

    def _expand(self, grid: Mapping) -> list[AttackJob]:
        axes = {k: v if isinstance(v, list) else [v] for k, v in grid.items() if k != "panel"}
        names = list(axes)
        return [
            AttackJob(**{**self.base, **dict(zip(names, values, strict=True))})
            for values in product(*(axes[n] for n in names))
        ]

    def jobs(self) -> list[AttackJob]:
        """Every job of the sweep, in grid order, each once."""
        return list(dict.fromkeys(job for grid in self.grids for job in self._expand(grid)))

    def panels(self) -> dict[str, list[AttackJob]]:
        """Jobs by panel name (grids without a name are called ``"grid<i>"``)."""
        out: dict[str, list[AttackJob]] = {}
        for i, grid in enumerate(self.grids):
            out.setdefault(str(grid.get("panel", f"grid{i}")), []).extend(self._expand(grid))
        return {name: list(dict.fromkeys(jobs)) for name, jobs in out.items()}


def _check_fields(name: str, mapping, *, allowed) -> None:
    if not isinstance(mapping, Mapping):
        raise ValueError(
            f"The '{name}' parameter of SweepConfig must be a table of job fields. "
            f"Got {type(mapping).__name__} instead."
        )
    unknown = sorted(set(mapping) - set(allowed))
    if unknown:
        raise ValueError(
            f"The '{name}' parameter of SweepConfig names unknown job fields {unknown}; "
            f"known fields: {', '.join(allowed)}."
        )


def _read_toml(path: Path) -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        try:
            import tomli as tomllib
        except ModuleNotFoundError as err:
            raise ValueError(
                "Reading a sweep configuration needs Python >= 3.11 (tomllib) or the "
                "'tomli' package on Python 3.10."
            ) from err
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError as err:
        raise ValueError(f"The sweep configuration {path} does not exist.") from err
    except tomllib.TOMLDecodeError as err:
        raise ValueError(f"The sweep configuration {path} is not valid TOML: {err}") from err


# --------------------------------------------------------------------------- one job


def _observe(store: list):
    def on_target_update(t, client, global_params, sent, mask, batch):
        store.append(
            {
                "round": t,
                "client": client,
                "w": global_params,
                "sent": sent,
                "mask": mask,
                "batch": batch,
            }
        )

    return on_target_update


def _attack_uploads(job: AttackJob, model, uploads: list[dict], num_classes: int) -> list:
    attack = ATTACKS[job.attack]
    gradient_at = job.gradient_at if job.attack == "sgi" else "dense"
    results = []
    for start in range(0, len(uploads), job.attack_chunk):
        chunk = uploads[start : start + job.attack_chunk]
        images = chunk[0]["batch"][0]
        results += attack(
            model,
            [u["w"] for u in chunk],
            [u["sent"] for u in chunk],
            lr=job.client_lr,
            batch_shape=tuple(images.shape),
            num_classes=num_classes,
            labels=[u["batch"][1] for u in chunk] if job.label_mode == "known" else None,
            config=job.attack_config(),
            seeds=[job.seed + start + k for k in range(len(chunk))],
            gradient_at=gradient_at,
            local_steps=job.local_steps,
        )
    return results


def _bound_fields(job: AttackJob, model, upload: dict, stats_data, d: int) -> dict:
    """Theorem 1 / Corollary 1 at the first attacked point (module docstring, step 5)."""
    mask = upload["mask"]
    point = mask.apply(upload["w"]) if job.gradient_at == "masked" else upload["w"]
    stats = gradient_statistics(model, point, *stats_data, mask=mask)
    out = {"d_star": stats.d_star, "delta_nats": stats.delta, "d_kept": stats.d}
    if stats.d_star < 1:  # no gradient variation in the sample: the bound is undefined
        return {**out, **dict.fromkeys(BOUND_FIELDS)}
    inputs = {"p": job.p, "B": job.batch_size, "d_star": stats.d_star, "delta": stats.delta}
    return {
        **out,
        "bound_published_bits": priprune.multi_round_bound(**inputs, T=job.rounds),
        "bound_corrected_bits": priprune.multi_round_bound_corrected(**inputs, d=d, T=job.rounds),
        "bound_published_single_bits": priprune.single_round_bound(**inputs),
        "bound_corrected_single_bits": priprune.single_round_bound_corrected(**inputs, d=d),
    }


BOUND_FIELDS = (
    "bound_published_bits",
    "bound_corrected_bits",
    "bound_published_single_bits",
    "bound_corrected_single_bits",
)


def _mean_or_none(values) -> float | None:
    return float(np.mean(values)) if len(values) else None


def run_job(job: AttackJob) -> dict:
    """Run one job (module docstring, steps 1-5) and return its record (without key).

    Record fields: ``job`` (its fields), ``d`` (model parameters), ``n_uploads``,
    per upload ``rounds``, ``clients``, ``nmi_per_upload``, ``psnr_per_upload``,
    ``nmi_chance_per_upload``, ``labels_correct``; per target ``nmi_per_target`` and
    ``psnr_per_target`` (best over rounds); means ``nmi``, ``psnr``, ``nmi_chance``,
    ``nmi_last``, ``psnr_last``; ``d_star``, ``delta_nats``, ``d_kept``, the bounds of
    ``BOUND_FIELDS`` (bits; None when ``d* = 0``); ``accuracy`` (test accuracy after T
    rounds); ``seconds``. Metrics are None when no target was sampled.
    """
    start = time.perf_counter()
    device = resolve_device(job.device)
    train, test = load_train_test(job.dataset, job.data_dir, seed=job.seed)
    clients = partition_iid(len(train), job.num_clients, seed=job.seed)
    with seeded(job.seed):
        model = build_model(
            job.model,
            image_shape=train.image_shape,
            num_classes=train.num_classes,
            **job.model_options(),
        )
    options = {"iterations": job.synflow_iterations} if job.scheme == "synflow" else {}
    scheme = build_scheme(
        job.scheme,
        job.p,
        seed=job.seed,
        rounds=job.rounds,
        readjust_every=job.readjust_every,
        **options,
    )
    fed = FedConfig(
        rounds=job.rounds,
        clients_per_round=job.clients_per_round,
        local_epochs=job.local_steps,
        batch_size=job.batch_size,
        lr=job.client_lr,
        algorithm="fedsgd",
        gradient_at=job.gradient_at,
        init_batch_size=min(200, len(clients[0])),
        eval_every=job.rounds,
        seed=job.seed,
    )
    uploads: list[dict] = []
    history = run_federated(
        model,
        scheme,
        train,
        clients,
        test,
        fed,
        device=device,
        on_target_update=_observe(uploads),
        targets=set(range(job.targets)),
        progress=False,
    )
    model = model.to(device)
    d = count_parameters(model)
    record = {
        "job": {k: v for k, v in asdict(job).items() if k != "device"},
        "d": d,
        "n_uploads": len(uploads),
        "accuracy": history.accuracy[-1],
        "rounds": [u["round"] for u in uploads],
        "clients": [u["client"] for u in uploads],
    }
    results = _attack_uploads(job, model, uploads, train.num_classes) if uploads else []
    per_upload = {"nmi": [], "psnr": [], "nmi_chance": [], "labels_correct": []}
    for upload, result in zip(uploads, results, strict=True):
        images, labels = (t.cpu() for t in upload["batch"])
        scores = score_reconstruction(images, result.images, levels=job.nmi_levels, seed=job.seed)
        for metric in ("nmi", "psnr", "nmi_chance"):
            per_upload[metric].append(float(np.mean(scores[metric])))
        found = result.labels.sort().values
        per_upload["labels_correct"].append(bool(torch.equal(found, labels.sort().values)))
    for metric, values in per_upload.items():
        record[f"{metric}_per_upload"] = values
    for metric in ("nmi", "psnr"):
        best = {}
        for client, value in zip(record["clients"], per_upload[metric], strict=True):
            best[client] = max(best.get(client, -math.inf), value)
        record[f"{metric}_per_target"] = [best[c] for c in sorted(best)]
        record[metric] = _mean_or_none(record[f"{metric}_per_target"])
        last = [
            v for r, v in zip(record["rounds"], per_upload[metric], strict=True) if r == job.rounds
        ]
        record[f"{metric}_last"] = _mean_or_none(last)
    record["nmi_chance"] = _mean_or_none(per_upload["nmi_chance"])
    if uploads:
        target = uploads[0]["client"]
        rows = torch.as_tensor(clients[target][: job.stats_samples])
        stats_data = (train.images[rows].to(device), train.labels[rows].to(device))
        record.update(_bound_fields(job, model, uploads[0], stats_data, d))
    else:
        record.update(
            {"d_star": None, "delta_nats": None, "d_kept": None, **dict.fromkeys(BOUND_FIELDS)}
        )
    record["seconds"] = time.perf_counter() - start
    return record


# --------------------------------------------------------------------------- the sweep


def job_key(job: AttackJob) -> str:
    """The store key of ``job``'s record."""
    return f"attack-job/{job.fingerprint()}"


def run_sweep(
    config: SweepConfig,
    store: ResultStore,
    *,
    progress: bool | None = None,
    max_jobs: int | None = None,
) -> list[dict]:
    """Run the jobs of ``config`` not yet in ``store`` (one appended record each).

    ``max_jobs`` stops after that many new jobs (None: all); ``progress=None`` shows a
    bar only on a terminal. Returns the records of ``config``'s jobs that the store
    holds, in job order.
    """
    if not isinstance(config, SweepConfig):
        raise ValueError(
            f"The 'config' parameter of run_sweep must be a SweepConfig. "
            f"Got {type(config).__name__} instead."
        )
    if max_jobs is not None:
        check_int("max_jobs", max_jobs, func="run_sweep", low=0)
    jobs = config.jobs()
    done = store.done()
    todo = [job for job in jobs if job_key(job) not in done][:max_jobs]
    bar = tqdm(
        todo, desc=config.name, unit="job", disable=None if progress is None else not progress
    )
    for job in bar:
        record = run_job(job)
        store.append({"key": job_key(job), "sweep": config.name, **record})
        logger.info("%s: %s p=%g done in %.1f s", config.name, job.scheme, job.p, record["seconds"])
    return sweep_records(config, store)


def sweep_records(config: SweepConfig, store: ResultStore) -> list[dict]:
    """The records of ``config``'s jobs found in ``store``, in job order."""
    by_key = {r["key"]: r for r in store.records()}
    return [by_key[k] for k in (job_key(j) for j in config.jobs()) if k in by_key]


# --------------------------------------------------------------------------- panels


def panel_axis(jobs: Sequence[AttackJob]) -> str:
    """The one job field, besides the curve fields (scheme, attack, seed), that varies
    over a panel's jobs: its x-axis. ``""`` when none varies."""
    varying = [
        name
        for name in JOB_FIELDS
        if name not in CURVE_FIELDS and len({getattr(j, name) for j in jobs}) > 1
    ]
    if len(varying) > 1:
        raise ValueError(
            f"A panel must vary one job field besides {CURVE_FIELDS}. Got {varying} instead."
        )
    return varying[0] if varying else ""


def x_value(record: Mapping, axis: str) -> float:
    """A record's numeric x on ``axis``: the field's value, or for ``"model"`` the
    number of model parameters ``d``."""
    if axis == "model":
        return float(record["d"])
    return float(record["job"][axis])


def panel_rows(
    config: SweepConfig, records: Iterable[Mapping], panel: str, *, metric: str = "nmi"
) -> list[dict]:
    """One row per (scheme, attack, x) of ``panel``: mean and std of ``metric`` over the
    seeds' per-target values, and the bounds. Missing records are skipped."""
    jobs = config.panels()[panel]
    axis = panel_axis(jobs)
    by_key = {r["key"]: r for r in records}
    groups: dict[tuple, list[Mapping]] = {}
    for job in jobs:
        record = by_key.get(job_key(job))
        if record is not None:
            x = x_value(record, axis) if axis else 0.0
            groups.setdefault((job.scheme, job.attack, x), []).append(record)
    rows = []
    for (scheme, attack, x), group in sorted(groups.items()):
        values = [v for r in group for v in r.get(f"{metric}_per_target", [])]
        row = {
            "panel": panel,
            "axis": axis,
            "x": x,
            "scheme": scheme,
            "attack": attack,
            "n": len(values),
            "model": group[0]["job"]["model"],
        }
        row[metric] = float(np.mean(values)) if values else None
        row[f"{metric}_std"] = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0
        for name in (*BOUND_FIELDS, "nmi_chance", "d_star", "delta_nats"):
            present = [r[name] for r in group if r.get(name) is not None]
            row[name] = float(np.mean(present)) if present else None
        rows.append(row)
    return rows


AXIS_LABELS = {
    "p": "base pruning rate p",
    "batch_size": "batch size B",
    "model": "model parameters d",
    "rounds": "training rounds T",
    "local_steps": "local steps E",
}


def plot_panels(
    config: SweepConfig,
    records: Sequence[Mapping],
    panels: Sequence[str],
    *,
    metric: str = "nmi",
    attack: str = "sgi",
):
    """One subplot per panel: ``metric`` against the panel's axis, one line per scheme
    (PriPrune Fig. 2 / Fig. 10 layout), for ``attack``; error bars: std over targets."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="notebook")
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.8), squeeze=False)
    schemes = available_schemes()
    palette = dict(zip(schemes, sns.color_palette(n_colors=len(schemes)), strict=True))
    for ax, panel in zip(axes[0], panels, strict=True):
        rows = [
            r
            for r in panel_rows(config, records, panel, metric=metric)
            if r["attack"] == attack and r[metric] is not None
        ]
        axis = rows[0]["axis"] if rows else ""
        for scheme in schemes:
            mine = [r for r in rows if r["scheme"] == scheme]
            if mine:
                ax.errorbar(
                    [r["x"] for r in mine],
                    [r[metric] for r in mine],
                    yerr=[r[f"{metric}_std"] for r in mine],
                    marker="o",
                    capsize=2,
                    color=palette[scheme],
                    label=scheme,
                )
        if metric == "nmi" and rows:
            chance = sorted(
                {(r["x"], r["nmi_chance"]) for r in rows if r["nmi_chance"] is not None}
            )
            ax.plot(
                [c[0] for c in chance],
                [c[1] for c in chance],
                color="grey",
                linestyle="--",
                label="NMI chance",
            )
        if axis == "model":
            ax.set_xscale("log")
        elif rows:
            ax.set_xticks(sorted({r["x"] for r in rows}))
        ax.set(
            xlabel=AXIS_LABELS.get(axis, axis),
            ylabel=metric.upper(),
            title=f"{attack.upper()}: {metric.upper()} vs {AXIS_LABELS.get(axis, axis)}",
        )
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(
        handles, labels, loc="lower center", ncol=len(labels), frameon=False, fontsize="small"
    )
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def plot_attack_comparison(
    config: SweepConfig, records: Sequence[Mapping], panel: str, *, metric: str = "nmi"
):
    """SGI against GI per scheme along ``panel``'s axis (PriPrune appendix Fig. 7)."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="notebook")
    rows = [r for r in panel_rows(config, records, panel, metric=metric) if r[metric] is not None]
    schemes = [s for s in available_schemes() if any(r["scheme"] == s for r in rows)]
    fig, axes = plt.subplots(
        1,
        max(1, len(schemes)),
        figsize=(3.2 * max(1, len(schemes)), 3.4),
        squeeze=False,
        sharey=True,
    )
    for ax, scheme in zip(axes[0], schemes, strict=False):
        for attack, style in (("sgi", "o-"), ("gi", "s--")):
            mine = [r for r in rows if r["scheme"] == scheme and r["attack"] == attack]
            ax.plot([r["x"] for r in mine], [r[metric] for r in mine], style, label=attack.upper())
        axis = rows[0]["axis"] if rows else ""
        ax.set(title=scheme, xlabel=AXIS_LABELS.get(axis, axis))
        ax.legend(fontsize="small")
    axes[0][0].set_ylabel(metric.upper())
    fig.tight_layout()
    return fig
