"""Plain-text tables of the leakage study's records: bounds, attacks, rounds, estimates."""

from __future__ import annotations

import math

from pruneleak.sims.store.keys import key_number


def _bits(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _pair(values: dict, fmt: str) -> str:
    return "/".join(format(v, fmt) for v in values.values())


def _grid_cells(records: list[dict]):
    """``(record) -> "p s"`` cells: p with two decimals and s with three digits, unless two
    values of the records' grid would print alike (0.5 and 0.5000001), then both exactly
    (:func:`sims.store.keys.key_number`), so that two rows never look the same."""

    def texts(field: str, short) -> dict:
        values = {r[field] for r in records}
        exact = len({short(v) for v in values}) < len(values)
        return {v: key_number(v) if exact else short(v) for v in values}

    p = texts("p", lambda v: f"{v:.2f}")
    s = texts("noise_std", lambda v: f"{v:.3g}")
    return lambda r: f"{p[r['p']]:>5} {s[r['noise_std']]:>7}"


def format_table(records: list[dict]) -> str:
    """One line per (p, s): every quantity in bits (the exact value with its interval and
    method, the ceiling, the valid upper bounds, Theorem 1 with its status), success in
    [0, 1] (Bayes-optimal, and the DP bound on any attack's)."""
    point = _grid_cells(records)
    lines = [
        f"{'p':>5} {'s':>7} {'M':>5} {'ceiling':>7} {'exact [95% CI]':>21} {'method':>11} "
        f"{'Bayes':>5} {'DP<=':>5} {'Gauss':>8} {'T1 published':>20} {'T1 corrected':>20}"
    ]
    for r in records:
        lo, hi = r["exact_ci_bits"]
        status = r["theorem1_status"]
        lines.append(
            f"{point(r)} {r['candidates']:>5d} "
            f"{r['ceiling_bits']:>7.2f} {r['exact_bits']:>6.2f} [{lo:>5.2f}, {hi:>5.2f}] "
            f"{r['exact_method']:>11} {_bits(r['bayes_success']):>5} "
            f"{_bits(r['dp_success_bound']):>5} {_bits(r['gaussian_bound_bits']):>8} "
            f"{r['theorem1_published_bits']:>10.1f} {status['published']:>9} "
            f"{r['theorem1_corrected_bits']:>10.1f} {status['corrected']:>9}"
        )
    return "\n".join(lines)


def format_attacks_table(records: list[dict]) -> str:
    """One line per (p, s): per attack (names in the header) its identification success,
    Fano's lower bound on the bits, the NMI of its reconstructions and PSNR (dB), with
    NMI's chance level, beside the exact bits and the model's accuracy."""
    point = _grid_cells(records)
    names = "/".join(records[0]["attack_success"]) if records else ""
    lines = [
        f"{'p':>5} {'s':>7} {'exact':>6} {'success ' + names:>20} {'Fano ' + names:>18} "
        f"{'NMI ' + names:>18} {'chance':>6} {'PSNR ' + names:>18} {'accuracy':>8}"
    ]
    for r in records:
        lines.append(
            f"{point(r)} {r['exact_bits']:>6.2f} "
            f"{_pair(r['attack_success'], '.2f'):>20} {_pair(r['fano_lower_bits'], '.2f'):>18} "
            f"{_pair(r['nmi'], '.3f'):>18} {r['nmi_chance']:>6.3f} "
            f"{_pair(r['psnr'], '.1f'):>18} {r['accuracy']:>8.3f}"
        )
    return "\n".join(lines)


def format_rounds_table(records: list[dict]) -> str:
    """One line per (p, s, T'): the exact bits after ``T'`` rounds beside the per-round sum
    and PriPrune's Corollary 1 (published, corrected) with its status."""
    point = _grid_cells(records)
    lines = [
        f"{'p':>5} {'s':>7} {'T':>3} {'exact [95% CI]':>21} {'sum of rounds':>13} "
        f"{'ceiling':>7} {'Cor.1 published':>23} {'Cor.1 corrected':>23}"
    ]
    for r in records:
        for entry in r.get("by_rounds", []):
            lo, hi = entry["exact_ci_bits"]
            status = entry["corollary1_status"]
            lines.append(
                f"{point(r)} {entry['rounds']:>3d} "
                f"{entry['exact_bits']:>6.2f} [{lo:>5.2f}, {hi:>5.2f}] "
                f"{entry['per_round_sum_bits']:>13.2f} {r['ceiling_bits']:>7.2f} "
                f"{entry['corollary1_published_bits']:>13.1f} {status['published']:>9} "
                f"{entry['corollary1_corrected_bits']:>13.1f} {status['corrected']:>9}"
            )
    return "\n".join(lines)


def format_estimates_table(records: list[dict]) -> str:
    """Plain-text table of the estimates against the exact value, one line per (p, s > 0):
    each estimator's bits, its interval where it has one, and its relative error."""
    point = _grid_cells(records)
    names = ("ksg", "mine", "hmine")
    lines = [
        f"{'p':>5} {'s':>7} {'M':>5} {'exact [95% CI]':>21} "
        + " ".join(f"{name.upper() + ' bits [95% CI] error':>33}" for name in names)
    ]
    for r in records:
        estimates = r.get("estimates_bits") or {}
        if not any(estimates.get(name) for name in names):
            continue
        lo, hi = r["exact_ci_bits"]
        cells = []
        for name in names:
            e = estimates.get(name)
            if e is None:
                cells.append(f"{'-':>33}")
                continue
            ci = "" if e["ci_bits"] is None else f"[{e['ci_bits'][0]:.2f}, {e['ci_bits'][1]:.2f}]"
            error = (e["bits"] - r["exact_bits"]) / r["exact_bits"] if r["exact_bits"] else math.nan
            cells.append(f"{e['bits']:>7.2f} {ci:>14} {error:>+9.0%}")
        lines.append(
            f"{point(r)} {r['candidates']:>5d} "
            f"{r['exact_bits']:>6.2f} [{lo:>5.2f}, {hi:>5.2f}] " + " ".join(cells)
        )
    return "\n".join(lines)
