"""The Fed-LTP server's state between rounds, and its checkpoints on disk.

:class:`ServerState` is everything Algorithm 2 carries from one round to the next (the
global model, the best model of eq. 19 with its score and round, the ticket); a round
returns a new one and never modifies the old (:meth:`ServerState.after_round`).
:class:`ServerCheckpoints` writes it after each round so that a killed run resumes where
it stopped (:func:`sims.fedltp.training.run_fedltp`), and refuses any file that is not a
checkpoint of this run and round before using what is in it.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from pruneleak.sims.pruning.mask import Mask


@dataclass(frozen=True, eq=False)
class ServerState:
    """The server's state after round ``t`` of Algorithm 2 (``t = 0``: before round 1).

    Tensors live on the CPU and are never modified in place: a round builds a new state.

    Attributes:
        global_params: the global weights theta^t after the round's aggregation
            (Algorithm 2 line 9; the ticket's weights, eq. 11, before round 1).
        best_params: the weights of the round with the largest noisy validation score so
            far, the model Fed-LTP releases (eq. 19); the ticket's before round 1.
        best_score: that round's score S^t (eq. 18); ``-inf`` before round 1, so round 1
            is always kept.
        best_round: that round (0: no round yet, the ticket itself).
        ticket_mask: the ticket's mask: what fed-one-shot broadcasts (eq. 11) and what
            fed-iterative prunes further (eq. 12); all ones for a baseline.
        ticket_index: the ticket drawn by eq. 10 (-1 for a baseline: no ticket).
        ticket_scores: every ticket's score V (Algorithm 1; empty for a baseline).
    """

    global_params: dict[str, torch.Tensor]
    best_params: dict[str, torch.Tensor]
    best_score: float
    best_round: int
    ticket_mask: Mask
    ticket_index: int
    ticket_scores: list[int]

    @classmethod
    def initial(
        cls,
        params: dict[str, torch.Tensor],
        ticket_mask: Mask,
        *,
        ticket_index: int,
        ticket_scores: list[int],
    ) -> ServerState:
        """The state before round 1: ``params`` (on the CPU) are the global model and,
        with no score yet, the best one."""
        params = {n: v.cpu() for n, v in params.items()}
        return cls(
            global_params=params,
            best_params={n: v.clone() for n, v in params.items()},
            best_score=-math.inf,
            best_round=0,
            ticket_mask=ticket_mask.to("cpu"),
            ticket_index=ticket_index,
            ticket_scores=ticket_scores,
        )

    def after_round(
        self, t: int, params: dict[str, torch.Tensor], score: float | None
    ) -> ServerState:
        """The state after round ``t``, whose aggregated weights are ``params`` and noisy
        validation score ``score``: ``params`` become the global model, and the best one
        too when ``score`` beats every earlier round's (eq. 19; a tie keeps the earlier).
        ``score=None`` (no validation, Fig. 7's ablation): the last model is the released
        one, and ``best_score`` stays ``-inf``."""
        global_params = {n: v.cpu().clone() for n, v in params.items()}
        if score is not None and score <= self.best_score:
            return replace(self, global_params=global_params)
        return replace(
            self,
            global_params=global_params,
            best_params={n: v.cpu().clone() for n, v in params.items()},
            best_score=self.best_score if score is None else score,
            best_round=t,
        )

    def to_checkpoint(self) -> dict:
        """The entries of a checkpoint (tensors, numbers, lists and dicts only, so that
        ``torch.load(weights_only=True)`` reads it; the names are those of the files
        written before this class)."""
        return {
            "global": self.global_params,
            "best": self.best_params,
            "best_score": self.best_score,
            "best_round": self.best_round,
            "ticket_mask": self.ticket_mask.keep,
            "ticket_index": self.ticket_index,
            "ticket_scores": self.ticket_scores,
        }

    @classmethod
    def from_checkpoint(cls, entries: dict) -> ServerState:
        """The inverse of :meth:`to_checkpoint` (``entries`` already checked)."""
        return cls(
            global_params=entries["global"],
            best_params=entries["best"],
            best_score=entries["best_score"],
            best_round=entries["best_round"],
            ticket_mask=Mask(dict(entries["ticket_mask"])),
            ticket_index=entries["ticket_index"],
            ticket_scores=entries["ticket_scores"],
        )


#: The entries of a checkpoint: the run and round it belongs to, then the server state.
_CHECKPOINT_KEYS = frozenset(
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


class ServerCheckpoints:
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

    def save(self, t: int, state: ServerState) -> None:
        tmp = self.path(t).with_suffix(".tmp")
        torch.save({**state.to_checkpoint(), "run": self.run, "round": t}, tmp)
        os.replace(tmp, self.path(t))

    def load(self, t: int) -> ServerState | None:
        """The state after round ``t``, or None when no file is there."""
        path = self.path(t)
        if not path.exists():
            return None
        if not path.is_file():  # a folder, or a FIFO or device that open() would block on
            raise self._damaged(path, "it is not a regular file")
        try:
            entries = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as err:  # truncated, random bytes, a forbidden global: torch
            # raises RuntimeError, UnpicklingError, EOFError... report them all alike
            raise self._damaged(path, f"it cannot be read ({_reason(err)})") from None
        self._check(entries, path, t)
        try:
            return ServerState.from_checkpoint(entries)
        except ValueError as err:  # a mask that prunes a bias: Mask refuses it
            raise self._damaged(path, f"its ticket_mask is not a mask ({err})") from None

    def required(self, t: int) -> ServerState:
        """The state after round ``t``, which the store says ran; ValueError when its
        checkpoint is missing (or, as in :meth:`load`, damaged)."""
        state = self.load(t)
        if state is None:
            raise ValueError(
                f"The 'checkpoint_dir' of run_fedltp, {self.folder}, holds no checkpoint of "
                f"round {t}; cannot resume (delete the run's records to start over)."
            )
        return state

    def drop(self, t: int) -> None:
        self.path(t).unlink(missing_ok=True)

    def _check(self, entries, path: Path, t: int) -> None:
        if not isinstance(entries, dict) or set(entries) != _CHECKPOINT_KEYS:
            found = (
                sorted(map(str, entries)) if isinstance(entries, dict) else type(entries).__name__
            )
            raise self._damaged(path, f"it holds {found}, not a Fed-LTP server state")
        if entries["run"] != self.run:
            raise self._damaged(path, f"it belongs to run {entries['run']!r}, not {self.run!r}")
        if entries["round"] != t:
            raise self._damaged(path, f"it holds round {entries['round']!r}, not round {t}")
        for part, floating in (("global", True), ("best", True), ("ticket_mask", False)):
            self._check_tensors(entries[part], path, part, floating=floating)
        best = entries["best_round"]
        if not (isinstance(best, int) and 0 <= best <= t):
            raise self._damaged(path, f"its best_round {best!r} is not an integer in [0, {t}]")
        score = entries["best_score"]
        if not isinstance(score, float) or math.isnan(score):
            raise self._damaged(path, f"its best_score {score!r} is not a number")
        scores = entries["ticket_scores"]
        if not isinstance(scores, list) or not all(isinstance(s, int) for s in scores):
            raise self._damaged(path, f"its ticket_scores {scores!r} are not a list of integers")
        if not isinstance(entries["ticket_index"], int):
            raise self._damaged(
                path, f"its ticket_index {entries['ticket_index']!r} is not an integer"
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


def _reason(err: Exception) -> str:
    """Why ``torch.load`` failed, in one line: for the weights-only unpickler, its reason
    (the global it refused) rather than its opening advice to load the file with
    ``weights_only=False``."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()] or [""]
    if lines[0].startswith("Weights only load failed") and len(lines) > 1:
        reason = next((line for line in lines[1:] if not line.startswith("Please file")), "")
        return f"refused by torch.load(weights_only=True): {reason}"
    return f"{type(err).__name__}: {lines[0]}"
