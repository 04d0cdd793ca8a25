"""An emulated move_group: a separate process that plans with the project's planner (:mod:`~.standin_planner`).

It serves ``plan_kinematic_path``, ``compute_cartesian_path``, ``apply_planning_scene`` and ``get_planning_scene``
(the allowed collision matrix only).

Run it like a node::

    python -m cosim_validation.live.moveit.standin_node --ros-args -p config:=config/needle_insertion.yaml

Parameters: ``config`` (the case-study file: only its ``robot`` and ``planning`` sections are read, as move_group
reads robot_description and its planning configuration; the anatomy comes from the planning scene), ``group``
(the planning group served, default ``arm``), ``needle_link`` (default ``needle_tip``), ``cartesian_fraction``
(every Cartesian path is cut to at most this fraction, default 1.0: to test a controller's refusal),
``plan_error`` (a MoveItErrorCodes name every joint-space request is answered with, default "": plan); declared
and checked as a session node's (:class:`StandInParams`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from builtin_interfaces.msg import Duration
from moveit_msgs.msg import MoveItErrorCodes, PlanningSceneComponents
from moveit_msgs.srv import ApplyPlanningScene, GetCartesianPath, GetMotionPlan, GetPlanningScene
from rclpy.node import Node
from trajectory_msgs.msg import JointTrajectoryPoint

from cosim_validation.common.config import load_case_config
from cosim_validation.common.exceptions import CosimError, InputError
from cosim_validation.controllers.planning.planning_config import PlanningConfig
from cosim_validation.live.moveit.moveit_messages import error_code, error_name, joints_of
from cosim_validation.live.moveit.standin_planner import StandInScene
from cosim_validation.live.nodes.node_runtime import declare_parameters, run_node
from cosim_validation.live.session.parameter_struct import NodeParams, param
from cosim_validation.robots.model import RobotConfig

_FRAMES = ("", "base_link")


@dataclass(frozen=True)
class StandInParams(NodeParams):
    """The stand-in's parameters (declared and checked as every session node's are).

    The parameters of MoveIt's own files (``planning_plugin``, ``robot_description``, ...) are ignored, not refused,
    so that it starts where a launch file would start move_group.
    """

    ignores_unknown: ClassVar[bool] = True

    config: str = param(
        "", "case-study file: its robot and planning sections are read (-p config:=case.yaml)", not_empty=True
    )
    group: str = param("arm", "the planning group served", not_empty=True)
    needle_link: str = param("needle_tip", "the link Cartesian paths move", not_empty=True)
    cartesian_fraction: float = param(
        1.0,
        "every Cartesian path is cut to at most this fraction (to test a refusal)",
        exclusive_minimum=0.0,
        maximum=1.0,
    )
    plan_error: str = param("", "a MoveItErrorCodes name every joint-space request is answered with; '' = plan")


class StandInMoveGroup(Node):
    """The node (named ``move_group``, as MoveIt's)."""

    def __init__(self) -> None:
        super().__init__("move_group")
        params = declare_parameters(self, StandInParams)
        config = load_case_config(params.config)
        self.robot = RobotConfig.from_config(config["robot"])
        self.group = params.group
        self.cap = params.cartesian_fraction
        self.forced = error_code(params.plan_error) if params.plan_error else None
        self.names = self.robot.kinematics.joint_names
        self.scene = StandInScene(self.robot, PlanningConfig.from_config(config["planning"]), params.needle_link)
        self.create_service(GetMotionPlan, "plan_kinematic_path", self.plan)
        self.create_service(GetCartesianPath, "compute_cartesian_path", self.cartesian)
        self.create_service(ApplyPlanningScene, "apply_planning_scene", self.apply)
        self.create_service(GetPlanningScene, "get_planning_scene", self.get_scene)

    def apply(self, request: Any, response: Any) -> Any:
        """Serve ``apply_planning_scene``: apply the request's scene (a diff or a whole one); a refusal is logged.

        Args:
            request: The ApplyPlanningScene request.
            response: The ApplyPlanningScene response to fill (``success``).
        """
        why = self.scene.apply(request.scene)
        if why:
            self.get_logger().error(f"apply_planning_scene refused: {why}")
        dropped = self.scene.dropped_robot_pairs()
        if not why and dropped:
            pairs = ", ".join(f"{a}-{b}" for a, b in dropped)
            self.get_logger().warning(
                f"apply_planning_scene: the allowed collision matrix no longer allows {len(dropped)} of the robot's "
                f"{len(self.scene.robot_acm.entries)} adjacent link pairs ({pairs}): the scene's matrix replaced the "
                "whole matrix, and move_group would check these links against each other again"
            )
        response.success = not why
        return response

    def get_scene(self, request: Any, response: Any) -> Any:
        """Serve ``get_planning_scene``: the allowed collision matrix; the other components are left empty.

        As move_group's, a request without components asks for all of them.

        Args:
            request: The GetPlanningScene request (``components.components``, a bit field).
            response: The GetPlanningScene response to fill (``scene``, a whole scene: ``is_diff`` false).
        """
        wanted = request.components.components
        if not wanted or wanted & PlanningSceneComponents.ALLOWED_COLLISION_MATRIX:
            response.scene.allowed_collision_matrix = self.scene.acm.to_msg()
        response.scene.is_diff = False
        return response

    def _trajectory(self, path: np.ndarray, trajectory: Any) -> None:
        """Fill a RobotTrajectory with the path, each step timed at the slowest joint's speed limit."""
        jt = trajectory.joint_trajectory
        jt.header.frame_id = "base_link"
        jt.joint_names = list(self.names)
        steps = np.abs(np.diff(path, axis=0)) / self.robot.limits.velocity
        times = np.concatenate(([0.0], np.cumsum(np.max(steps, axis=1)))) if len(path) > 1 else np.zeros(len(path))
        for q, t in zip(path, times, strict=True):
            nanos = round(float(t) * 1e9)
            stamp = Duration(sec=nanos // 1_000_000_000, nanosec=nanos % 1_000_000_000)
            jt.points.append(JointTrajectoryPoint(positions=[float(v) for v in q], time_from_start=stamp))

    def _start(self, state: Any, what: str) -> np.ndarray | None:
        try:
            return joints_of(list(state.joint_state.name), state.joint_state.position, self.names, what)
        except ValueError as exc:
            self.get_logger().error(str(exc))
            return None

    def plan(self, request: Any, response: Any) -> Any:
        """Serve ``plan_kinematic_path``: a path to the request's one joint goal, timed at the joints' speed limits.

        Args:
            request: The GetMotionPlan request: one joint goal of the served group.
            response: The GetMotionPlan response to fill (``motion_plan_response``).
        """
        began = time.perf_counter()
        mpr, out = request.motion_plan_request, response.motion_plan_response
        out.group_name, out.trajectory_start = mpr.group_name, mpr.start_state
        out.error_code.val = self._plan(mpr, out)
        out.planning_time = time.perf_counter() - began
        points = len(out.trajectory.joint_trajectory.points)
        self.get_logger().info(
            f"plan_kinematic_path: {error_name(out.error_code.val)}, {points} points in {out.planning_time:.2f} s"
        )
        return response

    def _plan(self, mpr: Any, out: Any) -> int:
        if self.forced is not None:
            return int(self.forced)
        if mpr.group_name != self.group:
            return int(MoveItErrorCodes.INVALID_GROUP_NAME)
        q0 = self._start(mpr.start_state, "start_state")
        if q0 is None:
            return int(MoveItErrorCodes.INVALID_ROBOT_STATE)
        goals = mpr.goal_constraints
        if len(goals) != 1 or not goals[0].joint_constraints:
            return int(MoveItErrorCodes.INVALID_GOAL_CONSTRAINTS)  # the stand-in serves one joint goal
        names = [c.joint_name for c in goals[0].joint_constraints]
        positions = [c.position for c in goals[0].joint_constraints]
        try:
            goal = joints_of(names, positions, self.names, "goal_constraints")
        except ValueError:
            return int(MoveItErrorCodes.INVALID_GOAL_CONSTRAINTS)
        try:
            code, path = self.scene.joint_path(q0, goal, mpr.allowed_planning_time or 5.0)
        except CosimError as exc:
            self.get_logger().error(f"plan_kinematic_path: {exc}")
            return int(MoveItErrorCodes.FAILURE)
        if code == MoveItErrorCodes.SUCCESS:
            self._trajectory(path, out.trajectory)
        return int(code)

    def cartesian(self, request: Any, response: Any) -> Any:
        """Serve ``compute_cartesian_path``: a path through the request's waypoints and the fraction of it achieved.

        Args:
            request: The GetCartesianPath request: waypoints of the needle link in base_link.
            response: The GetCartesianPath response to fill (``solution``, ``fraction``, ``error_code``).
        """
        began = time.perf_counter()
        self._cartesian(request, response)
        self.get_logger().info(
            f"compute_cartesian_path: {error_name(response.error_code.val)}, fraction {response.fraction:g}, "
            f"{len(response.solution.joint_trajectory.points)} points in {time.perf_counter() - began:.2f} s"
            + (f" (the next pose is {self.scene.stop})" if response.fraction < 1.0 and self.scene.stop else "")
        )
        return response

    def _cartesian(self, request: Any, response: Any) -> None:
        response.start_state = request.start_state
        response.fraction = 0.0
        code = MoveItErrorCodes.SUCCESS
        q0 = self._start(request.start_state, "start_state")
        if request.group_name != self.group:
            code = MoveItErrorCodes.INVALID_GROUP_NAME
        elif request.link_name not in ("", self.scene.needle_link):
            code = MoveItErrorCodes.INVALID_LINK_NAME
        elif request.header.frame_id not in _FRAMES:
            code = MoveItErrorCodes.FRAME_TRANSFORM_FAILURE
        elif q0 is None:
            code = MoveItErrorCodes.INVALID_ROBOT_STATE
        elif request.max_step <= 0.0 or not request.waypoints:
            code = MoveItErrorCodes.FAILURE
        else:
            try:
                path, fraction = self.scene.cartesian_path(q0, list(request.waypoints), request.max_step)
            except CosimError as exc:
                self.get_logger().error(f"compute_cartesian_path: {exc}")
                code = MoveItErrorCodes.FAILURE
            else:
                if fraction > self.cap:  # the parameter cuts the path, as an obstacle would
                    path, fraction = path[: max(1, int(np.floor(self.cap * (len(path) - 1))) + 1)], self.cap
                response.fraction = float(fraction)
                self._trajectory(path, response.solution)
        response.error_code.val = int(code)


def _stand_in() -> StandInMoveGroup:
    """The node; what keeps it from starting is one ``error:`` line naming the stand-in. Says when it serves."""
    try:
        node = StandInMoveGroup()
    except (CosimError, ValueError) as exc:
        raise InputError(f"move_group stand-in: {exc}") from exc
    served = "plan_kinematic_path, compute_cartesian_path, apply_planning_scene, get_planning_scene"
    print(f"move_group stand-in: serving {served}", flush=True)
    return node


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until interrupted, as every session node does; exit status 1 with one ``error:`` line if it cannot start.

    See :func:`~cosim_validation.live.nodes.node_runtime.run_node`: signals, parent death, the bounded teardown.

    Args:
        argv: The command line as ``rclpy.init`` takes it (``--ros-args -p config:=...``); None: ``sys.argv``.
    """
    return run_node(_stand_in, argv, threads=1)


if __name__ == "__main__":
    sys.exit(main())
