"""PriPrune's defense study in bits: every defense's exact leakage beside the NMI that ranks it.

The defense study (``sims/sweep/configs/priprune_defense.toml``) ranks Largest, Random,
Mix (real and Pseudo) and PriPrune's adaptive defense by the NMI of SGI's
reconstructions. This script puts the exact ``I(X; Y)`` of the same kind of upload beside
it (:func:`sims.experiments.leakage.defenses.compare_defenses`): the defense study's tanh
Conv-1 on the digits, 10 clients (the target and 9 others) trained for 29 warm-up rounds
of FedSGD at batch 8 and lr 0.5 under a random mask at p = 0.3, each defense in place from
round 1; then the released round, in which the target sends one digit drawn from M
candidates (B = 1: the only batch size whose every secret can be simulated), and the
server sees the upload with Gaussian noise ``s`` on every sent value (at equal noise ``s``
for every defense; the noise does not change training, so each defense keeps its own
accuracy). Printed: the Markdown table (bits with interval and method, Bayes success,
both attackers' success, Fano bound, NMI and PSNR, NMI's chance level, accuracy) and
whether NMI ranks the defenses as the bits do (Kendall's tau per noise and attacker), with
``headline:`` lines.

    python benchmarks/defense_bits.py [--quick] [--out DIR] [--device auto]

Full: M = 64, s in {0, 0.1, 0.3, 1}, 16 attacked targets, 200 L-BFGS iterations (about an
hour on two CPU cores). ``--quick``: M = 16, s in {0, 0.3}, 4 warm-up rounds, 4 targets,
20 iterations (a few minutes).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from pruneleak.sims.core.runtime import torch_threads, tune_process_heap
from pruneleak.sims.experiments.leakage import LeakageConfig
from pruneleak.sims.experiments.leakage.defenses import (
    compare_defenses,
    format_agreement,
    format_defense_table,
    nmi_rank_agreement,
)
from pruneleak.sims.store.results import ResultStore


def base_config(quick: bool, device: str) -> LeakageConfig:
    """The released round of the defense study (module docstring)."""
    return LeakageConfig(
        dataset="digits",
        model="conv1",
        rates=(0.3,),
        noise_stds=(0.0, 0.3) if quick else (0.0, 0.1, 0.3, 1.0),
        candidates=16 if quick else 64,
        other_clients=9,
        warmup_rounds=4 if quick else 29,
        warmup_batch_size=8,
        client_lr=0.5,
        samples=1024 if quick else 4096,
        randomness_draws=32 if quick else 256,
        attack_targets=4 if quick else 16,
        attack_iterations=20 if quick else 200,
        nmi_levels=16,
        stats_samples=8 if quick else 64,
        device=device,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small grid (minutes)")
    parser.add_argument("--out", default="pruneleak-out/defense_bits", help="results folder")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    args = parser.parse_args()
    tune_process_heap()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with torch_threads(1):
        records = compare_defenses(
            base_config(args.quick, args.device), store=ResultStore(out / "defense_bits.jsonl")
        )
    print(format_defense_table(records))
    print()
    agreement = nmi_rank_agreement(records)
    print(format_agreement(agreement))
    (out / "agreement.json").write_text(json.dumps(agreement, indent=1))
    for a in agreement:
        tau = math.nan if a["tau"] is None else a["tau"]
        print(f"headline: nmi_bits_tau_{a['attacker']}_s{a['noise_std']:g} = {tau:.2f} tau")
    noiseless = [r for r in records if r["noise_std"] == 0]
    below = sum(r["exact_ci_bits"][1] < r["ceiling_bits"] - 1e-9 for r in noiseless)
    print(f"headline: defenses_below_ceiling_at_s0 = {below} of {len(noiseless)}")


if __name__ == "__main__":
    main()
