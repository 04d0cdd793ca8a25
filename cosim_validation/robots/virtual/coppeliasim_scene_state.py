"""The scene behind the CoppeliaSim stand-in: the project's MuJoCo arm answering the ``sim`` functions.

It holds what CoppeliaSim holds for the calls the CoppeliaSim backend makes: the objects (base, joints,
needle-tip dummy) with aliases and a hierarchy, the simulation state and time, the stepping level, the
simulation time step, and per joint a position and a target position. The physics is the MuJoCo arm of
:class:`~cosim_validation.robots.virtual.mujoco_arm.MujocoArm`; during one simulation step the servo
reference moves linearly from the previous targets to the new ones (a first-order hold at the step rate).

Semantics follow the CoppeliaSim manual (``en/sim-1/*.htm``): stopping restores the joint positions the
scene had when the simulation started; the default simulation time step is 50 ms; the time step can only
be changed while stopped. This stand-in runs only in stepping mode and requires the time step to be a whole
number of its physics steps.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from cosim_validation.robots.model.fk_kernels import matrix_to_quat_wxyz
from cosim_validation.robots.virtual.coppeliasim_protocol import RemoteCallError
from cosim_validation.robots.virtual.mujoco_arm import MujocoArm
from cosim_validation.robots.virtual.mujoco_model import TIP_SITE

#: Constants announced to clients (their values are this server's; clients read them, never assume them).
#: A constant of the stand-in's ``sim`` module that no CoppeliaSim has: the stand-in names itself by it, so that
#: ``cosim doctor`` tells it from the simulator (a user must not take a run on it for a CoppeliaSim run)
STANDIN_MARK = "cosimStandIn"
CONSTANTS: dict[str, int | str] = {
    "handle_world": -1,
    "simulation_stopped": 0,
    "simulation_paused": 8,
    "simulation_advancing_running": 17,
    "floatparam_simulation_time_step": 1,
    STANDIN_MARK: "cosim_validation's CoppeliaSim stand-in (the project's MuJoCo arm behind the ZeroMQ remote API)",
}
#: The ``sim`` functions served: exactly those the CoppeliaSim backend calls.
SERVED = (
    "getObject",
    "getObjectPose",
    "setStepping",
    "startSimulation",
    "stopSimulation",
    "getSimulationState",
    "getSimulationTime",
    "getSimulationTimeStep",
    "setFloatParam",
    "step",
    "setJointPosition",
    "setJointTargetPosition",
    "getJointPosition",
)
#: CoppeliaSim's default simulation time step [s] (``en/simulationPropertiesDialog.htm``).
DEFAULT_TIME_STEP_S = 0.05


class SceneObject(NamedTuple):
    """One object: its alias, its parent's handle (None at the root) and what it is (``base``, ``joint``, ``tip``)."""

    alias: str
    parent: int | None
    kind: str


