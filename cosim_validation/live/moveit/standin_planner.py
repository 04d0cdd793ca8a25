"""What the emulated move_group answers: the project's planner behind move_group's services.

It keeps a planning scene of its own, built only from the collision objects and the allowed collision matrix it
is sent (never from the case study's anatomy): the skin (``type.key`` ``skin``) that no arm link may enter, the
other objects that the needle link may touch only where the matrix allows it. Its matrix starts as a robot's SRDF
would give it (the adjacent link pairs allowed, :func:`~.collision_matrix.robot_matrix`), and a scene replaces it
as MoveIt does (:meth:`StandInScene.apply`). It answers

- GetMotionPlan (a joint goal): the straight joint move when it is free, else an OMPL path around the objects
  (the project's joint-space planner), else ``PLANNING_FAILED``;
- GetCartesianPath: the link's poses interpolated every ``max_step`` (positions on straight lines, orientations
  slerped), followed by the project's IK; the path stops before the first pose that is unreachable or in collision,
  and ``fraction`` says how much of it was followed (``SUCCESS`` even below 1, as move_group does).

Which request fields it reads and which response fields it fills: docs/MOVEIT.md.
"""

from __future__ import annotations

import math

import numpy as np
from moveit_msgs.msg import CollisionObject, MoveItErrorCodes, PlanningScene
from scipy.spatial.transform import Rotation, Slerp

from cosim_validation.anatomy import AnatomyModel, AnatomyScene
from cosim_validation.common.exceptions import CosimError
from cosim_validation.controllers.planning.collision_world import CollisionWorld
from cosim_validation.controllers.planning.errors import PlanningError
from cosim_validation.controllers.planning.five_stage_planner import FiveStagePlanner
from cosim_validation.controllers.planning.joint_space_planner import plan_joint_path
from cosim_validation.controllers.planning.motion_checker import densify
from cosim_validation.controllers.planning.planning_config import PlanningConfig
from cosim_validation.live.moveit.collision_matrix import CollisionMatrix, robot_matrix
from cosim_validation.live.moveit.moveit_messages import model_of, pose_arrays
from cosim_validation.robots.model import RobotConfig

_IK_TOLERANCE_M = 1e-5  # a Cartesian pose counts as reached within this tip error [m]
_IK_TOLERANCE_RAD = 1e-4


