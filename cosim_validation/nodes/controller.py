"""controller: the robot controller under test, as a RunTestCase action server.

For each goal: plan the case with the configured controller (``straight`` or ``guarded``), reset every
robot to the plan's first setpoint, then stream the setpoints at the sampling rate in lockstep: publish
the expected state (``/cosim/expected``), send the setpoint to each robot (``/cosim/<robot>/command``),
wait for each robot's measured joints of that sample. Every setpoint first passes the state validator
(seed 002); a refused setpoint, a robot that does not answer within ``stale_timeout_s`` or a cancel
stops the case (ABORTED) and the robots hold still. The case status goes to ``/cosim/case_status``;
the result carries the monitor's verdicts and KPIs (``/cosim/case_reports``).

Time: with ``publish_clock`` the controller is the session clock. It publishes ``/clock`` at every
sample, so a simulated session runs as fast as the robots answer (nodes use ``use_sim_time``); without
it, samples are paced at the sampling rate in wall time.
"""

from __future__ import annotations

import threading
import time
import traceback
from typing import Any

from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from rosgraph_msgs.msg import Clock

from cosim_validation.config import load_case_config, resolve_resource
from cosim_validation.controllers.insertion_setup import InsertionSetup
from cosim_validation.exceptions import CosimError
from cosim_validation.nodes.case_run import CaseAbortedError, CaseRun
from cosim_validation.nodes.node_runtime import declare_parameters, run_node
from cosim_validation.nodes.robot_link import RobotLink
from cosim_validation.record import RobotRole
from cosim_validation.ros import convert
from cosim_validation.ros.qos import CLOCK, LATCHED, RESULT, STATE, to_rclpy
from cosim_validation_interfaces.action import RunTestCase
from cosim_validation_interfaces.msg import CaseReport, CaseStatus, RobotState


class Controller(Node):
    """Action server ``/cosim/run_test_case``; one case at a time."""

    def __init__(self) -> None:
        super().__init__("controller")
        self.params = declare_parameters(self, "controller")
        config = load_case_config(resolve_resource(self.params["config"]))
        self.setup = InsertionSetup.from_config(config)
        self.kinematics = self.setup.robot.kinematics
        # one group for the long case execution, one for the short I/O callbacks it waits for: a mutually
        # exclusive group keeps a ready entity out of the wait set until its handler has run
        group = MutuallyExclusiveCallbackGroup()
        action_group = MutuallyExclusiveCallbackGroup()
        self.links = {
            role: RobotLink(self, role, self.kinematics.joint_names, group)
            for role in (RobotRole.parse(r) for r in self.params["robots"])
        }
        self.expected_pub = self.create_publisher(RobotState, "/cosim/expected", to_rclpy(STATE))
        self.status_pub = self.create_publisher(CaseStatus, "/cosim/case_status", to_rclpy(LATCHED))
        self.clock_pub = (
            self.create_publisher(Clock, "/clock", to_rclpy(CLOCK)) if self.params["publish_clock"] else None
        )
        self.reports: dict[str, Any] = {}
        self.reports_cond = threading.Condition()
        self.create_subscription(
            CaseReport, "/cosim/case_reports", self._on_report, to_rclpy(RESULT), callback_group=group
        )
        self.session_t_ns = 1_000_000_000  # session clock: cases follow each other on it
        self.lost_robots: set[RobotRole] = set()  # robots that stopped answering (drop_stale_robots)
        self._busy = threading.Lock()
        self._settled = False  # the first case waits subscriber_settle_s once the subscriptions are seen
        ActionServer(
            self,
            RunTestCase,
            "/cosim/run_test_case",
            self._execute,
            callback_group=action_group,
            goal_callback=self._on_goal,
            cancel_callback=lambda _: CancelResponse.ACCEPT,
            result_timeout=30,  # a client that asked late still gets it; memory stays bounded in a campaign
        )
        if self.clock_pub is not None:
            self.publish_clock(self.session_t_ns)
        self.get_logger().info(
            f"controller {self.setup.controllers.default!r}, robots "
            f"{[r.label for r in self.links]}, validator {self.params['validate_setpoints']}"
        )

    def _on_goal(self, goal: Any) -> GoalResponse:
        return GoalResponse.REJECT if self._busy.locked() else GoalResponse.ACCEPT

    def _on_report(self, msg: CaseReport) -> None:
        with self.reports_cond:
            self.reports[msg.test_id] = msg
            self.reports_cond.notify_all()

    def publish_clock(self, t_ns: int) -> None:
        """Advance the session clock (sim-time mode)."""
        if self.clock_pub is not None:
            self.clock_pub.publish(Clock(clock=convert.time_to_msg(t_ns)))

    def wait_for_subscribers(self) -> None:
        """Before streaming, wait until the monitor, the recorder and the drivers listen (volatile topics drop
        what is published before a subscription is matched): on what this node publishes, and on what the
        drivers answer with (joint states, which this node reads too, and tip poses)."""
        wanted = int(self.params["min_subscribers"])
        needs = {self.expected_pub.topic_name: wanted}
        needs.update({link.commands.topic_name: wanted for link in self.links.values()})
        if self.clock_pub is not None:
            needs[self.clock_pub.topic_name] = wanted
        for role in self.links:
            needs[f"/cosim/{role.label}/joint_states"] = wanted + 1  # this node listens as well
            needs[f"/cosim/{role.label}/tip_pose"] = wanted
        deadline = time.monotonic() + float(self.params["subscriber_timeout_s"])
        while short := [topic for topic, n in needs.items() if self.count_subscribers(topic) < n]:
            if time.monotonic() > deadline:
                self.get_logger().warning(f"fewer than {wanted} subscribers on {short}; streaming anyway")
                return
            time.sleep(0.02)
        if not self._settled:
            # the graph shows a subscription once it is discovered, the writer matches it a little later
            time.sleep(float(self.params["subscriber_settle_s"]))
            self._settled = True

    def wait_report(self, test_id: str, timeout_s: float) -> Any | None:
        """The monitor's CaseReport of ``test_id``, or None after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        with self.reports_cond:
            while test_id not in self.reports and time.monotonic() < deadline:
                self.reports_cond.wait(deadline - time.monotonic())
            return self.reports.pop(test_id, None)

    def _execute(self, goal_handle: Any) -> Any:
        with self._busy:
            run = CaseRun(self, goal_handle)
            try:
                run.execute()
            except CaseAbortedError as exc:
                run.finish_aborted(str(exc))
            except CosimError as exc:  # a bad goal or a planning failure: the case fails, the node lives
                run.finish_failed(str(exc))
            except Exception as exc:  # noqa: BLE001 - a bug must fail the case visibly, not pass it
                self.get_logger().error(traceback.format_exc())
                run.finish_failed(f"internal error: {type(exc).__name__}: {exc}")
            return run.result(goal_handle)


def main(args: list[str] | None = None) -> int:
    """ros2 run cosim_validation controller"""
    return run_node(Controller, args, threads=4)


if __name__ == "__main__":
    raise SystemExit(main())
