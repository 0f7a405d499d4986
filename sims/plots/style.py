"""One style for every figure: drawn at the size it is printed, one encoding per meaning.

A figure is drawn at most :data:`TEXT_WIDTH` inches wide (a page's text width) with every
text at least :data:`MIN_FONT_PT` points, so that it reads at 100 % in print; a figure
that needs more room grows downwards (more rows), never sideways. :func:`use_style` sets
these sizes (seaborn's white grid, no relative font sizes below the base).

Encodings, the same in every figure of :mod:`sims.plots`:

* colour = method or scheme (:data:`COLOURS`: the exact value, each bound, each attack,
  each estimator; a pruning scheme by :func:`scheme_colours`);
* line style = kind of quantity (:data:`KIND_STYLES`): solid for a value (exact,
  measured, achieved), dashed for an upper bound or a claimed value, dotted for a lower
  bound; a thick light band for the ceiling ``log2 N`` behind everything else, a thin grey
  line for chance;
* marker = the secondary variable of a panel (a pruning rate, a noise level), where
  colour and line style are taken.

On an axis in bits (linear, never logarithmic), a bound far off the scale of the leakage is
drawn as an arrow on the axis' edge with its value printed (:func:`off_scale_arrows`);
series that coincide are moved sideways by a few points (:func:`dodge`), which keeps
their data (a test reads the records' values back from the lines).

:func:`readability_problems` lists what breaks these rules in a drawn figure (width,
font sizes, missing y labels, legends over the data); the tests of each figure call it.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence

#: Widest figure, in inches (a page's text width); a test allows :data:`MAX_WIDTH`.
TEXT_WIDTH = 7.0
#: Widest drawn extent a test accepts, in inches (the tight bounding box when saved).
MAX_WIDTH = 7.5
#: Smallest font size of any text, in points, at the printed size.
MIN_FONT_PT = 8.0
#: matplotlib settings of :func:`use_style` (font sizes in points, none below 8).
RC = {
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "legend.title_fontsize": 8,
    "figure.titlesize": 10,
    "lines.linewidth": 1.4,
    "lines.markersize": 5,
    "axes.titlepad": 4,
}
#: Colour of each method (the exact value, bounds, attacks, estimators).
COLOURS = {
    "exact": "tab:blue",
    "bayes": "tab:blue",
    "ceiling": "0.55",
    "gaussian_bound": "tab:orange",
    "theorem1_published": "tab:red",
    "theorem1_corrected": "tab:purple",
    "dp_bound": "tab:brown",
    "sgi": "tab:green",
    "gi": "tab:olive",
    "sgi_aware": "teal",
    "ksg": "tab:pink",
    "mine": "tab:cyan",
    "hmine": "darkgoldenrod",
    "chance": "0.45",
}
#: Line style of each kind of quantity.
KIND_STYLES = {"value": "-", "upper": "--", "lower": ":", "reference": "-"}
#: Markers of a panel's secondary variable (p or s), in order.
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "*", "<", ">")


def use_style() -> None:
    """seaborn's white grid with the print sizes of :data:`RC` (global, as seaborn's)."""
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="paper", rc=RC)


def scheme_colours(schemes: Sequence[str]) -> dict[str, tuple]:
    """One colour per scheme, in the order of :func:`sims.pruning.schemes.available_schemes`
    when ``schemes`` is that list (so a scheme has the same colour in every figure)."""
    import seaborn as sns

    return dict(zip(schemes, sns.color_palette("colorblind", n_colors=len(schemes)), strict=True))


def wrap(text: str, width: int) -> str:
    """``text`` broken at spaces into lines of at most ``width`` characters (never mid-word)."""
    return "\n".join(textwrap.wrap(text, width, break_long_words=False)) or text


def compact(value: float) -> str:
    """A short label of a number for an arrow: ``0.5``, ``12``, ``-617``, ``1.2k``, ``173k``,
    ``3.4M``, ``2e+09``."""
    magnitude = abs(value)
    for scale, suffix in ((1e6, "M"), (1e3, "k")):
        if 1e9 > magnitude >= scale:
            scaled = value / scale
            return f"{scaled:.1f}{suffix}" if abs(scaled) < 10 else f"{scaled:.0f}{suffix}"
    if magnitude >= 1e9:
        return f"{value:.0e}"
    if magnitude >= 10:
        return f"{value:.0f}"
    return f"{value:.2g}"


def dodge(ax, line, index: int, count: int, *, step_points: float = 3.0) -> None:
    """Move ``line`` sideways by ``(index - (count - 1) / 2) * step_points`` points, so that
    series with equal values stay visible; its data are unchanged."""
    from matplotlib.transforms import offset_copy

    shift = (index - (count - 1) / 2) * step_points
    if shift:
        line.set_transform(offset_copy(ax.transData, fig=ax.figure, x=shift, units="points"))


def off_scale_arrows(
    ax,
    xs: Sequence[float],
    ys: Sequence[float | None],
    low: float,
    high: float,
    *,
    colour,
    gid: str,
    shift_points: float = 0.0,
) -> list[tuple[float, float]]:
    """Mark the points of ``(xs, ys)`` outside ``[low, high]`` (the data's range; the axis
    should leave a band beyond it for them) as arrows on the axis' top (above) or bottom
    (below) edge, each with its value printed beside it (rotated, in ``colour``). The
    arrows are two lines with gids ``"<gid>/above"`` and ``"<gid>/below"`` whose x data
    are the points' x (their y is the edge, in axes coordinates). Returns the off-scale
    ``(x, y)`` pairs."""
    from matplotlib.transforms import blended_transform_factory, offset_copy

    blended = blended_transform_factory(ax.transData, ax.transAxes)

    def shifted(points_up: float):
        return offset_copy(blended, fig=ax.figure, x=shift_points, y=points_up, units="points")

    found = []
    for side, edge, marker, direction, align in (
        ("above", 1.0, "^", -1.0, "top"),
        ("below", 0.0, "v", 1.0, "bottom"),
    ):
        points = [
            (x, y)
            for x, y in zip(xs, ys, strict=True)
            if y is not None and math.isfinite(y) and (y > high if side == "above" else y < low)
        ]
        if not points:
            continue
        ax.plot(  # inside the axes, on its edge
            [x for x, _ in points],
            [edge] * len(points),
            linestyle="none",
            marker=marker,
            markersize=6,
            color=colour,
            transform=shifted(4.0 * direction),
            clip_on=False,
            zorder=5,
            gid=f"{gid}/{side}",
        )
        for x, y in points:
            ax.text(
                x,
                edge,
                compact(y),
                transform=shifted(7.5 * direction),
                rotation=90,
                ha="center",
                va=align,
                fontsize=MIN_FONT_PT,
                color=colour,
                zorder=5,
            )
        found += points
    return found


def _is_data_axes(ax) -> bool:
    """A visible axes that plots data (not an image tile, a legend holder or a colour bar)."""
    if not ax.get_visible() or not ax.axison:
        return False
    if getattr(ax, "_colorbar", None) is not None or ax.get_label() == "<colorbar>":
        return False
    return bool(ax.get_lines() or ax.collections or ax.patches or ax.images)


def readability_problems(
    fig, *, max_width: float = MAX_WIDTH, min_font: float = MIN_FONT_PT
) -> list[str]:
    """What keeps ``fig`` from reading at its printed size, one line per problem: drawn
    wider than ``max_width`` inches (its tight bounding box, what is saved), a visible text
    smaller than ``min_font`` points, a figure text or an axes' title or label that runs
    off the page, two axes titles that collide, a data axes without a y label (one sharing
    its y axis with a labelled axes is fine), a legend that overlaps a data axes. Empty
    when there is none."""
    from matplotlib.figure import FigureBase
    from matplotlib.legend import Legend
    from matplotlib.text import Text

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    problems = []
    width = fig.get_tightbbox(renderer).width
    if width > max_width + 1e-6:
        problems.append(f"drawn {width:.2f} in wide, more than {max_width} in")
    page = fig.bbox
    for text in fig.findobj(Text):
        if not (text.get_visible() and text.get_text().strip()):
            continue
        if text.get_fontsize() < min_font:
            problems.append(f"text {text.get_text()!r} at {text.get_fontsize():.1f} pt")
    framing = [t for ax in fig.axes for t in (ax.title, ax.xaxis.label, ax.yaxis.label)]
    framing += [t for legend in fig.findobj(Legend) for t in legend.get_texts()]
    framing += [t for part in fig.findobj(FigureBase) for t in part.texts]
    for text in framing:
        if not (text.get_visible() and text.get_text().strip()):
            continue
        box = text.get_window_extent(renderer)
        outside = (
            box.x0 < page.x0 - 1
            or box.x1 > page.x1 + 1
            or box.y0 < page.y0 - 1
            or box.y1 > page.y1 + 1
        )
        if outside:
            problems.append(f"text {text.get_text()!r} runs off the page")
    titles = [
        (ax, ax.title.get_window_extent(renderer))
        for ax in fig.axes
        if ax.get_visible() and ax.get_title().strip()
    ]
    for i, (ax, box) in enumerate(titles):
        for other, other_box in titles[i + 1 :]:
            if box.overlaps(other_box):
                problems.append(f"titles {ax.get_title()!r} and {other.get_title()!r} collide")
    data_axes = [ax for ax in fig.axes if _is_data_axes(ax) and not ax.images]
    for ax in data_axes:
        if ax.get_ylabel().strip():
            continue
        shared = [
            other
            for other in data_axes
            if other is not ax
            and ax.get_shared_y_axes().joined(ax, other)
            and other.get_ylabel().strip()
        ]
        if not shared:
            problems.append(f"axes {ax.get_title()!r} has no y label")
    for legend in fig.findobj(Legend):
        if not legend.get_visible():
            continue
        box = legend.get_window_extent(renderer)
        for ax in data_axes:
            if box.overlaps(ax.get_window_extent(renderer)):
                problems.append(f"a legend overlaps the data of axes {ax.get_title()!r}")
    return problems
