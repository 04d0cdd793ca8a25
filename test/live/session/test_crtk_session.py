"""The dVRK PSM and the Raven-II driven over CRTK (issue 17 item 4): ``cosim session`` on config/<robot>_crtk.yaml
(the physical robot behind a ``crtk_driver`` talking the arm's CRTK topics to a ``crtk_emulator`` in its own
process, over DDS) gives a case the same verdicts and KPIs as ``cosim campaign``; the session's bag replays to the
live verdicts; the CRTK topics have the names and types of the table below; and a CRTK arm that never becomes
ENABLED and homed stops the driver with one error line naming the namespace and the state it saw.

One session per robot, checked for everything at once (a session costs ~30 s on a loaded 2-core machine). These
replace the sessions of the generic drivers on these arms (config/<robot>_twin.yaml: the same BackendPort behind
physical_driver, whose sessions the ER3 Pro's tests run): their graphs are still checked here."""

from __future__ import annotations

import json
import math
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from cosim_validation.cli.main import main
from cosim_validation.live.ros.bag import read_messages
from cosim_validation.live.session.graph import driver_robot, load_graph
from cosim_validation.live.session.process_group import ProcessGroup, ProcessSpec
from cosim_validation.runs.campaign.results_db import ResultsDB

TOLERANCE = 1e-9  # m, rad or s

JS, PS, TS = "sensor_msgs/msg/JointState", "geometry_msgs/msg/PoseStamped", "geometry_msgs/msg/TransformStamped"
OPERATING_STATE, STRING_STAMPED = "crtk_msgs/msg/OperatingState", "crtk_msgs/msg/StringStamped"
# The CRTK topics each arm carries in a session, with their types (../shared/ROBOTS.md 2.2: dVRK 2.x, `_cp` as
# PoseStamped since cisst-ros 77ebbbd; 3.1: Raven-II branch crtk, `_cp` as TransformStamped, no move_jp), and
# whether one message flows per streamed sample.
CRTK_TABLE: dict[str, dict[str, tuple[str, bool]]] = {
    "dvrk_psm": {
        "/PSM1/servo_jp": (JS, True),
        "/PSM1/measured_js": (JS, True),
        "/PSM1/setpoint_js": (JS, True),
        "/PSM1/measured_cp": (PS, True),
        "/PSM1/setpoint_cp": (PS, True),
        "/PSM1/jaw/measured_js": (JS, True),
        "/PSM1/jaw/setpoint_js": (JS, True),
        "/PSM1/move_jp": (JS, False),
        "/PSM1/operating_state": (OPERATING_STATE, False),
        "/PSM1/state_command": (STRING_STAMPED, False),
    },
    "raven2": {
        "/arm1/servo_jp": (JS, True),
        "/arm1/measured_js": (JS, True),
        "/arm1/setpoint_js": (JS, True),
        "/arm1/measured_cp": (TS, True),
        "/arm1/setpoint_cp": (TS, True),
        "/arm1/operating_state": (OPERATING_STATE, False),
        "/arm1/state_command": (STRING_STAMPED, False),
    },
}
NAMESPACES = {"dvrk_psm": "/PSM1", "raven2": "/arm1"}


def _rows(db_path: Path) -> tuple[dict, dict, dict]:  # type: ignore[type-arg]
    with ResultsDB.open(db_path) as db:
        cases = {c.test_id: (c.outcome, c.message) for c in db.cases()}
        verdicts = {(v.test_id, v.property, v.robot): (v.status, v.margin) for v in db.verdicts()}
        kpis = {(k.test_id, k.name, k.robot, k.stage): k.value for k in db.kpis()}
    return cases, verdicts, kpis


def _same(a: float | None, b: float | None) -> bool:
    a, b = (math.nan if v is None else float(v) for v in (a, b))
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b if math.isinf(a) or math.isinf(b) else abs(a - b) <= TOLERANCE


@pytest.mark.parametrize("name", ["dvrk_psm_twin", "raven2_twin", "dvrk_psm_crtk", "raven2_crtk"])
def test_the_surgical_arm_graphs_drive_both_robots(name: str, repo_root: Path) -> None:
    graph = load_graph(repo_root / "config" / f"{name}.yaml")
    drivers = {driver_robot(n): n.executable for n in graph.nodes if driver_robot(n) is not None}
    assert drivers == {
        "virtual": "virtual_driver",
        "physical": "crtk_driver" if name.endswith("crtk") else "physical_driver",
    }
    proxied = graph.with_robot_filters("physical", ["offset:joint2=0.001"])  # filters stand in front of any driver
    remapped = dict(next(n for n in proxied.nodes if driver_robot(n) == "physical").remappings)
    assert remapped["/cosim/physical/command"] == "/cosim/physical/raw/command"


