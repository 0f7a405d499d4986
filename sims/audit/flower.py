"""Audit the client updates of a Flower federation, round by round (``pruneleak[flower]``).

:class:`AuditingStrategy` wraps any ``flwr.server.strategy.Strategy`` (e.g. ``FedAvg``):
every call is delegated to the wrapped strategy, whose results are returned unchanged, and
in ``aggregate_fit`` each client's upload of the round is audited with
:func:`sims.audit.audit` and reported (:meth:`sims.audit.AuditResult.write`).

It lives in :mod:`sims.audit` rather than :mod:`sims.fl` because it is a front end of the
audit (the user's federation in, the audit's report out), not part of this toolkit's own
FL simulation: it depends on :mod:`sims.audit`, nothing depends on it, and ``flwr`` is
imported only here (``import sims`` works without Flower installed).

What is audited, per round ``t`` and client ``c`` (the random variable of the bits)
------------------------------------------------------------------------------------
The server saw ``w_c^t``, the client's returned parameters, after broadcasting ``w^t``
(kept from ``configure_fit``). The audit does not know the client's data; it asks how
much such a release *can* reveal: the secret ``X`` is a uniform ``B``-subset of the
client's ``M`` candidates (the prior: the candidates given to the wrapper), and the
release ``Y`` is the kept coordinates of ``local_steps`` steps of PriPrune eq. (1)
(:func:`sims.fl.client.client_update`) at the client's rate ``lr`` from the round's
broadcast weights ``w^t`` under the mask ``m`` (public), plus Gaussian noise
``N(0, noise_std^2)``. ``exact_bits`` is ``I(X; Y)`` in bits for that one release with
``w^t`` fixed and public: the leakage of one client's batch through one round's upload,
not accumulated over rounds and not a statement about the data the client actually used.

The observed upload enters in three places: the client's name and node id, the mask when
``mask="observed"`` (the coordinates the client sent as exactly 0 are the pruned ones), and
a check of the release model when ``batch_size == 1`` and ``local_steps == 1``: the
distance from the upload to the nearest candidate's modelled release
(:func:`sims.fl.release.release_vectors`); about 0 when the client ran eq. (1) on that
candidate, large when its update is not the one audited.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import torch

from pruneleak.sims.audit.audit import _finite, audit
from pruneleak.sims.audit.config import as_data, check_mask, prepare_model
from pruneleak.sims.core.extras import require
from pruneleak.sims.fl.release import release_vectors
from pruneleak.sims.pruning.mask import Mask
from pruneleak.sims.pruning.schemes import build_scheme

require("flwr", purpose="AuditingStrategy (the audit of a Flower federation)")
from flwr.common import parameters_to_ndarrays  # noqa: E402 (after the check above)
from flwr.server.strategy import Strategy  # noqa: E402

logger = logging.getLogger(__name__)

FUNC = "AuditingStrategy"
#: The JSON-lines summary in ``out_dir``: one record per round per client.
SUMMARY = "audit.jsonl"


def _safe(name: str) -> str:
    """A client name usable as a folder name."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "_"


def load_weights(model: torch.nn.Module, arrays: list[np.ndarray]) -> dict[str, torch.Tensor]:
    """Flower's list of arrays as ``{name: tensor}``: in ``model.state_dict()`` order (the
    usual Flower client's ``get_weights``) when the counts match, otherwise in
    ``named_parameters()`` order. The model's parameters and buffers take these values."""
    state = model.state_dict()
    names = list(state) if len(arrays) == len(state) else [n for n, _ in model.named_parameters()]
    if len(arrays) != len(names):
        raise ValueError(
            f"The parameters given to {FUNC} must be {len(state)} arrays (the model's "
            f"state_dict) or {len(names)} (its parameters). Got {len(arrays)} instead."
        )
    weights = {}
    for name, array in zip(names, arrays, strict=True):
        if tuple(array.shape) != tuple(state[name].shape):
            raise ValueError(
                f"The parameters given to {FUNC} must match the model's shapes: {name!r} is "
                f"{tuple(state[name].shape)}. Got {tuple(array.shape)} instead."
            )
        weights[name] = torch.as_tensor(np.array(array)).to(state[name].dtype)
    model.load_state_dict({**state, **weights})
    return weights


