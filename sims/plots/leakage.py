"""Bounds and attacks in bits: the figure of the leakage study's records (issue 12).

:func:`plot_leakage_bits` draws the records of :func:`sims.experiments.leakage.run_leakage`
(one per pruning rate ``p`` and noise ``s``), every quantity read from the records and
nothing recomputed, at its printed size (:mod:`sims.plots.style`): a row of bits panels
(one per ``s`` against ``p``; with a single ``p``, one panel against ``s``), a row of
identification-success panels below them, and a row with Theorem 1 against the sample
size behind its ``d*`` and ``Delta`` and the estimators against the exact value (when
given). Every drawn line carries a ``gid`` naming the record field it shows
(``"exact/s=0.01"``, ``"theorem1_published/vacuous/s=0"``,
``"theorem1_by_samples_corrected/p=0.5"``, ``"estimator_panel/mine/s=0.01"``, ...), so a
test can check the drawn numbers against the records.

The bits axes are linear and scaled to the leakage (:func:`bits_data_range`: 0 to a little
above the ceiling ``log2 N``); a bound beyond it (Theorem 1's thousands of bits, its
negative corrected values, a loose Gaussian-channel bound) is an arrow in a shaded band
on the panel's edge with its value printed (gid ``"off_scale/<field>/<tag>/above"`` or
``".../below"``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pruneleak.sims.plots.style import (
    COLOURS,
    KIND_STYLES,
    MARKERS,
    TEXT_WIDTH,
    dodge,
    off_scale_arrows,
    use_style,
    wrap,
)

#: Marker of a Theorem 1 point per status of :func:`bounds.leakage.theorem1_status`.
STATUS_MARKERS = {"valid": "o", "vacuous": "^", "violated": "X"}
#: Marker of each attack's Fano bound and success curves, by the attack's name in the
#: records (:mod:`sims.experiments.leakage.attacks`); its colour is :data:`COLOURS`'.
_ATTACK_MARKERS = {"sgi": "v", "gi": "^", "sgi_aware": "s"}
_ATTACK_LABELS = {"sgi": "SGI", "gi": "GI", "sgi_aware": "defense-aware SGI"}
_THEOREM1 = {"published": "Theorem 1 as published", "corrected": "Theorem 1 corrected"}
_ESTIMATORS = {"ksg": "KSG", "mine": "MINE", "hmine": "H-MINE"}
_ESTIMATOR_MARKERS = {"ksg": "P", "mine": "D", "hmine": "*"}
#: The secret's noun by data set, for the title.
_NOUNS = {"digits": "digit", "mnist": "digit", "faces": "face", "patches": "patch"}
#: Sideways shift, in points, of the arrows of each off-scale bound at the same x.
_ARROW_SHIFTS = {"gaussian_bound": -9.0, "theorem1_published": 0.0, "theorem1_corrected": 9.0}
#: Most bits panels per row.
_COLUMNS = 3


def _finite(xs: Sequence[float], ys: Sequence[float | None]) -> tuple[list, list]:
    """The points whose value is a finite number (None, NaN and infinities are left out)."""
    kept = [(x, y) for x, y in zip(xs, ys, strict=True) if y is not None and math.isfinite(y)]
    return [x for x, _ in kept], [y for _, y in kept]


def _by_noise(records: Sequence[dict]) -> dict[float, list[dict]]:
    groups: dict[float, list[dict]] = {}
    for record in records:
        groups.setdefault(float(record["noise_std"]), []).append(record)
    return {s: sorted(groups[s], key=lambda r: r["p"]) for s in sorted(groups)}


class _Layout:
    """Which variable is on the x axis and which one makes the panels.

    Several pruning rates: x is ``p`` (its values), one panel per ``s`` (tag ``"s=0.01"``).
    One pruning rate: x is ``s`` at positions 0, 1, ... (labelled with the values: 0 and
    decades share no scale), one panel (tag ``"p=0.5"``); with one ``s`` too the single
    position holds every series side by side."""

    def __init__(self, records: Sequence[dict]):
        self.ps = sorted({float(r["p"]) for r in records})
        self.ss = sorted({float(r["noise_std"]) for r in records})
        self.along_p = len(self.ps) > 1
        if self.along_p:
            self.panels = {f"s={s:g}": rows for s, rows in _by_noise(records).items()}
            self.titles = {
                f"s={s:g}": f"noise s = {s:g}" + (" (plain FL)" if s == 0 else "") for s in self.ss
            }
        else:
            p = self.ps[0]
            rows = sorted(records, key=lambda r: r["noise_std"])
            self.panels = {f"p={p:g}": rows}
            self.titles = {f"p={p:g}": f"pruning rate p = {p:g}"}
        self.single = len(self.ps) == 1 and len(self.ss) == 1

    def x(self, record: dict) -> float:
        return float(record["p"]) if self.along_p else float(self.ss.index(record["noise_std"]))

    def xs(self, rows: Sequence[dict]) -> list[float]:
        return [self.x(r) for r in rows]

    def format_axis(self, ax) -> None:
        if self.along_p:
            ax.set_xlabel("base pruning rate p")
            ax.set_xticks(self.ps)
            ax.set_xticklabels([f"{p:g}" for p in self.ps])
            margin = 0.1 * (self.ps[-1] - self.ps[0])
            ax.set_xlim(self.ps[0] - margin, self.ps[-1] + margin)
        else:
            ax.set_xlabel("noise standard deviation s")
            ax.set_xticks(range(len(self.ss)))
            ax.set_xticklabels([f"{s:g}" for s in self.ss])
            ax.set_xlim(-0.6, len(self.ss) - 0.4)


def bits_data_range(records: Sequence[dict]) -> tuple[float, float]:
    """The leakage's scale on a bits axis: from a little below 0 to 1.15 times the largest
    ceiling ``log2 N`` (no leakage passes the ceiling); a value outside it is off scale."""
    ceilings = [r["ceiling_bits"] for r in records if r["ceiling_bits"] is not None]
    top = 1.15 * max([c for c in ceilings if math.isfinite(c)] or [1.0])
    return -0.06 * top, top


def _bits_values(records: Sequence[dict]) -> list[float]:
    """Every value a bits panel draws (exact, bounds, Fano, estimates) that is finite."""
    values = []
    for r in records:
        values += [r["exact_bits"], r["gaussian_bound_bits"]]
        values += [r["theorem1_published_bits"], r["theorem1_corrected_bits"]]
        values += list(r["fano_lower_bits"].values())
        values += [e["bits"] for e in (r.get("estimates_bits") or {}).values() if e]
    return [v for v in values if v is not None and math.isfinite(v)]


#: Height of the band that holds off-scale arrows, as a fraction of the data range.
_BAND = 0.3


def _bits_limits(records: Sequence[dict]) -> tuple[float, float]:
    """The bits axes' limits: :func:`bits_data_range`, widened by a band above (below) it
    when some value lies above (below) it: the band holds that value's arrow and printed
    value, apart from the data."""
    low, high = bits_data_range(records)
    values = _bits_values(records)
    band = _BAND * (high - low)
    return (
        low - band if any(v < low for v in values) else low,
        high + band if any(v > high for v in values) else high,
    )


def _bits_panel(ax, layout: _Layout, tag: str, rows: list[dict], limits, axis_limits) -> None:
    """Bits of one panel: the ceiling as a band, the exact value with its interval, the
    Gaussian-channel bound, Theorem 1 (status markers), the Fano bounds and the estimates;
    whatever leaves ``limits`` becomes an arrow on the edge."""
    low, high = limits
    xs_all = layout.xs(rows)
    attacks = [a for a in _ATTACK_MARKERS if a in rows[0]["fano_lower_bits"]]
    # (field name, values, label, colour, kind, marker): the series of the panel
    series = [
        ("exact", [r["exact_bits"] for r in rows], "exact I(X; Y) (95% CI band)", "exact",
         "value", "o"),
        ("gaussian_bound", [r["gaussian_bound_bits"] for r in rows],
         "Gaussian-channel bound (s > 0)", "gaussian_bound", "upper", "d"),
    ]  # fmt: skip
    series += [
        (f"theorem1_{kind}", [r[f"theorem1_{kind}_bits"] for r in rows], label,
         f"theorem1_{kind}", "upper", "")
        for kind, label in _THEOREM1.items()
    ]  # fmt: skip
    series += [
        (f"fano_{a}", [r["fano_lower_bits"][a] for r in rows],
         f"Fano lower bound from {_ATTACK_LABELS[a]}", a, "lower", _ATTACK_MARKERS[a])
        for a in attacks
    ]  # fmt: skip
    for name, label in _ESTIMATORS.items():
        estimates = [(r.get("estimates_bits") or {}).get(name) for r in rows]
        values = [None if e is None else e["bits"] for e in estimates]
        if any(v is not None for v in values):
            series.append((f"estimate_{name}", values, f"{label} estimate", name, "value", "+"))

    # the ceiling: a thick light band behind the exact value, which often reaches it
    xs, ys = _finite(xs_all, [r["ceiling_bits"] for r in rows])
    if xs:
        ax.plot(
            xs,
            ys,
            color=COLOURS["ceiling"],
            linewidth=6,
            alpha=0.45,
            solid_capstyle="butt",
            marker="_" if layout.single else "",
            markersize=30,
            markeredgewidth=6,
            zorder=1,
            label="ceiling log2 N (N = C(M, B))",
            gid=f"ceiling/{tag}",
        )
    ax.fill_between(
        xs_all,
        [r["exact_ci_bits"][0] for r in rows],
        [r["exact_ci_bits"][1] for r in rows],
        color=COLOURS["exact"],
        alpha=0.25,
        linewidth=0,
        gid=f"exact_ci/{tag}",
    )
    fano = [s[0] for s in series if s[0].startswith("fano_")]
    for index, (name, values, label, colour_key, kind, marker) in enumerate(series):
        colour = COLOURS[colour_key]
        xs, ys = _finite(xs_all, values)
        if not xs:
            continue
        is_estimate = name.startswith("estimate_")
        # off-scale points break the line (an arrow on the edge shows them)
        (line,) = ax.plot(
            xs,
            [y if low <= y <= high else math.nan for y in ys],
            linestyle="none" if is_estimate else KIND_STYLES[kind],
            marker=marker,
            markersize=9 if is_estimate else 5,
            color=colour,
            label=label,
            zorder=4 if name == "exact" else 3,
            gid=f"{name}/{tag}",
        )
        if layout.single:  # one position: every series beside the others
            shift = (index - (len(series) - 1) / 2) * 7.0
            dodge(ax, line, index, len(series), step_points=7.0)
        elif name in fano:  # SGI's and GI's bounds often coincide
            shift = (fano.index(name) - (len(fano) - 1) / 2) * 3.0
            dodge(ax, line, fano.index(name), len(fano), step_points=3.0)
        else:
            shift = _ARROW_SHIFTS.get(name, 0.0)
        if name.startswith("theorem1_"):
            kind_name = name.removeprefix("theorem1_")
            for status, status_marker in STATUS_MARKERS.items():
                points = [
                    (layout.x(r), r[f"{name}_bits"])
                    for r in rows
                    if r["theorem1_status"][kind_name] == status
                ]
                points = [(x, y) for x, y in points if y is not None and low <= y <= high]
                pxs, pys = [x for x, _ in points], [y for _, y in points]
                if pxs:
                    (marks,) = ax.plot(
                        pxs,
                        pys,
                        linestyle="none",
                        marker=status_marker,
                        markersize=7,
                        color=colour,
                        markerfacecolor="white" if status == "vacuous" else colour,
                        gid=f"{name}/{status}/{tag}",
                    )
                    marks.set_transform(line.get_transform())
        off_scale_arrows(
            ax, xs, ys, low, high, colour=colour, gid=f"off_scale/{name}/{tag}",
            shift_points=shift,
        )  # fmt: skip
    axis_low, axis_high = axis_limits
    for gid, start, stop in (("above", high, axis_high), ("below", axis_low, low)):
        if stop > start:  # the band of the off-scale arrows, shaded, without ticks
            ax.axhspan(
                start, stop, color="0.93", zorder=0, linewidth=0, gid=f"off_scale_band/{gid}"
            )
    ax.set_ylim(axis_low, axis_high)
    ticks = [t for t in ax.yaxis.get_major_locator().tick_values(low, high) if low <= t <= high]
    ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
    ax.set_title(layout.titles[tag])
    layout.format_axis(ax)


def _success_panel(ax, layout: _Layout, tag: str, rows: list[dict]) -> None:
    """Identification success of one panel: Bayes-optimal with its band, the attacks,
    the DP bound on any attack, chance ``1/N``."""
    xs_all = layout.xs(rows)
    known = [r for r in rows if r["bayes_success"] is not None]
    attacks = [a for a in _ATTACK_MARKERS if a in rows[0]["attack_success"]]
    count = 1 + len(attacks)
    ax.fill_between(
        layout.xs(known),
        [r["bayes_success_ci"][0] for r in known],
        [r["bayes_success_ci"][1] for r in known],
        color=COLOURS["bayes"],
        alpha=0.2,
        linewidth=0,
        gid=f"bayes_success_ci/{tag}",
    )
    # the Bayes success is None where the exact leakage is only bracketed (B > 1, many N)
    (line,) = ax.plot(
        layout.xs(known),
        [r["bayes_success"] for r in known],
        linestyle=KIND_STYLES["value"],
        marker="o",
        color=COLOURS["bayes"],
        label="Bayes-optimal (95% CI band)",
        gid=f"bayes_success/{tag}",
    )
    dodge(ax, line, 0, count)
    for index, attack in enumerate(attacks, start=1):
        (line,) = ax.plot(
            xs_all,
            [r["attack_success"][attack] for r in rows],
            linestyle=KIND_STYLES["value"],
            marker=_ATTACK_MARKERS[attack],
            color=COLOURS[attack],
            label=f"{_ATTACK_LABELS[attack]} attack",
            gid=f"attack_success_{attack}/{tag}",
        )
        dodge(ax, line, index, count)
    xs, ys = _finite(xs_all, [r["dp_success_bound"] for r in rows])
    ax.plot(  # on top: a bound of 1 coincides with an attack that always succeeds
        xs,
        ys,
        zorder=5,
        linestyle=KIND_STYLES["upper"],
        marker="_" if layout.single else "",
        markersize=14,
        color=COLOURS["dp_bound"],
        label="DP bound on any attack (Hayes et al. 2023)",
        gid=f"dp_success_bound/{tag}",
    )
    secrets_log2 = rows[0].get("secrets_log2", math.log2(rows[0]["candidates"]))
    ax.plot(
        xs_all,
        [2.0**-secrets_log2] * len(xs_all),
        color=COLOURS["chance"],
        linewidth=1,
        marker="_" if layout.single else "",
        markersize=14,
        label="chance 1/N",
        gid=f"chance/{tag}",
    )
    ax.set_ylim(-0.03, 1.03)
    ax.set_title(f"identification, {layout.titles[tag]}")
    layout.format_axis(ax)


def _theorem1_samples_panel(part, records: Sequence[dict]) -> list:
    """Theorem 1 (published, corrected) against the sample size behind ``d*``/``Delta``,
    beside the exact leakage and the ceiling it cannot pass: on the bound's scale above, on
    the leakage's scale (0 to a little above the ceiling) below, where the bound's points
    beyond it are left out. Draws into the subfigure ``part``; returns legend handles."""
    from matplotlib.lines import Line2D

    per_p: dict[float, dict] = {}
    for record in sorted(records, key=lambda r: (r["p"], r["noise_std"])):
        per_p.setdefault(record["p"], record)
    sizes = sorted(
        {row["stats_samples"] for r in per_p.values() for row in r["theorem1_by_samples"]}
    )
    markers = dict(zip(per_p, MARKERS, strict=False))
    low, high = bits_data_range(records)
    full, zoom = part.subplots(2, 1, sharex=True, height_ratios=(2, 1.2))
    for ax, prefix in ((full, ""), (zoom, "zoom/")):
        for p, record in per_p.items():
            rows = record["theorem1_by_samples"]
            ns = [row["stats_samples"] for row in rows]
            for kind in ("published", "corrected"):
                xs, ys = _finite(ns, [row[f"theorem1_{kind}_bits"] for row in rows])
                if prefix:  # the zoom leaves out what it cannot show
                    ys = [y if low <= y <= high else math.nan for y in ys]
                ax.plot(
                    xs,
                    ys,
                    linestyle=KIND_STYLES["upper"],
                    marker=markers[p],
                    color=COLOURS[f"theorem1_{kind}"],
                    gid=f"{prefix}theorem1_by_samples_{kind}/p={p:g}",
                )
            if record["exact_bits"] is not None:
                ax.plot(
                    [sizes[0], sizes[-1]],
                    [record["exact_bits"]] * 2,
                    linestyle=KIND_STYLES["value"],
                    marker=markers[p],
                    color=COLOURS["exact"],
                    zorder=4,
                    gid=f"{prefix}theorem1_by_samples_exact/p={p:g}",
                )
        ceiling = records[0]["ceiling_bits"]
        ax.plot(
            [sizes[0], sizes[-1]],
            [ceiling, ceiling],
            color=COLOURS["ceiling"],
            linewidth=6,
            alpha=0.45,
            solid_capstyle="butt",
            zorder=1,
            gid=f"{prefix}theorem1_by_samples_ceiling",
        )
        ax.axhline(0, color="0.3", linewidth=0.8, zorder=0)
    full.set_xscale("log", base=2)
    zoom.set_xticks(sizes, [str(n) for n in sizes])
    zoom.set_ylim(low, high)
    s = min(r["noise_std"] for r in per_p.values())
    full.set(
        ylabel="bits per round", title=f"Theorem 1 moves with n; the leakage cannot (s = {s:g})"
    )
    zoom.set(
        xlabel="per-sample gradients n behind d* and Delta",
        ylabel="bits (zoom)",
    )
    handles = [
        Line2D([], [], color=COLOURS[f"theorem1_{kind}"], linestyle="--", label=label)
        for kind, label in _THEOREM1.items()
    ]
    handles += [
        Line2D([], [], color=COLOURS["exact"], label="exact I(X; Y)"),
        Line2D([], [], color=COLOURS["ceiling"], linewidth=6, alpha=0.45, label="ceiling log2 N"),
    ]
    handles += [
        Line2D([], [], color="0.3", marker=m, linestyle="none", label=f"p = {p:g}")
        for p, m in markers.items()
    ]
    return handles


def _estimates_panel(ax, records: Sequence[dict]) -> list:
    """KSG, MINE and H-MINE against the exact value of the same (small-M) study, per s > 0;
    returns legend handles."""
    from matplotlib.lines import Line2D

    groups = {s: rows for s, rows in _by_noise(records).items() if s > 0}
    markers = dict(zip(groups, MARKERS, strict=False))
    names = list(_ESTIMATORS)
    for s, rows in groups.items():
        ps = [r["p"] for r in rows]
        tag = f"s={s:g}"
        ax.plot(
            ps,
            [r["exact_bits"] for r in rows],
            linestyle=KIND_STYLES["value"],
            marker=markers[s],
            color=COLOURS["exact"],
            gid=f"estimator_panel/exact/{tag}",
        )
        ax.fill_between(
            ps,
            [r["exact_ci_bits"][0] for r in rows],
            [r["exact_ci_bits"][1] for r in rows],
            color=COLOURS["exact"],
            alpha=0.2,
            linewidth=0,
            gid=f"estimator_panel/exact_ci/{tag}",
        )
        for index, name in enumerate(names):
            found = [(r["p"], (r.get("estimates_bits") or {}).get(name)) for r in rows]
            found = [(p, e) for p, e in found if e is not None and math.isfinite(e["bits"])]
            if not found:
                continue
            xs, ys = [p for p, _ in found], [e["bits"] for _, e in found]
            errors = [
                [0, 0]
                if e["ci_bits"] is None
                else [e["bits"] - e["ci_bits"][0], e["ci_bits"][1] - e["bits"]]
                for _, e in found
            ]
            container = ax.errorbar(
                xs,
                ys,
                yerr=list(zip(*errors, strict=True)),
                fmt=markers[s],
                color=COLOURS[name],
                markersize=6,
                capsize=2,
            )
            container.lines[0].set_gid(f"estimator_panel/{name}/{tag}")
            for artist in (container.lines[0], *container.lines[2]):
                dodge(ax, artist, index, len(names), step_points=4.0)
    ax.set_xticks(sorted({r["p"] for r in records}))
    ax.set(
        xlabel="base pruning rate p",
        ylabel="I(X; Y), bits",
        title=f"estimators against the exact value, M = {records[0]['candidates']}",
    )
    handles = [Line2D([], [], color=COLOURS["exact"], label="exact (95% CI band)")]
    handles += [
        Line2D([], [], color=COLOURS[name], marker="s", linestyle="none", label=f"{label} (95% CI)")
        for name, label in _ESTIMATORS.items()
    ]
    handles += [
        Line2D([], [], color="0.3", marker=m, linestyle="none", label=f"s = {s:g}")
        for s, m in markers.items()
    ]
    return handles


def _bits_legend(axes) -> dict:
    """The bits panels' legend: each labelled series once, the status markers, the arrows."""
    from matplotlib.lines import Line2D

    handles: dict[str, object] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    for status, marker in STATUS_MARKERS.items():
        handles[f"Theorem 1 {status}"] = Line2D(
            [],
            [],
            linestyle="none",
            marker=marker,
            markersize=7,
            color="0.3",
            markerfacecolor="white" if status == "vacuous" else "0.3",
        )
    handles["off scale (value printed)"] = Line2D(
        [], [], linestyle="none", marker="^", markersize=7, color="0.3"
    )
    return handles


