"""The audit's report: ``audit.md``, a self-contained ``audit.html`` (figures embedded as
base64 PNG, no external links), ``audit.json`` and the figures (PNG and PDF)."""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path

from pruneleak.sims.core.outputs import output_dir
from pruneleak.sims.plots.audit import plot_audit_bits
from pruneleak.sims.plots.figures import save_figure
from pruneleak.sims.plots.leakage import _ATTACK_LABELS
from pruneleak.sims.plots.reconstructions import plot_reconstruction_grid

BITS_FIGURE = "audit_bits"
GRID_FIGURE = "audit_reconstructions"


def format_value(value) -> str:
    """A number as the report and the command line print it (6 significant digits)."""
    return "n/a" if value is None else f"{value:.6g}"


def _setup_lines(result) -> list[str]:
    r = result.record
    lines = [
        f"Model: {result.model_name}, {result.parameters} parameters, {r['kept']} sent "
        f"(pruning rate p = {r['p']:.6g}).",
        f"Release: {r['local_steps']} local step(s) at lr {r['client_lr']:.6g}, batch "
        f"B = {r['batch_size']} of M = "
        f"{r['candidates']} candidates, Gaussian noise s = {r['noise_std']:.6g}, defense "
        f"{r['defense']}.",
        f"Attacks ({', '.join(_ATTACK_LABELS.get(a, a) for a in result.attacks)}): labels "
        f"{result.labels}, {r['attack_targets']} target batches.",
    ]
    if result.eval_mode:
        lines.append(
            "Evaluation mode: the release and the attacks use the model in evaluation mode "
            f"(BatchNorm running statistics, dropout off): {', '.join(result.eval_mode)}."
        )
    return lines


def markdown(result) -> str:
    """The report in Markdown: the verdict, the setup, the numbers with units, figures."""
    lines = ["# Leakage audit", "", result.verdict(), ""]
    lines += [f"- {line}" for line in _setup_lines(result)]
    lines += ["", "| quantity | value | unit |", "|---|---:|---|"]
    lines += [f"| {q} | {format_value(v)} | {u} |" for q, v, u in result.rows()]
    lines += [
        "",
        f"![bits]({BITS_FIGURE}.png)",
        "",
        f"![reconstructions]({GRID_FIGURE}.png)",
        "",
    ]
    return "\n".join(lines)


def page(result, figures: dict[str, bytes]) -> str:
    """The report as one HTML page, figures embedded as base64 PNG."""
    rows = "".join(
        f"<tr><td>{html.escape(q)}</td><td style='text-align:right'>{format_value(v)}</td>"
        f"<td>{html.escape(u)}</td></tr>"
        for q, v, u in result.rows()
    )
    setup = "".join(f"<li>{html.escape(line)}</li>" for line in _setup_lines(result))
    images = "".join(
        f"<p><img alt='{name}' src='data:image/png;base64,"
        f"{base64.b64encode(data).decode('ascii')}'></p>"
        for name, data in figures.items()
    )
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Leakage audit</title>"
        "<style>body{font-family:sans-serif;max-width:60em;margin:auto}"
        "td,th{padding:2px 8px;border-bottom:1px solid #ccc}img{max-width:100%}</style>"
        f"</head><body><h1>Leakage audit</h1><p>{html.escape(result.verdict())}</p>"
        f"<ul>{setup}</ul><table><tr><th>quantity</th><th>value</th><th>unit</th></tr>"
        f"{rows}</table>{images}</body></html>\n"
    )


def write_report(result, folder) -> dict[str, Path]:
    """Write the figures, ``audit.md``, ``audit.html`` and ``audit.json`` into ``folder``;
    returns the paths by kind (``markdown``, ``html``, ``json``, ``figures``)."""
    import matplotlib.pyplot as plt

    folder = output_dir(folder)
    figures, saved = {}, []
    grid = {_ATTACK_LABELS.get(n, n): result.reconstructions[n] for n in result.attacks}
    for name, fig in (
        (BITS_FIGURE, plot_audit_bits(result.record, result.attacks)),
        (GRID_FIGURE, plot_reconstruction_grid(result.originals, grid)),
    ):
        paths = save_figure(fig, name, directory=folder)
        plt.close(fig)
        saved += paths
        figures[name] = paths[0].read_bytes()
    paths = {"markdown": folder / "audit.md", "html": folder / "audit.html"}
    paths["markdown"].write_text(markdown(result), encoding="utf-8")
    paths["html"].write_text(page(result, figures), encoding="utf-8")
    paths["json"] = folder / "audit.json"
    text = json.dumps(result.to_dict(), indent=1, allow_nan=False)
    paths["json"].write_text(text + "\n", encoding="utf-8")
    paths["figures"] = saved
    return paths
