"""The second engine: the arm in PyBullet (DIRECT mode), same servo and reference as MuJoCo.

PyBullet has no joint armature and integrates applied torques explicitly. So that both engines simulate
the same system, each step computes the servo torque of
:class:`~cosim_validation.robots.virtual.backends_config.JointServoConfig`, solves the joint accelerations of the
arm *with* armature and with the velocity terms (kd + damping) taken implicitly, as MuJoCo's
``implicitfast`` integrator does, and applies the torque that gives PyBullet's rigid body exactly these
accelerations. PyBullet supplies the rigid-body dynamics (mass matrix, gravity and Coriolis terms by its
own Featherstone implementation), the integration and the joint-limit constraints.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from cosim_validation.common.optional import quiet_stdout, require
from cosim_validation.common.record import RobotRole
from cosim_validation.robots.model import Kinematics
from cosim_validation.robots.model.fk_kernels import matrix_to_quat_wxyz
from cosim_validation.robots.robot_backend import BackendSample, JointSet
from cosim_validation.robots.virtual.backends_config import BackendsConfig
from cosim_validation.robots.virtual.command_checks import checked_duration, checked_joint_vector
from cosim_validation.robots.virtual.errors import BackendModelError
from cosim_validation.robots.virtual.quaternion import canonical, quat_multiply
from cosim_validation.robots.virtual.setpoint_ramp import SetpointRamp
from cosim_validation.robots.visuals.package_uri import with_file_paths


def _load_robot(p: Any, client: int, urdf_path: Path) -> tuple[int, list[int]]:
    """Load the URDF with a fixed base; return (body id, revolute joint indices = their child link indices)."""
    # PyBullet cannot resolve package:// mesh URIs (the visuals): it reads a copy naming the files by path
    with tempfile.TemporaryDirectory(prefix="cosim-urdf-") as folder:
        resolved = Path(folder) / urdf_path.name
        resolved.write_text(with_file_paths(urdf_path.read_text()))
        try:
            with quiet_stdout():
                body = p.loadURDF(
                    str(resolved), useFixedBase=True, flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=client
                )
        except p.error as exc:
            raise BackendModelError(f"{urdf_path}: PyBullet cannot load the URDF: {exc}") from None
    joints = []
    for index in range(p.getNumJoints(body, physicsClientId=client)):
        info = p.getJointInfo(body, index, physicsClientId=client)
        if info[2] == p.JOINT_REVOLUTE:
            joints.append(index)
        # PyBullet gives a link without <inertial> 1 kg and unit inertia; the URDF means "massless frame".
        if p.getDynamicsInfo(body, index, physicsClientId=client)[0] == 1.0 and info[2] == p.JOINT_FIXED:
            p.changeDynamics(body, index, mass=0.0, localInertiaDiagonal=[0.0, 0.0, 0.0], physicsClientId=client)
        p.changeDynamics(body, index, linearDamping=0.0, angularDamping=0.0, physicsClientId=client)
    return body, joints


class PybulletBackend(JointSet):
    """Virtual robot in PyBullet; implements :class:`~cosim_validation.robots.robot_backend.RobotBackend`.

    Args:
        config: The shared backend configuration (physics rate, servo).
        kinematics: The arm (its URDF) and the needle (placed on the last link as the kinematics place it).
    """

    name = "pybullet"
    role = RobotRole.VIRTUAL

    def __init__(self, config: BackendsConfig, kinematics: Kinematics) -> None:
        self._p = p = require("pybullet", "pybullet", "the PyBullet robot backend", quiet=True)
        self._client = int(p.connect(p.DIRECT))
        urdf_path = kinematics.chain.urdf_path
        self._body, self._joints = _load_robot(p, self._client, urdf_path)
        infos = [p.getJointInfo(self._body, j, physicsClientId=self._client) for j in self._joints]
        self._joint_names = tuple(info[1].decode() for info in infos)
        self._joint_units = kinematics.joint_units
        servo = config.servo
        if self._joint_names != kinematics.joint_names or servo.n_joints != len(self._joint_names):
            self.close()
            raise BackendModelError(
                f"{urdf_path}: PyBullet joints {self._joint_names}, kinematics joints {kinematics.joint_names}, "
                f"servo configured for {servo.n_joints} joints: they must agree"
            )
        self._q_lower = np.array([info[8] for info in infos])
        self._q_upper = np.array([info[9] for info in infos])
        self._effort_nm = np.array([info[10] for info in infos])
        self._kp, self._kd = servo.kp_nm_per_rad, servo.kd_nms_per_rad
        self._armature, self._damping = servo.armature_kg_m2, servo.damping_nms_per_rad
        self._gravity_compensation = servo.gravity_compensation
        # the tip in the last link's frame (= the last joint's frame of the kinematics)
        self._tip_in_last_m = np.array(kinematics.T_last_tip[:3, 3])
        self._tip_quat_in_last = canonical(matrix_to_quat_wxyz(np.ascontiguousarray(kinematics.T_last_tip[:3, :3])))
        self.physics_timestep_s = config.physics_timestep_s
        p.setGravity(0.0, 0.0, -9.81, physicsClientId=self._client)
        p.setTimeStep(self.physics_timestep_s, physicsClientId=self._client)
        # free the joints from PyBullet's default velocity motors, so only our torques act
        n = len(self._joints)
        p.setJointMotorControlArray(
            self._body, self._joints, p.VELOCITY_CONTROL, forces=[0.0] * n, physicsClientId=self._client
        )
        self._ramp = SetpointRamp(n, self.physics_timestep_s)
        self._setpoint_rad = np.zeros(n)
        self._steps = 0
        self._requested_s = 0.0
        self.reset(np.clip(np.zeros(n), self._q_lower, self._q_upper))

    def _joint_vector(self, value: ArrayLike, what: str) -> np.ndarray:
        return checked_joint_vector(
            value, f"{self.name} {what}", self._joint_names, self._q_lower, self._q_upper, self._joint_units
        )

    def reset(self, q0: ArrayLike) -> None:
        """At rest at ``q0`` ((J,) [rad]), clock at 0.

        Args:
            q0: Joint positions, shape (J,), in [rad]; within the URDF limits.
        """
        q0 = self._joint_vector(q0, "reset pose")
        for joint, q in zip(self._joints, q0, strict=True):
            self._p.resetJointState(self._body, joint, float(q), 0.0, physicsClientId=self._client)
        self._ramp.reset(q0)
        self._setpoint_rad = q0
        self._steps = 0
        self._requested_s = 0.0

    def command(self, q_setpoint: ArrayLike, duration_s: float) -> None:
        """Ramp the servo reference to ``q_setpoint`` ((J,) [rad]) within ``duration_s`` [s].

        Args:
            q_setpoint: Joint setpoint, shape (J,), in [rad]; within the URDF limits.
            duration_s: Time to reach it, > 0, in [s] (rounded to whole physics steps, at least one).
        """
        q = self._joint_vector(q_setpoint, "setpoint")
        self._ramp.start(q, checked_duration(duration_s, f"{self.name} command duration_s"))
        self._setpoint_rad = q

    def advance(self, dt_s: float) -> None:
        """Simulate ``dt_s`` [s] in whole physics steps.

        Args:
            dt_s: Time to simulate, > 0, in [s].
        """
        self._requested_s += checked_duration(dt_s, f"{self.name} advance dt_s")
        for _ in range(max(0, round(self._requested_s / self.physics_timestep_s) - self._steps)):
            self._step()

    def _state(self) -> tuple[np.ndarray, np.ndarray]:
        states = self._p.getJointStates(self._body, self._joints, physicsClientId=self._client)
        return np.array([s[0] for s in states]), np.array([s[1] for s in states])

    def _step(self) -> None:
        p, body, client = self._p, self._body, self._client
        q, dq = self._state()
        zeros = [0.0] * len(q)
        mass = np.array(p.calculateMassMatrix(body, q.tolist(), physicsClientId=client))
        bias = np.array(p.calculateInverseDynamics(body, q.tolist(), dq.tolist(), zeros, physicsClientId=client))
        q_ref, dq_ref = self._ramp.reference_rad, self._ramp.slope_rad_s
        tau = self._kp * (q_ref - q) + self._kd * (dq_ref - dq)
        if self._gravity_compensation:
            tau += np.array(p.calculateInverseDynamics(body, q.tolist(), zeros, zeros, physicsClientId=client))
        tau = np.clip(tau, -self._effort_nm, self._effort_nm)
        force = tau - self._damping * dq - bias
        implicit = mass + np.diag(self._armature + self.physics_timestep_s * (self._kd + self._damping))
        ddq = np.linalg.solve(implicit, force)
        applied = mass @ ddq + bias  # the torque that gives PyBullet's rigid body exactly ddq
        p.setJointMotorControlArray(
            body, self._joints, p.TORQUE_CONTROL, forces=applied.tolist(), physicsClientId=client
        )
        p.stepSimulation(physicsClientId=client)
        self._ramp.consume(1)
        self._steps += 1

    def read(self) -> BackendSample:
        """Time, setpoint, joints and ground-truth tip pose now."""
        q, _ = self._state()
        link = self._p.getLinkState(
            self._body, self._joints[-1], computeForwardKinematics=True, physicsClientId=self._client
        )
        rotation = np.array(self._p.getMatrixFromQuaternion(link[5])).reshape(3, 3)
        x, y, z, w = link[5]
        return BackendSample(
            t_s=self._steps * self.physics_timestep_s,
            q_setpoint=self._setpoint_rad.copy(),
            q_measured=q,
            actual_tip_pos_m=np.array(link[4]) + rotation @ self._tip_in_last_m,
            actual_tip_quat_wxyz=canonical(quat_multiply(np.array([w, x, y, z]), self._tip_quat_in_last)),
        )

    def close(self) -> None:
        """Disconnect from the PyBullet server (idempotent)."""
        if self._client >= 0:
            self._p.disconnect(physicsClientId=self._client)
            self._client = -1
