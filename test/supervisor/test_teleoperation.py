"""The scripted teleoperation source: commands over time, and setpoints that do what they say on the real arm."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cosim_validation.common.exceptions import ConfigError
from cosim_validation.controllers import InsertionSetup
from cosim_validation.supervisor.teleoperation import TeleoperationFollower, TeleoperationScript

EXAMPLE = "config/supervisor/teleoperation_example.yaml"


def test_the_shipped_script_plays_its_segments_in_order() -> None:
    script = TeleoperationScript.load(EXAMPLE)
    assert script.duration_s == pytest.approx(2.5)
    kinds = [(c.kind, c.segment) for c in (script.command_at(t) for t in (0.0, 0.99, 1.0, 1.6, 2.49, 2.5, 9.0))]
    assert kinds == [("twist", 0), ("twist", 0), ("twist", 1), ("twist", 2), ("twist", 2), ("hold", 3), ("hold", 3)]
    twist = script.command_at(2.0).twist
    assert twist is not None
    np.testing.assert_allclose(twist, [0.005, 0.0, 0.0, 0.0, 0.0, 0.05])


def test_a_tip_twist_moves_the_tip_as_commanded(insertion_setup: InsertionSetup) -> None:
    kin = insertion_setup.robot.kinematics
    q0 = np.asarray(insertion_setup.robot.home_q)
    follower = TeleoperationFollower(kin, TeleoperationScript.load(EXAMPLE))
    follower.start(q0, 5.0)
    dt = 0.01
    poses = {}
    for k in range(1, 251):
        t = 5.0 + k * dt
        q = follower.next_setpoint(t, dt)
        if k in (100, 150, 250):
            poses[k] = kin.tip_pose(q)
    start = kin.tip_pose(q0)
    np.testing.assert_allclose(poses[100].pos_m - start.pos_m, [0.0, 0.0, 0.01], atol=2e-5)  # 1 cm up in 1 s
    np.testing.assert_allclose(poses[150].pos_m, poses[100].pos_m, atol=1e-12)  # held still
    np.testing.assert_allclose(poses[250].pos_m - poses[150].pos_m, [0.005, 0.0, 0.0], atol=5e-5)
    rotation = poses[150].R.T @ poses[250].R  # 0.05 rad/s about base z for 1 s
    angle = np.arccos(np.clip((np.trace(rotation) - 1.0) / 2.0, -1.0, 1.0))
    assert angle == pytest.approx(0.05, abs=2e-3)


def test_joint_targets_are_reached_at_the_end_of_their_segment(tmp_path: Path, insertion_setup: InsertionSetup) -> None:
    kin = insertion_setup.robot.kinematics
    q0 = np.asarray(insertion_setup.robot.home_q)
    target = q0 + np.array([0.1, -0.05, 0.0, 0.1, 0.0, -0.1, 0.2])
    path = tmp_path / "joints.yaml"
    path.write_text(f"teleoperation:\n  segments:\n    - {{duration_s: 2.0, joints: {target.tolist()}}}\n")
    follower = TeleoperationFollower(kin, TeleoperationScript.load(path))
    follower.start(q0, 0.0)
    halfway = follower.next_setpoint(1.0, 1.0)
    np.testing.assert_allclose(halfway, 0.5 * (q0 + target))
    np.testing.assert_allclose(follower.next_setpoint(2.0, 1.0), target)
    np.testing.assert_allclose(follower.next_setpoint(3.0, 1.0), target)  # after the script: hold


@pytest.mark.parametrize(
    ("segment", "message"),
    [
        ("{duration_s: 1.0}", "give either a tip twist"),
        ("{duration_s: 1.0, tip_linear_m_s: [0, 0, 0.01], joints: [0, 0, 0, 0, 0, 0, 0]}", "give either"),
        ("{duration_s: 0.0, tip_linear_m_s: [0, 0, 0.01]}", r"segments\[0\]\.duration_s: expected a number > 0"),
        ("{duration_s: 1.0, joints: [0, 0]}", r"segments\[0\]\.joints: expected a list of 7 numbers"),
        ("{duration_s: 1.0, tip_linear_m_s: [0, 0, 0.01], speed: 2}", r"segments\[0\]\.speed: unknown key"),
    ],
)
def test_bad_scripts(tmp_path: Path, segment: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(f"teleoperation:\n  segments:\n    - {segment}\n")
    with pytest.raises(ConfigError, match=message):
        TeleoperationScript.load(path)
