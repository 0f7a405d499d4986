"""Multi-round pruned federated learning: PriPrune's Algorithm 1 with client sampling.

PriPrune (arXiv:2310.19958, Algorithm 1 "Pruning in FL under Privacy Attacks"): the
server initialises ``w^0``; in each round ``t = 1..T`` it broadcasts ``(w^{t-1},
m^{t-1})``, each participating user runs UserUpdate (``E`` local epochs of eq. (1),
:func:`sims.fl.client.local_sgd`) under its mask ``m_i^t`` and returns ``w_hat_i^t``; the
honest-but-curious server may attack a target user's update (lines 7-9); and it
aggregates ``w^t <- (sum_i |D_i| / |D| w_hat_i^t) ⊙ m^t`` (line 11).

What this module adds to the paper's description (each point a reading of it):

* Client sampling: ``clients_per_round`` of the ``N`` clients, uniformly without
  replacement each round (PriPrune: 10 of 193 FEMNIST writers, 100 CIFAR-10 clients).
* Local work: ``algorithm="fedsgd"`` (PriPrune's setting, appendix "Extra
  Implementation details": "Each user will do FedSGD locally") takes ``local_epochs``
  full-batch steps on one batch of ``batch_size`` samples drawn from the client's data
  (Algorithm 1's UserUpdate loop on the batch of eq. (3)); ``"fedavg"`` (McMahan et al.
  2017) makes ``local_epochs`` passes over the client's data in shuffled minibatches.
* Aggregation under the masks: each coordinate is averaged, with weights ``|D_i|``,
  over the sampled clients whose mask keeps it, and is 0 where none does. When every
  client trains under the server's mask this *is* line 11 (the weights ``|D_i| /
  sum_sampled |D_j|`` sum to one on kept coordinates); with per-client masks (Random,
  FedDST) line 11's plain sum would shrink every weight by the fraction of clients that
  pruned it, so we follow FedDST's "average over the clients that keep it". The scheme
  then sets the server mask ``m^t`` from the aggregate and the union of client masks
  (:meth:`sims.pruning.schemes.PruningScheme.server_mask`).
* Server-side pruning at initialisation: ``w^0 <- m^0 ⊙ w^0`` with ``m^0`` from
  :meth:`~sims.pruning.schemes.PruningScheme.initial_mask` on up to ``init_batch_size`` samples
  of client 0 (FedDST's code prunes with its first client's data).
* The attack hook: ``on_target_update(round, client_id, global_params, sent_params,
  mask, batch)`` is called for each target client's update as the server receives it
  (Algorithm 1, line 7): ``global_params`` is the broadcast ``w^{t-1}`` (the previous
  upload of Algorithm 2's ``w_hat^{t-1}`` when that client also took part then, which
  the observer can keep), ``sent_params`` the upload ``w_hat_i^t``, ``mask`` the
  client's ``m_i^t``, and ``batch = (images, labels)`` the data it trained on (FedSGD:
  its batch; FedAvg: all its data). The callback must not modify the tensors.
* A client-side defense (``defense``, :mod:`sims.defenses`; PriPrune Algorithm 3): the
  client starts from the defense's weights (Pseudo-Pruning loads back what it withheld),
  trains through the defense, and uploads only the shared weights (zeros elsewhere). The
  server averages each coordinate over the clients that sent it, as it does under
  per-client base masks (a withheld weight is not sent: it neither counts as a zero nor
  changes the base masks the scheme sees), and keeps the previous global value of a
  coordinate every sampled client withheld; the observer sees the upload as sent.

The test accuracy of the global model is measured before round 1 and every
``eval_every`` rounds (and after the last).
"""

from __future__ import annotations

import copy
import logging
import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import torch
from torch import nn
from torch.func import functional_call

from pruneleak.bounds.progress import progress as show_progress
from pruneleak.bounds.validation import check_choice, check_int
from pruneleak.estimators.device import resolve_device
from pruneleak.sims.core.fields import documented
from pruneleak.sims.core.functional import MAX_LR, MIN_LR, check_lr
from pruneleak.sims.core.memory import TRAINING_COPIES, check_fits
from pruneleak.sims.core.runtime import check_seed
from pruneleak.sims.data.datasets import ImageDataset
from pruneleak.sims.defenses.client import Defense
from pruneleak.sims.fl.client import local_sgd
from pruneleak.sims.models import count_parameters
from pruneleak.sims.pruning.mask import Mask
from pruneleak.sims.pruning.schemes import PruningScheme

