"""Self-collision of the arm and its needle, with MuJoCo on the URDF's own collision geometry."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from cosim_validation.optional import require
from cosim_validation.robot.kinematics import Kinematics


class SelfCollision:
    """Checks whether the arm's links, holder and needle touch each other.

    The URDF's collision cylinders plus a needle capsule (from the mount frame along +z, the kinematics'
    needle length) are loaded into MuJoCo; links connected by a joint (adjacent links) are excluded.

    Args:
        kinematics: Arm and needle (the URDF path and needle length come from it).
        needle_radius_m: Radius of the needle capsule [m] (an 18 G needle is 0.64 mm).
        margin_m: Report pairs closer than this [m] (0: only interpenetration).
    """

    def __init__(self, kinematics: Kinematics, needle_radius_m: float = 0.00064, margin_m: float = 0.0) -> None:
        self._mujoco = require("mujoco", "mujoco", "self-collision checking")
        self.kinematics = kinematics
        self.margin_m = float(margin_m)
        self.model = self._build(needle_radius_m)
        self.data = self._mujoco.MjData(self.model)
        mj = self._mujoco
        joint_ids = [mj.mj_name2id(self.model, mj.mjtObj.mjOBJ_JOINT, name) for name in kinematics.joint_names]
        self._qpos_index = np.array([self.model.jnt_qposadr[j] for j in joint_ids])

    def _build(self, needle_radius_m: float) -> Any:
        mj = self._mujoco
        spec = mj.MjSpec.from_file(str(self.kinematics.chain.urdf_path))
        mount = spec.body(self._mount_body_name(spec))
        mount.add_geom(
            name="needle",
            type=mj.mjtGeom.mjGEOM_CAPSULE,
            fromto=[0, 0, 0, 0, 0, self.kinematics.needle_length_m],
            size=[needle_radius_m, 0, 0],
        )
        for geom in spec.geoms:
            geom.margin = self.margin_m
        first = spec.compile()
        for name in self.kinematics.joint_names:
            child = first.jnt_bodyid[mj.mj_name2id(first, mj.mjtObj.mjOBJ_JOINT, name)]
            parent = first.body_parentid[child]
            spec.add_exclude(
                bodyname1=mj.mj_id2name(first, mj.mjtObj.mjOBJ_BODY, parent),
                bodyname2=mj.mj_id2name(first, mj.mjtObj.mjOBJ_BODY, child),
            )
        return spec.compile()

    @staticmethod
    def _mount_body_name(spec: Any) -> str:
        names = [body.name for body in spec.bodies]
        return "needle_mount" if "needle_mount" in names else names[-1]

    def colliding_pairs(self, q: ArrayLike) -> list[tuple[str, str]]:
        """Names of the body pairs in contact (closer than the margin) at one joint vector (J,)."""
        mj = self._mujoco
        qv = self.kinematics.as_joint_batch(q)[0]
        self.data.qpos[self._qpos_index] = qv
        mj.mj_kinematics(self.model, self.data)
        mj.mj_collision(self.model, self.data)
        if self.data.ncon == 0:  # the common case; reading the contact array is the slow part
            return []
        pairs = []
        for contact in self.data.contact[: self.data.ncon]:
            if contact.dist < self.margin_m:
                a, b = (mj.mj_id2name(self.model, mj.mjtObj.mjOBJ_GEOM, g) for g in (contact.geom1, contact.geom2))
                ba, bb = (self.model.body(self.model.geom_bodyid[g]).name for g in (contact.geom1, contact.geom2))
                pairs.append((a or ba, b or bb))
        return pairs

    def in_collision(self, q: ArrayLike) -> np.ndarray:
        """(n,) whether each of n joint vectors (n, J) is in self-collision."""
        batch = self.kinematics.as_joint_batch(q)
        return np.array([bool(self.colliding_pairs(row)) for row in batch], dtype=bool)
