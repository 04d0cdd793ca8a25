"""Every msg <-> array conversion round-trips, on rclpy messages and on rosbags' decoded ones alike."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest
from rclpy.serialization import serialize_message

from cosim_validation.common.record import RobotRole, Stage
from cosim_validation.live.ros import convert
from cosim_validation.live.ros.bag import project_typestore
from cosim_validation.monitor.properties import Kpi, Status, Verdict

NAMES = tuple(f"joint{i}" for i in range(1, 8))


def via_bag(msg: Any, msgtype: str) -> Any:
    """The same message as rosbags decodes it from CDR (what replay sees).

    rclpy's serialize_message may append up to 7 alignment bytes, one more than rosbags' size check
    accepts (the DDS path the recorder uses does not), so the body is decoded without that check.
    """
    store = project_typestore()
    definition = store.get_msgdef(msgtype)
    raw = bytes(serialize_message(msg))
    return definition.deserialize_cdr_le(raw[4:], 0, definition.cls, store)[0]


@pytest.mark.parametrize("t_ns", [0, 1, 999_999_999, 1_000_000_000, 1_795_305_290_967_606_988])
def test_time(t_ns: int) -> None:
    assert convert.time_from_msg(convert.time_to_msg(t_ns)) == t_ns


def test_negative_time_is_refused() -> None:
    with pytest.raises(Exception, match="cannot be negative"):
        convert.time_to_msg(-1)


@pytest.mark.parametrize("decoded", [False, True])
def test_pose_stamped(decoded: bool) -> None:
    q = np.array([0.5, 0.5, -0.5, 0.5])
    pose = convert.StampedPose(1_500_000_000, "base_link", np.array([0.4, -0.1, 0.25]), q)
    msg = convert.pose_stamped_to_msg(pose)
    if decoded:
        msg = via_bag(msg, "geometry_msgs/msg/PoseStamped")
    back = convert.pose_stamped_from_msg(msg)
    assert (back.t_ns, back.frame_id) == (pose.t_ns, pose.frame_id)
    np.testing.assert_array_equal(back.position_m, pose.position_m)
    np.testing.assert_array_equal(back.quat_wxyz, pose.quat_wxyz)


@pytest.mark.parametrize("decoded", [False, True])
def test_joint_state(decoded: bool) -> None:
    sample = convert.JointSample(100_000_000, NAMES, np.linspace(-1, 1, 7), np.arange(7.0))
    msg = convert.joint_state_to_msg(sample)
    if decoded:
        msg = via_bag(msg, "sensor_msgs/msg/JointState")
    back = convert.joint_state_from_msg(msg, NAMES)
    assert back.t_ns == sample.t_ns
    np.testing.assert_array_equal(back.position, sample.position)
    np.testing.assert_array_equal(back.velocity, sample.velocity)


def test_joint_state_is_reordered_by_name_and_checked() -> None:
    sample = convert.JointSample(0, NAMES[::-1], np.arange(7.0), np.zeros(0))
    back = convert.joint_state_from_msg(convert.joint_state_to_msg(sample), NAMES)
    np.testing.assert_array_equal(back.position, np.arange(7.0)[::-1])
    short = convert.JointSample(0, NAMES[:6], np.zeros(6), np.zeros(0))
    with pytest.raises(Exception, match=r"lacks joints \['joint7'\]"):
        convert.joint_state_from_msg(convert.joint_state_to_msg(short), NAMES)


VERDICTS = [
    Verdict("needle_avoids_heart", RobotRole.VIRTUAL, Status.VIOLATED, -0.0021, "m", 31.2, Stage.INJECTION, True),
    Verdict("targeting", RobotRole.PHYSICAL, Status.UNKNOWN, math.nan, "m", reason="no tracker"),
    Verdict("stage_order", RobotRole.EXPECTED, Status.HOLDS, math.inf, "1", final=False),
]


@pytest.mark.parametrize("verdict", VERDICTS, ids=lambda v: v.property)
@pytest.mark.parametrize("decoded", [False, True])
def test_verdict(verdict: Verdict, decoded: bool) -> None:
    msg = convert.verdict_to_msg(verdict, "case-7", 2_000_000_000)
    assert msg.holds is verdict.holds
    if decoded:
        msg = via_bag(msg, "cosim_validation_interfaces/msg/Verdict")
    test_id, back = convert.verdict_from_msg(msg)
    assert test_id == "case-7"
    assert back.same_outcome(verdict)
    assert (back.unit, back.final, back.reason) == (verdict.unit, verdict.final, verdict.reason)


@pytest.mark.parametrize("decoded", [False, True])
def test_kpi(decoded: bool) -> None:
    kpi = Kpi("deviation_p2t_max", RobotRole.PHYSICAL, Stage.INJECTION, 0.0031, "m")
    msg = convert.kpi_to_msg(kpi, "case-1", 0)
    if decoded:
        msg = via_bag(msg, "cosim_validation_interfaces/msg/Kpi")
    assert convert.kpi_from_msg(msg) == ("case-1", kpi)


@pytest.mark.parametrize("decoded", [False, True])
def test_expected_state(decoded: bool) -> None:
    state = convert.ExpectedState(4_200_000_000, "case-3", int(Stage.INJECTION), 42, NAMES, np.linspace(0, 1, 7))
    msg = convert.expected_state_to_msg(state, np.array([0.4, 0.0, 0.1]), np.array([0.0, 1.0, 0.0, 0.0]))
    if decoded:
        msg = via_bag(msg, "cosim_validation_interfaces/msg/RobotState")
    back = convert.expected_state_from_msg(msg)
    assert back[:5] == state[:5]
    np.testing.assert_array_equal(back.q, state.q)
    np.testing.assert_array_equal(convert.pose_from_msg(msg.tip_pose)[0], [0.4, 0.0, 0.1])


@pytest.mark.parametrize("decoded", [False, True])
def test_case_status_to_case_info(decoded: bool) -> None:
    from geometry_msgs.msg import Point

    from cosim_validation_interfaces.msg import CaseStatus

    msg = CaseStatus(event=CaseStatus.STARTED, sample_count=412, needle_length_m=0.2, robots=["virtual", "physical"])
    msg.test_case.test_id = "case-9"
    msg.test_case.target = Point(x=0.45, y=-0.02, z=0.1)
    if decoded:
        msg = via_bag(msg, "cosim_validation_interfaces/msg/CaseStatus")
    info = convert.case_info_from_status(msg)
    assert (info.test_id, info.robots, info.needle_length_m, info.sample_count) == (
        "case-9",
        (RobotRole.VIRTUAL, RobotRole.PHYSICAL),
        0.2,
        412,
    )
    np.testing.assert_array_equal(info.target_m, [0.45, -0.02, 0.1])


@pytest.mark.parametrize("decoded", [False, True])
def test_test_case(decoded: bool) -> None:
    from cosim_validation.testgen.test_case import TestCase

    case = TestCase(
        "s1-0000007",
        "s1",
        "base_link",
        np.array([0.3, 0.1, 0.4]),
        np.array([0.45, 0.02, 0.1]),
        np.array([3, -1, 12]),
        0.02,
        "grid",
        2**40 + 3,
        0.0123,
    )
    msg = convert.test_case_to_msg(case)
    if decoded:
        msg = via_bag(msg, "cosim_validation_interfaces/msg/TestCase")
    back = convert.test_case_from_msg(msg)
    for name in ("test_id", "suite_id", "frame_id", "granularity_m", "generator", "seed", "target_depth_m"):
        assert getattr(back, name) == getattr(case, name)
    for name in ("source_m", "target_m", "cube_index"):
        np.testing.assert_array_equal(getattr(back, name), getattr(case, name))


@pytest.mark.parametrize("decoded", [False, True])
def test_case_report(decoded: bool) -> None:
    from cosim_validation.live.session.case_monitor import CaseConclusion
    from cosim_validation.live.session.case_tracker import CaseEnd, CaseInfo

    kpi = Kpi("targeting_error", RobotRole.VIRTUAL, Stage.NONE, 0.0004, "m")
    conclusion = CaseConclusion(
        tuple(VERDICTS),
        (kpi,),
        {RobotRole.EXPECTED: 200, RobotRole.VIRTUAL: 198},
        tips={RobotRole.VIRTUAL: 197},
        markers={RobotRole.VIRTUAL: 196},
    )
    end = CaseEnd(CaseInfo("case-4", np.zeros(3), (RobotRole.VIRTUAL,), 0.3, 200), "aborted", "stale", conclusion)
    msg = convert.case_report_to_msg(end, 7_000_000_000)
    if decoded:
        msg = via_bag(msg, "cosim_validation_interfaces/msg/CaseReport")
    test_id, outcome, verdicts, kpis, samples = convert.case_report_from_msg(msg)
    assert (test_id, outcome, kpis, samples) == ("case-4", "aborted", [kpi], dict(conclusion.samples))
    assert all(a.same_outcome(b) for a, b in zip(verdicts, VERDICTS, strict=True))
    caps = convert.case_report_caps(msg)  # what a replay of the case may use
    assert caps.samples == dict(conclusion.samples)
    assert caps.tips == {RobotRole.EXPECTED: 0, RobotRole.VIRTUAL: 197}
    assert caps.markers == {RobotRole.EXPECTED: 0, RobotRole.VIRTUAL: 196}
    assert convert.report_timed_out(msg) is False
    timed_out = convert.case_report_to_msg(dataclasses.replace(end, timed_out=True), 7_000_000_000)
    if decoded:
        timed_out = via_bag(timed_out, "cosim_validation_interfaces/msg/CaseReport")
    assert convert.report_timed_out(timed_out) is True
