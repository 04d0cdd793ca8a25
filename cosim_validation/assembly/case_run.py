"""What a lockstep case is and tells the outside world: its events, listener, clock and how it went.

Shared by the lockstep loop (:mod:`.lockstep`) and its setpoint sources (:mod:`.setpoint_source`); every
name is also importable from :mod:`cosim_validation.assembly.lockstep`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from typing import Any

import numpy as np

from cosim_validation.common.exceptions import CosimError
from cosim_validation.common.record import RobotRole, Stage, SupervisorMode
from cosim_validation.controllers.planning import Plan
from cosim_validation.controllers.planning.state_validator import StateValidator


class CaseEvent(IntEnum):
    """What happened to a case; the values equal ``cosim_validation_interfaces/CaseStatus`` events."""

    STARTED = 0
    STAGE = 1
    COMPLETED = 2
    REFUSED = 3
    ABORTED = 4


#: Outcome label of each ending event (the ``outcome`` column of a results database).
OUTCOME_OF_EVENT: dict[CaseEvent, str] = {
    CaseEvent.COMPLETED: "completed",
    CaseEvent.REFUSED: "refused",
    CaseEvent.ABORTED: "aborted",
}


class StoppedBy(StrEnum):
    """Who ended an aborted case (:attr:`CaseRun.stopped_by`); the message says why."""

    VALIDATOR = "validator"  # the state validator refused a setpoint
    SUPERVISOR = "supervisor"  # the task supervisor stopped the task, or held the case too long
    CONTROLLER = "controller"  # the controller under test: a fault, its time limit, its own abort
    ROBOT = "robot"  # a robot stopped answering
    CLIENT = "client"  # the client canceled the case (a live goal)


class CaseAbortedError(CosimError):
    """The case stopped mid-way; the message says why, ``by`` who stopped it."""

    def __init__(self, message: str, by: StoppedBy) -> None:
        super().__init__(message)
        self.by = by


class SessionClock:
    """The session's time [ns]: cases follow each other on it (the controller publishes it as /clock)."""

    def __init__(self, start_ns: int = 1_000_000_000) -> None:
        self.now_ns = int(start_ns)


class CaseListener:
    """What a lockstep case tells the outside world; the batch runner ignores it, the controller node publishes.

    Override what you need; every method is called from the thread running the case.
    """

    def status(self, event: CaseEvent, stage: Stage, message: str, run: CaseRun) -> None:
        """The case started, changed stage or ended (``run`` says how far it got).

        Args:
            event: STARTED, STAGE, or the ending: COMPLETED, REFUSED or ABORTED.
            stage: The stage of the last setpoint answered (the first setpoint's at STARTED; NONE for a refusal).
            message: The completion message or the refusal or abort reason; "" for STARTED and STAGE.
            run: The case so far.
        """

    def setpoint(
        self,
        k: int,
        stamp_ns: int,
        stage: Stage,
        q: np.ndarray,
        tip: np.ndarray,
        quat: np.ndarray,
        mode: SupervisorMode = SupervisorMode.UNSUPERVISED,
    ) -> None:
        """Setpoint ``k`` passed every check and is about to be sent.

        Args:
            k: The setpoint's index in the case.
            stamp_ns: Its stamp on the session clock, in [ns].
            stage: Its stage.
            q: The joint state expected there, shape (J,), in [rad], or [m] for a prismatic joint.
            tip: The planned tip position there (FK of ``q``), in base_link, shape (3,), in [m].
            quat: The planned tip orientation there (FK of ``q``), (w, x, y, z), shape (4,).
            mode: What the supervisor let the controller do when it chose it, UNSUPERVISED without a supervisor.
        """

    def supervisor_step(self, stamp_ns: int, decision: Any) -> None:
        """The supervisor's step that decided the setpoint stamped ``stamp_ns``, in a supervised case.

        ``decision`` is a :class:`~cosim_validation.assembly.supervision.Decision`; called before :meth:`setpoint`.

        Args:
            stamp_ns: The setpoint's stamp on the session clock, in [ns].
            decision: The supervisor's step that decided it.
        """

    def progress(self, k: int, stage: Stage, n_samples: int) -> None:
        """Sample k was answered by every robot (called at stage changes and every 10 samples).

        Args:
            k: The sample's index in the case.
            stage: Its stage.
            n_samples: The samples the case is expected to take: the planned count, or ``k + 1`` once more were
                streamed.
        """

    def before_streaming(self, robots: tuple[RobotRole, ...]) -> None:
        """Every robot is reset; the first setpoint is next (a live session waits for its subscribers).

        Args:
            robots: The robots this case drives (a robot lost in an earlier case is not among them).
        """

    def pace(self, k: int, t_s: float) -> None:
        """Called after sample k (a real-time session sleeps until the case time ``t_s`` [s]).

        Args:
            k: The sample's index in the case.
            t_s: Its case time, in [s].
        """

    def cancel_requested(self) -> bool:
        """Whether the case should stop now (an action client canceled it)."""
        return False


