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

Each finished round is one record in a :class:`sims.core.store.ResultStore` (key
``<run>/round=<t>``; test accuracy, noisy score, epsilon, bytes, densities) written
after a checkpoint of the server state, so a killed run resumes at the next round and
reproduces the uninterrupted run: every draw of round ``t`` is seeded by ``(seed, t)``.
Bytes: 4 per kept coordinate (float32, biases included) per selected client, down and up.

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
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
import torch
from torch import nn

from pruneleak.bounds.validation import check_choice, check_real
from pruneleak.estimators.device import resolve_device
from pruneleak.sims.core.runtime import fingerprint, seeded
from pruneleak.sims.core.store import ResultStore
from pruneleak.sims.fedltp.config import FedLTPConfig
from pruneleak.sims.fedltp.data import FedLTPData
from pruneleak.sims.fedltp.dp_local import DPLocalTrainer
from pruneleak.sims.fedltp.masks import iterative_client_masks, random_upload_mask
from pruneleak.sims.fedltp.privacy import epsilon_after
from pruneleak.sims.fedltp.tickets import (
    count_correct,
    current_params,
    find_tickets,
    load_params,
    select_ticket,
)
from pruneleak.sims.pruning.mask import Mask

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

    The server state (properties :attr:`best_round`, :attr:`best_params`,
    :attr:`final_params`, :attr:`ticket_index`, :attr:`ticket_scores`,
    :attr:`ticket_mask`) is the one the run ended with; for a run that had finished
    before the call it is read from the run's last checkpoint when first asked for, so
    that rerunning a finished run reads its records only.
    """

    run: str
    records: list[dict]
    rounds_run: int
    stopped_by_budget: bool
    epsilon: float
    _state: dict | None = field(default=None, repr=False)
    _load_state: Callable[[], dict] | None = field(default=None, repr=False)

    @property
    def state(self) -> dict:
        """The server state (see the class docstring); ValueError if its checkpoint is
        missing or damaged."""
        if self._state is None:
            self._state = self._load_state()
        return self._state

    @property
    def best_round(self) -> int:
        """The round of the largest noisy score (0: the ticket itself)."""
        return self.state["best_round"]

    @property
    def best_params(self) -> dict[str, torch.Tensor]:
        """The kept global weights (eq. 19)."""
        return self.state["best"]

    @property
    def final_params(self) -> dict[str, torch.Tensor]:
        """The last global weights."""
        return self.state["global"]

    @property
    def ticket_index(self) -> int:
        """The ticket drawn by eq. 10 (-1 for a baseline)."""
        return self.state["ticket_index"]

    @property
    def ticket_scores(self) -> list[int]:
        """Every ticket's score V."""
        return self.state["ticket_scores"]

    @property
    def ticket_mask(self) -> Mask:
        """The ticket's mask."""
        return Mask(dict(self.state["ticket_mask"]))


def noisy_scores(scores, *, lambda_val: float, rng: np.random.Generator) -> np.ndarray:
    """Eq. 17: each score plus independent ``Laplace(0, lambda_val)`` noise (sensitivity 1,
    so each release is ``1 / lambda_val``-DP); mean absolute noise ``lambda_val``."""
    lam = check_real("lambda_val", lambda_val, func="noisy_scores", low=0, low_inclusive=False)
    s = np.asarray(scores, dtype=float)
    return s + rng.laplace(0.0, lam, size=s.shape)


def _client_seed(seed: int, t: int, client: int) -> int:
    return int(np.random.default_rng([seed, t, client]).integers(2**31 - 2))


def _aggregate(global_params, deltas, masks) -> dict[str, torch.Tensor]:
    out = {}
    for name, value in global_params.items():
        total = sum(d[name] for d in deltas)
        count = sum(m.keep[name].to(value.device).to(value.dtype) for m in masks)
        out[name] = value + total / count.clamp(min=1)
    return out


#: The entries of a checkpoint: the run and round it belongs to, then the server state.
_STATE_KEYS = frozenset(
    {
        "run",
        "round",
        "global",
        "best",
        "best_score",
        "best_round",
        "ticket_mask",
        "ticket_index",
        "ticket_scores",
    }
)