logger = logging.getLogger(__name__)

ALGORITHMS = ("fedsgd", "fedavg")

TargetCallback = Callable[
    [int, int, dict[str, torch.Tensor], dict[str, torch.Tensor], Mask, tuple], None
]


#: The most rounds and local epochs of a run: beyond the papers' (PriPrune's FEMNIST runs
#: take up to 20,000 rounds), and a larger value is a typo that would run for weeks. The
#: other counts are bounded by the data (a batch by a client's samples).
MAX_LOOPS = {"rounds": 100_000, "local_epochs": 10_000}


@dataclass(frozen=True)
class FedConfig:
    """Hyper-parameters of the FL loop (defaults: PriPrune's FEMNIST setting, scaled).

    Attributes:
        rounds: global rounds T in [1, 100000] (:data:`MAX_LOOPS`).
        clients_per_round: clients sampled per round, >= 1 (PriPrune: 10).
        local_epochs: E in [1, 10000], local steps on the batch (FedSGD) or passes (FedAvg).
        batch_size: local batch size B >= 1 (PriPrune: 20 FEMNIST, 1 CIFAR-10); FedSGD
            needs every client to hold at least B samples.
        lr: learning rate r of eq. (1), in ``[MIN_LR, MAX_LR]`` (:mod:`sims.core.functional`;
            PriPrune: 0.25). A rate that makes training diverge stops the run with a
            ValueError (:func:`run_federated`).
        algorithm: ``"fedsgd"`` or ``"fedavg"``.
        gradient_at: ``"masked"`` (eq. (1) as read in :mod:`sims.fl`) or ``"dense"``.
        init_batch_size: samples of client 0 the server prunes ``w^0`` with, >= 1.
        eval_every: evaluate the global model every this many rounds, >= 1.
        eval_batch_size: test samples per forward pass, >= 1 (memory only).
        seed: seeds client sampling and batch draws, >= 0.
    """

    rounds: int = documented(20, "global rounds T", low=1, high=MAX_LOOPS["rounds"])
    clients_per_round: int = documented(10, "clients sampled per round", low=1)
    local_epochs: int = documented(
        1,
        "local steps on the batch (fedsgd) or passes over the client's data (fedavg)",
        low=1,
        high=MAX_LOOPS["local_epochs"],
    )
    batch_size: int = documented(20, "local batch size B", low=1, unit="images")
    lr: float = documented(0.25, "client learning rate r of eq. (1)", low=MIN_LR, high=MAX_LR)
    algorithm: str = documented("fedsgd", "federated algorithm", choices=ALGORITHMS)
    gradient_at: str = "masked"
    init_batch_size: int = 200
    eval_every: int = documented(
        1, "evaluate the global model every this many rounds", low=1, unit="rounds"
    )
    eval_batch_size: int = 1000
    seed: int = 0

    def __post_init__(self) -> None:
        func = "FedConfig"
        for name in (
            "rounds",
            "clients_per_round",
            "local_epochs",
            "batch_size",
            "init_batch_size",
            "eval_every",
            "eval_batch_size",
        ):
            check_int(name, getattr(self, name), func=func, low=1, high=MAX_LOOPS.get(name))
        check_lr("lr", self.lr, func=func)
        check_choice("algorithm", self.algorithm, func=func, choices=ALGORITHMS)
        check_choice("gradient_at", self.gradient_at, func=func, choices=("masked", "dense"))
        check_seed(self.seed, func=func)


@dataclass(frozen=True)
class ServerState:
    """What the server carries from one round to the next: the round ``round`` it has
    completed (0 after initialisation), the global weights ``params`` (``w^t``) and the
    server mask ``mask`` (``m^t``). A round step returns a new state; it does not
    modify the one it was given, which the observer may keep."""

    round: int
    params: dict[str, torch.Tensor]
    mask: Mask


class Evaluation(NamedTuple):
    """The global model after a round: its test ``accuracy`` in [0, 1], its mean test
    cross-entropy ``loss`` (nats) and its server mask's ``density``."""

    accuracy: float
    loss: float
    density: float


class RoundRecord(NamedTuple):
    """What one round adds to :class:`FedHistory`: its number, whether it changed the
    server mask, and its :class:`Evaluation` when it is evaluated (None otherwise)."""

    round: int
    mask_changed: bool
    evaluation: Evaluation | None


