"""controller: the robot controller under test, as a RunTestCase action server.

Wiring around the case assembly's lockstep loop (:class:`~cosim_validation.assembly.Lockstep`, the loop the
batch runner runs in-process): for each goal it plans the case, checks each setpoint with the state validator
(when validating), streams it to every driver (``/cosim/<robot>/command``) and waits for each robot's measured
joints. This node publishes what the loop tells it: the expected states (``/cosim/expected``), ``/clock`` (it
is the session clock), the case status (``/cosim/case_status``) and the action feedback; the result carries
the monitor's verdicts and KPIs (``/cosim/case_reports``). With a task supervisor the process also hosts the
``supervisor`` node (:mod:`~cosim_validation.live.nodes.supervisor_node`: its topics, request service and teleoperation
input), which the loop calls in-process at every step. With a hazard detector (parameter ``detector``) the
loop judges the physical robot against the virtual twin at every setpoint both answered (here, where the twin's
clean answer and the physical answer meet) and this node publishes its alarms and feedback force
(:mod:`~cosim_validation.live.nodes.hazard_feedback`).
"""

from __future__ import annotations

import threading
import traceback
from pathlib import Path
from typing import Any

from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from rosgraph_msgs.msg import Clock

from cosim_validation.assembly import CaseAssembly, CaseRun
from cosim_validation.common.exceptions import CosimError, InputError
from cosim_validation.common.record import RobotRole
from cosim_validation.live.nodes.case_publisher import CasePublisher
from cosim_validation.live.nodes.hazard_feedback import HazardFeedback
from cosim_validation.live.nodes.node_runtime import declare_parameters, run_node
from cosim_validation.live.nodes.report_waiter import ReportWaiter
from cosim_validation.live.nodes.robot_link import RobotLink
from cosim_validation.live.nodes.supervisor_node import SupervisorNode
from cosim_validation.live.ros import convert
from cosim_validation.live.ros.qos import CLOCK, LATCHED, STATE, to_rclpy
from cosim_validation.live.session.node_parameters import ControllerParams
from cosim_validation_interfaces.action import RunTestCase
from cosim_validation_interfaces.msg import CaseStatus, RobotState

Result = RunTestCase.Result
_OUTCOMES = {"completed": Result.COMPLETED, "refused": Result.REFUSED, "aborted": Result.ABORTED}


