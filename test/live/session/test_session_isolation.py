"""Two ``cosim session`` runs at once on one machine, while a stranger publishes on the caller's domain.

The stranger is an rclpy node in the caller's ROS_DOMAIN_ID publishing ``sensor_msgs/JointState`` on
``/cosim/virtual/joint_states`` (the issue's report: false violations, then the monitor killed). Each session
leases its own domain with localhost discovery, so: no session node ever subscribes to the stranger, both
sessions complete, their bags hold exactly the samples the robots sent, replay equals live in each, and the
two sessions' verdicts on the same cases are identical.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cosim_validation.runs.campaign.results_db import ResultsDB

pytestmark = [pytest.mark.ros, pytest.mark.slow]

CASES = 1


@pytest.fixture(scope="module")
def suite_file(tmp_path_factory: pytest.TempPathFactory, repo_root: Path) -> Path:
    from cosim_validation.live.session.default_suite import make_default_suite
    from cosim_validation.live.session.graph import load_graph

    graph = load_graph(repo_root / "config" / "digital_twin.yaml")
    return make_default_suite(graph, tmp_path_factory.mktemp("suite")).path


class Stranger:
    """Publishes random joint states on the session topic in the caller's domain until stopped."""

    def __init__(self, context: Any) -> None:
        from rclpy.node import Node
        from sensor_msgs.msg import JointState

        from cosim_validation.live.ros.qos import STATE, to_rclpy

        self.node = Node("stranger", context=context)
        self.publisher = self.node.create_publisher(JointState, "/cosim/virtual/joint_states", to_rclpy(STATE))
        self.heard: list[Any] = []  # a listener in the same domain: the stranger is really there
        self.node.create_subscription(JointState, "/cosim/virtual/joint_states", self.heard.append, to_rclpy(STATE))
        self.context = context
        self.sent = 0
        self.max_subscribers = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        from rclpy.executors import SingleThreadedExecutor
        from sensor_msgs.msg import JointState

        executor = SingleThreadedExecutor(context=self.context)
        executor.add_node(self.node)
        rng = np.random.default_rng(5)
        while not self.stop.is_set():
            msg = JointState(name=[f"joint{i}" for i in range(1, 8)], position=list(rng.uniform(-3, 3, 7)))
            msg.header.stamp.sec = int(rng.integers(0, 30))  # times going backwards, as in the report
            self.publisher.publish(msg)
            self.sent += 1
            # the stranger's own listener counts as one; anyone beyond that would be a session node
            self.max_subscribers = max(self.max_subscribers, self.publisher.get_subscription_count())
            executor.spin_once(timeout_sec=0.0)  # its own listener (the message it just sent wakes it at once)
            self.stop.wait(0.02)  # about 50 messages a second
        executor.remove_node(self.node)


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory: pytest.TempPathFactory, repo_root: Path) -> Path:
    """The shipped graph, its controller waiting 30 s for a silent robot instead of 3 s (wall time).

    This test is about isolation, not liveness: two sessions of seven nodes each on 2 loaded cores (CI) starved a
    driver past the shipped 3 s once, and its case was aborted as a robot that stopped answering."""
    import yaml

    graph = yaml.safe_load((repo_root / "config" / "digital_twin.yaml").read_text())
    for node in graph["nodes"]:
        parameters = node.get("parameters", {})
        if "config" in parameters:
            parameters["config"] = str(repo_root / parameters["config"])
        if node["executable"] == "controller":
            parameters["stale_timeout_s"] = 30.0
    path = tmp_path_factory.mktemp("graph") / "twin.yaml"
    path.write_text(yaml.safe_dump(graph, sort_keys=False))
    return path


def _session(out: Path, suite: Path, graph: Path) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "cosim_validation.cli.main", "session", "--suite", str(suite)]
    command += ["--config", str(graph), "--cases", str(CASES), "--out", str(out), "--json"]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))


def test_two_sessions_and_a_stranger(
    tmp_path: Path, suite_file: Path, graph_file: Path, rclpy_context: Any, ros_domain: int
) -> None:
    stranger = Stranger(rclpy_context)
    stranger.thread.start()
    runs = [tmp_path / "a", tmp_path / "b"]
    try:
        processes = [_session(run, suite_file, graph_file) for run in runs]
        outputs = [p.communicate(timeout=900) for p in processes]
    finally:
        stranger.stop.set()
        stranger.thread.join(timeout=30)
        stranger.node.destroy_node()
    assert stranger.sent > 100
    assert stranger.heard  # the noise was on the caller's domain all along
    assert stranger.max_subscribers == 1  # only its own listener: no session node subscribed to it

    summaries = []
    for process, (stdout, stderr), run in zip(processes, outputs, runs, strict=True):
        assert process.returncode == 0, stderr[-3000:]
        summary = json.loads(stdout)
        stored = json.loads((run / "summary.json").read_text())
        for key in ("ros_domain_id", "discovery_range", "chosen", "bag_check", "bag_topics", "status"):
            assert stored[key] == summary[key], key  # printed and stored
        summaries.append(summary)
    domains = [s["ros_domain_id"] for s in summaries]
    assert len(set(domains)) == 2
    assert ros_domain not in domains
    for summary in summaries:
        assert summary["status"] == "completed"
        assert summary["discovery_range"] == "LOCALHOST"
        assert summary["bag_check"]["replay_equals_live"] is True, summary["bag_check"]
        topics = summary["bag_topics"]
        # every sample on the robot's topic came from the session's own driver (lockstep with the plan)
        assert topics["/cosim/virtual/joint_states"]["messages"] == topics["/cosim/expected"]["messages"]
        assert summary.get("recorder_skipped_topics", {}) == {}

    verdicts = []
    for run in runs:
        with ResultsDB.open(run / "results.sqlite") as db:
            assert [c.outcome for c in db.cases()] == ["completed"] * CASES
            verdicts.append(sorted((v.test_id, v.robot, v.property, v.status) for v in db.verdicts()))
    assert verdicts[0] == verdicts[1]
    virtual = [v for v in verdicts[0] if v[1] == "virtual"]
    assert virtual
    assert all(status == "holds" for *_, status in virtual)  # no false violations on the virtual robot
