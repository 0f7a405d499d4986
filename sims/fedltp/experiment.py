"""Fed-LTP against DP-Fed and Fed-SPA at equal budgets: a Table-III-like study.

Quick scale (the tests and the notebook; about 15 s on one CPU thread): the embedded
digits (8x8, 1,797 images) split by :func:`sims.fedltp.data.split_fedltp_data` into
disjoint public and private halves, U = 10 clients (IID), q = 0.3 (K = 3), tau = 10
local DP-SGD steps of expected batch B = 10, C = 1, sigma = 1.4, learning rate 0.5,
lambda_val = 10, two tickets of 100 public steps, logistic regression (a convolutional
network stays at chance under this noise on 8x8 images), budgets 5.35 and 9.71 nats at
delta = 1e-3 (the epsilons Table III prints for Fed-LTP and for DP-Fed).

Paper scale (``PRUNELEAK_SCALE=paper``): MNIST from ``data_dir`` (the four IDX files of
``sims.data.load_mnist``; nothing is downloaded), its public half standing in for FEMNIST
(the paper's public set is a different data set, which ``split_fedltp_data`` does not
take), :class:`FedLTPConfig`'s paper defaults (U = 50, q = 0.1, tau = 300, C = 10,
sigma = 1.4, B = 10, T = 50) and ``conv2``. With every local step counted, clients of
384 training records (q~ = 10/384) afford 13 rounds at 5.35 and 34 at 9.71 (T = 50 would
spend 12.49; computed with :func:`sims.fedltp.affordable_rounds`, not run here).

Every method runs :func:`sims.fedltp.training.run_fedltp` (variants of
:mod:`sims.fedltp.baselines`) with the same budget, so the rounds each affords are equal:
the methods differ in accuracy and communication, not in epsilon (the accounting counts
every local step; see ``bounds.claims.fedltp``, claim ``fedltp.table3.epsilon``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from functools import partial

from pruneleak.sims.core.scale import SCALES
from pruneleak.sims.data.datasets import load_digits_dataset, load_mnist
from pruneleak.sims.fedltp.baselines import MB, MIB, per_client_mib, run_variant
from pruneleak.sims.fedltp.config import FedLTPConfig
from pruneleak.sims.fedltp.data import split_for_config
from pruneleak.sims.models import build_model
from pruneleak.sims.store.results import ResultStore

# Table III of the paper (papers/fed-ltp-lottery-ticket-zcdp.txt, lines 497-510; Fashion-
# MNIST private data, FEMNIST public data, columns "Acc IID, Acc non-IID, Comm (MB),
# epsilon"; the CIFAR-10-public columns give the same baselines and, for Fed-LTP,
# iterative 75.16 / 72.57 / 34.38 / 5.35 and one-shot 75.87 / 73.47 / 38.34 / 5.35).
# Comm is per client and in MiB (claim fedltp.table3.comm_units).
PAPER_TABLE3 = {
    "Fed-LTP (iterative)": (72.25, 71.23, 31.66, 5.35),
    "Fed-LTP (one-shot)": (73.65, 70.86, 35.30, 5.35),
    "Fed-SPA p=1.0": (74.40, 68.40, 64.36, 9.71),
    "Fed-SPA p=0.8": (72.21, 69.09, 57.92, 8.78),
    "Fed-SPA p=0.6": (70.45, 65.40, 51.49, 7.77),
    "Fed-SPA p=0.4": (69.21, 69.23, 45.05, 6.60),
    "Fed-SPA p=0.2": (65.26, 68.96, 38.62, 5.16),
    "DP-Fed": (70.41, 68.89, 64.36, 9.71),
}


@dataclass(frozen=True)
class Method:
    """One row: ``variant`` of :func:`run_fedltp`, Fed-LTP's ``pruning``, Fed-SPA's ``keep``."""

    label: str
    variant: str
    pruning: str = "one_shot"
    keep: float | None = None


DEFAULT_METHODS = (
    Method("Fed-LTP (iterative)", "fedltp", pruning="iterative"),
    Method("Fed-LTP (one-shot)", "fedltp"),
    Method("Fed-SPA p=0.6", "fed-spa", keep=0.6),
    Method("Fed-SPA p=0.2", "fed-spa", keep=0.2),
    Method("DP-Fed", "dp-fed"),
)


@dataclass(frozen=True)
class FedLTPStudy:
    """What :func:`run_study` runs: ``config`` (its ``epsilon`` and ``pruning`` are set per
    row) for each of ``budgets`` and ``methods``, ``model`` on ``dataset``."""

    config: FedLTPConfig
    budgets: tuple[float, ...] = (5.35, 9.71)
    methods: tuple[Method, ...] = DEFAULT_METHODS
    dataset: str = "digits"
    model: str = "logreg"
    data_dir: str | None = None

    @classmethod
    def for_scale(cls, scale: str = "quick", *, data_dir=None) -> FedLTPStudy:
        """The quick or paper study (module docstring); paper needs MNIST in ``data_dir``."""
        if scale not in SCALES:
            raise ValueError(f"The 'scale' parameter must be one of {SCALES}. Got {scale!r}.")
        if scale == "paper":
            if data_dir is None:
                raise ValueError(
                    "The paper-scale Fed-LTP study needs MNIST: set 'data_dir' "
                    "($PRUNELEAK_DATA_DIR) to a folder with its four IDX files."
                )
            return cls(config=FedLTPConfig(), dataset="mnist", model="conv2", data_dir=data_dir)
        config = FedLTPConfig(
            num_clients=10,
            client_rate=0.3,
            local_steps=10,
            max_grad_norm=1.0,
            lr=0.5,
            rounds=40,
            num_tickets=2,
            ticket_steps=100,
        )
        return cls(config=config)


@dataclass
class StudyResult:
    """Per (method label, budget): the run's records (``curves``) and one summary row."""

    study: FedLTPStudy
    rows: list[dict] = field(default_factory=list)
    curves: dict[tuple[str, float], list[dict]] = field(default_factory=dict)
    seconds: float = 0.0

    def table(self) -> str:
        """Markdown table: ours beside Table III (FEMNIST-public columns)."""
        head = (
            "| method | budget | rounds | epsilon | best acc | final acc | Comm MB | Comm MiB "
            "| per-client MiB | paper acc % IID / non-IID | paper Comm (MiB per client) "
            "| paper epsilon |"
        )
        lines = [head, "|" + "---|" * 12]
        for r in self.rows:
            paper = PAPER_TABLE3.get(r["method"])
            p = ("-", "-", "-") if paper is None else (f"{paper[0]} / {paper[1]}", *paper[2:])
            lines.append(
                f"| {r['method']} | {r['budget']:g} | {r['rounds']} | {r['epsilon']:.2f} "
                f"| {r['best_accuracy']:.3f} | {r['final_accuracy']:.3f} | {r['comm_mb']:.3f} "
                f"| {r['comm_mib']:.3f} | {r['comm_mib_per_client']:.4f} | {p[0]} | {p[1]} "
                f"| {p[2]} |"
            )
        return "\n".join(lines)


