"""What the controller node publishes while the lockstep loop runs a case (the loop's listener)."""

from __future__ import annotations

import time
import weakref
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from cosim_validation.assembly import CaseEvent, CaseListener, CaseRun
from cosim_validation.common.record import Stage, SupervisorMode
from cosim_validation.live.ros import convert
from cosim_validation_interfaces.action import RunTestCase
from cosim_validation_interfaces.msg import CaseStatus

if TYPE_CHECKING:
    from rclpy.clock import Clock
    from rclpy.impl.rcutils_logger import RcutilsLogger
    from rclpy.publisher import Publisher

    from cosim_validation.assembly import CaseAssembly, Lockstep
    from cosim_validation.common.record import RobotRole
    from cosim_validation.live.nodes.robot_link import RobotLink
    from cosim_validation.live.nodes.supervisor_node import SupervisorNode
    from cosim_validation.live.session.node_parameters import ControllerParams


class ControllerNode(Protocol):
    """What the publisher uses of the controller node (:class:`~cosim_validation.live.nodes.controller.Controller`)."""

    @property
    def params(self) -> ControllerParams:
        """The node's checked parameters."""

    @property
    def assembly(self) -> CaseAssembly:
        """The case assembly the node was built with."""

    @property
    def lockstep(self) -> Lockstep:
        """The lockstep loop over the node's robot links."""

    @property
    def links(self) -> dict[RobotRole, RobotLink]:
        """The link to each robot's driver topics, by role."""

    @property
    def expected_pub(self) -> Publisher[Any]:
        """The publisher of the expected states (``/cosim/expected``)."""

    @property
    def status_pub(self) -> Publisher[Any]:
        """The publisher of case status events (``/cosim/case_status``)."""

    @property
    def clock_pub(self) -> Publisher[Any] | None:
        """The ``/clock`` publisher; None unless the node publishes the session clock."""

    @property
    def supervisor_node(self) -> SupervisorNode | None:
        """The task supervisor's node composed into this process; None: no supervisor."""

    def publish_clock(self, t_ns: int) -> None:
        """Advance the session clock to ``t_ns`` [ns] (sim-time mode).

        Args:
            t_ns: The session clock's new time [ns].
        """

    def count_subscribers(self, topic_name: str) -> int:
        """Return the number of subscriptions to ``topic_name`` (rclpy ``Node.count_subscribers``).

        Args:
            topic_name: The topic's full name.
        """

    def get_clock(self) -> Clock:
        """Return the node's clock (rclpy ``Node.get_clock``)."""

    def get_logger(self) -> RcutilsLogger:
        """Return the node's logger (rclpy ``Node.get_logger``)."""


#: The controller nodes that waited subscriber_settle_s once already (before their first case).
_SETTLED: weakref.WeakSet[ControllerNode] = weakref.WeakSet()


