"""One RunTestCase goal executed by the controller node: plan, reset, stream in lockstep, conclude."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from cosim_validation.exceptions import CosimError, InputError
from cosim_validation.nodes.robot_link import RobotLinkError
from cosim_validation.record import RobotRole, Stage
from cosim_validation.ros import convert
from cosim_validation_interfaces.action import RunTestCase
from cosim_validation_interfaces.msg import CaseStatus

if TYPE_CHECKING:
    from cosim_validation.nodes.controller import Controller

Result = RunTestCase.Result


class CaseAbortedError(Exception):
    """The case stopped mid-way (validator refusal, stale robot, cancel); the message says why."""


def _point(p: Any) -> np.ndarray:
    return np.array([p.x, p.y, p.z], dtype=np.float64)


class CaseRun:
    """The state of one case while the controller runs it."""

    def __init__(self, node: Controller, goal_handle: Any) -> None:
        self.node = node
        self.goal = goal_handle.request
        self.goal_handle = goal_handle
        self.test_id = self.goal.test_case.test_id
        self.outcome = Result.FAILED
        self.message = ""
        self.last_stage = Stage.NONE
        self.duration_s = 0.0
        self.started = False
        self.robots: list[RobotRole] = []
        self.plan: Any = None

    # ------------------------------------------------------------------ steps
    def execute(self) -> None:
        """Run the case to its end (raises CaseAbortedError or CosimError on the way)."""
        self._check_goal()
        self.robots = self._robots()
        try:
            self.plan = self.node.setup.controller(self.goal.controller or None).plan_case(
                _point(self.goal.test_case.source), _point(self.goal.test_case.target)
            )
        except CosimError as exc:
            self.outcome, self.message = Result.REFUSED, f"the controller refused the target: {exc}"
            self._status(CaseStatus.REFUSED, Stage.NONE, self.message)
            return
        q, t_s = self.plan.q_rad, self.plan.t_s
        if not self.node.params["publish_clock"]:  # real time: stamps on the node's clock
            self.node.session_t_ns = max(self.node.session_t_ns, self.node.get_clock().now().nanoseconds)
        stamps = self.node.session_t_ns + np.round(t_s * 1e9).astype(np.int64)
        for role in self.robots:
            try:
                self.node.links[role].reset(self.test_id, q[0], float(self.node.params["reset_timeout_s"]))
            except RobotLinkError as exc:
                self._lose(role)
                raise CaseAbortedError(str(exc)) from None
        validator = self.node.setup.state_validator() if self.node.params["validate_setpoints"] else None
        if validator is not None:
            validator.reset(q[0])
        self.node.wait_for_subscribers()
        self.started = True
        self._status(CaseStatus.STARTED, Stage(int(self.plan.stage[0])), "")
        fk = self.node.kinematics.record_arrays(q)
        tips, quats = fk.tip_pos_m, fk.tip_quat_wxyz
        wall0 = time.monotonic()
        for k in range(len(t_s)):
            self._step(k, int(stamps[k]), q[k], tips[k], quats[k], validator)
            if not self.node.params["publish_clock"]:  # real time: pace at the sampling rate
                time.sleep(max(0.0, wall0 + float(t_s[k]) - time.monotonic()))
        self.node.session_t_ns = (
            int(stamps[-1]) + round(float(t_s[1] - t_s[0]) * 1e9) if len(t_s) > 1 else int(stamps[-1]) + 100_000_000
        )
        self.duration_s = float(t_s[-1] - t_s[0])
        self.outcome, self.message = Result.COMPLETED, "every stage executed"
        self._status(CaseStatus.COMPLETED, self.last_stage, self.message)

    def _step(self, k: int, stamp: int, q: np.ndarray, tip: np.ndarray, quat: np.ndarray, validator: Any) -> None:
        stage = Stage(int(self.plan.stage[k]))
        if self.goal_handle.is_cancel_requested:
            raise CaseAbortedError("canceled by the client")
        if validator is not None:
            verdict = validator.check(q)
            if not verdict.accepted:
                raise CaseAbortedError(f"the state validator refused setpoint {k} ({stage.label}): {verdict.message}")
        self.node.publish_clock(stamp)
        names = self.node.kinematics.joint_names
        self.node.expected_pub.publish(
            convert.expected_state_to_msg(
                convert.ExpectedState(stamp, self.test_id, int(stage), k, names, q), tip, quat
            )
        )
        for role in self.robots:
            self.node.links[role].send(stamp, q)
        for role in list(self.robots):
            try:
                self.node.links[role].wait_joints(stamp, float(self.node.params["stale_timeout_s"]))
            except RobotLinkError as exc:
                self._lose(role)
                raise CaseAbortedError(str(exc)) from None
        self.duration_s = float(self.plan.t_s[k] - self.plan.t_s[0])
        if stage is not self.last_stage or k % 10 == 0 or k == len(self.plan.t_s) - 1:
            if stage is not self.last_stage and k > 0:
                self._status(CaseStatus.STAGE, stage, "")
            self.last_stage = stage
            self._feedback(k, stage)

    # ------------------------------------------------------------------ endings
    def finish_aborted(self, reason: str) -> None:
        """Stop: the robots hold their last setpoint; the monitor concludes with what it got."""
        self.outcome, self.message = Result.ABORTED, reason
        self.node.get_logger().error(f"{self.test_id}: aborted: {reason}")
        if self.started:
            self._status(CaseStatus.ABORTED, self.last_stage, reason)
            self.node.session_t_ns += round(float(self.plan.t_s[-1]) * 1e9) + 100_000_000

    def finish_failed(self, reason: str) -> None:
        """The goal could not be run at all."""
        self.outcome, self.message = Result.FAILED, reason
        self.node.get_logger().error(f"{self.test_id}: failed: {reason}")

    def result(self, goal_handle: Any) -> Any:
        """The action result (with the monitor's verdicts and KPIs when it reported)."""
        result = Result(
            outcome=self.outcome, message=self.message, last_stage=int(self.last_stage), duration_s=self.duration_s
        )
        if self.started:
            report = self.node.wait_report(self.test_id, float(self.node.params["report_timeout_s"]))
            if report is None:
                result.message += "; the monitor did not report this case"
            else:
                result.verdicts, result.kpis = report.verdicts, report.kpis
        if self.outcome == Result.COMPLETED:
            goal_handle.succeed()
        else:
            goal_handle.abort()
        return result

    # ------------------------------------------------------------------ helpers
    def _check_goal(self) -> None:
        rate = float(self.goal.sampling_rate_hz)
        configured = self.node.setup.planning.sampling_rate_hz
        if rate and rate != configured:
            raise InputError(
                f"goal sampling_rate_hz {rate!r} differs from planning.sampling_rate_hz "
                f"{configured!r} of the configuration; the rate is set there"
            )
        needle = float(self.goal.needle_length_m)
        if needle and needle != self.node.kinematics.needle_length_m:
            raise InputError(
                f"goal needle_length_m {needle!r} differs from robot.needle_length_m "
                f"{self.node.kinematics.needle_length_m!r} of the configuration"
            )

    def _robots(self) -> list[RobotRole]:
        wanted = [RobotRole.parse(r) for r in self.goal.robots] or list(self.node.links)
        unknown = [r.label for r in wanted if r not in self.node.links]
        if unknown:
            raise InputError(
                f"goal robots {unknown} are not driven by this controller "
                f"(robots: {[r.label for r in self.node.links]})"
            )
        alive = [r for r in wanted if r not in self.node.lost_robots]
        if not alive:
            raise CaseAbortedError(
                f"no robot left: {', '.join(r.label for r in self.node.lost_robots)} stopped answering"
            )
        return alive

    def _lose(self, role: RobotRole) -> None:
        if self.node.params["drop_stale_robots"]:
            self.node.lost_robots.add(role)

    def _status(self, event: int, stage: Stage, message: str) -> None:
        msg = CaseStatus(
            event=event,
            stage=int(stage),
            message=message,
            controller=self.goal.controller or self.node.setup.controllers.default,
            robots=[r.label for r in self.robots],
            sampling_rate_hz=float(self.node.setup.planning.sampling_rate_hz),
            needle_length_m=float(self.node.kinematics.needle_length_m),
            sample_count=self.plan.n_samples if self.plan is not None else 0,
        )
        msg.test_case = self.goal.test_case
        msg.header.stamp = convert.time_to_msg(self.node.session_t_ns)
        self.node.status_pub.publish(msg)

    def _feedback(self, k: int, stage: Stage) -> None:
        n = self.plan.n_samples
        self.goal_handle.publish_feedback(
            RunTestCase.Feedback(
                stage=int(stage), stage_name=stage.label, progress=float((k + 1) / n), sample_index=k, sample_count=n
            )
        )