class _Checkpoints:
    """Server state after round ``t`` as ``<dir>/round=<t>.pt``, written atomically; the
    previous one is removed once the next round's record is in the store.

    A checkpoint holds tensors, numbers, strings, lists and dicts only, so it is read with
    ``torch.load(weights_only=True)``: a file that would build any other object (a pickle
    that runs a command) is refused before anything in it runs. What is read must then be
    a checkpoint of this run (``run``) and round, with a float tensor of the model's shape
    for every weight and a boolean one for every mask flag (``shapes``); anything else (a
    truncated or foreign file, another run's, another round's) is a ValueError naming the
    file.
    """

    def __init__(self, folder: Path, *, run: str, shapes: dict[str, tuple[int, ...]]):
        self.folder = folder
        self.run = run
        self.shapes = shapes
        folder.mkdir(parents=True, exist_ok=True)

    def path(self, t: int) -> Path:
        return self.folder / f"round={t}.pt"

    def save(self, t: int, state: dict) -> None:
        tmp = self.path(t).with_suffix(".tmp")
        torch.save({**state, "run": self.run, "round": t}, tmp)
        os.replace(tmp, self.path(t))

    def load(self, t: int) -> dict | None:
        """The state after round ``t``, or None when no file is there."""
        path = self.path(t)
        if not path.exists():
            return None
        if not path.is_file():  # a folder, or a FIFO or device that open() would block on
            raise self._damaged(path, "it is not a regular file")
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as err:  # truncated, random bytes, a forbidden global: torch
            # raises RuntimeError, UnpicklingError, EOFError... report them all alike
            raise self._damaged(path, f"it cannot be read ({_reason(err)})") from None
        self._check(state, path, t)
        return state

    def _check(self, state, path: Path, t: int) -> None:
        if not isinstance(state, dict) or set(state) != _STATE_KEYS:
            found = sorted(map(str, state)) if isinstance(state, dict) else type(state).__name__
            raise self._damaged(path, f"it holds {found}, not a Fed-LTP server state")
        if state["run"] != self.run:
            raise self._damaged(path, f"it belongs to run {state['run']!r}, not {self.run!r}")
        if state["round"] != t:
            raise self._damaged(path, f"it holds round {state['round']!r}, not round {t}")
        for part, floating in (("global", True), ("best", True), ("ticket_mask", False)):
            self._check_tensors(state[part], path, part, floating=floating)
        best = state["best_round"]
        if not (isinstance(best, int) and 0 <= best <= t):
            raise self._damaged(path, f"its best_round {best!r} is not an integer in [0, {t}]")
        if not isinstance(state["best_score"], float) or math.isnan(state["best_score"]):
            raise self._damaged(path, f"its best_score {state['best_score']!r} is not a number")
        scores = state["ticket_scores"]
        if not isinstance(scores, list) or not all(isinstance(s, int) for s in scores):
            raise self._damaged(path, f"its ticket_scores {scores!r} are not a list of integers")
        if not isinstance(state["ticket_index"], int):
            raise self._damaged(
                path, f"its ticket_index {state['ticket_index']!r} is not an integer"
            )

    def _check_tensors(self, tensors, path: Path, part: str, *, floating: bool) -> None:
        if not isinstance(tensors, dict) or set(tensors) != set(self.shapes):
            names = sorted(tensors) if isinstance(tensors, dict) else type(tensors).__name__
            raise self._damaged(
                path, f"its {part!r} holds {names}, not the model's {sorted(self.shapes)}"
            )
        for name, value in tensors.items():
            kind = "a float" if floating else "a boolean"
            if (
                not isinstance(value, torch.Tensor)
                or value.is_floating_point() != floating
                or (not floating and value.dtype != torch.bool)
                or tuple(value.shape) != self.shapes[name]
            ):
                got = (
                    f"{value.dtype} {tuple(value.shape)}"
                    if isinstance(value, torch.Tensor)
                    else type(value).__name__
                )
                raise self._damaged(
                    path,
                    f"its {part}[{name!r}] is {got}, not {kind} tensor of shape "
                    f"{self.shapes[name]}",
                )
            if floating and not bool(torch.isfinite(value).all()):
                raise self._damaged(path, f"its {part}[{name!r}] holds non-finite weights")

    @staticmethod
    def _damaged(path: Path, why: str) -> ValueError:
        return ValueError(
            f"The Fed-LTP checkpoint {path} is damaged: {why}. Delete the run's records "
            f"and checkpoints to start it over."
        )

    def drop(self, t: int) -> None:
        self.path(t).unlink(missing_ok=True)


