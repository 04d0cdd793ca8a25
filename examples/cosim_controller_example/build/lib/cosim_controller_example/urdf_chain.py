"""The serial chain of a URDF from the base to the needle mount: forward kinematics and tip Jacobian (numpy only).

The needle tip is ``needle_length_m`` along +z of the mount frame. Only the standard library (``xml.etree``) and
numpy are used, so a node built on it needs nothing but rclpy and its message packages. URDF conventions
(https://wiki.ros.org/urdf/XML/joint): a joint's ``origin`` places its frame in the parent link frame (``rpy`` is
roll about x, then pitch about y, then yaw about z, all fixed axes: R = Rz(yaw) Ry(pitch) Rx(roll)); a revolute
or continuous joint turns by q [rad] about ``axis`` (in the joint frame), a prismatic joint slides by q [m].
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np

_MOVABLE = ("revolute", "continuous", "prismatic")


class UrdfChainError(ValueError):
    """The URDF text is not XML, or has no serial chain between the two frames."""


@dataclass(frozen=True)
class ChainJoint:
    """One joint of the chain.

    Attributes:
        name: Joint name.
        kind: ``revolute``, ``continuous``, ``prismatic`` or ``fixed``.
        T_origin: (4, 4) joint frame in the parent link frame.
        axis: (3,) unit axis in the joint frame.
        lower: Lower position limit [rad or m] (-inf for continuous).
        upper: Upper position limit [rad or m] (+inf for continuous).
        velocity: URDF velocity limit [rad/s or m/s] (inf when absent).
    """

    name: str
    kind: str
    T_origin: np.ndarray
    axis: np.ndarray
    lower: float
    upper: float
    velocity: float


def rpy_matrix(rpy: np.ndarray) -> np.ndarray:
    """(3, 3) rotation of URDF roll, pitch, yaw [rad]: Rz(yaw) @ Ry(pitch) @ Rx(roll)."""
    (cr, cp, cy), (sr, sp, sy) = np.cos(rpy), np.sin(rpy)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def axis_angle(axis: np.ndarray, angle: float) -> np.ndarray:
    """(3, 3) rotation by ``angle`` [rad] about the unit ``axis`` (Rodrigues)."""
    k = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    R: np.ndarray = np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * (k @ k)
    return R


class UrdfChain:
    """Kinematics of the movable joints between two frames plus a straight needle along the last frame's +z.

    Args:
        joints: Every joint from the base to the mount frame, fixed ones included, in order.
        needle_length_m: Mount frame to needle tip along its +z [m].
    """

    def __init__(self, joints: tuple[ChainJoint, ...], needle_length_m: float) -> None:
        self.joints = joints
        self.needle_length_m = float(needle_length_m)
        movable = [j for j in joints if j.kind in _MOVABLE]
        self.names = tuple(j.name for j in movable)
        self.lower = np.array([j.lower for j in movable])
        self.upper = np.array([j.upper for j in movable])
        self.velocity = np.array([j.velocity for j in movable])
        self.prismatic = np.array([j.kind == "prismatic" for j in movable])

    @property
    def n_joints(self) -> int:
        """Number of movable joints J."""
        return len(self.names)

    def frames(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Joint origins (J, 3) [m], unit joint axes (J, 3) and the (4, 4) tip frame, all in the base frame."""
        T = np.eye(4)
        origins, axes = np.zeros((self.n_joints, 3)), np.zeros((self.n_joints, 3))
        i = 0
        for joint in self.joints:
            T = T @ joint.T_origin
            if joint.kind not in _MOVABLE:
                continue
            origins[i], axes[i] = T[:3, 3], T[:3, :3] @ joint.axis
            motion = np.eye(4)
            if joint.kind == "prismatic":
                motion[:3, 3] = joint.axis * q[i]
            else:
                motion[:3, :3] = axis_angle(joint.axis, float(q[i]))
            T = T @ motion
            i += 1
        tip = np.eye(4)
        tip[2, 3] = self.needle_length_m
        return origins, axes, T @ tip

    def tip(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Tip position (3,) [m] and orientation (3, 3) (column 2 is the needle direction) in the base frame."""
        T = self.frames(q)[2]
        return T[:3, 3].copy(), T[:3, :3].copy()

    def jacobian(self, q: np.ndarray) -> np.ndarray:
        """(6, J) geometric Jacobian of the tip: rows linear velocity [m/s] then angular velocity [rad/s]."""
        origins, axes, T = self.frames(q)
        lever = T[:3, 3] - origins
        linear = np.where(self.prismatic[:, None], axes, np.cross(axes, lever))
        angular = np.where(self.prismatic[:, None], 0.0, axes)
        return np.vstack([linear.T, angular.T])


def parse_chain(
    urdf_text: str, needle_length_m: float, base: str = "base_link", mount: str = "needle_mount"
) -> UrdfChain:
    """The chain ``base`` -> ``mount`` of a URDF document.

    Raises:
        UrdfChainError: Not XML, a frame missing, no path from ``base`` to ``mount``, or a malformed joint.
    """
    try:
        root = ET.fromstring(urdf_text)
    except ET.ParseError as exc:
        raise UrdfChainError(f"robot_description is not XML: {exc}") from exc
    by_child: dict[str, ET.Element] = {}
    for candidate in root.findall("joint"):
        child = candidate.find("child")
        if child is not None:
            by_child[child.get("link", "")] = candidate
    path, link = [], mount
    while link != base:
        element = by_child.get(link)
        if element is None:
            raise UrdfChainError(f"robot_description: no joint chain from {base!r} to {mount!r} (stops at {link!r})")
        path.append(_joint(element))
        parent = element.find("parent")
        link = parent.get("link", "") if parent is not None else ""
    return UrdfChain(tuple(reversed(path)), needle_length_m)


def _joint(element: ET.Element) -> ChainJoint:
    name, kind = element.get("name", "?"), element.get("type", "")
    if kind not in (*_MOVABLE, "fixed"):
        raise UrdfChainError(
            f"robot_description: joint {name!r} has type {kind!r}; expected revolute, continuous, prismatic or fixed"
        )
    origin, axis_el, limit = element.find("origin"), element.find("axis"), element.find("limit")
    T = np.eye(4)
    if origin is not None:
        T[:3, :3] = rpy_matrix(_floats(origin.get("rpy", "0 0 0"), name))
        T[:3, 3] = _floats(origin.get("xyz", "0 0 0"), name)
    axis = _floats(axis_el.get("xyz", "1 0 0") if axis_el is not None else "1 0 0", name)
    if not np.linalg.norm(axis) > 0.0:
        raise UrdfChainError(f"robot_description: joint {name!r} has a zero axis")
    bounded = kind in ("revolute", "prismatic") and limit is not None
    lower = float(limit.get("lower", "0")) if bounded and limit is not None else -np.inf
    upper = float(limit.get("upper", "0")) if bounded and limit is not None else np.inf
    velocity = float(limit.get("velocity", "inf")) if limit is not None else np.inf
    return ChainJoint(name, kind, T, axis / np.linalg.norm(axis), lower, upper, velocity)


def _floats(text: str, joint: str) -> np.ndarray:
    try:
        values = np.array([float(v) for v in text.split()])
    except ValueError as exc:
        raise UrdfChainError(f"robot_description: joint {joint!r}: {text!r} is not three numbers") from exc
    if values.shape != (3,):
        raise UrdfChainError(f"robot_description: joint {joint!r}: {text!r} is not three numbers")
    return values
