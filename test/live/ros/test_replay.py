"""Replay of someone else's bag (standard JointState topics named in the properties file), and --publish."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cosim_validation.cli.main import main
from cosim_validation.common.record import RobotRole
from cosim_validation.live.ros.bag import BagWriter, project_typestore
from cosim_validation.live.ros.qos import STATE

PROPERTIES = """
constants: {joint_clearance_m: 0.05}
properties:
  joints_clear_of_obstacles:
    expression: "forall j in joints, o in obstacles: always safedis(joint[j], o, joint_clearance_m)"
  no_self_collision:
    expression: "always not self_collision"
topics:
  virtual: {joint_states: /my_arm/joint_states}
"""


def foreign_bag(path: Path, q: np.ndarray) -> None:
    """A bag as another lab would record it: only a JointState topic, names in another order."""
    store = project_typestore()
    js, header, time = (
        store.types[t] for t in ("sensor_msgs/msg/JointState", "std_msgs/msg/Header", "builtin_interfaces/msg/Time")
    )
    names = [f"joint{i}" for i in range(7, 0, -1)]
    writer = BagWriter(path)
    writer.add_topic("/my_arm/joint_states", "sensor_msgs/msg/JointState", STATE)
    for k, row in enumerate(q):
        t_ns = 50_000_000_000 + k * 20_000_000  # 50 Hz, its own clock
        msg = js(
            header=header(stamp=time(sec=t_ns // 10**9, nanosec=t_ns % 10**9), frame_id=""),
            name=names,
            position=row[::-1].copy(),
            velocity=np.zeros(0),
            effort=np.zeros(0),
        )
        writer.write_message("/my_arm/joint_states", t_ns, msg, "sensor_msgs/msg/JointState")
    writer.close()


def test_someone_elses_bag(tmp_path: Path, repo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    home = np.array([0.0, -0.4, 0.0, 1.46, 0.0, 1.3, 0.0])
    q = home + np.sin(np.linspace(0, np.pi, 60))[:, None] * np.array([0.2, 0.1, 0.0, 0.1, 0.0, 0.1, 0.3])
    bag, props = tmp_path / "theirs.mcap", tmp_path / "props.yaml"
    foreign_bag(bag, q)
    props.write_text(PROPERTIES)
    code = main(
        [
            "replay",
            str(bag),
            "--properties",
            str(props),
            "--config",
            str(repo_root / "config" / "needle_insertion.yaml"),
            "--json",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    (case,) = report["cases"]
    assert case["outcome"] == "recorded"
    assert case["samples"] == {RobotRole.VIRTUAL.label: 60}
    verdicts = {v["property"]: v for v in case["verdicts"]}
    assert verdicts["joints_clear_of_obstacles"]["status"] == "holds"
    assert verdicts["joints_clear_of_obstacles"]["margin"] > 0.05
    assert verdicts["no_self_collision"]["status"] == "holds"
    assert report["equal_to_live"] is None  # nothing live to compare with


def test_machines_on_a_foreign_bag_are_unknown_and_the_table_shows_the_violation_time(
    tmp_path: Path, repo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 15, item 4: all three shipped machines said violated on a bag without stages and target, and the
    text table printed ``none`` in the first-violation column of a violated property."""
    home = np.array([0.0, -0.4, 0.0, 1.46, 0.0, 1.3, 0.0])
    q = home + np.sin(np.linspace(0, np.pi, 60))[:, None] * np.array([0.2, 0.1, 0.0, 0.1, 0.0, 0.1, 0.3])
    bag, props = tmp_path / "theirs.mcap", tmp_path / "props.yaml"
    foreign_bag(bag, q)
    wrist = '  wrist_below_0_2_rad:\n    expression: "always q[6] < 0.2"\n'
    machines = "machines: [stage_order, no_retraction_during_injection, settles_at_target]\n"
    props.write_text(PROPERTIES.replace("topics:", wrist.rstrip("\n") + "\n" + machines + "topics:"))
    config = str(repo_root / "config" / "needle_insertion.yaml")
    assert main(["replay", str(bag), "--properties", str(props), "--config", config, "--json"]) == 0
    (case,) = json.loads(capsys.readouterr().out)["cases"]
    verdicts = {v["property"]: v for v in case["verdicts"]}
    for name in ("stage_order", "no_retraction_during_injection", "settles_at_target"):
        machine = verdicts[f"machine:{name}"]
        assert machine["status"] == "unknown", machine
        assert machine["reason"].startswith(("needs the stages of a case", "needs the case's target")), machine
    wrist_verdict = verdicts["wrist_below_0_2_rad"]
    assert wrist_verdict["status"] == "violated"
    # q[6] = 0.3 sin(pi k / 59) first exceeds 0.2 at k = 14: 14 samples of 20 ms after the first
    assert wrist_verdict["first_violation_time_s"] == pytest.approx(14 * 0.02)
    assert case["violated"] == ["wrist_below_0_2_rad@virtual"]

    assert main(["replay", str(bag), "--properties", str(props), "--config", config]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("wrist_below_0_2_rad"))
    assert row.split()[-2:] == ["0.28", "s"]


