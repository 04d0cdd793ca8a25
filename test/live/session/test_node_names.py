"""The session names each node by a node-targeted remapping: the controller process holds two nodes.

A process-wide ``-r __node:=NAME`` (what ``cosim session`` passed) renamed every node of the process, so the task
supervisor composed into the controller's process was called like the controller. Started as ``cosim session``
starts it (:meth:`NodeLaunch.ros_arguments`), under a name of the graph's own, the controller's process shows
that name and ``supervisor`` in the ROS graph.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from cosim_validation.live.session.process_group import ProcessGroup, ProcessSpec
from cosim_validation.live.session.session_plan import NodeLaunch

pytestmark = pytest.mark.ros


def test_the_controller_and_its_supervisor_keep_their_names(
    tmp_path: Path, repo_root: Path, rclpy_context: Any, node_env: dict[str, str]
) -> None:
    from rclpy.node import Node

    parameters = {
        "config": str(repo_root / "config" / "needle_insertion.yaml"),
        "robots": ["virtual"],
        "supervisor": str(repo_root / "config" / "supervisor" / "supervisor.yaml"),
    }
    launch = NodeLaunch("controller_under_test", "controller", parameters, (), True, False)
    params_file = tmp_path / "controller.yaml"
    params_file.write_text(launch.params_file_content())
    group = ProcessGroup(tmp_path, env=node_env)
    probe = Node("names_probe", context=rclpy_context)
    try:
        group.start(ProcessSpec(launch.name, launch.executable, launch.ros_arguments(params_file)))
        group.wait_ready([launch.name], timeout_s=180)
        wanted = {"controller_under_test", "supervisor"}
        deadline = time.monotonic() + 30
        names: set[str] = set()
        while time.monotonic() < deadline and not wanted <= names:
            names = {name for name, _ns in probe.get_node_names_and_namespaces()}
            time.sleep(0.1)
    finally:
        group.stop()
        probe.destroy_node()
    assert wanted <= names, (names, group.log_tail(launch.name))
    assert "controller" not in names
