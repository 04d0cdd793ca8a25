"""The task supervisor in the lockstep loop ([Preda et al. 2016]; docs/SUPERVISOR.md, "In the control loop").

A supervised case streams one setpoint per control period, and the supervisor decides each one: the next
setpoint of the plan while the machine is in the motion state of that stage, the last one again (hold) on
any exception, a request to stop or while waiting, and the teleoperation follower's setpoint in
TeleoperationMode. After teleoperation moved the arm, the controller returns to where the plan resumes at
``loop.rejoin_speed_fraction`` of every joint's velocity limit before it streams the plan again.

Event sources, identical in batch and live (both read a :class:`~.robot_port.Measurement` of the robot that
feeds the supervisor, see :func:`feeding_robot`): the needle-to-forbidden-region distance from the measured
joints (nominal kinematics, the case study's anatomy), the axial holder force from the needle force model,
the tip tracking from the reported tip pose (NaN: none), scripted requests and faults of a scenario, user
requests (:meth:`SupervisedCase.request`) and external alarms (:class:`AlarmSource`, e.g. a hazard detector).
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple, Protocol

import numpy as np

from cosim_validation.assembly.robot_port import Measurement
from cosim_validation.common.config import resolve_resource
from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import RobotRole, Stage
from cosim_validation.controllers.planning import Plan
from cosim_validation.controllers.planning.collision_world import CollisionWorld
from cosim_validation.monitor.statechart.loader import load_machine
from cosim_validation.monitor.statechart.model import Machine
from cosim_validation.robots.model import Kinematics
from cosim_validation.supervisor.needle_force import NeedleForceModel, NeedleForceStream
from cosim_validation.supervisor.needle_force_config import load_needle_force
from cosim_validation.supervisor.scenario import Scenario, ScenarioRunner
from cosim_validation.supervisor.supervisor import Supervisor, SupervisorStatus
from cosim_validation.supervisor.supervisor_config import SupervisorConfig
from cosim_validation.supervisor.supervisor_inputs import supervisor_inputs
from cosim_validation.supervisor.teleoperation import (
    TeleoperationFollower,
    TeleoperationScript,
    TeleoperationSource,
)


class AlarmSource(Protocol):
    """Anything outside the supervisor that can raise an exception (a hazard detector, a watchdog).

    Polled once per control period, before the supervisor's step: the alarms active now, source -> reason.
    The first active alarm raises the supervisor's ``events.alarm`` (the task stops); while any is active the
    task cannot be recovered.
    """

    def active_alarms(self, t_s: float) -> Mapping[str, str]:
        """Active alarms at case time ``t_s`` [s].

        Args:
            t_s: The case time, in [s].
        """
        ...


class Proposal(NamedTuple):
    """What a closed-loop controller asks for in a period the supervisor steps (:meth:`SupervisedCase.decide`).

    Attributes:
        q: (J,) its setpoint (its last one again for a hold).
        stage: The stage it says the setpoint belongs to.
        done: It said ``done`` with ``completed``: the stages the machine still asks for are finished.
    """

    q: np.ndarray
    stage: Stage
    done: bool = False


class Decision(NamedTuple):
    """What the supervisor decided for one control period.

    Attributes:
        q: (J,) the setpoint to stream (rad, or m for a prismatic joint).
        stage: Its stage (the stage last streamed while holding).
        status: The supervisor's step.
        plan_index: The plan sample streamed (a closed-loop controller: how many of its setpoints were streamed,
            counting this one), or -1 (hold, teleoperation, rejoin).
        end: "" while the case goes on; else ``completed`` or the reason it is aborted.
    """

    q: np.ndarray
    stage: Stage
    status: SupervisorStatus
    plan_index: int
    end: str


class CheckedSupervision(NamedTuple):
    """What :func:`check_supervision` read, for a caller that needs it again (the run's list of input files).

    Attributes:
        config: The supervisor configuration.
        scenario: The scenario (the given one, else the configuration's), or None.
        machine: The supervisor's state machine.
    """

    config: SupervisorConfig
    scenario: Scenario | None
    machine: Machine


def check_supervision(
    config_path: str | Path | None, scenario_path: str | Path | None, files: Mapping[str, Path] | None = None
) -> CheckedSupervision | None:
    """Read the supervisor configuration, its machine and the scenario without building anything.

    A campaign checks them before it touches its run directory.

    Args:
        config_path: The supervisor configuration, or None (no supervisor).
        scenario_path: A scenario in place of the configuration's, or None.
        files: A run's copies in place of the files they name.

    Returns:
        What was read; None without a supervisor.

    Raises:
        ConfigError, InputError: A bad file (naming it and the key), or a scenario without a supervisor.
    """
    if config_path is None:
        if scenario_path is not None:
            raise InputError("a supervisor scenario needs a supervisor (--supervisor or campaign.supervisor)")
        return None
    config, scenario = supervisor_inputs(config_path, scenario_path, files)
    machine = load_machine(config.machine_path)
    config.check_against(machine, str(config_path))
    if scenario is not None:
        scenario.check_against(machine)
    return CheckedSupervision(config, scenario, machine)


def feeding_robot(robots: Sequence[RobotRole]) -> RobotRole:
    """Whose measurements feed the supervisor: the physical robot when the case drives one, else the virtual.

    Args:
        robots: The robots the case drives.

    Raises:
        InputError: The case drives neither.
    """
    for role in (RobotRole.PHYSICAL, RobotRole.VIRTUAL):
        if role in robots:
            return role
    raise InputError(f"a supervised case needs a virtual or physical robot, got {[r.label for r in robots]}")


class Supervision:
    """The supervisor's machine, sources and scenario for every case of an assembly (loaded once).

    Args:
        config_path: The supervisor configuration (``config/supervisor/supervisor.yaml`` or a user file).
        checked: What :func:`check_supervision` read of it (configuration, scenario, machine; read once).
        kinematics: The nominal arm and needle (needle segment of the measured joints).
        world: Distance queries on the anatomy (the needle's clearance to its forbidden regions).
        scene: The anatomy scene (the force model's tissue layers name its models).
        velocity_limit: (J,) joint speed limits (teleoperation and the rejoin are bounded by them).

    Raises:
        ConfigError, InputError: A bad force model or teleoperation script (naming file and key).
    """

    def __init__(
        self,
        config_path: str | Path,
        checked: CheckedSupervision,
        kinematics: Kinematics,
        world: CollisionWorld,
        scene: object,
        velocity_limit: np.ndarray,
    ) -> None:
        self.config_path = resolve_resource(config_path)  # what was loaded: the supervisor node shows it
        self.config, self.scenario, self.machine = checked
        self.forces: NeedleForceModel = load_needle_force(self.config.needle_force_path, scene)  # type: ignore[arg-type]
        self.kinematics = kinematics
        self.world = world
        self.velocity_limit = np.asarray(velocity_limit, dtype=np.float64)
        self.scenario_path = Path(self.scenario.source) if self.scenario is not None else None
        script = self.scenario.teleoperation_path if self.scenario is not None else None
        #: What TeleoperationMode follows: the scenario's script, else None (hold); a live session sets the
        #: latest command of its teleoperation topics (:mod:`cosim_validation.supervisor.teleoperation_input`).
        self.teleoperation: TeleoperationSource | None = None
        if script is not None:
            self.teleoperation = TeleoperationScript.load(script, kinematics.n_joints)
        self.alarm_sources: list[AlarmSource] = []
        self.current: SupervisedCase | None = None  # the case running now (user requests go to it)

    @classmethod
    def load(
        cls,
        config_path: str | Path,
        kinematics: Kinematics,
        world: CollisionWorld,
        scene: object,
        velocity_limit: np.ndarray,
        scenario_path: str | Path | None = None,
        files: Mapping[str, Path] | None = None,
    ) -> Supervision:
        """Read and check the supervisor's files (:func:`check_supervision`), then build it.

        Args:
            config_path: The supervisor configuration.
            kinematics: The nominal arm and needle.
            world: Distance queries on the anatomy.
            scene: The anatomy scene.
            velocity_limit: (J,) joint speed limits [rad/s, or m/s for a prismatic joint].
            scenario_path: A scenario file; None: the configuration's ``scenario`` (if any).
            files: A run's copies (role -> path, :mod:`~cosim_validation.runs.run_supervision`) read in place
                of the files the configuration and the scenario name.

        Raises:
            ConfigError, InputError: A bad configuration, machine, force model or scenario (naming file and key).
        """
        checked = check_supervision(config_path, scenario_path, files)
        assert checked is not None  # a configuration path was given
        return cls(config_path, checked, kinematics, world, scene, velocity_limit)

    def for_case(self, test_id: str, plan: Plan, dt_s: float | None = None) -> SupervisedCase:
        """A fresh supervisor for one case, started and told the case is planned; it becomes :attr:`current`.

        ``dt_s``: the control period of a closed-loop controller (whose ``plan`` is its start, or its reference).

        Args:
            test_id: The case's test id (the scenario's actions that name cases apply to the cases they name).
            plan: The case's plan (at least 2 samples when ``dt_s`` is None), or a closed-loop controller's start
                or reference.
            dt_s: The control period of a closed-loop controller, in [s]; None: the plan's sample period.

        Raises:
            InputError: No ``dt_s`` and a plan of fewer than 2 samples.
        """
        self.current = SupervisedCase(self, test_id, plan, dt_s)
        return self.current

    def clearance_m(self, q_measured: np.ndarray) -> float:
        """Needle-to-forbidden-region distance at the measured joints.

        0 on contact, inf without regions. Exact below twice ``sources.clearance_m``, a lower bound above it (a
        bounding-sphere test instead of a mesh query: the event only needs to know whether the needle is closer than the
        threshold).

        Args:
            q_measured: Measured joint positions, shape (J,), in [rad], or [m] for a prismatic joint.

        Returns:
            The distance in [m].
        """
        holder, tip = self.kinematics.needle_segments(np.asarray(q_measured, dtype=np.float64))
        distance, _ = self.world.forbidden_distance(holder, tip, enough_m=2.0 * self.config.sources.clearance_m)
        return float(distance[0])


class SupervisedCase:
    """One case under the supervisor: feed it each period's measurement, then ask for the period's setpoint.

    The setpoints it streams in motion states come from the plan, or, for a closed-loop controller, from the
    controller's :class:`Proposal` of each period (``dt_s`` given).
    """

    def __init__(self, supervision: Supervision, test_id: str, plan: Plan, dt_s: float | None = None) -> None:
        if dt_s is None and plan.n_samples < 2:
            raise InputError(f"case {test_id!r}: a supervised case needs a plan of at least 2 samples")
        self.s = supervision
        self.test_id = test_id
        self.plan = plan
        self.dt_s = float(plan.t_s[1] - plan.t_s[0]) if dt_s is None else float(dt_s)
        #: (J,) how far each joint may move toward the plan or the controller per period when rejoining [rad, m]
        self.rejoin_step = supervision.config.loop.rejoin_speed_fraction * supervision.velocity_limit * self.dt_s
        self.supervisor = Supervisor(supervision.machine, supervision.config)
        self.force_stream = NeedleForceStream(supervision.forces)
        self.scenario: ScenarioRunner | None = supervision.scenario.runner(test_id) if supervision.scenario else None
        self.status = self.supervisor.start(0.0)
        self.supervisor.task_configured()
        self.sent = 0
        self.q = plan.q[0].copy()
        self.stage = Stage(int(plan.stage[0]))
        self.follower: TeleoperationFollower | None = None
        self.resume_q = self.q.copy()  # where autonomous motion goes on: the rejoin's goal after teleoperation
        self.rejoin = False
        self.stopped_since_s: float | None = None
        self.tip_force_n = self.holder_force_n = self.clearance_m = float("nan")
        self.transitions: list[SupervisorStatus] = []
        self.tip_tracked = False
        self.robot: RobotRole | None = None  # whose measurements feed the supervisor (set by the loop)
        self.holder_m = self.tip_m = np.full(3, np.nan)  # the needle at the last measurement, base_link [m]
        self._requests: queue.SimpleQueue[str] = queue.SimpleQueue()  # from service threads to the loop

    def request(self, name: str) -> None:
        """A user request (abort, recover, teleoperation, auto), seen by the next step; thread-safe.

        Args:
            name: The request, one of the supervisor configuration's ``requests``.

        Raises:
            InputError: An unknown request.
        """
        if name not in self.s.config.requests:
            raise InputError(
                f"unknown supervisor request {name!r}; expected one of: {', '.join(self.s.config.requests)}"
            )
        self._requests.put(name)

    def observe(self, t_s: float, measurement: Measurement | None) -> None:
        """What was measured after the previous setpoint (None before the first answer), at case time ``t_s``.

        Args:
            t_s: The case time, in [s].
            measurement: The feeding robot's answer to the previous setpoint (its measured joints give the
                needle's clearance and force; a NaN tip position is untracked), or None before the first answer.
        """
        faults = self.scenario.active(t_s) if self.scenario is not None else {}
        while not self._requests.empty():
            self.supervisor.request(self._requests.get())
        if measurement is not None:
            holder, tip = self.s.kinematics.needle_segments(measurement.q_measured)
            self.holder_m, self.tip_m = holder[0], tip[0]
            self.clearance_m = self.s.clearance_m(measurement.q_measured)
            self.tip_force_n, self.holder_force_n = self.force_stream.update(t_s, holder[0], tip[0])
            tracked = self.tip_tracked = bool(np.all(np.isfinite(measurement.tip_pos_m))) and "tracking" not in faults
            self.supervisor.observe_clearance(faults.get("clearance", self.clearance_m))
            self.supervisor.observe_force(faults.get("force", self.holder_force_n))
            self.supervisor.observe_tip(t_s, tracked)
        alarms = {"scenario": "scripted alarm"} if "alarm" in faults else {}
        for source in self.s.alarm_sources:
            alarms.update(source.active_alarms(t_s))
        for name in set(self.supervisor.alarm.sources) - set(alarms):
            self.supervisor.observe_alarm(name, False)
        for name, reason in alarms.items():
            self.supervisor.observe_alarm(name, True, reason)

    def decide(self, t_s: float, propose: Callable[[SupervisorStatus], Proposal] | None = None) -> Decision:
        """One supervisor step at case time ``t_s`` [s] and the setpoint of this period.

        The setpoint is the plan's, or what ``propose`` (a closed-loop controller, told the step's status) asks for,
        where the machine allows motion.

        Args:
            t_s: The case time, in [s].
            propose: A closed-loop controller's proposal, given the step's status; None: the plan's setpoints.
        """
        status = self.status = self.supervisor.step(t_s)
        if status.transition:
            self.transitions.append(status)
        index = -1
        proposal = propose(status) if propose is not None else None
        if status.teleoperation:
            self._teleoperate(t_s)
        elif status.motion_allowed and status.stage is not None:
            index = self._advance(status.stage) if proposal is None else self._follow(status.stage, proposal)
        else:
            self.follower = None
        if self.scenario is not None:
            requests, _ = self.scenario.update(t_s, status.state)
            for name in requests:
                self.supervisor.request(name)
        return Decision(self.q.copy(), self.stage, status, index, self._end(t_s, status))

    def _advance(self, stage: Stage) -> int:
        """The next setpoint of ``stage`` (or the rejoin toward it); the plan index streamed or -1."""
        self.follower = None
        plan, nxt = self.plan, self.sent + 1
        if self.rejoin:
            step = self.rejoin_step
            delta = plan.q[self.sent] - self.q
            self.q = self.q + np.clip(delta, -step, step)
            self.rejoin = bool(np.any(np.abs(delta) > step))
            return -1
        if nxt < plan.n_samples and Stage(int(plan.stage[nxt])) is stage:
            self.sent, self.q, self.stage = nxt, plan.q[nxt].copy(), stage
            self.resume_q = self.q
            if nxt + 1 == plan.n_samples or plan.stage[nxt + 1] != plan.stage[nxt]:
                self.supervisor.stage_finished(stage)
            return nxt
        if not np.any(plan.stage[nxt:] == int(stage)):  # a stage the plan does not have (or already ran)
            self.supervisor.stage_finished(stage)
        return -1

    def _follow(self, stage: Stage, proposal: Proposal) -> int:
        """A closed-loop controller's setpoint where the machine allows motion in ``stage``.

        Returns the count of its setpoints streamed, or -1 (held: it is done or ahead of the machine, or the rejoin
        toward its setpoint).

        The controller leads the stages: a setpoint of a later stage than the machine's finishes the machine's
        stage and is held back until the machine is in the motion state of the controller's stage; after ``done``
        every stage the machine still asks for is finished.
        """
        self.follower = None
        self.resume_q = np.array(proposal.q, dtype=np.float64)
        if proposal.done or proposal.stage > stage:
            self.supervisor.stage_finished(stage)
            return -1
        if self.rejoin:
            step = self.rejoin_step
            delta = self.resume_q - self.q
            self.rejoin = bool(np.any(np.abs(delta) > step))
            if self.rejoin:
                self.q = self.q + np.clip(delta, -step, step)
                return -1
        self.sent += 1  # within one rejoin step of the controller's setpoint: that setpoint itself
        self.q, self.stage = self.resume_q.copy(), proposal.stage
        return self.sent

    def _teleoperate(self, t_s: float) -> None:
        if self.s.teleoperation is None:
            return  # nothing to follow: hold (the idle timeout ends the case)
        if self.follower is None:
            script, limit = self.s.teleoperation, self.s.velocity_limit
            self.follower = TeleoperationFollower(self.s.kinematics, script, max_rate=limit)
            self.follower.start(self.q, t_s)
        self.q = self.follower.next_setpoint(t_s, self.dt_s)
        self.rejoin = self.rejoin or bool(np.any(self.q != self.resume_q))

    def _end(self, t_s: float, status: SupervisorStatus) -> str:
        """The case's ending at case time ``t_s``: ``completed``, an abort reason, or "".

        ``completed`` at the final state; the abort reason once the task stayed stopped (or teleoperation idle) for the
        loop's timeout, or the case ran past ``loop.max_case_s``; else "".
        """
        loop = self.s.config.loop
        if status.finished:
            return "completed"
        if status.state.rsplit(".", 1)[-1] == "TaskStopped":
            timeout_s = loop.stopped_timeout_s
        elif status.teleoperation and self._idle():
            timeout_s = loop.teleoperation_idle_s
        else:
            timeout_s = np.inf
            self.stopped_since_s = None
        if self.stopped_since_s is None and np.isfinite(timeout_s):
            self.stopped_since_s = t_s
        if self.stopped_since_s is not None and t_s - self.stopped_since_s >= timeout_s - 1e-9:
            seen = sorted({e for d in self.transitions for e in d.events})
            return f"the supervisor stopped the task in {status.state} (events: {', '.join(seen) or 'none'})"
        if t_s >= loop.max_case_s - 1e-9:
            return f"the supervisor held the case longer than loop.max_case_s ({loop.max_case_s:g} s)"
        return ""

    def _idle(self) -> bool:
        return self.follower is None or self.follower.last_kind == "hold"
