"""The audit's bits figure (:mod:`sims.audit`): the exact leakage beside the ceiling, the
valid upper bounds, Theorem 1 and the attacks' Fano lower bounds, on one axis."""

from __future__ import annotations

import math

from pruneleak.sims.plots.leakage import _ATTACK_LABELS


def audit_bits(record: dict, attacks) -> list[tuple[str, float, str]]:
    """``(label, bits, kind)`` bars of one leakage record, in the figure's order; ``kind`` is
    ``"exact"``, ``"ceiling"``, ``"upper"`` (valid upper bounds), ``"claim"`` (Theorem 1)
    or ``"lower"`` (Fano); values that are None or not finite are left out."""
    status = record["theorem1_status"]
    bars = [
        ("exact I(X; Y)", record["exact_bits"], "exact"),
        ("ceiling log2 C(M, B)", record["ceiling_bits"], "ceiling"),
        ("Gaussian-channel bound", record["gaussian_bound_bits"], "upper"),
    ]
    for kind in ("published", "corrected"):
        label = f"Theorem 1, {kind} ({status[kind]})"
        bars.append((label, record[f"theorem1_{kind}_bits"], "claim"))
    for name in attacks:
        label = f"Fano lower bound, {_ATTACK_LABELS.get(name, name)}"
        bars.append((label, record["fano_lower_bits"][name], "lower"))
    return [(label, float(v), kind) for label, v, kind in bars if _finite(v)]


def _finite(value) -> bool:
    return value is not None and math.isfinite(value)


def plot_audit_bits(record: dict, attacks):
    """Horizontal bars of :func:`audit_bits` (symlog x: Theorem 1's thousands of bits and
    negative corrected values beside the exact value's at most ``log2 C(M, B)``), the
    exact value's interval as an error bar, the ceiling as a dashed line. Returns the
    figure."""
    import matplotlib.pyplot as plt

    bars = audit_bits(record, attacks)
    colours = {"exact": "C0", "ceiling": "black", "upper": "C2", "claim": "C3", "lower": "C1"}
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(bars) + 1.2), layout="constrained")
    ys = list(range(len(bars)))[::-1]
    ax.barh(ys, [b for _, b, _ in bars], color=[colours[k] for *_, k in bars])
    low, high = record["exact_ci_bits"]
    exact = record["exact_bits"]
    ax.errorbar([exact], [ys[0]], xerr=[[exact - low], [high - exact]], color="black", capsize=4)
    ax.axvline(record["ceiling_bits"], color="black", linestyle="--", linewidth=1)
    ax.set_yticks(ys, [label for label, *_ in bars])
    ax.set_xscale("symlog", linthresh=1.0)
    ax.set_xlabel("bits (symlog)")
    ax.set_title(
        f"Leakage of a batch of B = {record['batch_size']} of M = {record['candidates']} "
        f"candidates, p = {record['p']:.3g}, s = {record['noise_std']:.3g}",
        fontsize="medium",
    )
    return fig
