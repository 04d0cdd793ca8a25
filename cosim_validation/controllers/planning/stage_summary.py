"""Per-stage numbers of an executed case against its plan: duration, tip deviation, goal error, clearance."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from cosim_validation.common.record import Stage, TrajectoryRecord
from cosim_validation.common.record.stage import CASE_STAGES
from cosim_validation.controllers.planning.collision_world import CollisionWorld
from cosim_validation.controllers.planning.plan import Plan
from cosim_validation.monitor.metrics import p2p


class StageSummary(NamedTuple):
    """One stage of one robot's run.

    Attributes:
        stage: The stage.
        duration_s: Time from the end of the previous stage to the end of this one [s].
        deviation_mean_m: Mean tip distance from the expected tip over the stage's samples [m].
        deviation_max_m: Largest such distance [m].
        goal: What the stage ends at (``source``, ``entry``, ``target``).
        goal_error_m: Distance of the tip from that point at the stage's last sample [m]; for the injection
            this is the targeting error.
        forbidden_distance_m: Smallest distance of the needle to a forbidden region during the stage [m]
            (0 when it touches or enters one).
        forbidden_name: The region it came closest to ("" without forbidden regions).
    """

    stage: Stage
    duration_s: float
    deviation_mean_m: float
    deviation_max_m: float
    goal: str
    goal_error_m: float
    forbidden_distance_m: float
    forbidden_name: str


_GOALS = {
    Stage.INITIALIZATION: "source",
    Stage.APPROACH: "entry",
    Stage.INJECTION: "target",
    Stage.EXTRACTION: "entry",
    Stage.RESET: "source",
}


def best_tip(record: TrajectoryRecord) -> tuple[np.ndarray, np.ndarray]:
    """Tip positions (n, 3) and needle axes (n, 3): the actual ones where known, else forward kinematics.

    Args:
        record: A robot's record, n samples; tip positions in base_link [m].
    """
    known = np.isfinite(record.actual_tip_pos_m).all(axis=1) & np.isfinite(record.actual_tip_quat_wxyz).all(axis=1)
    tip = np.where(known[:, None], record.actual_tip_pos_m, record.tip_pos_m)
    quat = np.where(known[:, None], record.actual_tip_quat_wxyz, record.tip_quat_wxyz)
    w, x, y, z = quat.T
    axis = np.column_stack((2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)))
    return tip, axis


def summarize_stages(
    plan: Plan,
    expected: TrajectoryRecord,
    executed: TrajectoryRecord,
    world: CollisionWorld,
    target_m: np.ndarray | None = None,
) -> list[StageSummary]:
    """Per-stage summary of ``executed`` (same samples as ``expected``, the plan's record) [m, s].

    A run cut short (a case stopped by the state validator) has the plan's first samples only: the stages it
    reached are summarized over what was executed of them, the others are left out.

    Args:
        plan: The case's plan (its source, skin entry and target are the stages' goals).
        expected: The plan's record, as far as the run went.
        executed: The robot's record, the same n samples as ``expected``.
        world: The anatomy, for the needle's distance to the forbidden regions.
        target_m: The case's target (3,) in base_link [m], the injection's goal; None: the plan's (a controller
            that planned to another point was measured against its own point).

    Raises:
        ValueError: ``executed`` and ``expected`` have different numbers of samples.
    """
    if executed.n_samples != expected.n_samples:
        raise ValueError(f"executed has {executed.n_samples} samples, the plan {expected.n_samples}")
    tip, axis = best_tip(executed)
    deviation = np.asarray(p2p(tip, expected.tip_pos_m))
    distance, names = world.forbidden_distance(tip - executed.needle_length_m * axis, tip)
    target = plan.line.target_m if target_m is None else np.asarray(target_m, dtype=np.float64)
    goals = {"source": plan.source_m, "entry": plan.line.entry_m, "target": target}
    out = []
    previous_end = 0.0
    for stage in CASE_STAGES:
        idx = np.flatnonzero(expected.stage == int(stage))
        if idx.size == 0:
            continue
        last = int(idx[-1])
        closest = int(idx[np.argmin(distance[idx])])
        out.append(
            StageSummary(
                stage=stage,
                duration_s=float(expected.t_s[last]) - previous_end,
                deviation_mean_m=float(deviation[idx].mean()),
                deviation_max_m=float(deviation[idx].max()),
                goal=_GOALS[stage],
                goal_error_m=float(np.linalg.norm(tip[last] - goals[_GOALS[stage]])),
                forbidden_distance_m=float(distance[closest]),
                forbidden_name=names[closest],
            )
        )
        previous_end = float(expected.t_s[last])
    return out