def _legend(container, handles: list, labels: list | None = None, *, columns: int) -> None:
    """``container``'s legend below its panels, outside the data."""
    if labels is None:
        labels = [h.get_label() for h in handles]
    container.legend(
        handles,
        labels,
        loc="outside lower center",
        ncols=columns,
        frameon=False,
        handlelength=2.5,
        columnspacing=1.2,
    )


def plot_leakage_bits(records: Sequence[dict], estimate_records: Sequence[dict] = ()):
    """Bits against ``p`` (one panel per noise ``s``; against ``s`` when there is one ``p``),
    identification success below, then Theorem 1 against ``n`` and the estimators against
    the exact value.

    ``records``: dicts with the fields of :func:`sims.experiments.leakage.run_leakage`
    (``p``, ``noise_std``, ``candidates``, ``ceiling_bits``, ``exact_bits``,
    ``exact_ci_bits``, ``gaussian_bound_bits``, ``theorem1_{published,corrected}_bits``,
    ``theorem1_status``, ``fano_lower_bits``, ``bayes_success``, ``bayes_success_ci``,
    ``dp_success_bound``, ``attack_success``, optionally ``dataset``,
    ``theorem1_by_samples`` and ``estimates_bits``). ``estimate_records``: records of a
    second study (typically small ``M``, where the estimators can work) whose
    ``estimates_bits`` are drawn against their own exact value; empty: no such panel.

    Encodings (:mod:`sims.plots.style`): colour is the method (exact blue, Gaussian bound
    orange, Theorem 1 red as published and purple corrected, SGI green, GI olive, DP bound
    brown), line style the kind (solid a value, dashed an upper bound or claim, dotted a
    lower bound), the ceiling ``log2 N`` a light band behind the exact value.

    Top row, bits on a linear axis from 0 to a little above the ceiling: the exact
    ``I(X; Y)`` with its confidence band, the Gaussian-channel bound (``s > 0``), Theorem 1
    as published and corrected with a marker per point for its status (filled circle
    valid, hollow triangle vacuous, cross violated), the Fano lower bounds from SGI's and
    GI's identification error, the estimators' values where the records have them; a
    value beyond the axis is an arrow on its edge with the value printed. Second row, per
    panel: the Bayes-optimal success with its band, SGI's and GI's success, the DP bound on
    any attack's success, chance ``1/N``. Last row: Theorem 1 against the sample size
    behind ``d*`` and ``Delta`` beside the exact leakage (when the records have
    ``theorem1_by_samples``); the estimators with their intervals against the exact value
    of ``estimate_records``. Points whose value is None, NaN or infinite are left out;
    series that coincide are moved sideways by a few points. Returns the figure.
    """
    import matplotlib.pyplot as plt

    if not records:
        raise ValueError("The 'records' parameter of plot_leakage_bits must not be empty.")
    use_style()
    layout = _Layout(records)
    limits = bits_data_range(records)
    axis_limits = _bits_limits(records)
    lower = []
    if all(r.get("theorem1_by_samples") for r in records):
        lower.append(lambda part: _theorem1_samples_panel(part, records))
    if estimate_records:
        lower.append(lambda part: _estimates_panel(part.subplots(), estimate_records))
    n = len(layout.panels)
    columns = min(n, _COLUMNS)
    panel_rows = math.ceil(n / columns)
    heights = [2.7 * panel_rows + 1.1, 2.0 * panel_rows + 0.7]
    if lower:
        heights.append(3.4 + 0.9)
    fig = plt.figure(figsize=(TEXT_WIDTH, sum(heights) + 0.5), layout="constrained")
    subfigs = fig.subfigures(len(heights), 1, height_ratios=heights)

    bit_axes = subfigs[0].subplots(panel_rows, columns, squeeze=False, sharey=True).ravel()
    success_axes = subfigs[1].subplots(panel_rows, columns, squeeze=False, sharey=True).ravel()
    for i, (tag, rows) in enumerate(layout.panels.items()):
        _bits_panel(bit_axes[i], layout, tag, rows, limits, axis_limits)
        _success_panel(success_axes[i], layout, tag, rows)
    for ax in (*bit_axes[n:], *success_axes[n:]):
        ax.set_visible(False)
    for r in range(panel_rows):
        bit_axes[r * columns].set_ylabel("bits per round")
        success_axes[r * columns].set_ylabel("P(target identified)")
    legend = _bits_legend(bit_axes[:n])
    _legend(subfigs[0], list(legend.values()), list(legend), columns=3)
    handles, labels = success_axes[0].get_legend_handles_labels()
    _legend(subfigs[1], handles, labels, columns=3)
    if lower:
        parts = subfigs[2].subfigures(1, len(lower)) if len(lower) > 1 else [subfigs[2]]
        for part, draw in zip(parts, lower, strict=True):
            legend = draw(part)
            _legend(part, legend, columns=2)

    m, b = records[0]["candidates"], records[0].get("batch_size", 1)
    noun = _NOUNS.get(records[0].get("dataset", "digits"), "image")
    secret = f"one target {noun}" if b == 1 else f"a target batch of B = {b} {noun}s"
    fig.suptitle(
        wrap(
            f"Leakage of {secret} drawn from M = {m} candidates through one pruned FL "
            "release, in bits",
            80,
        )
    )
    return fig


def leakage_reconstruction_rows(config, directory):
    """The grid of :func:`sims.experiments.leakage.run_leakage` run with ``config`` (a
    :class:`~sims.experiments.leakage.LeakageConfig`) from the files it kept in
    ``directory``: the targets' images and, per (p, s) in grid order, each attack's
    reconstructions of them (``config.attacks``: SGI then GI, or SGI unaware then aware),
    labelled ``"SGI p=0.5 s=0.01"`` (:func:`sims.plots.reconstructions.shared_original_rows`);
    None when none was kept."""
    from pruneleak.sims.experiments.leakage import reconstruction_key
    from pruneleak.sims.plots.reconstructions import kept_rows

    fp = config.fingerprint()
    labelled = [
        (f"{_ATTACK_LABELS[attack]} p={p:g} s={s:g}", reconstruction_key(fp, p, s, attack))
        for p in config.rates
        for s in config.noise_stds
        for attack in config.attacks
    ]
    return kept_rows(directory, labelled)
