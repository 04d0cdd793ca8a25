"""The requests the ``moveit`` controller sends to move_group, field by field (table in docs/MOVEIT.md)."""

from __future__ import annotations

from typing import Any

import numpy as np
from moveit_msgs.msg import Constraints, JointConstraint, PlanningSceneComponents
from moveit_msgs.srv import ApplyPlanningScene, GetCartesianPath, GetMotionPlan, GetPlanningScene

from cosim_validation.controllers.moveit_spec import MoveItSettings
from cosim_validation.controllers.planning.errors import PlanningError
from cosim_validation.controllers.plugin_api import ControllerContext
from cosim_validation.live.moveit.moveit_messages import (
    acm_scene_msg,
    anatomy_scene_msg,
    error_name,
    pose_msg,
    robot_state,
    trajectory_joints,
)

#: The frame of every pose and collision object (the robot's base, the anatomy's frame).
PLANNING_FRAME = "base_link"
#: The link the Cartesian waypoints are for unless ``controllers.moveit.link`` names another.
NEEDLE_TIP_LINK = "needle_tip"
_JOINT_GOAL_TOLERANCE_RAD = 1e-4
_WORKSPACE_HALF_M = 2.0  # the joint-space planner's workspace: a cube this far around the base [m]


class RequestBuilder:
    """Builds move_group requests for one case study.

    Args:
        settings: Group, pipeline, planner, steps.
        context: The case study (joint names, anatomy, planning limits).
    """

    def __init__(self, settings: MoveItSettings, context: ControllerContext) -> None:
        self.settings = settings
        self.joint_names = context.kinematics.joint_names
        self.scene_model = context.scene
        self.link = settings.link or NEEDLE_TIP_LINK
        planning = context.planner.config
        self.velocity_scale = float(planning.joint_velocity_scale)
        self.acceleration_scale = float(planning.joint_acceleration_scale)

    def matrix_query(self) -> Any:
        """GetPlanningScene request for move_group's allowed collision matrix (component ALLOWED_COLLISION_MATRIX)."""
        request = GetPlanningScene.Request()
        request.components.components = PlanningSceneComponents.ALLOWED_COLLISION_MATRIX
        return request

    def scene(self, *, with_objects: bool, needle_in_body: bool, current: Any) -> Any:
        """ApplyPlanningScene request: the anatomy and the whole allowed collision matrix, or only the latter.

        move_group replaces its whole matrix by the diff's, so the diff carries ``current`` (move_group's matrix)
        with the needle's entries merged in (:func:`~.moveit_messages.merged_matrix`).

        Args:
            with_objects: Whether to add the anatomy as collision objects (the first request of a controller) or to send
                only the allowed collision matrix.
            needle_in_body: Whether the needle may touch the skin and the target models (True for the straight moves).
            current: The moveit_msgs/AllowedCollisionMatrix move_group holds (the answer to :meth:`matrix_query`).

        Raises:
            ValueError: ``current`` is malformed (rows and names of different lengths).
        """
        request = ApplyPlanningScene.Request()
        if with_objects:
            request.scene = anatomy_scene_msg(self.scene_model, PLANNING_FRAME, self.link, needle_in_body, current)
        else:
            request.scene = acm_scene_msg(self.scene_model, self.link, needle_in_body, current)
        return request

    def joint_goal(self, q_from: np.ndarray, q_to: np.ndarray) -> Any:
        """GetMotionPlan request from ``q_from`` to a joint goal at ``q_to`` (J,) [rad].

        Args:
            q_from: The start state's joints, shape (J,), in [rad].
            q_to: The goal's joints, shape (J,), in [rad].
        """
        request = GetMotionPlan.Request()
        mpr = request.motion_plan_request
        mpr.workspace_parameters.header.frame_id = PLANNING_FRAME
        for corner, sign in ((mpr.workspace_parameters.min_corner, -1.0), (mpr.workspace_parameters.max_corner, 1.0)):
            corner.x = corner.y = corner.z = sign * _WORKSPACE_HALF_M
        mpr.start_state = robot_state(self.joint_names, q_from)
        mpr.goal_constraints = [
            Constraints(
                name="source pose",
                joint_constraints=[
                    JointConstraint(
                        joint_name=name,
                        position=float(value),
                        tolerance_above=_JOINT_GOAL_TOLERANCE_RAD,
                        tolerance_below=_JOINT_GOAL_TOLERANCE_RAD,
                        weight=1.0,
                    )
                    for name, value in zip(self.joint_names, q_to, strict=True)
                ],
            )
        ]
        mpr.pipeline_id = self.settings.pipeline_id
        mpr.planner_id = self.settings.planner_id
        mpr.group_name = self.settings.group
        mpr.num_planning_attempts = self.settings.planning_attempts
        mpr.allowed_planning_time = self.settings.planning_time_s
        mpr.max_velocity_scaling_factor = self.velocity_scale
        mpr.max_acceleration_scaling_factor = self.acceleration_scale
        return request

    def cartesian(self, q_start: np.ndarray, point_m: np.ndarray, R: np.ndarray) -> Any:
        """GetCartesianPath request: the tip link from ``q_start`` straight to ``point_m``, orientation ``R``.

        Args:
            q_start: The start state's joints, shape (J,), in [rad].
            point_m: The tip link's goal position in base_link (the planning frame), shape (3,), in [m].
            R: The tip link's goal orientation in base_link, a rotation matrix, shape (3, 3).
        """
        request = GetCartesianPath.Request()
        request.header.frame_id = PLANNING_FRAME
        request.start_state = robot_state(self.joint_names, q_start)
        request.group_name = self.settings.group
        request.link_name = self.link
        request.waypoints = [pose_msg(point_m, R)]
        request.max_step = self.settings.max_step_m
        request.jump_threshold = self.settings.jump_threshold
        request.avoid_collisions = True
        if hasattr(request, "max_velocity_scaling_factor"):  # moveit_msgs 2.6 on; not in Humble's 2.2
            request.max_velocity_scaling_factor = self.velocity_scale
            request.max_acceleration_scaling_factor = self.acceleration_scale
        return request

    def code_name(self, code: int) -> str:
        """The MoveItErrorCodes name of ``code``.

        Args:
            code: A MoveItErrorCodes value (e.g. ``error_code.val`` of an answer).
        """
        return error_name(code)

    def path(self, trajectory: Any, what: str) -> np.ndarray:
        """(m, J) the joint path of a RobotTrajectory in our joint order.

        Args:
            trajectory: A moveit_msgs/RobotTrajectory of move_group's answer.
            what: Which move it is, for the error message (e.g. ``the initialization``).

        Raises:
            PlanningError: ``bad_plan``: no points, or a joint of the robot missing.
        """
        try:
            return trajectory_joints(trajectory, self.joint_names)
        except ValueError as exc:
            raise PlanningError(f"move_group's path of {what}: {exc}", "bad_plan") from None
