"""The verifier's figure: per claim, the paper's claimed value against the true one.

:func:`plot_claim_curves` draws one panel per :class:`bounds.claims.ClaimResult` from its
deciding check's :class:`~bounds.claims.checks.results.Curve` (the notebook
``verify_theorems`` saves it for the failing claims and for those that hold on a
restricted domain only). The panels are laid out three to a row at the printed width
(:mod:`sims.plots.style`), each with a y label and its legend under it, the labels
wrapped at spaces and never cut. The true value is solid blue (a Monte Carlo estimate with
its interval as a band), the claim dashed red, as in every figure of :mod:`sims.plots`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pruneleak.sims.plots.style import TEXT_WIDTH, use_style, wrap

#: Panels per row.
COLUMNS = 3
#: Characters per line of a panel's wrapped legend labels (at 8 pt in a third of the width).
LABEL_WIDTH = 30
#: Characters per line of a panel's title and x label (at 9 pt over its axes).
TEXT_CHARS = 22
_TRUE_COLOUR, _CLAIM_COLOUR = "tab:blue", "tab:red"


def y_label(curve) -> str:
    """The y label of a curve's panel: what both lines are (the claimed and the true value)
    with the unit their labels name (the true value's label first: MB, bits, nats), or
    "probability" when the true value is one and the claim is a confidence."""
    for text in (curve.true_label, curve.claimed_label):
        for unit in ("MB", "bits", "nats"):
            if f" {unit}" in text or f"({unit}" in text:
                return f"claimed and true value ({unit})"
    if curve.true_label.startswith("Pr[") and (
        curve.claimed_label.startswith("1 - ") or "delta" in curve.claimed_label
    ):
        return "probability"
    return "claimed and true value"


def _split_dotted(word: str, width: int) -> list[str]:
    """A word longer than ``width`` (a dotted name such as ``bounds.priprune.x``) in
    pieces of at most ``width`` characters where its dots allow, each ending at a dot."""
    pieces = [""]
    parts = word.split(".")
    for i, part in enumerate(parts):
        part += "." if i < len(parts) - 1 else ""
        if pieces[-1] and len(pieces[-1]) + len(part) > width:
            pieces.append("")
        pieces[-1] += part
    return pieces


def wrap_label(text: str, width: int) -> str:
    """``text`` in lines of at most ``width`` characters, broken at spaces and, inside a
    longer dotted name, after a dot; a word is never cut elsewhere."""
    lines = []
    for line in wrap(text, width).split("\n"):
        if len(line) <= width:
            lines.append(line)
            continue
        current = ""
        for word in line.split(" "):
            for piece in _split_dotted(word, width) if len(word) > width else [word]:
                joined = f"{current} {piece}" if current else piece
                if current and len(joined) > width:
                    lines.append(current)
                    current = piece
                else:
                    current = joined
        lines.append(current)
    return "\n".join(lines)


def _title(claim_id: str, verdict: str) -> str:
    """``"<claim id>: <verdict>"`` in lines of at most :data:`TEXT_CHARS` characters,
    broken after a dot of the id (an id has no spaces to break at)."""
    return wrap_label(f"{claim_id}: {verdict}", TEXT_CHARS)


def _draw(ax, result) -> list:
    """One claim's panel; returns its legend's (handle, label) pairs."""
    curve = result.curve
    tag = result.claim.id
    (true_line,) = ax.plot(curve.x, curve.true, color=_TRUE_COLOUR, gid=f"true/{tag}")
    handles = [(true_line, f"true: {curve.true_label}")]
    if curve.true_low is not None:
        band = ax.fill_between(
            curve.x, curve.true_low, curve.true_high, color=_TRUE_COLOUR, alpha=0.3, linewidth=0
        )
        band.set_gid(f"true_band/{tag}")
    if curve.claimed is not None:
        (claim_line,) = ax.plot(
            curve.x, curve.claimed, "--", color=_CLAIM_COLOUR, gid=f"claimed/{tag}"
        )
        handles.append((claim_line, f"claimed: {curve.claimed_label}"))
    if curve.log_x:
        ax.set_xscale("log")
    shown = [np.asarray(v, float) for v in (curve.true, curve.claimed) if v is not None]
    values = np.concatenate([v[np.isfinite(v)] for v in shown])
    if values.size and values.min() > 0 and values.max() > 1e3 * values.min():
        ax.set_yscale("log")
    ax.set_xlabel(wrap_label(curve.x_label, TEXT_CHARS))
    ax.set_ylabel(wrap(y_label(curve), 26))
    ax.set_title(_title(tag, result.verdict))
    return handles


def plot_claim_curves(results: Sequence, *, columns: int = COLUMNS):
    """One panel per result of ``results`` (:class:`bounds.claims.ClaimResult` with a
    curve; the others are left out), ``columns`` to a row: the true value (solid, its
    Monte Carlo interval as a band) and the claimed one (dashed) along the parameter the
    check sweeps, a log y axis where the values span more than three decades, a y label
    (:func:`y_label`), the legend under the panel with the curve's full labels wrapped.
    Every line has a gid (``"true/<claim id>"``, ``"claimed/<claim id>"``). Raises
    ValueError when no result has a curve. Returns the figure."""
    import matplotlib.pyplot as plt

    drawn = [r for r in results if r.curve is not None]
    if not drawn:
        raise ValueError(
            "The 'results' parameter of plot_claim_curves must hold a result with a curve. "
            "Got none instead."
        )
    use_style()
    columns = min(columns, len(drawn))
    rows = math.ceil(len(drawn) / columns)
    fig = plt.figure(figsize=(TEXT_WIDTH, 3.3 * rows), layout="constrained")
    cells = fig.subfigures(rows, columns, squeeze=False, wspace=0.02, hspace=0.02)
    for cell, result in zip(cells.flat, drawn, strict=False):
        ax = cell.subplots()
        handles = _draw(ax, result)
        cell.legend(
            [h for h, _ in handles],
            [wrap_label(label, LABEL_WIDTH) for _, label in handles],
            loc="outside lower center",
            frameon=False,
            handlelength=1.8,
        )
    return fig
