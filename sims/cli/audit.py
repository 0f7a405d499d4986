"""``pruneleak audit``: the leakage of the user's own model, data and pruned release.

``--model module:factory`` (an importable zero-argument factory) or a TorchScript file;
``--data`` a folder of images by class, an ``.npz`` with ``images`` and ``labels``, or a
packaged data set's name; ``--mask FILE`` (an ``.npz`` of boolean arrays named like the
model's parameters) or ``--pruning NAME --p P``. Writes ``audit.md``, ``audit.html``,
``audit.json`` and the figures under ``--out`` (:mod:`sims.audit`) and prints the summary.
Heavy modules (torch, :mod:`sims.audit`) are imported when the command runs.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from pruneleak.sims.cli import add_command, add_out_argument
from pruneleak.sims.cli.arguments import (
    nonnegative_float,
    nonnegative_int,
    positive_float,
    positive_int,
)
from pruneleak.sims.cli.options import declare_options
from pruneleak.sims.cli.summaries import SUMMARIES

#: Command-line destination -> parameter of :func:`sims.audit.audit`.
OPTIONS = {
    "model": "model",
    "data": "images",
    "mask": "mask",
    "pruning": "pruning",
    "p": "p",
    "lr": "lr",
    "local_steps": "local_steps",
    "batch_size": "batch_size",
    "noise": "noise_std",
    "candidates": "candidates",
    "samples": "samples",
    "attack_targets": "attack_targets",
    "iterations": "attack_iterations",
    "seed": "seed",
    "device": "device",
}
#: Command-line destination -> LeakageConfig field (the study checks these).
STUDY_OPTIONS = {
    "lr": "client_lr",
    "local_steps": "local_steps",
    "batch_size": "batch_size",
    "noise": "noise_stds",
    "candidates": "candidates",
    "samples": "samples",
    "attack_targets": "attack_targets",
    "iterations": "attack_iterations",
    "seed": "seed",
    "device": "device",
}


def register(subparsers) -> None:
    parser = add_command(
        subparsers,
        "audit",
        help=SUMMARIES["audit"],
        description=(
            "The exact leakage in bits of a target batch (B of M candidates) through your "
            "model's pruned FL update, beside the ceiling, the valid upper bounds, "
            "PriPrune's Theorem 1 and the SGI and GI attacks (success, Fano bound, NMI, "
            "PSNR, SSIM). The model runs in evaluation mode (BatchNorm running statistics, "
            "dropout off). Writes audit.md, audit.html, audit.json and figures to --out."
        ),
    )
    add_out_argument(parser, "audit")
    parser.add_argument(
        "--model",
        required=True,
        help="module:factory, an importable zero-argument factory returning the "
        "torch.nn.Module, or a TorchScript file",
    )
    parser.add_argument(
        "--data",
        required=True,
        help="candidate images: a folder with one sub-folder of PNG/JPEG images per class, "
        "an .npz with arrays 'images' and 'labels', or a packaged data set (e.g. digits)",
    )
    parser.add_argument(
        "--mask",
        type=Path,
        default=None,
        metavar="FILE",
        help="an .npz of boolean arrays named like the model's parameters (default: none, "
        "--pruning at --p)",
    )
    parser.add_argument("--pruning", default="random", help="pruning scheme without --mask")
    parser.add_argument("--p", type=nonnegative_float, default=0.5, help="pruning rate")
    parser.add_argument("--lr", type=positive_float, default=0.25, help="client learning rate")
    parser.add_argument("--local-steps", type=positive_int, default=1, help="local steps tau")
    parser.add_argument("--batch-size", type=positive_int, default=1, metavar="B", help="B")
    parser.add_argument(
        "--noise", type=nonnegative_float, default=0.0, metavar="S", help="Gaussian noise std"
    )
    parser.add_argument(
        "--candidates",
        type=positive_int,
        default=None,
        metavar="M",
        help="candidates drawn from the data (default: all of them)",
    )
    parser.add_argument("--samples", type=positive_int, default=4096, help="Monte Carlo draws")
    parser.add_argument(
        "--attack-targets", type=positive_int, default=8, help="target batches attacked"
    )
    parser.add_argument("--iterations", type=positive_int, default=50, help="L-BFGS iterations")
    parser.add_argument("--seed", type=nonnegative_int, default=0, help="seed of every draw")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    declare_options(parser, {"audit": OPTIONS, "LeakageConfig": STUDY_OPTIONS})
    parser.set_defaults(func=run)


def load_model(spec: str):
    """The model of ``--model``: ``module:factory`` (the factory, called by the audit) or
    a TorchScript file (``torch.jit.load``, which runs no Python code)."""
    import torch

    if ":" in spec and not Path(spec).exists():
        module_name, _, attribute = spec.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as err:
            raise ValueError(
                f"The 'model' parameter of audit must name an importable module:factory. "
                f"Got {spec!r} instead ({err})."
            ) from None
        factory = getattr(module, attribute, None)
        if not callable(factory):
            raise ValueError(
                f"The 'model' parameter of audit must name a callable factory in "
                f"{module_name!r}. Got {spec!r} instead."
            )
        return factory
    path = Path(spec)
    if not path.is_file():
        raise OSError(2, "No such file (--model: module:factory or a TorchScript file)", spec)
    if path.suffix == ".py":
        raise ValueError(
            f"The 'model' parameter of audit must be module:factory for Python code (put "
            f"its folder on PYTHONPATH). Got the file {spec!r} instead."
        )
    return torch.jit.load(str(path), map_location="cpu")


def load_data(spec: str):
    """``(images, labels)`` of ``--data``: a folder by class, an ``.npz`` or a data set."""
    from pruneleak.sims.data import available_datasets, load_dataset
    from pruneleak.sims.data.user import read_image_folder, read_npz_images

    path = Path(spec)
    if path.is_dir():
        images, labels, _ = read_image_folder(path)
        return images, labels
    if path.suffix == ".npz":
        images, labels = read_npz_images(path)
        if len(images) != len(labels):
            raise ValueError(
                f"The 'images' parameter of audit must hold one label per image: {spec} has "
                f"{len(images)} images and {len(labels)} labels."
            )
        return images, labels
    if spec in available_datasets():
        data = load_dataset(spec)
        return data.images, data.labels
    raise ValueError(
        f"The 'images' parameter of audit must be a folder, an .npz or one of "
        f"{list(available_datasets())}. Got {spec!r} instead."
    )


def load_mask(path: Path) -> dict:
    """The ``{name: bool array}`` of a mask ``.npz`` (no pickles)."""
    import numpy as np

    with np.load(path, allow_pickle=False) as data:
        return {name: data[name] for name in data.files}


def run(args) -> int:
    from pruneleak.sims.audit import audit
    from pruneleak.sims.audit.report import format_value

    result = audit(
        load_model(args.model),
        *load_data(args.data),
        mask=None if args.mask is None else load_mask(args.mask),
        pruning=args.pruning,
        p=args.p,
        lr=args.lr,
        local_steps=args.local_steps,
        batch_size=args.batch_size,
        noise_std=args.noise,
        candidates=args.candidates,
        samples=args.samples,
        attack_targets=args.attack_targets,
        attack_iterations=args.iterations,
        seed=args.seed,
        device=args.device,
    )
    paths = result.write(args.out)
    print(result.verdict())
    for quantity, value, unit in result.rows():
        print(f"{quantity:<42} {format_value(value):>12}  {unit}")
    for kind in ("markdown", "html", "json"):
        print(f"wrote {paths[kind]}")
    return 0