def _reason(err: Exception) -> str:
    """Why ``torch.load`` failed, in one line: for the weights-only unpickler, its reason
    (the global it refused) rather than its opening advice to load the file with
    ``weights_only=False``."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()] or [""]
    if lines[0].startswith("Weights only load failed") and len(lines) > 1:
        reason = next((line for line in lines[1:] if not line.startswith("Please file")), "")
        return f"refused by torch.load(weights_only=True): {reason}"
    return f"{type(err).__name__}: {lines[0]}"


def run_key(
    config: FedLTPConfig, *, name: str = "fedltp", variant: str = "fedltp", upload_keep=None
) -> str:
    """The key of a run in the store: ``name`` and a fingerprint of the config (and, for a
    baseline, of ``variant`` and ``upload_keep``; a Fed-LTP run's key is as before them)."""
    fields = {"name": name, **config.as_dict()}
    if variant != "fedltp":
        fields.update(variant=variant, upload_keep=upload_keep)
    return f"{name}-{fingerprint(fields)}"


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
    """
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
    if (variant == "fed-spa") != (upload_keep is not None):
        raise ValueError(
            f"The 'upload_keep' parameter of {func} must be given for variant 'fed-spa' "
            f"and only then. Got {upload_keep!r} with variant {variant!r} instead."
        )
    if upload_keep is not None:
        upload_keep = check_real("upload_keep", upload_keep, func=func, low=0, high=1)
        if upload_keep == 0:
            raise ValueError(
                f"The 'upload_keep' parameter of {func} must be in (0, 1]. Got 0 instead."
            )
    device = resolve_device(device)
    run = run_key(config, name=name, variant=variant, upload_keep=upload_keep)
    model = model_factory().to(device)
    shapes = {n: tuple(p.shape) for n, p in model.named_parameters()}
    checkpoints = None
    if store is not None:
        folder = checkpoint_dir or store.path.with_name(store.path.name + ".ckpt")
        checkpoints = _Checkpoints(Path(folder) / run, run=run, shapes=shapes)
    records = (
        sorted(
            (r for r in store.records() if r.get("run") == run and "round" in r),
            key=lambda r: r["round"],
        )
        if store is not None
        else []
    )
    stop = (
        next((r for r in store.records() if r["key"] == f"{run}/stop"), None)
        if store is not None
        else None
    )
    start = records[-1]["round"] if records else 0
    if stop is not None:  # finished before: its records say it all, no checkpoint is read
        return FedLTPResult(
            run=run,
            records=records,
            rounds_run=len(records),
            stopped_by_budget=stop.get("reason") == "budget",
            epsilon=records[-1]["epsilon"] if records else 0.0,
            _load_state=partial(_required_state, checkpoints, start, func),
        )
    state = checkpoints.load(start) if checkpoints is not None else None
    if state is None and start > 0:
        _required_state(checkpoints, start, func)
    sizes = [len(c) for c in data.clients_train]
    sampling_rate = min(1.0, config.batch_size / min(sizes))
    if state is None and variant != "fedltp":
        with seeded(config.seed * config.num_tickets):  # the w0 of Fed-LTP's ticket 0
            init = {k: v.cpu() for k, v in current_params(model_factory()).items()}
        state = {
            "global": init,
            "best": {k: v.clone() for k, v in init.items()},
            "best_score": -np.inf,
            "best_round": 0,
            "ticket_mask": Mask.ones(init).keep,
            "ticket_index": -1,
            "ticket_scores": [],
        }
        if checkpoints is not None:
            checkpoints.save(0, state)
    if state is None:
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
        state = {
            "global": {k: v.cpu() for k, v in ticket.params.items()},
            "best": {k: v.cpu() for k, v in ticket.params.items()},
            "best_score": -np.inf,
            "best_round": 0,
            "ticket_mask": {k: v.cpu() for k, v in ticket.mask.keep.items()},
            "ticket_index": index,
            "ticket_scores": [t.score for t in tickets],
        }
        if checkpoints is not None:
            checkpoints.save(0, state)
    base = Mask({k: v.to(device) for k, v in state["ticket_mask"].items()})
    global_params = {k: v.to(device) for k, v in state["global"].items()}
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
    k = config.clients_per_round
    total_bytes = records[-1]["bytes_cumulative"] if records else 0
    stopped = False
    t = start
    while t < config.rounds:
        t += 1
        eps = epsilon_after(config, t, sampling_rate=sampling_rate)
        if eps > config.epsilon:
            logger.info("round %d would bring epsilon to %.4g > %.4g: stop", t, eps, config.epsilon)
            stopped, t = True, t - 1
            break
        rng = np.random.default_rng([config.seed, t])
        selected = rng.choice(config.num_clients, size=k, replace=False)
        if variant != "fedltp" or config.pruning == "one_shot":
            masks = [base] * k
        else:
            nested = iterative_client_masks(
                global_params, base, further_prune=config.further_prune, count=k
            )
            masks = [nested[j] for j in rng.permutation(k)]
        lr = config.lr * config.lr_decay ** (t - 1)
        deltas, uploads = [], []
        finite = torch.ones((), dtype=torch.bool, device=device)
        for client, mask in zip(selected, masks, strict=True):
            start_params = mask.apply(global_params)
            new = trainer.train(
                global_params,
                mask,
                *train[client],
                steps=config.local_steps,
                lr=lr,
                seed=_client_seed(config.seed, t, int(client)),
            )
            delta = {n: new[n] - start_params[n] for n in new}
            upload = mask
            if variant == "fed-spa":
                upload = random_upload_mask(
                    delta, upload_keep, seed=_client_seed(config.seed, t, int(client)) + 1
                )
                delta = upload.apply(delta)
            deltas.append(delta)
            uploads.append(upload)
            finite &= trainer.finite
        global_params = _aggregate(global_params, deltas, uploads)
        if not bool(finite):  # one read per round (DPLocalTrainer.train accumulates it)
            raise _diverged(config, t, lr)
        load_params(trainer.base, global_params)
        scores = [count_correct(trainer.base, data.clients_val[c], device) for c in selected]
        score = float(noisy_scores(scores, lambda_val=config.lambda_val, rng=rng).sum())
        if score > state["best_score"]:
            state["best_score"], state["best_round"] = score, t
            state["best"] = {n: v.cpu().clone() for n, v in global_params.items()}
        kept = [m.num_kept() for m in masks]
        sent = [m.num_kept() for m in uploads]
        round_bytes = _BYTES_PER_VALUE * (sum(kept) + sum(sent))
        total_bytes += round_bytes
        record = {
            "key": f"{run}/round={t}",
            "run": run,
            "round": t,
            "selected": [int(c) for c in selected],
            "test_accuracy": count_correct(trainer.base, data.test, device) / len(data.test),
            "validation_score": score,
            "best_round": state["best_round"],
            "epsilon": eps,
            "bytes_up": _BYTES_PER_VALUE * sum(sent),
            "bytes_down": _BYTES_PER_VALUE * sum(kept),
            "bytes_cumulative": total_bytes,
            "density_clients": float(np.mean([m.density() for m in masks])),
            "density_global": base.density(),
            "density_upload": float(np.mean([m.density() for m in uploads])),
            "variant": variant,
        }
        state["global"] = {n: v.cpu().clone() for n, v in global_params.items()}
        if store is not None:
            checkpoints.save(t, state)
            store.append(record)
            checkpoints.drop(t - 1)
        records.append(record)
        if on_round is not None:
            on_round(record)
    if store is not None:
        reason = "budget" if stopped else "rounds"
        store.append({"key": f"{run}/stop", "run": run, "reason": reason, "rounds_run": t})
    state["global"] = {n: v.cpu() for n, v in global_params.items()}
    return FedLTPResult(
        run=run,
        records=records,
        rounds_run=len(records),
        stopped_by_budget=stopped,
        epsilon=records[-1]["epsilon"] if records else 0.0,
        _state={k: v for k, v in state.items() if k not in ("run", "round")},
    )


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


def _required_state(checkpoints: _Checkpoints | None, t: int, func: str) -> dict:
    """The state after round ``t`` from its checkpoint, or ValueError when there is none."""
    state = checkpoints.load(t) if checkpoints is not None else None
    if state is None:
        where = checkpoints.folder if checkpoints is not None else "(no store)"
        raise ValueError(
            f"The 'checkpoint_dir' of {func}, {where}, holds no checkpoint of round {t}; "
            f"cannot resume (delete the run's records to start over)."
        )
    return state
