"""ros2 launch cosim_validation digital_twin.launch.py [graph:=FILE] [run_dir:=DIR] [suite:=FILE] [cases:=N]

Builds the digital-twin session from the same graph YAML that ``cosim session`` starts
(config/digital_twin.yaml by default): the same nodes, parameters and remappings, checked against the
nodes' declared parameters before anything starts.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from launch import LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from cosim_validation.config import package_root
from cosim_validation.session.graph import launch_node_arguments, load_graph


def _nodes(context: LaunchContext) -> list[Node]:
    graph_file = LaunchConfiguration("graph").perform(context)
    run_dir = Path(LaunchConfiguration("run_dir").perform(context) or tempfile.mkdtemp(prefix="cosim-session-"))
    run_dir.mkdir(parents=True, exist_ok=True)
    values = {
        "run_dir": str(run_dir),
        "suite": LaunchConfiguration("suite").perform(context),
        "cases": LaunchConfiguration("cases").perform(context),
        "package": str(package_root()),
    }
    graph = load_graph(graph_file).resolved(values)
    return [Node(package="cosim_validation", output="screen", **args) for args in launch_node_arguments(graph)]


def generate_launch_description() -> LaunchDescription:
    default_graph = os.path.join(str(package_root()), "config", "digital_twin.yaml")
    return LaunchDescription(
        [
            DeclareLaunchArgument("graph", default_value=default_graph, description="session graph YAML"),
            DeclareLaunchArgument("run_dir", default_value="", description="run directory (default: a new temp dir)"),
            DeclareLaunchArgument("suite", default_value="", description="suite file (default: embedded suite)"),
            DeclareLaunchArgument("cases", default_value="0", description="number of cases (0 = all)"),
            OpaqueFunction(function=_nodes),
        ]
    )
