"""The attacks of the leakage study on the released upload, and what describes their output.

Each attack reconstructs the target batches from their (noisy) uploads; the attacker names
the candidates nearest (L2) to its reconstruction (:func:`sims.attacks.identify`), and its
identification success gives Fano's lower bound on ``I(X; Y)`` (the study's records). NMI
(with its chance level), and PSNR describe the reconstructions; they decide nothing about
the bits.

* Without a defense: SGI (Algorithm 2: the kept coordinates read off the upload's zeros)
  and GI (every coordinate matched), iDLG labels for ``B = 1``, labels optimised jointly
  otherwise (an attacker given the labels would bound ``I(X; Y, labels)``).
* With a defense: the attacker PriPrune evaluates it against (``"sgi"``, SGI as
  published: withheld coordinates look pruned) and the defense-aware SGI
  (``"sgi_aware"``, :func:`sims.attacks.defense_aware.defense_aware_attack`, without
  replaying earlier rounds: the stale coordinates keep the broadcast).
"""

from __future__ import annotations

import numpy as np
import torch

from pruneleak.estimators.image import score_reconstruction
from pruneleak.sims.attacks import AttackConfig, gi_attack_batched, identify, sgi_attack_batched
from pruneleak.sims.attacks.defense_aware import defense_aware_attack


def attack_config(world) -> AttackConfig:
    """Squared-L2 matching with the batched backtracking L-BFGS (few iterations)."""
    config = world.config
    return AttackConfig.dlg(
        optimizer="lbfgs_backtracking",
        iterations=config.attack_iterations,
        label_mode="idlg" if config.batch_size == 1 else "optimize",
        device=str(world.device),
    )


def run_attacks(world, state, sent: list[dict], seed: int) -> dict[str, list]:
    """``{attack: [AttackResult per target]}`` on the uploads ``sent`` of the targets."""
    config = world.config
    common = {
        "lr": config.client_lr,
        "batch_shape": (config.batch_size, *world.images.shape[1:]),
        "num_classes": world.num_classes,
        "config": attack_config(world),
        "seeds": [(seed + k) % 2**63 for k in range(len(sent))],
    }
    if config.defense.name == "none":
        return {
            "sgi": sgi_attack_batched(world.model, state.broadcast, sent, **common),
            "gi": gi_attack_batched(world.model, state.broadcast, sent, **common),
        }
    unaware = sgi_attack_batched(world.model, state.broadcast, sent, **common)
    records = [
        world.aware_record(state, upload, (world.images[row], world.labels[row]))
        for upload, row in zip(sent, world.targets, strict=True)
    ]
    aware_options = {**common, "lr": config.client_lr * config.defense.step_scale}
    aware = defense_aware_attack(world.model, records, replay=False, **aware_options)
    return {"sgi": unaware, "sgi_aware": aware}


def describe(world, results: dict[str, list]) -> tuple[dict, dict]:
    """Per attack: the targets it identified and the mean NMI, PSNR and SSIM (None for
    images with a side under 7 pixels) of its
    reconstructions matched to the targets' images
    (:func:`estimators.image.score_reconstruction`), with NMI's chance level; and per
    attack the kept ``(originals, matched reconstructions)`` for the reconstruction grids."""
    config = world.config
    truth = [sorted(row.tolist()) for row in world.targets]
    originals = [world.images[row].cpu() for row in world.targets]
    summary: dict = {"attack_hits": {}, "nmi": {}, "psnr": {}, "ssim": {}}
    kept, chance = {}, []
    for name, found in results.items():
        named = [identify(r.images, world.images) for r in found]
        summary["attack_hits"][name] = sum(g == t for g, t in zip(named, truth, strict=True))
        scores = [
            score_reconstruction(x, r.images, levels=config.nmi_levels, seed=config.seed)
            for x, r in zip(originals, found, strict=True)
        ]
        summary["nmi"][name] = float(np.mean([s["nmi"] for s in scores]))
        summary["psnr"][name] = float(np.mean([s["psnr"] for s in scores]))
        with_ssim = all("ssim" in s for s in scores)
        summary["ssim"][name] = float(np.mean([s["ssim"] for s in scores])) if with_ssim else None
        chance += [float(np.mean(s["nmi_chance"])) for s in scores]
        matched = [r.images[s["assignment"]] for r, s in zip(found, scores, strict=True)]
        kept[name] = (torch.cat(originals), torch.cat(matched))
    summary["nmi_chance"] = float(np.mean(chance))
    return summary, kept
