"""What every node of a session is started with, decided in one place for ``cosim session`` and ``ros2 launch``.

:func:`node_launches` fills the graph's placeholders and gives, per node, its name, executable, complete
parameters (``use_sim_time`` included) and remappings. ``cosim session`` writes them into one ROS params
file per node (:meth:`NodeLaunch.params_file_content`, :meth:`NodeLaunch.ros_arguments`);
``launch/digital_twin.launch.py`` hands the same values to ``launch_ros.actions.Node``. Every value is
checked against launch_ros's rule (:mod:`cosim_validation.live.session.launch_values`) here, so a graph that
``cosim session`` runs is one that ``ros2 launch`` runs too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from cosim_validation.common.config import package_root
from cosim_validation.common.exceptions import ConfigError
from cosim_validation.live.session.graph import GraphSpec
from cosim_validation.live.session.launch_values import launch_value_problem


@dataclass(frozen=True)
class NodeLaunch:
    """One node process of a session, with everything it is started with.

    Attributes:
        name: Node name (``__node``), also the name of its log and ready files.
        executable: Module under ``cosim_validation.live.nodes`` and ``lib/cosim_validation/<executable>``.
        parameters: Every parameter, ``use_sim_time`` first; each value one launch_ros passes.
        remappings: (from, to) topic remappings.
        required: The session stops if this node exits.
        console: The test generator: its exit ends the session; it joins ROS 2 once the others are ready.
    """

    name: str
    executable: str
    parameters: Mapping[str, Any]
    remappings: tuple[tuple[str, str], ...]
    required: bool
    console: bool

    def params_file_content(self) -> str:
        """The parameters in the ROS 2 params-file format (``{name: {ros__parameters: {...}}}``)."""
        return yaml.safe_dump({self.name: {"ros__parameters": dict(self.parameters)}}, sort_keys=False)

    def ros_arguments(self, params_file: Path) -> tuple[str, ...]:
        """Arguments after ``--ros-args``: the node name, the parameters file and the remappings.

        The name is a node-targeted remapping (``<executable>:__node:=<name>``; every node is created under its
        executable's name): a process-wide ``__node:=`` would rename the nodes composed into the process too
        (the controller's ``supervisor``).

        Args:
            params_file: The node's ROS params file (:meth:`params_file_content` written there).
        """
        args = ["-r", f"{self.executable}:__node:={self.name}", "--params-file", str(params_file)]
        for source, target in self.remappings:
            args += ["-r", f"{source}:={target}"]
        return tuple(args)


def session_values(run_dir: str | Path, suite: str | Path, cases: int) -> dict[str, str]:
    """The placeholder values of a session (see :mod:`cosim_validation.live.session.graph`).

    Args:
        run_dir: The run directory.
        suite: The suite file of the test generator ("" for its embedded default suite).
        cases: Number of cases to run (0 = all).
    """
    return {"run_dir": str(run_dir), "suite": str(suite), "cases": str(cases), "package": str(package_root())}


def node_launches(graph: GraphSpec, run_dir: str | Path, suite: str | Path, cases: int) -> tuple[NodeLaunch, ...]:
    """Every node of ``graph`` as it is started for a session in ``run_dir`` on ``suite``.

    Args:
        graph: The parsed graph, placeholders not yet filled.
        run_dir: The run directory (absolute, so nodes started elsewhere find it).
        suite: The suite file of the test generator.
        cases: Number of cases (0 = all).

    Raises:
        ConfigError: A parameter value that launch_ros would refuse, naming the node and parameter.
    """
    resolved = graph.resolved(session_values(run_dir, suite, cases))
    launches = []
    for spec in resolved.nodes:
        parameters = {"use_sim_time": resolved.settings.use_sim_time, **spec.parameters}
        if spec.executable == "controller" and not parameters.get("log_dir"):
            parameters["log_dir"] = str(Path(run_dir) / "logs")  # the controller under test's, beside the nodes'

        for key, value in parameters.items():
            problem = launch_value_problem(value)
            if problem is not None:
                raise ConfigError(graph.source, f"{spec.name}.parameters.{key}", problem)
        launches.append(
            NodeLaunch(spec.name, spec.executable, parameters, spec.remappings, spec.required, spec.console)
        )
    return tuple(launches)
