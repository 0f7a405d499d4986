"""Train a pruned FL model end to end and record its per-round test accuracy.

One configuration (:class:`TrainConfig`) is one job: load the data set
(:func:`sims.data.load_train_test`), split it over clients, build the model and the base
pruning scheme, run :func:`sims.fl.server.run_federated`, and append *one* record holding
the whole per-round curve to a :class:`sims.store.results.ResultStore` under the key
``train/<fingerprint>``. A rerun of a finished configuration returns the stored record
without training; a killed run leaves no record (so nothing is duplicated, and it reruns
from round 1: runs are not checkpointed mid-way). The fingerprint covers everything that
changes the numbers, not the device or the data directory.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field

from pruneleak.bounds.validation import check_choice, check_distinct, check_int, check_real
from pruneleak.estimators.device import check_device, resolve_device
from pruneleak.sims.core.fields import device_field, documented, seed_field
from pruneleak.sims.core.runtime import check_seed, fingerprint, seeded
from pruneleak.sims.data.datasets import available_datasets, load_train_test
from pruneleak.sims.data.partition import PARTITIONS, split_clients
from pruneleak.sims.fl.server import FedConfig, run_federated
from pruneleak.sims.models import available_models, build_model, count_parameters, model_options
from pruneleak.sims.pruning.schemes import available_schemes, build_scheme
from pruneleak.sims.store.results import ResultStore

logger = logging.getLogger(__name__)

#: The base pruning schemes with a re-adjustment interval (``readjust_every``).
READJUSTING = ("feddst", "prunefl")


@dataclass(frozen=True)
class TrainConfig:
    """One pruned-FL training run.

    Attributes:
        dataset: a name of :func:`sims.data.available_datasets`.
        model: a name of :func:`sims.models.available_models`.
        model_options: ``(name, value)`` pairs (or a mapping) for
            :func:`sims.models.build_model` (e.g. ``(("width", 8), ("hidden", 64))``),
            each an option of ``model`` named once; kept as sorted pairs.
        pruning: a base pruning scheme of :func:`sims.pruning.schemes.available_schemes`.
        p: base pruning rate in [0, 1] (PriPrune: 0.3).
        readjust_every: re-adjustment interval of FedDST/PruneFL in rounds (None: the
            scheme's default); refused for the other schemes, which have none.
        num_clients: clients N for the IID and Dirichlet splits (ignored by "natural"),
            at least ``fed.clients_per_round``.
        partition: ``"iid"``, ``"dirichlet"`` (label skew, ``alpha``) or ``"natural"``
            (the data set's own writers: FEMNIST).
        alpha: Dirichlet concentration > 0.
        test_fraction: held-out fraction when the data set has no official test split.
        fed: the FL loop's :class:`sims.fl.server.FedConfig`.
        seed: seeds the model initialisation, the split and the pruning scheme.
        device: ``"auto"``, ``"cpu"``, ``"cuda"`` ... (not part of the fingerprint).
    """

    dataset: str = documented("digits", "data set", choices=available_datasets)
    model: str = documented("conv2", "model", choices=available_models)
    model_options: tuple[tuple[str, int | str], ...] = ()
    pruning: str = documented("random", "base pruning scheme", choices=available_schemes)
    p: float = documented(0.3, "base pruning rate: fraction of the weights pruned", low=0, high=1)
    readjust_every: int | None = documented(
        None,
        "FedDST/PruneFL re-adjustment interval",
        low=1,
        unit="rounds",
        unset="the scheme's",
    )
    num_clients: int = documented(10, "number of clients N for iid/dirichlet", low=1)
    partition: str = documented(
        "iid", "client split; 'natural' = FEMNIST writers", choices=PARTITIONS
    )
    alpha: float = documented(
        0.5,
        "Dirichlet concentration of the dirichlet split (small: more label skew)",
        low=0,
        low_open=True,
    )
    test_fraction: float = documented(
        0.2,
        "held-out fraction of the images when there is no official test split",
        low=0,
        high=1,
        low_open=True,
        high_open=True,
    )
    fed: FedConfig = field(default_factory=FedConfig)
    seed: int = seed_field()
    device: str = device_field()

    def __post_init__(self) -> None:
        func = "TrainConfig"
        check_choice("dataset", self.dataset, func=func, choices=available_datasets())
        check_choice("model", self.model, func=func, choices=available_models())
        object.__setattr__(self, "model_options", self._checked_options())
        check_choice("pruning", self.pruning, func=func, choices=available_schemes())
        check_real("p", self.p, func=func, low=0, high=1)
        if self.readjust_every is not None:
            check_int("readjust_every", self.readjust_every, func=func, low=1)
            if self.pruning not in READJUSTING:
                raise ValueError(
                    f"The 'readjust_every' parameter of {func} applies to the schemes that "
                    f"re-adjust their mask ({', '.join(map(repr, READJUSTING))}). Got "
                    f"readjust_every={self.readjust_every!r} with pruning={self.pruning!r}."
                )
        check_int("num_clients", self.num_clients, func=func, low=1)
        check_choice("partition", self.partition, func=func, choices=PARTITIONS)
        check_real("alpha", self.alpha, func=func, low=0, low_inclusive=False)
        check_real(
            "test_fraction",
            self.test_fraction,
            func=func,
            low=0,
            high=1,
            low_inclusive=False,
            high_inclusive=False,
        )
        if not isinstance(self.fed, FedConfig):
            raise ValueError(
                f"The 'fed' parameter of {func} must be a FedConfig. "
                f"Got {type(self.fed).__name__} instead."
            )
        if self.partition != "natural":
            check_int(
                "fed.clients_per_round",
                self.fed.clients_per_round,
                func=func,
                low=1,
                high=self.num_clients,
            )
        check_seed(self.seed, func=func)
        check_device(self.device, func=func)

    def _checked_options(self) -> tuple[tuple[str, int | str], ...]:
        """``model_options`` (pairs or a mapping) as sorted pairs, each an option of the
        model (:func:`sims.models.model_options`) named once; values are checked when the
        model is built."""
        func = "TrainConfig"
        options = self.model_options
        pairs = tuple(options.items()) if isinstance(options, Mapping) else options
        if not isinstance(pairs, tuple | list) or not all(
            isinstance(pair, tuple | list) and len(pair) == 2 for pair in pairs
        ):
            raise ValueError(
                f"The 'model_options' parameter of {func} must be (name, value) pairs. "
                f"Got {options!r} instead."
            )
        names = [name for name, _ in pairs]
        check_distinct("model_options", names, func=func)
        allowed = model_options(self.model)
        unknown = sorted(set(names) - set(allowed), key=str)
        if unknown:
            raise ValueError(
                f"The 'model_options' parameter of {func} must name options of model "
                f"{self.model!r} ({', '.join(allowed) or 'none'}). Got {unknown} instead."
            )
        return tuple(sorted((name, value) for name, value in pairs))

    def fingerprint(self) -> str:
        """Short hash of everything that changes the numbers (not the device)."""
        return fingerprint(asdict(self), exclude=("data_dir",))

    def key(self) -> str:
        """The results-store key of this run."""
        return f"train/{self.fingerprint()}"


def run_training(
    config: TrainConfig,
    *,
    data_dir: str | os.PathLike | None = None,
    store: ResultStore | None = None,
    progress: bool | None = None,
) -> dict:
    """Run (or, when ``store`` already holds it, fetch) the training job ``config``.

    Returns the record: ``key``, ``fingerprint``, ``config``, the evaluated ``rounds``
    with ``accuracy`` (test accuracy in [0, 1]), ``loss`` (nats) and ``density`` of the
    server mask, ``mask_changes`` (rounds after which the server mask changed),
    ``final_accuracy``, ``num_parameters``, ``num_clients``, ``device`` and ``seconds``.
    """
    key = config.key()
    if store is not None:
        for record in store.records():
            if record.get("key") == key:
                logger.info("%s is already in %s; skipping", key, store.path)
                return record
    start = time.perf_counter()
    train, test = load_train_test(
        config.dataset, data_dir, test_fraction=config.test_fraction, seed=config.seed
    )
    clients = split_clients(
        train,
        config.partition,
        num_clients=config.num_clients,
        seed=config.seed,
        alpha=config.alpha,
        func="TrainConfig",
    )
    with seeded(config.seed):
        model = build_model(
            config.model,
            image_shape=train.image_shape,
            num_classes=train.num_classes,
            **dict(config.model_options),
        )
    scheme = build_scheme(
        config.pruning,
        config.p,
        seed=config.seed,
        rounds=config.fed.rounds,
        readjust_every=config.readjust_every,
    )
    device = resolve_device(config.device)
    history = run_federated(
        model, scheme, train, clients, test, config.fed, device=device, progress=progress
    )
    record = {
        "key": key,
        "fingerprint": config.fingerprint(),
        "config": {k: v for k, v in asdict(config).items() if k != "device"},
        "rounds": history.rounds,
        "accuracy": history.accuracy,
        "loss": history.loss,
        "density": history.density,
        "mask_changes": history.mask_changes,
        "final_accuracy": history.accuracy[-1],
        "num_parameters": count_parameters(model),
        "num_clients": len(clients),
        "device": str(device),
        "seconds": time.perf_counter() - start,
    }
    if store is not None:
        store.append(record)
    return record
