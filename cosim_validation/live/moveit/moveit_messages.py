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
from cosim_validation.live.moveit.collision_matrix import CollisionMatrix

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


def merged_matrix(
    current: AllowedCollisionMatrix, link: str, objects: list[str], allowed: set[str]
) -> AllowedCollisionMatrix:
    """move_group's whole matrix ``current`` with the pairs of ``link`` and ``objects`` set, everything else kept.

    move_group replaces its whole allowed collision matrix by the matrix of a scene diff that names any entry
    (docs/MOVEIT.md), so a diff must carry the complete matrix: every entry and default entry of ``current``
    unchanged (the pairs the robot's SRDF allows among them), ``link`` and each object added as a row and a column
    where missing (its pairs as the default entries decide them: :meth:`.CollisionMatrix.default`), and the pair of
    ``link`` with each object allowed for the ``allowed`` objects only. The rows stay symmetric.

    Args:
        current: The matrix move_group holds (``/get_planning_scene``, component ALLOWED_COLLISION_MATRIX); an empty
            one gives the needle's entries alone.
        link: The needle link's name.
        objects: The names of the collision objects of the anatomy.
        allowed: The object names the link may touch; its pairs with the other objects are not allowed.

    Raises:
        ValueError: ``current`` is malformed: not one row per name, a row not one value per name, or not one value
            per default entry name.
    """
    names = list(current.entry_names)
    rows = [[bool(v) for v in entry.enabled] for entry in current.entry_values]
    default_names, default_values = list(current.default_entry_names), list(current.default_entry_values)
    if len(rows) != len(names) or len(default_names) != len(default_values):
        raise ValueError(
            f"an allowed collision matrix of {len(rows)} rows for {len(names)} names and {len(default_values)} "
            f"default values for {len(default_names)} default names"
        )
    for name, row in zip(names, rows, strict=True):
        if len(row) != len(names):
            raise ValueError(
                f"an allowed collision matrix whose row of {name!r} has {len(row)} values for {len(names)} names"
            )
    defaults = CollisionMatrix(defaults={n: bool(v) for n, v in zip(default_names, default_values, strict=True)})
    for new in (link, *objects):
        if new in names:
            continue
        for name, row in zip(names, rows, strict=True):
            row.append(defaults.default(name, new))
        names.append(new)
        rows.append([defaults.default(new, name) for name in names])
    i = names.index(link)
    for name in objects:
        j = names.index(name)
        if j != i:
            rows[i][j] = rows[j][i] = name in allowed
    return AllowedCollisionMatrix(
        entry_names=names,
        entry_values=[AllowedCollisionEntry(enabled=row) for row in rows],
        default_entry_names=default_names,
        default_entry_values=[bool(v) for v in default_values],
    )


def _needle_allowed(scene: AnatomyScene, needle_in_body: bool) -> set[str]:
    """The objects the needle may touch: the skin and the targets when it enters the body, else none."""
    return {m.name for m in scene.models if m.role in ("skin", "target")} if needle_in_body else set()


def anatomy_scene_msg(
    scene: AnatomyScene,
    frame: str,
    link: str,
    needle_in_body: bool,
    current: AllowedCollisionMatrix | None = None,
) -> PlanningScene:
    """A planning scene diff: every anatomy model as a collision object, the whole ACM with the needle's entries.

    The needle (``link``) may touch the skin and the target models when ``needle_in_body`` (the straight moves
    enter the body); never the forbidden regions. The other pairs of the matrix are those of ``current``
    (:func:`merged_matrix`).

    Args:
        scene: The anatomy; every model becomes an ADD collision object.
        frame: The frame of the collision objects, e.g. ``base_link``.
        link: The needle link's name in the allowed collision matrix.
        needle_in_body: Whether the needle may touch the skin and the target models (True for the straight moves).
        current: move_group's matrix, which the diff's matrix replaces; None: an empty one (the diff's matrix is
            then the needle's entries alone, and move_group loses every other allowed pair).

    Raises:
        ValueError: ``current`` is malformed.
    """
    objects = [m.name for m in scene.models]
    msg = PlanningScene(is_diff=True)
    msg.world.collision_objects = [collision_object(m, frame) for m in scene.models]
    base = current if current is not None else AllowedCollisionMatrix()
    msg.allowed_collision_matrix = merged_matrix(base, link, objects, _needle_allowed(scene, needle_in_body))
    return msg


def acm_scene_msg(
    scene: AnatomyScene, link: str, needle_in_body: bool, current: AllowedCollisionMatrix | None = None
) -> PlanningScene:
    """A planning scene diff that only changes the needle's ACM entries (see :func:`anatomy_scene_msg`).

    Args:
        scene: The anatomy; its model names are the matrix's objects.
        link: The needle link's name in the allowed collision matrix.
        needle_in_body: Whether the needle may touch the skin and the target models (True for the straight moves).
        current: move_group's matrix, which the diff's matrix replaces; None: an empty one (see
            :func:`anatomy_scene_msg`).

    Raises:
        ValueError: ``current`` is malformed.
    """
    objects = [m.name for m in scene.models]
    base = current if current is not None else AllowedCollisionMatrix()
    matrix = merged_matrix(base, link, objects, _needle_allowed(scene, needle_in_body))
    return PlanningScene(is_diff=True, allowed_collision_matrix=matrix)


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