def test_bad_topics_section(tmp_path: Path, repo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bag, props = tmp_path / "theirs.mcap", tmp_path / "props.yaml"
    foreign_bag(bag, np.zeros((3, 7)))
    props.write_text(PROPERTIES.replace("/my_arm/joint_states", "/nope/joint_states"))
    assert main(["replay", str(bag), "--properties", str(props)]) == 1
    assert "none of the joint-state topics ['/nope/joint_states'] is in the bag" in capsys.readouterr().err
    props.write_text(PROPERTIES.replace("virtual:", "expected:"))
    assert main(["replay", str(bag), "--properties", str(props)]) == 1
    assert "topics.expected: the expected trajectory comes from /cosim/expected" in capsys.readouterr().err


@pytest.mark.ros
def test_publish_republishes_every_message(
    tmp_path: Path, repo_root: Path, rclpy_context: Any, ros_domain: int
) -> None:
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from sensor_msgs.msg import JointState

    from cosim_validation.live.ros.qos import to_rclpy

    bag, props = tmp_path / "theirs.mcap", tmp_path / "props.yaml"
    foreign_bag(bag, np.zeros((40, 7)))
    props.write_text(PROPERTIES)
    node = Node("listener", context=rclpy_context)
    got: list[Any] = []
    node.create_subscription(JointState, "/my_arm/joint_states", got.append, to_rclpy(STATE))
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(node)
    stop = threading.Event()
    spinner = threading.Thread(target=lambda: [executor.spin_once(timeout_sec=0.05) for _ in iter(stop.is_set, True)])
    spinner.start()
    try:  # the replay waits for the listener's subscription (generously: a loaded machine discovers slowly)
        argv = ["replay", str(bag), "--properties", str(props), "--publish", "--wait-for-subscribers", "60"]
        assert main(argv) == 0  # returns once the listener acknowledged every message
        for _ in range(100):
            if len(got) >= 40:
                break
            stop.wait(0.1)
    finally:
        stop.set()
        spinner.join()
        executor.shutdown()
        node.destroy_node()
    assert len(got) == 40  # every message, none lost to discovery
    assert list(got[-1].name) == [f"joint{i}" for i in range(7, 0, -1)]


@pytest.mark.ros
def test_publish_without_subscribers_says_so_and_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ros_domain: int
) -> None:
    bag, props = tmp_path / "theirs.mcap", tmp_path / "props.yaml"
    foreign_bag(bag, np.zeros((5, 7)))
    props.write_text(PROPERTIES)
    argv = ["replay", str(bag), "--properties", str(props), "--publish", "--wait-for-subscribers", "0.3", "--json"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "note: no subscriber on /my_arm/joint_states after 0.3 s; replaying anyway" in captured.err
    assert json.loads(captured.out)["messages"] == 5
    for wait in ("-1", "inf", "nan", "1e300"):  # inf and 1e300 waited for ever, NaN did not wait
        assert main(["replay", str(bag), "--properties", str(props), "--publish", "--wait-for-subscribers", wait]) == 1
        expected = f"error: --wait-for-subscribers: expected 0 (do not wait) to 3600 s, got {float(wait)}"
        assert expected in capsys.readouterr().err


def test_the_last_case_without_a_live_report_is_not_compared_but_named() -> None:
    """A Ctrl-C (or a dead node) stops the recording after the last case ended and before the monitor's report of
    it was recorded: that case is named as not compared, not reported as a difference (the session printed
    "verdicts NOT equal: ...: no live case report in the bag"); a case in the middle without its report still is
    a difference."""
    from types import SimpleNamespace
    from typing import cast

    from cosim_validation.live.ros.replay import ReplayResult, compare, unreported

    def end(test_id: str) -> Any:
        return SimpleNamespace(info=SimpleNamespace(test_id=test_id), conclusion=SimpleNamespace(verdicts=[]))

    cut_off = ReplayResult(cases=cast(Any, [end("a")]), live_reports={})
    assert compare(cut_off) == []
    assert unreported(cut_off) == ["a"]
    both = ReplayResult(cases=cast(Any, [end("a"), end("b")]), live_reports={})
    assert compare(both) == ["a: no live case report in the bag"]  # in the middle: a difference
    assert unreported(both) == ["b"]
    assert unreported(ReplayResult()) == []
