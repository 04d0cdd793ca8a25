"""What a controller plugin sees and returns (docs/CONTROLLERS.md, "Test your own controller").

A plugin is a factory ``make_controller(options, context) -> controller``. The controller keeps one of two
contracts:

- planning: ``plan_case(source, target, seed) -> Plan`` (the
  :class:`~cosim_validation.controllers.controller.Controller` protocol), streamed open loop by the lockstep loop;
- closed loop (:class:`ClosedLoopController`): ``start(case)`` once per case, then ``step(observation) -> Command``
  once per control period; optionally ``reference(case) -> Plan | None``, the trajectory the monitor checks
  "follows the plan" against (without one, the commands are the expected trajectory).

Units are SI: metres, radians (metres for a prismatic joint), seconds, newtons.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from cosim_validation.anatomy import AnatomyScene
from cosim_validation.common.record import Stage
from cosim_validation.controllers.planning.collision_world import CollisionWorld
from cosim_validation.controllers.planning.five_stage_planner import FiveStagePlanner
from cosim_validation.controllers.planning.plan import Plan
from cosim_validation.robots.model import Kinematics, RobotConfig


class RunLogs:
    """Where a controller under test keeps its logs: the ``logs/`` folder of the run its cases go into.

    The mode that runs the cases sets :attr:`folder` (``cosim campaign`` and ``cosim session``: the run
    directory's ``logs/``); it stays None where there is no run directory (``cosim run-case``). An external node
    under test writes its output there, one file per start; a plugin may put its own files there too.

    Args:
        folder: The folder, or None.
    """

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder

    def path(self, name: str) -> Path | None:
        """``folder/name`` (the folder created), or None when there is no folder.

        Args:
            name: A file name (no folder part).
        """
        if self.folder is None:
            return None
        self.folder.mkdir(parents=True, exist_ok=True)
        return self.folder / name


@dataclass(frozen=True)
class ControllerContext:
    """What a plugin factory gets besides its options: the case study it will run in.

    Attributes:
        name: The controller's name (the entry point, or the import path ``module:attribute``).
        robot: The configured robot: kinematics, home pose, joint limits with the planning margin, command limits.
        kinematics: The nominal arm and needle (forward kinematics, tip Jacobian), ``robot.kinematics``.
        dt_s: The control period [s] (``planning.sampling_rate_hz``): one setpoint per period.
        scene: The anatomy (target, obstacles, skin) in base_link.
        world: Distance queries on the anatomy (skin entries, forbidden regions).
        planner: The five-stage planner the built-in controllers use (a plugin may reuse it).
        config_path: The case-study configuration file.
        logs: Where the controller may keep logs: the run directory's ``logs/`` once the cases run (set by the
            mode that runs them), else nowhere.
    """

    name: str
    robot: RobotConfig
    kinematics: Kinematics
    dt_s: float
    scene: AnatomyScene
    world: CollisionWorld
    planner: FiveStagePlanner
    config_path: Path
    logs: RunLogs = field(default_factory=RunLogs)


@dataclass(frozen=True)
class CaseStart:
    """A case as a closed-loop controller sees it at ``start``.

    Attributes:
        test_id: The case.
        source_m: (3,) source point in base_link [m].
        target_m: (3,) target point in base_link [m].
        seed: The case's seed (for a controller that draws random numbers).
        q0: (J,) where the robots rest when the case starts (the reference's first setpoint, else the home pose).
        dt_s: The control period [s].
        time_limit_s: The case is aborted when the controller has not said ``done`` by then [s].
    """

    test_id: str
    source_m: np.ndarray
    target_m: np.ndarray
    seed: int
    q0: np.ndarray
    dt_s: float
    time_limit_s: float


@dataclass(frozen=True)
class Observation:
    """What the robots answered to the last setpoint, given to ``step`` once per control period.

    Attributes:
        t_s: Case time of this period [s] (0 at the first setpoint).
        robot: The robot the single-robot fields below come from: ``physical`` when the case drives it, else
            ``virtual``.
        q_measured: (J,) that robot's measured joints [rad, or m].
        tip_pos_m: (3,) its tracked needle tip in base_link [m] (the tracker; the simulator's ground truth for the
            virtual robot); NaN when not seen.
        tip_quat_wxyz: (4,) its orientation (+z along the needle); NaN when not seen.
        joints: Measured joints of every robot of the case, by robot label.
        tips: Tracked tip position of every robot of the case, by robot label (NaN when not seen).
        q_setpoint: (J,) the setpoint the robots answered (the last command).
        needle_force_n: The axial force of the tissue on the needle at its holder [N], positive pushing the needle
            back out, of the force model the controller's ``needle_force`` names, on ``q_measured``; NaN without one.
        supervisor_mode: The task supervisor's mode when the case is supervised; None otherwise.
    """

    t_s: float
    robot: str
    q_measured: np.ndarray
    tip_pos_m: np.ndarray
    tip_quat_wxyz: np.ndarray
    joints: dict[str, np.ndarray]
    tips: dict[str, np.ndarray]
    q_setpoint: np.ndarray
    needle_force_n: float = float("nan")
    supervisor_mode: str | None = None


class CommandKind(Enum):
    """What a closed-loop controller asks for this period."""

    SETPOINT = "setpoint"
    HOLD = "hold"
    DONE = "done"


@dataclass(frozen=True)
class Command:
    """One period's answer of ``step``; build it with :meth:`setpoint`, :meth:`hold` or :meth:`done`.

    Attributes:
        kind: Setpoint, hold (the last setpoint again) or done.
        q: (J,) the joint setpoint [rad, or m] (SETPOINT only).
        stage: The stage the setpoint belongs to (recorded and checked by the monitor's stage properties); None:
            the stage of the last setpoint.
        outcome: ``completed`` or ``aborted`` (DONE only).
        reason: Why it is done (DONE only; stored with the case).
    """

    kind: CommandKind
    q: np.ndarray = field(default_factory=lambda: np.zeros(0))
    stage: Stage | None = None
    outcome: str = ""
    reason: str = ""

    @classmethod
    def setpoint(cls, q: np.ndarray, stage: Stage | None = None) -> Command:
        """Go to ``q`` within this period.

        Args:
            q: The joint setpoint, shape (J,), in [rad], or [m] for a prismatic joint.
            stage: The stage the setpoint belongs to; None: the stage of the last setpoint.
        """
        return cls(CommandKind.SETPOINT, np.asarray(q, dtype=np.float64), stage)

    @classmethod
    def hold(cls, stage: Stage | None = None) -> Command:
        """Send the last setpoint again.

        Args:
            stage: The stage the held setpoint belongs to; None: the stage of the last setpoint.
        """
        return cls(CommandKind.HOLD, stage=stage)

    @classmethod
    def done(cls, outcome: str = "completed", reason: str = "") -> Command:
        """The case is over: ``completed`` or ``aborted``, with the reason.

        Args:
            outcome: ``completed`` or ``aborted`` (anything else is a bad command).
            reason: Why it is done (stored with the case).
        """
        return cls(CommandKind.DONE, outcome=outcome, reason=reason)


@runtime_checkable
class ClosedLoopController(Protocol):
    """The closed-loop contract (``reference`` is optional and not part of the check)."""

    name: str

    def start(self, case: CaseStart) -> None:
        """A new case begins (reset per-case state here).

        Args:
            case: The case: its id, source and target, seed, start pose, control period and time limit.
        """
        ...

    def step(self, observation: Observation) -> Command:
        """This period's command, from what the robots answered to the last one.

        Args:
            observation: What the robots answered to the last setpoint.
        """
        ...


class ReferenceController(Protocol):
    """A closed-loop controller that declares the trajectory it means to follow."""

    def reference(self, case: CaseStart) -> Plan | None:
        """The expected trajectory of ``case`` (None: the commands are the expected trajectory).

        Args:
            case: The case, as :meth:`ClosedLoopController.start` gets it.
        """
        ...
