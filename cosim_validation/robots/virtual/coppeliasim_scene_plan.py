"""The arm as CoppeliaSim scene objects: what ``scripts/coppeliasim_scene.py`` creates, computed without CoppeliaSim.

CoppeliaSim joints turn about (or slide along) their own +z axis (manual ``en/joints.htm``). So each URDF joint
becomes a joint object whose frame is the URDF joint frame turned to bring +z onto the URDF axis, and each link
a shape whose frame is the URDF joint frame again (the turn undone). Objects, parents and aliases::

    base_link (static shape) > joint1 > joint1_link (shape) > joint2 > ... > jointJ_link > needle_tip (dummy)

The aliases are those the CoppeliaSim backend looks for by default (``backends.coppeliasim``). Links carry the
URDF's mass, centre of mass and inertia (from the kinematic chain's pinocchio model).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from cosim_validation.robots.model import Kinematics


class SceneItem(NamedTuple):
    """One object to create.

    Attributes:
        alias: Its alias (object path ``/alias`` when unique).
        kind: ``base`` (static shape), ``joint``, ``link`` (dynamic shape) or ``tip`` (dummy).
        parent: Alias of its parent; "" for the scene root.
        T_parent_item: (4, 4) pose in the parent's frame [m] (the world for the base).
        prismatic: For a joint: slides instead of turning.
        limits: For a joint: (lower, upper) position limits [rad or m].
        mass_kg: For a link: its mass [kg].
        com_m: For a link: (3,) centre of mass in its frame [m].
        inertia_kg_m2: For a link: (3, 3) inertia about the centre of mass, in its frame [kg m^2].
    """

    alias: str
    kind: str
    parent: str
    T_parent_item: np.ndarray
    prismatic: bool = False
    limits: tuple[float, float] = (0.0, 0.0)
    mass_kg: float = 0.0
    com_m: np.ndarray = np.zeros(3)
    inertia_kg_m2: np.ndarray = np.zeros((3, 3))


def z_onto(axis: np.ndarray) -> np.ndarray:
    """(3, 3) rotation taking +z onto the unit vector ``axis`` ((3,)), the shortest turn.

    Args:
        axis: The direction +z is turned onto, shape (3,), any non-zero length.
    """
    axis = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    z = np.array([0.0, 0.0, 1.0])
    cross, cos = np.cross(z, axis), float(z @ axis)
    if np.linalg.norm(cross) < 1e-12:
        return np.eye(3) if cos > 0 else np.diag([1.0, -1.0, -1.0])
    k = np.array([[0, -cross[2], cross[1]], [cross[2], 0, -cross[0]], [-cross[1], cross[0], 0]])
    rotation: np.ndarray = np.eye(3) + k + k @ k / (1.0 + cos)
    return rotation


def _transform(rotation: np.ndarray, translation: np.ndarray | None = None) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = rotation
    if translation is not None:
        T[:3, 3] = translation
    return T


def scene_plan(kinematics: Kinematics, base_alias: str = "base_link", tip_alias: str = "needle_tip") -> list[SceneItem]:
    """The objects of the arm of ``kinematics`` (its URDF and needle), parents before children.

    Args:
        kinematics: The arm (its URDF chain and inertias) and the needle.
        base_alias: Alias of the base object.
        tip_alias: Alias of the needle-tip dummy.
    """
    chain = kinematics.chain
    items = [SceneItem(base_alias, "base", "", np.eye(4))]
    parent = base_alias  # the previous link's frame is the previous URDF joint frame (the base's for joint 1)
    for j, name in enumerate(chain.joint_names):
        turn = _transform(z_onto(chain.axis_in_joint[j]))
        limits = (float(chain.q_lower[j]), float(chain.q_upper[j]))
        T_link_joint = chain.T_parent_joint[j] @ turn
        items.append(SceneItem(name, "joint", parent, T_link_joint, bool(chain.prismatic[j]), limits))
        inertia = chain.model.inertias[j + 1]
        link = f"{name}_link"
        items.append(
            SceneItem(
                link,
                "link",
                name,
                np.linalg.inv(turn),
                mass_kg=float(inertia.mass),
                com_m=np.array(inertia.lever, dtype=np.float64),
                inertia_kg_m2=np.array(inertia.inertia, dtype=np.float64),
            )
        )
        parent = link
    items.append(SceneItem(tip_alias, "tip", parent, np.array(kinematics.T_last_tip)))
    return items


def tip_in_base(items: list[SceneItem], q: np.ndarray) -> np.ndarray:
    """(4, 4) pose of the tip item in the base frame with the joints at ``q``.

    The plan is composed as CoppeliaSim does: a joint's position turns or moves its children about or along its +z.

    Args:
        items: The scene plan: the base, the links, the joints and the tip.
        q: Joint positions, shape (J,), in [rad], or [m] for a prismatic joint.

    Returns:
        The tip's pose in the base frame, shape (4, 4), translation in [m].
    """
    by_alias = {item.alias: item for item in items}
    joints = [item.alias for item in items if item.kind == "joint"]
    tip = next(item for item in items if item.kind == "tip")
    T, alias = np.eye(4), tip.alias
    while by_alias[alias].kind != "base":
        item = by_alias[alias]
        T = item.T_parent_item @ T
        parent = by_alias[item.parent]
        if parent.kind == "joint":
            value = float(q[joints.index(parent.alias)])
            if parent.prismatic:
                T = _transform(np.eye(3), np.array([0.0, 0.0, value])) @ T
            else:
                c, s = np.cos(value), np.sin(value)
                T = _transform(np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])) @ T
        alias = parent.alias
    return T
