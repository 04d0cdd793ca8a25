"""The ``moveit`` controller: every case planned by MoveIt 2's move_group (docs/MOVEIT.md).

The five stages are those of :class:`~cosim_validation.controllers.planning.five_stage_planner.FiveStagePlanner`
(initialization, approach, injection, extraction, reset) and the insertion line that of ``straight`` (from the source
through the target); the paths come from move_group:

- the anatomy goes into the planning scene once (``/apply_planning_scene``: every model a collision object), and
  the needle link's allowed collisions are switched per stage: it may touch nothing during the initialization and
  the skin and the targets during the straight moves (never a forbidden region). move_group replaces its whole
  allowed collision matrix by a diff's, so each change reads the matrix first (``/get_planning_scene``) and sends
  it back whole, the robot's allowed pairs (its SRDF's) kept;
- initialization: ``/plan_kinematic_path`` from the home pose to a joint goal at the source (the project's IK);
- approach, injection, extraction, reset: ``/compute_cartesian_path``, one straight segment a request, the needle's
  orientation held; a ``fraction`` below 1 (move_group stopped before a collision or an unreachable pose) refuses
  the case naming the fraction.

MoveIt's paths are re-timed with the project's jerk-limited profiles at the sampling rate
(:mod:`~cosim_validation.controllers.planning.path_timing`), so a plan is timed like the built-in controllers'.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from cosim_validation.common.record import Stage
from cosim_validation.controllers.moveit_spec import MoveItSettings
from cosim_validation.controllers.planning.cartesian_line import CartesianLimits
from cosim_validation.controllers.planning.case_check import check_case
from cosim_validation.controllers.planning.errors import PlanningError
from cosim_validation.controllers.planning.path_timing import time_joint_path, time_tip_path
from cosim_validation.controllers.planning.plan import InsertionLine, Plan
from cosim_validation.controllers.plugin_api import ControllerContext
from cosim_validation.live.moveit.move_group_client import MoveGroupClient
from cosim_validation.live.moveit.moveit_requests import RequestBuilder

_ON_LINE_M = 1e-3  # a source this close to the insertion line approaches along it (as the five-stage planner)
_REACHED_RAD = 1e-3  # a joint path must start and end this close to the requested states [rad]


def make_controller(options: dict[str, Any], context: ControllerContext) -> MoveItController:
    """The factory of the built-in name ``moveit`` (its options checked by ``moveit_settings``).

    Args:
        options: The ``moveit`` controller's options, as :meth:`MoveItSettings.options` gives them.
        context: The case study: planner, collision world, kinematics, robot, anatomy.
    """
    return MoveItController(MoveItSettings.from_options(options), context)


class MoveItController:
    """A planning controller whose paths come from move_group (see the module docstring).

    Args:
        settings: Group, pipeline, planner, timeouts, domain, namespace.
        context: The case study.
    """

    def __init__(self, settings: MoveItSettings, context: ControllerContext) -> None:
        self.name = context.name
        self.settings = settings
        self.planner = context.planner
        self.world = context.world
        self.kinematics = context.kinematics
        self.home_q = context.robot.home_q
        self.requests = RequestBuilder(settings, context)
        self.client: MoveGroupClient | None = None
        self._scene_sent = False
        try:  # move_group must be there when the case study is loaded: one error then, not a refusal per case
            self._client().wait()
        except PlanningError:
            self.close()
            raise

    def _client(self) -> MoveGroupClient:
        if self.client is None:
            self.client = MoveGroupClient(self.settings)
        return self.client

    def close(self) -> None:
        """Leave move_group's domain."""
        if self.client is not None:
            self.client.close()
            self.client = None

    def plan_case(self, source: ArrayLike, target: ArrayLike, seed: int = 0) -> Plan:
        """The five-stage plan of one case from move_group's paths (``seed`` is not used).

        Args:
            source: The case's source point in base_link, outside the body, shape (3,), in [m].
            target: The case's target point in base_link, inside a target model, shape (3,), in [m].
            seed: The case seed (not used).

        Raises:
            PlanningError: Bad input, move_group not there or silent, a planning failure (its MoveItErrorCodes
                name), a Cartesian path followed only in part (the fraction), a path that cannot be timed.
        """
        started = time.perf_counter()
        source_m, target_m = check_case(self.world, source, target)
        line = self._line(source_m, target_m)
        q_source = self.planner.source_pose(source_m, line)  # the project's IK, the redundancy the line suits
        self._scene(needle_in_body=False)
        initialization = self._joint_move(self.home_q, q_source)
        self._scene(needle_in_body=True)
        config = self.planner.config
        standoff = line.entry_m - config.standoff_m * line.axis
        offset = source_m - line.entry_m
        on_line = np.linalg.norm(offset - np.dot(offset, line.axis) * line.axis) < _ON_LINE_M
        direct = on_line and np.dot(offset, line.axis) <= -config.standoff_m
        approach_points = [line.entry_m] if direct else [standoff, line.entry_m]
        approach = self._straight(q_source, approach_points, config.approach, "approach")
        injection = self._straight(approach[-1], [line.target_m], config.injection, "injection")
        extraction = self._straight(injection[-1], [line.entry_m], config.injection, "extraction")
        reset_points = [*approach_points[-2::-1], source_m]
        reset = self._straight(extraction[-1], reset_points, config.approach, "reset")
        stages = [
            (Stage.INITIALIZATION, initialization),
            (Stage.APPROACH, approach),
            (Stage.INJECTION, injection),
            (Stage.EXTRACTION, extraction),
            (Stage.RESET, reset),
        ]
        meta = {"planning_time_s": time.perf_counter() - started, "moveit_pipeline": self.settings.pipeline_id}
        return Plan.from_stages(stages, config.dt_s, source_m, line, self.name, meta)

    def _line(self, source_m: np.ndarray, target_m: np.ndarray) -> InsertionLine:
        axis = (target_m - source_m) / np.linalg.norm(target_m - source_m)
        entry = self.world.skin_entries(source_m[None, :], target_m)[0]
        if not np.isfinite(entry).all():
            raise PlanningError(
                f"the line from the source to the target {target_m.tolist()} never meets the skin", "no_skin_entry"
            )
        line = InsertionLine(target_m, axis, entry)
        if line.depth_m > self.planner.max_depth_m:
            raise PlanningError(
                f"target {line.depth_m * 1e3:.1f} mm below the skin, deeper than the needle allows "
                f"({self.planner.max_depth_m * 1e3:.1f} mm = length - reserve)",
                "too_deep",
            )
        return line

    def _scene(self, *, needle_in_body: bool) -> None:
        """Send the anatomy (first call) and the needle's allowed collisions to move_group.

        move_group replaces its whole allowed collision matrix by a diff's, so its matrix is read first
        (``/get_planning_scene``) and sent back whole, the needle's entries merged in.
        """
        client = self._client()
        current = client.call("get_scene", self.requests.matrix_query()).scene.allowed_collision_matrix
        try:
            request = self.requests.scene(
                with_objects=not self._scene_sent, needle_in_body=needle_in_body, current=current
            )
        except ValueError as exc:
            raise PlanningError(
                f"move_group answered {client.service_name('get_scene')} with {exc}", "bad_scene"
            ) from None
        answer = client.call("scene", request)
        if not answer.success:
            raise PlanningError("move_group did not apply the planning scene (success false)", "scene_not_applied")
        self._scene_sent = True

    def _joint_move(self, q_from: np.ndarray, q_to: np.ndarray) -> np.ndarray:
        """The initialization: move_group's joint-space path, re-timed."""
        answer = self._client().call("plan", self.requests.joint_goal(q_from, q_to))
        response = answer.motion_plan_response
        code = self.requests.code_name(response.error_code.val)
        if code != "SUCCESS":
            raise PlanningError(f"move_group could not plan the initialization: {code}", "planning_failed")
        path = self.requests.path(response.trajectory, "the initialization")
        if np.max(np.abs(path[0] - q_from)) > _REACHED_RAD or np.max(np.abs(path[-1] - q_to)) > _REACHED_RAD:
            raise PlanningError("move_group's initialization path does not run from home to the source", "bad_plan")
        return time_joint_path(path, self.planner.joint_limits, self.planner.config.dt_s)

    def _straight(
        self, q_start: np.ndarray, points_m: list[np.ndarray], limits: CartesianLimits, what: str
    ) -> np.ndarray:
        """Straight tip segments through ``points_m`` from ``q_start``, one Cartesian request each, re-timed."""
        parts = [q_start[None, :]]
        R = self.kinematics.tip_pose(q_start).R
        for point in points_m:
            answer = self._client().call("cartesian", self.requests.cartesian(parts[-1][-1], point, R))
            code = self.requests.code_name(answer.error_code.val)
            if code != "SUCCESS":
                raise PlanningError(f"move_group could not compute the {what}: {code}", "planning_failed")
            if answer.fraction < 1.0:
                raise PlanningError(
                    f"compute_cartesian_path followed only a fraction {answer.fraction:g} of the {what} to "
                    f"{np.round(point, 4).tolist()} (move_group stops before a collision or an unreachable pose)",
                    "cartesian_fraction",
                )
            path = self.requests.path(answer.solution, f"the {what}")
            tips, _ = self.kinematics.tip_poses(path)
            timed = time_tip_path(path, tips, limits, self.planner.joint_limits, self.planner.config.dt_s)
            parts.append(timed[1:])
        return np.concatenate(parts)