@dataclass
class CaseRun:
    """How a case went.

    Attributes:
        test_id: The case.
        outcome: ``completed``, ``refused``, ``aborted`` or ``failed``.
        message: Why it ended that way ("every stage executed", the refusal or abort reason).
        robots: The robots driven.
        plan: The plan (None when refused or failed before planning).
        stamps_ns: (m,) the stamps of the setpoints streamed, on the session clock (before streaming: the plan's,
            or the case start alone).
        executed: Samples every robot answered (the first ``executed`` of the plan).
        last_stage: The stage of the last sample answered.
        seed: The case's seed (noise of the emulated arms).
        started: Whether streaming began (STARTED was announced: the monitor sees the case).
        left_out: Robots the case wanted but could not drive (they stopped answering in an earlier case).
        q_sent: (m, J) the setpoints streamed, one per stamp [rad, or m for a prismatic joint].
        stage_sent: (m,) the stage of each.
        supervisor_sent: (m,) the supervisor's mode (:class:`SupervisorMode`) of each (UNSUPERVISED without one).
        supervision: Every :class:`~cosim_validation.assembly.supervision.Decision` of a supervised case, one per
            streamed stamp after the first, else empty.
        q_expected: (m, J) the expected state announced with each streamed setpoint: the setpoint itself, but a
            closed-loop controller's reference where it declared one.
        stopped_by: Who ended an aborted case (None for any other outcome).
    """

    test_id: str
    outcome: str = "failed"
    message: str = ""
    robots: tuple[RobotRole, ...] = ()
    plan: Plan | None = None
    stamps_ns: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    executed: int = 0
    last_stage: Stage = Stage.NONE
    seed: int = 0
    started: bool = False
    left_out: tuple[RobotRole, ...] = ()
    q_sent: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    stage_sent: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint8))
    supervisor_sent: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint8))
    supervision: list[Any] = field(default_factory=list)
    q_expected: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    stopped_by: StoppedBy | None = None

    @property
    def duration_s(self) -> float:
        """Case time covered by the answered samples [s]."""
        if self.executed < 1:
            return 0.0
        return float(self.stamps_ns[self.executed - 1] - self.stamps_ns[0]) / 1e9

    @property
    def t_s(self) -> np.ndarray:
        """(executed,) times of the answered samples since the case start [s] (as the monitor sees them)."""
        stamps = self.stamps_ns[: self.executed]
        return (stamps - self.stamps_ns[0]) / 1e9 if len(stamps) else np.zeros(0)


def admit_setpoint(
    listener: CaseListener, validator: StateValidator | None, index: int, q: np.ndarray, stage: Stage
) -> None:
    """Check what every stream asks before setpoint ``index`` leaves.

    The client has not canceled the case, and the state validator (when validating) accepts ``q``.

    Args:
        listener: Asked whether the client canceled the case.
        validator: The state validator, or None when not validating.
        index: The setpoint's index in the case.
        q: The setpoint, shape (J,), in [rad], or [m] for a prismatic joint.
        stage: The setpoint's stage.

    Raises:
        CaseAbortedError: Canceled, or refused by the validator (naming the setpoint, its stage and why).
    """
    if listener.cancel_requested():
        raise CaseAbortedError("canceled by the client", StoppedBy.CLIENT)
    if validator is not None:
        verdict = validator.check(q)
        if not verdict.accepted:
            raise CaseAbortedError(
                f"the state validator refused setpoint {index} ({stage.label}): {verdict.message}", StoppedBy.VALIDATOR
            )
