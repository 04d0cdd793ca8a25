"""The evaluation as a page (report.html).

[Barragan et al. 2024]'s Table II, the two-sample statistics and a Fig. 6-like figure.

The figure shows, as [Barragan et al. 2024]'s Fig. 6 does, the error distributions of the physical robot beside the
simulated one: the tip's distance from the plan (real, simulated without injection, simulated with it) and the
controller error of every joint (real vs injected). One self-contained HTML file (the figure embedded as a PNG).
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import Any

import numpy as np

from cosim_validation.common.atomic_file import write_atomic
from cosim_validation.error_injection.evaluation import Evaluation


def figure_png(evaluation: Evaluation) -> bytes:
    """Histograms of tip error and of each joint's controller error, real vs simulated (PNG bytes).

    Args:
        evaluation: The held-out comparison to plot.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n_joints = evaluation.controller_error["real"].shape[1]
    fig, axes = plt.subplots(1, n_joints + 1, figsize=(3.0 * (n_joints + 1), 2.8))
    tip = evaluation.tip_error_m
    bins = np.linspace(0.0, 1e3 * max(tip["real"].max(), tip["with"].max(), 1e-6), 30)
    axes[0].hist(1e3 * tip["real"], bins, alpha=0.6, label="physical")
    axes[0].hist(1e3 * tip["with"], bins, alpha=0.6, label="simulated + injected")
    axes[0].axvline(0.0, color="k", lw=2, label="simulated (no injection)")
    axes[0].set_xlabel("tip distance from plan [mm]")
    axes[0].legend(fontsize=6)
    for j in range(n_joints):
        real, sim = 1e3 * evaluation.controller_error["real"][:, j], 1e3 * evaluation.controller_error["with"][:, j]
        edges = np.linspace(min(real.min(), sim.min()), max(real.max(), sim.max()) + 1e-9, 30)
        axes[j + 1].hist(real, edges, alpha=0.6)
        axes[j + 1].hist(sim, edges, alpha=0.6)
        axes[j + 1].set_xlabel(f"joint {j + 1}: measured - setpoint [mrad]")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    plt.close(fig)
    return buffer.getvalue()


def _cell(value: object) -> str:
    return f"<td>{value:.4g}</td>" if isinstance(value, float) else f"<td>{html.escape(str(value))}</td>"


def _rows(values: dict[str, dict[str, Any]]) -> str:
    keys = list(next(iter(values.values())))
    head = "".join(f"<th>{html.escape(k)}</th>" for k in keys)
    body = "".join(
        f"<tr><td>{html.escape(name)}</td>" + "".join(_cell(row.get(k, "")) for k in keys) + "</tr>"
        for name, row in values.items()
    )
    return f"<table><tr><th></th>{head}</tr>{body}</table>"


def write_page(evaluation: Evaluation, path: Path, title: str) -> None:
    """Write the page to ``path`` (atomically).

    Args:
        evaluation: The comparison to show.
        path: The HTML file to write (replaced if it exists).
        title: The page's title and heading.
    """
    summary = evaluation.summary()
    png = base64.b64encode(figure_png(evaluation)).decode()
    ratio = summary["with_over_without"]
    rows = "held-out samples" if summary["set"] == "test" else "training samples (not held out)"
    worse = "".join(
        f"<p><b>warning: with injection the {w} gap is worse than without.</b></p>"
        for w in summary["worse_with_injection"]
    )
    text = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        "<style>body{font-family:sans-serif} td,th{padding:2px 8px;text-align:right}</style></head><body>"
        f"<h1>{html.escape(title)}</h1><p>{summary['samples']} {rows}. Mean gap with injection / without: "
        f"{ratio['translation_mm']:.2f} (position), {ratio['rotation_deg']:.2f} (rotation); below 1 is better.</p>"
        f"{worse}"
        f"<h2>Real vs simulated actual pose (Table II of the paper)</h2>{_rows(summary['table'])}"
        f"<h2>Error distributions, two-sample statistics</h2>{_rows(summary['distributions'])}"
        f"<h2>Distributions (Fig. 6 of the paper)</h2><img alt='distributions' src='data:image/png;base64,{png}'>"
        "</body></html>"
    )

    def write(tmp: Path) -> None:
        tmp.write_text(text)

    write_atomic(path, write, "the evaluation page")
