"""The five stages of a needle insertion ([Actuators 2025]): initialization, approach, injection, extraction, reset."""

from __future__ import annotations

import time
from itertools import pairwise

import numpy as np

from cosim_validation.common.record import Stage
from cosim_validation.controllers.planning.cartesian_line import line_motion
from cosim_validation.controllers.planning.collision_world import CollisionWorld
from cosim_validation.controllers.planning.errors import PlanningError
from cosim_validation.controllers.planning.joint_motion import joint_line, joint_polyline, scaled
from cosim_validation.controllers.planning.joint_space_planner import plan_joint_path
from cosim_validation.controllers.planning.motion_checker import MotionChecker, densify
from cosim_validation.controllers.planning.plan import InsertionLine, Plan
from cosim_validation.controllers.planning.planning_config import PlanningConfig
from cosim_validation.robots.model import RobotConfig
from cosim_validation.robots.model.inverse_kinematics import InverseKinematics

_ON_LINE_M = 1e-3  # a source this close to the insertion line approaches along it, without a standoff point
_COARSE_STEP_M = 0.005  # tip step of the quick look-ahead that picks the redundancy at the source
_ROLLS = 8  # needle rolls tried at the source (45 deg apart)
_SMOOTH_STEP_RAD = 0.03  # a look-ahead whose joints move at most this per 5 mm of tip motion is taken at once


def _sample_polyline(waypoints: list[np.ndarray], step_m: float) -> np.ndarray:
    """(m, 3) points every ``step_m`` or less along the polyline, the first waypoint excluded."""
    parts = []
    for a, b in pairwise(waypoints):
        count = max(1, int(np.ceil(np.linalg.norm(b - a) / step_m)))
        parts.append(a + np.linspace(0.0, 1.0, count + 1)[1:, None] * (b - a))
    return np.concatenate(parts)


