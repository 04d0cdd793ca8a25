"""What every node executable shares: parameter declaration, readiness signal, and main()."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import rclpy
from rcl_interfaces.msg import ParameterDescriptor, ParameterType
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.node import Node

from cosim_validation.exceptions import CosimError
from cosim_validation.session.node_parameters import parameters_of

READY_DIR_ENV = "COSIM_READY_DIR"


def declare_parameters(node: Node, executable: str) -> dict[str, Any]:
    """Declare the node's parameters (cosim_validation.session.node_parameters) and return their values."""
    values: dict[str, Any] = {}
    for spec in parameters_of(executable):
        descriptor = ParameterDescriptor(description=spec.description, type=_TYPES[spec.kind])
        default = spec.default if spec.kind is not list else list(spec.default)
        value = node.declare_parameter(spec.name, default, descriptor).value
        values[spec.name] = list(value or []) if spec.kind is list else value
    return values


# an empty list default carries no type, so every parameter declares its type explicitly
_TYPES = {
    bool: ParameterType.PARAMETER_BOOL,
    int: ParameterType.PARAMETER_INTEGER,
    float: ParameterType.PARAMETER_DOUBLE,
    str: ParameterType.PARAMETER_STRING,
    list: ParameterType.PARAMETER_STRING_ARRAY,
}


def progress_file(name: str) -> Path | None:
    """``COSIM_READY_DIR/<name>.progress``: a node's work counter, watched by ``cosim session`` (None if unset)."""
    folder = os.environ.get(READY_DIR_ENV)
    return Path(folder, f"{name}.progress") if folder else None


def signal_ready(node: Node) -> None:
    """Tell ``cosim session`` this node is up (a file named after the node in COSIM_READY_DIR)."""
    folder = os.environ.get(READY_DIR_ENV)
    if folder:
        Path(folder, node.get_name()).write_text(str(os.getpid()))
    node.get_logger().info("ready")


def run_node(factory: Callable[[], Node], args: Sequence[str] | None = None, threads: int = 2) -> int:
    """Standard node main: init, build, spin until shutdown; bad configuration is one error line, exit 1."""
    rclpy.init(args=list(args) if args is not None else sys.argv)
    node: Node | None = None
    code = 0
    try:
        node = factory()
        executor = SingleThreadedExecutor() if threads == 1 else MultiThreadedExecutor(num_threads=threads)
        executor.add_node(node)
        signal_ready(node)
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except CosimError as exc:
        print(f"error: {exc}", file=sys.stderr)
        code = 1
    finally:
        if node is not None:
            close = getattr(node, "close", None)
            if callable(close):
                close()
            node.destroy_node()
        if rclpy.ok():
            rclpy.try_shutdown()
    return code