class StandInScene:
    """The planning scene of the stand-in: objects, the needle's allowed contacts, and the checks on them.

    Args:
        robot: The arm (as move_group loads it from robot_description).
        planning: Limits, collision step and OMPL settings of the project's planner.
        needle_link: The link name the allowed collision matrix names the needle by.
    """

    def __init__(self, robot: RobotConfig, planning: PlanningConfig, needle_link: str) -> None:
        self.robot, self.planning, self.needle_link = robot, planning, needle_link
        self.models: dict[str, AnatomyModel] = {}
        #: The starting matrix, as the robot's SRDF gives it (its pairs are those MoveIt would not check).
        self.robot_acm = robot_matrix(robot.kinematics.chain, needle_link)
        self.acm = CollisionMatrix(dict(self.robot_acm.entries), dict(self.robot_acm.defaults))
        self.planner: FiveStagePlanner | None = None
        self.stop = ""  # why the last Cartesian path stopped early ("" : it did not)

    def apply(self, scene: PlanningScene) -> str:
        """Apply a scene (a diff or a whole one); "" on success, else why not (the scene then stays as it was).

        The allowed collision matrix is handled as MoveIt's ``PlanningScene`` does
        (moveit_core/planning_scene/src/planning_scene.cpp): ``setPlanningSceneDiffMsg`` replaces the whole matrix
        by the diff's whenever the diff's ``entry_names`` is not empty, and keeps it otherwise;
        ``setPlanningSceneMsg`` (a whole scene) always replaces it. A replacement drops every pair the new matrix
        does not allow, the robot's adjacent links' too (:meth:`dropped_robot_pairs`).

        Args:
            scene: A moveit_msgs/PlanningScene: ADD, APPEND or REMOVE collision objects with meshes, and an allowed
                collision matrix (the needle link's pairs with the objects say which objects the needle may touch).
        """
        models = dict(self.models) if scene.is_diff else {}
        try:
            for obj in scene.world.collision_objects:
                if obj.operation == CollisionObject.REMOVE:
                    models.pop(obj.id, None)
                elif obj.operation in (CollisionObject.ADD, CollisionObject.APPEND):
                    models[obj.id] = model_of(obj)
                else:
                    return f"collision object {obj.id!r}: operation {obj.operation} is not served by the stand-in"
            acm = scene.allowed_collision_matrix
            matrix = CollisionMatrix.from_msg(acm) if acm.entry_names or not scene.is_diff else self.acm
            planner = self.planner
            if models != self.models or planner is None:
                world = CollisionWorld(AnatomyScene(tuple(models.values()), np.eye(4), "moveit planning scene"))
                planner = FiveStagePlanner(self.robot, self.planning, world)
        except (ValueError, CosimError) as exc:
            return str(exc)
        self.models, self.planner, self.acm = models, planner, matrix
        return ""

    def dropped_robot_pairs(self) -> list[tuple[str, str]]:
        """The robot's adjacent link pairs (allowed at the start, as by an SRDF) that the matrix no longer allows.

        move_group would check these pairs again, and adjacent links usually touch at their joint: most states
        would be in self-collision. The stand-in's self-collision check leaves adjacent links out all the same; the
        node logs these pairs.
        """
        pairs = [tuple(sorted(pair)) for pair in self.robot_acm.entries if not self.acm.allowed(*pair)]
        return sorted((a, b) for a, b in pairs)

    def _planner(self) -> FiveStagePlanner:
        if self.planner is None:
            raise PlanningError("no planning scene with a skin object was applied", "no_scene")
        return self.planner

    def problems(self, q: np.ndarray) -> np.ndarray:
        """Return whether each joint vector collides, shape (n,), bool.

        A collision is the arm in the skin, self-collision, the needle in the skin or a forbidden object where
        the allowed collision matrix does not allow it.

        Args:
            q: Joint vectors, shape (n, J).
        """
        planner = self._planner()
        world, checker = planner.world, planner.checker
        mount, tip = planner.kinematics.needle_segments(q)
        bad = np.zeros(len(q), dtype=bool)
        for name, mesh in world.forbidden.items():
            if not self.acm.allowed(self.needle_link, name):
                bad |= mesh.segment_distance(mount, tip).distance_m <= 0.0
        check_needle = not self.acm.allowed(self.needle_link, world.skin_name)
        if checker.problem(q, check_needle=check_needle) is not None:
            for i in np.flatnonzero(~bad):
                bad[i] = checker.problem(q[i : i + 1], check_needle=check_needle) is not None
        return bad

    def joint_path(self, q_from: np.ndarray, q_to: np.ndarray, time_limit_s: float) -> tuple[int, np.ndarray]:
        """(MoveItErrorCodes value, (m, J) waypoints) of a collision-free joint path.

        Args:
            q_from: The start joints, shape (J,), in [rad].
            q_to: The goal joints, shape (J,), in [rad].
            time_limit_s: The request's planning time in [s]; caps the OMPL planner's own time limit.

        Returns:
            The MoveItErrorCodes value and the waypoints, shape (m, J), in [rad]; (0, J) unless SUCCESS.
        """
        step = self.planning.collision_step_rad
        if self.problems(q_from[None, :])[0]:
            return MoveItErrorCodes.START_STATE_IN_COLLISION, np.empty((0, len(q_from)))
        if self.problems(q_to[None, :])[0]:
            return MoveItErrorCodes.GOAL_IN_COLLISION, np.empty((0, len(q_from)))
        straight = np.stack([q_from, q_to])
        if not self.problems(densify(straight, step)).any():
            return MoveItErrorCodes.SUCCESS, straight
        ompl = self.planning.ompl
        settings = type(ompl)(ompl.planner, min(ompl.time_limit_s, time_limit_s), ompl.seed)
        robot = self.robot
        try:
            path = plan_joint_path(
                q_from, q_to, robot.q_lower, robot.q_upper, lambda q: not self.problems(q[None, :])[0], step, settings
            )
        except PlanningError:
            return MoveItErrorCodes.PLANNING_FAILED, np.empty((0, len(q_from)))
        if self.problems(densify(path, step)).any():
            return MoveItErrorCodes.PLANNING_FAILED, np.empty((0, len(q_from)))
        return MoveItErrorCodes.SUCCESS, path

    def cartesian_path(self, q_start: np.ndarray, poses: list[object], max_step_m: float) -> tuple[np.ndarray, float]:
        """((k, J) states from ``q_start`` along the poses, fraction of the path length followed).

        Args:
            q_start: The start joints, shape (J,), in [rad].
            poses: The tip's waypoints, geometry_msgs/Pose in base_link (position in [m]).
            max_step_m: The largest step of the tip between two states, in [m].

        Returns:
            The states, ``q_start`` first, shape (k, J), in [rad], and the fraction of the path's length they
            follow, in [0, 1].
        """
        planner = self._planner()
        kin = planner.kinematics
        start = kin.tip_pose(q_start)
        points, rotations = [], []
        last_p, last_R = start.pos_m, start.R
        for pose in poses:
            p, R = pose_arrays(pose)
            count = max(1, math.ceil(float(np.linalg.norm(p - last_p)) / max_step_m))
            u = np.arange(1, count + 1) / count
            slerp = Slerp([0.0, 1.0], Rotation.from_matrix(np.stack([last_R, R])))
            points.append(last_p + u[:, None] * (p - last_p))
            rotations.append(slerp(u).as_matrix())
            last_p, last_R = p, R
        targets, frames = np.concatenate(points), np.concatenate(rotations)
        lengths = np.linalg.norm(np.diff(np.vstack((start.pos_m, targets)), axis=0), axis=1)
        distance = np.cumsum(lengths)
        track = planner.ik.track(q_start, targets, frames, full_orientation=True)
        reached = (track.position_error_m < _IK_TOLERANCE_M) & (track.orientation_error_rad < _IK_TOLERANCE_RAD)
        ok = reached & ~self.problems(track.q)
        k = int(np.argmin(ok)) if not ok.all() else len(ok)
        self.stop = "" if k == len(ok) else ("unreachable" if not reached[k] else "in collision")
        total = float(distance[-1])
        fraction = 1.0 if k == len(ok) else (float(distance[k - 1]) / total if k > 0 and total > 0 else 0.0)
        return np.vstack((q_start, track.q[:k])), fraction
