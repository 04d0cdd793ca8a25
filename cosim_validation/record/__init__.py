"""Shared vocabulary of a run: stages, robot roles and the trajectory record."""

from cosim_validation.record.robot_role import RobotRole
from cosim_validation.record.stage import Stage
from cosim_validation.record.trajectory_record import TrajectoryRecord

__all__ = ["RobotRole", "Stage", "TrajectoryRecord"]
