"""The arm as a MuJoCo model: the project's URDF plus the needle, a tip site and the joint servo.

The URDF is the one source of the kinematics and inertias; this module adds what URDF cannot say:
the needle of the robot's kinematics (a massless capsule ending at the ``needle_tip`` site), the
reflected rotor inertia (armature), viscous joint damping, gravity compensation routed through the
actuators (so it counts against the URDF effort limits), and two actuators per joint that realise the
servo of :class:`~cosim_validation.robots.virtual.backends_config.JointServoConfig` with a first-order hold:

* ``servo_<joint>``: integrator dynamics (its activation is the reference q_ref, its control the
  reference slope), force kp (q_ref - q) - kd dq;
* ``feedforward_<joint>``: force kd * control, the velocity feed-forward kd dq_ref.

Contacts are disabled: backends execute joint trajectories; collisions are judged by the monitor.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim_validation.common.optional import require
from cosim_validation.robots.model import Kinematics
from cosim_validation.robots.virtual.backends_config import JointServoConfig
from cosim_validation.robots.virtual.errors import BackendModelError

#: Site at the needle tip; its +z axis points along the needle towards the tip.
TIP_SITE = "needle_tip"
#: Radius of the needle capsule drawn in viewers [m] (an 18 G needle, 1.27 mm outer diameter).
NEEDLE_RADIUS_M = 0.000635


def _mujoco() -> Any:
    return require("mujoco", "mujoco", "the MuJoCo robot backend")


def load_arm_spec(kinematics: Kinematics) -> Any:
    """The arm of ``kinematics`` (its URDF) as an editable ``mujoco.MjSpec``, with the needle and its tip site.

    The tip site sits on the body of the last joint at ``kinematics.T_last_tip``, the needle's own
    definition in the robot model, so simulator and forward kinematics share one needle.

    Args:
        kinematics: The arm (its URDF) and the needle.

    Raises:
        BackendModelError: MuJoCo cannot read the URDF, or its last joint is not the kinematics' last joint.
    """
    mujoco = _mujoco()
    urdf_path = kinematics.chain.urdf_path
    try:
        spec = mujoco.MjSpec.from_file(str(urdf_path))
    except Exception as exc:  # noqa: BLE001 - MuJoCo raises plain ValueError/RuntimeError with its parser text
        raise BackendModelError(f"{urdf_path}: MuJoCo cannot read the URDF: {exc}") from None
    spec.compiler.fusestatic = False  # keep flange, needle_holder, needle_mount as named bodies
    names = actuated_joint_names(spec)
    if names != kinematics.joint_names:
        raise BackendModelError(
            f"{urdf_path}: MuJoCo joints {names} differ from the kinematics' {kinematics.joint_names}"
        )
    last_body = spec.joint(names[-1]).parent
    T = kinematics.T_last_tip
    tip_quat = np.empty(4)
    mujoco.mju_mat2Quat(tip_quat, np.ascontiguousarray(T[:3, :3]).ravel())
    base = T[:3, 3] - kinematics.needle_length_m * T[:3, 2]
    last_body.add_geom(
        name="needle",
        type=mujoco.mjtGeom.mjGEOM_CAPSULE,
        size=[NEEDLE_RADIUS_M, 0.0, 0.0],
        fromto=[*base, *T[:3, 3]],
        density=0.0,
        contype=0,
        conaffinity=0,
    )
    last_body.add_site(name=TIP_SITE, pos=T[:3, 3], quat=tip_quat)
    return spec


def actuated_joint_names(spec: Any) -> tuple[str, ...]:
    """Names of the revolute (hinge) and prismatic (slide) joints of ``spec``, base to tool.

    Args:
        spec: A ``mujoco.MjSpec``.
    """
    mujoco = _mujoco()
    kinds = (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE)
    return tuple(j.name for j in spec.joints if j.type in kinds)


def add_servo(spec: Any, servo: JointServoConfig, timestep_s: float) -> None:
    """Add the joint servo, armature, damping, gravity compensation and the physics options to ``spec``.

    Args:
        spec: The ``mujoco.MjSpec`` of the arm, edited in place.
        servo: Gains, armature, damping and gravity compensation of the J joints.
        timestep_s: Physics (servo) period, in [s].

    Raises:
        BackendModelError: The servo has a different number of joints than the model.
    """
    mujoco = _mujoco()
    names = actuated_joint_names(spec)
    if len(names) != servo.n_joints:
        raise BackendModelError(f"the servo configures {servo.n_joints} joints, the model has {len(names)}: {names}")
    spec.option.timestep = timestep_s
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.option.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    for body in spec.bodies:
        body.gravcomp = 1.0 if servo.gravity_compensation else 0.0
    for i, name in enumerate(names):
        joint = spec.joint(name)
        joint.armature = float(servo.armature_kg_m2[i])
        joint.damping[0] = float(servo.damping_nms_per_rad[i])
        joint.actgravcomp = servo.gravity_compensation
        kp, kd = float(servo.kp_nm_per_rad[i]), float(servo.kd_nms_per_rad[i])
        act = spec.add_actuator(name=f"servo_{name}", target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        act.dyntype = mujoco.mjtDyn.mjDYN_INTEGRATOR
        act.gaintype = mujoco.mjtGain.mjGAIN_FIXED
        act.biastype = mujoco.mjtBias.mjBIAS_AFFINE
        act.gainprm[0] = kp
        act.biasprm[:3] = [0.0, -kp, -kd]
    for i, name in enumerate(names):
        ff = spec.add_actuator(name=f"feedforward_{name}", target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        ff.gainprm[0] = float(servo.kd_nms_per_rad[i])