def _load(study: FedLTPStudy):
    if study.dataset == "digits":
        return load_digits_dataset()
    return load_mnist(study.data_dir)


def run_study(study: FedLTPStudy, *, store: ResultStore | None = None, device="cpu") -> StudyResult:
    """Run every method at every budget (resumable through ``store``)."""
    start = time.perf_counter()
    dataset = _load(study)
    shape = tuple(dataset.images.shape[1:])
    factory = partial(build_model, study.model, image_shape=shape, num_classes=10)
    data = split_for_config(dataset, study.config)
    result = StudyResult(study=study)
    for budget in study.budgets:
        for m in study.methods:
            config = replace(study.config, epsilon=budget, pruning=m.pruning)
            run = run_variant(
                m.variant, config, data, factory, keep=m.keep, store=store, device=device
            )
            records = run.records
            total = records[-1]["bytes_cumulative"] if records else 0
            accs = [r["test_accuracy"] for r in records]
            result.curves[(m.label, budget)] = records
            result.rows.append(
                {
                    "method": m.label,
                    "variant": m.variant,
                    "budget": budget,
                    "rounds": run.rounds_run,
                    "epsilon": run.epsilon,
                    "best_accuracy": max(accs, default=float("nan")),
                    "final_accuracy": accs[-1] if accs else float("nan"),
                    "comm_bytes": total,
                    "comm_mb": total / MB,
                    "comm_mib": total / MIB,
                    "comm_mib_per_client": per_client_mib(total, config.num_clients),
                }
            )
    result.seconds = time.perf_counter() - start
    return result
