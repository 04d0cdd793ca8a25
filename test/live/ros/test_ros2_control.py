"""The ROS-free core of the ros2_control path (cosim_validation/live/ros/ros2_control.py): the check of a controller
manager's list_controllers answer, the two-point trajectory of a setpoint, and the update loop that runs the
emulated ER3 Pro at a controller manager's rate, reading the same joints as the batch robot."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.assembly import BackendPort
from cosim_validation.assembly.robots import build_robot
from cosim_validation.common.config import load_case_config, package_root
from cosim_validation.live.ros.ros2_control import (
    ControllerManagerError,
    ListedController,
    check_trajectory_controller,
    segment,
)
from cosim_validation.live.ros.update_loop import UpdateLoop

JOINTS = tuple(f"joint{i}" for i in range(1, 8))
CLAIMED = tuple(f"{j}/position" for j in JOINTS)
BROADCASTER = ListedController("joint_state_broadcaster", "active", "joint_state_broadcaster/JointStateBroadcaster", ())


def _jtc(state: str = "active", claimed: tuple[str, ...] = CLAIMED) -> ListedController:
    return ListedController("arm_controller", state, "joint_trajectory_controller/JointTrajectoryController", claimed)


def test_an_active_controller_claiming_every_joint_passes() -> None:
    found = check_trajectory_controller("/controller_manager", [BROADCASTER, _jtc()], "arm_controller", JOINTS)
    assert found.name == "arm_controller"


@pytest.mark.parametrize(
    ("listed", "message"),
    [
        (
            [BROADCASTER],
            r"^/controller_manager has no controller 'arm_controller' \(it lists \['joint_state_broadcaster'\]\)",
        ),
        ([], r"has no controller 'arm_controller' \(it lists none\)"),
        ([BROADCASTER, _jtc("inactive")], r"controller 'arm_controller' is 'inactive', expected 'active'"),
        (
            [_jtc(claimed=CLAIMED[:6])],
            r"does not claim \['joint7/position'\]; it claims \['joint1/position'.*the arm's joints are \['joint1'",
        ),
        ([_jtc(claimed=tuple(f"{j}/velocity" for j in JOINTS))], r"does not claim \['joint1/position', "),
    ],
)
def test_what_is_missing_is_named(listed: list[ListedController], message: str) -> None:
    with pytest.raises(ControllerManagerError, match=message):
        check_trajectory_controller("/controller_manager", listed, "arm_controller", JOINTS)


def test_a_setpoint_is_the_segment_from_the_previous_one() -> None:
    q0, q1 = np.zeros(7), np.full(7, 0.1)
    first = segment(None, 5_000_000_000, q0)
    assert (first.start_ns, first.times_ns) == (5_000_000_000, (0,))
    np.testing.assert_array_equal(first.positions[0], q0)
    nxt = segment((5_000_000_000, q0), 5_100_000_000, q1)
    assert (nxt.start_ns, nxt.times_ns) == (5_000_000_000, (0, 100_000_000))
    np.testing.assert_array_equal(nxt.positions[1], q1)


def _linear(start_s: float, q0: np.ndarray, end_s: float, q1: np.ndarray):  # type: ignore[no-untyped-def]
    """The command of a joint trajectory controller's linear spline from (start_s, q0) to (end_s, q1)."""

    def command(t_s: float, q_measured: np.ndarray) -> np.ndarray:
        return q1 if t_s >= end_s else q0 + (q1 - q0) * ((t_s - start_s) / (end_s - start_s))

    return command


@pytest.mark.parametrize("rate_hz", [250.0, 1000.0])
def test_the_update_loop_reads_the_joints_of_the_batch_robot(rate_hz: float) -> None:
    config = load_case_config(package_root() / "config" / "needle_insertion.yaml")
    batch = BackendPort(build_robot(config, "emulated"))
    loop = UpdateLoop(BackendPort(build_robot(config, "emulated")), rate_hz)
    q_start = np.array([0.0, 0.3, 0.0, 1.2, 0.0, 0.5, 0.0])
    steps = [q_start + np.array([0.0, 0.01, 0.02, -0.01, 0.0, 0.01, 0.0]) * k for k in range(8)]
    stamps = [1_000_000_000 + 100_000_000 * k for k in range(8)]
    batch.reset("case", q_start, 7)
    loop.port.reset("case", q_start, 7)
    loop.reset()
    for k, (stamp, q) in enumerate(zip(stamps, steps, strict=True)):
        batch.send(stamp, q)
        previous = (stamps[k - 1], steps[k - 1]) if k else (stamp, q)
        got = loop.run_until(stamp, _linear(previous[0] / 1e9, previous[1], stamp / 1e9, q))
        assert got is not None
        np.testing.assert_array_equal(got.q_measured, batch.latest.q_measured)
        np.testing.assert_array_equal(got.q_setpoint, batch.latest.q_setpoint)
        np.testing.assert_allclose(got.actual_tip_pos_m, batch.latest.actual_tip_pos_m, atol=1e-5, rtol=0)
    assert loop.now_ns == stamps[-1]
    assert loop.run_until(stamps[-1], _linear(0.0, q_start, 1.0, q_start)) is None  # the arm is there already
