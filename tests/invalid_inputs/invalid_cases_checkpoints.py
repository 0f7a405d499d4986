"""Invalid inputs of files read back: rows of test_invalid_inputs (issue 30).

Fed-LTP checkpoints (``<store>.ckpt/<run>/round=<t>.pt``), reconstruction files
(``<out>/reconstructions/<key>.npz``) and results stores handed to ``pruneleak results``.
Each row writes one file with one thing wrong (damaged bytes, another run's state, a
special file where a regular file belongs) and expects a refusal whose message names the
file and what is wrong with it. Rows that must also prove that nothing ran, or that the
call returns in time, are in test_hostile_files.
"""

from __future__ import annotations

import io
import os
import pickle
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np
import torch
from invalid_case import ApiCase, CliCase

from pruneleak.sims.cli import build_parser
from pruneleak.sims.cli.fedltp import config_from_args
from pruneleak.sims.data.datasets import load_digits_dataset
from pruneleak.sims.fedltp import FedLTPConfig, run_fedltp, split_for_config
from pruneleak.sims.fedltp.training import run_key
from pruneleak.sims.models import build_model
from pruneleak.sims.store.reconstructions import load_reconstructions, save_reconstructions
from pruneleak.sims.store.repair import check, repair
from pruneleak.sims.store.results import ResultStore

# ------------------------------------------------------------------ Fed-LTP checkpoints

#: A DP-Fed run of three rounds over six digits clients (no tickets to train: the rows
#: stay fast); each row resumes it after round 1 from a checkpoint it writes.
CONFIG = FedLTPConfig(
    num_clients=6,
    client_rate=0.34,
    local_steps=3,
    batch_size=5,
    rounds=3,
    lr=0.2,
    lambda_val=5.0,
    epsilon=1e9,
    seed=5,
)
RUN = run_key(CONFIG, variant="dp-fed")
CHECKPOINT = "round=1.pt"


def logreg():
    """Logistic regression on 8x8 digits: one 10 x 64 weight and 10 biases."""
    return build_model("logreg", image_shape=(1, 8, 8), num_classes=10)


@cache
def _data():
    return split_for_config(load_digits_dataset(), CONFIG)


def server_state(run: str = RUN, t: int = 1, **changes) -> dict:
    """A valid checkpoint of ``run`` after round ``t`` (logreg's weights), with
    ``changes`` applied to its entries."""
    params = {n: p.detach().clone() for n, p in logreg().named_parameters()}
    state = {
        "run": run,
        "round": t,
        "global": params,
        "best": {n: p.clone() for n, p in params.items()},
        "best_score": 12.5,
        "best_round": 1,
        "ticket_mask": {n: torch.ones_like(p, dtype=torch.bool) for n, p in params.items()},
        "ticket_index": -1,
        "ticket_scores": [],
    }
    state.update(changes)
    return state


def _as_bytes(state) -> bytes:
    buffer = io.BytesIO()
    torch.save(state, buffer)
    return buffer.getvalue()