class CasePublisher(CaseListener):
    """Expected states, /clock, case status, action feedback; subscriber wait and real-time pacing.

    Args:
        node: The controller node (its publishers, parameters, links and clock).
        goal_handle: The action goal being run.
    """

    def __init__(self, node: ControllerNode, goal_handle: Any) -> None:
        self.node = node
        self.goal_handle = goal_handle
        self.goal = goal_handle.request
        self._wall0 = 0.0
        self._real_time = not node.params.publish_clock
        if self._real_time:  # stamps on the node's clock: the loop's clock must not lag behind it
            clock = node.lockstep.clock
            clock.now_ns = max(clock.now_ns, node.get_clock().now().nanoseconds)

    def status(self, event: CaseEvent, stage: Stage, message: str, run: CaseRun) -> None:
        """Publish the case status (latched).

        Args:
            event: What happened: STARTED, STAGE, or the end (COMPLETED, REFUSED, ABORTED); CaseStatus's event values.
            stage: The case's stage now (the new one of a STAGE event).
            message: Why the case ended so ("" for STARTED and STAGE).
            run: How far the case got: its robots, its plan (the sample count), the samples answered and the first
                setpoint's stamp, which stamps the status (the session clock's time before any).
        """
        plan = run.plan
        msg = CaseStatus(
            event=int(event),
            stage=int(stage),
            message=message,
            controller=self.goal.controller or self.node.assembly.controller_name,
            robots=[r.label for r in run.robots],
            sampling_rate_hz=float(self.node.assembly.setup.planning.sampling_rate_hz),
            needle_length_m=float(self.node.assembly.kinematics.needle_length_m),
            sample_count=plan.n_samples if plan is not None else 0,
            samples_sent=run.executed,
        )
        msg.test_case = self.goal.test_case
        stamp = int(run.stamps_ns[0]) if len(run.stamps_ns) else self.node.lockstep.clock.now_ns
        msg.header.stamp = convert.time_to_msg(stamp)
        self.node.status_pub.publish(msg)

    def supervisor_step(self, stamp_ns: int, decision: Any) -> None:
        """Publish the supervisor's step (state, transition, needle wrenches) of the setpoint stamped ``stamp_ns``.

        Args:
            stamp_ns: The setpoint's stamp [ns].
            decision: The supervisor's :class:`~cosim_validation.assembly.supervision.Decision` of that step.
        """
        if self.node.supervisor_node is not None:
            self.node.supervisor_node.publish(stamp_ns, decision)

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
        """Advance /clock and publish the expected state of setpoint k (with the supervisor's mode).

        Args:
            k: The setpoint's index in the case.
            stamp_ns: The setpoint's stamp in [ns], also the session clock's new time.
            stage: The plan's stage of the setpoint.
            q: The planned joints, shape (J,), in [rad] (or [m] for a prismatic joint).
            tip: The planned needle tip in base_link, shape (3,), in [m].
            quat: The planned tip orientation in base_link, a unit quaternion (w, x, y, z), shape (4,).
            mode: The supervisor's mode when the setpoint was sent.
        """
        self.node.publish_clock(stamp_ns)
        names = self.node.assembly.kinematics.joint_names
        state = convert.ExpectedState(stamp_ns, self.goal.test_case.test_id, int(stage), k, names, q, int(mode))
        self.node.expected_pub.publish(convert.expected_state_to_msg(state, tip, quat))

    def progress(self, k: int, stage: Stage, n_samples: int) -> None:
        """Action feedback.

        Args:
            k: The index of the sample every robot answered.
            stage: Its stage.
            n_samples: The samples the case streams in all, as far as known (at least ``k + 1``).
        """
        self.goal_handle.publish_feedback(
            RunTestCase.Feedback(
                stage=int(stage),
                stage_name=stage.label,
                progress=float((k + 1) / n_samples),
                sample_index=k,
                sample_count=n_samples,
            )
        )

    def cancel_requested(self) -> bool:
        """The action client canceled the goal."""
        return bool(self.goal_handle.is_cancel_requested)

    def before_streaming(self, robots: tuple[RobotRole, ...]) -> None:
        """Wait until the monitor, the recorder and the drivers listen, at most ``subscriber_timeout_s``.

        They must listen on what the controller publishes and on what the drivers answer with: volatile topics
        drop what is published before a subscription is matched. Only the topics of the case's robots are waited
        for: a driver that died in an earlier case made every later case wait the whole timeout for it.

        Args:
            robots: The robots this case drives.
        """
        node, params = self.node, self.node.params
        wanted = params.min_subscribers
        needs = {node.expected_pub.topic_name: wanted}
        needs.update({node.links[role].commands.topic_name: wanted for role in robots})
        if node.clock_pub is not None:
            needs[node.clock_pub.topic_name] = wanted
        for role in robots:
            needs[f"/cosim/{role.label}/joint_states"] = wanted + 1  # the controller listens as well
            needs[f"/cosim/{role.label}/tip_pose"] = wanted
            needs[f"/cosim/{role.label}/marker"] = wanted
        deadline = time.monotonic() + params.subscriber_timeout_s
        while short := [topic for topic, n in needs.items() if node.count_subscribers(topic) < n]:
            if time.monotonic() > deadline:
                node.get_logger().warning(f"fewer than {wanted} subscribers on {short}; streaming anyway")
                break
            time.sleep(0.02)
        if node not in _SETTLED:
            # the graph shows a subscription once it is discovered, the writer matches it a little later
            time.sleep(params.subscriber_settle_s)
            _SETTLED.add(node)
        self._wall0 = time.monotonic()

    def pace(self, k: int, t_s: float) -> None:
        """Real time: sleep until the sample's case time.

        Args:
            k: The index of the sample just answered (unused).
            t_s: Its case time [s]; in real time the call returns no earlier than ``t_s`` after streaming began.
        """
        if self._real_time:
            time.sleep(max(0.0, self._wall0 + t_s - time.monotonic()))