class Controller(Node):
    """Action server ``/cosim/run_test_case``; one case at a time."""

    def __init__(self) -> None:
        super().__init__("controller")
        self.params = declare_parameters(self, ControllerParams)
        self.assembly = CaseAssembly(self.params.assembly_spec())
        self.assembly.logs.folder = Path(self.params.log_dir) if self.params.log_dir else None
        if self.assembly.hazard_watch is not None:  # alarms and feedback force, published from the loop's thread
            self.assembly.hazard_watch.sink = HazardFeedback(self).publish
        # one group for the long case execution, one for the short I/O callbacks it waits for
        group, action_group = MutuallyExclusiveCallbackGroup(), MutuallyExclusiveCallbackGroup()
        timeouts = self.params.reset_timeout_s, self.params.stale_timeout_s, self.params.first_reset_timeout_s
        names = self.assembly.kinematics.joint_names
        self.links = {
            role: RobotLink(self, role, names, group, *timeouts)
            for role in (RobotRole.parse(r) for r in self.params.robots)
        }
        self.lockstep = self.assembly.lockstep(self.links, drop_lost_robots=self.params.drop_stale_robots)
        self.expected_pub = self.create_publisher(RobotState, "/cosim/expected", to_rclpy(STATE))
        self.status_pub = self.create_publisher(CaseStatus, "/cosim/case_status", to_rclpy(LATCHED))
        sim_time = self.params.publish_clock
        self.clock_pub = self.create_publisher(Clock, "/clock", to_rclpy(CLOCK)) if sim_time else None
        self.reports = ReportWaiter(self, group)
        supervision = self.assembly.supervision
        #: The task supervisor's own node (``/supervisor``), composed into this process: run_node spins it with
        #: this node; the loop calls it in-process every period.
        self.supervisor_node = SupervisorNode(supervision, self.context) if supervision is not None else None
        self.composed_nodes: list[Node] = [self.supervisor_node] if self.supervisor_node is not None else []
        self._busy = threading.Lock()
        ActionServer(
            self,
            RunTestCase,
            "/cosim/run_test_case",
            self._execute,
            callback_group=action_group,
            goal_callback=lambda _: GoalResponse.REJECT if self._busy.locked() else GoalResponse.ACCEPT,
            cancel_callback=lambda _: CancelResponse.ACCEPT,
            result_timeout=30,  # a client that asked late still gets it; memory stays bounded in a campaign
        )
        self.publish_clock(self.lockstep.clock.now_ns)
        self.get_logger().info(
            f"controller {self.assembly.controller_name!r}, robots {[r.label for r in self.links]}, "
            f"validator {self.assembly.validate}, supervisor "
            f"{self.assembly.supervision.machine.name if self.assembly.supervision is not None else 'none'}"
        )

    def close(self) -> None:
        """At shutdown (run_node): release what the assembly holds, e.g. the process of a node under test."""
        self.assembly.close()

    def publish_clock(self, t_ns: int) -> None:
        """Advance the session clock (sim-time mode).

        Args:
            t_ns: The session clock's new time [ns]; nothing is published unless the node publishes ``/clock``.
        """
        if self.clock_pub is not None:
            self.clock_pub.publish(Clock(clock=convert.time_to_msg(t_ns)))

    def _execute(self, goal_handle: Any) -> Any:
        goal = goal_handle.request
        case = convert.test_case_from_msg(goal.test_case)
        with self._busy:
            publisher = CasePublisher(self, goal_handle)
            try:
                self._check_goal(goal)
                run = self.lockstep.run(
                    case, self.assembly.controller(goal.controller or None), publisher, _robots(goal)
                )
            except CosimError as exc:  # a bad goal or a planning failure: the case fails, the node lives
                run = CaseRun(case.test_id, "failed", str(exc))
            except Exception as exc:  # noqa: BLE001 - a bug must fail the case visibly, not pass it
                self.get_logger().error(traceback.format_exc())
                run = CaseRun(case.test_id, "failed", f"internal error: {type(exc).__name__}: {exc}")
            return self._result(goal_handle, run)

    def _check_goal(self, goal: Any) -> None:
        rate, needle = float(goal.sampling_rate_hz), float(goal.needle_length_m)
        configured = self.assembly.setup.planning.sampling_rate_hz, self.assembly.kinematics.needle_length_m
        if rate and rate != configured[0]:
            raise InputError(f"goal sampling_rate_hz {rate!r} differs from planning.sampling_rate_hz {configured[0]!r}")
        if needle and needle != configured[1]:
            raise InputError(f"goal needle_length_m {needle!r} differs from robot.needle_length_m {configured[1]!r}")

    def _result(self, goal_handle: Any, run: CaseRun) -> Any:
        """The action result (with the monitor's verdicts and KPIs when it reported)."""
        if run.outcome != "completed":
            self.get_logger().error(f"{run.test_id}: {run.outcome}: {run.message}")
        result = Result(
            outcome=_OUTCOMES.get(run.outcome, Result.FAILED),
            message=run.message,
            last_stage=int(run.last_stage),
            duration_s=run.duration_s,
        )
        if run.started:
            params = self.params
            waited = self.reports.wait(
                run.test_id, params.report_timeout_s, params.report_limit_s, stuck_s=params.report_stuck_s
            )
            if waited.report is None:
                result.message += f"; the monitor did not report this case: {waited.reason}"
                self.get_logger().error(f"{run.test_id}: no case report from the monitor: {waited.reason}")
            else:
                result.verdicts, result.kpis = waited.report.verdicts, waited.report.kpis
        if run.outcome == "completed":
            goal_handle.succeed()
        else:
            goal_handle.abort()
        return result


def _robots(goal: Any) -> tuple[RobotRole, ...]:
    return tuple(RobotRole.parse(r) for r in goal.robots)


def main(args: list[str] | None = None) -> int:
    """Run the ``controller`` node until it ends or is interrupted; return its exit status.

    See :func:`~.node_runtime.run_node`. From a shell::

        ros2 run cosim_validation controller

    Args:
        args: The command line as ``rclpy.init`` takes it (``--ros-args -p name:=value`` ...); None: ``sys.argv``.
    """
    return run_node(Controller, args, threads=4)


if __name__ == "__main__":
    raise SystemExit(main())
