"""Splits of a data set across federated-learning clients.

The usual FL set-ups: the natural one (FEMNIST's writers, :func:`partition_by_client`),
IID (a seeded random permutation cut into near-equal parts) and Dirichlet label skew
(Hsu, Qi and Brown 2019, "Measuring the effects of non-identical data distribution for
federated visual classification", arXiv:1909.06335), where each class is spread over
the clients by proportions drawn from ``Dirichlet(alpha, ..., alpha)``: small ``alpha``
gives each client few classes, large ``alpha`` approaches IID. :func:`split_clients`
picks one of them by name for the studies.
"""

from __future__ import annotations

import numpy as np

from pruneleak.bounds.validation import check_choice, check_int, check_real

# Dirichlet partitions redraw until every client holds at least ``min_size`` samples;
# with min_size * num_clients <= N and a moderate alpha a few draws suffice, while a tiny
# alpha with num_clients near N may never succeed (then ValueError after this many).
_MAX_DIRICHLET_DRAWS = 1000
#: The splits :func:`split_clients` knows.
PARTITIONS = ("iid", "dirichlet", "natural")


def partition_iid(num_samples: int, num_clients: int, *, seed: int) -> list[np.ndarray]:
    """Split ``range(num_samples)`` into ``num_clients`` random parts of near-equal size.

    Returns a list of sorted int64 index arrays; part sizes differ by at most one.
    """
    func = "partition_iid"
    num_samples = check_int("num_samples", num_samples, func=func, low=1)
    num_clients = check_int("num_clients", num_clients, func=func, low=1, high=num_samples)
    rng = np.random.default_rng(check_int("seed", seed, func=func, low=0))
    parts = np.array_split(rng.permutation(num_samples), num_clients)
    return [np.sort(part).astype(np.int64) for part in parts]


def partition_dirichlet(
    labels, num_clients: int, *, alpha: float, seed: int, min_size: int = 1
) -> list[np.ndarray]:
    """Dirichlet label-skew partition (Hsu et al. 2019, arXiv:1909.06335).

    For each class, proportions ``q ~ Dirichlet(alpha * 1_K)`` over the ``K = num_clients``
    clients split that class's (shuffled) samples. As in the widely used reference
    implementation (Wang et al. 2020, FedMA), a client that already holds ``N / K``
    samples gets no more of the next classes, which keeps sizes from running away. The
    whole draw is repeated until every client holds at least ``min_size`` samples
    (at most 1000 draws, then ValueError: the parameters allow no such split in
    practice).

    Args:
        labels: 1-D integer array-like of length N.
        num_clients: number of clients K, ``1 <= K`` and ``K * min_size <= N``.
        alpha: concentration, > 0; small means skewed, large means close to IID.
        seed: seed of the numpy generator.
        min_size: smallest allowed client size, ``1 <= min_size <= N``.

    Returns:
        List of K sorted int64 index arrays that together cover ``range(N)`` exactly once.
    """
    func = "partition_dirichlet"
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.size == 0 or not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(
            f"The 'labels' parameter of {func} must be a non-empty 1-D integer array. "
            f"Got shape {labels.shape} and dtype {labels.dtype} instead."
        )
    n = labels.size
    min_size = check_int("min_size", min_size, func=func, low=1, high=n)
    num_clients = check_int("num_clients", num_clients, func=func, low=1, high=n // min_size)
    alpha = check_real("alpha", alpha, func=func, low=0, low_inclusive=False)
    rng = np.random.default_rng(check_int("seed", seed, func=func, low=0))
    classes = np.unique(labels)
    for _ in range(_MAX_DIRICHLET_DRAWS):
        parts: list[list[np.ndarray]] = [[] for _ in range(num_clients)]
        sizes = np.zeros(num_clients, dtype=np.int64)
        for k in classes:
            members = rng.permutation(np.flatnonzero(labels == k))
            q = rng.dirichlet(np.full(num_clients, alpha))
            eligible = sizes < n / num_clients
            q = q * eligible
            if q.sum() == 0:  # a tiny alpha can leave all eligible mass in underflow
                q = eligible.astype(float)
            q = q / q.sum()
            cuts = (np.cumsum(q) * members.size).astype(np.int64)[:-1]
            for client, chunk in enumerate(np.split(members, cuts)):
                parts[client].append(chunk)
                sizes[client] += chunk.size
        if sizes.min() >= min_size:
            return [np.sort(np.concatenate(p)).astype(np.int64) for p in parts]
    raise ValueError(
        f"The 'alpha' parameter of {func} gives no partition with every one of "
        f"{num_clients} clients holding >= {min_size} of the {n} samples in "
        f"{_MAX_DIRICHLET_DRAWS} draws; raise alpha or lower num_clients or min_size. "
        f"Got {alpha} instead."
    )


def partition_by_client(client_ids) -> list[np.ndarray]:
    """The natural partition: one sorted index array per client id ``0 .. K-1``
    (FEMNIST's writers). Every id in that range must occur."""
    ids = np.asarray(client_ids)
    if ids.ndim != 1 or ids.size == 0 or not np.issubdtype(ids.dtype, np.integer) or ids.min() < 0:
        raise ValueError(
            "The 'client_ids' parameter of partition_by_client must be a non-empty 1-D array "
            f"of non-negative integers. Got shape {ids.shape} and dtype {ids.dtype} instead."
        )
    if ids.max() >= ids.size:
        raise ValueError(
            "The 'client_ids' parameter of partition_by_client must use every id in 0..K-1, "
            f"so no id can reach the number of samples {ids.size}. Got id {int(ids.max())} "
            "instead."
        )
    counts = np.bincount(ids)
    if (counts == 0).any():
        missing = int(np.flatnonzero(counts == 0)[0])
        raise ValueError(
            "The 'client_ids' parameter of partition_by_client must use every id in "
            f"0..{counts.size - 1}. Got no sample for id {missing} instead."
        )
    order = np.argsort(ids, kind="stable")
    return [part.astype(np.int64) for part in np.split(order, np.cumsum(counts)[:-1])]


def split_clients(
    data, partition: str, *, num_clients: int, seed: int, alpha: float = 0.5, func: str
) -> list[np.ndarray]:
    """The client split ``partition`` of the :class:`sims.data.ImageDataset` ``data``.

    ``"iid"``: :func:`partition_iid` into ``num_clients`` parts; ``"dirichlet"``:
    :func:`partition_dirichlet` of the labels with ``alpha``; ``"natural"``:
    :func:`partition_by_client` of the data set's own writers (FEMNIST), one client per
    writer, ``num_clients`` unused. ``func`` names the caller in error messages (a data
    set without writers asked for ``"natural"``).
    """
    check_choice("partition", partition, func=func, choices=PARTITIONS)
    if partition == "natural":
        if data.client_ids is None:
            raise ValueError(
                f"The 'partition' parameter of {func} is 'natural' but the data set "
                f"{data.name!r} has no client ids (only femnist has). Use 'iid' or "
                "'dirichlet'."
            )
        return partition_by_client(data.client_ids.numpy())
    if partition == "dirichlet":
        return partition_dirichlet(data.labels.numpy(), num_clients, alpha=alpha, seed=seed)
    return partition_iid(len(data), num_clients, seed=seed)
