"""The setpoints of a supervised case: one supervisor step per control period decides each one.

Period 0 streams the plan's first setpoint (the robots were reset there; the supervisor is configuring: its
sample's supervisor mode is HOLDING).
Period p >= 1, at case time p * dt: the supervisor observes what the feeding robot answered to setpoint
p - 1 and steps; the step's setpoint (:meth:`SupervisedCase.decide`) is the period's. The stamps run on from the
case start at the plan's period whatever the supervisor does, so a held or teleoperated case is longer than its
plan. The case ends completed when the machine reaches its final state, aborted when the supervisor keeps it
stopped (``loop.stopped_timeout_s``) or idle in teleoperation (``loop.teleoperation_idle_s``), or runs past
``loop.max_case_s``. The lockstep loop streams these setpoints as it streams every source's
(:mod:`~cosim_validation.assembly.setpoint_source`).
"""

from __future__ import annotations

from collections.abc import Mapping

from cosim_validation.assembly.case_run import CaseRun
from cosim_validation.assembly.robot_port import RobotPort
from cosim_validation.assembly.setpoint_source import Period
from cosim_validation.assembly.supervision import Supervision, feeding_robot
from cosim_validation.common.record import RobotRole, Stage, SupervisorMode


class SupervisedSource:
    """The setpoints of ``run``'s plan under ``supervision`` (see the module docstring).

    Args:
        run: The case (its plan; ``run.stamps_ns[0]`` its start; ``run.supervision`` gets every step).
        supervision: The task supervisor (this case becomes its current one).
        ports: The robots, by role (the feeding robot's answers are observed).
    """

    def __init__(self, run: CaseRun, supervision: Supervision, ports: Mapping[RobotRole, RobotPort]) -> None:
        plan = run.plan
        assert plan is not None
        self._run, self._supervision, self._ports = run, supervision, ports
        self._case = supervision.for_case(run.test_id, plan)
        self._feed = self._case.robot = feeding_robot(run.robots)
        self._start_ns, self.period_ns = int(run.stamps_ns[0]), round(self._case.dt_s * 1e9)
        self.planned = plan.n_samples

    def open(self) -> None:
        """Nothing to start: the supervisor was given the case when this source was made."""

    def decide(self, p: int, last_stamp_ns: int | None) -> Period:
        """Period ``p``: the plan's first setpoint, then one supervisor step per period.

        Args:
            p: The period's index in the case, at case time ``p * dt``.
            last_stamp_ns: The stamp of the setpoint every robot answered last, in [ns]; None at period 0 (the
                plan's first setpoint).
        """
        t_s = p * self._case.dt_s
        stamp_ns = self._start_ns + p * self.period_ns
        if last_stamp_ns is None:
            plan = self._run.plan
            assert plan is not None
            return Period(stamp_ns, t_s, plan.q[0], Stage(int(plan.stage[0])), SupervisorMode.HOLDING)
        self._case.observe(t_s, self._ports[self._feed].measurement(last_stamp_ns))
        decision = self._case.decide(t_s)
        self._run.supervision.append(decision)
        return Period(
            stamp_ns, t_s, decision.q, decision.stage, decision.status.mode, decision=decision, end=decision.end
        )

    def close(self, outcome: str, reason: str) -> None:
        """The supervisor has no current case any more.

        Args:
            outcome: ``completed`` or ``aborted`` (not used).
            reason: Why (not used).
        """
        self._supervision.current = None

    def completed(self, run: CaseRun) -> str:
        """Every stage executed under the supervisor.

        Args:
            run: The completed case (not used).
        """
        return "every stage executed under the supervisor"
