"""Bounds and attacks on one axis: the figure of the leakage study's records (issue 12).

:func:`plot_leakage_bits` draws the records of :func:`sims.experiments.leakage.run_leakage`
(one per pruning rate ``p`` and noise ``s``), every quantity read from the records and
nothing recomputed: one panel per ``s`` of bits versus ``p`` and one panel of
identification success. Every drawn line carries a ``gid`` naming the record field it
shows (``"exact/s=0.01"``, ``"theorem1_published/vacuous/s=0"``, ...), so a test can
check the drawn numbers against the records.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: Marker of a Theorem 1 point per status of :func:`bounds.leakage.theorem1_status`.
STATUS_MARKERS = {"valid": "o", "vacuous": "^", "violated": "X"}
#: (record field, label, colour, line style, marker) of the curves of a bits panel.
_CURVES = (
    ("ceiling_bits", "ceiling log2 M", "black", "-", ""),
    ("exact_bits", "exact I(X; Y) (95% CI band)", "tab:blue", "-", "o"),
    ("gaussian_bound_bits", "Gaussian-channel bound (s > 0)", "tab:orange", "--", "d"),
    ("fano_sgi", "Fano lower bound from SGI", "tab:green", ":", "v"),
    ("fano_gi", "Fano lower bound from GI", "tab:olive", "-.", "v"),
)
_THEOREM1 = {
    "published": ("Theorem 1 as published", "tab:red", "-"),
    "corrected": ("Theorem 1 corrected", "tab:purple", "--"),
}
_ESTIMATORS = {"ksg": "KSG", "mine": "MINE", "hmine": "H-MINE"}


def _value(record: dict, field: str) -> float | None:
    if field.startswith("fano_"):
        return record["fano_lower_bits"][field.removeprefix("fano_")]
    return record[field]


def _finite(xs: Sequence[float], ys: Sequence[float | None]) -> tuple[list, list]:
    """The points whose value is a finite number (None, NaN and infinities are left out)."""
    kept = [(x, y) for x, y in zip(xs, ys, strict=True) if y is not None and math.isfinite(y)]
    return [x for x, _ in kept], [y for _, y in kept]


def _by_noise(records: Sequence[dict]) -> dict[float, list[dict]]:
    groups: dict[float, list[dict]] = {}
    for record in records:
        groups.setdefault(float(record["noise_std"]), []).append(record)
    return {s: sorted(groups[s], key=lambda r: r["p"]) for s in sorted(groups)}


def _bits_panel(ax, s: float, rows: list[dict]) -> None:
    ps = [r["p"] for r in rows]
    tag = f"s={s:g}"
    for field, label, colour, style, marker in _CURVES:
        xs, ys = _finite(ps, [_value(r, field) for r in rows])
        if xs:
            ax.plot(
                xs,
                ys,
                linestyle=style,
                marker=marker,
                color=colour,
                label=label,
                gid=f"{field.removesuffix('_bits')}/{tag}",
            )
    ax.fill_between(
        ps,
        [r["exact_ci_bits"][0] for r in rows],
        [r["exact_ci_bits"][1] for r in rows],
        color="tab:blue",
        alpha=0.25,
        linewidth=0,
        gid=f"exact_ci/{tag}",
    )
    for kind, (label, colour, style) in _THEOREM1.items():
        field = f"theorem1_{kind}"
        xs, ys = _finite(ps, [r[f"{field}_bits"] for r in rows])
        ax.plot(xs, ys, linestyle=style, color=colour, label=label, gid=f"{field}/{tag}")
        for status, marker in STATUS_MARKERS.items():
            points = [
                (r["p"], r[f"{field}_bits"]) for r in rows if r["theorem1_status"][kind] == status
            ]
            xs, ys = _finite([x for x, _ in points], [y for _, y in points])
            if xs:
                ax.plot(
                    xs,
                    ys,
                    linestyle="none",
                    marker=marker,
                    markersize=8,
                    color=colour,
                    markerfacecolor="white" if status == "vacuous" else colour,
                    gid=f"{field}/{status}/{tag}",
                )
    for name, label in _ESTIMATORS.items():
        estimates = [(r.get("estimates_bits") or {}).get(name) for r in rows]
        xs, ys = _finite(ps, [None if e is None else e["bits"] for e in estimates])
        if xs:
            ax.plot(
                xs,
                ys,
                linestyle="none",
                marker="+",
                markersize=9,
                label=f"{label} estimate",
                gid=f"estimate_{name}/{tag}",
            )
    ax.set_yscale("symlog", linthresh=1.0)
    title = f"noise s = {s:g}" + (" (plain FedSGD)" if s == 0 else "")
    ax.set(title=title, xlabel="base pruning rate p")


def _success_panel(ax, groups: dict[float, list[dict]]) -> None:
    import seaborn as sns

    colours = sns.color_palette("dark", n_colors=len(groups))
    for colour, (s, rows) in zip(colours, groups.items(), strict=True):
        ps = [r["p"] for r in rows]
        tag = f"s={s:g}"
        ax.plot(
            ps,
            [r["bayes_success"] for r in rows],
            "o-",
            color=colour,
            label=f"Bayes-optimal, s = {s:g}",
            gid=f"bayes_success/{tag}",
        )
        ax.fill_between(
            ps,
            [r["bayes_success_ci"][0] for r in rows],
            [r["bayes_success_ci"][1] for r in rows],
            color=colour,
            alpha=0.2,
            linewidth=0,
            gid=f"bayes_success_ci/{tag}",
        )
        for attack, (marker, style) in {"sgi": ("v", "--"), "gi": ("^", ":")}.items():
            ax.plot(
                ps,
                [r["attack_success"][attack] for r in rows],
                linestyle=style,
                marker=marker,
                color=colour,
                label=f"{attack.upper()} attack, s = {s:g}",
                gid=f"attack_success_{attack}/{tag}",
            )
    first = next(iter(groups.values()))
    ps = sorted({r["p"] for rows in groups.values() for r in rows})
    ax.plot(
        ps,
        [1 / first[0]["candidates"]] * len(ps),
        color="grey",
        linewidth=1,
        label="chance 1/M",
        gid="chance",
    )
    ax.set(
        xlabel="base pruning rate p",
        ylabel="P(target identified)",
        ylim=(-0.02, 1.02),
        title="Identification success",
    )
    # compact legend below the panel: colour is s, line style is the quantity
    from matplotlib.lines import Line2D

    legend = [
        Line2D([], [], color=c, marker="s", linestyle="none", label=f"s = {s:g}")
        for c, s in zip(colours, groups, strict=True)
    ]
    legend += [
        Line2D([], [], color="dimgrey", linestyle=style, marker=marker, label=label)
        for label, style, marker in (
            ("Bayes-optimal (95% CI band)", "-", "o"),
            ("SGI attack", "--", "v"),
            ("GI attack", ":", "^"),
        )
    ]
    legend.append(Line2D([], [], color="grey", linewidth=1, label="chance 1/M"))
    ax.legend(
        handles=legend,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.15),
        ncol=2,
        fontsize="x-small",
        frameon=False,
    )


def plot_leakage_bits(records: Sequence[dict]):
    """Bits versus ``p``, one panel per noise ``s``, and identification success versus ``p``.

    ``records``: dicts with the fields of :func:`sims.experiments.leakage.run_leakage`
    (``p``, ``noise_std``, ``candidates``, ``ceiling_bits``, ``exact_bits``,
    ``exact_ci_bits``, ``gaussian_bound_bits``, ``theorem1_{published,corrected}_bits``,
    ``theorem1_status``, ``fano_lower_bits``, ``bayes_success``, ``bayes_success_ci``,
    ``attack_success``, optionally ``estimates_bits``).

    Bits panels (symlog y: linear in [-1, 1], logarithmic beyond, so Theorem 1's
    thousands of bits, its negative corrected values and the exact value's at most
    ``log2 M`` share one axis): the ceiling, the exact ``I(X; Y)`` with its confidence band,
    the Gaussian-channel bound (``s > 0``), Theorem 1 as published and corrected with a
    marker per point for its status (filled circle valid, hollow triangle vacuous, cross
    violated), the Fano lower bounds from SGI's and GI's identification error, and the
    estimators' values where the records have them. Last panel: the Bayes-optimal
    success with its band beside SGI's and GI's success, per ``s``, and chance ``1/M``.
    Points whose value is None, NaN or infinite are left out. Returns the figure.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns
    from matplotlib.lines import Line2D

    if not records:
        raise ValueError("The 'records' parameter of plot_leakage_bits must not be empty.")
    groups = _by_noise(records)
    sns.set_theme(style="whitegrid", context="notebook")
    n = len(groups)
    fig = plt.figure(figsize=(4.4 * (n + 1), 6.0))
    bit_axes = [fig.add_subplot(1, n + 1, 1)]
    bit_axes += [fig.add_subplot(1, n + 1, i + 1, sharey=bit_axes[0]) for i in range(1, n)]
    for ax, (s, rows) in zip(bit_axes, groups.items(), strict=True):
        _bits_panel(ax, s, rows)
    bit_axes[0].set_ylabel("bits per round (symlog)")
    _success_panel(fig.add_subplot(1, n + 1, n + 1), groups)

    handles: dict[str, object] = {}
    for ax in bit_axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    for status, marker in STATUS_MARKERS.items():
        handles[f"Theorem 1 {status}"] = Line2D(
            [],
            [],
            linestyle="none",
            marker=marker,
            markersize=8,
            color="dimgrey",
            markerfacecolor="white" if status == "vacuous" else "dimgrey",
        )
    fig.legend(
        list(handles.values()),
        list(handles),
        loc="lower center",
        bbox_to_anchor=(n / (n + 1) / 2, 0),
        ncol=4,
        fontsize="small",
        frameon=False,
    )
    m = records[0]["candidates"]
    fig.suptitle(
        f"Leakage of one target digit drawn from M = {m} candidates through one pruned "
        "FedSGD update, in bits"
    )
    fig.subplots_adjust(left=0.06, right=0.99, bottom=0.3, top=0.86, wspace=0.3)
    return fig
