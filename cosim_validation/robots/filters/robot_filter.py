"""A layer between the controller and a robot: what changes the setpoints it gets and the readings it gives.

Injected learned errors (the simulated robot errs like the physical one) and injected hazards (faults in the
control path) are both a :class:`RobotFilter`: at every setpoint :meth:`RobotFilter.command` turns the
controller's setpoint into what reaches the robot, and at every reading :meth:`RobotFilter.observe` turns the
robot's sample into what the controller and the monitor see. The same filter object runs

- in batch, inside a :class:`FilteredBackend` around the robot's backend (the assembly's robots), and
- live, inside a proxy node between the controller and the robot's driver (``nodes/robot_proxy.py``),

fed the same calls in the same order, so a filtered robot behaves the same in both modes.

A filter whose behaviour depends on the stage of the case (a hazard triggered by a stage) is also
:class:`~cosim_validation.robots.robot_backend.StageAware` (:func:`notify_stage`; filters without it ignore
stages) and says so with a true ``needs_stage`` (:class:`StageDependent`): it is told the stage of each
setpoint before that setpoint's :meth:`RobotFilter.command`, in batch by :class:`FilteredBackend` (the lockstep
loop knows each setpoint's stage), live by the proxy from the controller's expected state of the setpoint's stamp.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike

from cosim_validation.robots.robot_backend import BackendSample, Reseedable, RobotBackend, StageAware


class FilterEvent(NamedTuple):
    """Something a filter did that the outside world should know (an injected fault starting or ending).

    Attributes:
        t_s: Case time [s].
        kind: What happened (e.g. ``fault_start``, ``fault_end``).
        name: Which fault, scenario or model.
        detail: Free text (joints, values).
    """

    t_s: float
    kind: str
    name: str
    detail: str


class RobotFilter(Protocol):
    """Transforms one robot's command and feedback streams, case by case."""

    @property
    def name(self) -> str:
        """What it is, for records and logs (e.g. ``errors:er3pro-v1``, ``hazards:sudden_jump``)."""
        ...

    def reset(self, q0: np.ndarray, case_seed: int) -> None:
        """A new case starts at rest at ``q0``; every random stream restarts from ``case_seed``.

        Args:
            q0: The case's start pose, shape (J,), in [rad], or [m] for a prismatic joint.
            case_seed: The case's seed.
        """
        ...

    def command(self, t_s: float, q_setpoint: np.ndarray) -> np.ndarray:
        """The joint vector the robot gets for the controller's setpoint due at case time ``t_s`` [s].

        Args:
            t_s: Case time the setpoint is due at, in [s].
            q_setpoint: The controller's setpoint, shape (J,), in [rad], or [m] for a prismatic joint.

        Returns:
            The joint vector sent on to the robot, shape (J,), in the same units.
        """
        ...

    def observe(self, sample: BackendSample) -> BackendSample:
        """What the controller and the monitor see of the robot's reading ``sample`` (its own history too).

        Args:
            sample: The reading of the robot (or of the filter inside this one).
        """
        ...

    def events(self) -> list[FilterEvent]:
        """The events since the last call (then forgotten)."""
        ...


def notify_stage(filters: list[RobotFilter], stage: int) -> None:
    """Tell every filter that has the optional ``stage(stage)`` notification the stage of the next setpoint.

    ``stage`` is a :class:`~cosim_validation.common.record.Stage` value; the other filters need no stage.

    Args:
        filters: The filters, in any order.
        stage: The stage of the next setpoint, a :class:`~cosim_validation.common.record.Stage` value.
    """
    for f in filters:
        if isinstance(f, StageAware):
            f.stage(int(stage))


@runtime_checkable
class StageDependent(StageAware, Protocol):
    """A filter that may depend on the setpoints' stages, and says whether it does in this run."""

    @property
    def needs_stage(self) -> bool:
        """Whether it must be told each setpoint's stage (a live proxy then waits for each stage)."""
        ...


def needs_stage(filters: list[RobotFilter]) -> bool:
    """Whether some filter's behaviour depends on the setpoints' stages (a :class:`StageDependent` that says so).

    Args:
        filters: The filters to ask.
    """
    return any(isinstance(f, StageDependent) and f.needs_stage for f in filters)


class FilteredBackend:
    """A :class:`RobotBackend` seen through :class:`RobotFilter` s (innermost first).

    ``reset`` gives the filters the rest pose; ``reseed`` their case seed (the batch runner calls it before the
    reset, as the driver does); commands pass through every filter's :meth:`~RobotFilter.command`, readings through
    every :meth:`~RobotFilter.observe` in reverse order.

    Args:
        inner: The robot.
        filters: The layers around it, innermost first.
    """

    def __init__(self, inner: RobotBackend, filters: list[RobotFilter]) -> None:
        self.inner = inner
        self.filters = list(filters)
        self._seed = 0
        self._t_s = 0.0

    @property
    def name(self) -> str:
        """The robot's name with its layers, e.g. ``mujoco+errors:er3pro-v1``."""
        return "+".join([self.inner.name, *(f.name for f in self.filters)])

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.inner, attribute)  # role, joint names, limits, physics_timestep_s, ...

    def reseed(self, case_seed: int) -> None:
        """The case's seed, for the robot's noise and the filters' random streams.

        Args:
            case_seed: The case's seed, passed to the robot if it is
                :class:`~cosim_validation.robots.robot_backend.Reseedable` and kept for the filters' next reset.
        """
        self._seed = int(case_seed)
        if isinstance(self.inner, Reseedable):
            self.inner.reseed(case_seed)

    def reset(self, q0: ArrayLike) -> None:
        """Reset the robot at ``q0``, then every filter (with the case seed of the last :meth:`reseed`).

        Args:
            q0: The rest pose, shape (J,), in [rad], or [m] for a prismatic joint.
        """
        self.inner.reset(q0)
        q0 = np.asarray(q0, dtype=np.float64)
        for f in self.filters:
            f.reset(q0, self._seed)
        self._t_s = 0.0

    def stage(self, stage: int) -> None:
        """The stage of the next setpoint (a ``Stage`` value), for the filters that use it.

        Args:
            stage: The stage of the next setpoint, a :class:`~cosim_validation.common.record.Stage` value.
        """
        notify_stage(self.filters, stage)

    def command(self, q_setpoint: ArrayLike, duration_s: float) -> None:
        """The setpoint due ``duration_s`` [s] from now, through every filter.

        Args:
            q_setpoint: The controller's setpoint, shape (J,), in [rad], or [m] for a prismatic joint.
            duration_s: Time the robot takes to reach it, in [s]; it also advances the case time the filters are given.
        """
        self._t_s += float(duration_s)
        q = np.asarray(q_setpoint, dtype=np.float64)
        for f in self.filters:
            q = f.command(self._t_s, q)
        self.inner.command(q, duration_s)

    def advance(self, dt_s: float) -> None:
        """Let time pass on the robot.

        Args:
            dt_s: Robot time to let pass, > 0, in [s].
        """
        self.inner.advance(dt_s)

    def read(self) -> BackendSample:
        """The robot's reading through every filter, outermost last."""
        sample = self.inner.read()
        for f in self.filters:
            sample = f.observe(sample)
        return sample

    def events(self) -> list[FilterEvent]:
        """Every filter's events since the last call."""
        return [e for f in self.filters for e in f.events()]

    def close(self) -> None:
        """Release the robot."""
        self.inner.close()
