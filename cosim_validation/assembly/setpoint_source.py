"""Where a case's setpoints come from: one source per way of running a case, one loop streams them all.

The lockstep loop (:meth:`~cosim_validation.assembly.lockstep.Lockstep.stream`) asks its source for each control
period's setpoint (a :class:`Period`) and does everything else the same way for every source: the client's cancel
and the state validator, the record of what was streamed, the announcement, the exchange with every robot, the
pace, the stage and progress news, the clock and the case's ending. The sources:

- :class:`PlanSource`: a plan, streamed as planned;
- :class:`~cosim_validation.assembly.supervised_stream.SupervisedSource`: a plan under the task supervisor;
- :class:`~cosim_validation.assembly.closed_loop_stream.ClosedLoopSource`: a closed-loop controller, with or
  without the supervisor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from cosim_validation.common.record import Stage, SupervisorMode
from cosim_validation.robots.model import Kinematics

if TYPE_CHECKING:
    from cosim_validation.assembly.case_run import CaseRun
    from cosim_validation.assembly.supervision import Decision


@dataclass(frozen=True, slots=True)
class Period:
    """One control period's setpoint, as its source decided it.

    Attributes:
        stamp_ns: Its stamp on the session clock [ns].
        t_s: Its case time [s] (a real-time session is paced on it).
        q: (J,) the setpoint sent to every robot (rad, or m for a prismatic joint).
        stage: Its stage.
        mode: What the supervisor let the controller do (UNSUPERVISED without a supervisor).
        expected: (J,) the expected state announced for it when that is not ``q`` (a closed-loop controller's
            reference); None: ``q``.
        tip: (3,) the planned tip of the expected state, base_link [m], with ``quat`` (4,) w, x, y, z; None: the
            loop computes them (forward kinematics of the nominal arm).
        quat: See ``tip``.
        decision: The supervisor's step that decided it (a supervised case), else None.
        end: "" while the case goes on; the last period's ``completed``, or why the supervisor stops the case.
    """

    stamp_ns: int
    t_s: float
    q: np.ndarray
    stage: Stage
    mode: SupervisorMode = SupervisorMode.UNSUPERVISED
    expected: np.ndarray | None = None
    tip: np.ndarray | None = None
    quat: np.ndarray | None = None
    decision: Decision | None = None
    end: str = ""

    @property
    def expected_q(self) -> np.ndarray:
        """(J,) the expected state announced for this period: ``expected``, or ``q`` when it is None."""
        return self.q if self.expected is None else self.expected


class SetpointSource(Protocol):
    """Decides each control period's setpoint of one case."""

    #: The setpoints the case is expected to take (its plan's; the progress reports count against it).
    planned: int
    #: The control period [ns]: the session clock resumes this long after the last stamp.
    period_ns: int

    def open(self) -> None:
        """Every robot is reset and the validator ready: the case starts (a closed-loop controller is started).

        Raises:
            CaseAbortedError: The source cannot start the case.
        """
        ...

    def decide(self, p: int, last_stamp_ns: int | None) -> Period | None:
        """Period ``p``'s setpoint, or None when the case is complete before period ``p``.

        ``last_stamp_ns``: the stamp every robot answered last (None at ``p`` 0). None comes when a closed-loop
        controller said done.

        Args:
            p: The period's index in the case.
            last_stamp_ns: The stamp of the setpoint every robot answered last, in [ns]; None at period 0.

        Raises:
            CaseAbortedError: The source stops the case.
            ControllerFaultError: The user's controller misbehaved.
        """
        ...

    def close(self, outcome: str, reason: str) -> None:
        """The case ended ``outcome`` (``completed`` or ``aborted``) for ``reason``; called once :meth:`open` was.

        Args:
            outcome: ``completed`` or ``aborted``.
            reason: Why: the abort reason, or the case's message when completed.
        """
        ...

    def completed(self, run: CaseRun) -> str:
        """The message of a completed case.

        Args:
            run: The completed case.
        """
        ...


class PlanSource:
    """A plan, streamed as planned: sample k at the plan's stamp k, its planned stage.

    Args:
        run: The case (``run.plan`` the plan, ``run.stamps_ns`` its stamps on the session clock).
        kinematics: The nominal arm and needle (the planned tip of every sample, computed at once).
    """

    def __init__(self, run: CaseRun, kinematics: Kinematics) -> None:
        plan = run.plan
        assert plan is not None
        self._q, self._stage, self._t = plan.q, plan.stage, plan.t_s
        self._stamps = run.stamps_ns
        self._fk = kinematics.record_arrays(plan.q)
        n = self.planned = plan.n_samples
        self._last = n - 1
        self.period_ns = int(self._stamps[1] - self._stamps[0]) if n > 1 else 100_000_000

    def open(self) -> None:
        """Nothing to start."""

    def decide(self, p: int, last_stamp_ns: int | None) -> Period | None:
        """Sample ``p`` of the plan (the last one ends the case completed).

        Args:
            p: The sample's index in the plan; None is returned past the last one.
            last_stamp_ns: The stamp every robot answered last, in [ns] (not used: the plan does not depend on it).
        """
        if p > self._last:
            return None
        return Period(
            stamp_ns=int(self._stamps[p]),
            t_s=float(self._t[p]),
            q=self._q[p],
            stage=Stage(int(self._stage[p])),
            tip=self._fk.tip_pos_m[p],
            quat=self._fk.tip_quat_wxyz[p],
            end="completed" if p == self._last else "",
        )

    def close(self, outcome: str, reason: str) -> None:
        """Nothing to stop.

        Args:
            outcome: ``completed`` or ``aborted`` (not used).
            reason: Why (not used).
        """

    def completed(self, run: CaseRun) -> str:
        """Every stage executed.

        Args:
            run: The completed case (not used).
        """
        return "every stage executed"
