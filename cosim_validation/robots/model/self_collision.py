"""Self-collision of the arm and its needle, with MuJoCo on the URDF's own collision geometry.

A numba broad phase comes first: every collision geom (URDF cylinders, the needle capsule) as the capsule
that contains it, placed by the project's forward kinematics, and the smallest capsule-capsule distance over
the pairs MuJoCo checks. Configurations whose capsules keep apart are free without asking MuJoCo; the others
(close to contact) get MuJoCo's exact check. The answers are MuJoCo's, at a fraction of the cost.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from cosim_validation.common.optional import require
from cosim_validation.robots.model.capsule_kernels import clearance_lower_bounds
from cosim_validation.robots.model.fk_kernels import link_points_batch
from cosim_validation.robots.model.kinematics import Kinematics
from cosim_validation.robots.model.mujoco_compile import compile_spec

#: Capsule clearance below which the broad phase hands a configuration to MuJoCo [m]: far above the
#: rounding of the capsule distance and of MuJoCo's convex-collision tolerance.
BROAD_PHASE_SLACK_M = 1e-4


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
        #: (P, 2) geom index pairs that can be reported: on different bodies, not joined (by a joint, a weld,
        #: or an exclude). Adjacent links touch by construction and are left out.
        self.pairs = self._candidate_pairs(self.model)
        self._capsules = self._capsule_geometry()

    @staticmethod
    def _candidate_pairs(model: Any) -> np.ndarray:
        excluded = {int(sig) for sig in model.exclude_signature}
        body = model.geom_bodyid
        pairs = []
        for a in range(model.ngeom):
            for b in range(a + 1, model.ngeom):
                ba, bb = int(body[a]), int(body[b])
                lo, hi = min(ba, bb), max(ba, bb)
                if ba == bb or model.body_parentid[hi] == lo or ((lo << 16) + hi) in excluded:
                    continue
                if model.body_weldid[ba] == model.body_weldid[bb]:  # rigidly joined (fixed links)
                    continue
                pairs.append((a, b))
        return np.array(pairs, dtype=np.int64).reshape(-1, 2)

    def _capsule_geometry(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """Each geom's axis end points and radius, and each joint's reach (see :mod:`capsule_kernels`).

        The end points are in the frame of the last joint before the geom's body.

        Returns (point_joint (2G,), point_local (2G, 3), radius (G,), reach (J,)), or None (no broad phase)
        when a geom is neither a cylinder nor a capsule.
        """
        mj = self._mujoco
        model, data = self.model, self.data
        kinds = {int(mj.mjtGeom.mjGEOM_CYLINDER), int(mj.mjtGeom.mjGEOM_CAPSULE)}
        if any(int(t) not in kinds for t in model.geom_type):
            return None
        index = {name: i for i, name in enumerate(self.kinematics.joint_names)}
        chain = self.kinematics.chain
        q_ref = 0.5 * (self.kinematics.q_lower + self.kinematics.q_upper) + 0.1  # any generic pose
        data.qpos[self._qpos_index] = q_ref
        mj.mj_kinematics(model, data)
        n_joints = self.kinematics.n_joints
        frame_points = np.zeros((n_joints + 1, 4, 3))  # origin and unit axes of every joint frame
        frame_points[:, 1:] = np.eye(3)
        frames = link_points_batch(
            q_ref[None],
            chain.T_parent_joint,
            chain.axis_in_joint,
            chain.joint_type,
            np.repeat(np.arange(n_joints + 1), 4),
            frame_points.reshape(-1, 3),
        )[0].reshape(n_joints + 1, 4, 3)
        point_joint, point_local, radius = [], [], []
        for g in range(model.ngeom):
            b = int(model.geom_bodyid[g])
            while b != 0 and model.body_jntnum[b] == 0:
                b = int(model.body_parentid[b])
            j = 0 if b == 0 else index[mj.mj_id2name(model, mj.mjtObj.mjOBJ_JOINT, int(model.body_jntadr[b]))] + 1
            origin, axes = frames[j, 0], frames[j, 1:] - frames[j, 0]  # rows: the frame's x, y, z in base_link
            half = float(model.geom_size[g, 1])
            centre, axis = data.geom_xpos[g], data.geom_xmat[g].reshape(3, 3)[:, 2]
            for end in (centre - half * axis, centre + half * axis):
                point_joint.append(j)
                point_local.append(axes @ (end - origin))
            radius.append(float(model.geom_size[g, 0]))
        frame_of, local = np.array(point_joint, dtype=np.int64), np.array(point_local)
        # |t_m| plus a prismatic joint's largest travel: the distance from frame m to frame m + 1
        travel = np.where(chain.prismatic, np.maximum(np.abs(chain.q_lower), np.abs(chain.q_upper)), 0.0)
        offsets = np.linalg.norm(chain.T_parent_joint[:, :3, 3], axis=1) + travel
        reach = np.zeros(n_joints)
        for k in range(n_joints):  # joint k turns frames k + 1 and beyond about the origin of frame k + 1
            if chain.prismatic[k]:  # or slides them: every distal point moves by exactly the travel [m/m]
                reach[k] = 1.0
                continue
            for f, point in zip(frame_of, local, strict=True):
                if f >= k + 1:
                    reach[k] = max(reach[k], float(offsets[k + 1 : f].sum() + np.linalg.norm(point)))
        return frame_of, local, np.array(radius), reach

    def capsule_clearance(self, q: ArrayLike) -> np.ndarray:
        """(n,) smallest distance between the capsules around the candidate pairs' geoms [m].

        It is a lower bound of the geoms' own distance (<= 0: possibly touching).

        Args:
            q: (n, J) joint vectors, or one (J,), in [rad], or [m] for a prismatic joint.

        Returns:
            (n,) the clearances in [m].

        Raises:
            RuntimeError: Without a broad phase.
        """
        return self._clearance(self.kinematics.as_joint_batch(q), np.inf)

    def _clearance(self, batch: np.ndarray, threshold: float) -> np.ndarray:
        if self._capsules is None:
            raise RuntimeError("the collision model has geoms that are neither cylinders nor capsules")
        point_joint, point_local, radius, reach = self._capsules
        chain = self.kinematics.chain
        return np.asarray(
            clearance_lower_bounds(
                np.ascontiguousarray(batch),
                chain.T_parent_joint,
                chain.axis_in_joint,
                chain.joint_type,
                point_joint,
                point_local,
                radius,
                self.pairs,
                reach,
                threshold,
            )
        )

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
        first = compile_spec(spec, f"{self.kinematics.chain.urdf_path} (self-collision model)")
        for name in self.kinematics.joint_names:
            child = first.jnt_bodyid[mj.mj_name2id(first, mj.mjtObj.mjOBJ_JOINT, name)]
            parent = first.body_parentid[child]
            spec.add_exclude(
                bodyname1=mj.mj_id2name(first, mj.mjtObj.mjOBJ_BODY, parent),
                bodyname2=mj.mj_id2name(first, mj.mjtObj.mjOBJ_BODY, child),
            )
        return compile_spec(spec, f"{self.kinematics.chain.urdf_path} (self-collision model)")

    @staticmethod
    def _mount_body_name(spec: Any) -> str:
        names = [body.name for body in spec.bodies]
        return "needle_mount" if "needle_mount" in names else names[-1]

    def colliding_pairs(self, q: ArrayLike) -> list[tuple[str, str]]:
        """Names of the body pairs in contact (closer than the margin) at one joint vector (J,).

        Args:
            q: One joint vector, shape (J,), in [rad], or [m] for a prismatic joint.
        """
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
        """(n,) whether each of n joint vectors (n, J) is in self-collision.

        MuJoCo's answer; the capsule broad phase only skips configurations it proves free.

        Args:
            q: Joint vectors, shape (n, J) or one (J,), in [rad], or [m] for a prismatic joint.
        """
        batch = self.kinematics.as_joint_batch(q)
        out = np.zeros(batch.shape[0], dtype=bool)
        if batch.shape[0] == 0:
            return out
        if self._capsules is None or self.pairs.shape[0] == 0:
            check = np.arange(batch.shape[0])
        else:
            threshold = self.margin_m + BROAD_PHASE_SLACK_M
            check = np.flatnonzero(~(self._clearance(batch, threshold) >= threshold))
        mj, model, data = self._mujoco, self.model, self.data
        for i in check:
            data.qpos[self._qpos_index] = batch[i]
            mj.mj_kinematics(model, data)
            mj.mj_collision(model, data)
            out[i] = data.ncon > 0 and bool((data.contact.dist[: data.ncon] < self.margin_m).any())
        return out
