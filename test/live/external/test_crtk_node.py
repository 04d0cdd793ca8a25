"""An external node under test served the CRTK interface of a dVRK PSM (``interface: crtk``), against node
processes of their own (``fake_node.py``): it enables and homes the arm, then moves it by ``servo_jp`` or
``move_jp``; commands to an arm that is not enabled move nothing and are named; a robot without a CRTK interface
of its own is refused at load, naming the key."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from cosim_validation.assembly import AssemblySpec, CaseAssembly
from cosim_validation.common.exceptions import ConfigError
from cosim_validation.common.record import RobotRole, Stage
from test.live.external.test_node_controller import FAKE, adapter, case, moved

CONFIGS = Path(__file__).resolve().parents[3] / "config"


def write_config(folder: Path, mode: str, base: str = "dvrk_psm_insertion.yaml", **crtk: Any) -> Path:
    """Case study ``base`` (its relative paths kept: the run reads them from config/) with the fake node in ``mode``
    as the controller under test, served CRTK."""
    tree = yaml.safe_load((CONFIGS / base).read_text())
    external = {
        "command": f"{sys.executable} {FAKE} {mode}",
        "real_time_factor": 2.0,
        "accept_timeout_s": 15.0,
        "interface": "crtk",
        **crtk,
    }
    # the node's waits are in simulated time, but each message it waits for crosses DDS in wall time: at 2x real
    # time a loaded machine's 0.3 s of latency is 0.6 s of the case, so the limit leaves 15 s of wall time (a node
    # that does its job is done after 1.5-2.5 s of the case, whatever the limit; at 10x, 3 s of wall time was once
    # not enough with two test runs sharing two cores)
    tree["controllers"]["default"] = {"external": external, "time_limit_s": 30.0}
    path = folder / "case.yaml"
    path.write_text(yaml.safe_dump(tree, sort_keys=False))
    return path


@pytest.fixture
def psm(tmp_path: Path):  # type: ignore[no-untyped-def]
    made: list[CaseAssembly] = []

    def build(mode: str, base: str = "dvrk_psm_insertion.yaml", **crtk: Any) -> CaseAssembly:
        config = write_config(tmp_path, mode, base, **crtk)
        assembly = CaseAssembly(AssemblySpec(str(config), engines=("emulated",), config_base_dir=str(CONFIGS)))
        made.append(assembly)
        return assembly

    yield build
    for assembly in made:
        assembly.close()


def arrived(batch: Any, message: str) -> float:
    """How far past the start the fake node moved from (its result message says it) joint 1 ended [rad]."""
    start = float(message.split("from ", 1)[1].split(";")[0])
    physical = next(r for r in batch.records if r.robot is RobotRole.PHYSICAL)
    return float(physical.q_measured[-1][0] - start)


@pytest.mark.parametrize(
    ("mode", "base"),
    [
        ("crtk", "dvrk_psm_insertion.yaml"),
        ("crtk_move", "dvrk_psm_insertion.yaml"),
        ("crtk", "raven2_insertion.yaml"),  # TransformStamped _cp, no move_jp; served under the node's namespace
    ],
)
def test_a_node_enables_homes_and_moves_the_arm_over_crtk(mode: str, base: str, psm: Any) -> None:
    assembly = psm(mode, base, namespace="/PSM1")
    batch = assembly.run_batch(case(1))
    run = batch.run
    assert run.outcome == "completed", run.message
    assert "moved" in run.message
    delta = moved(batch)
    # joint 1 (yaw of the PSM, shoulder of the Raven-II) ends 0.2 rad past where the node saw it start: the node reads
    # the start from measured_js, and under load the first case's start state can reach it after its goal
    assert arrived(batch, run.message) == pytest.approx(0.2, abs=0.02)
    assert np.abs(delta[1:]).max() < 0.01
    assert int(Stage.INJECTION) in set(run.stage_sent.tolist())
    served = adapter(assembly)._graph.arm
    assert len(served.refusals) == 0, list(served.refusals)
    cp_type = served._pubs["measured_cp"].msg_type.__name__
    assert cp_type == ("TransformStamped" if base.startswith("raven") else "PoseStamped")
    assert served._op.ready()  # enabled and homed by the node, and so it stays for the next case
    second = assembly.run_batch(case(2))
    assert second.run.outcome == "completed", second.run.message
    assert arrived(second, second.run.message) == pytest.approx(0.2, abs=0.02)
    assert adapter(assembly)._process.starts == 1


def test_servo_jp_to_an_arm_that_is_not_enabled_moves_nothing_and_is_named(psm: Any) -> None:
    assembly = psm("crtk_disabled")
    batch = assembly.run_batch(case(1))
    assert batch.run.outcome == "completed", batch.run.message  # the node does not check, and says it moved
    assert np.abs(moved(batch)).max() < 0.01
    refusals = adapter(assembly)._graph.arm.refusals
    assert refusals, "no servo_jp was refused"
    assert all(r.startswith("servo_jp: /PSM1 is DISABLED, homed False") for r in refusals), refusals


def test_pause_ends_a_move_where_the_arm_is(psm: Any) -> None:
    assembly = psm("crtk_pause")
    batch = assembly.run_batch(case(1))
    assert batch.run.outcome == "completed", batch.run.message
    assert batch.run.message.endswith("paused; busy False"), batch.run.message
    physical = next(r for r in batch.records if r.robot is RobotRole.PHYSICAL)
    yaw = physical.q_measured[:, 0] - physical.q_measured[0, 0]
    assert 0.05 < yaw[-1] < 0.9, yaw[-1]  # part of the 1 rad move (0.64 s at the limit) before the pause
    assert np.ptp(physical.q_setpoint[-4:, 0]) == 0.0  # held since
    served = adapter(assembly)._graph.arm
    assert served._op.state == "PAUSED"


def test_crtk_for_a_robot_without_it_is_refused_at_load_naming_the_key(tmp_path: Path) -> None:
    config = write_config(tmp_path, "crtk", base="needle_insertion.yaml")
    with pytest.raises(ConfigError) as caught:
        CaseAssembly(AssemblySpec(str(config), engines=("emulated",), config_base_dir=str(CONFIGS)))
    text = str(caught.value)
    assert text.startswith(f"{config}: controllers.default.external: robot 'xmate_er3_pro' has no CRTK"), text
    assert "name the 'flavour'" in text


def test_a_servo_jp_published_before_the_reset_is_the_last_cases(rclpy_context: Any) -> None:
    """A node's last servo_jp of a case taken after the reset moves nothing; one published after it is followed."""
    import time

    import rclpy
    from crtk_msgs.msg import StringStamped
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState

    from cosim_validation.live.external.crtk_server import CrtkServer
    from cosim_validation.robots.model.kinematics import Kinematics

    kin = Kinematics.from_urdf(CONFIGS.parent / "urdf" / "dvrk_psm.urdf", 0.01, "tool_tip")
    node = rclpy.create_node("crtk_server_test", context=rclpy_context)
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(node)
    try:
        server = CrtkServer(node, "/PSM1", "dvrk", kin, np.full(6, 1.0))
        command = node.create_publisher(StringStamped, "/PSM1/state_command", 10)
        servo = node.create_publisher(JointState, "/PSM1/servo_jp", 10)
        q0 = np.array([0.0, 0.0, 0.1, 0.0, 0.0, 0.0])
        deadline = time.monotonic() + 10.0
        while (servo.get_subscription_count() == 0 or command.get_subscription_count() == 0) and (
            time.monotonic() < deadline
        ):
            executor.spin_once(timeout_sec=0.05)
        for word in ("enable", "home"):
            command.publish(StringStamped(string=word))
        while not server._op.ready() and time.monotonic() < deadline:  # enabled and homed
            executor.spin_once(timeout_sec=0.05)
        names = list(kin.joint_names)
        servo.publish(JointState(name=names, position=[0.5, *q0[1:]]))  # the last case's, not taken yet
        server.reset()
        while server.late_commands + server.commands_received == 0 and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
        assert (server.late_commands, server.commands_received) == (1, 0)
        server.publish_state(0.0, q0, np.full(3, np.nan), np.full(4, np.nan))
        assert server.setpoint(0.1, q0) is None  # the start pose is held

        servo.publish(JointState(name=names, position=[0.2, *q0[1:]]))  # this case's
        while server.commands_received == 0 and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
        setpoint = server.setpoint(0.2, q0)
        assert setpoint is not None, list(server.refusals)
        assert setpoint[0] == pytest.approx(0.2)
    finally:
        executor.shutdown()
        node.destroy_node()