class StandinScene:
    """The ``sim`` functions the CoppeliaSim backend calls, on one MuJoCo arm.

    Args:
        arm: The arm (its model has the joint servo and the tip site).
        joint_names: Names of the J joints, base to tool (their aliases in the scene).
        base_body: MuJoCo body of the arm's base; its name is the base object's alias.
        tip_alias: Alias of the needle-tip dummy.
    """

    def __init__(self, arm: MujocoArm, joint_names: tuple[str, ...], base_body: str, tip_alias: str) -> None:
        self._arm = arm
        self._base_body = int(arm.model.body(base_body).id)
        self._tip_site = int(arm.model.site(TIP_SITE).id)
        self.objects: dict[int, SceneObject] = {1: SceneObject(base_body, None, "base")}
        for j, name in enumerate(joint_names):
            self.objects[2 + j] = SceneObject(name, 1 + j, "joint")
        self.tip_handle = 2 + len(joint_names)
        self.objects[self.tip_handle] = SceneObject(tip_alias, 1 + len(joint_names), "tip")
        self._q_initial = arm.joint_positions_rad()
        self._targets = self._q_initial.copy()
        self._running = False
        self._stepping = 0
        self._steps = 0
        self._time_step_s = DEFAULT_TIME_STEP_S

    def functions(self) -> dict[str, Any]:
        """The served ``sim`` functions by name."""
        return {name: getattr(self, name) for name in SERVED}

    # ------------------------------------------------------------------ objects
    def _ancestors(self, handle: int) -> list[str]:
        out = []
        parent = self.objects[handle].parent
        while parent is not None:
            out.append(self.objects[parent].alias)
            parent = self.objects[parent].parent
        return out[::-1]

    def _matches(self, handle: int, segments: list[str]) -> bool:
        if self.objects[handle].alias != segments[-1]:
            return False
        ancestors, i = self._ancestors(handle), 0
        for alias in ancestors:  # the earlier segments are ancestors, in order, at any depth
            if i < len(segments) - 1 and alias == segments[i]:
                i += 1
        return i == len(segments) - 1

    def getObject(self, path: Any, options: Any = None) -> int:  # noqa: N802 - the remote API's name
        """The handle at ``path`` (``/alias`` or ``/ancestor/.../alias``); -1 if absent and ``noError`` is set.

        Args:
            path: Absolute object path, its segments aliases.
            options: A map; a true ``noError`` makes an absent object give -1 instead of an error.
        """
        if not isinstance(path, str) or not path.startswith("/"):
            raise RemoteCallError(f"sim.getObject: expected an absolute object path, got {path!r}")
        segments = [s for s in path.split("/") if s]
        found = [h for h in self.objects if segments and self._matches(h, segments)]
        if found:
            return found[0]
        if isinstance(options, dict) and options.get("noError"):
            return -1
        raise RemoteCallError(f"sim.getObject: object does not exist: {path}")

    def _joint(self, handle: Any) -> int:
        obj = self.objects.get(handle) if isinstance(handle, int) else None
        if obj is None or obj.kind != "joint":
            raise RemoteCallError(f"expected a joint handle, got {handle!r}")
        return int(handle) - 2

    def getObjectPose(self, handle: Any, relative_to: Any = -1) -> list[float]:  # noqa: N802
        """``[x, y, z, qx, qy, qz, qw]`` of the base or the tip, relative to the base or the world [m].

        Args:
            handle: Handle of the base or the tip.
            relative_to: -1 for the world, or the base's handle (1).
        """
        obj = self.objects.get(handle) if isinstance(handle, int) else None
        if obj is None or obj.kind == "joint":
            raise RemoteCallError(f"sim.getObjectPose: the stand-in serves the base and tip poses, got {handle!r}")
        if relative_to not in (-1, 1):
            raise RemoteCallError(f"sim.getObjectPose: relative to the world (-1) or the base (1), got {relative_to!r}")
        self._arm.forward()
        data = self._arm.data
        if obj.kind == "tip":
            pos, rot = np.array(data.site_xpos[self._tip_site]), np.array(data.site_xmat[self._tip_site]).reshape(3, 3)
        else:
            pos, rot = np.array(data.xpos[self._base_body]), np.array(data.xmat[self._base_body]).reshape(3, 3)
        if relative_to == 1:
            base_pos = np.array(data.xpos[self._base_body])
            base_rot = np.array(data.xmat[self._base_body]).reshape(3, 3)
            pos, rot = base_rot.T @ (pos - base_pos), base_rot.T @ rot
        w, x, y, z = _matrix_quat(rot)
        return [*(float(v) for v in pos), float(x), float(y), float(z), float(w)]

    # ------------------------------------------------------------------ simulation
    def setStepping(self, enable: Any) -> int:  # noqa: N802
        """Raise (True) or lower (False) the stepping level; the previous level.

        Args:
            enable: True to raise the level, False to lower it (not below 0).
        """
        previous = self._stepping
        self._stepping = previous + 1 if bool(enable) else max(0, previous - 1)
        return previous

    def startSimulation(self) -> int:  # noqa: N802
        """Start (from the current joint positions), time 0; 1."""
        if not self._running:
            if self._stepping == 0:
                raise RemoteCallError(
                    "sim.startSimulation: the stand-in runs in stepping mode only; call sim.setStepping(True) first"
                )
            self._q_initial = self._arm.joint_positions_rad()
            self._arm.reset(self._q_initial)
            self._running, self._steps = True, 0
        return 1

    def stopSimulation(self, wait: Any = False) -> int:  # noqa: N802
        """Stop and restore the joint positions the simulation started from; 1.

        Args:
            wait: Ignored (the stand-in stops at once).
        """
        if self._running:
            self._running, self._steps = False, 0
            self._arm.reset(self._q_initial)
        return 1

    def getSimulationState(self) -> int:  # noqa: N802
        """``simulation_advancing_running`` or ``simulation_stopped``."""
        return int(CONSTANTS["simulation_advancing_running" if self._running else "simulation_stopped"])

    def getSimulationTime(self) -> float:  # noqa: N802
        """Simulated time since the start [s] (0 while stopped)."""
        return self._steps * self._time_step_s

    def getSimulationTimeStep(self) -> float:  # noqa: N802
        """The simulation time step [s]."""
        return self._time_step_s

    def setFloatParam(self, parameter: Any, value: Any) -> int:  # noqa: N802
        """Set ``floatparam_simulation_time_step`` (stopped only; a whole number of physics steps); 1.

        Args:
            parameter: The parameter's constant; only ``floatparam_simulation_time_step`` is served.
            value: The new time step, in [s], a whole number (>= 1) of physics steps.
        """
        if parameter != CONSTANTS["floatparam_simulation_time_step"]:
            raise RemoteCallError(f"sim.setFloatParam: parameter {parameter!r} is not served by the stand-in")
        if self._running:
            raise RemoteCallError("sim.setFloatParam: the simulation time step can only change while stopped")
        physics_s = self._arm.timestep_s
        ratio = float(value) / physics_s if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
        if not math.isfinite(ratio) or round(ratio) < 1 or abs(ratio - round(ratio)) > 1e-6:
            raise RemoteCallError(f"sim.setFloatParam: time step {value!r} s is not a whole number of {physics_s} s")
        self._time_step_s = round(ratio) * physics_s
        return 1

    def step(self, wait: Any = True) -> None:
        """One simulation step: the servo reference ramps to the joint targets over the step.

        Args:
            wait: Ignored (the step is done when the call returns).
        """
        if not self._running:
            raise RemoteCallError("sim.step: the simulation is not running")
        self._arm.ramp.start(self._targets, self._time_step_s)
        self._arm.step(self._arm.ramp.steps_left)
        self._steps += 1

    # ------------------------------------------------------------------ joints
    def setJointPosition(self, handle: Any, position: Any) -> None:  # noqa: N802
        """Put the joint at ``position`` [rad] at once, at rest.

        Args:
            handle: Handle of a joint.
            position: Its new position, finite, in [rad], or [m] for a prismatic joint.
        """
        j, q = self._joint(handle), self._arm.joint_positions_rad()
        q[j] = _finite(position, "sim.setJointPosition")
        reference = self._arm.ramp.reference_rad
        self._arm.reset(q)
        if self._running:  # the servo keeps its reference
            self._arm.ramp.reset(reference)
            self._arm.data.act[:] = reference

    def setJointTargetPosition(self, handle: Any, position: Any, motion_params: Any = None) -> None:  # noqa: N802
        """The joint's position-control target [rad], reached by the servo from the next step on.

        Args:
            handle: Handle of a joint.
            position: The target, finite, in [rad], or [m] for a prismatic joint.
            motion_params: Ignored (the servo of the MuJoCo arm sets the motion).
        """
        self._targets[self._joint(handle)] = _finite(position, "sim.setJointTargetPosition")

    def getJointPosition(self, handle: Any) -> float:  # noqa: N802
        """The joint's position [rad].

        Args:
            handle: Handle of a joint.
        """
        return float(self._arm.joint_positions_rad()[self._joint(handle)])


def _finite(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise RemoteCallError(f"{what}: expected a finite position, got {value!r}")
    return float(value)


def _matrix_quat(rot: np.ndarray) -> np.ndarray:
    return np.asarray(matrix_to_quat_wxyz(np.ascontiguousarray(rot)))