@dataclass
class FedHistory:
    """What :func:`run_federated` measured.

    Attributes:
        rounds: the evaluated rounds (0 = before training).
        accuracy: test accuracy of the global model at those rounds, in [0, 1].
        loss: mean test cross-entropy (nats) at those rounds.
        density: kept fraction of prunable weights of the server mask at those rounds.
        mask_changes: rounds after which the server mask differed from the round before.
        params: final global parameters ``w^T``; ``mask``: final server mask ``m^T``.
    """

    rounds: list[int] = field(default_factory=list)
    accuracy: list[float] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)
    density: list[float] = field(default_factory=list)
    mask_changes: list[int] = field(default_factory=list)
    params: dict[str, torch.Tensor] = field(default_factory=dict)
    mask: Mask | None = None

    def add(self, record: RoundRecord) -> None:
        """Append one round's record (round 0: the evaluation before training)."""
        if record.mask_changed:
            self.mask_changes.append(record.round)
        if record.evaluation is not None:
            self.rounds.append(record.round)
            self.accuracy.append(record.evaluation.accuracy)
            self.loss.append(record.evaluation.loss)
            self.density.append(record.evaluation.density)


def evaluate(
    model: Callable[[torch.Tensor], torch.Tensor],
    params: dict[str, torch.Tensor] | None,
    images: torch.Tensor,
    labels: torch.Tensor,
    *,
    batch_size: int = 1000,
) -> tuple[float, float]:
    """``(accuracy, mean cross-entropy in nats)`` of ``model`` on the data, in chunks of
    ``batch_size`` rows (one device synchronisation at the end).

    ``model`` is evaluated at ``params`` (``torch.func.functional_call``: the FL loop keeps
    the global weights apart from the module) or, with ``params=None``, as it is: then any
    callable mapping a batch to logits ``(N, classes)`` will do, such as a network's head
    on noisy representations. Accuracy is the fraction of rows whose arg-max logit equals
    the label; the data are already on the model's device.
    """
    func = "evaluate"
    batch_size = check_int("batch_size", batch_size, func=func, low=1)
    if len(images) != len(labels) or len(labels) == 0:
        raise ValueError(
            f"The 'labels' parameter of {func} must hold one label per image (at least one). "
            f"Got {len(labels)} labels for {len(images)} images instead."
        )

    def logits_of(x: torch.Tensor) -> torch.Tensor:
        return model(x) if params is None else functional_call(model, params, (x,))

    correct = torch.zeros((), dtype=torch.int64, device=labels.device)
    total_loss = torch.zeros((), dtype=torch.float64, device=labels.device)
    with torch.no_grad():
        for x, y in zip(images.split(batch_size), labels.split(batch_size), strict=True):
            logits = logits_of(x)
            correct += (logits.argmax(dim=1) == y).sum()
            total_loss += nn.functional.cross_entropy(logits, y, reduction="sum").double()
    n = labels.shape[0]
    return int(correct) / n, float(total_loss) / n


def _check_clients(clients: Sequence, n: int) -> list[np.ndarray]:
    func = "run_federated"
    if len(clients) == 0:
        raise ValueError(f"The 'clients' parameter of {func} must name at least one client.")
    out = []
    for i, part in enumerate(clients):
        part = np.asarray(part)
        if part.ndim != 1 or part.size == 0 or not np.issubdtype(part.dtype, np.integer):
            raise ValueError(
                f"The 'clients' parameter of {func} must hold non-empty 1-D integer index "
                f"arrays. Got shape {part.shape} and dtype {part.dtype} for client {i} instead."
            )
        if part.min() < 0 or part.max() >= n:
            raise ValueError(
                f"The 'clients' parameter of {func} must index [0, {n - 1}]. Got range "
                f"[{part.min()}, {part.max()}] for client {i} instead."
            )
        out.append(part.astype(np.int64))
    return out


class ClientUpload(NamedTuple):
    """One client's round as the server receives it: the upload ``sent`` (``w_hat_i^t``),
    its base mask ``mask`` (``m_i^t``), the coordinates it ``shared`` (``mask`` less a
    defense's withheld ones), the ``batch = (images, labels)`` it trained on, and
    ``loss_sum``, the sum of its local steps' training losses (a 0-d tensor on the
    device, read once per round by the divergence check)."""

    sent: dict[str, torch.Tensor]
    mask: Mask
    shared: Mask
    batch: tuple[torch.Tensor, torch.Tensor]
    loss_sum: torch.Tensor


