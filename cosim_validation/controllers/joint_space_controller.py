"""Joint-space cases as controllers: ``joint_goals`` and ``teleoperation``.

They are [Barragan et al. 2024]'s motions, for any robot.

They plan through the same assembly as the insertion controllers (``--controller joint_goals``): the lockstep
loop streams their plans to every robot and the monitor judges the runs. A case's motion is drawn from its case
seed (its source and target are not used: a joint-space case is not an insertion), so it is the same in a
campaign, a live session and on replay. Stages: the outward motion is ``initialization`` (a joint-space move,
as the insertion's first stage), the way back home ``reset``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from cosim_validation.common.record import Stage
from cosim_validation.controllers.planning.errors import PlanningError
from cosim_validation.controllers.planning.joint_motion import scaled
from cosim_validation.controllers.planning.joint_space_motion import (
    JointSpaceSettings,
    goal_box,
    goal_motion,
    teleoperation_motion,
)
from cosim_validation.controllers.planning.motion_checker import MotionChecker, densify
from cosim_validation.controllers.planning.plan import InsertionLine, Plan
from cosim_validation.controllers.planning.planning_config import PlanningConfig
from cosim_validation.robots.model import RobotConfig

#: The joint-space controllers, by name.
JOINT_SPACE_KINDS: tuple[str, ...] = ("joint_goals", "teleoperation")


class JointSpaceController:
    """Plans a joint-space case of kind ``name`` for ``robot``.

    Args:
        name: ``joint_goals`` or ``teleoperation``.
        robot: Home pose, limits (the planning limits with the configured margin).
        planning: Sampling rate and the fraction of the commanding limits planned motion may use.
        settings: Number of goals, range, durations.
        checker: Collision checks of the case study (self-collision; the arm, and the needle of a robot without
            a port, outside the skin).
    """

    def __init__(
        self,
        name: str,
        robot: RobotConfig,
        planning: PlanningConfig,
        settings: JointSpaceSettings,
        checker: MotionChecker,
    ) -> None:
        self.name = name
        self.robot = robot
        self.planning = planning
        self.settings = settings
        self.checker = checker
        self.limits = scaled(robot.limits, planning.joint_velocity_scale, planning.joint_acceleration_scale)
        self.box = goal_box(robot.home_q, robot.q_lower, robot.q_upper, settings.range_fraction)

    def plan_case(self, source: ArrayLike, target: ArrayLike, seed: int = 0) -> Plan:
        """The plan of the case whose seed is ``seed`` (``source`` and ``target`` are not used).

        Args:
            source: The case's source point, shape (3,), in base_link, in [m] (not used).
            target: The case's target point, shape (3,), in base_link, in [m] (not used).
            seed: The case seed, from which the goals or the teleoperation motion are drawn.

        Raises:
            PlanningError: ``no_free_goal`` when no collision-free goal was found within ``max_attempts``, or
                ``collision`` when a teleoperation motion collides.
        """
        rng = np.random.default_rng([int(seed), 17])
        home, dt = self.robot.home_q, self.planning.dt_s
        if self.name == "joint_goals":
            goals = self._goals(rng)
            q, legs = goal_motion(home, goals, self.limits, dt, self.settings.hold_s)
            stage = np.where(legs < len(goals), int(Stage.INITIALIZATION), int(Stage.RESET)).astype(np.uint8)
        else:
            q = teleoperation_motion(home, self.box, self.limits, dt, self.settings, rng)
            problem = self._problem(q)
            if problem is not None:
                raise PlanningError(f"teleoperation motion: {problem}", "collision")
            stage = np.full(len(q), int(Stage.INITIALIZATION), dtype=np.uint8)
            stage[-1] = int(Stage.RESET)
        tip = self.robot.kinematics.tip_pose(home)
        line = InsertionLine(tip.pos_m, tip.R[:, 2], tip.pos_m)  # no insertion: the home tip, its axis
        meta = {"joint_space": self.name, "seed": int(seed)}
        return Plan(np.arange(len(q)) * dt, stage, q, tip.pos_m, line, self.name, meta)

    def _goals(self, rng: np.random.Generator) -> np.ndarray:
        """(goals, J) goals uniform in the goal box, each reached from the previous without collision."""
        goals, previous = [], self.robot.home_q
        for _ in range(self.settings.goals):
            for _attempt in range(self.settings.max_attempts):
                goal = self.box[0] + rng.random(len(previous)) * (self.box[1] - self.box[0])
                if self._problem(np.stack([previous, goal])) is None:
                    break
            else:
                raise PlanningError(
                    f"no collision-free joint goal in {self.settings.max_attempts} draws", "no_free_goal"
                )
            goals.append(goal)
            previous = goal
        return np.array(goals)

    def _problem(self, q: np.ndarray) -> str | None:
        """Why the joint path through ``q`` (n, J) collides; None if it is free."""
        dense = densify(q, self.planning.collision_step_rad)
        return self.checker.problem(dense, check_needle=not self.robot.port_links)
