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

Presets (:data:`PRESETS`, ``FedLTPStudy.for_scale(scale, preset=...)``), the arms of the
paper's Sec. 6 on the scale's configuration:

- ``"table3"``: the five methods above at both budgets, IID, seed 0 (the default).
- ``"non_iid"``: the same beside the Dirichlet(alpha = 1) split (Table III's non-IID
  column; Sec. 6.1, line 352).
- ``"seeds"``: the five methods, IID and non-IID, seeds 0, 1, 2, at budget 5.35; the
  paper runs each experiment 3 times (line 372). :meth:`StudyResult.summary` gives each
  row's mean over the seeds with a Student-t interval
  (:func:`estimators.replicates.seed_interval`).
- ``"retention"``: Fig. 5, fed-iterative and fed-one-shot at final retention rates
  p = 0.54, 0.40, 0.29, 0.20 (line 406), IID and non-IID, at budget 5.35; the pruning
  degree Pr that gives each p is :func:`prune_degree_for_retention`.
- ``"ablations"``: Figs. 6-9 (:mod:`sims.fedltp.ablation`): both pruning schemes with
  and without the ticket, without validation and with basic-composition accounting, and
  fed-one-shot with client-side tickets, IID and non-IID, at budget 5.35.

Accuracy: ``best_accuracy`` is the best test accuracy over the rounds (an oracle: Table
III's "best testing accuracy of the global model"); ``released_accuracy`` is the test
accuracy of the model the server releases, the one of the best noisy validation score
(eq. 19), or the last one without validation. The ablations compare the latter.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np

from pruneleak.bounds.validation import check_choice, check_real
from pruneleak.estimators.replicates import seed_interval
from pruneleak.sims.core.scale import SCALES
from pruneleak.sims.data.datasets import load_digits_dataset, load_mnist
from pruneleak.sims.fedltp.ablation import FULL, Ablation
from pruneleak.sims.fedltp.baselines import MB, MIB, per_client_mib, run_variant
from pruneleak.sims.fedltp.config import FedLTPConfig
from pruneleak.sims.fedltp.data import split_for_config
from pruneleak.sims.fedltp.masks import retention_rates
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


# Fig. 5(a) (line 406): fed-iterative pruning, IID, FEMNIST public data; test accuracy in %
# at the final retention rates p "decreases to around 72 %, 70 %, 66 % and 58 %". The text
# states no other point of Fig. 5.
PAPER_FIG5_ITERATIVE_IID = {0.54: 72.0, 0.40: 70.0, 0.29: 66.0, 0.20: 58.0}

# Fig. 6 (line 414): test accuracy gained by the LTH global model over the unpruned one,
# percentage points, (IID, non-IID): "improved by around 5 % and 1 %" with fed-iterative
# pruning, "around 5 % and 4 %" with fed-one-shot.
PAPER_FIG6_GAIN = {"iterative": (5.0, 1.0), "one_shot": (5.0, 4.0)}

# Figs. 7-9 (lines 417-427) give no number in the text, only directions: Fed-LTP with
# validation is better (Fig. 7), server-side WT broadcasting beats client-side WT
# selection (Fig. 8, IID), and with zCDP accounting is better (Fig. 9).
PAPER_ABLATION_DIRECTION = {
    "unpruned": "full better by ~5 / ~1 pts (iterative), ~5 / ~4 (one-shot) (Fig. 6)",
    "no validation": "full better (Fig. 7, no number)",
    "client tickets": "full better, client-side more volatile (Fig. 8, IID, no number)",
    "composition": "full (zCDP) better (Fig. 9, no number)",
}


def prune_degree_for_retention(
    retention: float, *, pruning: str, further_prune: float, clients: int
) -> float:
    """The ticket's pruning degree Pr whose final retention rate p is ``retention``.

    Fed-one-shot: ``p = 1 - Pr`` (eq. 11). Fed-iterative: ``p`` is the mean over the
    ``clients`` selected clients of ``p^i = (1 - P2)^i (1 - Pr)`` (eq. 15-16), so
    ``1 - Pr = p / mean_i (1 - P2)^i``. ValueError when no ``Pr`` in [0, 1) gives it.

    >>> prune_degree_for_retention(0.4, pruning="one_shot", further_prune=0.1, clients=3)
    0.6
    """
    func = "prune_degree_for_retention"
    retention = check_real("retention", retention, func=func, low=0, high=1, low_inclusive=False)
    check_choice("pruning", pruning, func=func, choices=("one_shot", "iterative"))
    if pruning == "one_shot":
        return 1.0 - retention
    largest = float(retention_rates(0.0, further_prune, clients).mean())
    if retention > largest:
        raise ValueError(
            f"The 'retention' parameter of {func} must be at most {largest:.6g} for "
            f"fed-iterative pruning with further_prune={further_prune:g} over {clients} "
            f"clients (Pr = 0). Got {retention!r} instead."
        )
    return 1.0 - retention / largest


@dataclass(frozen=True)
class Method:
    """One row: ``variant`` of :func:`run_fedltp`, Fed-LTP's ``pruning``, Fed-SPA's ``keep``,
    Fed-LTP's final ``retention`` rate p (None: the config's ``prune_degree``; Fig. 5) and
    its ``ablation`` (Figs. 6-9); ``paper`` is what the paper reports for the row (text)."""

    label: str
    variant: str
    pruning: str = "one_shot"
    keep: float | None = None
    retention: float | None = None
    ablation: Ablation = FULL
    paper: str = ""

    def config_for(self, config: FedLTPConfig) -> FedLTPConfig:
        """``config`` with this row's pruning scheme and, for a retention row, the ticket's
        pruning degree."""
        config = replace(config, pruning=self.pruning)
        if self.retention is None:
            return config
        degree = prune_degree_for_retention(
            self.retention,
            pruning=self.pruning,
            further_prune=config.further_prune,
            clients=config.clients_per_round,
        )
        return replace(config, prune_degree=degree)


DEFAULT_METHODS = (
    Method("Fed-LTP (iterative)", "fedltp", pruning="iterative"),
    Method("Fed-LTP (one-shot)", "fedltp"),
    Method("Fed-SPA p=0.6", "fed-spa", keep=0.6),
    Method("Fed-SPA p=0.2", "fed-spa", keep=0.2),
    Method("DP-Fed", "dp-fed"),
)

_SCHEMES = (("iterative", "iterative"), ("one-shot", "one_shot"))


def _retention_methods() -> tuple[Method, ...]:
    return tuple(
        Method(
            f"Fed-LTP ({name}) p={p:.2f}",
            "fedltp",
            pruning=pruning,
            retention=p,
            paper=f"{PAPER_FIG5_ITERATIVE_IID[p]:g} % IID (Fig. 5a)"
            if pruning == "iterative"
            else "",
        )
        for name, pruning in _SCHEMES
        for p in PAPER_FIG5_ITERATIVE_IID
    )


def _ablation_methods() -> tuple[Method, ...]:
    arms = (
        ("", FULL, ""),
        ("unpruned", Ablation(global_model="unpruned"), "unpruned"),
        ("no validation", Ablation(validation=False), "no validation"),
        ("composition", Ablation(accounting="composition"), "composition"),
    )
    methods = [
        Method(
            f"Fed-LTP ({name})" + (f", {suffix}" if suffix else ""),
            "fedltp",
            pruning=pruning,
            ablation=ablation,
            paper=PAPER_ABLATION_DIRECTION.get(key, ""),
        )
        for name, pruning in _SCHEMES
        for suffix, ablation, key in arms
    ]
    methods.append(
        Method(
            "Fed-LTP (one-shot), client tickets",
            "fedltp",
            ablation=Ablation(tickets="client"),
            paper=PAPER_ABLATION_DIRECTION["client tickets"],
        )
    )
    return tuple(methods)


#: The packaged studies (module docstring): preset -> (methods, budgets, partitions, seeds).
PRESETS = {
    "table3": (DEFAULT_METHODS, (5.35, 9.71), ("iid",), (0,)),
    "non_iid": (DEFAULT_METHODS, (5.35, 9.71), ("iid", "dirichlet"), (0,)),
    "seeds": (DEFAULT_METHODS, (5.35,), ("iid", "dirichlet"), (0, 1, 2)),
    "retention": (_retention_methods(), (5.35,), ("iid", "dirichlet"), (0,)),
    "ablations": (_ablation_methods(), (5.35,), ("iid", "dirichlet"), (0,)),
}


@dataclass(frozen=True)
class FedLTPStudy:
    """What :func:`run_study` runs: ``config`` (its ``epsilon``, ``partition``, ``seed``
    and ``pruning`` are set per row) for each of ``budgets``, ``partitions``, ``seeds``
    and ``methods``, ``model`` on ``dataset``; ``seeds=None`` is ``(config.seed,)`` and
    ``partitions=None`` is ``(config.partition,)``."""

    config: FedLTPConfig
    budgets: tuple[float, ...] = (5.35, 9.71)
    methods: tuple[Method, ...] = DEFAULT_METHODS
    dataset: str = "digits"
    model: str = "logreg"
    data_dir: str | None = None
    partitions: tuple[str, ...] | None = None
    seeds: tuple[int, ...] | None = None

    @classmethod
    def for_scale(
        cls, scale: str = "quick", *, data_dir=None, preset: str = "table3"
    ) -> FedLTPStudy:
        """The quick or paper study (module docstring) of ``preset`` (:data:`PRESETS`);
        paper needs MNIST in ``data_dir``."""
        if scale not in SCALES:
            raise ValueError(f"The 'scale' parameter must be one of {SCALES}. Got {scale!r}.")
        check_choice("preset", preset, func="FedLTPStudy.for_scale", choices=tuple(PRESETS))
        methods, budgets, partitions, seeds = PRESETS[preset]
        arms = {"methods": methods, "budgets": budgets, "partitions": partitions, "seeds": seeds}
        if scale == "paper":
            if data_dir is None:
                raise ValueError(
                    "The paper-scale Fed-LTP study needs MNIST: set 'data_dir' "
                    "($PRUNELEAK_DATA_DIR) to a folder with its four IDX files."
                )
            return cls(
                config=FedLTPConfig(), dataset="mnist", model="conv2", data_dir=data_dir, **arms
            )
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
        return cls(config=config, **arms)


def _paper(method: Method) -> str:
    """What the paper reports for ``method``'s row: Table III's numbers, or its text."""
    paper = PAPER_TABLE3.get(method.label)
    if paper is None:
        return method.paper or "-"
    return f"{paper[0]} / {paper[1]} % IID / non-IID; Comm {paper[2]}; eps {paper[3]}"


@dataclass
class StudyResult:
    """Per (method label, budget, partition, seed): the run's records (``curves``) and one
    row (``rows``)."""

    study: FedLTPStudy
    rows: list[dict] = field(default_factory=list)
    curves: dict[tuple[str, float, str, int], list[dict]] = field(default_factory=dict)
    seconds: float = 0.0

    def table(self) -> str:
        """Markdown table: one row per run, ours beside Table III (FEMNIST-public columns)."""
        head = (
            "| method | partition | seed | budget | rounds | epsilon | best acc | released acc "
            "| final acc | Comm MB | Comm MiB | per-client MiB | paper acc % IID / non-IID "
            "| paper Comm (MiB per client) | paper epsilon |"
        )
        lines = [head, "|" + "---|" * 15]
        for r in self.rows:
            paper = PAPER_TABLE3.get(r["method"])
            p = ("-", "-", "-") if paper is None else (f"{paper[0]} / {paper[1]}", *paper[2:])
            lines.append(
                f"| {r['method']} | {r['partition']} | {r['seed']} | {r['budget']:g} "
                f"| {r['rounds']} | {r['epsilon']:.2f} | {r['best_accuracy']:.3f} "
                f"| {r['released_accuracy']:.3f} | {r['final_accuracy']:.3f} "
                f"| {r['comm_mb']:.3f} | {r['comm_mib']:.3f} | {r['comm_mib_per_client']:.4f} "
                f"| {p[0]} | {p[1]} | {p[2]} |"
            )
        return "\n".join(lines)

    def summary(self, *, confidence: float = 0.95) -> list[dict]:
        """One row per (method, budget, partition): the number of seeds, the mean rounds,
        the retention rate, and ``released_accuracy`` and ``best_accuracy`` as
        ``(mean, low, high)`` over the seeds (:func:`estimators.replicates.seed_interval`;
        ``low`` and ``high`` NaN with one seed; runs in which no
        round fit the budget have no accuracy and are left out of the interval)."""
        groups: dict[tuple, list[dict]] = {}
        for r in self.rows:
            groups.setdefault((r["method"], r["budget"], r["partition"]), []).append(r)
        out = []
        for (method, budget, partition), rows in groups.items():
            summary = {
                "method": method,
                "budget": budget,
                "partition": partition,
                "seeds": len(rows),
                "rounds": float(np.mean([r["rounds"] for r in rows])),
                "retention": float(np.mean([r["retention"] for r in rows])),
                "paper": rows[0]["paper"],
            }
            for key in ("released_accuracy", "best_accuracy"):
                ran = [r[key] for r in rows if r["rounds"] > 0]
                summary[key] = _interval(ran, confidence) if ran else (math.nan,) * 3
            out.append(summary)
        return out

    def summary_table(self, *, confidence: float = 0.95) -> str:
        """Markdown table of :meth:`summary`: accuracies in %, mean [t interval]."""
        level = f"{100 * confidence:g} %"
        head = (
            f"| method | partition | budget | seeds | rounds | retention p | released acc % "
            f"[{level} t] | best acc % [{level} t] | paper |"
        )
        lines = [head, "|" + "---|" * 9]
        for s in self.summary(confidence=confidence):
            lines.append(
                f"| {s['method']} | {s['partition']} | {s['budget']:g} | {s['seeds']} "
                f"| {s['rounds']:.3g} | {s['retention']:.2f} | {_percent(s['released_accuracy'])} "
                f"| {_percent(s['best_accuracy'])} | {s['paper']} |"
            )
        return "\n".join(lines)


def _interval(values: list[float], confidence: float) -> tuple[float, float, float]:
    """``(mean, low, high)`` of one value per seed, NaN ends without an interval."""
    r = seed_interval({seed: [v] for seed, v in enumerate(values)}, confidence=confidence)
    return r.mean, math.nan if r.low is None else r.low, math.nan if r.high is None else r.high


def _percent(interval: tuple[float, float, float]) -> str:
    mean, low, high = (100 * v for v in interval)
    if math.isnan(mean):
        return "- (no round fits)"
    return f"{mean:.1f}" if math.isnan(low) else f"{mean:.1f} [{low:.1f}, {high:.1f}]"


def _released_accuracy(records: list[dict]) -> float:
    """Test accuracy of the released model: the round the last record says is kept."""
    if not records:
        return math.nan
    kept = records[-1]["best_round"]
    return next(r["test_accuracy"] for r in records if r["round"] == kept)


def _load(study: FedLTPStudy):
    if study.dataset == "digits":
        return load_digits_dataset()
    return load_mnist(study.data_dir)


def run_study(study: FedLTPStudy, *, store: ResultStore | None = None, device="cpu") -> StudyResult:
    """Run every method at every budget, partition and seed (resumable through ``store``)."""
    start = time.perf_counter()
    dataset = _load(study)
    shape = tuple(dataset.images.shape[1:])
    factory = partial(build_model, study.model, image_shape=shape, num_classes=10)
    result = StudyResult(study=study)
    for partition in study.partitions or (study.config.partition,):
        for seed in study.seeds or (study.config.seed,):
            base = replace(study.config, partition=partition, seed=seed)
            data = split_for_config(dataset, base)
            for budget in study.budgets:
                for m in study.methods:
                    config = m.config_for(replace(base, epsilon=budget))
                    run = run_variant(
                        m.variant,
                        config,
                        data,
                        factory,
                        keep=m.keep,
                        store=store,
                        device=device,
                        ablation=m.ablation,
                    )
                    result.curves[(m.label, budget, partition, seed)] = run.records
                    result.rows.append(_row(m, config, run, budget))
    result.seconds = time.perf_counter() - start
    return result


def _row(method: Method, config: FedLTPConfig, run, budget: float) -> dict:
    records = run.records
    total = records[-1]["bytes_cumulative"] if records else 0
    accs = [r["test_accuracy"] for r in records]
    return {
        "method": method.label,
        "variant": method.variant,
        "partition": config.partition,
        "seed": config.seed,
        "budget": budget,
        "rounds": run.rounds_run,
        "epsilon": run.epsilon,
        "retention": records[-1]["density_clients"] if records else math.nan,
        "best_accuracy": max(accs, default=math.nan),
        "released_accuracy": _released_accuracy(records),
        "final_accuracy": accs[-1] if accs else math.nan,
        "comm_bytes": total,
        "comm_mb": total / MB,
        "comm_mib": total / MIB,
        "comm_mib_per_client": per_client_mib(total, config.num_clients),
        "paper": _paper(method),
    }
