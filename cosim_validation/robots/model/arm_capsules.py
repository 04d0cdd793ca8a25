"""The arm's collision cylinders (from the URDF) as points with radii, for clearance against the anatomy."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from cosim_validation.common.optional import require
from cosim_validation.robots.model.errors import RobotModelError
from cosim_validation.robots.model.fk_kernels import link_points_batch
from cosim_validation.robots.model.kinematics import Kinematics
from cosim_validation.robots.model.library_output import library_output


def _collision_geometry(pin: Any, chain: Any) -> Any:
    """The URDF's collision geometry (pinocchio); what its loaders print goes into the one error, if any.

    Raises:
        RobotModelError: The geometry cannot be read (a mesh that is not there or not a mesh), naming the URDF.
    """
    with library_output() as printed:  # urdfdom and the mesh loaders print on fd 1 and 2 before they raise
        try:
            geometry = pin.buildGeomFromUrdf(chain.model, str(chain.urdf_path), pin.GeometryType.COLLISION)
            failure = None
        except (RuntimeError, ValueError) as exc:
            failure = exc
    if failure is not None:
        said = "; ".join(line.removeprefix("Error: ") for line in printed if not line.startswith("at line "))
        detail = f" ({said})" if said else ""
        said_by = str(failure).split(" message: ", 1)[-1]  # coal's messages begin with its source file and line
        raise RobotModelError(f"{chain.urdf_path}: cannot read the collision geometry: {said_by}{detail}") from None
    return geometry


class ArmCapsules:
    """Each URDF collision cylinder becomes a capsule, sampled as points on its axis.

    A link keeps a clearance c from a surface when every sample point of its capsule is at least
    ``radius + c`` away (conservative: the capsule contains the cylinder; between two samples the axis is
    at most ``spacing / 2`` from a sample, which callers add to the clearance, see :attr:`slack_m`).

    Args:
        kinematics: Arm (its URDF's collision geometry is read with pinocchio).
        spacing_m: Largest distance between sample points along an axis [m].
        exempt_links: Links left out: an instrument that passes through the body wall at the remote centre
            of motion (:attr:`~cosim_validation.robots.model.RobotModel.port_links`) is meant to be inside the skin.
    """

    def __init__(self, kinematics: Kinematics, spacing_m: float = 0.02, exempt_links: tuple[str, ...] = ()) -> None:
        pin = require("pinocchio", "pin", "arm collision geometry")
        chain = kinematics.chain
        geometry = _collision_geometry(pin, chain)
        links = {frame.name for frame in chain.model.frames}
        unknown = [name for name in exempt_links if name not in links]
        if unknown:
            raise RobotModelError(f"{chain.urdf_path}: no link {unknown[0]!r} (a port link of the robot model)")
        joints, points, radii, names = [], [], [], []
        for obj in geometry.geometryObjects:
            if chain.model.frames[obj.parentFrame].name in exempt_links:
                continue
            shape = obj.geometry
            if not hasattr(shape, "radius") or not hasattr(shape, "halfLength"):
                raise RobotModelError(f"{chain.urdf_path}: collision geometry {obj.name!r} is not a cylinder")
            half = float(shape.halfLength)
            count = max(2, math.ceil(2 * half / spacing_m) + 1)
            local = np.zeros((count, 3))
            local[:, 2] = np.linspace(-half, half, count)
            placed = local @ np.asarray(obj.placement.rotation).T + np.asarray(obj.placement.translation)
            joints.append(np.full(count, int(obj.parentJoint)))
            points.append(placed)
            radii.append(np.full(count, float(shape.radius)))
            names += [obj.name.rsplit("_", 1)[0]] * count
        self.kinematics = kinematics
        self.spacing_m = float(spacing_m)
        self.point_joint = np.concatenate(joints).astype(np.int64)
        self.point_local_m = np.ascontiguousarray(np.concatenate(points))
        self.radius_m = np.concatenate(radii)
        self.link_names: tuple[str, ...] = tuple(names)

    @property
    def slack_m(self) -> float:
        """How far the capsule axis can be from its nearest sample point [m] (half the spacing)."""
        return 0.5 * self.spacing_m

    @property
    def n_points(self) -> int:
        """Number of sample points P."""
        return int(self.radius_m.shape[0])

    def points(self, q: ArrayLike) -> np.ndarray:
        """(n, P, 3) sample points in base_link [m] for n joint vectors (n, J).

        Args:
            q: Joint vectors, shape (n, J) or one (J,), in [rad], or [m] for a prismatic joint.
        """
        batch = self.kinematics.as_joint_batch(q)
        chain = self.kinematics.chain
        return np.asarray(
            link_points_batch(
                batch, chain.T_parent_joint, chain.axis_in_joint, chain.joint_type, self.point_joint, self.point_local_m
            )
        )