def _diverged(t: int, what: str, lr: float) -> ValueError:
    """The error that stops a run whose training diverged in round ``t``."""
    return ValueError(
        f"Training diverged in round {t} of run_federated: {what}. The 'lr' parameter of "
        f"FedConfig is too large for this model and data; got lr={lr!r}."
    )


def _check_round(t: int, loss_sum: torch.Tensor, params: dict, lr: float) -> None:
    """Raise :func:`_diverged` when round ``t``'s training losses (their sum over the
    clients' local steps) or the new global weights are not finite: one host
    synchronisation per round."""
    finite = torch.stack([torch.isfinite(w).all() for w in params.values()]).all()
    loss, weights_finite = float(loss_sum), bool(finite)
    if not math.isfinite(loss):
        raise _diverged(t, f"the clients' training loss is {loss}", lr)
    if not weights_finite:
        raise _diverged(t, "the global weights are no longer finite", lr)


def _mask_changed(before: Mask, after: Mask) -> bool:
    """Whether the server mask differs from the previous round's (compared on the device)."""
    return any(not torch.equal(after.keep[n], before.keep[n]) for n in after.keep)


class _Simulation:
    """What one run holds fixed, and the random streams it draws from.

    The model copy, the data on the device, the scheme, the defense, the observer and
    the configuration do not change between rounds; the server's weights and mask do and
    live in :class:`ServerState`. ``rng`` samples the clients of each round and
    ``generator`` draws the initial pruning batch and the clients' batches, in the order
    of the rounds; the scheme and the defense keep their own state (their APIs).
    """

    def __init__(
        self,
        model: nn.Module,
        scheme: PruningScheme,
        train: ImageDataset,
        test: ImageDataset,
        clients: list[np.ndarray],
        config: FedConfig,
        device: torch.device,
        *,
        defense: Defense | None,
        on_target_update: TargetCallback | None,
        targets: Collection[int] | None,
    ):
        self.model = copy.deepcopy(model).to(device)
        self.scheme, self.config, self.defense = scheme, config, defense
        self.on_target_update, self.targets = on_target_update, targets
        self.images = train.images.to(device)
        self.labels = train.labels.to(device)
        self.test_images, self.test_labels = test.images.to(device), test.labels.to(device)
        self.clients = [torch.as_tensor(c, device=device) for c in clients]
        self.sizes = [len(c) for c in clients]
        self.rng = np.random.default_rng(config.seed)
        self.generator = torch.Generator().manual_seed(config.seed)

    def initial_state(self) -> ServerState:
        """``w^0 <- m^0 ⊙ w^0``, pruned on up to ``init_batch_size`` samples of client 0."""
        params = {n: p.detach().clone() for n, p in self.model.named_parameters()}
        first = self.clients[0]
        take = torch.randperm(len(first), generator=self.generator)[: self.config.init_batch_size]
        init = first[take.to(first.device)]
        mask = self.scheme.initial_mask(self.model, params, self.images[init], self.labels[init])
        return ServerState(round=0, params=mask.apply(params), mask=mask)

    def evaluate(self, state: ServerState) -> Evaluation:
        """The global model's test accuracy and loss after ``state.round``; a test loss that
        is not finite stops the run (:func:`_diverged`)."""
        accuracy, loss = evaluate(
            self.model,
            state.params,
            self.test_images,
            self.test_labels,
            batch_size=self.config.eval_batch_size,
        )
        if not math.isfinite(loss):
            raise _diverged(state.round, f"the test loss is {loss}", self.config.lr)
        logger.info("round %d: accuracy %.4f, loss %.4f", state.round, accuracy, loss)
        return Evaluation(accuracy, loss, state.mask.density())

    def batches(self, index: torch.Tensor) -> tuple[list[tuple], torch.Tensor, int]:
        """The client's local batches, the indices it trained on, and samples processed."""
        c = self.config
        if c.algorithm == "fedsgd":
            pick = torch.randperm(len(index), generator=self.generator)[: c.batch_size]
            used = index[pick.to(index.device)]
            batch = (self.images[used], self.labels[used])
            return [batch] * c.local_epochs, used, len(used) * c.local_epochs
        batches = []
        for _ in range(c.local_epochs):
            order = index[torch.randperm(len(index), generator=self.generator).to(index.device)]
            batches += [(self.images[b], self.labels[b]) for b in order.split(c.batch_size)]
        return batches, index, len(index) * c.local_epochs

    def client_round(self, state: ServerState, i: int) -> ClientUpload:
        """Client ``i``'s round ``t = state.round + 1`` from the broadcast ``state``: its
        local training under its mask, through the defense if any (module docstring)."""
        scheme, c, t = self.scheme, self.config, state.round + 1
        mask = scheme.client_mask(t, i, state.mask)
        batches, used, processed = self.batches(self.clients[i])
        gradient_sum: dict[str, torch.Tensor] = {}
        losses: list[torch.Tensor] = []

        def accumulate(g):
            for name, value in g.items():
                gradient_sum[name] = gradient_sum[name] + value if name in gradient_sum else value

        training = {
            "lr": c.lr,
            "gradient_at": c.gradient_at,
            "on_gradient": accumulate if scheme.needs_gradients else None,
            "on_loss": losses.append,
        }
        if self.defense is None:
            sent = local_sgd(self.model, state.params, mask, batches, **training)
        else:
            start = self.defense.start(i, state.params)
            sent = self.defense.local_update(t, i, self.model, start, mask, batches, **training)
        sent, mask = scheme.readjust_client(t, i, self.model, sent, mask, *batches[-1])
        shared = mask
        if self.defense is not None:
            sent, shared = self.defense.upload(t, i, start, sent, mask)
        if scheme.needs_gradients:
            scheme.observe_client(t, i, gradient_sum, processed)
        batch = (self.images[used], self.labels[used])
        return ClientUpload(sent, mask, shared, batch, torch.stack(losses).sum())

    def aggregate(
        self, previous: dict[str, torch.Tensor], uploads: list[tuple[float, ClientUpload]]
    ) -> tuple[dict, Mask]:
        """Per-coordinate weighted mean over the clients that sent it, and the union of the
        base masks, from ``(weight, upload)`` pairs. A coordinate some base mask keeps but
        no client sent (every one withheld it) keeps its ``previous`` global value; one no
        base mask keeps is 0."""
        numerator, denominator, union = {}, {}, {}
        for weight, upload in uploads:
            for name, value in upload.sent.items():
                share = weight * upload.shared.keep[name].to(value.device)
                keep = upload.mask.keep[name].to(value.device)
                numerator[name] = numerator.get(name, 0) + share * value
                denominator[name] = denominator.get(name, 0) + share
                union[name] = union[name] | keep if name in union else keep
        mean = {
            n: torch.where(
                denominator[n] > 0,
                numerator[n] / denominator[n],
                torch.where(union[n], previous[n], 0.0),
            )
            for n in numerator
        }
        return mean, Mask(union)

    def round_step(self, state: ServerState) -> tuple[ServerState, RoundRecord]:
        """Round ``t = state.round + 1`` of Algorithm 1: sample the clients, run their
        rounds (showing the targets' uploads to the observer as they arrive), aggregate,
        set the server mask, check for divergence and evaluate when due. Returns the new
        state and the round's record; ``state`` itself is left as it was."""
        c, t = self.config, state.round + 1
        sampled = np.sort(self.rng.choice(len(self.clients), c.clients_per_round, replace=False))
        total = sum(self.sizes[i] for i in sampled)
        uploads = []
        for i in sampled.tolist():
            upload = self.client_round(state, i)
            if self.on_target_update is not None and (self.targets is None or i in self.targets):
                self.on_target_update(t, i, state.params, upload.sent, upload.mask, upload.batch)
            uploads.append((self.sizes[i] / total, upload))
        mean, union = self.aggregate(state.params, uploads)
        mask = self.scheme.server_mask(t, mean, union)
        new = ServerState(round=t, params=mask.apply(mean), mask=mask)
        _check_round(t, torch.stack([u.loss_sum for _, u in uploads]).sum(), new.params, c.lr)
        evaluation = self.evaluate(new) if t % c.eval_every == 0 or t == c.rounds else None
        return new, RoundRecord(t, _mask_changed(state.mask, mask), evaluation)


