"""physical_driver: the physical arm behind the driver topics (here the emulated ER3 Pro).

A real-hardware adapter implements the same RobotBackend protocol and is selected with ``backend``.
"""

from __future__ import annotations

from cosim_validation.common.record import RobotRole
from cosim_validation.live.nodes.node_runtime import run_node
from cosim_validation.live.nodes.robot_driver import RobotDriver


def main(args: list[str] | None = None) -> int:
    """Run the ``physical_driver`` node until it ends or is interrupted; return its exit status.

    See :func:`~.node_runtime.run_node`. From a shell::

        ros2 run cosim_validation physical_driver --ros-args -p backend:=emulated

    Args:
        args: The command line as ``rclpy.init`` takes it (``--ros-args -p name:=value`` ...); None: ``sys.argv``.
    """
    return run_node(lambda: RobotDriver("physical_driver", RobotRole.PHYSICAL), args, threads=1)


if __name__ == "__main__":
    raise SystemExit(main())
