"""The trajectory records of a case run in-process: what the live monitor would rebuild from the topics.

Times are the samples' session stamps minus the case start (as the monitor computes them from message
stamps), only the samples every robot answered are kept (an aborted case is a prefix), the expected record's
actual tip is the planned tip, and every robot's kinematic fields come from forward kinematics of its
measured joints.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from cosim_validation.assembly.lockstep import CaseRun
from cosim_validation.assembly.robot_port import BackendPort
from cosim_validation.common.record import RobotRole, TrajectoryRecord, kinematic_record
from cosim_validation.robots.model import Kinematics
from cosim_validation.robots.virtual import marker_arrays


def batch_records(
    run: CaseRun, ports: Mapping[RobotRole, BackendPort], kinematics: Kinematics, target_m: np.ndarray
) -> tuple[TrajectoryRecord, ...]:
    """The expected record, then one per robot of ``run.robots`` (in that order), over the answered samples.

    Args:
        run: The case (its plan and stamps; a supervised case: the setpoints it streamed).
        ports: The in-process robots that ran it.
        kinematics: The nominal arm and needle.
        target_m: (3,) the case's target in base_link [m], kept in each record's meta (``cosim check`` reads it).
    """
    plan = run.plan
    assert plan is not None
    n = run.executed
    t_s = run.t_s
    meta = {"seed": run.seed, "target_m": [float(v) for v in target_m], "outcome": run.outcome}
    q_plan, stage, mode = run.q_sent[:n], run.stage_sent[:n], run.supervisor_sent[:n]  # what was streamed
    q_expected = run.q_expected[:n]  # the same, but a closed-loop controller's reference where it declared one
    records = [
        kinematic_record(
            kinematics,
            test_id=run.test_id,
            robot=RobotRole.EXPECTED,
            backend="plan",
            t_s=t_s,
            stage=stage,
            supervisor=mode,
            q_setpoint=q_expected,
            q_measured=q_expected,
            meta={"controller": plan.controller, **meta},
        )
    ]
    for role in run.robots:
        port = ports[role]
        samples = port.samples[:n]
        measured = np.array([s.q_measured for s in samples]).reshape(n, kinematics.n_joints)
        records.append(
            kinematic_record(
                kinematics,
                test_id=run.test_id,
                robot=role,
                backend=port.backend.name,
                t_s=t_s,
                stage=stage,
                supervisor=mode,
                q_setpoint=q_plan,
                q_measured=measured,
                actual_tip_pos_m=np.array([s.actual_tip_pos_m for s in samples]).reshape(n, 3),
                actual_tip_quat_wxyz=np.array([s.actual_tip_quat_wxyz for s in samples]).reshape(n, 4),
                markers=marker_arrays(samples),
                meta=meta,
            )
        )
    return tuple(records)
