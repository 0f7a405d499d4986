"""Fed-LTP's data: a public/private split, and the private part over U clients.

The paper uses a different public data set (FEMNIST or CIFAR-10) from the private one
(MNIST or Fashion-MNIST). On the embedded digits (``sims.data.load_digits_dataset``,
1,797 images) this module stands in with a seeded, stratified split into *disjoint*
public and private parts (``public_fraction`` of every class is public), a stratified
test split of the private part (held by no client, for reporting only), and a partition
of the rest over the U clients, IID or Dirichlet(alpha) label skew (Hsu et al. 2019,
as in the paper's Sec. 6.1; ``sims.data.partition``). Each client's share is split again
into training and validation data (``val_fraction``; the validation data feed the
Laplace-noised scores of eq. 17).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pruneleak.bounds.validation import check_choice, check_int, check_real
from pruneleak.sims.data.datasets import ImageDataset
from pruneleak.sims.data.partition import partition_dirichlet, partition_iid

# Seeds of the independent draws below are (seed, stream) pairs.
_PUBLIC, _TEST, _PARTITION, _VALIDATION = 0, 1, 2, 3


@dataclass(frozen=True, eq=False)
class FedLTPData:
    """Disjoint parts of one data set.

    Attributes:
        public: server-side data of Algorithm 1 (ticket training and the score V).
        public_val: held-out public data on which the tickets are scored.
        test: private test data held by no client (reporting only, never released).
        clients_train, clients_val: one data set per client (same order).
    """

    public: ImageDataset
    public_val: ImageDataset
    test: ImageDataset
    clients_train: tuple[ImageDataset, ...]
    clients_val: tuple[ImageDataset, ...]


def _split(indices: np.ndarray, fraction: float, rng: np.random.Generator, labels: np.ndarray):
    """Stratified split of ``indices``: ``round(fraction * n_class)`` of each class to the
    second part."""
    second = []
    for k in np.unique(labels[indices]):
        members = rng.permutation(indices[labels[indices] == k])
        second.append(members[: round(fraction * members.size)])
    second = np.sort(np.concatenate(second)) if second else np.array([], dtype=np.int64)
    return np.setdiff1d(indices, second), second


def split_fedltp_data(
    dataset: ImageDataset,
    *,
    num_clients: int,
    partition: str = "iid",
    dirichlet_alpha: float = 1.0,
    public_fraction: float = 0.5,
    val_fraction: float = 0.2,
    test_fraction: float = 0.2,
    seed: int = 0,
) -> FedLTPData:
    """Split ``dataset`` into public, public-validation, test and per-client data.

    Stratified and seeded: ``public_fraction`` of each class is public (of which
    ``val_fraction`` scores the tickets), ``test_fraction`` of the private rest is the
    test set, and the remainder is partitioned over ``num_clients`` clients
    (``partition="iid"``: near-equal random parts; ``"dirichlet"``: label skew with
    concentration ``dirichlet_alpha``, every client at least 2 samples), each client's
    part split into training and validation data (``val_fraction``, at least one of each).
    """
    func = "split_fedltp_data"
    num_clients = check_int("num_clients", num_clients, func=func, low=1)
    check_choice("partition", partition, func=func, choices=("iid", "dirichlet"))
    for name, value in (
        ("public_fraction", public_fraction),
        ("val_fraction", val_fraction),
        ("test_fraction", test_fraction),
    ):
        check_real(name, value, func=func, low=0, high=1, low_inclusive=False, high_inclusive=False)
    seed = check_int("seed", seed, func=func, low=0)
    labels = dataset.labels.numpy()
    everything = np.arange(len(dataset))
    private, public = _split(
        everything, public_fraction, np.random.default_rng([seed, _PUBLIC]), labels
    )
    public_train, public_val = _split(
        public, val_fraction, np.random.default_rng([seed, _PUBLIC, 1]), labels
    )
    pool, test = _split(private, test_fraction, np.random.default_rng([seed, _TEST]), labels)
    if pool.size < 2 * num_clients:
        raise ValueError(
            f"The 'num_clients' parameter of {func} must leave every client at least 2 "
            f"private samples ({pool.size} in all). Got {num_clients} instead."
        )
    part_seed = int(np.random.default_rng([seed, _PARTITION]).integers(2**31))
    if partition == "iid":
        parts = partition_iid(pool.size, num_clients, seed=part_seed)
    else:
        parts = partition_dirichlet(
            labels[pool], num_clients, alpha=dirichlet_alpha, seed=part_seed, min_size=2
        )
    rng = np.random.default_rng([seed, _VALIDATION])
    train, val = [], []
    for part in parts:
        members = rng.permutation(pool[part])
        n_val = min(max(1, round(val_fraction * members.size)), members.size - 1)
        val.append(dataset.subset(np.sort(members[:n_val])))
        train.append(dataset.subset(np.sort(members[n_val:])))
    return FedLTPData(
        public=dataset.subset(public_train),
        public_val=dataset.subset(public_val),
        test=dataset.subset(test),
        clients_train=tuple(train),
        clients_val=tuple(val),
    )


def split_for_config(dataset: ImageDataset, config) -> FedLTPData:
    """:func:`split_fedltp_data` with the fields of a :class:`sims.fedltp.FedLTPConfig`
    (``num_clients``, ``partition``, ``dirichlet_alpha``, ``public_fraction``,
    ``val_fraction``, ``seed``)."""
    return split_fedltp_data(
        dataset,
        num_clients=config.num_clients,
        partition=config.partition,
        dirichlet_alpha=config.dirichlet_alpha,
        public_fraction=config.public_fraction,
        val_fraction=config.val_fraction,
        seed=config.seed,
    )
