"""An external ROS 2 node as the controller under test: a closed-loop controller whose commands come over DDS.

The adapter keeps the closed-loop contract (docs/CONTROLLERS.md), so the node runs inside the one lockstep loop
of every mode (campaign, run-case, session). Per case:

- ``start``: the node is started if it is not running (and restarted after it died or hung), the robot is served
  at the case's start pose, and the case is sent as a ``RunTestCase`` goal; the node must accept it within
  ``accept_timeout_s`` (wall time). A goal without an answer by then is sent again under a new goal id, up to
  three times in all: DDS discovery can lose an action server's answer (:mod:`~cosim_validation.live.ros.action_goal`).
- ``step``, once per control period: ``/clock``, the measured joints and the tracked tip are published for the
  period's time, the node gets one control period of wall time divided by the real-time factor to answer, and the
  setpoint is what it commanded through the served interfaces for the next period (ros2_control:
  :class:`~.arm_server.ArmServer`; CRTK: :class:`~.crtk_server.CrtkServer`), else the last one is held. The stage
  is the last one the node reported in the goal's feedback. The case ends when the goal's result arrives; a node
  that died ends it with the reason.
- ``finish``: a goal still running is canceled; a node that does not answer the cancel is restarted before the
  next case.

Simulated time runs on across cases (each case starts one second after the last one ended), so ``/clock`` never
goes backwards for the node.
"""

from __future__ import annotations

import contextlib
import os
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import numpy as np
import rclpy
from action_msgs.msg import GoalStatus
from rclpy.action import ActionClient
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import Stage
from cosim_validation.controllers.external_spec import CRTK_NAMESPACES, GOAL_ATTEMPTS, ExternalSpec
from cosim_validation.controllers.plugin_api import CaseStart, Command, ControllerContext, Observation
from cosim_validation.live.external.arm_server import ArmServer
from cosim_validation.live.external.crtk_server import CrtkServer
from cosim_validation.live.external.goal_result import GoalResult
from cosim_validation.live.external.sensing import ServedArm
from cosim_validation.live.external.sut_process import NodeProcess, NodeUnderTestError
from cosim_validation.live.external.trajectory_follow import Tolerances
from cosim_validation.live.ros import crtk_topics
from cosim_validation.live.ros.action_goal import ActionTimeoutError, send_goal
from cosim_validation.live.ros.service_call import spin_until
from cosim_validation.live.session.discovery_scope import DomainLease
from cosim_validation.supervisor.needle_force import axial_force_vectors
from cosim_validation_interfaces.action import RunTestCase

_GAP_S = 1.0  # simulated time between two cases [s]
_MIN_WAIT_FRACTION = 0.25  # the node always gets at least this share of a period's wall time, even when we run late
_MISSES_BEFORE_NOT_STREAMING = 3  # periods without a command after which a node is no longer waited for
_OUTCOMES = {0: "COMPLETED", 1: "REFUSED", 2: "ABORTED", 3: "FAILED"}


def make_controller(options: dict[str, Any], context: ControllerContext) -> ExternalNodeController:
    """The factory ``controllers.default.external`` names (its options checked by ``external_spec``).

    Args:
        options: The options of the ``external`` controller in the configuration.
        context: The case study: kinematics, robot limits, control period, logs.
    """
    return ExternalNodeController(ExternalSpec.from_options(options), context)


#: After a restart, how long the old server may stay in the graph before the first goal is sent anyway [s] (at least;
#: up to the start-up time left). A killed process leaves its DDS endpoints until their lease ends, and a goal sent
#: while the old server is there was lost: a reviewer saw 4 of 5 restarts after a frozen node lose the next goal.
_GONE_S = 10.0


