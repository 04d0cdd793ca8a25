"""Shared vocabulary of a run: stages, supervisor modes, robot roles and the trajectory record."""

from cosim_validation.common.record.kinematic_record import kinematic_record
from cosim_validation.common.record.robot_role import RobotRole
from cosim_validation.common.record.stage import Stage
from cosim_validation.common.record.supervisor_mode import SupervisorMode
from cosim_validation.common.record.trajectory_record import NO_MARKER_POS, NO_MARKER_QUAT, TrajectoryRecord

__all__ = [
    "NO_MARKER_POS",
    "NO_MARKER_QUAT",
    "RobotRole",
    "Stage",
    "SupervisorMode",
    "TrajectoryRecord",
    "kinematic_record",
]
