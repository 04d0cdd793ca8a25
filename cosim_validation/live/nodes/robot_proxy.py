"""robot_proxy: a robot seen through filters (injected errors, hazards), between the controller and its driver.

The driver runs under ``/cosim/<robot>/raw/`` (its topics and reset service remapped there); this node serves
the robot's usual names to the controller and the monitor and passes everything through the filters of its
``filters`` parameter (``KIND:OPTIONS``, innermost first), exactly as a batch robot is wrapped
(:class:`~cosim_validation.robots.filters.robot_filter.FilteredBackend`):

- ``/cosim/<robot>/reset`` (ResetRobot): forwarded; on success every filter restarts with the case's seed;
- ``/cosim/<robot>/command``: the first setpoint after a reset passes as it is (the driver only samples the arm
  at rest), every later one goes through each filter's ``command`` at its case time;
- ``/cosim/<robot>/raw/joint_states`` + ``raw/tip_pose`` + ``raw/marker`` of one stamp: joined into a sample,
  through each filter's ``observe``, published on ``/cosim/<robot>/joint_states``, ``tip_pose`` and ``marker``;
- the filters' events on ``events_topic`` (``cosim_validation_interfaces/Alert``: code = the event's kind);
- when a filter depends on the stage (a hazard with a stage trigger): ``/cosim/expected``, the controller's
  expected state of each setpoint (stamp + stage). The controller publishes it before the command of the same
  stamp, but on another topic, so DDS does not order the two: a command waits until the expected state of its
  stamp arrived (at most :data:`STAGE_TIMEOUT_S`; on timeout the last known stage is used, said in the log and
  as an Alert ``stage_timeout`` on ``events_topic``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.client import Client
from rclpy.node import Node
from sensor_msgs.msg import JointState

from cosim_validation.common.config import load_case_config, resolve_resource
from cosim_validation.common.record import RobotRole
from cosim_validation.live.nodes.node_runtime import declare_parameters, run_node
from cosim_validation.live.ros import convert
from cosim_validation.live.ros.qos import COMMAND, RESULT, STATE, to_rclpy
from cosim_validation.live.ros.sample_topics import SampleJoiner, SamplePublisher, joined_sample
from cosim_validation.live.ros.service_call import call_answered
from cosim_validation.live.session.node_parameters import ErrorInjectorParams, ProxyParams, params_type
from cosim_validation.robots.filters.robot_filter import FilterEvent, needs_stage, notify_stage
from cosim_validation.robots.filters.robot_filters import make_filters
from cosim_validation.robots.model import RobotConfig
from cosim_validation_interfaces.msg import Alert, RobotState
from cosim_validation_interfaces.srv import ResetRobot

RESET_TIMEOUT_S = 30.0
#: How long a command waits for the expected state (the stage) of its stamp [s].
STAGE_TIMEOUT_S = 2.0
#: Stages kept by stamp (far more than the commands in flight).
STAGES_KEPT = 1000


class RobotProxy(Node):
    """Wiring: topics and the reset service of one robot, through its filters."""

    def __init__(self, executable: str = "robot_proxy") -> None:
        super().__init__(executable)
        params = declare_parameters(self, params_type(executable, ProxyParams))
        config = load_case_config(resolve_resource(params.config))
        self._kin = RobotConfig.from_config(config["robot"]).kinematics
        self._filters = make_filters(config, filter_texts(params), self._kin)
        self._role = RobotRole.parse(params.robot)
        self._names = self._kin.joint_names
        group = ReentrantCallbackGroup()
        mine, raw = f"/cosim/{self._role.label}", f"/cosim/{self._role.label}/raw"
        self._raw_commands = self.create_publisher(JointState, f"{raw}/command", to_rclpy(COMMAND))
        self._samples = SamplePublisher(self, mine, self._names)
        self._events_pub = self.create_publisher(Alert, params.events_topic or f"{mine}/events", to_rclpy(RESULT))
        self._raw_reset: Client[Any, Any] = self.create_client(ResetRobot, f"{raw}/reset", callback_group=group)
        self.create_service(ResetRobot, f"{mine}/reset", self._on_reset, callback_group=group)
        self.create_subscription(JointState, f"{mine}/command", self._on_command, to_rclpy(COMMAND))
        self._joiner = SampleJoiner(self._names)
        self.create_subscription(JointState, f"{raw}/joint_states", self._on_part(self._joiner.joints), to_rclpy(STATE))
        self.create_subscription(
            convert.pose_stamped_msg_type(), f"{raw}/tip_pose", self._on_part(self._joiner.tip), to_rclpy(STATE)
        )
        self.create_subscription(
            convert.marker_msg_type(), f"{raw}/marker", self._on_part(self._joiner.marker), to_rclpy(STATE)
        )
        self._stages: dict[int, int] = {}  # stamp [ns] -> stage of the expected state
        self._stage_cond = threading.Condition()
        self._last_stage = 0
        if needs_stage(self._filters):
            self.create_subscription(
                RobotState, "/cosim/expected", self._on_expected, to_rclpy(STATE), callback_group=group
            )
        self._lock = threading.Lock()
        self._last_ns: int | None = None  # stamp of the last setpoint since the reset (None: none yet)
        self._t_s = 0.0
        self._setpoint = np.zeros(len(self._names))
        self.get_logger().info(f"{self._role.label} robot through {[f.name for f in self._filters]}")

    def _on_reset(self, request: Any, response: Any) -> Any:
        if not self._raw_reset.wait_for_service(timeout_sec=RESET_TIMEOUT_S):
            response.success, response.message = False, "the robot's driver offers no reset service"
            return response
        answer = call_answered(self._raw_reset, request, RESET_TIMEOUT_S)  # it waited for ever on a lost answer
        if answer is None:
            response.success, response.message = False, f"the robot's driver did not answer within {RESET_TIMEOUT_S} s"
            return response
        if answer.success:
            q0 = np.asarray(request.position, dtype=np.float64)
            with self._lock:
                for f in self._filters:
                    f.reset(q0, int(request.seed))
                self._last_ns, self._t_s, self._setpoint = None, 0.0, q0
                self._joiner.clear()
        return answer

    def _on_expected(self, msg: Any) -> None:
        with self._stage_cond:
            self._stages[convert.time_from_msg(msg.header.stamp)] = int(msg.stage)
            while len(self._stages) > STAGES_KEPT:
                del self._stages[next(iter(self._stages))]
            self._stage_cond.notify_all()

    def _stage_of(self, stamp_ns: int) -> int:
        """The stage of the setpoint stamped ``stamp_ns`` (waits for its expected state; see the module doc)."""
        with self._stage_cond:
            if self._stage_cond.wait_for(lambda: stamp_ns in self._stages, timeout=STAGE_TIMEOUT_S):
                self._last_stage = self._stages[stamp_ns]
                return self._last_stage
        text = (
            f"no expected state of the setpoint stamped {stamp_ns} ns within {STAGE_TIMEOUT_S} s: "
            f"its stage is taken to be the last known one ({self._last_stage})"
        )
        self.get_logger().error(text)
        event = FilterEvent(t_s=self._t_s, kind="stage_timeout", name="stage", detail=text)
        self._events_pub.publish(_alert(event, self._role, source=self.get_name(), stamp_ns=stamp_ns))
        return self._last_stage

    def _on_command(self, msg: JointState) -> None:
        command = convert.joint_state_from_msg(msg, self._names)
        stage = self._stage_of(command.t_ns) if needs_stage(self._filters) and self._last_ns is not None else None
        with self._lock:
            q = command.position
            if self._last_ns is not None:  # the first setpoint after a reset reaches no filter (batch: no command)
                self._t_s += (command.t_ns - self._last_ns) / 1e9
                if stage is not None:
                    notify_stage(self._filters, stage)
                for f in self._filters:
                    q = f.command(self._t_s, q)
            self._last_ns, self._setpoint = command.t_ns, command.position
            self._publish_events()
        self._raw_commands.publish(convert.joint_state_to_msg(convert.JointSample(command.t_ns, self._names, q, q[:0])))

    def _on_part(self, add: Callable[[Any], tuple[int, dict[str, Any]] | None]) -> Callable[[Any], None]:
        """A subscription callback: ``add`` the message; once its sample is complete, through the filters, out."""

        def callback(msg: Any) -> None:
            with self._lock:
                complete = add(msg)
                if complete is None:
                    return
                stamp_ns, parts = complete
                sample = joined_sample(self._t_s, self._setpoint.copy(), parts)
                for f in self._filters:
                    sample = f.observe(sample)
                self._publish_events()
                self._samples.publish(stamp_ns, sample)

        return callback

    def _publish_events(self) -> None:
        for f in self._filters:
            for event in f.events():
                self._events_pub.publish(_alert(event, self._role, self.get_name(), self._last_ns or 0))


def filter_texts(params: ProxyParams) -> list[str]:
    """Return the ``KIND:OPTIONS`` of the node's filters, innermost first.

    That is ``filters``, after the errors model of an ``error_injector`` ([Barragan et al. 2024]'s injector is
    this node with the ``errors`` filter of its ``model``, which its parameters require).

    Args:
        params: The node's checked parameters (:class:`ProxyParams`, or :class:`ErrorInjectorParams` for an
            ``error_injector``).
    """
    if isinstance(params, ErrorInjectorParams):
        return [f"errors:model={params.model}", *params.filters]
    return list(params.filters)


def _alert(event: FilterEvent, role: RobotRole, source: str, stamp_ns: int) -> Alert:
    alert = Alert(
        level=Alert.WARN,
        robot=int(role),
        source=source,
        code=event.kind,
        message=f"{event.name}: {event.detail} (case time {event.t_s:.3f} s)",
    )
    alert.header.stamp = convert.time_to_msg(stamp_ns)
    return alert


def main(args: list[str] | None = None) -> int:
    """Run the ``robot_proxy`` node until it ends or is interrupted; return its exit status.

    See :func:`~.node_runtime.run_node`. From a shell::

        ros2 run cosim_validation robot_proxy --ros-args -p robot:=virtual -p filters:=['offset:joint2=0.001']

    Args:
        args: The command line as ``rclpy.init`` takes it (``--ros-args -p name:=value`` ...); None: ``sys.argv``.
    """
    return run_node(RobotProxy, args, threads=3)


if __name__ == "__main__":
    raise SystemExit(main())