def _checked_inputs(model, scheme, train, clients, test, config, device, defense):
    """``(clients, device)``: the clients' index arrays and the resolved device, after
    checking :func:`run_federated`'s arguments (its Raises section)."""
    func = "run_federated"
    clients = _check_clients(clients, len(train))
    check_int("config.clients_per_round", config.clients_per_round, func=func, high=len(clients))
    if not isinstance(scheme, PruningScheme):
        raise ValueError(
            f"The 'scheme' parameter of {func} must be a PruningScheme. "
            f"Got {type(scheme).__name__} instead."
        )
    if train.image_shape != test.image_shape or train.num_classes != test.num_classes:
        raise ValueError(
            f"The 'test' parameter of {func} must match the training images and classes. "
            f"Got {test.image_shape}/{test.num_classes} for {train.image_shape}/"
            f"{train.num_classes} instead."
        )
    if config.algorithm == "fedsgd":
        sizes = [len(part) for part in clients]
        smallest = int(np.argmin(sizes))
        if config.batch_size > sizes[smallest]:
            raise ValueError(
                f"The 'config.batch_size' parameter of {func} must be at most the smallest "
                f"client's number of samples with FedSGD (one batch of B distinct samples "
                f"per step): client {smallest} holds {sizes[smallest]}. "
                f"Got {config.batch_size} instead."
            )
    device = resolve_device(device)
    check_fits(
        f"The 'model' parameter of {func} ({type(model).__name__})",
        count_parameters(model),
        unit="parameters",
        bytes_each=max((p.element_size() for p in model.parameters()), default=0),
        copies=TRAINING_COPIES,
        device=device,
    )
    if defense is not None and not isinstance(defense, Defense):
        raise ValueError(
            f"The 'defense' parameter of {func} must be a sims.defenses.Defense or None. "
            f"Got {type(defense).__name__} instead."
        )
    return clients, device