class AuditingStrategy(Strategy):
    """A Flower strategy that audits every client upload (module docstring: what is audited).

    Parameters
    ----------
    strategy : flwr.server.strategy.Strategy
        The strategy that runs the federation (e.g. ``FedAvg``); its results are returned
        unchanged.
    model_factory : callable
        A zero-argument factory of the clients' ``torch.nn.Module``; the round's broadcast
        arrays are loaded into it in ``state_dict`` order (or ``named_parameters`` order).
    candidates : (images, labels), mapping or callable
        The prior's ``M`` candidates (:func:`sims.audit.audit`'s ``images, labels``): one
        pair for every client, a mapping ``{client name: pair}``, or ``name -> pair``.
    out_dir : path
        Reports go to ``out_dir/round=<t>/client=<name>/`` with ``round=<t>/round.md``
        listing the round's clients, and one summary record per round per client to
        ``out_dir/audit.jsonl``.
    mask : Mask, dict, "observed" or None
        The base mask; ``"observed"``: the nonzero pattern of each client's upload; None:
        ``pruning`` at rate ``p`` (seeded by ``seed``), the same mask every round.
    lr, local_steps, batch_size, noise_std :
        The client's rate ``r``, local steps ``tau``, batch ``B`` and the server's noise
        ``s``; a client may report its own ``lr`` and ``local_steps`` in its fit metrics.
    client_key : str
        A fit-metrics key holding the client's name (e.g. its partition id); clients that
        do not report it are named by their node id (``ClientProxy.cid``).
    audit_options : dict, optional
        Further keywords of :func:`sims.audit.audit` (``samples``, ``attack_iterations``,
        ``attack_targets``, ``attacks``, ``device``, ``defense``).
    seed : int
        Seeds the mask (``pruning``) and every audit.
    """

    def __init__(
        self,
        strategy,
        *,
        model_factory: Callable[[], torch.nn.Module],
        candidates,
        out_dir,
        mask=None,
        pruning: str = "random",
        p: float = 0.5,
        lr: float = 0.25,
        local_steps: int = 1,
        batch_size: int = 1,
        noise_std: float = 0.0,
        client_key: str = "client",
        audit_options: Mapping | None = None,
        seed: int = 0,
    ):
        super().__init__()
        if not isinstance(strategy, Strategy):
            raise ValueError(
                f"The 'strategy' parameter of {FUNC} must be a flwr.server.strategy.Strategy. "
                f"Got {type(strategy).__name__} instead."
            )
        if not callable(model_factory):
            raise ValueError(
                f"The 'model_factory' parameter of {FUNC} must be a zero-argument callable "
                f"returning a torch.nn.Module. Got {type(model_factory).__name__} instead."
            )
        if isinstance(mask, str) and mask != "observed":
            raise ValueError(
                f"The 'mask' parameter of {FUNC} must be a Mask, a dict, 'observed' or None. "
                f"Got {mask!r} instead."
            )
        self.strategy = strategy
        self.model_factory = model_factory
        self.candidates = candidates
        self.out_dir = Path(out_dir)
        self.mask, self.pruning, self.p = mask, pruning, p
        self.lr, self.local_steps, self.batch_size = lr, local_steps, batch_size
        self.noise_std, self.client_key, self.seed = noise_std, client_key, seed
        self.audit_options = dict(audit_options or {})
        self._sent: dict[int, dict[str, list[np.ndarray]]] = {}
        #: Every summary record written, in order (also in ``out_dir/audit.jsonl``).
        self.records: list[dict] = []

    def __repr__(self) -> str:
        return f"AuditingStrategy({self.strategy!r})"

    # -- delegation ------------------------------------------------------------------
    def initialize_parameters(self, client_manager):
        return self.strategy.initialize_parameters(client_manager)

    def configure_fit(self, server_round, parameters, client_manager):
        instructions = self.strategy.configure_fit(server_round, parameters, client_manager)
        # what each client was sent this round: the w^t of its release
        self._sent[server_round] = {
            proxy.cid: parameters_to_ndarrays(fit_ins.parameters) for proxy, fit_ins in instructions
        }
        return instructions

    def aggregate_fit(self, server_round, results, failures):
        aggregated = self.strategy.aggregate_fit(server_round, results, failures)
        sent = self._sent.pop(server_round, {})
        rows = []
        for proxy, fit_res in results:
            if proxy.cid not in sent:
                logger.warning("round %d: no broadcast kept for node %s", server_round, proxy.cid)
                continue
            rows.append(self._audit_client(server_round, proxy.cid, sent[proxy.cid], fit_res))
        self._write_round(server_round, rows)
        return aggregated

    def configure_evaluate(self, server_round, parameters, client_manager):
        return self.strategy.configure_evaluate(server_round, parameters, client_manager)

    def aggregate_evaluate(self, server_round, results, failures):
        return self.strategy.aggregate_evaluate(server_round, results, failures)

    def evaluate(self, server_round, parameters):
        return self.strategy.evaluate(server_round, parameters)

    # -- the audit -------------------------------------------------------------------
    def _candidates_of(self, name: str):
        source = self.candidates
        if isinstance(source, Mapping):
            if name not in source:
                raise ValueError(
                    f"The 'candidates' parameter of {FUNC} has no entry for client {name!r}. "
                    f"Got clients {sorted(source)} instead."
                )
            source = source[name]
        elif callable(source):
            source = source(name)
        images, labels = source
        return as_data(images, labels)

    def _mask_of(self, model, params, received, x, y) -> Mask:
        if isinstance(self.mask, Mask | dict):
            return check_mask(self.mask, model)
        if self.mask == "observed":
            return Mask({name: received[name] != 0 for name in params})
        scheme = build_scheme(self.pruning, self.p, seed=self.seed, rounds=1)
        return scheme.initial_mask(model, params, x, y)

    def _audit_client(self, server_round, node_id, sent_arrays, fit_res) -> dict:
        metrics = dict(fit_res.metrics or {})
        name = str(metrics.get(self.client_key, node_id))
        lr = float(metrics.get("lr", self.lr))
        local_steps = int(metrics.get("local_steps", self.local_steps))
        model = self.model_factory()
        load_weights(model, sent_arrays)
        sent_model, _ = prepare_model(model)  # eval-mode copy: the audit's model
        received = load_weights(self.model_factory(), parameters_to_ndarrays(fit_res.parameters))
        params = {n: t.detach() for n, t in sent_model.named_parameters()}
        received = {n: received[n].to(params[n].dtype) for n in params}
        x, y = self._candidates_of(name)
        mask = self._mask_of(sent_model, params, received, x, y)
        result = audit(
            model,
            x,
            y,
            mask=mask,
            lr=lr,
            local_steps=local_steps,
            batch_size=self.batch_size,
            noise_std=self.noise_std,
            seed=self.seed,
            **self.audit_options,
        )
        folder = self.out_dir / f"round={server_round}" / f"client={_safe(name)}"
        result.write(folder)
        r = result.record
        delta = torch.cat([(received[n] - params[n]).reshape(-1) for n in params])
        record = {
            "round": int(server_round),
            "client": name,
            "node_id": str(node_id),
            "exact_bits": r["exact_bits"],
            "exact_ci_bits": list(r["exact_ci_bits"]),
            "exact_method": r["exact_method"],
            "bayes_success": r["bayes_success"],
            "ceiling_bits": r["ceiling_bits"],
            "candidates": len(x),
            "batch_size": int(self.batch_size),
            "lr": lr,
            "local_steps": local_steps,
            "noise_std": float(self.noise_std),
            "p": float(mask.sparsity()),
            "update_norm": float(delta.double().norm()),
            **self._release_check(sent_model, params, mask, received, x, y, lr, local_steps),
            "report": str(folder),
        }
        return _finite(record)

    def _release_check(self, model, params, mask, received, x, y, lr, local_steps) -> dict:
        """Distance from the upload to the nearest candidate's modelled release (``B = 1``,
        one step; module docstring), and that candidate's index; None otherwise."""
        if self.batch_size != 1 or local_steps != 1:
            return {"nearest_candidate": None, "nearest_distance": None}
        rows = release_vectors(model, params, mask, x, y, lr=lr).numpy()
        keep = mask.flatten().cpu()
        seen = torch.cat([received[n].reshape(-1) for n in params]).cpu()[keep]
        distances = np.linalg.norm(rows - seen.double().numpy()[None, :], axis=1)
        nearest = int(np.argmin(distances))
        return {"nearest_candidate": nearest, "nearest_distance": float(distances[nearest])}

    def _write_round(self, server_round: int, rows: list[dict]) -> None:
        folder = self.out_dir / f"round={server_round}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [
            f"# Leakage audit, round {server_round}",
            "",
            "Per client: I(X; Y) of a uniform B-subset X of its candidates through one "
            "release Y at this round's broadcast weights (sims.audit.flower).",
            "",
            "| client | node id | exact bits | interval | method | Bayes success | ceiling "
            "bits | report |",
            "|---|---|---:|---|---|---:|---:|---|",
        ]
        for row in rows:
            low, high = (_fmt(v) for v in row["exact_ci_bits"])
            lines.append(
                f"| {row['client']} | {row['node_id']} | {_fmt(row['exact_bits'])} | "
                f"[{low}, {high}] | {row['exact_method']} | {_fmt(row['bayes_success'])} | "
                f"{_fmt(row['ceiling_bits'])} | client={_safe(row['client'])}/audit.md |"
            )
        (folder / "round.md").write_text("\n".join([*lines, ""]))
        self.out_dir.mkdir(parents=True, exist_ok=True)
        with open(self.out_dir / SUMMARY, "a") as handle:
            for row in rows:
                handle.write(json.dumps(row, allow_nan=False) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        self.records.extend(rows)


def _fmt(value) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.6g}"
