"""Bounds and attacks on one axis: the figure of the leakage study's records (issue 12).

:func:`plot_leakage_bits` draws the records of :func:`sims.experiments.leakage.run_leakage`
(one per pruning rate ``p`` and noise ``s``), every quantity read from the records and
nothing recomputed: one panel per ``s`` of bits versus ``p`` and, below, one panel of
identification success, one of Theorem 1 against the sample size behind its ``d*`` and
``Delta``, and one of the estimators against the exact value (when given). Every drawn
line carries a ``gid`` naming the record field it shows (``"exact/s=0.01"``,
``"theorem1_published/vacuous/s=0"``, ``"theorem1_by_samples_corrected/p=0.5"``,
``"estimator_panel/mine/s=0.01"``, ...), so a test can check the drawn numbers against
the records.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: Marker of a Theorem 1 point per status of :func:`bounds.leakage.theorem1_status`.
STATUS_MARKERS = {"valid": "o", "vacuous": "^", "violated": "X"}
#: (record field, label, colour, line style, marker) of the curves of a bits panel.
_CURVES = (
    ("ceiling_bits", "ceiling log2 N (N = C(M, B) batches)", "black", "-", ""),
    ("exact_bits", "exact I(X; Y) (95% CI band)", "tab:blue", "-", "o"),
    ("gaussian_bound_bits", "Gaussian-channel bound (s > 0)", "tab:orange", "--", "d"),
)
#: (colour, line style, marker) of each attack's Fano bound and success curves, by the
#: attack's name in the records (:mod:`sims.experiments.leakage.attacks`).
_ATTACKS = {
    "sgi": ("tab:green", ":", "v"),
    "gi": ("tab:olive", "-.", "^"),
    "sgi_aware": ("tab:cyan", "--", "s"),
}
_THEOREM1 = {
    "published": ("Theorem 1 as published", "tab:red", "-"),
    "corrected": ("Theorem 1 corrected", "tab:purple", "--"),
}
_ATTACK_LABELS = {"sgi": "SGI", "gi": "GI", "sgi_aware": "defense-aware SGI"}
_ESTIMATORS = {"ksg": "KSG", "mine": "MINE", "hmine": "H-MINE"}


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
    curves = [
        ([r[field] for r in rows], label, colour, style, marker, field.removesuffix("_bits"))
        for field, label, colour, style, marker in _CURVES
    ]
    curves += [
        (
            [r["fano_lower_bits"][attack] for r in rows],
            f"Fano lower bound from {_ATTACK_LABELS[attack]}",
            colour,
            style,
            marker,
            f"fano_{attack}",
        )
        for attack, (colour, style, marker) in _ATTACKS.items()
        if attack in rows[0]["fano_lower_bits"]
    ]
    for values, label, colour, style, marker, name in curves:
        xs, ys = _finite(ps, values)
        if xs:
            ax.plot(
                xs,
                ys,
                linestyle=style,
                marker=marker,
                color=colour,
                label=label,
                gid=f"{name}/{tag}",
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


def _legend_below(ax, handles: list, *, columns: int) -> None:
    """A compact legend under the panel (colour and line style explained separately)."""
    ax.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.15),
        ncol=columns,
        fontsize="x-small",
        frameon=False,
    )


def _success_panel(ax, groups: dict[float, list[dict]]) -> None:
    import seaborn as sns

    colours = sns.color_palette("dark", n_colors=len(groups))
    for colour, (s, rows) in zip(colours, groups.items(), strict=True):
        ps = [r["p"] for r in rows]
        tag = f"s={s:g}"
        # the Bayes success is None where the exact leakage is only bracketed (B > 1, many N)
        known = [r for r in rows if r["bayes_success"] is not None]
        ax.plot(
            [r["p"] for r in known],
            [r["bayes_success"] for r in known],
            "o-",
            color=colour,
            label=f"Bayes-optimal, s = {s:g}",
            gid=f"bayes_success/{tag}",
        )
        ax.fill_between(
            [r["p"] for r in known],
            [r["bayes_success_ci"][0] for r in known],
            [r["bayes_success_ci"][1] for r in known],
            color=colour,
            alpha=0.2,
            linewidth=0,
            gid=f"bayes_success_ci/{tag}",
        )
        ax.plot(
            ps,
            [r["dp_success_bound"] for r in rows],
            linestyle=(0, (1, 1)),
            color=colour,
            linewidth=2.5,
            alpha=0.7,
            gid=f"dp_success_bound/{tag}",
        )
        for attack in rows[0]["attack_success"]:
            _, style, marker = _ATTACKS[attack]
            ax.plot(
                ps,
                [r["attack_success"][attack] for r in rows],
                linestyle=style,
                marker=marker,
                color=colour,
                label=f"{_ATTACK_LABELS[attack]} attack, s = {s:g}",
                gid=f"attack_success_{attack}/{tag}",
            )
    first = next(iter(groups.values()))
    ps = sorted({r["p"] for rows in groups.values() for r in rows})
    secrets_log2 = first[0].get("secrets_log2", math.log2(first[0]["candidates"]))
    ax.plot(
        ps,
        [2.0**-secrets_log2] * len(ps),
        color="grey",
        linewidth=1,
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
            ("DP bound, any attack (Hayes et al. 2023)", (0, (1, 1)), ""),
            ("SGI attack", "--", "v"),
            ("GI attack", ":", "^"),
        )
    ]
    legend.append(Line2D([], [], color="grey", linewidth=1, label="chance 1/N"))
    _legend_below(ax, legend, columns=2)


def _theorem1_samples_panel(ax, records: Sequence[dict]) -> None:
    """Theorem 1 (published, corrected) against the sample size behind ``d*``/``Delta``."""
    import seaborn as sns

    per_p = {}
    for record in sorted(records, key=lambda r: (r["p"], r["noise_std"])):
        per_p.setdefault(record["p"], record["theorem1_by_samples"])
    colours = sns.color_palette("flare", n_colors=len(per_p))
    sizes = sorted({row["stats_samples"] for rows in per_p.values() for row in rows})
    for colour, (p, rows) in zip(colours, per_p.items(), strict=True):
        ns = [row["stats_samples"] for row in rows]
        for kind, (style, marker) in {"published": ("-", "o"), "corrected": ("--", "s")}.items():
            xs, ys = _finite(ns, [row[f"theorem1_{kind}_bits"] for row in rows])
            ax.plot(
                xs,
                ys,
                linestyle=style,
                marker=marker,
                color=colour,
                gid=f"theorem1_by_samples_{kind}/p={p:g}",
            )
    ceiling = records[0]["ceiling_bits"]
    ax.plot(
        [sizes[0], sizes[-1]],
        [ceiling, ceiling],
        color="black",
        gid="theorem1_by_samples_ceiling",
    )
    ax.set_xscale("log", base=2)
    ax.set_yscale("symlog", linthresh=1.0)
    ax.set(
        xlabel="per-sample gradients n behind d* and Delta",
        ylabel="Theorem 1, bits (symlog)",
        title="Theorem 1 moves with n; the leakage cannot",
    )
    from matplotlib.lines import Line2D

    # compact legend below the panel: colour is p, line style is the form of the bound
    legend = [
        Line2D([], [], color=c, marker="s", linestyle="none", label=f"p = {p:g}")
        for c, p in zip(colours, per_p, strict=True)
    ]
    legend += [
        Line2D([], [], color="dimgrey", linestyle="-", marker="o", label="as published"),
        Line2D([], [], color="dimgrey", linestyle="--", marker="s", label="corrected"),
        Line2D([], [], color="black", label="ceiling log2 N"),
    ]
    _legend_below(ax, legend, columns=3)


def _estimates_panel(ax, records: Sequence[dict]) -> None:
    """KSG, MINE and H-MINE against the exact value of the same (small-M) study, per s > 0."""
    import seaborn as sns

    groups = {s: rows for s, rows in _by_noise(records).items() if s > 0}
    colours = sns.color_palette("dark", n_colors=max(1, len(groups)))
    markers = {"ksg": "P", "mine": "D", "hmine": "*"}
    for colour, (s, rows) in zip(colours, groups.items(), strict=False):
        ps = [r["p"] for r in rows]
        tag = f"s={s:g}"
        ax.plot(
            ps,
            [r["exact_bits"] for r in rows],
            "-",
            color=colour,
            gid=f"estimator_panel/exact/{tag}",
        )
        ax.fill_between(
            ps,
            [r["exact_ci_bits"][0] for r in rows],
            [r["exact_ci_bits"][1] for r in rows],
            color=colour,
            alpha=0.2,
            linewidth=0,
            gid=f"estimator_panel/exact_ci/{tag}",
        )
        for name, marker in markers.items():
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
                fmt=marker,
                color=colour,
                markersize=7,
                capsize=2,
            )
            container.lines[0].set_gid(f"estimator_panel/{name}/{tag}")
    from matplotlib.lines import Line2D

    legend = [
        Line2D([], [], color=c, marker="s", linestyle="none", label=f"s = {s:g}")
        for c, s in zip(colours, groups, strict=False)
    ]
    legend.append(Line2D([], [], color="dimgrey", label="exact (95% CI band)"))
    legend += [
        Line2D([], [], color="dimgrey", marker=marker, linestyle="none", label=label)
        for name, marker in markers.items()
        for label in [_ESTIMATORS[name] + " (95% CI)"]
    ]
    m = records[0]["candidates"]
    ax.legend(handles=legend, fontsize="x-small", ncol=2, loc="best")
    ax.set(
        xlabel="base pruning rate p",
        ylabel="I(X; Y), bits",
        title=f"Estimators against the exact value, M = {m}",
    )


def plot_leakage_bits(records: Sequence[dict], estimate_records: Sequence[dict] = ()):
    """Bits versus ``p``, one panel per noise ``s``; below, success, Theorem 1 against ``n``,
    and the estimators against the exact value.

    ``records``: dicts with the fields of :func:`sims.experiments.leakage.run_leakage`
    (``p``, ``noise_std``, ``candidates``, ``ceiling_bits``, ``exact_bits``,
    ``exact_ci_bits``, ``gaussian_bound_bits``, ``theorem1_{published,corrected}_bits``,
    ``theorem1_status``, ``fano_lower_bits``, ``bayes_success``, ``bayes_success_ci``,
    ``dp_success_bound``, ``attack_success``, optionally ``theorem1_by_samples`` and
    ``estimates_bits``). ``estimate_records``: records of a second study (typically
    small ``M``, where the estimators can work) whose ``estimates_bits`` are drawn
    against their own exact value; empty: no such panel.

    Top row, bits (symlog y: linear in [-1, 1], logarithmic beyond, so Theorem 1's
    thousands of bits, its negative corrected values and the exact value's at most
    ``log2 M`` share one axis): the ceiling, the exact ``I(X; Y)`` with its confidence band,
    the Gaussian-channel bound (``s > 0``), Theorem 1 as published and corrected with a
    marker per point for its status (filled circle valid, hollow triangle vacuous, cross
    violated), the Fano lower bounds from SGI's and GI's identification error, and the
    estimators' values where the records have them. Bottom row: the Bayes-optimal
    success with its band beside the DP bound on any attack's success, SGI's and GI's
    success, per ``s``, and chance ``1/N``; Theorem 1 against the sample size behind
    ``d*`` and ``Delta`` (when the records have ``theorem1_by_samples``); the estimators
    with their intervals against the exact value of ``estimate_records``. Points whose
    value is None, NaN or infinite are left out. Returns the figure.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns
    from matplotlib.lines import Line2D

    if not records:
        raise ValueError("The 'records' parameter of plot_leakage_bits must not be empty.")
    groups = _by_noise(records)
    sns.set_theme(style="whitegrid", context="notebook")
    lower = [_success_panel]
    if all(r.get("theorem1_by_samples") for r in records):
        lower.append(lambda ax, _: _theorem1_samples_panel(ax, records))
    if estimate_records:
        lower.append(lambda ax, _: _estimates_panel(ax, estimate_records))
    n = len(groups)
    columns = max(n, len(lower))
    fig = plt.figure(figsize=(4.6 * columns + 3.2, 10.5))
    grid = fig.add_gridspec(2, columns)
    bit_axes = [fig.add_subplot(grid[0, 0])]
    bit_axes += [fig.add_subplot(grid[0, i], sharey=bit_axes[0]) for i in range(1, n)]
    for ax, (s, rows) in zip(bit_axes, groups.items(), strict=True):
        _bits_panel(ax, s, rows)
    bit_axes[0].set_ylabel("bits per round (symlog)")
    for i, draw in enumerate(lower):
        draw(fig.add_subplot(grid[1, i]), groups)

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
        loc="upper left",
        bbox_to_anchor=(1 - 3.0 / (4.6 * columns + 3.2), 0.9),
        fontsize="small",
        frameon=False,
    )
    m, b = records[0]["candidates"], records[0].get("batch_size", 1)
    secret = "one target digit" if b == 1 else f"a target batch of B = {b} digits"
    fig.suptitle(
        f"Leakage of {secret} drawn from M = {m} candidates through one pruned FedSGD "
        "update, in bits"
    )
    fig.subplots_adjust(
        left=0.05,
        right=1 - 3.2 / (4.6 * columns + 3.2),
        bottom=0.13,
        top=0.93,
        wspace=0.3,
        hspace=0.35,
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
