"""Algorithm 2 of Fed-LTP: the server loop with DP clients, noisy validation and a budget stop.

One round ``t = 1, 2, ...`` (Algorithm 2 lines 3-10, Sec. 4.2-4.4, Sec. 5):

1. Stop rule: the epsilon the round would bring the total to
   (:func:`sims.fedltp.privacy.epsilon_after`, all ``t * tau`` noisy steps and ``t``
   Laplace releases) is computed *before* the round; if it exceeds the budget the loop
   stops and the round is not run, so the released models never exceed the budget
   (``noise_multiplier = 0`` is no privacy, an infinite epsilon: no round runs).
2. K = round(q U) clients drawn uniformly without replacement (line 4).
3. Server-side pruning: fed-one-shot broadcasts the ticket (eq. 11); fed-iterative builds
   K nested masks from the current global weights (eq. 12, :mod:`sims.fedltp.masks`) and
   shuffles them over the selected clients, so their masks differ (eq. 14).
4. Each selected client runs ``tau`` DP-SGD iterations (:mod:`sims.fedltp.dp_local`)
   with learning rate ``lr * lr_decay^(t-1)`` and returns ``Delta_i`` (lines 12-19).
5. Aggregation: every coordinate is moved by the mean ``Delta`` of the clients that kept
   it (line 9 and "averaged over the unpruned parameters in each participated client");
   a coordinate no client kept is unchanged.
6. Validation (eq. 17-18): each selected client counts the aggregated model's correct
   predictions on its validation data and releases the count plus
   ``Laplace(0, lambda_val)`` noise (sensitivity 1); the server sums them into ``S^t`` and
   keeps the model with the largest ``S^t`` (eq. 19).

Steps 2-6 are :func:`run_round`, a function of the server state after round ``t - 1``
(:class:`sims.fedltp.server_state.ServerState`) and of what no round changes
(:class:`RoundInputs`) that returns the state after round ``t`` and the round's record,
and writes nothing. :func:`run_fedltp` is the loop around it: step 1, then each record
goes into a :class:`sims.store.results.ResultStore` (key ``<run>/round=<t>``; test accuracy,
noisy score, epsilon, bytes, densities) after a checkpoint of the new state, so a killed
run resumes at the next round and reproduces the uninterrupted run: every draw of round
``t`` is seeded by ``(seed, t)``. When the loop ends, a stop record says why (``budget``
or ``rounds``) and how many rounds had run.

Bytes: 4 per kept coordinate (float32, biases included) per selected client, down and up.

Ablations (``ablation``, :class:`sims.fedltp.ablation.Ablation`, the paper's Figs. 6-9):
the global model is the dense ``w0`` instead of a ticket; no validation (the last model
is released, and no Laplace release is accounted); every client trains under a ticket it
found on its own data; basic composition instead of Renyi accounting.

Variants (``variant``; the baselines of Sec. 6.1, :mod:`sims.fedltp.baselines`) share this
loop, the DP local training, the Laplace validation, the accounting and the stop rule:
``"fedltp"`` (above); ``"dp-fed"`` (DP-FedAvg: no ticket, the dense ``w0`` of ticket 0,
every client trains and uploads every coordinate); ``"fed-spa"`` (dense training, then each
client uploads a fresh uniformly random subset of its update, ``upload_keep`` of the
prunable weights exactly plus every bias, :func:`sims.fedltp.masks.random_upload_mask`;
the server averages each coordinate over the clients that uploaded it).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn

from pruneleak.bounds.validation import check_choice, check_real
from pruneleak.estimators.device import resolve_device
from pruneleak.sims.core.runtime import fingerprint, seeded
from pruneleak.sims.fedltp.ablation import FULL, Ablation
from pruneleak.sims.fedltp.config import FedLTPConfig
from pruneleak.sims.fedltp.data import FedLTPData
from pruneleak.sims.fedltp.dp_local import DPLocalTrainer
from pruneleak.sims.fedltp.masks import iterative_client_masks, random_upload_mask
from pruneleak.sims.fedltp.privacy import epsilon_after
from pruneleak.sims.fedltp.server_state import ServerCheckpoints, ServerState
from pruneleak.sims.fedltp.tickets import (
    count_correct,
    current_params,
    find_ticket,
    find_tickets,
    load_params,
    select_ticket,
)
from pruneleak.sims.pruning.mask import Mask
from pruneleak.sims.store.results import ResultStore

logger = logging.getLogger(__name__)

_BYTES_PER_VALUE = 4
VARIANTS = ("fedltp", "dp-fed", "fed-spa")


@dataclass
class FedLTPResult:
    """What :func:`run_fedltp` produced.

    Attributes:
        run: the run key (fingerprint of the config and ``name``).
        records: the per-round records, round order (also in the store).
        rounds_run: rounds completed. stopped_by_budget: whether the budget ended the run.
        epsilon: the privacy loss of the rounds run (nats; 0 if none).

    The server state (:attr:`state`, and the properties :attr:`best_round`,
    :attr:`best_params`, :attr:`final_params`, :attr:`ticket_index`,
    :attr:`ticket_scores`, :attr:`ticket_mask` read from it) is the one the run ended
    with; for a run that had finished before the call it is read from the run's last
    checkpoint when first asked for, so that rerunning a finished run reads its records
    only.
    """

    run: str
    records: list[dict]
    rounds_run: int
    stopped_by_budget: bool
    epsilon: float
    _state: ServerState | None = field(default=None, repr=False)
    _load_state: Callable[[], ServerState] | None = field(default=None, repr=False)

    @classmethod
    def of_records(
        cls,
        run: str,
        records: list[dict],
        *,
        stopped_by_budget: bool,
        state: ServerState | None = None,
        load_state: Callable[[], ServerState] | None = None,
    ) -> FedLTPResult:
        """The result of the run ``run`` whose rounds recorded ``records``: its rounds
        and epsilon are theirs (the last round's epsilon covers every round before it)."""
        return cls(
            run=run,
            records=records,
            rounds_run=len(records),
            stopped_by_budget=stopped_by_budget,
            epsilon=records[-1]["epsilon"] if records else 0.0,
            _state=state,
            _load_state=load_state,
        )

    @property
    def state(self) -> ServerState:
        """The server state (see the class docstring); ValueError if its checkpoint is
        missing or damaged."""
        if self._state is None:
            self._state = self._load_state()
        return self._state

    @property
    def best_round(self) -> int:
        """The round of the largest noisy score (0: the ticket itself)."""
        return self.state.best_round

    @property
    def best_params(self) -> dict[str, torch.Tensor]:
        """The kept global weights (eq. 19)."""
        return self.state.best_params

    @property
    def final_params(self) -> dict[str, torch.Tensor]:
        """The last global weights."""
        return self.state.global_params

    @property
    def ticket_index(self) -> int:
        """The ticket drawn by eq. 10 (-1 for a baseline)."""
        return self.state.ticket_index

    @property
    def ticket_scores(self) -> list[int]:
        """Every ticket's score V."""
        return self.state.ticket_scores

    @property
    def ticket_mask(self) -> Mask:
        """The ticket's mask."""
        return self.state.ticket_mask


def noisy_scores(scores, *, lambda_val: float, rng: np.random.Generator) -> np.ndarray:
    """Eq. 17: each score plus independent ``Laplace(0, lambda_val)`` noise (sensitivity 1,
    so each release is ``1 / lambda_val``-DP); mean absolute noise ``lambda_val``."""
    lam = check_real("lambda_val", lambda_val, func="noisy_scores", low=0, low_inclusive=False)
    s = np.asarray(scores, dtype=float)
    return s + rng.laplace(0.0, lam, size=s.shape)


def _client_seed(seed: int, t: int, client: int) -> int:
    return int(np.random.default_rng([seed, t, client]).integers(2**31 - 2))


def _aggregate(global_params, deltas, masks) -> dict[str, torch.Tensor]:
    """Algorithm 2 line 9 over pruned updates: each coordinate moves by the mean of the
    ``deltas`` whose ``masks`` keep it (unchanged where none does)."""
    out = {}
    for name, value in global_params.items():
        total = sum(d[name] for d in deltas)
        count = sum(m.keep[name].to(value.device).to(value.dtype) for m in masks)
        out[name] = value + total / count.clamp(min=1)
    return out


@dataclass(frozen=True, eq=False)
class RoundInputs:
    """What every round of one run reads and no round changes.

    Attributes:
        config: the hyper-parameters. run: the run key, which names the records.
        variant, upload_keep: as :func:`run_fedltp` takes them.
        data: the clients' validation data and the test data are read from there.
        clients_train: each client's training images and labels, on ``device``.
        trainer: the clients' DP-SGD (:class:`sims.fedltp.dp_local.DPLocalTrainer`); its
            network is scratch space, overwritten by each client's training and by the
            evaluation of each aggregated model.
        device: where the rounds compute.
        ablation: the components the run keeps (:mod:`sims.fedltp.ablation`).
        client_tickets: with ``ablation.tickets == "client"``, each client's own ticket
            mask (client order); otherwise empty.
    """

    config: FedLTPConfig
    run: str
    variant: str
    upload_keep: float | None
    data: FedLTPData
    clients_train: list[tuple[torch.Tensor, torch.Tensor]]
    trainer: DPLocalTrainer
    device: torch.device
    ablation: Ablation = FULL
    client_tickets: tuple[Mask, ...] = ()

    @classmethod
    def build(
        cls,
        config: FedLTPConfig,
        data: FedLTPData,
        model: nn.Module,
        *,
        run: str,
        variant: str,
        upload_keep: float | None,
        device: torch.device,
        ablation: Ablation = FULL,
        client_tickets: tuple[Mask, ...] = (),
    ) -> RoundInputs:
        """The inputs of the run ``run``, whose clients train ``model`` (on ``device``)."""
        trainer = DPLocalTrainer(
            model,
            clipping=config.clipping,
            max_grad_norm=config.max_grad_norm,
            noise_multiplier=config.noise_multiplier,
            batch_size=config.batch_size,
            momentum=config.momentum,
            device=device,
        )
        train = [(c.images.to(device), c.labels.to(device)) for c in data.clients_train]
        return cls(
            config,
            run,
            variant,
            upload_keep,
            data,
            train,
            trainer,
            device,
            ablation,
            client_tickets,
        )


def run_round(
    inputs: RoundInputs, state: ServerState, t: int, *, epsilon: float, bytes_before: int
) -> tuple[ServerState, dict]:
    """Round ``t`` of Algorithm 2 (steps 2-6 of the module docstring): the state after it
    and its record.

    ``state`` is the state after round ``t - 1``; it is not modified, nothing is written
    and every draw is seeded by ``(config.seed, t)``, so the same arguments give the same
    state and record, bit for bit, in a fresh run and in a resumed one. The budget is not
    checked here: ``epsilon`` is the privacy loss once the round has run, which the
    caller's stop rule computed; ``bytes_before`` is what the earlier rounds sent.
    """
    config, model = inputs.config, inputs.trainer.base
    rng = np.random.default_rng([config.seed, t])
    drawn = rng.choice(config.num_clients, size=config.clients_per_round, replace=False)
    selected = [int(c) for c in drawn]
    ticket = state.ticket_mask.to(inputs.device)
    start = {n: v.to(inputs.device) for n, v in state.global_params.items()}
    masks = _client_masks(inputs, start, ticket, selected, rng)
    lr = config.lr * config.lr_decay ** (t - 1)
    deltas, uploads = _client_updates(inputs, start, selected, masks, t=t, lr=lr)
    aggregated = _aggregate(start, deltas, uploads)
    load_params(model, aggregated)
    score = _validation_score(inputs, model, selected, rng) if inputs.ablation.validation else None
    new_state = state.after_round(t, aggregated, score)
    bytes_down = _BYTES_PER_VALUE * sum(m.num_kept() for m in masks)
    bytes_up = _BYTES_PER_VALUE * sum(m.num_kept() for m in uploads)
    record = {
        "key": f"{inputs.run}/round={t}",
        "run": inputs.run,
        "round": t,
        "selected": selected,
        "test_accuracy": count_correct(model, inputs.data.test, inputs.device)
        / len(inputs.data.test),
        "validation_score": score,
        "best_round": new_state.best_round,
        "epsilon": epsilon,
        "bytes_up": bytes_up,
        "bytes_down": bytes_down,
        "bytes_cumulative": bytes_before + bytes_down + bytes_up,
        "density_clients": float(np.mean([m.density() for m in masks])),
        "density_global": ticket.density(),
        "density_upload": float(np.mean([m.density() for m in uploads])),
        "variant": inputs.variant,
        "ablation": inputs.ablation.changed(),
    }
    return new_state, record


def _client_masks(
    inputs: RoundInputs,
    global_params: dict[str, torch.Tensor],
    ticket: Mask,
    selected: list[int],
    rng,
) -> list[Mask]:
    """The mask each selected client trains under (server-side pruning, Algorithm 2 lines
    20-41): the ticket for fed-one-shot (eq. 11) and the baselines; for fed-iterative, K
    nested masks pruned further from ``global_params`` (eq. 12), shuffled by ``rng`` over
    the clients so that no two clients' masks are the same (eq. 14); with client-side
    tickets (Fig. 8), each client's own."""
    k = inputs.config.clients_per_round
    if inputs.client_tickets:
        return [inputs.client_tickets[c] for c in selected]
    if inputs.variant != "fedltp" or inputs.config.pruning == "one_shot":
        return [ticket] * k
    nested = iterative_client_masks(
        global_params, ticket, further_prune=inputs.config.further_prune, count=k
    )
    return [nested[j] for j in rng.permutation(k)]


def _client_updates(
    inputs: RoundInputs,
    global_params: dict[str, torch.Tensor],
    selected: list[int],
    masks: list[Mask],
    *,
    t: int,
    lr: float,
) -> tuple[list[dict[str, torch.Tensor]], list[Mask]]:
    """Each selected client's update ``Delta_i`` (``tau`` DP-SGD iterations from its masked
    ``global_params``, Algorithm 2 lines 12-19) and the mask of what it uploads: its own
    mask, or for Fed-SPA a fresh random subset (the update is zero outside it).

    ValueError (:func:`_diverged`) when a client's weights stopped being finite."""
    trainer = inputs.trainer
    deltas, uploads = [], []
    finite = torch.ones((), dtype=torch.bool, device=inputs.device)
    for client, mask in zip(selected, masks, strict=True):
        seed = _client_seed(inputs.config.seed, t, client)
        start = mask.apply(global_params)
        trained = trainer.train(
            global_params,
            mask,
            *inputs.clients_train[client],
            steps=inputs.config.local_steps,
            lr=lr,
            seed=seed,
        )
        delta = {n: trained[n] - start[n] for n in trained}
        upload = mask
        if inputs.variant == "fed-spa":
            upload = random_upload_mask(delta, inputs.upload_keep, seed=seed + 1)
            delta = upload.apply(delta)
        deltas.append(delta)
        uploads.append(upload)
        finite &= trainer.finite
    if not bool(finite):  # one read per round (DPLocalTrainer.train accumulates it)
        raise _diverged(inputs.config, t, lr)
    return deltas, uploads


def _validation_score(inputs: RoundInputs, model: nn.Module, selected: list[int], rng) -> float:
    """``S^t`` of eq. 18: the sum over the selected clients of their counts of ``model``'s
    correct predictions on their validation data, each released with Laplace noise
    (eq. 17, drawn from ``rng``)."""
    counts = [count_correct(model, inputs.data.clients_val[c], inputs.device) for c in selected]
    return float(noisy_scores(counts, lambda_val=inputs.config.lambda_val, rng=rng).sum())


def _diverged(config: FedLTPConfig, t: int, lr: float) -> ValueError:
    """The error of a round whose local training left a non-finite weight, naming what
    sets the size of a step: the learning rate, and the clipping threshold and noise
    multiplier (the noise std is their product)."""
    return ValueError(
        f"Fed-LTP's local training diverged in round {t}: a client's weights are no longer "
        f"finite (float32). A step moves a weight by up to lr * (max_grad_norm + "
        f"noise_multiplier * max_grad_norm * N(0, 1)) / batch_size; lower 'lr' "
        f"({config.lr!r}; {lr!r} in this round), 'max_grad_norm' ({config.max_grad_norm!r}) "
        f"or 'noise_multiplier' ({config.noise_multiplier!r})."
    )


def run_key(
    config: FedLTPConfig,
    *,
    name: str = "fedltp",
    variant: str = "fedltp",
    upload_keep=None,
    ablation: Ablation = FULL,
) -> str:
    """The key of a run in the store: ``name`` and a fingerprint of the config (and, for a
    baseline, of ``variant`` and ``upload_keep``, and of the ablation's changed switches;
    a full Fed-LTP run's key is as before them)."""
    fields = {"name": name, **config.as_dict()}
    if variant != "fedltp":
        fields.update(variant=variant, upload_keep=upload_keep)
    if ablation.changed():
        fields.update(ablation=ablation.changed())
    return f"{name}-{fingerprint(fields)}"


class _RunFiles:
    """What a run with a store writes: its records and stop record in the store, and the
    server state after each round in checkpoints beside it
    (:class:`sims.fedltp.server_state.ServerCheckpoints`)."""

    def __init__(self, store: ResultStore, checkpoints: ServerCheckpoints, run: str):
        self.store = store
        self.checkpoints = checkpoints
        self.run = run

    def recorded(self) -> tuple[list[dict], dict | None]:
        """The run's round records, round order, and its stop record (None: not
        finished)."""
        stored = list(self.store.records())
        rounds = [r for r in stored if r.get("run") == self.run and "round" in r]
        stop = next((r for r in stored if r["key"] == f"{self.run}/stop"), None)
        return sorted(rounds, key=lambda r: r["round"]), stop

    def commit(self, t: int, state: ServerState, record: dict) -> None:
        """Round ``t`` done: its state checkpointed, then its record stored, then the
        previous checkpoint dropped, so that a kill at any point leaves a checkpoint of
        the last recorded round (or of round ``t``, which is then run again)."""
        self.checkpoints.save(t, state)
        self.store.append(record)
        self.checkpoints.drop(t - 1)

    def write_stop(self, *, by_budget: bool, rounds_run: int) -> None:
        """The stop record: why the run ended, and how many rounds it has recorded."""
        reason = "budget" if by_budget else "rounds"
        self.store.append(
            {"key": f"{self.run}/stop", "run": self.run, "reason": reason, "rounds_run": rounds_run}
        )


def run_fedltp(
    config: FedLTPConfig,
    data: FedLTPData,
    model_factory: Callable[[], nn.Module],
    *,
    name: str = "fedltp",
    store: ResultStore | None = None,
    checkpoint_dir: str | os.PathLike | None = None,
    device="auto",
    on_round: Callable[[dict], None] | None = None,
    variant: str = "fedltp",
    upload_keep: float | None = None,
    ablation: Ablation = FULL,
) -> FedLTPResult:
    """Algorithms 1 and 2 of Fed-LTP on ``data`` (module docstring).

    Args:
        config: the hyper-parameters. data: from :func:`sims.fedltp.data.split_fedltp_data`
            with ``config.num_clients`` clients.
        model_factory: builds the network (called under a seed for each ticket, once for
            the clients' trainer); ``name`` names it in the run key.
        store: records go there, and a rerun with the same config and name resumes after
            the last recorded round (needs ``checkpoint_dir``, default
            ``<store file>.ckpt/<run>``). Without a store nothing is written.
        device: ``"auto"``, ``"cpu"``, ``"cuda"``.
        on_round: called with each record once it is stored (progress, tests).
        variant: ``"fedltp"``, ``"dp-fed"`` or ``"fed-spa"`` (module docstring; the
            baselines ignore the ticket fields and ``pruning``).
        upload_keep: Fed-SPA's kept fraction of the prunable weights of each upload, in
            (0, 1] (required for ``"fed-spa"``, refused otherwise).
        ablation: the components of Fed-LTP the run keeps (:mod:`sims.fedltp.ablation`;
            anything but all of them needs ``variant="fedltp"``, and client-side tickets
            fed-one-shot pruning).
    """
    upload_keep = _checked_arguments(config, data, variant, upload_keep, ablation)
    device = resolve_device(device)
    run = run_key(config, name=name, variant=variant, upload_keep=upload_keep, ablation=ablation)
    model = model_factory().to(device)
    files = None
    if store is not None:
        folder = checkpoint_dir or store.path.with_name(store.path.name + ".ckpt")
        shapes = {n: tuple(p.shape) for n, p in model.named_parameters()}
        files = _RunFiles(store, ServerCheckpoints(Path(folder) / run, run=run, shapes=shapes), run)
    records, stop = files.recorded() if files is not None else ([], None)
    last = records[-1]["round"] if records else 0
    if stop is not None:  # finished before: its records say it all, no checkpoint is read
        return FedLTPResult.of_records(
            run,
            records,
            stopped_by_budget=stop.get("reason") == "budget",
            load_state=lambda: files.checkpoints.required(last),
        )
    client_tickets = (
        _client_tickets(config, data, model_factory, device) if ablation.tickets == "client" else ()
    )
    if files is not None and last > 0:
        state = files.checkpoints.required(last)
    else:
        state = _state_before_round_1(
            config, data, model_factory, files, variant, device, ablation, client_tickets
        )
    inputs = RoundInputs.build(
        config,
        data,
        model,
        run=run,
        variant=variant,
        upload_keep=upload_keep,
        device=device,
        ablation=ablation,
        client_tickets=client_tickets,
    )
    state, stopped = _run_rounds(inputs, state, records, files, on_round, first=last + 1)
    if files is not None:
        files.write_stop(by_budget=stopped, rounds_run=len(records))
    return FedLTPResult.of_records(run, records, stopped_by_budget=stopped, state=state)


def _run_rounds(
    inputs: RoundInputs,
    state: ServerState,
    records: list[dict],
    files: _RunFiles | None,
    on_round: Callable[[dict], None] | None,
    *,
    first: int,
) -> tuple[ServerState, bool]:
    """Rounds ``first, ..., config.rounds`` of :func:`run_round` from ``state``, each
    record appended to ``records`` (after the checkpoint and the store, with ``files``);
    stops before the first round that would take epsilon over the budget (step 1 of the
    module docstring). Returns the last state and whether the budget stopped the run."""
    config = inputs.config
    sizes = [len(c) for c in inputs.data.clients_train]
    sampling_rate = min(1.0, config.batch_size / min(sizes))
    for t in range(first, config.rounds + 1):
        epsilon = epsilon_after(config, t, sampling_rate=sampling_rate, ablation=inputs.ablation)
        if epsilon > config.epsilon:
            logger.info(
                "round %d would bring epsilon to %.4g > %.4g: stop", t, epsilon, config.epsilon
            )
            return state, True
        bytes_before = records[-1]["bytes_cumulative"] if records else 0
        state, record = run_round(inputs, state, t, epsilon=epsilon, bytes_before=bytes_before)
        if files is not None:
            files.commit(t, state, record)
        records.append(record)
        if on_round is not None:
            on_round(record)
    return state, False


def _checked_arguments(
    config: FedLTPConfig,
    data: FedLTPData,
    variant: str,
    upload_keep: float | None,
    ablation: Ablation,
) -> float | None:
    """ValueError naming the parameter of :func:`run_fedltp` that is out of its domain;
    otherwise ``upload_keep`` as a float (None unless Fed-SPA)."""
    func = "run_fedltp"
    if not isinstance(config, FedLTPConfig):
        raise ValueError(
            f"The 'config' parameter of {func} must be a FedLTPConfig. "
            f"Got {type(config).__name__} instead."
        )
    if len(data.clients_train) != config.num_clients:
        raise ValueError(
            f"The 'data' parameter of {func} must hold config.num_clients = "
            f"{config.num_clients} clients. Got {len(data.clients_train)} instead."
        )
    check_choice("variant", variant, func=func, choices=VARIANTS)
    if not isinstance(ablation, Ablation):
        raise ValueError(
            f"The 'ablation' parameter of {func} must be an Ablation. "
            f"Got {type(ablation).__name__} instead."
        )
    if ablation.changed() and variant != "fedltp":
        raise ValueError(
            f"The 'ablation' parameter of {func} must be the full Fed-LTP (Ablation()) for "
            f"variant {variant!r}; ablations apply to variant 'fedltp'. Got {ablation!r} instead."
        )
    if ablation.tickets == "client" and config.pruning != "one_shot":
        raise ValueError(
            f"The 'ablation' parameter of {func} with tickets='client' needs "
            f"config.pruning='one_shot' (the nested masks of fed-iterative pruning are the "
            f"server's). Got pruning={config.pruning!r} instead."
        )
    if (variant == "fed-spa") != (upload_keep is not None):
        raise ValueError(
            f"The 'upload_keep' parameter of {func} must be given for variant 'fed-spa' "
            f"and only then. Got {upload_keep!r} with variant {variant!r} instead."
        )
    if upload_keep is None:
        return None
    upload_keep = check_real("upload_keep", upload_keep, func=func, low=0, high=1)
    if upload_keep == 0:
        raise ValueError(f"The 'upload_keep' parameter of {func} must be in (0, 1]. Got 0 instead.")
    return upload_keep


def _client_tickets(
    config: FedLTPConfig,
    data: FedLTPData,
    model_factory: Callable[[], nn.Module],
    device: torch.device,
) -> tuple[Mask, ...]:
    """Fig. 8's client-side tickets: Algorithm 1 (one ticket) on each client's training
    data, scored on its validation data, all from the ``w0`` of ticket 0 (same seed), so
    that the masks index one global model. Deterministic, so a resumed run recomputes
    them rather than reading them from a checkpoint."""
    return tuple(
        find_ticket(
            model_factory,
            train,
            val,
            seed=config.seed * config.num_tickets,
            prune_degree=config.prune_degree,
            iterations=config.ticket_iterations,
            steps=config.ticket_steps,
            lr=config.ticket_lr,
            batch_size=config.ticket_batch_size,
            device=device,
        ).mask.to("cpu")
        for train, val in zip(data.clients_train, data.clients_val, strict=True)
    )


def _union(masks: tuple[Mask, ...]) -> Mask:
    """The mask keeping every coordinate that one of ``masks`` keeps."""
    return Mask({n: torch.stack([m.keep[n] for m in masks]).any(0) for n in masks[0].keep})


def _state_before_round_1(
    config: FedLTPConfig,
    data: FedLTPData,
    model_factory: Callable[[], nn.Module],
    files: _RunFiles | None,
    variant: str,
    device: torch.device,
    ablation: Ablation,
    client_tickets: tuple[Mask, ...],
) -> ServerState:
    """The state before round 1: from the run's checkpoint of round 0 when there is one
    (a run killed in round 1 does not search its tickets again), else built (Algorithm 1
    for Fed-LTP; the dense ``w0`` of ticket 0 for a baseline and for Fig. 6's unpruned
    global model; that ``w0`` under the union of the clients' own tickets for Fig. 8's
    client-side tickets) and checkpointed."""
    state = files.checkpoints.load(0) if files is not None else None
    if state is not None:
        return state
    if variant != "fedltp" or ablation.global_model == "unpruned" or client_tickets:
        with seeded(config.seed * config.num_tickets):  # the w0 of Fed-LTP's ticket 0
            init = current_params(model_factory())
        mask = _union(client_tickets) if client_tickets else Mask.ones(init)
        state = ServerState.initial(mask.apply(init), mask, ticket_index=-1, ticket_scores=[])
    else:
        tickets = find_tickets(
            model_factory,
            data.public,
            data.public_val,
            num_tickets=config.num_tickets,
            seed=config.seed,
            prune_degree=config.prune_degree,
            iterations=config.ticket_iterations,
            steps=config.ticket_steps,
            lr=config.ticket_lr,
            batch_size=config.ticket_batch_size,
            device=device,
        )
        index = select_ticket(tickets, temperature=config.temperature, seed=config.seed)
        ticket = tickets[index]
        scores = [t.score for t in tickets]
        state = ServerState.initial(
            ticket.params, ticket.mask, ticket_index=index, ticket_scores=scores
        )
    if files is not None:
        files.checkpoints.save(0, state)
    return state