@pytest.mark.ros
@pytest.mark.slow
@pytest.mark.parametrize("robot", ["dvrk_psm", "raven2"])
def test_a_case_over_crtk_is_the_same_live_and_in_batch(
    robot: str, tmp_path: Path, repo_root: Path, node_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    config = repo_root / "config" / f"{robot}_insertion.yaml"
    suite = tmp_path / "suite.parquet"
    testgen = ["testgen", "--config", str(config), "--method", "random", "--granularity-mm", "40", "--count", "2"]
    assert main([*testgen, "--seed", "1", "-o", str(suite)]) == 0
    graph = repo_root / "config" / f"{robot}_crtk.yaml"
    live_dir, batch_dir = tmp_path / "session", tmp_path / "campaign"
    assert main(["session", "--config", str(graph), "--suite", str(suite), "--cases", "1", "--out", str(live_dir)]) == 0
    campaign = ["campaign", "--config", str(config), "--suite", str(suite), "--backends", "virtual,physical"]
    assert main([*campaign, "--workers", "1", "--out", str(batch_dir)]) == 0
    capsys.readouterr()

    # live = batch, for every verdict and KPI of the case, on the robot driven over CRTK too
    live_cases, live_verdicts, live_kpis = _rows(live_dir / "results.sqlite")
    batch_cases, batch_verdicts, batch_kpis = _rows(batch_dir / "results.sqlite")
    (test_id,) = live_cases
    assert live_cases[test_id] == batch_cases[test_id]
    assert live_cases[test_id][0] == "completed"
    assert {r for _, _, r in live_verdicts} == {"expected", "virtual", "physical"}
    for key, (status, margin) in live_verdicts.items():
        assert status == batch_verdicts[key][0], key
        assert _same(margin, batch_verdicts[key][1]), (key, margin, batch_verdicts[key][1])
    assert any(k[1] == "insertion_deviation_max" and k[2] == "physical" for k in live_kpis)
    for key, value in live_kpis.items():
        assert _same(value, batch_kpis[key]), (key, value, batch_kpis[key])

    # replay = live, and the CRTK conversation as recorded: names, types, one answer per setpoint
    summary = json.loads((live_dir / "summary.json").read_text())
    assert summary["bag_check"]["replay_equals_live"] is True
    topics = summary["bag_topics"]
    samples = topics["/cosim/physical/command"]["messages"]
    assert samples > 10
    for name, (msgtype, per_sample) in CRTK_TABLE[robot].items():
        assert topics[name]["type"] == msgtype, name
        if per_sample:
            assert topics[name]["messages"] == samples, name
    ns = NAMESPACES[robot]
    assert not any(t.startswith(f"{ns}/") and t not in CRTK_TABLE[robot] for t in topics)
    bag = live_dir / "session.mcap"
    commands = [m.message.string for m in read_messages(bag, [f"{ns}/state_command"])]
    # the driver enables only once the arm and the recorder are matched readers of state_command (min_subscribers:
    # 2 in the graph), so the bag holds the whole start-up conversation: enable (repeated until ENABLED), then home
    first_home = commands.index("home") if "home" in commands else len(commands)
    assert set(commands[:first_home]) == {"enable"}, commands
    assert set(commands[first_home:]) == {"home"}, commands
    last = [m.message for m in read_messages(bag, [f"{ns}/operating_state"])][-1]
    assert (last.state, last.is_homed) == ("ENABLED", True)
    # the arm's own pose of its needle tip, in its base frame (a Raven-II's TransformStamped names the tip frame)
    poses = [m.message for m in read_messages(bag, [f"{ns}/measured_cp", f"{ns}/setpoint_cp"])]
    assert {p.header.frame_id for p in poses} == {"base_link"}
    if robot == "raven2":
        assert {p.child_frame_id for p in poses} == {"arm1_needle_tip"}


@pytest.mark.ros
@pytest.mark.slow
def test_an_arm_that_never_becomes_enabled_stops_the_driver_with_one_error(
    tmp_path: Path, repo_root: Path, rclpy_context: Any, node_env: dict[str, str]
) -> None:
    from crtk_msgs.msg import OperatingState, StringStamped
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node

    peer = Node("faulted_psm", context=rclpy_context)  # a peer that answers every command with FAULT
    state_pub = peer.create_publisher(OperatingState, "/PSM9/operating_state", 10)
    seen: list[str] = []
    peer.create_subscription(StringStamped, "/PSM9/state_command", lambda m: seen.append(m.string), 10)
    peer.create_timer(0.2, lambda: state_pub.publish(OperatingState(state="FAULT", is_homed=False, is_busy=False)))
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(peer)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    group = ProcessGroup(tmp_path, env=node_env)
    config = repo_root / "config" / "dvrk_psm_insertion.yaml"
    # 8 s: long enough for this process's subscription to discover the driver's publisher on a loaded machine (with
    # 3 s a CI run once saw the error but no enable request reach the peer)
    params = (f"config:={config}", "namespace:=/PSM9", "enable_timeout_s:=8.0")
    try:
        group.start(ProcessSpec("crtk_driver", "crtk_driver", tuple(a for p in params for a in ("-p", p))))
        deadline = time.monotonic() + 90
        while group.processes["crtk_driver"].poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        code = group.processes["crtk_driver"].poll()
    finally:
        group.stop()
        executor.shutdown()
        peer.destroy_node()
    assert code == 1
    log = (tmp_path / "logs" / "crtk_driver.log").read_text()
    errors = [line for line in log.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: crtk_driver: the arm under /PSM9 did not become ENABLED and homed within 8.0 s "
        "(last operating_state: state=FAULT, is_homed=false, is_busy=false)"
    ]
    assert "Traceback" not in log
    assert seen
    assert set(seen) == {"enable"}  # asked to enable again and again, never to home a faulted arm
