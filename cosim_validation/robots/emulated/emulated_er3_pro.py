"""The emulated physical ER3 Pro: a perturbed twin of the nominal arm that errs like a real one.

What happens to a setpoint, in order:

1. it reaches the servo after ``command_latency_s``; the servo interpolates it (first-order hold at 1 kHz)
   and tracks it with the nominal gains, compensating the *nominal* gravity;
2. the motors move the real arm (MuJoCo, on a model with drawn mass errors and dry joint friction), so
   the motor angles differ from the reference by the gravity residual, friction sticking and lag;
3. the encoders read the motor angles (quantised, noisy): these are the *measured joints*;
4. the links sit behind the motors by the gear play (lost motion, direction-dependent) and the gear
   torsion under the transmitted torque (quasi-static: link = motor - play - torque / stiffness);
5. the real geometry (joint zero offsets, link lengths, needle length drawn from the tolerances) places
   the tip, which the external tracker reports with noise: the *actual tip pose*;
6. with ``tracker.marker`` configured, an optical tracker also reports the pose of a marker on the tool in its
   own frame, at transforms the software is not told (``optical_tracker.py``): the raw data of hand-eye
   calibration and error learning ([Barragan et al. 2024]).

Forward kinematics of the measured joints with the nominal model therefore misses the actual tip by the
geometry errors, the gear play and torsion, and the tracker noise, as on a real arm.
"""

from __future__ import annotations

import operator
from collections import deque
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from cosim_validation.common.exceptions import InputError
from cosim_validation.common.optional import require
from cosim_validation.common.record import RobotRole
from cosim_validation.robots.emulated.arm_perturbation import ArmPerturbation, massive_body_names
from cosim_validation.robots.emulated.cable_transmission import CableTransmission
from cosim_validation.robots.emulated.emulated_config import EmulatedArmConfig
from cosim_validation.robots.emulated.external_tracker import ExternalTracker
from cosim_validation.robots.emulated.joint_encoder import JointEncoder
from cosim_validation.robots.emulated.lost_motion import LostMotion
from cosim_validation.robots.emulated.optical_tracker import NOT_SEEN, OpticalTracker
from cosim_validation.robots.model import Kinematics
from cosim_validation.robots.model.mujoco_compile import compile_spec
from cosim_validation.robots.robot_backend import BackendSample, JointSet
from cosim_validation.robots.virtual.backends_config import BackendsConfig
from cosim_validation.robots.virtual.command_checks import checked_duration, checked_joint_vector
from cosim_validation.robots.virtual.mujoco_arm import MujocoArm
from cosim_validation.robots.virtual.mujoco_model import actuated_joint_names, add_servo, load_arm_spec

# MuJoCo's dry friction is a soft constraint: with its default impedance (0.9-0.95) a joint creeps through
# friction within a fraction of a second. Near-rigid settings make it stick, as gears do; the time constant
# is the smallest MuJoCo keeps stable (two physics steps).
_FRICTION_SOLIMP = (0.9999, 0.9999, 0.001, 0.5, 2.0)
_FRICTION_TIMECONST_STEPS = 2

# The gear play is updated at least this often [physics steps] (a 10 ms period: exact for any path
# with at most one reversal per 10 ms).
_PLAY_UPDATE_STEPS = 10


