"""Records of a five-stage case on the virtual robot and on the emulated physical one, with or without a hazard."""

from __future__ import annotations

from cosim_validation.assembly.robots import build_robot
from cosim_validation.common.config import ConfigNode
from cosim_validation.common.record import TrajectoryRecord
from cosim_validation.robots.model import Kinematics, RobotConfig
from cosim_validation.robots.virtual.execute import execute_trajectory
from test.robots.virtual.plans import five_stage_plan


def case_records(
    config: ConfigNode, kinematics: Kinematics, filters: list[str], seed: int
) -> tuple[TrajectoryRecord, TrajectoryRecord]:
    """(physical, model): the emulated arm seen through ``filters`` and the MuJoCo twin fed the clean plan."""
    t_s, stage, q = five_stage_plan(RobotConfig.from_config(config["robot"]).home_q)
    records = []
    for engine, layers in (("emulated", filters), ("mujoco", [])):
        robot = build_robot(config, engine, kinematics, filters=layers)
        reseed = getattr(robot, "reseed", None)
        if reseed is not None:
            reseed(seed)
        records.append(execute_trajectory(robot, kinematics, t_s, stage, q, test_id=f"case-{seed}"))
        robot.close()
    return records[0], records[1]
