"""RQ3 with learned error injection: Table 4's third row, "virtual + injected errors" ([Barragan et al. 2024]).

The same suite runs a second time on the virtual robot wrapped in the ``errors`` robot filter of a model
(``cosim errors train``): the one assembly's filter, as ``cosim campaign --filter virtual=errors:model=M`` runs it,
into ``DIR/run-errors``. Table 4 is then computed over the cases that are collision-free in both runs (the same
cases for every row), and the injected row is compared with the physical one: the issue's goal is the mean and the
p95 needle-tip deviation within 15 % of the physical robot's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cosim_validation.runs.report.run_data import load_run
from cosim_validation.runs.report.trajectory_stats import Deviation, collision_free, deviations

#: Run directory of the injected campaign, inside the experiment's output directory.
ERRORS_RUN = "run-errors"

#: Label of the third row of Table 4.
INJECTED_ROW = "virtual + injected errors"

#: The issue's goal: the injected row within this share of the physical row (mean and p95 tip deviation).
GOAL_SHARE = 0.15


def _row(d: Deviation, label: str) -> dict[str, Any]:
    row = {
        "robot": label,
        "n_cases": d.n_cases,
        "joint_deg": d.joint_deg,
        "tip_mm": d.tip_mm,
        "tip_source": d.tip_source,
    }
    return row | ({} if d.prismatic_mm is None else {"prismatic_mm": d.prismatic_mm})


def table_4_with_errors(run_dir: Path, errors_run_dir: Path) -> dict[str, Any]:
    """Table 4 (virtual, physical, virtual + injected errors) over the cases collision-free in both runs.

    Args:
        run_dir: The experiment's campaign run directory (the virtual and the physical robot).
        errors_run_dir: The run directory of the same suites on the virtual robot with the injected errors
            (:data:`ERRORS_RUN` inside the experiment's output directory).

    Returns:
        ``cases`` (how many), ``rows`` (one per robot, as the report's Table 4), and ``goal``: per statistic
        (``mean``, ``p95``) the injected and physical tip deviation [mm], their relative difference and whether
        it is within :data:`GOAL_SHARE`; and the same for the virtual robot without injection, for comparison.
    """
    run, injected = load_run(run_dir), load_run(errors_run_dir)
    shared = sorted(set(collision_free(run)) & set(collision_free(injected)))
    rows = [_row(d, d.robot) for d in deviations(run, shared)]
    rows += [_row(d, INJECTED_ROW) for d in deviations(injected, shared, ("virtual",))]
    by_robot = {r["robot"]: r for r in rows}
    goal: dict[str, Any] = {"share": GOAL_SHARE}
    if "physical" in by_robot:
        physical = by_robot["physical"]["tip_mm"]
        for label in ("virtual", INJECTED_ROW):
            if label not in by_robot:
                continue
            tip = by_robot[label]["tip_mm"]
            goal[label] = {
                stat: {
                    "mm": tip[stat],
                    "physical_mm": physical[stat],
                    "relative": abs(tip[stat] - physical[stat]) / physical[stat],
                    "within": abs(tip[stat] - physical[stat]) <= GOAL_SHARE * physical[stat],
                }
                for stat in ("mean", "p95")
            }
    return {"cases": len(shared), "rows": rows, "goal": goal}


def goal_lines(answer: dict[str, Any]) -> list[str]:
    """The comparison with the issue's goal, for people.

    Args:
        answer: :func:`table_4_with_errors`' data (tip deviations in [mm]).
    """
    lines = [f"Table 4 over the {answer['cases']} cases collision-free in both runs (tip deviation [mm]):"]
    for row in answer["rows"]:
        tip = row["tip_mm"]
        lines.append(f"  {row['robot']:<26} mean {tip['mean']:.3f}  p95 {tip['p95']:.3f}  max {tip['max']:.3f}")
    goal = answer["goal"]
    for label in ("virtual", INJECTED_ROW):
        if label in goal:
            parts = [
                f"{stat} {100 * g['relative']:.0f} % off ({'within' if g['within'] else 'outside'} "
                f"{100 * goal['share']:.0f} %)"
                for stat, g in goal[label].items()
            ]
            lines.append(f"  {label} vs physical: " + ", ".join(parts))
    return lines