class EmulatedEr3Pro(JointSet):
    """Stand-in for the physical arm; implements :class:`~cosim_validation.robots.robot_backend.RobotBackend`.

    Args:
        config: The shared backend configuration (physics rate, servo).
        emulated: The error sources of this arm.
        kinematics: The nominal arm (its URDF) and needle.
        seed: Overrides ``emulated.seed`` (e.g. one arm per campaign worker).
    """

    name = "emulated"
    role = RobotRole.PHYSICAL

    def __init__(
        self,
        config: BackendsConfig,
        emulated: EmulatedArmConfig,
        kinematics: Kinematics,
        *,
        seed: int | None = None,
    ) -> None:
        self._mujoco = require("mujoco", "mujoco", "the emulated ER3 Pro")
        self.seed = emulated.seed if seed is None else _seed(seed)
        geometry_rng, encoder_rng, tracker_rng, marker_rng = (
            np.random.default_rng(s) for s in np.random.SeedSequence(self.seed).spawn(4)
        )
        spec = load_arm_spec(kinematics)
        add_servo(spec, config.servo, emulated.physics_timestep_s)
        self._joint_names = actuated_joint_names(spec)
        self._joint_units = kinematics.joint_units
        n = len(self._joint_names)
        dynamics = emulated.dynamics
        self.perturbation = ArmPerturbation.draw(
            emulated.kinematics, dynamics, n, massive_body_names(spec), geometry_rng
        )
        self.perturbation.apply(spec, self._joint_names, config.servo.gravity_compensation)
        for name, friction in zip(self._joint_names, dynamics.coulomb_friction_nm, strict=True):
            joint = spec.joint(name)
            joint.frictionloss = float(friction)
            joint.solimp_friction = _FRICTION_SOLIMP
            joint.solref_friction = [_FRICTION_TIMECONST_STEPS * emulated.physics_timestep_s, 1.0]
        model = compile_spec(spec, f"{kinematics.chain.urdf_path} (emulated ER3 Pro, seed {self.seed})")
        self._arm = MujocoArm(model)
        self._link_data = self._mujoco.MjData(model)  # the link-side (actual) configuration
        self._q_lower = np.array(model.jnt_range[:n, 0])  # controller soft limits = URDF limits
        self._q_upper = np.array(model.jnt_range[:n, 1])
        self._stiffness = dynamics.joint_stiffness_nm_per_rad
        self._play = LostMotion(dynamics.lost_motion_rad)
        self._emulated = emulated
        self._encoder = JointEncoder(emulated.encoder, encoder_rng)
        self._tracker = ExternalTracker(emulated.tracker, tracker_rng)
        self._marker = _marker_tracker(emulated, marker_rng)
        transmission_rng = np.random.default_rng(np.random.SeedSequence(self.seed).spawn(5)[4])
        self.transmission = CableTransmission.draw(emulated.transmission, n, transmission_rng)
        self._latency_steps = round(emulated.command_latency_s / self._arm.timestep_s)
        self._settle_steps = round(emulated.reset_settle_s / self._arm.timestep_s)
        self._pending: deque[tuple[int, np.ndarray, float]] = deque()
        self._setpoint_rad = np.zeros(n)
        self._requested_s = 0.0
        self.reset(np.clip(np.zeros(n), self._q_lower, self._q_upper))

    @property
    def physics_timestep_s(self) -> float:
        """Physics and servo period [s]."""
        return self._arm.timestep_s

    @property
    def model(self) -> Any:
        """The real arm's ``mujoco.MjModel`` (perturbed geometry, masses, friction)."""
        return self._arm.model

    def _joints(self, value: ArrayLike, what: str) -> np.ndarray:
        return checked_joint_vector(
            value, f"{self.name} {what}", self._joint_names, self._q_lower, self._q_upper, self._joint_units
        )

    def reseed(self, case_seed: int) -> None:
        """Restart the encoder and tracker noise from (arm seed, ``case_seed``); the arm itself stays.

        The batch runner calls this before each case, so a case's noise depends on the case only, not on
        the cases this arm ran before (local and Ray runs, resumed and uninterrupted runs agree).

        Args:
            case_seed: The case's seed.
        """
        streams = np.random.SeedSequence([self.seed, int(case_seed)]).spawn(3)
        self._encoder = JointEncoder(self._emulated.encoder, np.random.default_rng(streams[0]))
        self._tracker = ExternalTracker(self._emulated.tracker, np.random.default_rng(streams[1]))
        self._marker = _marker_tracker(self._emulated, np.random.default_rng(streams[2]))

    def reset(self, q0: ArrayLike) -> None:
        """Hold ``q0`` ((J,) encoder angles [rad]) for ``reset_settle_s``, then start the clock at 0.

        Args:
            q0: Encoder (motor-side) joint angles, shape (J,), in [rad], or [m] for a prismatic joint; within the
                URDF limits.
        """
        q0 = self._joints(q0, "reset pose")
        self._arm.reset(q0)
        self._play.reset(q0)
        self._pending.clear()
        self._step(self._settle_steps)
        self._arm.restart_clock()
        self._setpoint_rad = q0
        self._requested_s = 0.0

    def command(self, q_setpoint: ArrayLike, duration_s: float) -> None:
        """Send a setpoint; it reaches the servo after the latency, then ramps within ``duration_s`` [s].

        Args:
            q_setpoint: Joint setpoint, shape (J,), in [rad], or [m] for a prismatic joint; within the URDF limits.
            duration_s: Time the servo reference takes to ramp to it once it arrives, > 0, in [s].
        """
        q = self._joints(q_setpoint, "setpoint")
        duration = checked_duration(duration_s, f"{self.name} command duration_s")
        self._pending.append((self._arm.steps + self._latency_steps, q, duration))
        self._setpoint_rad = q

    def advance(self, dt_s: float) -> None:
        """Let ``dt_s`` [s] pass.

        Args:
            dt_s: Time to let pass, > 0, in [s]; the arm steps to the physics step nearest the total requested time.
        """
        self._requested_s += checked_duration(dt_s, f"{self.name} advance dt_s")
        self._step(self._arm.steps_until(self._requested_s))

    def _step(self, n_steps: int) -> None:
        arm, pending, play = self._arm, self._pending, self._play
        motor_rad = arm.data.qpos[: arm.n_joints]  # a view: the play reads it after each stretch, never keeps it
        end = arm.steps + n_steps
        while arm.steps < end:
            while pending and pending[0][0] <= arm.steps:
                _, q, duration = pending.popleft()
                arm.ramp.start(q, duration)
            stop = min(end, arm.steps + _PLAY_UPDATE_STEPS)
            if pending:
                stop = min(stop, pending[0][0])
            arm.step(stop - arm.steps)
            play.update(motor_rad)

    def link_angles_rad(self) -> np.ndarray:
        """(J,) the real link angles now [rad, or m].

        Motor angles minus gear play and gear torsion, through the cable transmission's ratio and coupling errors
        (identity for a gear-driven arm).
        """
        self._arm.forward()
        torque_nm = np.array(self._arm.data.qfrc_actuator[: len(self._joint_names)])
        link_rad: np.ndarray = self._play.link_rad - torque_nm / self._stiffness
        return self.transmission.link(link_rad)

    def true_tip_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """The actual tip position (3,) [m] and orientation (4,) wxyz, without tracker noise."""
        self._link_data.qpos[:] = self.link_angles_rad()
        self._mujoco.mj_kinematics(self._arm.model, self._link_data)
        return self._arm.tip_pose(self._link_data)

    def read(self) -> BackendSample:
        """Time, setpoint, encoder readings, the tracker's tip pose and, with an optical tracker, the marker now."""
        true_tip = self.true_tip_pose()
        tip_pos_m, tip_quat_wxyz = self._tracker.measure(*true_tip)
        marker = NOT_SEEN if self._marker is None else self._marker.measure(self._arm.time_s, *true_tip)
        return BackendSample(
            t_s=self._arm.time_s,
            q_setpoint=self._setpoint_rad.copy(),
            q_measured=self._encoder.read(self._arm.joint_positions_rad()),
            actual_tip_pos_m=tip_pos_m,
            actual_tip_quat_wxyz=tip_quat_wxyz,
            marker_pos_m=marker.pos_m,
            marker_quat_wxyz=marker.quat_wxyz,
            marker_error_m=marker.registration_error_m,
        )

    def close(self) -> None:
        """Nothing to release (the model lives in this process)."""


def _marker_tracker(emulated: EmulatedArmConfig, rng: np.random.Generator) -> OpticalTracker | None:
    """The optical tracker of the marker, if the configuration has one."""
    marker = emulated.tracker.marker
    return None if marker is None else OpticalTracker(marker, rng)


def _seed(seed: object) -> int:
    """A seed for numpy's SeedSequence: an integer >= 0 (numpy raised a ValueError for -5)."""
    try:
        value = operator.index(seed)  # type: ignore[arg-type]
    except TypeError:
        value = -1
    if isinstance(seed, bool) or value < 0:
        raise InputError(f"seed of the emulated arm: expected an integer >= 0, got {seed!r}")
    return int(value)