class FiveStagePlanner:
    """Plans a case from the home pose through a given insertion line and back to the source.

    * initialization: joint-space move from the home pose to the source (needle already along the
      insertion axis), collision-checked; OMPL when the straight joint move is blocked;
    * approach: straight lines at constant orientation from the source (via a standoff point on the
      insertion line when the source is off it) to the skin entry point;
    * injection: straight line from the entry to the target at constant orientation;
    * extraction: the injection reversed; reset: the approach reversed (back to the source).

    Args:
        robot: Arm, needle, home pose, commanding limits.
        planning: Sampling rate, speeds, clearances.
        world: The anatomy.
    """

    def __init__(self, robot: RobotConfig, planning: PlanningConfig, world: CollisionWorld) -> None:
        self.robot = robot
        self.config = planning
        self.world = world
        self.kinematics = robot.kinematics
        self.ik = InverseKinematics(self.kinematics, robot.q_lower, robot.q_upper, robot.home_q)
        self.joint_limits = scaled(robot.limits, planning.joint_velocity_scale, planning.joint_acceleration_scale)
        self.checker = MotionChecker(self.kinematics, world, planning.arm_clearance_m, port_links=robot.port_links)

    @property
    def max_depth_m(self) -> float:
        """Deepest insertion the needle allows (length - reserve) [m].

        Unlimited (the arm's reach decides) for an instrument that enters through a port at its remote centre of motion
        (the dVRK PSM, the Raven-II).
        """
        if self.robot.port_links:
            return float("inf")
        return self.kinematics.needle_length_m - self.config.needle_reserve_m

    def plan(self, source_m: np.ndarray, line: InsertionLine, controller: str) -> Plan:
        """The five-stage plan for one insertion line.

        Args:
            source_m: Where the needle tip starts, in base_link, shape (3,), in [m].
            line: The insertion line (target, needle direction, skin entry).
            controller: The name the plan is made under.

        Raises:
            PlanningError: too deep for the needle, unreachable, or no collision-free motion (with the reason).
        """
        started = time.perf_counter()
        if line.depth_m > self.max_depth_m:
            raise PlanningError(
                f"target {line.depth_m * 1e3:.1f} mm below the skin, deeper than the needle allows "
                f"({self.max_depth_m * 1e3:.1f} mm = length - reserve)",
                "too_deep",
            )
        dt = self.config.dt_s
        q_source = self._source_pose(source_m, line)
        initialization, used_ompl = self._initialization(q_source)
        approach = self._approach(q_source, source_m, line)
        injection = line_motion(
            self.ik,
            approach[-1],
            line.entry_m,
            line.target_m,
            self.config.injection,
            self.joint_limits,
            dt,
            "injection",
        )
        self._require_free(injection, "injection", check_needle=False)
        stages = [
            (Stage.INITIALIZATION, initialization),
            (Stage.APPROACH, approach),
            (Stage.INJECTION, injection),
            (Stage.EXTRACTION, injection[::-1]),
            (Stage.RESET, approach[::-1]),
        ]
        meta = {"ompl_used": used_ompl, "planning_time_s": time.perf_counter() - started}
        return Plan.from_stages(stages, dt, np.asarray(source_m, dtype=np.float64), line, controller, meta)

    def _waypoints(self, source_m: np.ndarray, line: InsertionLine) -> list[np.ndarray]:
        """Tip waypoints from the source to the target: [source, (standoff,) entry, target]."""
        offset = source_m - line.entry_m
        off_line = np.linalg.norm(offset - np.dot(offset, line.axis) * line.axis)
        if off_line < _ON_LINE_M and np.dot(offset, line.axis) <= -self.config.standoff_m:
            return [source_m, line.entry_m, line.target_m]
        return [source_m, line.entry_m - self.config.standoff_m * line.axis, line.entry_m, line.target_m]

    def source_pose(self, source_m: np.ndarray, line: InsertionLine) -> np.ndarray:
        """The joint vector at the source the plan of ``line`` starts its straight part from (see below).

        Args:
            source_m: Where the needle tip starts, in base_link, shape (3,), in [m].
            line: The insertion line; the needle lies along its axis at the source.

        Returns:
            The joint vector, shape (J,), in [rad], or [m] for a prismatic joint.

        Raises:
            PlanningError: ``unreachable``: the source with the needle along the line is out of reach.
        """
        return self._source_pose(source_m, line)

    def _source_pose(self, source_m: np.ndarray, line: InsertionLine) -> np.ndarray:
        """The joint vector at the source whose redundancy (needle roll, elbow) best suits the whole straight part.

        Candidates: the IK solution from the home posture and its turns about the needle; each follows the
        waypoints coarsely (every 5 mm). The home-like solution is taken when its largest joint step is at most
        0.03 rad; else every turn is tried and the one with the smallest largest step is taken.
        """
        solved = self.ik.solve(source_m, line.axis)
        if not solved.converged:
            raise PlanningError(
                f"source {np.round(source_m, 4).tolist()} with the needle along {np.round(line.axis, 3).tolist()} "
                f"is out of reach (IK error {solved.position_error_m * 1e3:.2f} mm)",
                "unreachable",
            )
        points = _sample_polyline(self._waypoints(source_m, line), _COARSE_STEP_M)
        best, best_score = solved.q, self._look_ahead(solved.q, points)
        if best_score > _SMOOTH_STEP_RAD:  # the home-like solution is not smooth enough: try the other rolls
            for candidate in self.ik.solve_rolls(solved.q, _ROLLS)[1:]:
                score = self._look_ahead(candidate.q, points)
                if score < best_score:
                    best, best_score = candidate.q, score
        return best

    def _look_ahead(self, q_start: np.ndarray, points: np.ndarray) -> float:
        """Largest joint step [rad] following ``points`` (m, 3) from ``q_start`` with the needle axis held.

        Inf if IK cannot follow them.
        """
        R = self.kinematics.tip_pose(q_start).R
        path = self.ik.track(q_start, points, R, full_orientation=False)
        if not path.converged:
            return np.inf
        return float(np.max(np.abs(np.diff(np.vstack((q_start, path.q)), axis=0))))

    def needle_clearance(self, q: np.ndarray, enough_m: float = np.inf) -> np.ndarray:
        """(n,) distance of the needle to the nearest forbidden region at each joint vector (n, J) [m].

        Distances at or above ``enough_m`` may be lower bounds (see :meth:`CollisionWorld.forbidden_distance`).

        Args:
            q: Joint vectors, shape (n, J) or one (J,), in [rad], or [m] for a prismatic joint.
            enough_m: Distances at or above this need not be exact, in [m].
        """
        mount, tip = self.kinematics.needle_segments(q)
        return self.world.forbidden_distance(mount, tip, enough_m)[0]

    def _initialization(self, q_source: np.ndarray) -> tuple[np.ndarray, bool]:
        """Joint samples from home to ``q_source``, and whether OMPL was needed."""
        home = self.robot.home_q
        step = self.config.collision_step_rad
        for q, name in ((home, "home pose"), (q_source, "source pose")):
            problem = self.checker.problem(q[None, :], check_needle=True)
            if problem is not None:
                raise PlanningError(f"the {name} is not collision-free: {problem}", "collision")
        straight = joint_line(home, q_source, self.joint_limits, self.config.dt_s)
        if self.checker.problem(densify(straight, step), check_needle=True) is None:
            return straight, False
        waypoints = plan_joint_path(
            home, q_source, self.robot.q_lower, self.robot.q_upper, self.checker.valid, step, self.config.ompl
        )
        motion = joint_polyline(waypoints, self.joint_limits, self.config.dt_s)
        self._require_free(densify(motion, step), "initialization (OMPL path)", check_needle=True)
        return motion, True

    def _approach(self, q_source: np.ndarray, source_m: np.ndarray, line: InsertionLine) -> np.ndarray:
        """Joint samples from the source to the skin entry, orientation constant.

        The part on the insertion line needs no needle check: the entry is the needle's first contact with
        the skin along the line, so the needle behind the tip is outside. An off-line source first moves to
        a standoff point on the line; that part is checked.
        """
        standoff = line.entry_m - self.config.standoff_m * line.axis
        offset = source_m - line.entry_m
        off_line = np.linalg.norm(offset - np.dot(offset, line.axis) * line.axis)
        on_line = off_line < _ON_LINE_M and np.dot(offset, line.axis) <= -self.config.standoff_m
        dt = self.config.dt_s
        q = q_source[None, :]
        if not on_line:
            q = line_motion(
                self.ik, q_source, source_m, standoff, self.config.approach, self.joint_limits, dt, "approach"
            )
            self._require_free(q, "approach to the standoff point", check_needle=True)
        last = line_motion(
            self.ik,
            q[-1],
            standoff if not on_line else source_m,
            line.entry_m,
            self.config.approach,
            self.joint_limits,
            dt,
            "approach",
        )
        self._require_free(last, "approach", check_needle=False)
        return np.concatenate((q, last[1:]))

    def _require_free(self, q: np.ndarray, what: str, *, check_needle: bool) -> None:
        problem = self.checker.problem(q, check_needle=check_needle)
        if problem is not None:
            reason = "self_collision" if problem.startswith("self-collision") else "collision"
            raise PlanningError(f"{what}: {problem}", reason)
