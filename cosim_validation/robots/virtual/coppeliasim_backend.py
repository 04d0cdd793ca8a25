"""A virtual robot in CoppeliaSim, driven through its ZeroMQ remote API in stepping mode.

The arm is a scene in a CoppeliaSim process (or the stand-in,
:mod:`cosim_validation.robots.virtual.coppeliasim_standin`): its joints and the needle-tip dummy are found by
object path, the joints are position-controlled by CoppeliaSim. Calls used (manual ``en/sim-1/*.htm``):
``sim.getObject``, ``sim.setFloatParam(sim.floatparam_simulation_time_step, dt)``,
``sim.getSimulationTimeStep``, ``sim.setStepping``, ``sim.startSimulation``, ``sim.stopSimulation``,
``sim.getSimulationState``, ``sim.setJointPosition``, ``sim.setJointTargetPosition``, ``sim.step``,
``sim.getJointPosition``, ``sim.getObjectPose`` and ``sim.getSimulationTime``.

The first-order hold of the protocol is done here: before every simulation step each joint whose
reference moved gets the reference at the end of that step as its target.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from cosim_validation.common.record import RobotRole
from cosim_validation.robots.model import Kinematics
from cosim_validation.robots.robot_backend import BackendSample, JointSet
from cosim_validation.robots.virtual.backends_config import BackendsConfig
from cosim_validation.robots.virtual.command_checks import checked_duration, checked_joint_vector
from cosim_validation.robots.virtual.coppeliasim_config import CoppeliaSimConfig
from cosim_validation.robots.virtual.coppeliasim_link import CoppeliaSimLink
from cosim_validation.robots.virtual.errors import BackendConnectionError, BackendModelError
from cosim_validation.robots.virtual.quaternion import canonical
from cosim_validation.robots.virtual.setpoint_ramp import SetpointRamp

#: Pause between two looks at the simulation state while it stops [s].
STOP_POLL_S = 0.01


class CoppeliaSimBackend(JointSet):
    """Virtual robot in CoppeliaSim; implements :class:`~cosim_validation.robots.robot_backend.RobotBackend`.

    Args:
        config: The shared backend configuration (its physics rate is the default simulation time step).
        scene: Where CoppeliaSim listens and where the arm is in its scene.
        kinematics: The arm (joint names and limits from its URDF).

    Raises:
        MissingDependencyError: The official client is not installed.
        BackendConnectionError: CoppeliaSim does not answer (naming host, port and what to start).
        BackendModelError: The scene lacks the arm's objects (listing the paths expected), or refuses the time step.
    """

    name = "coppeliasim"
    role = RobotRole.VIRTUAL

    def __init__(self, config: BackendsConfig, scene: CoppeliaSimConfig, kinematics: Kinematics) -> None:
        self._joint_names = kinematics.joint_names
        self._joint_units = kinematics.joint_units
        self._q_lower, self._q_upper = np.array(kinematics.q_lower), np.array(kinematics.q_upper)
        self.time_step_s = scene.time_step_s if scene.time_step_s is not None else config.physics_timestep_s
        self._scene = scene
        self._link: CoppeliaSimLink | None = CoppeliaSimLink(scene)
        try:
            self._base, self._joints, self._tip = self._find_objects()
            self._stop()
            self._set_time_step()
            self._call("setStepping", True)
        except BaseException:
            self.close()
            raise
        n = len(self._joint_names)
        self._ramp = SetpointRamp(n, self.time_step_s)
        self._setpoint_rad = np.zeros(n)
        self._sent_rad = np.zeros(n)
        self._steps = 0
        self._requested_s = 0.0
        self.reset(np.clip(np.zeros(n), self._q_lower, self._q_upper))

    @property
    def physics_timestep_s(self) -> float:
        """The scene's simulation time step [s] (``coppeliasim.time_step_s``, else ``backends.physics_timestep_s``)."""
        return self.time_step_s

    def _call(self, function: str, *args: object) -> Any:
        if self._link is None:
            raise BackendConnectionError(f"{self._scene.endpoint}: sim.{function}: the backend is closed")
        return self._link.call(function, *args)

    def _const(self, name: str) -> Any:
        if self._link is None:
            raise BackendConnectionError(f"{self._scene.endpoint}: sim.{name}: the backend is closed")
        return self._link.const(name)

    def _find_objects(self) -> tuple[int, list[int], int]:
        """Handles of the base, the joints and the tip; one error listing every path that is missing."""
        scene = self._scene
        paths = [scene.base_path, *scene.joint_paths(self._joint_names), scene.tip_path]
        handles = [int(self._call("getObject", path, {"noError": True})) for path in paths]
        missing = [path for path, handle in zip(paths, handles, strict=True) if handle < 0]
        if missing:
            raise BackendModelError(
                f"the CoppeliaSim scene at {scene.endpoint} has no object at {', '.join(missing)}; expected the arm's "
                f"base at {scene.base_path}, its joints {', '.join(self._joint_names)} at {scene.joint_path} and the "
                f"needle-tip dummy at {scene.tip_path} (backends.coppeliasim; scripts/coppeliasim_scene.py builds "
                "such a scene)"
            )
        return handles[0], handles[1:-1], handles[-1]

    def _set_time_step(self) -> None:
        self._call("setFloatParam", self._const("floatparam_simulation_time_step"), self.time_step_s)
        got = float(self._call("getSimulationTimeStep"))
        if abs(got - self.time_step_s) > 1e-9 * max(1.0, self.time_step_s):
            raise BackendModelError(
                f"CoppeliaSim at {self._scene.endpoint} keeps a simulation time step of {got!r} s after being set to "
                f"{self.time_step_s!r} s; allow a custom time step in the scene's simulation settings"
            )

    def _stop(self) -> None:
        """Stop the simulation and wait (at most the call timeout) until CoppeliaSim reports it stopped."""
        stopped = self._const("simulation_stopped")
        if self._call("getSimulationState") == stopped:
            return
        self._call("stopSimulation")
        deadline = time.monotonic() + self._scene.call_timeout_s
        while self._call("getSimulationState") != stopped:
            if time.monotonic() > deadline:
                raise BackendConnectionError(
                    f"CoppeliaSim at {self._scene.endpoint} did not stop within {self._scene.call_timeout_s:g} s"
                )
            time.sleep(STOP_POLL_S)

    def _joint_vector(self, value: ArrayLike, what: str) -> np.ndarray:
        return checked_joint_vector(
            value, f"{self.name} {what}", self._joint_names, self._q_lower, self._q_upper, self._joint_units
        )

    def reset(self, q0: ArrayLike) -> None:
        """Stop, put the joints at ``q0`` ((J,) [rad]) with matching targets, start: at rest, clock at 0.

        Args:
            q0: Joint positions, shape (J,), in [rad], or [m] for a prismatic joint; within the URDF limits.
        """
        q0 = self._joint_vector(q0, "reset pose")
        self._stop()
        for handle, q in zip(self._joints, q0, strict=True):
            self._call("setJointPosition", handle, float(q))
            self._call("setJointTargetPosition", handle, float(q))
        self._call("startSimulation")
        self._ramp.reset(q0)
        self._setpoint_rad = q0
        self._sent_rad = q0.copy()
        self._steps = 0
        self._requested_s = 0.0

    def command(self, q_setpoint: ArrayLike, duration_s: float) -> None:
        """Ramp the joint targets to ``q_setpoint`` ((J,) [rad]) within ``duration_s`` [s].

        Args:
            q_setpoint: Joint setpoint, shape (J,), in [rad], or [m] for a prismatic joint; within the URDF limits.
            duration_s: Time to reach it, > 0, in [s] (rounded to whole simulation steps, at least one).
        """
        q = self._joint_vector(q_setpoint, "setpoint")
        self._ramp.start(q, checked_duration(duration_s, f"{self.name} command duration_s"))
        self._setpoint_rad = q

    def advance(self, dt_s: float) -> None:
        """Let ``dt_s`` [s] pass in whole simulation steps (the clock never drifts from the requested time).

        Args:
            dt_s: Time to let pass, > 0, in [s].
        """
        self._requested_s += checked_duration(dt_s, f"{self.name} advance dt_s")
        for _ in range(max(0, round(self._requested_s / self.time_step_s) - self._steps)):
            self._ramp.consume(1)
            reference = self._ramp.reference_rad
            for j in np.flatnonzero(reference != self._sent_rad):
                self._call("setJointTargetPosition", self._joints[j], float(reference[j]))
            self._sent_rad = reference
            self._call("step")
            self._steps += 1

    def read(self) -> BackendSample:
        """Simulation time, setpoint, joint positions and the tip dummy's pose in the base frame."""
        t_s = float(self._call("getSimulationTime"))
        q = np.array([float(self._call("getJointPosition", h)) for h in self._joints])
        pose = np.asarray(self._call("getObjectPose", self._tip, self._base), dtype=np.float64)
        if pose.shape != (7,):
            raise BackendConnectionError(
                f"{self._scene.endpoint}: sim.getObjectPose answered {pose.tolist()!r}; "
                "expected [x, y, z, qx, qy, qz, qw]"
            )
        return BackendSample(
            t_s=t_s,
            q_setpoint=self._setpoint_rad.copy(),
            q_measured=q,
            actual_tip_pos_m=pose[:3].copy(),
            actual_tip_quat_wxyz=canonical(np.array([pose[6], *pose[3:6]])),
        )

    def close(self) -> None:
        """Stop the simulation, leave stepping mode and disconnect (idempotent; never waits past the timeouts)."""
        link, self._link = self._link, None
        if link is None:
            return
        try:
            link.call("stopSimulation")
            link.call("setStepping", False)
        except BackendConnectionError:
            pass  # the server is gone: nothing to leave clean
        link.close()
