"""moveit_msgs from and to the project's arrays: the anatomy as collision objects, robot states, poses, paths.

Field meanings are those of the public moveit_msgs definitions (third_party/moveit_msgs, docs/MOVEIT.md lists which
fields the controller fills and the stand-in reads).
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
from geometry_msgs.msg import Point, Pose, Quaternion
from moveit_msgs.msg import (
    AllowedCollisionEntry,
    AllowedCollisionMatrix,
    CollisionObject,
    MoveItErrorCodes,
    PlanningScene,
    RobotState,
)
from scipy.spatial.transform import Rotation
from sensor_msgs.msg import JointState
from shape_msgs.msg import Mesh, MeshTriangle

from cosim_validation.anatomy import AnatomyModel, AnatomyScene

#: ``type.db`` of the collision objects made from the anatomy; ``type.key`` is the model's role.
OBJECT_DB = "cosim_validation anatomy"


def error_name(code: int) -> str:
    """The name of a MoveItErrorCodes value (``PLANNING_FAILED``), or ``code N`` for an unknown one.

    Args:
        code: A MoveItErrorCodes value (e.g. ``error_code.val`` of an answer).
    """
    for name in dir(MoveItErrorCodes):
        if name.isupper() and getattr(MoveItErrorCodes, name) == code:
            return name
    return f"code {code}"


def error_code(name: str) -> int:
    """The MoveItErrorCodes value called ``name``.

    Args:
        name: The constant's upper-case name, e.g. ``PLANNING_FAILED``.

    Raises:
        ValueError: No such code.
    """
    value = getattr(MoveItErrorCodes, name, None) if name.isupper() else None
    if not isinstance(value, int):
        raise ValueError(f"no MoveItErrorCodes constant {name!r}")
    return value


def pose_msg(position_m: np.ndarray, R: np.ndarray) -> Pose:
    """geometry_msgs/Pose of a position (3,) [m] and a rotation matrix (3, 3).

    Args:
        position_m: The position in the pose's frame, shape (3,), in [m].
        R: The rotation in the pose's frame, shape (3, 3).
    """
    x, y, z, w = Rotation.from_matrix(np.asarray(R, dtype=np.float64)).as_quat()
    p = np.asarray(position_m, dtype=np.float64)
    return Pose(
        position=Point(x=float(p[0]), y=float(p[1]), z=float(p[2])),
        orientation=Quaternion(x=float(x), y=float(y), z=float(z), w=float(w)),
    )


def pose_arrays(pose: Pose) -> tuple[np.ndarray, np.ndarray]:
    """(position (3,) [m], rotation matrix (3, 3)) of a geometry_msgs/Pose (the quaternion normalised).

    Args:
        pose: The pose; its quaternion need not be normalised.

    Returns:
        The position, shape (3,), float64, in [m], and the rotation, shape (3, 3), both in the pose's frame; a
        zero quaternion gives the identity.
    """
    o = pose.orientation
    quat = np.array([o.x, o.y, o.z, o.w], dtype=np.float64)
    norm = float(np.linalg.norm(quat))
    R = Rotation.from_quat(quat / norm).as_matrix() if norm > 0 else np.eye(3)
    return np.array([pose.position.x, pose.position.y, pose.position.z], dtype=np.float64), R


def robot_state(joint_names: tuple[str, ...], q: np.ndarray) -> RobotState:
    """A full RobotState (not a diff) with the joints at ``q`` (J,) [rad].

    Args:
        joint_names: Names of the J joints.
        q: The joints, in the order of ``joint_names``, shape (J,), in [rad].
    """
    return RobotState(
        joint_state=JointState(name=list(joint_names), position=[float(v) for v in q]),
        is_diff=False,
    )


def joints_of(names: list[str], positions: Any, joint_names: tuple[str, ...], what: str) -> np.ndarray:
    """(J,) the positions of ``joint_names`` among ``names``/``positions``.

    Args:
        names: The message's joint names.
        positions: The message's positions, one per name.
        joint_names: The J joints wanted, in their order.
        what: The message, for the error.

    Returns:
        The positions of ``joint_names``, in their order, shape (J,), float64.

    Raises:
        ValueError: A joint is missing or a position is not finite (``what`` names the message).
    """
    index = {name: k for k, name in enumerate(names)}
    missing = [name for name in joint_names if name not in index]
    if missing:
        raise ValueError(f"{what} has no position of {', '.join(missing)} (it names {', '.join(names) or 'none'})")
    values = np.array([float(positions[index[name]]) for name in joint_names])
    if not np.isfinite(values).all():
        raise ValueError(f"{what} holds a position that is not finite: {values.tolist()}")
    return values


def trajectory_joints(trajectory: Any, joint_names: tuple[str, ...]) -> np.ndarray:
    """(m, J) the joint positions of a moveit_msgs/RobotTrajectory's joint trajectory, in our joint order.

    Args:
        trajectory: A moveit_msgs/RobotTrajectory; its ``joint_trajectory`` may name the joints in any order and more of
            them.
        joint_names: The robot's J joint names, in the order of the result's columns.

    Raises:
        ValueError: No points, or a joint of the robot missing from the trajectory.
    """
    jt = trajectory.joint_trajectory
    if not jt.points:
        raise ValueError("the trajectory has no points")
    names = list(jt.joint_names)
    rows = [
        joints_of(names, point.positions, joint_names, f"trajectory point {k}") for k, point in enumerate(jt.points)
    ]
    return np.array(rows)


def collision_object(model: AnatomyModel, frame: str) -> CollisionObject:
    """An ADD collision object: the model's mesh in ``frame`` (base_link), its id the model's name.

    Args:
        model: The anatomical model; its vertices (V, 3) in base_link [m] become the mesh, its role the ``type.key``.
        frame: The frame of the object's header, e.g. ``base_link``.
    """
    obj = CollisionObject()
    obj.header.frame_id = frame
    obj.id = model.name
    obj.type.key = model.role
    obj.type.db = OBJECT_DB
    obj.pose.orientation.w = 1.0
    mesh = Mesh()
    mesh.vertices = [Point(x=float(v[0]), y=float(v[1]), z=float(v[2])) for v in model.vertices_m]
    mesh.triangles = [MeshTriangle(vertex_indices=[int(i) for i in f]) for f in model.faces]
    obj.meshes = [mesh]
    obj.mesh_poses = [Pose(orientation=Quaternion(w=1.0))]
    obj.operation = CollisionObject.ADD
    return obj


def allowed_matrix(link: str, objects: list[str], allowed: set[str]) -> AllowedCollisionMatrix:
    """The ACM entries of ``link`` against ``objects``: contact allowed with the ``allowed`` ones only.

    Args:
        link: The needle link's name (first entry of the matrix).
        objects: The names of the collision objects (the other entries).
        allowed: The object names the link may touch; every other pair, between objects too, is not allowed.
    """
    names = [link, *objects]
    entries = []
    for a in names:
        row = []
        for b in names:
            pair = {a, b}
            row.append(link in pair and len(pair) == 2 and bool(pair & allowed))
        entries.append(AllowedCollisionEntry(enabled=row))
    return AllowedCollisionMatrix(entry_names=names, entry_values=entries)


def anatomy_scene_msg(scene: AnatomyScene, frame: str, link: str, needle_in_body: bool) -> PlanningScene:
    """A planning scene diff with every anatomy model as a collision object, and the ACM of the needle link.

    The needle (``link``) may touch the skin and the target models when ``needle_in_body`` (the straight moves
    enter the body); never the forbidden regions. Every other link may touch nothing.

    Args:
        scene: The anatomy; every model becomes an ADD collision object.
        frame: The frame of the collision objects, e.g. ``base_link``.
        link: The needle link's name in the allowed collision matrix.
        needle_in_body: Whether the needle may touch the skin and the target models (True for the straight moves).
    """
    objects = [m.name for m in scene.models]
    allowed = {m.name for m in scene.models if m.role in ("skin", "target")} if needle_in_body else set()
    msg = PlanningScene(is_diff=True)
    msg.world.collision_objects = [collision_object(m, frame) for m in scene.models]
    msg.allowed_collision_matrix = allowed_matrix(link, objects, allowed)
    return msg


def acm_scene_msg(scene: AnatomyScene, link: str, needle_in_body: bool) -> PlanningScene:
    """A planning scene diff that only changes the needle's ACM entries (see :func:`anatomy_scene_msg`).

    Args:
        scene: The anatomy; its model names are the matrix's objects.
        link: The needle link's name in the allowed collision matrix.
        needle_in_body: Whether the needle may touch the skin and the target models (True for the straight moves).
    """
    objects = [m.name for m in scene.models]
    allowed = {m.name for m in scene.models if m.role in ("skin", "target")} if needle_in_body else set()
    return PlanningScene(is_diff=True, allowed_collision_matrix=allowed_matrix(link, objects, allowed))


def model_of(obj: CollisionObject) -> AnatomyModel:
    """Return the anatomy model a collision object carries.

    The model is its first mesh placed by the object's pose and the mesh's pose (in the object's frame, taken
    as the planning frame), in [m], with the role ``type.key`` (``obstacle`` if empty).

    Args:
        obj: A collision object with at least one mesh, e.g. one made by :func:`collision_object`.

    Raises:
        ValueError: No mesh.
        InputError: A role the anatomy does not know.
    """
    if not obj.meshes:
        raise ValueError(f"collision object {obj.id!r} has no mesh (the stand-in reads meshes only)")
    local = np.array([[p.x, p.y, p.z] for p in obj.meshes[0].vertices], dtype=np.float64)
    p_obj, R_obj = pose_arrays(obj.pose)
    p_mesh, R_mesh = pose_arrays(obj.mesh_poses[0]) if obj.mesh_poses else (np.zeros(3), np.eye(3))
    vertices = (local @ R_mesh.T + p_mesh) @ R_obj.T + p_obj
    faces = np.array([list(t.vertex_indices) for t in obj.meshes[0].triangles], dtype=np.int64)
    role = obj.type.key or "obstacle"
    digest = hashlib.sha256(vertices.tobytes() + faces.tobytes()).hexdigest()
    return AnatomyModel(obj.id, role, vertices, faces, f"moveit:{obj.id}", digest, "m")
