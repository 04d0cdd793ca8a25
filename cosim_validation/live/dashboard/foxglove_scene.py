"""The session as Foxglove scene entities (SDK messages): the anatomy, each robot's arm, tip paths, target.

Built from plain arrays (the anatomy's vertices and faces, joint origins from the robot's forward kinematics, tip
tracks of the dashboard's model), in ``base_link`` [m]. The anatomy also reaches Foxglove as the session's own
marker topic (``/cosim/markers/anatomy``); as scene entities it needs no marker settings in the 3D panel.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim_validation.common.record import RobotRole
from cosim_validation.live.dashboard.case_view import CaseView
from cosim_validation.live.dashboard.decimation import stride_decimate

FRAME = "base_link"
RGBA = {
    RobotRole.EXPECTED: (0.16, 0.16, 0.16, 1.0),
    RobotRole.VIRTUAL: (0.12, 0.47, 0.71, 1.0),
    RobotRole.PHYSICAL: (0.9, 0.47, 0.08, 1.0),
}
MAX_PATH_POINTS = 1000
#: Anatomy colours by role: targets green, forbidden regions red, the skin a faint beige (all translucent).
ROLE_RGBA = {"target": (0.2, 0.7, 0.3, 0.25), "obstacle": (0.85, 0.1, 0.1, 0.5), "skin": (0.9, 0.8, 0.7, 0.08)}


def _fm() -> Any:
    import foxglove.messages as fm

    return fm


def _points(xyz_m: np.ndarray) -> list[Any]:
    fm = _fm()
    return [fm.Point3(x=float(x), y=float(y), z=float(z)) for x, y, z in np.asarray(xyz_m, dtype=np.float64)]


def _color(rgba: tuple[float, float, float, float]) -> Any:
    return _fm().Color(r=rgba[0], g=rgba[1], b=rgba[2], a=rgba[3])


def arm_entity(robot: RobotRole, joint_origins_m: np.ndarray, needle_m: np.ndarray) -> Any:
    """The arm as a line through its joint origins (J, 3) and the needle as a thinner line (2, 3).

    Args:
        robot: The robot, which picks the arm's colour and the entity's id (``arm/<robot>``).
        joint_origins_m: The joint origins in base_link, from the forward kinematics, shape (J, 3), in [m].
        needle_m: The needle's mount and tip in base_link, shape (2, 3), in [m].
    """
    fm = _fm()
    line = fm.LinePrimitiveLineType.LineStrip
    arm = fm.LinePrimitive(type=line, thickness=0.02, points=_points(joint_origins_m), color=_color(RGBA[robot]))
    needle = fm.LinePrimitive(type=line, thickness=0.004, points=_points(needle_m), color=_color((0.5, 0.5, 0.5, 1.0)))
    joints = [
        fm.SpherePrimitive(pose=_pose(p), size=fm.Vector3(x=0.04, y=0.04, z=0.04), color=_color(RGBA[robot]))
        for p in joint_origins_m
    ]
    return fm.SceneEntity(frame_id=FRAME, id=f"arm/{robot.label}", lines=[arm, needle], spheres=joints)


def anatomy_entities(models: Any) -> list[Any]:
    """One entity per anatomical model (``anatomy/<name>``): its mesh as an indexed triangle list.

    Args:
        models: The anatomical models (e.g. an ``AnatomyScene``): each with ``name``, ``role``, ``vertices_m`` (V, 3) in
            base_link [m] and ``faces`` (F, 3).
    """
    fm = _fm()
    origin = _pose(np.zeros(3))
    return [
        fm.SceneEntity(
            frame_id=FRAME,
            id=f"anatomy/{model.name}",
            triangles=[
                fm.TriangleListPrimitive(
                    pose=origin,
                    points=_points(model.vertices_m),
                    color=_color(ROLE_RGBA.get(model.role, (0.5, 0.5, 0.5, 0.3))),
                    indices=np.asarray(model.faces, dtype=np.int64).ravel().tolist(),
                )
            ],
        )
        for model in models
    ]


def _pose(position_m: np.ndarray) -> Any:
    fm = _fm()
    x, y, z = (float(v) for v in position_m)
    return fm.Pose(position=fm.Vector3(x=x, y=y, z=z), orientation=fm.Quaternion(x=0.0, y=0.0, z=0.0, w=1.0))


def case_entities(case: CaseView) -> list[Any]:
    """The tip path of every robot in ``case`` (every k-th sample, at most MAX_PATH_POINTS) and its target.

    Args:
        case: The case whose tip tracks (base_link [m]) and target are drawn; the target is left out while not finite.
    """
    fm = _fm()
    entities = []
    for robot, track in case.tracks.items():
        if len(track) < 2:
            continue
        xyz = track.positions_m[stride_decimate(len(track), MAX_PATH_POINTS)]
        line = fm.LinePrimitive(
            type=fm.LinePrimitiveLineType.LineStrip, thickness=0.002, points=_points(xyz), color=_color(RGBA[robot])
        )
        entities.append(fm.SceneEntity(frame_id=FRAME, id=f"path/{robot.label}", lines=[line]))
    if np.isfinite(case.info.target_m).all():
        sphere = fm.SpherePrimitive(
            pose=_pose(case.info.target_m),
            size=fm.Vector3(x=0.008, y=0.008, z=0.008),
            color=_color((0.85, 0.1, 0.1, 1.0)),
        )
        entities.append(
            fm.SceneEntity(
                frame_id=FRAME,
                id="target",
                spheres=[sphere],
                metadata=[fm.KeyValuePair(key="test_id", value=case.test_id)],
            )
        )
    return entities


def scene_update(entities: list[Any]) -> Any:
    """A SceneUpdate replacing these entities (same ids replace earlier ones).

    Args:
        entities: Foxglove ``SceneEntity`` messages, e.g. from :func:`arm_entity` and :func:`case_entities`.
    """
    return _fm().SceneUpdate(entities=entities)