def run_federated(
    model: nn.Module,
    scheme: PruningScheme,
    train: ImageDataset,
    clients: Sequence,
    test: ImageDataset,
    config: FedConfig,
    *,
    device: str | torch.device = "auto",
    on_target_update: TargetCallback | None = None,
    targets: Collection[int] | None = None,
    progress: bool | None = None,
    defense: Defense | None = None,
) -> FedHistory:
    """Run ``config.rounds`` rounds of pruned FL (see the module docstring).

    Args:
        model: the architecture; its parameters are ``w^0`` (a copy moves to ``device``;
            the model itself is never modified).
        scheme: a fresh base pruning scheme (:mod:`sims.pruning.schemes`); it keeps state.
        train: the training data; ``clients[i]`` are the indices of client ``i``'s data.
        clients: one non-empty index array per client (``sims.data.partition_*``).
        test: held-out data for the accuracy of the global model.
        config: :class:`FedConfig`.
        device: ``"auto"``, ``"cpu"``, ``"cuda"`` ...
        on_target_update: the honest-but-curious server's observer (module docstring).
        targets: client ids whose updates the observer sees (None: every client).
        progress: False shows nothing; True or None a bar on a terminal, else a line
            per round on stderr (:func:`bounds.progress.progress`).
        defense: a fresh client-side defense applied after the base scheme
            (:mod:`sims.defenses`; it keeps the clients' state and its per-round
            records); None: clients upload what the base scheme leaves.

    Returns:
        :class:`FedHistory` with the per-round accuracy and the final model and mask.

    Raises:
        ValueError: before anything runs, on invalid arguments (FedSGD with a client
            holding fewer than ``config.batch_size`` samples; a model whose parameters
            cannot fit :data:`sims.core.memory.TRAINING_COPIES` times in ``device``'s
            memory); and as soon as training diverges (``lr`` too large): after a round
            whose clients' training loss or new global weights are not finite (checked
            once per round) or at an evaluation whose test loss is not finite.
    """
    clients, device = _checked_inputs(model, scheme, train, clients, test, config, device, defense)
    sim = _Simulation(
        model,
        scheme,
        train,
        test,
        clients,
        config,
        device,
        defense=defense,
        on_target_update=on_target_update,
        targets=targets,
    )
    state = sim.initial_state()
    history = FedHistory()
    history.add(RoundRecord(0, mask_changed=False, evaluation=sim.evaluate(state)))
    with show_progress(
        range(config.rounds), desc=f"FL {scheme.name}", unit="round", enabled=progress
    ) as bar:
        for _ in bar:
            state, record = sim.round_step(state)
            history.add(record)
            if record.evaluation is not None:
                bar.set_postfix(accuracy=f"{record.evaluation.accuracy:.3f}")
    history.params, history.mask = state.params, state.mask
    return history
