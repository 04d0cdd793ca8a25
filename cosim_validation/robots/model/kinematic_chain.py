"""The serial chain of a robot read from its URDF with pinocchio, as plain arrays for the numba kernels."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cosim_validation.common.optional import require
from cosim_validation.robots.model.errors import RobotModelError
from cosim_validation.robots.model.library_output import library_stderr

#: Joint types of a chain (``KinematicChain.joint_type``): a revolute joint turns about its axis (values in
#: rad), a prismatic one slides along it (values in m).
REVOLUTE = 0
PRISMATIC = 1
JOINT_TYPE_NAMES: dict[int, str] = {REVOLUTE: "revolute", PRISMATIC: "prismatic"}

# pinocchio joint model short names -> (joint type, unit axis in the joint frame)
_AXIS_OF_JOINT: dict[str, tuple[int, tuple[float, float, float]]] = {
    "JointModelRX": (REVOLUTE, (1.0, 0.0, 0.0)),
    "JointModelRY": (REVOLUTE, (0.0, 1.0, 0.0)),
    "JointModelRZ": (REVOLUTE, (0.0, 0.0, 1.0)),
    "JointModelPX": (PRISMATIC, (1.0, 0.0, 0.0)),
    "JointModelPY": (PRISMATIC, (0.0, 1.0, 0.0)),
    "JointModelPZ": (PRISMATIC, (0.0, 0.0, 1.0)),
}
_UNALIGNED: dict[str, int] = {"JointModelRevoluteUnaligned": REVOLUTE, "JointModelPrismaticUnaligned": PRISMATIC}
# pinocchio's names of the joints it makes from other URDF joint types, for the error message
_URDF_TYPE_OF: dict[str, str] = {
    "JointModelRUBX": "continuous",
    "JointModelRUBY": "continuous",
    "JointModelRUBZ": "continuous",
    "JointModelRevoluteUnboundedUnaligned": "continuous",
    "JointModelPlanar": "planar",
    "JointModelFreeFlyer": "floating",
    "JointModelSpherical": "spherical",
}


@dataclass(frozen=True)
class KinematicChain:
    """A serial chain of revolute and prismatic joints ending at a tool frame.

    Joint values are in rad for a revolute joint and in m for a prismatic one (``joint_type``).

    Attributes:
        urdf_path: The URDF it was read from.
        joint_names: Names of the J actuated joints, base to tool.
        T_parent_joint: (J, 4, 4) placement of each joint frame in the previous joint's frame (the first
            in base_link), at zero joint value.
        axis_in_joint: (J, 3) unit axis of each joint in its own frame (rotation or sliding axis).
        joint_type: (J,) int64, :data:`REVOLUTE` or :data:`PRISMATIC` per joint.
        T_last_mount: (4, 4) placement of the tool mount frame (e.g. ``needle_mount``) in the last joint frame.
        q_lower: (J,) lower position limits from the URDF [rad, or m for a prismatic joint].
        q_upper: (J,) upper position limits from the URDF [rad, or m for a prismatic joint].
        velocity_limit: (J,) URDF velocity limits [rad/s, or m/s] (hardware maxima, not commanding limits).
        model: The pinocchio model (for cross-checks and dynamics).
    """

    urdf_path: Path
    joint_names: tuple[str, ...]
    T_parent_joint: np.ndarray
    axis_in_joint: np.ndarray
    joint_type: np.ndarray
    T_last_mount: np.ndarray
    q_lower: np.ndarray
    q_upper: np.ndarray
    velocity_limit: np.ndarray
    model: Any

    def __post_init__(self) -> None:
        # read-only: a controller plugin given the kinematics in its context widened q_lower and q_upper in place,
        # and the guard of its own setpoints checked the widened limits
        for array in (self.T_parent_joint, self.axis_in_joint, self.joint_type, self.T_last_mount):
            array.flags.writeable = False
        for array in (self.q_lower, self.q_upper, self.velocity_limit):
            array.flags.writeable = False

    @property
    def n_joints(self) -> int:
        """Number of actuated joints J."""
        return len(self.joint_names)

    @property
    def prismatic(self) -> np.ndarray:
        """(J,) bool, whether each joint is prismatic (its values in m)."""
        mask: np.ndarray = self.joint_type == PRISMATIC
        return mask

    def joint_unit(self, j: int) -> str:
        """Unit of joint ``j``'s values: ``rad`` or ``m``.

        Args:
            j: Joint index, 0-based, base to tool.
        """
        return "m" if self.joint_type[j] == PRISMATIC else "rad"


def _se3_matrix(placement: Any) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = np.asarray(placement.rotation)
    T[:3, 3] = np.asarray(placement.translation)
    return T


def _joint_axis(joint: Any, name: str, urdf_path: Path) -> tuple[int, np.ndarray]:
    """The joint's type and unit axis in its own frame.

    Raises:
        RobotModelError: A joint that is neither revolute nor prismatic (naming the joint and its pinocchio type).
    """
    short = joint.shortname()
    if short in _AXIS_OF_JOINT:
        kind, axis = _AXIS_OF_JOINT[short]
        return kind, np.array(axis)
    if short in _UNALIGNED:
        vector = np.asarray(joint.extract().axis, dtype=np.float64)
        return _UNALIGNED[short], vector / np.linalg.norm(vector)
    kind = _URDF_TYPE_OF.get(short, short)
    raise RobotModelError(
        f"{urdf_path}: joint {name!r} is a {kind} joint; only revolute and prismatic joints (URDF types revolute "
        "and prismatic, one degree of freedom with position limits) are supported"
    )


#: The farthest a joint may sit from its parent [m]: no link of a surgical arm is ten metres long.
MAX_LINK_M = 10.0


def _physical_problem(model: Any, j: int) -> str:
    """What makes joint ``j`` of a pinocchio ``model`` (and the body it moves) physical nonsense, or "".

    Position limits must be finite with lower below upper (swapped ones were reported as the home pose violating
    them); velocity and effort limits finite and > 0; the body it moves a finite mass > 0 with a finite inertia of
    no negative principal moment (MuJoCo ended in a traceback on a zero mass, a negative one ran); its origin
    finite and within :data:`MAX_LINK_M` of its parent (1e300 overflowed the kinematics).
    """
    lower, upper = float(model.lowerPositionLimit[j - 1]), float(model.upperPositionLimit[j - 1])
    if not (np.isfinite(lower) and np.isfinite(upper) and lower < upper):
        return f"position limits lower {lower:g}, upper {upper:g}; expected finite numbers, lower below upper"
    for what, value in (("velocity", model.velocityLimit[j - 1]), ("effort", model.effortLimit[j - 1])):
        if not (np.isfinite(value) and value > 0):
            return f"{what} limit {float(value):g}; expected a number > 0"
    inertia = model.inertias[j]
    if not (np.isfinite(inertia.mass) and inertia.mass > 0):
        return f"the links it moves have mass {float(inertia.mass):g} kg; expected a mass > 0 (<inertial><mass>)"
    moments = np.linalg.eigvalsh(np.asarray(inertia.inertia, dtype=np.float64))
    if not (np.all(np.isfinite(moments)) and moments.min() >= 0):
        return f"the links it moves have principal moments of inertia {moments.tolist()}; expected finite ones >= 0"
    offset = float(np.max(np.abs(model.jointPlacements[j].translation)))  # a norm of 1e300 overflows, with a warning
    if not (np.isfinite(offset) and offset <= MAX_LINK_M):
        return f"its origin lies {offset:g} m from its parent along an axis; expected at most {MAX_LINK_M:g} m"
    return ""


def load_chain(urdf_path: str | Path, mount_frame: str) -> KinematicChain:
    """Read the serial chain from base_link to ``mount_frame`` of a URDF.

    Args:
        urdf_path: The URDF file.
        mount_frame: Name of the tool mount frame (a link or fixed frame after the last joint).

    Raises:
        RobotModelError: The file is missing or unreadable, the frame does not exist, or the joints do not
            form one serial chain of revolute and prismatic joints ending before the frame.
    """
    pin = require("pinocchio", "pin", "robot kinematics")
    path = Path(urdf_path)
    if not path.is_file():
        raise RobotModelError(f"{path}: URDF file not found")
    with library_stderr() as printed:  # urdfdom prints its complaints on fd 2 before pinocchio raises
        try:
            model = pin.buildModelFromUrdf(str(path))
            failure = None
        except (RuntimeError, ValueError) as exc:
            failure = exc
    if failure is not None:
        said = "; ".join(line.removeprefix("Error: ") for line in printed if not line.startswith("at line "))
        detail = f" ({said})" if said else ""
        raise RobotModelError(f"{path}: pinocchio cannot read the URDF: {failure}{detail}") from None
    if not model.existFrame(mount_frame):
        frames = ", ".join(f.name for f in model.frames)
        raise RobotModelError(f"{path}: no frame {mount_frame!r}; frames: {frames}")
    n = model.njoints - 1  # joint 0 is the universe
    if n < 1:
        raise RobotModelError(f"{path}: no movable joint")
    for j in range(1, n + 1):
        if model.parents[j] != j - 1:
            raise RobotModelError(f"{path}: joint {model.names[j]!r} breaks the serial chain (it branches)")
    mount = model.frames[model.getFrameId(mount_frame)]
    if mount.parentJoint != n:
        raise RobotModelError(f"{path}: frame {mount_frame!r} is not after the last joint {model.names[n]!r}")
    names = tuple(str(model.names[j]) for j in range(1, n + 1))
    base_mass = float(model.inertias[0].mass)  # the links fixed to the world: they do not move, but not below 0
    if not (np.isfinite(base_mass) and base_mass >= 0):
        raise RobotModelError(f"{path}: the links before the first joint have mass {base_mass:g} kg; expected >= 0")
    for j, name in enumerate(names, start=1):
        problem = _physical_problem(model, j)
        if problem:
            raise RobotModelError(f"{path}: joint {name!r}: {problem}")
    kinds, axes = zip(*(_joint_axis(model.joints[j], names[j - 1], path) for j in range(1, n + 1)), strict=True)
    return KinematicChain(
        urdf_path=path,
        joint_names=names,
        T_parent_joint=np.stack([_se3_matrix(model.jointPlacements[j]) for j in range(1, n + 1)]),
        axis_in_joint=np.stack(axes),
        joint_type=np.array(kinds, dtype=np.int64),
        T_last_mount=_se3_matrix(mount.placement),
        q_lower=np.array(model.lowerPositionLimit, dtype=np.float64),
        q_upper=np.array(model.upperPositionLimit, dtype=np.float64),
        velocity_limit=np.array(model.velocityLimit, dtype=np.float64),
        model=model,
    )