class _Graph:
    """The adapter's side of the node's DDS domain: a ROS context, a node, the served arm, the action client."""

    def __init__(self, spec: ExternalSpec, context: ControllerContext) -> None:
        self.lease = DomainLease.acquire(spec.domain_id, spec.discovery_range)
        self.ros = Context()
        with _discovery_range(self.lease.scope.discovery_range):
            rclpy.init(context=self.ros, domain_id=self.lease.scope.domain_id)
        self.node = Node("cosim_controller_under_test_adapter", context=self.ros)
        self.executor = SingleThreadedExecutor(context=self.ros)
        self.executor.add_node(self.node)
        kin = context.kinematics
        n = kin.n_joints
        tolerances = Tolerances(
            path_rad=np.full(n, spec.path_tolerance_rad),
            goal_rad=np.full(n, spec.goal_tolerance_rad),
            goal_time_s=spec.goal_time_tolerance_s,
        )
        self.arm: ServedArm
        if spec.interface == "crtk":
            velocity = context.robot.limits.velocity
            self.arm = CrtkServer(self.node, spec.namespace, spec.flavour, kin, velocity, spec.tracker_namespace)
        else:
            urdf = kin.chain.urdf_path.read_text(encoding="utf-8")
            names, lower, upper = kin.joint_names, kin.q_lower, kin.q_upper
            self.arm = ArmServer(
                self.node, spec.controller, names, lower, upper, tolerances, urdf, units=kin.joint_units
            )
        self.action = spec.action
        self.client: ActionClient[Any, Any, Any] = ActionClient(self.node, RunTestCase, spec.action)

    def server_ids(self) -> set[bytes]:
        """Return the endpoint ids of every server of the action now in the graph.

        These are the readers of its goal requests (the DDS topic of the ``send_goal`` service's requests), which
        must be matched before a goal can reach a server.
        """
        topic = f"rq/{self.action.lstrip('/')}/_action/send_goalRequest"
        infos = self.node.get_subscriptions_info_by_topic(topic, no_mangle=True)
        return {bytes(info.endpoint_gid) for info in infos}

    def new_server(self, known: set[bytes]) -> bool:
        """Whether a server of the action that is not one of ``known`` is in the graph and ready for goals."""
        return bool(self.server_ids() - known) and self.client.server_is_ready()

    def spin_until(self, done: Callable[[], bool], deadline: float) -> bool:
        """Spin until ``done()`` or the monotonic ``deadline``; whether ``done()`` holds."""
        return spin_until(self.executor, done, deadline)

    def close(self) -> None:
        """Leave the domain.

        The executor goes first: its paused wait holds the entities' handles, and a client destroyed under it would be
        finalised when that wait is closed, inside the executor's shutdown (one full run hung there). rclpy's own
        order is the same: shut the executor down, then destroy what its nodes hold.
        """
        with contextlib.suppress(Exception):
            self.executor.shutdown(timeout_sec=1.0)
        with contextlib.suppress(Exception):
            self.client.destroy()
        with contextlib.suppress(Exception):
            self.node.destroy_node()
        with contextlib.suppress(Exception):
            rclpy.shutdown(context=self.ros)
        self.lease.release()


@contextlib.contextmanager
def _discovery_range(value: str) -> Iterator[None]:
    """ROS_AUTOMATIC_DISCOVERY_RANGE set while rcl reads it (at init), as the node under test gets it."""
    old = os.environ.get("ROS_AUTOMATIC_DISCOVERY_RANGE")
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = value.upper()
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("ROS_AUTOMATIC_DISCOVERY_RANGE", None)
        else:
            os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = old


def _with_crtk_flavour(spec: ExternalSpec, context: ControllerContext) -> ExternalSpec:
    """``spec`` with the CRTK flavour and namespace settled (the robot model's flavour unless one is named).

    Raises:
        InputError: CRTK asked for a robot without a CRTK interface and no flavour named.
    """
    if spec.interface != "crtk":
        return spec
    model = context.robot.model.name
    flavour = spec.flavour or crtk_topics.MODEL_FLAVOURS.get(model, "")
    if not flavour:
        known = ", ".join(f"{m} ({f})" for m, f in crtk_topics.MODEL_FLAVOURS.items())
        raise InputError(
            f"robot {model!r} has no CRTK interface of its own: name the 'flavour' to serve (dvrk or raven) or "
            f"use 'interface: ros2_control' (robots with one: {known})"
        )
    return replace(spec, flavour=flavour, namespace=spec.namespace or CRTK_NAMESPACES[flavour])


def _shut_down(process: NodeProcess, graph: _Graph) -> None:
    process.stop()
    graph.close()