def write_checkpoint(folder: Path, content: bytes | dict | Callable[[Path], None]) -> Path:
    """``folder / round=1.pt`` holding ``content``: bytes as they are, a dict saved by
    torch, or made by calling ``content(path)`` (a folder, a FIFO)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / CHECKPOINT
    if callable(content):
        content(path)
    else:
        path.write_bytes(content if isinstance(content, bytes) else _as_bytes(content))
    return path


def record_round_1(store: ResultStore, run: str) -> None:
    """The store's record of round 1 of ``run``, as run_fedltp writes it (the fields a
    resume reads)."""
    store.append(
        {"key": f"{run}/round=1", "run": run, "round": 1, "epsilon": 0.1, "bytes_cumulative": 0}
    )


def resume(content, *, checkpoint_of_round_1: bool = True) -> Callable[[Path], object]:
    """A call that records round 1 of the run, writes its checkpoint ``content`` (see
    :func:`write_checkpoint`; none when not ``checkpoint_of_round_1``) and resumes it."""

    def call(tmp: Path):
        store = ResultStore(tmp / "f.jsonl")
        record_round_1(store, RUN)
        if checkpoint_of_round_1:
            write_checkpoint(tmp / "f.jsonl.ckpt" / RUN, content)
        return run_fedltp(CONFIG, _data(), logreg, store=store, device="cpu", variant="dp-fed")

    return call


class RunsCode:
    """Pickles as a call of ``os.system``: loading it must not run the command."""

    def __reduce__(self):
        return (os.system, ("echo this must never run",))


_VALID = _as_bytes(server_state())
_WEIGHT = "classifier.0.weight"

CHECKPOINTS = [
    ApiCase(
        "checkpoints-truncated",
        resume(_VALID[: len(_VALID) // 2]),
        [CHECKPOINT, "damaged", "cannot be read"],
    ),
    ApiCase(
        "checkpoints-random-bytes",
        resume(np.random.default_rng(0).bytes(2000)),
        [CHECKPOINT, "cannot be read"],
    ),
    ApiCase("checkpoints-empty-file", resume(b""), [CHECKPOINT, "cannot be read"]),
    ApiCase(
        "checkpoints-plain-pickle-runs-a-command",
        resume(pickle.dumps({"global": RunsCode()})),
        [CHECKPOINT, "cannot be read"],
    ),
    ApiCase(
        "checkpoints-torch-pickle-runs-a-command",
        resume(server_state(best_score=RunsCode())),
        [CHECKPOINT, "cannot be read", "system"],
    ),
    ApiCase(
        "checkpoints-another-runs-state",
        resume(server_state(run="fedltp-0123456789ab")),
        [CHECKPOINT, "belongs to run 'fedltp-0123456789ab'", RUN],
    ),
    ApiCase(
        "checkpoints-another-round-renamed",
        resume(server_state(t=2)),
        [CHECKPOINT, "round 2, not round 1"],
    ),
    ApiCase(
        "checkpoints-state-of-older-format",  # no run and round: written before issue 30
        resume({k: v for k, v in server_state().items() if k not in ("run", "round")}),
        [CHECKPOINT, "not a Fed-LTP server state"],
    ),
    ApiCase(
        "checkpoints-a-list",
        resume([1, 2, 3]),
        [CHECKPOINT, "list", "not a Fed-LTP server state"],
    ),
    ApiCase(
        "checkpoints-weight-of-another-model",
        resume(server_state(**{"global": {_WEIGHT: torch.zeros(10, 784), "x": torch.zeros(1)}})),
        [CHECKPOINT, "'global'", _WEIGHT],
    ),
    ApiCase(
        "checkpoints-weight-wrong-shape",
        resume(
            server_state(best={_WEIGHT: torch.zeros(10, 784), "classifier.0.bias": torch.zeros(10)})
        ),
        [CHECKPOINT, f"best[{_WEIGHT!r}]", "(10, 784)", "(10, 64)"],
    ),
    ApiCase(
        "checkpoints-mask-of-floats",
        resume(
            server_state(
                ticket_mask={_WEIGHT: torch.ones(10, 64), "classifier.0.bias": torch.ones(10)}
            )
        ),
        [CHECKPOINT, f"ticket_mask[{_WEIGHT!r}]", "torch.float32", "boolean"],
    ),
    ApiCase(
        "checkpoints-nan-weights",
        resume(
            server_state(
                **{
                    "global": {
                        _WEIGHT: torch.full((10, 64), float("nan")),
                        "classifier.0.bias": torch.zeros(10),
                    }
                }
            )
        ),
        [CHECKPOINT, f"global[{_WEIGHT!r}]", "non-finite"],
    ),
    ApiCase(
        "checkpoints-best-round-after-its-round",
        resume(server_state(best_round=7)),
        [CHECKPOINT, "best_round 7", "[0, 1]"],
    ),
    ApiCase(
        "checkpoints-ticket-scores-not-integers",
        resume(server_state(ticket_scores=["12"])),
        [CHECKPOINT, "ticket_scores ['12']"],
    ),
    ApiCase(
        "checkpoints-a-folder",
        resume(lambda path: path.mkdir()),
        [CHECKPOINT, "not a regular file"],
    ),
    ApiCase(
        "checkpoints-a-fifo",  # open() would wait for a writer forever
        resume(os.mkfifo),
        [CHECKPOINT, "not a regular file"],
    ),
    ApiCase(
        "checkpoints-missing-for-a-recorded-round",
        resume(None, checkpoint_of_round_1=False),
        ["'checkpoint_dir'", RUN, "no checkpoint of round 1"],
    ),
]

# --------------------------------------------------- pruneleak fedltp on a checkpoint

#: A tiny DP-Fed run of ``pruneleak fedltp`` (the settings of CONFIG), results under {tmp}.
FEDLTP = [
    "fedltp", "--variant", "dp-fed", "--clients", "6", "--client-rate", "0.34",
    "--local-steps", "3", "--batch-size", "5", "--rounds", "3", "--lr", "0.2",
    "--lambda-val", "5", "--epsilon", "1e9", "--seed", "5", "--device", "cpu",
    "--no-progress", "--out", "{tmp}/out",
]  # fmt: skip


def _cli_checkpoint(content) -> Callable[[Path], None]:
    """A setup recording round 1 of the run of :data:`FEDLTP` and writing its checkpoint."""

    def setup(tmp: Path) -> None:
        args = build_parser(("fedltp",)).parse_args([a.replace("{tmp}", str(tmp)) for a in FEDLTP])
        run = run_key(config_from_args(args), variant="dp-fed")
        record_round_1(ResultStore(tmp / "out" / "fedltp.jsonl"), run)
        checkpoint = content(run) if callable(content) else content
        write_checkpoint(tmp / "out" / "fedltp.jsonl.ckpt" / run, checkpoint)

    return setup


COMMAND_LINE = [
    CliCase(
        "checkpoints-cli-truncated",
        FEDLTP,
        [CHECKPOINT, "damaged", "cannot be read"],
        setup=_cli_checkpoint(lambda run: _as_bytes(server_state(run))[:300]),
    ),
    CliCase(
        "checkpoints-cli-pickle-runs-a-command",
        FEDLTP,
        [CHECKPOINT, "cannot be read"],
        setup=_cli_checkpoint(lambda run: server_state(run, best_score=RunsCode())),
    ),
    CliCase(
        "checkpoints-cli-another-runs-state",
        FEDLTP,
        [CHECKPOINT, "belongs to run 'fedltp-0123456789ab'"],
        setup=_cli_checkpoint(server_state(run="fedltp-0123456789ab")),
    ),
]

# ------------------------------------------------------------------ reconstructions

KEY = "fp/sgi/p=0.5/target=1"
NPZ = "target=1.npz"
_IMAGES = np.full((2, 1, 4, 4), 0.5, np.float16)


def _npz(**arrays) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def _reconstructions(content: bytes | Callable[[Path], None]) -> Callable[[Path], object]:
    """A call writing the file of :data:`KEY` (the bytes ``content``, or made by
    ``content(path)``) and reading it back."""

    def call(tmp: Path):
        path = save_reconstructions(tmp, KEY, _IMAGES, _IMAGES)  # the folders, a valid file
        path.unlink()
        if callable(content):
            content(path)
        else:
            path.write_bytes(content)
        return load_reconstructions(tmp, KEY)

    return call


_GOOD_NPZ = _npz(originals=_IMAGES, reconstructions=_IMAGES)

RECONSTRUCTIONS = [
    ApiCase(
        "checkpoints-npz-object-array",
        _reconstructions(_npz(originals=np.array([RunsCode()], object), reconstructions=_IMAGES)),
        [NPZ, "damaged", "cannot be read", "allow_pickle=False"],
    ),
    ApiCase(
        "checkpoints-npz-pickle-instead-of-zip",
        _reconstructions(pickle.dumps({"originals": RunsCode()})),
        [NPZ, "cannot be read"],
    ),
    ApiCase(
        "checkpoints-npz-truncated",
        _reconstructions(_GOOD_NPZ[: len(_GOOD_NPZ) // 2]),
        [NPZ, "cannot be read"],
    ),
    ApiCase("checkpoints-npz-empty", _reconstructions(b""), [NPZ, "cannot be read"]),
    ApiCase(
        "checkpoints-npz-random-bytes",
        _reconstructions(np.random.default_rng(1).bytes(500)),
        [NPZ, "cannot be read"],
    ),
    ApiCase(
        "checkpoints-npz-wrong-members",
        _reconstructions(_npz(images=_IMAGES)),
        [NPZ, "['images']", "'originals', 'reconstructions'"],
    ),
    ApiCase(
        "checkpoints-npz-float32",
        _reconstructions(_npz(originals=_IMAGES.astype(np.float32), reconstructions=_IMAGES)),
        [NPZ, "originals", "float32", "float16"],
    ),
    ApiCase(
        "checkpoints-npz-values-above-one",
        _reconstructions(_npz(originals=_IMAGES, reconstructions=_IMAGES * 4)),
        [NPZ, "reconstructions", "outside [0, 1]"],
    ),
    ApiCase(
        "checkpoints-npz-shapes-differ",
        _reconstructions(_npz(originals=_IMAGES, reconstructions=_IMAGES[:1])),
        [NPZ, "(2, 1, 4, 4)", "(1, 1, 4, 4)"],
    ),
    ApiCase(
        "checkpoints-npz-a-folder",
        _reconstructions(lambda path: path.mkdir()),
        [NPZ, "not a regular file"],
    ),
]

# ------------------------------------------------------------------ results stores


def _link(target: str) -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        (tmp / "r.jsonl").symlink_to(target)

    return setup


STORES = [
    CliCase(
        "checkpoints-results-check-dev-null",  # a device: read as empty, "0 records" before
        ["results", "check", "/dev/null"],
        ["/dev/null", "a device, not a regular file"],
    ),
    CliCase(
        "checkpoints-results-repair-dev-null",
        ["results", "repair", "/dev/null"],
        ["/dev/null", "a device, not a regular file"],
    ),
    CliCase(
        "checkpoints-results-check-symlink-loop",
        ["results", "check", "{tmp}/r.jsonl"],
        ["{tmp}/r.jsonl", "symbolic link loop"],
        setup=_link("r.jsonl"),
    ),
    CliCase(
        "checkpoints-results-check-broken-link",
        ["results", "check", "{tmp}/r.jsonl"],
        ["{tmp}/r.jsonl", "broken symbolic link", "gone.jsonl"],
        setup=_link("gone.jsonl"),
    ),
    ApiCase(
        "checkpoints-store-on-dev-null",
        lambda tmp: ResultStore("/dev/null"),
        ["/dev/null", "a device"],
    ),
    ApiCase(
        "checkpoints-store-symlink-loop",
        lambda tmp: (_link("r.jsonl")(tmp), ResultStore(tmp / "r.jsonl")),
        ["r.jsonl", "symbolic link loop"],
    ),
    ApiCase(
        "checkpoints-check-symlink-loop",
        lambda tmp: (_link("r.jsonl")(tmp), check(tmp / "r.jsonl")),
        ["r.jsonl", "symbolic link loop"],
    ),
    ApiCase(
        "checkpoints-repair-broken-link",
        lambda tmp: (_link("gone.jsonl")(tmp), repair(tmp / "r.jsonl")),
        ["r.jsonl", "broken symbolic link"],
    ),
]

CASES: list[ApiCase | CliCase] = [*CHECKPOINTS, *COMMAND_LINE, *RECONSTRUCTIONS, *STORES]
