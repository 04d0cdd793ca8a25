"""The report's figures ([Actuators 2025], Figures 6-11) as PNG bytes, drawn with matplotlib's Agg canvas.

Every function takes plain arrays in SI units (base_link, metres) and draws in millimetres; none
touches global pyplot state, so figures can be made from any thread or worker.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from cosim_validation.runs.report.trajectory_stats import CubeFrechet

MeshArrays = tuple[np.ndarray, np.ndarray]  # (V, 3) vertices [m], (F, 3) faces
RED, GREEN, GREY, BLUE = "#d62728", "#2ca02c", "#9e9e9e", "#1f77b4"
_MAX_FACES = 3000


def png(fig: Figure) -> bytes:
    """The figure as PNG bytes.

    Args:
        fig: The figure, saved at 100 dpi with a tight bounding box.
    """
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    return buffer.getvalue()


def _mesh(ax: Any, mesh: MeshArrays, color: str, alpha: float) -> None:
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    vertices, faces = mesh
    step = max(1, len(faces) // _MAX_FACES)  # a light surface is enough to show where the organ is
    polygons = 1e3 * vertices[faces[::step]]
    ax.add_collection3d(Poly3DCollection(polygons, facecolor=color, edgecolor="none", alpha=alpha))


def _equal_axes(ax: Any, points_mm: np.ndarray, top_view: bool = False) -> None:
    lo, hi = points_mm.min(axis=0), points_mm.max(axis=0)
    centre, half = (lo + hi) / 2, max(float((hi - lo).max()) / 2, 1.0)
    for name, c in zip("xyz", centre, strict=True):
        getattr(ax, f"set_{name}lim")(c - half, c + half)
        getattr(ax, f"set_{name}label")(f"{name} [mm]")
    if top_view:  # looking down z: its ticks would pile up on one edge
        ax.set_zticks([])
        ax.set_zlabel("")


def _scene_axes(
    fig: Figure,
    position: int,
    obstacles: Mapping[str, MeshArrays],
    targets: Mapping[str, MeshArrays],
    view: tuple[float, float],
) -> Any:
    ax = fig.add_subplot(1, 2, position, projection="3d")
    for mesh in targets.values():
        _mesh(ax, mesh, GREEN, 0.06)
    for mesh in obstacles.values():
        _mesh(ax, mesh, RED, 0.25)
    ax.view_init(elev=view[0], azim=view[1])
    return ax


def targets_3d(
    points_m: Mapping[str, tuple[np.ndarray, str]],
    obstacles: Mapping[str, MeshArrays],
    targets: Mapping[str, MeshArrays],
    title: str,
) -> bytes:
    """Target points by class (label -> ((n, 3) points [m], colour)) with the organs, from two views (Figs 7, 8).

    Args:
        points_m: Per class label, the (n, 3) points in base_link [m] and their matplotlib colour; an empty class is
            left out of the plot.
        obstacles: Per name, a forbidden region's mesh: (V, 3) vertices in base_link [m] and (F, 3) faces; drawn red.
        targets: Per name, a target model's mesh, as ``obstacles``; drawn green.
        title: The figure's title.
    """
    fig = Figure(figsize=(12, 5.5))
    everything = [p for p, _ in points_m.values() if len(p)] + [m[0] for m in obstacles.values()]
    bounds_mm = 1e3 * np.concatenate(everything) if everything else np.zeros((1, 3))
    for position, view in ((1, (25.0, -60.0)), (2, (89.0, -90.0))):
        ax = _scene_axes(fig, position, obstacles, targets, view)
        for label, (points, color) in points_m.items():
            if len(points):
                mm = 1e3 * points
                size = 8.0 if len(points) <= 300 else max(0.5, 2400.0 / len(points))  # dense sets: small dots
                label_n = f"{label} ({len(points)})"
                ax.scatter(mm[:, 0], mm[:, 1], mm[:, 2], s=size, c=color, alpha=0.8, label=label_n, depthshade=False)
        _equal_axes(ax, bounds_mm, top_view=position == 2)
        ax.set_title("oblique view" if position == 1 else "from above (base_link +z)", fontsize=9)
    fig.axes[0].legend(loc="upper left", fontsize=8)
    fig.suptitle(title)
    return png(fig)


def cube_frechet_figure(cubes: Sequence[CubeFrechet]) -> bytes:
    """Figure 6: per granularity, the min / mean / max Fréchet distance of the tip paths within each cube [mm].

    One panel per compared part (source to target, injection only).

    Args:
        cubes: The measured cubes, of every part and granularity, distances in [m].
    """
    parts = list(dict.fromkeys(c.part for c in cubes))
    fig = Figure(figsize=(6.5 * len(parts), 4.5))
    for n, part in enumerate(parts):
        mine = [c for c in cubes if c.part == part]
        ax = fig.add_subplot(1, len(parts), n + 1)
        _frechet_boxes(ax, mine)
        ax.set_title(part.replace("_", " "), fontsize=10)
    return png(fig)


def _frechet_boxes(ax: Any, cubes: Sequence[CubeFrechet]) -> None:
    granularities = sorted({c.granularity_m for c in cubes}, reverse=True)
    width = 0.25
    for k, (name, color) in enumerate((("min", GREEN), ("mean", BLUE), ("max", RED))):
        data = [[1e3 * getattr(c, f"{name}_m") for c in cubes if c.granularity_m == g] for g in granularities]
        positions = np.arange(len(granularities)) + (k - 1) * width
        parts = ax.boxplot(data, positions=positions, widths=width * 0.9, patch_artist=True, showfliers=False)
        for box in parts["boxes"]:
            box.set_facecolor(color)
            box.set_alpha(0.6)
        ax.plot([], [], color=color, linewidth=8, alpha=0.6, label=f"{name} per cube")
    centres = np.arange(len(granularities))
    edges_mm = [1e3 * g for g in granularities]
    ax.hlines(edges_mm, centres - 1.6 * width, centres + 1.6 * width, colors="k", linestyles="--", label="cube edge")
    labels = [f"{1e3 * g:g} mm\n({sum(c.granularity_m == g for c in cubes)} cubes)" for g in granularities]
    ax.set_xticks(centres, labels)
    ax.set_ylabel("Fréchet distance between tip paths [mm]")
    ax.set_xlabel("granularity (cube edge)")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)


def depth_histograms(groups: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> bytes:
    """Figure 9: distance to the target model's boundary [m] of violating vs normal cases, one panel per group.

    Args:
        groups: Per group name (a generator), the (v,) target depths of the violating cases and the (k,) target
            depths of the normal cases [m]; drawn in [mm].
    """
    fig = Figure(figsize=(5.5 * max(len(groups), 1), 4))
    for k, (name, (violating, normal)) in enumerate(groups.items()):
        ax = fig.add_subplot(1, max(len(groups), 1), k + 1)
        values = np.concatenate([violating, normal]) * 1e3
        bins = np.linspace(0.0, max(float(values.max()) if values.size else 1.0, 1.0), 25)
        ax.hist(1e3 * normal, bins=bins.tolist(), color=GREEN, alpha=0.6, label=f"normal ({len(normal)})")
        ax.hist(1e3 * violating, bins=bins.tolist(), color=RED, alpha=0.7, label=f"violating ({len(violating)})")
        ax.set_xlabel("distance from target to model boundary [mm]")
        ax.set_ylabel("cases")
        ax.set_title(name)
        ax.legend(fontsize=8)
    return png(fig)


def tip_deviation_figure(series: Mapping[str, tuple[np.ndarray, np.ndarray]], ylabel: str) -> bytes:
    """Figure 10: a deviation per case (label -> ((n,) case indices, (n,) values [m])) as points [mm].

    Args:
        series: Per label, the (n,) case indices and the (n,) deviations [m] (n >= 1); a label starting with
            ``virtual``, ``physical`` or ``expected`` takes that robot's colour.
        ylabel: The y axis label (the values are drawn in [mm]).
    """
    fig = Figure(figsize=(10, 4))
    ax = fig.add_subplot(1, 1, 1)
    colors = {"virtual": GREEN, "physical": RED, "expected": BLUE}
    for label, (index, values) in series.items():
        color = next((c for key, c in colors.items() if label.startswith(key)), GREY)
        ax.plot(index, 1e3 * values, ".", markersize=4, color=color, label=f"{label} (max {1e3 * values.max():.3g} mm)")
    ax.set_xlabel("case index")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return png(fig)


def trajectories_figure(
    paths_m: Mapping[str, np.ndarray],
    deviation_m: Mapping[str, tuple[np.ndarray, np.ndarray]],
    stages: Sequence[tuple[float, float, str]],
    title: str,
) -> bytes:
    """Figure 11: tip paths (label -> (n, 3) [m]) in 3-D, and each robot's tip deviation over time [mm].

    Args:
        paths_m: Tip path per robot.
        deviation_m: Per executed robot, (n,) times [s] and (n,) tip distance to the expected tip [m].
        stages: (start [s], end [s], name) of each stage, shaded behind the deviations.
        title: Figure title.
    """
    fig = Figure(figsize=(13, 5))
    ax = fig.add_subplot(1, 2, 1, projection="3d")
    colors = {"expected": BLUE, "virtual": GREEN, "physical": RED}
    for label, path in paths_m.items():
        mm = 1e3 * path
        ax.plot(mm[:, 0], mm[:, 1], mm[:, 2], color=colors.get(label, GREY), linewidth=1.2, label=label)
    _equal_axes(ax, 1e3 * np.concatenate(list(paths_m.values())))
    ax.legend(fontsize=8)
    ax2 = fig.add_subplot(1, 2, 2)
    for k, (start, end, name) in enumerate(stages):
        ax2.axvspan(start, end, color="#000000", alpha=0.04 * (1 + k % 2), linewidth=0)
        height = 1.0 + 0.04 * (k % 2)  # neighbours alternate, so short stages' names do not overlap
        place = ax2.get_xaxis_transform()
        ax2.text((start + end) / 2, height, name, transform=place, ha="center", va="bottom", fontsize=7)
    for label, (t_s, d_m) in deviation_m.items():
        ax2.plot(t_s, 1e3 * d_m, color=colors.get(label, GREY), linewidth=1, label=f"{label} vs expected")
    ax2.set_xlabel("time [s]")
    ax2.set_ylabel("needle-tip distance to the expected tip [mm]")
    ax2.grid(alpha=0.3)
    ax2.legend(fontsize=8)
    fig.suptitle(title)
    return png(fig)