class ExternalNodeController:
    """The closed-loop face of an external node under test (see the module docstring).

    Args:
        spec: How to start it and talk to it.
        context: The case study (kinematics, control period).
    """

    def __init__(self, spec: ExternalSpec, context: ControllerContext) -> None:
        self.name, self.spec, self.context = context.name, _with_crtk_flavour(spec, context), context
        self.dt_s = context.dt_s
        self._graph: _Graph | None = None
        self._process: NodeProcess | None = None
        self._restart = False
        self._t0_s = 0.0  # simulated time of this case's start
        self._t_end_s = 0.0  # simulated time of the last period published
        self._wall0 = 0.0
        self._goal: Any = None  # the accepted goal's handle
        self._result: GoalResult | None = None  # its result (asked again if the answer is lost)
        self._stage = Stage.INITIALIZATION
        self._streaming = False  # the node streams commands: wait for its next one each period
        self._misses = 0  # periods in a row without a command
        self._closer: weakref.finalize[Any, Any] | None = None

    # ------------------------------------------------------------------ the node's lifetime
    def _ready(self) -> _Graph:
        """The domain joined and the node serving its action (started or restarted as needed)."""
        if self._graph is None:
            self._graph = _Graph(self.spec, self.context)
            env = self._graph.lease.scope.env()
            self._process = NodeProcess(self.spec.command, self.spec.cwd, env, self.context.logs)
            self._closer = weakref.finalize(self, _shut_down, self._process, self._graph)
        graph, process = self._graph, self._process
        assert process is not None
        if self._restart or not process.running():
            known = graph.server_ids()  # a dead node's endpoints linger in the graph until their lease ends
            process.restart() if self._restart else process.start()
            self._restart = False
            deadline = time.monotonic() + self.spec.startup_timeout_s
            served = graph.spin_until(lambda: graph.new_server(known) or not process.running(), deadline)
            if not process.running():
                raise NodeUnderTestError(process.exit_problem())
            if not served:
                self._restart = True
                raise NodeUnderTestError(
                    f"the node under test does not serve the action {self.spec.action} "
                    f"{self.spec.startup_timeout_s:g} s after it started (startup_timeout_s){process.log_note()}"
                )
            if known & graph.server_ids():  # the old server still in the graph: a goal sent now may reach it alone
                graph.spin_until(lambda: not (known & graph.server_ids()), max(deadline, time.monotonic() + _GONE_S))
                # the client took itself for ready while matched with the old server alone: once that one has left,
                # ready means matched with the new one (the graph shows a server a little before the client matches
                # it, and a goal sent before that is lost)
                ready = graph.client.server_is_ready
                graph.spin_until(lambda: ready() or not process.running(), max(deadline, time.monotonic() + _GONE_S))
        return graph

    def close(self) -> None:
        """Stop the node and leave its domain (also done when the adapter is collected or the process exits)."""
        if self._closer is not None:
            self._closer()
        self._graph = self._process = self._closer = None

    # ------------------------------------------------------------------ the closed-loop contract
    def start(self, case: CaseStart) -> None:
        """Serve the start pose and send the case; the node must accept it.

        Args:
            case: The case: its id, seed, source and target in base_link [m], and the start pose ``q0``, shape (J,), in
                [rad] (or [m] for a prismatic joint).

        Raises:
            NodeUnderTestError: The node cannot be started, died, does not answer or rejected the case.
        """
        graph = self._ready()
        graph.arm.reset()
        self._goal = self._result = None
        self._stage = Stage.INITIALIZATION
        self._streaming, self._misses = False, 0
        self._t0_s = self._t_end_s + (_GAP_S if self._t_end_s > 0 else 0.0)
        self._t_end_s = self._t0_s
        nan = np.full(3, np.nan)
        graph.arm.publish_state(self._t0_s, case.q0, nan, np.full(4, np.nan))
        try:  # an answer that discovery lost (rmw_fastrtps drops it) is asked for again under a new goal id
            handle = send_goal(
                graph.client,
                self._goal_of(case),
                answer_timeout_s=self.spec.accept_timeout_s,
                attempts=GOAL_ATTEMPTS,
                wait=graph.spin_until,
                stop=lambda: not self._alive(),
                feedback_callback=self._on_feedback,
            )
        except ActionTimeoutError:
            self._restart = True
            note = self._process.log_note() if self._process is not None else ""
            raise NodeUnderTestError(
                f"the node under test did not answer the case's goal within {self.spec.accept_timeout_s:g} s "
                f"(accept_timeout_s; sent {GOAL_ATTEMPTS} times){note}"
            ) from None
        self._check_alive()
        if handle is None or not handle.accepted:
            raise NodeUnderTestError("the node under test rejected the case's RunTestCase goal")
        self._goal, self._result = handle, GoalResult(handle)
        self._wall0 = time.monotonic()

    def step(self, observation: Observation) -> Command:
        """Publish what the robot measured, give the node its share of wall time, take what it commanded.

        Args:
            observation: What the robot answered this period: case time [s], measured joints (J,) in [rad] (or [m] for a
                prismatic joint), tracked tip in base_link [m] (NaN when not seen), needle force [N] (NaN without a
                force model).
        """
        graph = self._ready_in_case()
        t_s = self._t0_s + observation.t_s
        self._t_end_s = t_s
        before = graph.arm.commands_received
        force = None
        if np.isfinite(observation.needle_force_n):  # the case study models the needle force
            holder, tip = self.context.kinematics.needle_segments(observation.q_measured)
            force = axial_force_vectors([observation.needle_force_n], holder, tip)[0]
        graph.arm.publish_state(t_s, observation.q_measured, observation.tip_pos_m, observation.tip_quat_wxyz, force)
        period_wall = self.dt_s / self.spec.real_time_factor
        now = time.monotonic()
        paced = max(self._wall0 + (observation.t_s + self.dt_s) / self.spec.real_time_factor, now)
        paced = max(paced, now + _MIN_WAIT_FRACTION * period_wall)
        result = self._result
        assert result is not None

        def over() -> bool:
            return bool(result.done()) or not self._alive()

        graph.spin_until(over, paced)
        if self._streaming and not over() and graph.arm.commands_received == before:  # a streaming node is late
            graph.spin_until(lambda: over() or graph.arm.commands_received > before, now + self.spec.command_timeout_s)
        answered = graph.arm.commands_received > before
        self._misses = 0 if answered else self._misses + 1
        self._streaming = answered or (self._streaming and self._misses < _MISSES_BEFORE_NOT_STREAMING)
        self._check_alive()
        if result.done():
            return self._ending()
        q = graph.arm.setpoint(t_s + self.dt_s, observation.q_measured)
        return Command.hold(self._stage) if q is None else Command.setpoint(q, self._stage)

    def finish(self, outcome: str, reason: str) -> None:
        """Cancel the node's goal if it still runs; a node that does not answer is restarted before the next case.

        Args:
            outcome: How the case ended, ``completed`` or ``aborted`` (unused: a running goal is canceled either way).
            reason: Why it ended so (unused).
        """
        graph, goal, result = self._graph, self._goal, self._result
        self._goal = self._result = None
        if graph is None:
            return
        graph.arm.reset()
        if goal is None or result is None or result.done() or not self._alive():
            return
        canceled = goal.cancel_goal_async()
        deadline = time.monotonic() + self.spec.accept_timeout_s
        if not graph.spin_until(lambda: canceled.done() and result.done(), deadline):
            self._restart = True

    # ------------------------------------------------------------------ helpers
    def _ready_in_case(self) -> _Graph:
        if self._graph is None or self._result is None:
            raise NodeUnderTestError("step before start: the case was not sent to the node under test")
        return self._graph

    def _alive(self) -> bool:
        return self._process is not None and self._process.running()

    def _check_alive(self) -> None:
        if not self._alive():
            self._restart = True
            problem = self._process.exit_problem() if self._process is not None else "not started"
            raise NodeUnderTestError(problem)

    def _on_feedback(self, message: Any) -> None:
        stage = int(message.feedback.stage)
        if stage in Stage._value2member_map_:
            self._stage = Stage(stage)

    def _ending(self) -> Command:
        """The node's result as the end of the case."""
        assert self._result is not None
        answer = self._result.result()
        result = answer.result
        outcome = _OUTCOMES.get(int(result.outcome), f"outcome {int(result.outcome)}")
        message = result.message or "no message"
        if answer.status != GoalStatus.STATUS_SUCCEEDED:
            state = {GoalStatus.STATUS_ABORTED: "aborted", GoalStatus.STATUS_CANCELED: "canceled"}
            how = state.get(answer.status, f"status {answer.status}")
            return Command.done("aborted", f"the node under test {how} the case's goal: {message}")
        if int(result.outcome) == RunTestCase.Result.COMPLETED:
            return Command.done("completed", message)
        return Command.done("aborted", f"the node under test ended the case {outcome}: {message}")

    def _goal_of(self, case: CaseStart) -> Any:
        goal = RunTestCase.Goal()
        tc = goal.test_case
        tc.test_id, tc.frame_id = case.test_id, "base_link"
        tc.source.x, tc.source.y, tc.source.z = (float(v) for v in case.source_m)
        tc.target.x, tc.target.y, tc.target.z = (float(v) for v in case.target_m)
        tc.seed = int(case.seed)
        goal.sampling_rate_hz = 1.0 / self.dt_s
        goal.needle_length_m = float(self.context.kinematics.needle_length_m)
        return goal
